"""DP-KCCM (Ni et al. 2021) and its three comparison variants as engine configurations.

The paper's section 4.1 compares four DP-Lloyd variants. All use sphere-packing
initial centroids, 12 iterations and one joint Laplace release of each cluster's (S_j, n_j)
with Delta = d r + 1 (eq. 10-11; the engine's joint release); they differ in

====================  ===================  ================================  ==========
variant               clusters in the run  schedule (T = 12)                 release
====================  ===================  ================================  ==========
``average_k``         k                    eps / 12 each                     --
``allocation_k``      k                    eps/24 x4, eps/12 x4, eps/8 x4    --
``average_nk``        n k                  eps / 12 each                     merge to k
``allocation_nk``     n k                  eps/24 x4, eps/12 x4, eps/8 x4    merge to k
====================  ===================  ================================  ==========

``allocation_nk`` is DP-KCCM (the paper's Alg. 1). Privacy (the paper's Thm. 1):
the initialisation uses only the box, each iteration is parallel over the disjoint clusters
and sequential over iterations, and the merge (:mod:`dpkmeans.papers.dpkccm.merging`) is post-processing.

The paper calls ``average_k`` "DPLloyd-Impr". It is not: Su et al.'s method uses 2 <= T <= 7 and a count : per-dimension budget split, and shares only
the sphere packing. The true one is :func:`dpkmeans.papers.su.variants.dplloyd_impr`.

Scaling ("public bounds" versus the paper's data-derived min-max) is the data layer's choice;
these configurations take whatever public ``bounds`` they are given. Each record is measured from
the box's midpoint by default (book chapter 5), Delta = sum_i (u_i - l_i) / 2 + 1: on the paper's
[-r, r]^d that is its d r + 1, and on a box not symmetric about 0 it is smaller than the
paper's formula read from the origin (``centred=False``; [0, 1]^2: 2 against 3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.strategies import JointRelease, PostProcess, PublicStart, PublishAsIs
from dpkmeans.papers.dpkccm.flaws import PUBLISHED
from dpkmeans.papers.dpkccm.merging import merge_release
from dpkmeans.papers.registry import FitInputs
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = [
    "Variant",
    "VARIANTS",
    "SCHEDULES",
    "PAPER_MERGE_FACTOR",
    "PAPER_ITERATIONS",
    "dpkccm_config",
    "average_k",
    "allocation_k",
    "average_nk",
    "allocation_nk",
]

#: The paper's defaults: n = 3 and max_clustering = 12.
PAPER_MERGE_FACTOR = 3
PAPER_ITERATIONS = 12

#: A schedule maps (epsilon, iterations) to the per-iteration budgets (summing to epsilon).
Schedule = Callable[[float, int], np.ndarray]

def _decreasing(epsilon: float, iterations: int) -> np.ndarray:
    """The stepped schedule reversed (eps/8, eps/12, eps/24 per block): an ablation that asks
    whether the increasing order matters (the APDPk-means paper argues for decreasing budgets)."""
    return schedules.dpkccm_stepped(epsilon, iterations)[::-1].copy()


#: Named schedules for the ``schedule`` override: the paper's "average" and "allocation", and
#: the reversed stepped schedule (an ablation).
SCHEDULES: dict[str, Schedule] = {
    "uniform": schedules.uniform,
    "stepped": schedules.dpkccm_stepped,
    "decreasing": _decreasing,
}


@dataclass(frozen=True)
class Variant:
    """One of the paper's four configurations."""

    name: str
    schedule: str  # a key of SCHEDULES
    merge: bool  # run n*k clusters and merge them to k at the end


_VARIANTS = {
    v.name: v
    for v in (
        Variant("average_k", "uniform", merge=False),
        Variant("allocation_k", "stepped", merge=False),
        Variant("average_nk", "uniform", merge=True),
        Variant("allocation_nk", "stepped", merge=True),
    )
}


def _budgets(schedule: str | Schedule | ArrayLike, epsilon: float, iterations: int) -> np.ndarray:
    """Resolve the schedule override (a SCHEDULES name, a callable, or explicit budgets) and
    check it has one budget per iteration and sums to epsilon."""
    if isinstance(schedule, str):
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, a callable or an "
                             f"array of budgets, got {schedule!r}")
        schedule = SCHEDULES[schedule]
    if callable(schedule):
        schedule = schedule(epsilon, iterations)
    budgets = np.atleast_1d(np.asarray(schedule, dtype=float))
    if budgets.shape != (iterations,):
        raise ValueError(f"schedule must hold one budget per iteration ({iterations}), "
                         f"got shape {budgets.shape}")
    if not np.isclose(budgets.sum(), epsilon, rtol=1e-9, atol=0.0):
        raise ValueError(f"schedule must sum to epsilon = {epsilon}, got {budgets.sum()}")
    return budgets


def dpkccm_config(
    variant: str,
    n_clusters: int,
    epsilon: float,
    bounds: tuple[ArrayLike, ArrayLike],
    *,
    n: int | None = None,
    iterations: int = PAPER_ITERATIONS,
    schedule: str | Schedule | ArrayLike | None = None,
    centred: bool = True,
) -> DPLloydConfig:
    """The engine configuration of one of the paper's variants (see the module docstring).

    Parameters
    ----------
    variant:
        ``"average_k"``, ``"allocation_k"``, ``"average_nk"`` or ``"allocation_nk"`` (DP-KCCM).
    n_clusters:
        k, the number of published centroids.
    n:
        Merge factor: the run uses n k clusters and merges them to k. Default 3 (the paper) for
        the ``*_nk`` variants; the ``*_k`` variants do not merge, so n must be None or 1 there.
    iterations:
        T (the paper: 12; the stepped schedule needs a multiple of 3).
    schedule:
        Overrides the variant's schedule: ``"uniform"``, ``"stepped"``, a callable
        ``(epsilon, T) -> budgets``, or T explicit budgets summing to epsilon.
    centred:
        True (default): a record's L1 norm measured from the box's midpoint
        (:mod:`dpkmeans.privacy.sensitivity`), less noise on a box that is not symmetric about 0.
        False: the paper's Delta = d r + 1 read as the largest L1 norm from the origin
        (eq. 10-11). The two coincide on the paper's [-1, 1]^d.
    """
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {sorted(_VARIANTS)}, got {variant!r}")
    spec = _VARIANTS[variant]
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations")
    if n is None:
        n = PAPER_MERGE_FACTOR if spec.merge else 1
    n = check_positive_int(n, "n")
    if not spec.merge and n != 1:
        raise ValueError(f"{variant} does not merge, so n must be 1 (or None), got {n}; "
                         "use the *_nk variants for a merge factor")
    budgets = _budgets(spec.schedule if schedule is None else schedule, eps, T)
    return DPLloydConfig(
        n_clusters=n * k,
        bounds=bounds,
        schedule=budgets,
        start=PublicStart(sphere_packing),
        step=JointRelease(),
        output=PostProcess(merge_release(k)) if spec.merge else PublishAsIs(),
        name=variant,
        centred=centred,
    )


def _named(variant: str, doc: str) -> Callable[..., DPLloydConfig]:
    """A named wrapper ``variant(k, epsilon, bounds, ...)`` of :func:`dpkccm_config`."""

    def factory(
        n_clusters: int,
        epsilon: float,
        bounds: tuple[ArrayLike, ArrayLike],
        *,
        n: int | None = None,
        iterations: int = PAPER_ITERATIONS,
        schedule: str | Schedule | ArrayLike | None = None,
        centred: bool = True,
    ) -> DPLloydConfig:
        return dpkccm_config(variant, n_clusters, epsilon, bounds, n=n, iterations=iterations,
                             schedule=schedule, centred=centred)

    factory.__name__ = factory.__qualname__ = variant
    factory.__doc__ = doc + "\n\nSee :func:`dpkccm_config` for the parameters."
    return factory


average_k = _named("average_k", """Ni et al.'s ``average_k``: k clusters, eps/12 each, no merge.

The paper labels it "DPLloyd-Impr"; it is not: it is
DPLloyd with sphere-packing initialisation and T = 12. Su et al.'s method is
:func:`dpkmeans.papers.su.variants.dplloyd_impr`.""")
allocation_k = _named("allocation_k",
                      "Ni et al.'s ``allocation_k``: k clusters, the stepped schedule, no merge.")
average_nk = _named("average_nk",
                    "Ni et al.'s ``average_nk``: n k clusters, eps/12 each, merged to k (eq. 12).")
allocation_nk = _named("allocation_nk", """DP-KCCM (Ni et al.'s Alg. 1, ``allocation_nk``): n k
clusters, the stepped schedule (eps/24, eps/12, eps/8 per block of 4), merged to k (eq. 12).""")

#: The four configurations by name: ``VARIANTS[name](k, epsilon, bounds, n=..., ...)``.
VARIANTS: dict[str, Callable[..., DPLloydConfig]] = {
    "average_k": average_k,
    "allocation_k": allocation_k,
    "average_nk": average_nk,
    "allocation_nk": allocation_nk,
}


# -- the functions the paper's record names (its __init__.py) ------------------------------

def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dp-kccm")``: DP-KCCM (allocation with n k clusters)."""
    return allocation_nk(f.n_clusters, f.epsilon, f.bounds)


def published_example() -> DPLloydConfig:
    """DP-KCCM as published, k = 3 on the unit square: its loop, with the leaks of how the
    paper set it up (:data:`dpkmeans.papers.dpkccm.flaws.PUBLISHED`: min-max scaling of the
    data, hyper-parameters tuned on the evaluation data)."""
    return replace(allocation_nk(3, 1.0, (np.zeros(2), np.ones(2))), flaws=PUBLISHED)
