"""DP-KCCM (Ni et al. 2021): cluster merging and an adaptive budget (book chapter 7).

- :mod:`.variants`: the four configurations of the paper's section 4.1 (``allocation_nk`` is
  DP-KCCM);
- :mod:`.study`: the paper-scale runs (20 starts x 50 runs per point) behind figures 3-14;
- :mod:`.claims`: the computed claims ledger;
- :mod:`.flaws`: the published method's flaws as data (its data-derived scaling and its tuning
  on the evaluation data), carried by the as-published configuration;
- :data:`RECORD`: the paper in the registry; the catalogue's builder and the as-published
  example it names are in :mod:`.variants`, its finisher is :func:`finish`.
"""

from pathlib import Path

from dpkmeans.papers.dpkccm.claims import write_claims
from dpkmeans.papers.dpkccm.variants import (
    VARIANTS,
    allocation_k,
    allocation_nk,
    average_k,
    average_nk,
    catalogue_config,
    dpkccm_config,
    published_example,
)
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep

__all__ = ["RECORD", "VARIANTS", "allocation_k", "allocation_nk", "average_k", "average_nk",
           "dpkccm_config"]


def finish(root: str | Path) -> None:
    """The claims ledger ``dpkccm_claims.csv`` from ``dpkccm.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_claims(results / "dpkccm.csv", results / "dpkccm_claims.csv")


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="dpkccm", authors="Ni et al.", year="2021",
    title="Utility-efficient differentially private K-means clustering based on cluster merging",
    method="DP-KCCM", chapter="07_dpkccm", bibkey="ni_dpkccm",
    algorithms=(CatalogueEntry(
        "dp-kccm", catalogue_config,
        "DP-KCCM (Ni et al. 2021): n k clusters, a decreasing budget and a noisy-count merge "
        "down to k."),),
    sweeps=(Sweep("dpkccm", target_s=15 * 60, cell_keys=("dataset", "axis"),
                  cell_label="{axis}: {dataset}",
                  label_values={"axis": {"epsilon": "NICV vs epsilon (figs 3-8)",
                                         "k": "NICV vs k (figs 9-14)",
                                         "ablations": "ablations"}}),),
    finisher=finish,
    published=published_example,
    theorem="thm-dpkccm-private",
    former_keys=("dp-kccm",),
)
