"""What the registry's RECORD of DP-KCCM (Ni et al. 2021; book chapter 7) names: the catalogue's
configuration, the as-published configuration that the book-wide privacy ledger reads, and the
finisher that rebuilds the claims ledger from the sweep's results."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.study.shared import unit_box
from dpkmeans.papers.dpkccm.claims import write_claims
from dpkmeans.papers.dpkccm.flaws import PUBLISHED
from dpkmeans.papers.dpkccm.variants import allocation_nk

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["as_published", "catalogue_config", "finish"]


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dp-kccm")``: DP-KCCM (allocation with n k clusters)."""
    return allocation_nk(f.n_clusters, f.epsilon, f.bounds)


def as_published() -> DPLloydConfig:
    """DP-KCCM as published, k = 3 on the unit square: its loop, with the leaks of how the
    paper set it up (:data:`dpkmeans.papers.dpkccm.flaws.PUBLISHED`: min-max scaling of the
    data, hyper-parameters tuned on the evaluation data)."""
    return replace(allocation_nk(3, 1.0, unit_box(2)), flaws=PUBLISHED)


def finish(root: str | Path) -> None:
    """The claims ledger ``dpkccm_claims.csv`` from ``dpkccm.csv`` (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_claims(results / "dpkccm.csv", results / "dpkccm_claims.csv")
