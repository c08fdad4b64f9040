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
from .mechanisms import NOISE_KINDS, release_batch, standard_noise
from .schedules import SU_RHO, su_split
from .sensitivity import check_bounds, lloyd_query_sensitivity
from .validation import check_delta, check_epsilon, check_positive_int

__all__ = ["DPLloydConfig", "DPLloydResult", "run", "clip_to_bounds", "SPLITS", "FLAWS"]

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
}

#: A final release maps (centroids (R, k, d), noisy counts (R, k)) to the published centroids.
Release = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DPLloydConfig:
    """A DP-Lloyd configuration. Every field is public: nothing here may depend on the data.

    ``schedule`` holds the per-iteration budgets (their sum is the run's epsilon); with
    Gaussian noise ``delta`` is spent per iteration, so a run is (epsilon, T delta)-DP;
    ``allocation`` optionally scales each cluster's share of an iteration's budget (values in
    (0, 1], equal by default); ``count_floor`` is the post-processing rule for small noisy
    counts: a cluster whose noisy count is below it keeps its previous centroid.
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

    def __post_init__(self) -> None:
        check_positive_int(self.n_clusters, "n_clusters")
        object.__setattr__(self, "bounds", check_bounds(self.bounds))
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
            if self.neighbour == "replace" and not np.all(shares == shares[0]):
                raise ValueError("unequal per-cluster allocations need add/remove adjacency")
            object.__setattr__(self, "allocation", shares)
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


def _releases(config: DPLloydConfig, eps_t: float) -> list[tuple[str, slice, float, float]]:
    """The releases of one cluster in one iteration: (label, columns, sensitivity, epsilon).

    Columns index the (d + 1)-vector (S_j, n_j). Under replace adjacency each release covers
    all clusters at once with the joint sensitivity (a record can leave one cluster and join
    another), so the iteration composes sequentially over releases, not in parallel.
    """
    lower, upper = config.bounds
    d = lower.size
    sens = lloyd_query_sensitivity(config.bounds, config.neighbour)
    if config.split == "joint":
        if config.noise == "gaussian":
            per_dim = np.maximum(np.abs(lower), np.abs(upper))
            l2 = float(np.sqrt(np.sum(per_dim**2) + 1.0))
            if config.neighbour == "replace":
                l2 = max(float(np.linalg.norm(upper - lower)), np.sqrt(2.0) * l2)
            return [("(S_j, n_j)", slice(0, d + 1), l2, eps_t)]
        delta1 = sens.joint if config.neighbour == "replace" else sens.per_cluster
        if "exact-counts" in config.flaws:  # only the sums are noised; the count stays exact
            return [("S_j", slice(0, d), delta1 - 1.0, eps_t)]
        return [("(S_j, n_j)", slice(0, d + 1), delta1, eps_t)]
    eps_count, eps_dim = su_split(eps_t, d, config.rho)
    if "swapped-split" in config.flaws:
        eps_count, eps_dim = eps_dim, eps_count
    factor = 2.0 if config.neighbour == "replace" else 1.0
    per_dim = np.maximum(np.abs(lower), np.abs(upper))
    out = [] if "exact-counts" in config.flaws else [("n_j", slice(d, d + 1), factor, eps_count)]
    out += [(f"S_j[{i}]", slice(i, i + 1), factor * float(per_dim[i]), eps_dim) for i in range(d)]
    return out


def _noisy_iteration(stats: np.ndarray, unit: np.ndarray, config: DPLloydConfig, eps_t: float,
                     ledger: PrivacyLedger, replicas: int) -> np.ndarray:
    """Add noise to every cluster's (S_j, n_j), empty clusters included, and record it.

    Columns that no release covers (the counts, under the "exact-counts" flaw) stay exact.
    """
    noisy = stats.copy()
    kind, delta = config.noise, config.delta
    details = {"replicas": replicas}
    if config.neighbour == "replace":
        for label, cols, sens, eps in _releases(config, eps_t):
            noisy[:, :, cols] = release_batch(stats[:, :, cols], unit[:, :, cols], kind=kind,
                                              sensitivity=sens, epsilon=eps, delta=delta,
                                              ledger=ledger, label=f"{label}, all clusters",
                                              details=details)
        return noisy
    shares = np.ones(config.n_clusters) if config.allocation is None else config.allocation
    with ledger.parallel("clusters"):
        for j in range(config.n_clusters):
            with ledger.part(f"cluster {j}"):
                for label, cols, sens, eps in _releases(config, eps_t * shares[j]):
                    noisy[:, j, cols] = release_batch(stats[:, j, cols], unit[:, j, cols],
                                                      kind=kind, sensitivity=sens, epsilon=eps,
                                                      delta=delta, ledger=ledger, label=label,
                                                      details=details)
    if "skip-empty-clusters" in config.flaws:
        empty = stats[..., -1] == 0
        noisy[empty] = stats[empty]  # zero count: the update keeps the previous centroid
    return noisy


def _update(noisy: np.ndarray, previous: np.ndarray, config: DPLloydConfig) -> np.ndarray:
    """Post-processing: c_j = S'_j / n'_j if n'_j >= count_floor, else keep c_j; clip to box."""
    sums, counts = noisy[..., :-1], noisy[..., -1]
    usable = counts >= config.count_floor
    safe = np.where(usable, counts, 1.0)[..., None]
    centroids = np.where(usable[..., None], sums / safe, previous)
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


def run(
    X: ArrayLike,
    config: DPLloydConfig,
    seed: int | np.random.SeedSequence,
    *,
    replicas: int = 1,
    initial_centroids: ArrayLike | None = None,
    record_history: bool = False,
) -> DPLloydResult:
    """Run ``replicas`` independent DP-Lloyd runs of ``config`` on X in one pass.

    X is clipped to the public bounds first (with a :class:`ClippingWarning` giving the
    count). Each replica's ledger total equals ``config.epsilon``; the returned ledger is
    that of one replica.

    ``initial_centroids`` (R, k, d) replaces the configuration's initializer: replica r
    starts from row r. They must not depend on the data (e.g. sphere-packing draws shared by
    several replicas, as in seed 000's "20 initial-centroid sets x 50 runs"); the run cannot
    check that, so it is the caller's promise. They must lie in the bounds.
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
    unit = standard_noise(config.noise, rngs, (T, k, d + 1))

    budget = (config.epsilon, config.delta * T) if config.delta else config.epsilon
    ledger = PrivacyLedger(budget=None if config.flaws else budget, neighbour=config.neighbour)
    for flaw in config.flaws:
        if flaw == "swapped-split":
            ledger.post_process(f"as published, {FLAWS[flaw]}: the total below is the true spend")
        else:
            ledger.leak(FLAWS[flaw])
    centroids, history = initial, []
    noisy = np.zeros((R, k, d + 1))
    for t, eps_t in enumerate(config.schedule):
        sums, counts = batched_stats(X, centroids, scores=config.scores)
        stats = np.concatenate([sums, counts[..., None]], axis=2)
        with ledger.sequential(f"iteration {t + 1}"):
            noisy = _noisy_iteration(stats, unit[:, t], config, float(eps_t), ledger, R)
            ledger.post_process(f"c_j = S'_j / n'_j if n'_j >= {config.count_floor:g}, "
                                "else keep c_j; clip to the bounds")
        centroids = _update(noisy, centroids, config)
        if record_history:
            history.append(centroids)
    released = centroids
    if config.release is not None:
        released = config.release(centroids, noisy[..., -1])
        ledger.post_process(f"final release: {getattr(config.release, '__name__', 'custom')}")
    if not config.flaws and not ledger.is_fully_spent():
        raise RuntimeError(f"ledger total {ledger.total()} differs from the budget {ledger.budget}")
    return DPLloydResult(released, initial, noisy[..., -1], ledger, config, n_clipped, history)
