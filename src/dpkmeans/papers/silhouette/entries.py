"""What the registry's RECORD of the silhouette-weighted budgets (Zhang, Liu and Wang 2018; book
chapter 8) names: the catalogue's configuration, the as-published configuration that the
book-wide privacy ledger reads, and the finisher that rebuilds the claims ledger."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.study.shared import unit_box
from dpkmeans.papers.silhouette import variants
from dpkmeans.papers.silhouette.claims import write_claims

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["as_published", "catalogue_config", "finish"]


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="silhouette")``: the corrected algorithm."""
    return variants.corrected(f.n_clusters, f.epsilon, f.bounds)


def as_published() -> DPLloydConfig:
    """The paper's algorithm as published, k = 3 on the unit square."""
    return variants.as_published(3, 1.0, unit_box(2))


def finish(root: str | Path) -> None:
    """The claims ledger ``silhouette_claims.csv`` from ``silhouette.csv`` and the scaling
    benchmark ``benchmarks/dask_scaling.json``."""
    root = Path(root)
    results = root / "data" / "results"
    write_claims(results / "silhouette.csv", root / "benchmarks" / "dask_scaling.json",
                 results / "silhouette_claims.csv")
