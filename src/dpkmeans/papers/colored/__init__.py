"""Colored (optimal-covariance) Gaussian noise for k-means centroids (Ravi, Scaglione, Peisert,
arXiv:2111.07850, 2021; book chapter 9).

- :mod:`dpkmeans.privacy.colored`: the mechanism's math (gamma, Delta sets, covariances, the check);
- :mod:`.variants`: the paper as published (CEDS) and corrected, as engine configurations;
- :mod:`.study`, :mod:`.audit`, :mod:`.claims`: the reproduction, the audit, the claims ledger;
- :data:`RECORD`: the paper in the registry; the catalogue's builder and the as-published
  example it names are in :mod:`.variants`, its finisher is :func:`finish`.
"""

from pathlib import Path

from dpkmeans.papers.colored.audit import write_audit
from dpkmeans.papers.colored.claims import write_claims
from dpkmeans.papers.colored.variants import catalogue_config, published_example
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep

__all__ = ["RECORD"]


def finish(root: str | Path) -> None:
    """The audit ``colored_audit.csv``, then the claims ledger ``colored_claims.csv`` from it
    and ``colored.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_audit(results / "colored_audit.csv")
    write_claims(results / "colored.csv", results / "colored_audit.csv",
                 results / "colored_claims.csv")


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="colored", authors="Ravi, Scaglione and Peisert", year="2021",
    title="Colored noise mechanism for differentially private clustering",
    method="colored Gaussian noise", chapter="09_colored", bibkey="ravi2021colored",
    algorithms=(CatalogueEntry(
        "colored", catalogue_config,
        "DP-Lloyd with colored Gaussian noise (Ravi, Scaglione and Peisert 2021), corrected: "
        "the box-optimal covariance on each cluster's centred statistics; (epsilon, delta).",
        needs_delta=True, uses_max_iter=True),),
    # its cell's default data set is a Gaussian mixture: no data file
    sweeps=(Sweep("colored", needs_data=False, target_s=5 * 60, cell_keys=("dataset",),
                  cell_label="all algorithms x (epsilon, delta): {dataset}",
                  data_aliases={"marketing": ("marketing_campaign",),
                                "marketing_units": ("marketing_campaign",),
                                "mixture_d2": (), "mixture_d8": ()}),),
    finisher=finish,
    published=published_example,
    theorem="thm-colored-dplloyd",
    former_keys=("colored-noise",),
)
