"""The one DP-Lloyd loop that every algorithm in the book configures (DESIGN.md section 2).

    init -> for t in schedule: stats = batched_stats(X, centroids)      # exact
                               noisy = release(stats, budget_t, ledger)  # the only noise
                               centroids = update(noisy)                 # post-processing
         -> final release (e.g. merge n*k -> k)                          # post-processing

A configuration names the initializer, the budget schedule, the per-cluster allocation, the
count/sum split, the noise, the neighbour relation and the final release. R replicas run in
one pass; replica r draws its initial centroids and all of its noise from the r-th child of
one ``SeedSequence``, so its numbers do not depend on how many replicas run beside it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .accounting import NEIGHBOUR_RELATIONS, PrivacyLedger
from .data.scaling import clip_to_bounds as clip_columns
from .errors import ClippingWarning
from .init import Initializer, sphere_packing
from .lloyd import SCORE_PRECISIONS, as_data_matrix, batched_stats
from .mechanisms import charge
from .noise import NOISE_KINDS, NoiseCalibration, calibrate, check_sampler, grid_release
from .schedules import SU_RHO, su_split
from .sensitivity import (
    box_midpoint,
    check_bounds,
    check_box,
    coordinate_bounds,
    lloyd_query_sensitivity,
)
from .validation import check_delta, check_epsilon, check_positive_int

__all__ = [
    "DPLloydConfig",
    "DPLloydResult",
    "Release",
    "iteration_releases",
    "plan_ledger",
    "run",
    "clip_to_bounds",
    "SPLITS",
    "FLAWS",
]

#: How one iteration's budget is spent on a cluster's (sum, count):
#: "joint" = one Laplace release of the (d + 1)-vector (DPLloyd; seed 000),
#: "su" = the count and each sum dimension separately, count : dimension = cbrt(4 d rho^2) : 1
#: (DPLloyd-Impr, reference §3.3c).
SPLITS = ("joint", "su")

#: Published flaws a configuration can reproduce on purpose ("as published" variants, audited in
#: the book; never private). Each maps to what the ledger records about it.
FLAWS = {
    "skip-empty-clusters": "empty clusters get no noise and keep their centroid (diffprivlib 0.6.6)",
    "exact-counts": "cluster sizes are released without noise (seed 004 as published)",
    "swapped-split": "Su's count and per-dimension shares exchanged (diffprivlib 0.6.6)",
    "data-derived-bounds": ("the box was read off the private data (min-max scaling, 'paper "
                            "mode'): a neighbour can move the box, so no sensitivity holds"),
    "private-record-count": ("T was chosen from the exact number of private records (Su's rule "
                             "in diffprivlib 0.6.6): one record more can change T"),
}

#: A final release maps (centroids (R, k, d), noisy counts (R, k)) to the published centroids.
Release = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DPLloydConfig:
    """A DP-Lloyd configuration. Every field is public: nothing here may depend on the data.

    ``schedule`` holds the per-iteration budgets (their sum is the run's epsilon); with
    Gaussian noise ``delta`` is spent per iteration, so a run is (epsilon, T delta)-DP;
    ``allocation`` optionally scales each cluster's share of an iteration's budget (values in
    (0, 1] with largest share 1, equal by default; add/remove adjacency only); ``count_floor``
    is the post-processing rule for small noisy counts: a cluster whose noisy count is below it
    keeps its previous centroid.

    ``centred`` (default) releases each cluster's sum measured from the box's midpoint and adds
    the midpoint back (book chapter 5): the sensitivity uses the half-widths of the box instead
    of the largest |coordinate|. ``centred=False`` is the papers' Delta = d r + 1. ``sampler``
    is ``"discrete"`` (exact noise on a public grid, the default) or ``"continuous"`` (numpy
    float64, as the papers; recorded as a leak) (:mod:`dpkmeans.noise`).
    """

    n_clusters: int
    bounds: tuple[np.ndarray, np.ndarray]
    schedule: np.ndarray
    initializer: Initializer = sphere_packing
    split: str = "joint"
    noise: str = "laplace"
    delta: float = 0.0
    neighbour: str = "add/remove"
    allocation: np.ndarray | None = None
    count_floor: float = 1.0
    rho: float = SU_RHO["[-1,1]"]
    release: Release | None = None
    name: str = "dp-lloyd"
    flaws: tuple[str, ...] = ()
    scores: str = "double"
    centred: bool = True
    sampler: str = "discrete"

    def __post_init__(self) -> None:
        check_positive_int(self.n_clusters, "n_clusters")
        object.__setattr__(self, "bounds", check_box(self.bounds))
        schedule = np.atleast_1d(np.asarray(self.schedule, dtype=float))
        if schedule.ndim != 1 or schedule.size == 0:
            raise ValueError("schedule must be a non-empty 1-D array of per-iteration budgets")
        for t, eps_t in enumerate(schedule, start=1):
            check_epsilon(float(eps_t), f"schedule[{t}]")
        object.__setattr__(self, "schedule", schedule)
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        if self.noise not in NOISE_KINDS:
            raise ValueError(f"noise must be one of {NOISE_KINDS}, got {self.noise!r}")
        if self.noise == "gaussian":
            check_delta(self.delta)
            if self.split != "joint":
                raise ValueError("the 'su' split is defined for Laplace noise only")
        elif self.delta != 0.0:
            raise ValueError("delta must be 0 for Laplace noise")
        if self.neighbour not in NEIGHBOUR_RELATIONS:
            raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, got {self.neighbour!r}")
        if self.allocation is not None:
            shares = np.asarray(self.allocation, dtype=float)
            if shares.shape != (self.n_clusters,) or not np.all((shares > 0) & (shares <= 1)):
                raise ValueError("allocation must hold one share in (0, 1] per cluster")
            if shares.max() != 1.0:
                raise ValueError(f"allocation must give its largest share 1 (the most expensive "
                                 f"cluster spends the iteration's budget), got max "
                                 f"{shares.max():g}: divide the shares by their maximum")
            if self.neighbour == "replace":
                raise ValueError("allocation needs add/remove adjacency: under replace a record "
                                 "touches two clusters, so per-cluster budgets do not compose "
                                 "in parallel")
            object.__setattr__(self, "allocation", shares)
        check_sampler(self.sampler)
        if not isinstance(self.centred, bool | np.bool_):
            raise TypeError(f"centred must be True or False, got {self.centred!r}")
        if not self.count_floor > 0:
            raise ValueError(f"count_floor must be > 0, got {self.count_floor}")
        object.__setattr__(self, "flaws", tuple(self.flaws))
        unknown = [f for f in self.flaws if f not in FLAWS]
        if unknown:
            raise ValueError(f"flaws must be among {sorted(FLAWS)}, got {unknown}")
        if self.flaws and self.neighbour != "add/remove":
            raise ValueError("flawed (as-published) variants are defined for add/remove only")
        if "swapped-split" in self.flaws and self.split != "su":
            raise ValueError("the 'swapped-split' flaw needs split='su'")
        if self.scores not in SCORE_PRECISIONS:
            raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, got {self.scores!r}")

    @property
    def epsilon(self) -> float:
        """The total budget: sequential composition over iterations, parallel over clusters."""
        return float(self.schedule.sum())

    @property
    def iterations(self) -> int:
        return int(self.schedule.size)


@dataclass(frozen=True)
class DPLloydResult:
    """What a run returns. ``centroids`` is the release; the rest is for analysis."""

    centroids: np.ndarray  # (R, k', d): the published centroids of each replica
    initial_centroids: np.ndarray  # (R, k, d)
    noisy_counts: np.ndarray  # (R, k) after the last iteration
    ledger: PrivacyLedger  # the accounting of one replica (all replicas spend the same)
    config: DPLloydConfig
    n_clipped: int
    history: list[np.ndarray] = field(default_factory=list)  # centroids after each iteration


def clip_to_bounds(X: ArrayLike, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
    """Clip every value to the public bounds; return the clipped data and how many changed."""
    X = as_data_matrix(X)
    lower, upper = check_bounds(bounds)
    if lower.size != X.shape[1]:
        raise ValueError(f"bounds have {lower.size} features but X has {X.shape[1]}")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one row")
    if np.all(X.min(axis=0) >= lower) and np.all(X.max(axis=0) <= upper):
        return X, 0  # already inside: no copy of X (the usual case with scaled data)
    clipped, counts = clip_columns(X, np.column_stack([lower, upper]))
    return clipped, counts.total


@dataclass(frozen=True)
class Release:
    """One noise release of an iteration: the columns of the (d + 1)-vector (S_j, n_j) it
    covers, for one cluster (``cluster = j``) or all of them at once (``None``, replace
    adjacency), and its calibrated noise."""

    label: str
    cluster: int | None
    columns: slice
    calibration: NoiseCalibration


def _release_specs(config: DPLloydConfig, eps_t: float) -> list[tuple[str, slice, float, float]]:
    """The releases of one cluster in one iteration: (label, columns, sensitivity, epsilon).

    Columns index the (d + 1)-vector (S_j, n_j). Under replace adjacency each release covers
    all clusters at once with the joint sensitivity (a record can leave one cluster and join
    another), so the iteration composes sequentially over releases, not in parallel.
    """
    lower, upper = config.bounds
    d = lower.size
    per_dim = coordinate_bounds(config.bounds, config.centred)
    if config.split == "joint":
        if config.noise == "gaussian":
            l2 = float(np.sqrt(np.sum(per_dim**2) + 1.0))
            if config.neighbour == "replace":
                l2 = max(float(np.linalg.norm(upper - lower)), np.sqrt(2.0) * l2)
            return [("(S_j, n_j)", slice(0, d + 1), l2, eps_t)]
        sens = lloyd_query_sensitivity(config.bounds, config.neighbour, centred=config.centred)
        delta1 = sens.joint if config.neighbour == "replace" else sens.per_cluster
        if "exact-counts" in config.flaws:  # only the sums are noised; the count stays exact
            return [("S_j", slice(0, d), delta1 - 1.0, eps_t)]
        return [("(S_j, n_j)", slice(0, d + 1), delta1, eps_t)]
    eps_count, eps_dim = su_split(eps_t, d, config.rho)
    if "swapped-split" in config.flaws:
        eps_count, eps_dim = eps_dim, eps_count
    factor = 2.0 if config.neighbour == "replace" else 1.0
    out = [] if "exact-counts" in config.flaws else [("n_j", slice(d, d + 1), factor, eps_count)]
    out += [(f"S_j[{i}]", slice(i, i + 1), factor * float(per_dim[i]), eps_dim) for i in range(d)]
    return out


def iteration_releases(config: DPLloydConfig, eps_t: float) -> list[Release]:
    """Every release of one iteration, calibrated (public: it reads the configuration only).

    Under add/remove adjacency cluster j's releases use the budget eps_t * allocation[j].
    Calibrations are computed once per distinct (sensitivity, epsilon, width).
    """
    cache: dict[tuple[float, float, int], NoiseCalibration] = {}

    def cal(sens: float, eps: float, width: int) -> NoiseCalibration:
        key = (sens, eps, width)
        if key not in cache:
            cache[key] = calibrate(config.noise, sens, eps, config.delta, sampler=config.sampler,
                                   coordinates=width)
        return cache[key]

    def specs(cluster: int | None, budget: float) -> list[Release]:
        return [Release(label, cluster, cols, cal(sens, eps, cols.stop - cols.start))
                for label, cols, sens, eps in _release_specs(config, budget)]

    if config.neighbour == "replace":
        return specs(None, eps_t)
    shares = np.ones(config.n_clusters) if config.allocation is None else config.allocation
    return [r for j in range(config.n_clusters) for r in specs(j, eps_t * float(shares[j]))]


def _charge_iteration(ledger: PrivacyLedger, releases: list[Release], replicas: int) -> None:
    """Record an iteration's releases: sequentially over releases that cover all clusters
    (replace), in parallel over the disjoint clusters otherwise (add/remove)."""
    details = {"replicas": replicas}
    if releases[0].cluster is None:
        for r in releases:
            charge(ledger, r.calibration, label=f"{r.label}, all clusters", details=details)
        return
    with ledger.parallel("clusters"):
        for j in sorted({r.cluster for r in releases}):
            with ledger.part(f"cluster {j}"):
                for r in releases:
                    if r.cluster == j:
                        charge(ledger, r.calibration, label=r.label, details=details)


def _element_plan(releases: list[Release], shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """Per element of (k, d + 1): grid step, noise steps and continuous scale (0: no noise)."""
    grid, steps, scale = np.ones(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape)
    for r in releases:
        rows = slice(None) if r.cluster is None else r.cluster
        c = r.calibration
        grid[rows, r.columns] = c.grid if c.grid > 0 else 1.0
        steps[rows, r.columns] = c.noise_steps
        scale[rows, r.columns] = c.scale
    return grid, steps, scale


def _noisy_iteration(stats: np.ndarray, releases: list[Release], config: DPLloydConfig,
                     rngs: list[np.random.Generator], unit: np.ndarray | None) -> np.ndarray:
    """Add noise to every cluster's (S_j, n_j), empty clusters included.

    Discrete sampler: every noised element is rounded to its public grid and gets exact
    integer noise drawn now, per iteration, from each replica's own generator. Continuous:
    ``unit`` holds this iteration's unit draws (drawn up front). Columns that no release
    covers (the counts, under the "exact-counts" flaw) stay exact.
    """
    grid, steps, scale = _element_plan(releases, stats.shape[1:])
    noised = scale > 0
    noisy = stats.copy()
    if config.sampler == "continuous":
        noisy[:, noised] = stats[:, noised] + scale[noised] * unit[:, noised]
    elif noised.any():
        noisy[:, noised] = grid_release(config.noise, stats[:, noised], grid[noised],
                                        steps[noised], rngs)
    if "skip-empty-clusters" in config.flaws:
        empty = stats[..., -1] == 0
        noisy[empty] = stats[empty]  # zero count: the update keeps the previous centroid
    return noisy


def _update(noisy: np.ndarray, previous: np.ndarray, config: DPLloydConfig,
            centre: np.ndarray) -> np.ndarray:
    """Post-processing: c_j = S'_j / n'_j + m if n'_j >= count_floor, else keep c_j; clip to the
    box. ``S'_j`` is the released (centred) sum; m is the midpoint (0 when not centred)."""
    sums, counts = noisy[..., :-1], noisy[..., -1]
    usable = counts >= config.count_floor
    safe = np.where(usable, counts, 1.0)[..., None]
    centroids = np.where(usable[..., None], sums / safe + centre, previous)
    return np.clip(centroids, *config.bounds)


def _given_initial(initial: ArrayLike, config: DPLloydConfig, R: int, d: int) -> np.ndarray:
    """Check caller-supplied initial centroids: shape (R, k, d), finite, inside the bounds."""
    C = np.asarray(initial, dtype=float)
    expected = (R, config.n_clusters, d)
    if C.shape != expected:
        raise ValueError(f"initial_centroids must have shape {expected} (replicas, n_clusters, "
                         f"features), got {C.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError("initial_centroids must be finite")
    lower, upper = config.bounds
    if np.any(C < lower) or np.any(C > upper):
        raise ValueError("initial_centroids must lie inside the public bounds")
    return C


def _unit_noise(kind: str, rngs: list[np.random.Generator], shape: tuple[int, ...]) -> np.ndarray:
    """Continuous sampler only: unit-scale float noise of shape (R, *shape), drawn up front;
    replica r draws only from ``rngs[r]`` (noise never depends on the data)."""
    return np.stack([g.laplace(0.0, 1.0, size=shape) if kind == "laplace"
                     else g.standard_normal(size=shape) for g in rngs])


def run(
    X: ArrayLike,
    config: DPLloydConfig,
    seed: int | np.random.SeedSequence,
    *,
    replicas: int = 1,
    initial_centroids: ArrayLike | None = None,
    record_history: bool = False,
    ledger: PrivacyLedger | None = None,
) -> DPLloydResult:
    """Run ``replicas`` independent DP-Lloyd runs of ``config`` on X in one pass.

    X is clipped to the public bounds first (with a :class:`ClippingWarning` giving the
    count). Each replica's ledger total equals ``config.epsilon``; the returned ledger is
    that of one replica.

    ``initial_centroids`` (R, k, d) replaces the configuration's initializer: replica r
    starts from row r. They must not depend on the data (e.g. sphere-packing draws shared by
    several replicas, as in seed 000's "20 initial-centroid sets x 50 runs"); the run cannot
    check that, so it is the caller's promise. They must lie in the bounds.

    ``ledger`` continues an existing ledger (same neighbour relation) whose declared budget
    covers what was spent before the run plus ``config.epsilon`` -- e.g. a noisy record count
    released first (:func:`dpkmeans.algorithms.noisy_record_count`). At the end its total must
    equal its budget. By default the run opens a ledger whose budget is ``config.epsilon``.
    """
    R = check_positive_int(replicas, "replicas")
    X, n_clipped = clip_to_bounds(X, config.bounds)
    if n_clipped:
        warnings.warn(f"{n_clipped} values outside the public bounds were clipped to them",
                      ClippingWarning, stacklevel=2)
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = [np.random.default_rng(child) for child in seq.spawn(R)]
    k, d, T = config.n_clusters, X.shape[1], config.iterations
    if initial_centroids is None:
        initial = np.stack([config.initializer(config.bounds, k, g) for g in rngs])
    else:
        initial = _given_initial(initial_centroids, config, R, d)
    unit = _unit_noise(config.noise, rngs, (T, k, d + 1)) if config.sampler == "continuous" else None
    ledger = _open_ledger(config, ledger)
    centre = box_midpoint(config.bounds) if config.centred else np.zeros(d)
    centroids, history = initial, []
    noisy = np.zeros((R, k, d + 1))
    for t, eps_t in enumerate(config.schedule):
        sums, counts = batched_stats(X, centroids, scores=config.scores)
        if config.centred:
            sums -= counts[..., None] * centre  # S_j - n_j m: the centred query
        stats = np.concatenate([sums, counts[..., None]], axis=2)
        releases = iteration_releases(config, float(eps_t))
        with ledger.sequential(f"iteration {t + 1}"):
            _charge_iteration(ledger, releases, R)  # before any noise is drawn
            noisy = _noisy_iteration(stats, releases, config, rngs,
                                     None if unit is None else unit[:, t])
            ledger.post_process(f"c_j = S'_j / n'_j{' + m' if config.centred else ''} if "
                                f"n'_j >= {config.count_floor:g}, else keep c_j; clip to the box")
        centroids = _update(noisy, centroids, config, centre)
        if record_history:
            history.append(centroids)
    released = centroids
    if config.release is not None:
        released = config.release(centroids, noisy[..., -1])
        ledger.post_process(f"final release: {getattr(config.release, '__name__', 'custom')}")
    if not config.flaws and ledger.budget is not None and not ledger.is_fully_spent():
        raise RuntimeError(f"ledger total {ledger.total()} differs from the budget {ledger.budget}")
    return DPLloydResult(released, initial, noisy[..., -1], ledger, config, n_clipped, history)


def plan_ledger(config: DPLloydConfig, replicas: int = 1) -> PrivacyLedger:
    """The ledger a run of ``config`` records, without running it: every charge depends on the
    configuration only (public), so the privacy of a configuration is computed before, and
    without, any data. Used for the rows of contenders the engine does not run itself."""
    ledger = _open_ledger(config, None)
    for t, eps_t in enumerate(config.schedule):
        with ledger.sequential(f"iteration {t + 1}"):
            _charge_iteration(ledger, iteration_releases(config, float(eps_t)), replicas)
    return ledger


def _open_ledger(config: DPLloydConfig, ledger: PrivacyLedger | None) -> PrivacyLedger:
    """The run's ledger (a new one, or the caller's), with the configuration's flaws recorded."""
    if ledger is None:
        budget = (config.epsilon, config.delta * config.iterations) if config.delta else config.epsilon
        ledger = PrivacyLedger(budget=None if config.flaws else budget, neighbour=config.neighbour)
    elif ledger.neighbour != config.neighbour:
        raise ValueError(f"the ledger's neighbour relation ({ledger.neighbour!r}) differs from "
                         f"the configuration's ({config.neighbour!r})")
    for flaw in config.flaws:
        if flaw == "swapped-split":
            ledger.post_process(f"as published, {FLAWS[flaw]}: the total below is the true spend")
        else:
            ledger.leak(FLAWS[flaw])
    return ledger
