"""Su et al.'s DP-Lloyd baselines (2016; book chapter 5): DPLloyd and DPLloyd-Impr.

Their configurations, with the catalogue's builders that :data:`RECORD` names, are
:mod:`dpkmeans.papers.su.variants`, and their sweep's runs :mod:`dpkmeans.papers.su.study`. The
paper has no claims ledger: the book uses its algorithms as baselines and does not audit them, so it is not
in the book-wide ledger.
"""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep
from dpkmeans.papers.su.variants import dplloyd_config, dplloyd_impr_config

__all__ = ["RECORD"]

#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="su", authors="Su et al.", year="2016",
    title="Differentially private k-means clustering",
    method="DPLloyd-Impr", chapter="05_dplloyd", bibkey="su2016differentially",
    algorithms=(
        CatalogueEntry("dplloyd", dplloyd_config,
                       "Su et al.'s baseline: epsilon / T every iteration from random starts in "
                       "the box.", uses_max_iter=True),
        CatalogueEntry("dplloyd-impr", dplloyd_impr_config,
                       "Su et al.'s improved DPLloyd: sphere-packing starts, the count/sum split "
                       "and T chosen from N epsilon / k and d.", needs_n_records=True),
    ),
    # its cell's default data set is a Gaussian mixture: no data file
    sweeps=(Sweep("dplloyd_baselines", needs_data=False, data_aliases={"synthetic": ()}),),
)
