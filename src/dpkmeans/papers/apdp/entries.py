"""What the registry's RECORD of APDPk-means (book chapter 10) names: the catalogue's
configuration, the as-published configuration that the book-wide privacy ledger reads, and the
finisher that rebuilds the claims ledger from the sweep's results."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.study.shared import unit_box
from dpkmeans.papers.apdp import variants
from dpkmeans.papers.apdp.claims import write_claims

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["as_published", "catalogue_config", "finish"]


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="apdp")``: the corrected arithmetic-progression schedule."""
    return variants.corrected(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)


def as_published() -> DPLloydConfig:
    """APDPk-means as the notes describe it, k = 3 on the unit square, N = 1000."""
    return variants.as_published(3, 1.0, unit_box(2), n_records=1000)


def finish(root: str | Path) -> None:
    """The claims ledger ``apdp_claims.csv`` from ``apdp.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_claims(results / "apdp.csv", results / "apdp_claims.csv")
