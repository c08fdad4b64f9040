"""What the registry's RECORD of the colored-noise paper (Ravi, Scaglione and Peisert 2021;
book chapter 9) names: the catalogue's configuration, the as-published configuration that the
book-wide privacy ledger reads, and the finisher that rebuilds the audit and claims ledger."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.study.shared import unit_box
from dpkmeans.papers.colored import variants
from dpkmeans.papers.colored.audit import write_audit
from dpkmeans.papers.colored.claims import write_claims

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["as_published", "catalogue_config", "finish"]


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="colored")``: DP-Lloyd with the box-optimal colored noise."""
    return variants.corrected(f.n_clusters, f.epsilon, f.delta, f.bounds, iterations=f.max_iter)


def as_published() -> DPLloydConfig:
    """CEDS as published, k = 3 on the unit square, (1, 1e-5)."""
    return variants.as_published(3, 1.0, 1e-5, unit_box(2))


def finish(root: str | Path) -> None:
    """The audit ``colored_audit.csv``, then the claims ledger ``colored_claims.csv`` from it
    and ``colored.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_audit(results / "colored_audit.csv")
    write_claims(results / "colored.csv", results / "colored_audit.csv",
                 results / "colored_claims.csv")
