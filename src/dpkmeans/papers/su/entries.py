"""What the registry's RECORD of Su et al.'s baselines (2016; book chapter 5) names: the
catalogue's configurations of DPLloyd and DPLloyd-Impr (:mod:`dpkmeans.papers.su.variants`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpkmeans.papers.su.variants import dplloyd, dplloyd_impr
from dpkmeans.engine.loop import DPLloydConfig

if TYPE_CHECKING:
    from dpkmeans.api.catalogue import FitInputs

__all__ = ["dplloyd_config", "dplloyd_impr_config"]


def dplloyd_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dplloyd")``: epsilon / T over ``max_iter`` iterations."""
    return dplloyd(f.n_clusters, f.epsilon, f.bounds, iterations=f.max_iter)


def dplloyd_impr_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dplloyd-impr")``: Su's rule for T from the public record count."""
    return dplloyd_impr(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)
