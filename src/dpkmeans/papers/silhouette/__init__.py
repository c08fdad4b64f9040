"""Silhouette-weighted budgets (Zhang, Liu and Wang, PLoS ONE 2018; book chapter 8).

- :mod:`.variants`: the paper as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger;
- :data:`RECORD`: the paper in the registry; the catalogue's builder and the as-published
  example it names are in :mod:`.variants`, its finisher is :func:`finish`.
"""

from pathlib import Path

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep
from dpkmeans.papers.silhouette.claims import write_claims
from dpkmeans.papers.silhouette.variants import (
    VARIANTS,
    as_published,
    catalogue_config,
    corrected,
    published_example,
)

__all__ = ["RECORD", "VARIANTS", "as_published", "corrected"]


def finish(root: str | Path) -> None:
    """The claims ledger ``silhouette_claims.csv`` from ``silhouette.csv`` and the scaling
    benchmark ``benchmarks/dask_scaling.json``."""
    root = Path(root)
    results = root / "data" / "results"
    write_claims(results / "silhouette.csv", root / "benchmarks" / "dask_scaling.json",
                 results / "silhouette_claims.csv")


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="silhouette", authors="Zhang, Liu and Wang", year="2018",
    title="A differential privacy protecting K-means clustering algorithm based on contour "
          "coefficients",
    method="silhouette-weighted budgets", chapter="08_silhouette", bibkey="zhang2018contour",
    algorithms=(CatalogueEntry(
        "silhouette", catalogue_config,
        "Silhouette-weighted budgets (Zhang, Liu and Wang 2018), corrected: the cluster weights "
        "come from noisy silhouettes, public bounds, a normalised schedule."),),
    sweeps=(Sweep("silhouette", target_s=10 * 60, cell_keys=("dataset",),
                  cell_label="all algorithms x epsilons: {dataset}"),),
    finisher=finish,
    published=published_example,
    theorem="thm-silhouette-corrected",
)
