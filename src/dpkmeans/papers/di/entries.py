"""What the registry's RECORD of differential identifiability (Shang et al. 2021; book chapter
11) names: the catalogue's configuration, the as-published configuration that the book-wide
privacy ledger reads, and the finisher that rebuilds the audit and claims ledger."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.study.shared import unit_box
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.audit import write_audit
from dpkmeans.papers.di.claims import write_claims

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["as_published", "catalogue_config", "finish"]


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="di")``: DI k-means, corrected, from one epsilon."""
    return variants.kmeans_corrected(f.bounds, epsilon=f.epsilon, n_clusters=f.n_clusters)


def as_published() -> DPLloydConfig:
    """DI k-means as published on the unit square, rho = 0.05 over m = 10001 worlds."""
    return variants.kmeans_as_published(unit_box(2), rho=0.05, m=10001)


def finish(root: str | Path) -> None:
    """The audit ``di_audit.csv``, then the claims ledger ``di_claims.csv`` from ``di.csv``
    (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_audit(results / "di_audit.csv")
    write_claims(results / "di.csv", results / "di_claims.csv")
