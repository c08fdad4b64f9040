"""APDPk-means (known only through study notes in Chinese; the original paper could not be
found; book chapter 10)
and the budget schedules of every paper, compared on the same data.

- :mod:`.variants`: the note as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger and the schedules' ranking;
- :data:`RECORD`: the paper in the registry; the catalogue's builder and the as-published
  example it names are in :mod:`.variants`, its finisher is :func:`finish`.
"""

from pathlib import Path

from dpkmeans.papers.apdp.claims import write_claims
from dpkmeans.papers.apdp.variants import (
    VARIANTS,
    as_published,
    catalogue_config,
    corrected,
    published_example,
)
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep

__all__ = ["RECORD", "VARIANTS", "as_published", "corrected"]


def finish(root: str | Path) -> None:
    """The claims ledger ``apdp_claims.csv`` from ``apdp.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_claims(results / "apdp.csv", results / "apdp_claims.csv")


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="apdp", authors="", year="",
    title="APDPk-means: a new differential privacy clustering algorithm based on arithmetic "
          "progression privacy budget allocation",
    method="APDPk-means", chapter="10_schedules", bibkey="apdpkmeans",
    algorithms=(CatalogueEntry(
        "apdp", catalogue_config,
        "APDPk-means, corrected: budgets in a decreasing arithmetic progression floored at "
        "Su's minimum.", needs_n_records=True),),
    sweeps=(Sweep("apdp", target_s=10 * 60, cell_keys=("case",),
                  cell_label="all algorithms x epsilons: {case}",
                  data_aliases={"blood_k2": ("blood",)}),),
    finisher=finish,
    published=published_example,
    theorem="thm-ap-schedule",
)
