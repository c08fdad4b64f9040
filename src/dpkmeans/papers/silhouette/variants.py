"""Silhouette-weighted budgets (Zhang, Liu and Wang 2018), as published and corrected.

Both are configurations of the one engine (:mod:`dpkmeans.engine.loop`), with two strategies
(:mod:`dpkmeans.engine.strategies`): an allocation rule that weights each cluster's budget by its
silhouette, and, as published, an initial release from equal splits of the data.

=====================  ======================================  =====================================
                       as published                            corrected
=====================  ======================================  =====================================
scaling                min-max on the data (the study's        public bounds to [0, 1]^d
                       "paper" data; the flaw is recorded)
initial centres        noisy means of K equal splits of the    sphere packing (public)
                       records in file order, budget
                       undefined (charged as eps, a leak)
iteration budget       eps / 2^t, t = 1..10                    the same halving, normalised so that
                                                               10 iterations spend eps; a share
                                                               ``silhouette_share`` of each pays
                                                               for the silhouettes
cluster weight w_k     (1 + S_k) / (1 + min_j S_j) >= 1,       (1 + S~_k) / (1 + max_j S~_j) <= 1,
                       S_k exact (a leak)                      S~_k from noisy (sum_i S(i), n_k)
noise                  one draw shared by sum and count        independent draws, centred on the box
                       (the paper's Noise_k^t), Delta = d + 1
stop                   no centroid moves by 1e-3 sqrt(d) or more, or 10 iterations (the paper's
                       threshold "one" would stop every run after one iteration on [0, 1]^d)
=====================  ======================================  =====================================

The silhouette is the centre-based one, S(x) = (b - a) / max(a, b) with a the distance to the
record's own (nearest) centre and b to the next one (:func:`dpkmeans.compute.lloyd.block_silhouette`):
every S(x) lies in [0, 1], so the as-published weights lie in [1, 2] and the overspend of an
iteration is at most a factor 2, not unbounded as with the full silhouette.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.lloyd import block_silhouette, block_silhouette_ahead
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.strategies import AllocationRule, InitialRelease, PublicStart, ShiftBelow
from dpkmeans.papers.registry import FitInputs
from dpkmeans.papers.silhouette.flaws import FLAWS, SharedNoise
from dpkmeans.privacy.mechanisms import Entry, entry
from dpkmeans.privacy.noise import NoiseCalibration, calibrate
from dpkmeans.validation import check_epsilon, check_positive_int, check_real

__all__ = [
    "MAX_ITERATIONS",
    "SILHOUETTE_SHARE",
    "STOP_FACTOR",
    "VARIANTS",
    "cluster_silhouettes",
    "ExactSilhouetteWeights",
    "NoisySilhouetteWeights",
    "EqualSplitInitialRelease",
    "as_published",
    "corrected",
    "equal_weights",
]

#: The paper's iteration cap ("the number of iterations is higher than 10").
MAX_ITERATIONS = 10
#: Corrected: the share of each iteration's budget spent on the noisy silhouettes.
SILHOUETTE_SHARE = 0.1
#: The stopping threshold is STOP_FACTOR sqrt(d) on [0, 1]^d (the paper's "lower than one"
#: stops almost every run after one iteration there; most likely a slip).
STOP_FACTOR = 1e-3


def cluster_silhouettes(ctx: HookContext) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-cluster sums of S(x) and counts (R, k) of the active replicas. Before an
    iteration that another follows, the next iteration's statistics pass computes its
    silhouettes too (:func:`dpkmeans.compute.lloyd.block_silhouette_ahead`: the same bits, one
    pass over the data fewer)."""
    ahead = ctx.iteration < getattr(ctx.config, "iterations", 0)
    return ctx.backend.map_reduce(ctx.data, block_silhouette_ahead if ahead else block_silhouette,
                                  ctx.centroids)


@dataclass(frozen=True)
class ExactSilhouetteWeights(AllocationRule):
    """As published: w_k = (1 + S_k) / (1 + min_j S_j) from the exact silhouettes
    S_k = sum S(x) / n_k (0 for an empty cluster). Its leak and its overspend are the
    configuration's flaws ``exact-silhouettes`` and ``min-normalised-weights``."""

    name: str = "exact silhouettes, normalised by the minimum (as published)"

    def weights(self, ctx: HookContext) -> np.ndarray:
        sums, counts = cluster_silhouettes(ctx)
        S = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0)
        return (1.0 + S) / (1.0 + S.min(axis=1, keepdims=True))


#: The bounds of (sum S(x), n_j)'s two elements under add/remove: one record adds S(x) in
#: [0, 1] and 1 at once (the ledger accounts the release by its elements).
SILHOUETTE_ELEMENTS = (1.0, 1.0)


def _elements(config: DPLloydConfig) -> tuple[float, ...]:
    return SILHOUETTE_ELEMENTS if config.neighbour == "add/remove" else ()


@dataclass(frozen=True)
class NoisySilhouetteWeights(AllocationRule):
    """Corrected: release each cluster's (sum S(x), n_k) with Laplace noise (L1 sensitivity 2
    under add/remove: one record adds S(x) in [0, 1] and 1), in parallel over the clusters, with
    the budget share/(1 - share) of the iteration's; then S~_k = clip(sum' / max(n', 1), 0, 1)
    and w_k = (1 + S~_k) / (1 + max_j S~_j), in [1/2, 1] with maximum 1 (post-processing)."""

    share: float = SILHOUETTE_SHARE
    name: str = "noisy silhouettes, normalised by the maximum (corrected)"

    def __post_init__(self) -> None:
        share = check_real(self.share, "share")
        if not 0.0 < share < 1.0:
            raise ValueError(f"share must lie in (0, 1), got {share}")

    def epsilon(self, iteration_epsilon: float) -> float:
        """The silhouettes' budget next to an iteration budget eps_t (the schedule holds
        (1 - share) of each halving step, this its share)."""
        return iteration_epsilon * self.share / (1.0 - self.share)

    def calibration(self, config: DPLloydConfig, eps_t: float) -> NoiseCalibration:
        """The Laplace noise of the silhouettes' release in an iteration of budget eps_t."""
        return calibrate("laplace", 2.0, self.epsilon(eps_t), sampler=config.sampler,
                         coordinates=2)

    def planned_entries(self, config: DPLloydConfig, eps_t: float) -> list[Entry]:
        return [entry(self.calibration(config, eps_t),
                      label="(sum_x S(x), n_j) of every cluster in parallel",
                      parts=_elements(config))]

    def weights(self, ctx: HookContext) -> np.ndarray:
        sums, counts = cluster_silhouettes(ctx)
        cal = self.calibration(ctx.config, ctx.epsilon)
        noisy = ctx.release(cal, np.stack([sums, counts], axis=2),  # (r, k, 2)
                            label="(sum_x S(x), n_j) of every cluster in parallel",
                            details={"replicas": ctx.replicas}, parts=_elements(ctx.config))
        ctx.ledger.post_process("S~_j = clip(sum' / max(n', 1), 0, 1), "
                                "w_j = (1 + S~_j) / (1 + max S~): weights from released "
                                "values, max w = 1")
        S = np.clip(noisy[..., 0] / np.maximum(noisy[..., 1], 1.0), 0.0, 1.0)
        return (1.0 + S) / (1.0 + S.max(axis=1, keepdims=True))


def equal_split_sums(block: np.ndarray, start: int, n_rows: int, k: int) -> tuple[np.ndarray, ...]:
    """Sums (k, d) and counts (k,) of the K equal splits of the records in file order that fall
    in this block (row i is in split floor(i k / N))."""
    rows = np.arange(start, start + block.shape[0])
    split = rows * k // n_rows
    sums = np.zeros((k, block.shape[1]))
    np.add.at(sums, split, block)
    return sums, np.bincount(split, minlength=k).astype(float)


@dataclass(frozen=True)
class EqualSplitInitialRelease(InitialRelease):
    """As published: split the records in file order into K equal parts and release each part's
    (sum, count) with one shared Laplace draw of scale (d + 1) / eps_0, eps_0 = eps (the paper
    leaves it undefined; eps / 2^0 at t = 0); u_k = sum' / count' (the midpoint of the box if
    count' < 1), clipped to the box. The parts are not a fixed partition under add/remove
    (flaw ``position-split``) and eps_0 is outside the declared total
    (``undefined-initial-budget``)."""

    epsilon: float
    name: str = "noisy means of equal splits in file order (as published)"

    def __call__(self, ctx: HookContext) -> np.ndarray:
        cfg = ctx.config
        k, (lower, upper) = cfg.n_clusters, cfg.bounds
        d = lower.size
        sums, counts = ctx.backend.map_reduce(ctx.data, equal_split_sums, ctx.n_rows, k,
                                              with_start=True)
        cal = calibrate("laplace", d + 1.0, self.epsilon, sampler=cfg.sampler, coordinates=d + 1)
        values = np.broadcast_to(np.hstack([sums, counts[:, None]]), (ctx.replicas, k, d + 1))
        noisy = ctx.release(cal, values, shared=True,
                            label="initial (sum, count) of K equal splits, one shared draw",
                            details={"replicas": ctx.replicas})
        ctx.ledger.post_process("u_k = sum' / count' (the box's midpoint if count' < 1), "
                                "clipped to the box")
        mid = (lower + upper) / 2.0
        n = noisy[..., -1:]
        centres = np.where(n >= 1.0, noisy[..., :-1] / np.where(n >= 1.0, n, 1.0), mid)
        return np.clip(centres, lower, upper)


def _stop(d: int) -> float:
    return STOP_FACTOR * float(np.sqrt(d))


def as_published(n_clusters: int, epsilon: float, bounds: tuple[ArrayLike, ArrayLike], *,
                 data_derived_bounds: bool = True) -> DPLloydConfig:
    """The paper's method as published (module docstring). ``data_derived_bounds`` records the paper's
    min-max scaling as a flaw; pass False only for bounds that really are public."""
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    d = np.atleast_1d(np.asarray(bounds[0], dtype=float)).size
    flaws = FLAWS + ((DATA_DERIVED_BOUNDS,) if data_derived_bounds else ())
    return DPLloydConfig(
        n_clusters=k, bounds=bounds,
        schedule=schedules.halving(eps, MAX_ITERATIONS, normalise=False), budget=eps,
        start=EqualSplitInitialRelease(eps), allocation=ExactSilhouetteWeights(),
        step=SharedNoise(), stop=ShiftBelow(_stop(d)), centred=False, flaws=flaws,
        name="silhouette (as published)")


def corrected(n_clusters: int, epsilon: float, bounds: tuple[ArrayLike, ArrayLike], *,
              silhouette_share: float = SILHOUETTE_SHARE,
              stop_threshold: float | None = None) -> DPLloydConfig:
    """The paper's method corrected (module docstring): epsilon-DP on public bounds (book chapter 8).
    ``stop_threshold`` replaces STOP_FACTOR sqrt(d) (e.g. the paper's literal 1)."""
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    rule = NoisySilhouetteWeights(silhouette_share)
    d = np.atleast_1d(np.asarray(bounds[0], dtype=float)).size
    return DPLloydConfig(
        n_clusters=k, bounds=bounds,
        schedule=(1.0 - rule.share) * schedules.halving(eps, MAX_ITERATIONS), budget=eps,
        start=PublicStart(sphere_packing), allocation=rule,
        stop=ShiftBelow(_stop(d) if stop_threshold is None else check_real(stop_threshold,
                                                                           "stop_threshold")),
        name="silhouette (corrected)")


def equal_weights(n_clusters: int, epsilon: float,
                  bounds: tuple[ArrayLike, ArrayLike]) -> DPLloydConfig:
    """The ablation of the corrected method without silhouettes: the same normalised halving
    schedule, initialisation and stop, every cluster weighted equally (so the whole of each
    step's budget goes to the centroids). It isolates what the silhouette weights add."""
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    d = np.atleast_1d(np.asarray(bounds[0], dtype=float)).size
    return DPLloydConfig(
        n_clusters=k, bounds=bounds, schedule=schedules.halving(eps, MAX_ITERATIONS),
        budget=eps, start=PublicStart(sphere_packing), stop=ShiftBelow(_stop(d)),
        name="halving, equal weights")


#: The configurations by name: the paper twice, and the ablation without silhouettes.
VARIANTS = {"as_published": as_published, "corrected": corrected, "equal_weights": equal_weights}


# -- the functions the paper's record names (its __init__.py) ------------------------------

def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="silhouette")``: the corrected algorithm."""
    return corrected(f.n_clusters, f.epsilon, f.bounds)


def published_example() -> DPLloydConfig:
    """The paper's algorithm as published, k = 3 on the unit square."""
    return as_published(3, 1.0, (np.zeros(2), np.ones(2)))
