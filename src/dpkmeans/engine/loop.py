"""The one DP-Lloyd loop that every algorithm in the book configures (book chapter 5).

    init -> for t in schedule: stats = backend.stats(X, centroids)      # exact
                               noisy = release(stats, budget_t, ledger)  # the only noise
                               centroids = update(noisy)                 # post-processing
         -> final release (e.g. merge n*k -> k)                          # post-processing
         -> output release (e.g. Ravi et al.'s one-shot colored noise)   # a hook, charged

The loop holds the replicas' generators but draws no noise itself: every release is charged and
drawn in one call of :mod:`dpkmeans.privacy.mechanisms` (``release_plan`` for an iteration,
``release_choices`` for the categorical modes), and hooks get a releaser bound to the ledger
(:class:`~dpkmeans.engine.hooks.HookContext`).

A configuration names the initializer, the budget schedule, the per-cluster allocation, the
count/sum split, the noise, the neighbour relation and the final release. R replicas run in
one pass; replica r draws its initial centroids and all of its noise from the r-th child of
one ``SeedSequence``, so its numbers do not depend on how many replicas run beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS, PrivacyLedger
from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.engine.init import Initializer, sphere_packing
from dpkmeans.compute.backends import Backend, get_backend
from dpkmeans.compute.lloyd import SCORE_PRECISIONS
from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.mechanisms import Charges, Entry, Parallel, entry
from dpkmeans.privacy.noise import (NOISE_KINDS, NoiseCalibration, NoisePlan, calibrate,
                                    check_sampler, min_epsilon, round_up)
from dpkmeans.engine.schedules import SU_RHO, su_split
from dpkmeans.privacy.sensitivity import (box_midpoint, check_box, coordinate_bounds,
                                          lloyd_query_sensitivity, sum_sensitivity)
from dpkmeans.engine.prototypes import CategoricalModes, mode_scores
from dpkmeans.engine.flaws import Flaw, check_flaws, open_run_ledger
from dpkmeans.engine.hooks import AllocationRule, HookContext, InitialRelease, OutputRelease
from dpkmeans.engine.standalone import StandaloneConfig, run_standalone
from dpkmeans.engine.checks import warn_clipped
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_real

__all__ = [
    "DPLloydConfig",
    "DPLloydResult",
    "Release",
    "iteration_releases",
    "iteration_floor",
    "check_iterations",
    "meaningful_iterations",
    "check_meaningful_iterations",
    "plan_ledger",
    "run",
    "run_prepared",
    "SPLITS",
    "ENGINE_NOISE",
]

#: How one iteration's budget is spent on a cluster's (sum, count):
#: "joint" = one Laplace release of the (d + 1)-vector (DPLloyd; DP-KCCM, Ni et al. 2021),
#: "su" = the count and each sum dimension separately, count : dimension = cbrt(4 d rho^2) : 1
#: (DPLloyd-Impr, Su et al. 2016).
SPLITS = ("joint", "su")

#: The noise of an iteration's (S_j, n_j): the samplers' kinds, and "colored": Gaussian noise
#: with the optimal covariance for the centred query over the public box (book chapter 9,
#: :func:`dpkmeans.privacy.colored.box_covariance`), released as white noise on the whitened vector
#: (S_j - n_j m) / sqrt(r), n_j (r the half-widths), then scaled back.
ENGINE_NOISE = NOISE_KINDS + ("colored",)

#: A final release maps (centroids (R, k, d), noisy counts (R, k)) to the published centroids.
FinalRelease = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class DPLloydConfig:
    """A DP-Lloyd configuration. Every field is public: nothing here may depend on the data.

    ``schedule`` holds the per-iteration budgets (their sum is the run's epsilon); with
    Gaussian noise ``delta`` is spent per iteration, so a run is (epsilon, T delta)-DP;
    ``allocation`` optionally scales each cluster's share of an iteration's budget (values in
    (0, 1] with largest share 1, equal by default; add/remove adjacency only); ``count_floor``
    is the post-processing rule for small noisy counts: a cluster whose noisy count is below it
    keeps its previous centroid.

    ``noise`` is ``"laplace"``, ``"gaussian"`` or ``"colored"`` (Gaussian with the box optimum's
    covariance, book chapter 9); ``output_release`` is a hook that publishes the final
    centroids with its own noise (Ravi et al.'s one-shot release, :mod:`dpkmeans.engine.hooks`).

    ``centred`` (default) releases each cluster's sum measured from the box's midpoint and adds
    the midpoint back (book chapter 5): the sensitivity uses the half-widths of the box instead
    of the largest |coordinate|. ``centred=False`` is the papers' Delta = d r + 1. ``sampler``
    is ``"discrete"`` (exact noise on a public grid, the default) or ``"continuous"`` (numpy
    float64, as the papers; recorded as a leak) (:mod:`dpkmeans.privacy.noise`). A schedule
    that gives an iteration less than :func:`iteration_floor` (what the exact sampler can
    spend) is refused with :class:`~dpkmeans.errors.BudgetTooSmallError`, naming the smallest
    total epsilon of the schedule's shape.
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
    release: FinalRelease | None = None
    name: str = "dp-lloyd"
    flaws: tuple[Flaw, ...] = ()
    scores: str = "double"
    centred: bool = True
    sampler: str = "discrete"
    budget: float | None = None
    initial_release: InitialRelease | None = None
    allocation_rule: AllocationRule | None = None
    stop_threshold: float | None = None
    output_release: OutputRelease | None = None
    categorical: CategoricalModes | None = None

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
        if self.noise not in ENGINE_NOISE:
            raise ValueError(f"noise must be one of {ENGINE_NOISE}, got {self.noise!r}")
        if self.noise in ("gaussian", "colored"):
            check_delta(self.delta)
            if self.split != "joint":
                raise ValueError("the 'su' split is defined for Laplace noise only")
            if self.noise == "colored" and not (self.centred and self.neighbour == "add/remove"):
                raise ValueError("noise='colored' needs centred=True and add/remove adjacency: "
                                 "the box optimum is diagonal for the centred query of one "
                                 "cluster (book chapter 9)")
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
        object.__setattr__(self, "flaws", check_flaws(self.flaws, self.neighbour))
        self._check_categorical()
        if "swapped-split" in self.effects and self.split != "su":
            raise ValueError("the 'swapped-split' flaw needs split='su'")
        if self.scores not in SCORE_PRECISIONS:
            raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, got {self.scores!r}")
        if self.budget is not None:
            total = check_epsilon(self.budget, "budget")
            if not self.flaws and self.schedule.sum() > total * (1 + 1e-9):
                raise ValueError(f"the schedule spends {self.schedule.sum():g}, more than the "
                                 f"budget {total:g}")
        if self.allocation_rule is not None:
            if self.split != "joint" or self.allocation is not None:
                raise ValueError("an allocation_rule needs split='joint' and no allocation")
            if self.neighbour != "add/remove":
                raise ValueError("an allocation_rule needs add/remove adjacency (parallel "
                                 "composition over clusters)")
        if "shared-noise" in self.effects and self.split != "joint":
            raise ValueError("the 'shared-noise' flaw needs split='joint'")
        if self.stop_threshold is not None:
            thr = check_real(self.stop_threshold, "stop_threshold")
            if not (np.isfinite(thr) and thr >= 0):
                raise ValueError(f"stop_threshold must be finite and >= 0, got {thr}")
        _check_floor(self)

    def _check_categorical(self) -> None:
        """k-prototypes (:mod:`dpkmeans.engine.prototypes`): the box is the layout's augmented box,
        one categorical budget per iteration, joint Laplace noise on the numeric part."""
        cat = self.categorical
        full_flaw = "categorical-full-budget" in self.effects
        if cat is None:
            if full_flaw:
                raise ValueError("the 'categorical-full-budget' flaw needs categorical modes")
            return
        if self.bounds[0].size != cat.layout.width:
            raise ValueError(f"bounds have {self.bounds[0].size} columns, the mixed layout "
                             f"{cat.layout.width} (one-hot blocks, then numeric)")
        if cat.schedule.size != self.schedule.size:
            raise ValueError("the categorical schedule needs one budget per iteration")
        if self.split != "joint" or self.noise != "laplace" or self.allocation is not None \
                or self.allocation_rule is not None or self.output_release is not None \
                or "exact-iterations" in self.effects:
            raise ValueError("categorical modes need split='joint', Laplace noise and no "
                             "allocation, allocation rule, output release or exact iterations")
        if (cat.per_attribute == "full") != full_flaw:
            raise ValueError("per_attribute='full' is the 'categorical-full-budget' flaw: "
                             "declare it in flaws (and only then)")

    @property
    def effects(self) -> frozenset[str]:
        """The steps of the loop the configuration's flaws change
        (:data:`dpkmeans.engine.flaws.LOOP_EFFECTS`); empty for a private configuration."""
        return frozenset().union(*(flaw.effects for flaw in self.flaws))

    @property
    def numeric_offset(self) -> int:
        """The first numeric column: 0, or after the one-hot blocks of a mixed layout."""
        return 0 if self.categorical is None else self.categorical.layout.n_onehot

    @property
    def numeric_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The box of the numeric columns (the ones the Laplace releases cover)."""
        c = self.numeric_offset
        return self.bounds[0][c:], self.bounds[1][c:]

    @property
    def epsilon(self) -> float:
        """The declared total budget: ``budget`` if given (a schedule that stops early or a hook
        with its own releases may spend less), else the schedule's sum (sequential composition
        over iterations, parallel over clusters), plus the categorical schedule's."""
        if self.budget is not None:
            return float(self.budget)
        extra = 0.0 if self.categorical is None else float(self.categorical.schedule.sum())
        return float(self.schedule.sum()) + extra

    @property
    def iterations(self) -> int:
        return int(self.schedule.size)

    @property
    def sampler_noise(self) -> str:
        """The sampler's kind: colored noise is Gaussian on the whitened vector."""
        return "gaussian" if self.noise == "colored" else self.noise

    def whitening(self) -> np.ndarray:
        """Per coordinate of (S_j - n_j m, n_j), the factor 1 / sqrt(r_i) (r the half-widths,
        1 for the count) that makes colored noise white (ones for the other noises)."""
        d = self.bounds[0].size
        if self.noise != "colored":
            return np.ones(d + 1)
        return 1.0 / np.sqrt(np.append(coordinate_bounds(self.bounds, True), 1.0))


@dataclass(frozen=True)
class DPLloydResult:
    """What a run returns. ``centroids`` is the release; the rest is for analysis."""

    centroids: np.ndarray  # (R, k', d): the published centroids of each replica
    initial_centroids: np.ndarray  # (R, k, d)
    noisy_counts: np.ndarray  # (R, k) after the last iteration
    ledger: PrivacyLedger  # one replica's accounting; with data-dependent weights or early
    # stopping the replicas differ, and each entry records the most expensive replica
    config: DPLloydConfig
    n_clipped: int
    history: list[np.ndarray] = field(default_factory=list)  # centroids after each iteration
    iterations_run: np.ndarray | None = None  # (R,): iterations each replica ran
    spent: np.ndarray | None = None  # (R,): each replica's composed epsilon (its true spend)
    # (R, T) with ``record_history``: the exact SSE of the centroids entering each iteration
    # (column 0: the initial ones), from the statistics the iteration computes anyway. An
    # evaluation aid, never released: it reads the private data without noise.
    sse_history: np.ndarray | None = None
    # with ``record_history``: per iteration, the released noisy statistics (R, k, d + 1) (the
    # centred (S'_j, n'_j) of every cluster) and the scale of the noise each element got, (k, d +
    # 1) or (R, k, d + 1) (whitened units for colored noise; 0: not noised). Both are public (the
    # release and its calibration): an auditor recomputes the exact statistics of a neighbouring
    # pair and scores the whole transcript (:mod:`dpkmeans.study.transcript`).
    release_history: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


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
    d, c = lower.size, config.numeric_offset
    per_dim = coordinate_bounds(config.bounds, config.centred)
    if config.split == "joint":
        if config.noise == "colored":  # the whitened vector: |(x_i - m_i) / sqrt(r_i)|^2 <= r_i
            return [("(S_j, n_j) whitened: colored noise, covariance prop. to diag(r, 1)",
                     slice(0, d + 1), float(np.sqrt(np.sum(per_dim) + 1.0)), eps_t)]
        if config.noise == "gaussian":
            l2 = float(np.sqrt(np.sum(per_dim**2) + 1.0))
            if config.neighbour == "replace":
                l2 = max(float(np.linalg.norm(upper - lower)), np.sqrt(2.0) * l2)
            return [("(S_j, n_j)", slice(0, d + 1), l2, eps_t)]
        box = config.numeric_bounds
        if "exact-counts" in config.effects:  # only the sums are noised; the count stays exact
            sens_sums = sum_sensitivity(box, config.neighbour, centred=config.centred)
            claimed = sum_sensitivity(box, "add/remove", centred=config.centred)
            return [("S_j", slice(c, d), sens_sums, _stated_cost(config, eps_t, sens_sums,
                                                                  claimed))]
        sens = lloyd_query_sensitivity(box, config.neighbour, centred=config.centred)
        delta1 = sens.joint if config.neighbour == "replace" else sens.per_cluster
        return [("(S_j, n_j)", slice(c, d + 1), delta1,
                 _stated_cost(config, eps_t, delta1, sens.per_cluster))]
    eps_count, eps_dim = su_split(eps_t, d, config.rho)
    if "swapped-split" in config.effects:
        eps_count, eps_dim = eps_dim, eps_count
    factor = 2.0 if config.neighbour == "replace" else 1.0
    out = [] if "exact-counts" in config.effects else [("n_j", slice(d, d + 1), factor, eps_count)]
    out += [(f"S_j[{i}]", slice(i, i + 1), factor * float(per_dim[i]), eps_dim) for i in range(d)]
    return out


def _stated_cost(config: DPLloydConfig, eps_t: float, true_sens: float, claimed: float) -> float:
    """The epsilon a release really spends: eps_t, or, with the "replace-sensitivity-d" flaw
    (noise calibrated to the one-cluster sensitivity ``claimed`` under replace), the cost of
    that noise at the true sensitivity, eps_t * true / claimed."""
    if "replace-sensitivity-d" in config.effects:
        return eps_t * true_sens / claimed
    return eps_t


def iteration_releases(config: DPLloydConfig, eps_t: float) -> list[Release]:
    """Every release of one iteration, calibrated (public: it reads the configuration only).

    Under add/remove adjacency cluster j's releases use the budget eps_t * allocation[j].
    The grid's rounding slack (:mod:`dpkmeans.privacy.noise`, book chapter 6) counts the elements one
    record can change: a release's columns in one cluster under add/remove, in two under
    replace (the record leaves one cluster and joins another), so 2 (d + 1) for the joint
    (S_j, n_j). Calibrations are computed once per distinct (sensitivity, epsilon, elements).
    """
    cache: dict[tuple[float, float, int], NoiseCalibration] = {}
    touched = _touched(config)

    def cal(sens: float, eps: float, elements: int) -> NoiseCalibration:
        key = (sens, eps, elements)
        if key not in cache:
            cache[key] = calibrate(config.sampler_noise, sens, eps, config.delta,
                                   sampler=config.sampler,
                                   coordinates=elements)
        return cache[key]

    planned: dict[float, list[tuple[str, slice, NoiseCalibration]]] = {}

    def specs(cluster: int | None, budget: float) -> list[Release]:
        if budget not in planned:  # the same for every cluster of one budget
            planned[budget] = [(label, cols, cal(sens, eps, touched * (cols.stop - cols.start)))
                               for label, cols, sens, eps in _release_specs(config, budget)]
        return [Release(label, cluster, cols, c) for label, cols, c in planned[budget]]

    if config.neighbour == "replace":
        return specs(None, eps_t)
    shares = np.ones(config.n_clusters) if config.allocation is None else config.allocation
    return [r for j in range(config.n_clusters) for r in specs(j, eps_t * float(shares[j]))]


def _touched(config: DPLloydConfig) -> int:
    """The clusters one record can change in an iteration: one under add/remove, two under
    replace (it leaves one cluster and joins another)."""
    return 1 if config.neighbour != "replace" else min(2, config.n_clusters)


def _least_allocation(config: DPLloydConfig) -> float:
    """The smallest share of an iteration's budget a cluster gets (1 without an allocation)."""
    return 1.0 if config.allocation is None else float(config.allocation.min())


#: Head room of :func:`iteration_floor` over the exact limit: a release's share of eps_t is
#: computed in float64 (Su's split, say), so at eps_t = floor it may round a hair below.
_FLOOR_MARGIN = 1e-9


def iteration_floor(config: DPLloydConfig) -> float:
    """The smallest budget one iteration of ``config`` may get: below it, some release of the
    iteration would need a noise scale the exact sampler cannot draw
    (:func:`dpkmeans.privacy.noise.min_epsilon`).

    Public: it reads the configuration only (the schedule aside), so it is known before any
    data. An allocation rule's weights depend on released values and are not foreseen; their
    releases are checked when they are calibrated.

    Parameters
    ----------
    config : DPLloydConfig
        The configuration.

    Returns
    -------
    float
        The floor on eps_t; 0.0 when there is none (Gaussian or colored noise, the continuous
        sampler, no noised iteration).

    Examples
    --------
    >>> from dpkmeans.engine.loop import DPLloydConfig, iteration_floor
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> f"{iteration_floor(config):.3g}"  # (S_j, n_j): sensitivity 2, three coordinates
    '1.49e-08'
    """
    if "exact-iterations" in config.effects:
        return 0.0
    share = _least_allocation(config)
    floor = 0.0
    for _, columns, sensitivity, epsilon in _release_specs(config, 1.0):
        need = min_epsilon(config.sampler_noise, sensitivity, sampler=config.sampler,
                           coordinates=_touched(config) * (columns.stop - columns.start))
        floor = max(floor, need / (epsilon * share))
    return floor * (1.0 + _FLOOR_MARGIN)


def _check_floor(config: DPLloydConfig) -> None:
    """Refuse a schedule with an iteration below :func:`iteration_floor` (BudgetTooSmallError
    naming the smallest total epsilon the schedule's shape supports)."""
    floor = iteration_floor(config)
    worst = int(np.argmin(config.schedule))
    eps_t = float(config.schedule[worst])
    if eps_t >= floor:
        return
    minimum = round_up(config.epsilon * floor / eps_t)
    raise BudgetTooSmallError(
        f"{config.name}: iteration {worst + 1} gets epsilon {eps_t:.3g}, below "
        f"{round_up(floor):g}, the smallest one iteration supports with the exact sampler; "
        f"give epsilon >= {minimum:g} in total, or fewer iterations", minimum)


def check_iterations(config: DPLloydConfig, iterations: int, epsilon: float | None = None, *,
                     name: str = "iterations") -> None:
    """Refuse splitting ``epsilon`` equally over ``iterations`` when a share would fall below
    the :func:`iteration_floor` of ``config``; checked before a uniform schedule of that length
    is built (at 10^9 iterations it would not fit in memory).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration (a one-iteration build of it will do: the floor does not depend on
        the schedule).
    iterations : int
        The number of equal shares asked for.
    epsilon : float or None, default None
        The budget to split (``config.epsilon`` when None).
    name : str, default "iterations"
        The caller's name for it, in the message.

    Raises
    ------
    dpkmeans.errors.BudgetTooSmallError
        If a share would be below the floor; the message gives the most iterations this
        epsilon allows (its ``minimum``: the epsilon ``iterations`` shares need).

    Examples
    --------
    >>> from dpkmeans.engine.loop import DPLloydConfig, check_iterations
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1e-6])
    >>> check_iterations(config, 10**4, name="max_iter")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpkmeans.errors.BudgetTooSmallError: max_iter = 10000 gives each iteration epsilon 1e-10, ...
    """
    floor = iteration_floor(config)
    if floor == 0.0:
        return
    eps = config.epsilon if epsilon is None else check_epsilon(epsilon)
    limit = int(eps / floor)
    while limit > 0 and eps / limit < floor:
        limit -= 1
    if iterations <= limit:
        return
    if limit == 0:
        raise BudgetTooSmallError(
            f"epsilon = {eps:g} is too small for one iteration with the exact sampler: "
            f"{iterations} iterations need epsilon >= {round_up(iterations * floor):g}; raise "
            f"epsilon",
            round_up(iterations * floor))
    raise BudgetTooSmallError(
        f"{name} = {iterations} gives each iteration epsilon {eps / iterations:.3g}, below "
        f"{round_up(floor):g}, the smallest the exact sampler supports: at most {limit} "
        f"iterations at epsilon {eps:g}; lower {name} or raise epsilon",
        round_up(iterations * floor))


def meaningful_iterations(config: DPLloydConfig, epsilon: float, n_records: int) -> int:
    """The most equal iterations ``epsilon`` can pay for on ``n_records`` records while every
    release of an iteration still gets epsilon >= 1 / N.

    Below that, a release's noise scale (its sensitivity over its epsilon, the Gaussian's
    larger) exceeds N times its sensitivity: more than all N records together can put into any
    coordinate of it. Every released centre is then noise, wherever the records fall, so such
    a run cannot mean anything, however long it runs.

    Parameters
    ----------
    config : DPLloydConfig
        The configuration (a one-iteration build of it will do: the shares of an iteration's
        budget do not depend on the schedule).
    epsilon : float
        The budget to split equally over the iterations.
    n_records : int
        N: a public count, or the records given (then the result is the data holder's, like
        the records themselves, and must not be quoted in a release or a message).

    Returns
    -------
    int
        floor(epsilon x s x N), s the smallest share of an iteration's budget that one of its
        releases gets (0: not even one iteration).

    Examples
    --------
    >>> from dpkmeans.engine.loop import DPLloydConfig, meaningful_iterations
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1.0])  # one joint release
    >>> meaningful_iterations(config, 1.0, 237)
    237
    """
    if "exact-iterations" in config.effects:
        return 2**62  # no iteration is noised
    return math.floor(Fraction(epsilon) * Fraction(_smallest_share(config)) * n_records)


def _smallest_share(config: DPLloydConfig) -> float:
    """The smallest share of an iteration's budget that one of its releases gets."""
    return min(eps for *_, eps in _release_specs(config, 1.0)) * _least_allocation(config)


def check_meaningful_iterations(config: DPLloydConfig, iterations: int, epsilon: float,
                                n_records: int, *, name: str = "iterations") -> None:
    """Refuse more equal iterations than :func:`meaningful_iterations` allows on the records
    given: the data holder's error, which quotes the limit as a formula in N, not N.

    Parameters
    ----------
    config : DPLloydConfig
        The configuration (a one-iteration build of it will do).
    iterations : int
        The number of equal shares asked for.
    epsilon : float
        The budget to split.
    n_records : int
        The number of records given (private: not quoted).
    name : str, default "iterations"
        The caller's name for ``iterations``, in the message.

    Raises
    ------
    ValueError
        If an iteration's releases would get less than 1/N each.

    Examples
    --------
    >>> from dpkmeans.engine.loop import DPLloydConfig, check_meaningful_iterations
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1.0])
    >>> check_meaningful_iterations(config, 10**6, 1.0, 237)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: iterations = 1000000 gives each iteration epsilon 1e-06: ...(N the number of records)...
    """
    if iterations <= meaningful_iterations(config, epsilon, n_records):
        return
    share = f"{_smallest_share(config):.3g}"
    raise ValueError(
        f"{name} = {iterations} gives each iteration epsilon {epsilon / iterations:.3g}: with "
        "so little, every release's noise exceeds what all the records of X together "
        f"contribute, and no centre means anything. {name} may be at most {share} x epsilon "
        f"x N (N the number of records): lower {name}, or raise epsilon to {name} / "
        f"({share} x N) or more")


def _charge_iteration(ledger: PrivacyLedger, releases: list[Release], replicas: int) -> None:
    """Record an iteration's releases without drawing them (a plan of the spend,
    :func:`plan_ledger`); a run charges and draws them in one call (:func:`_noisy_iteration`)."""
    mechanisms.charge_all(ledger, _iteration_charges(releases, replicas))


def _iteration_charges(releases: list[Release], replicas: int) -> Charges:
    """An iteration's ledger entries: sequential over releases that cover all clusters
    (replace), in parallel over the disjoint clusters otherwise (add/remove)."""
    details = {"replicas": replicas}
    if releases[0].cluster is None:
        return [entry(r.calibration, label=f"{r.label}, all clusters", details=details)
                for r in releases]
    made: dict[tuple[int, str], Entry] = {}  # one entry per (calibration, label), not per cluster
    by_cluster: dict[int, list[Entry]] = {}  # one pass, not one per cluster (large k)
    for r in releases:
        key = (id(r.calibration), r.label)
        if key not in made:
            made[key] = entry(r.calibration, label=r.label, details=details)
        by_cluster.setdefault(r.cluster, []).append(made[key])
    return Parallel("clusters", [(f"cluster {j}", by_cluster[j]) for j in sorted(by_cluster)])


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
                     rngs: list[np.random.Generator], unit: np.ndarray | None,
                     ledger: PrivacyLedger) -> np.ndarray:
    """Charge an iteration's releases to ``ledger`` and add their noise to every cluster's
    (S_j, n_j), empty clusters included, in one call (:func:`dpkmeans.privacy.mechanisms.release_plan`).

    Discrete sampler: every noised element is rounded to its public grid and gets exact
    integer noise drawn now, per iteration, from each replica's own generator. Continuous:
    ``unit`` holds this iteration's unit draws (drawn up front). Columns that no release
    covers (the counts, under the "exact-counts" flaw) stay exact.
    """
    return _add_noise(stats, *_element_plan(releases, stats.shape[1:]), config, rngs, unit,
                      ledger, _iteration_charges(releases, stats.shape[0]))


def _add_noise(stats: np.ndarray, grid: np.ndarray, steps: np.ndarray, scale: np.ndarray,
               config: DPLloydConfig, rngs: list[np.random.Generator],
               unit: np.ndarray | None, ledger: PrivacyLedger, charges: Charges) -> np.ndarray:
    """:func:`_noisy_iteration` from an element plan (:func:`_element_plan`) and the ledger
    entries that pay for it: grid, steps and scale of shape (k, d + 1), shared by the replicas,
    or (R, k, d + 1), row r for replica r (an allocation rule's). Replica r's noise is the same
    either way, and the same as when r is noised alone (:func:`dpkmeans.privacy.noise.draw_steps`).
    Colored noise is released on the whitened vector and scaled back, and the
    "skip-empty-clusters" flaw restores the exact statistics of empty clusters (both
    post-processing of the release)."""
    shared = "shared-noise" in config.effects
    plan = NoisePlan(config.sampler_noise, config.sampler, grid, steps, scale, shared)
    if shared:  # one draw per cluster, added to every column of its (S_j, n_j)
        return mechanisms.release_plan(ledger, charges, stats, plan, rngs, unit=unit)
    white = config.whitening()
    if config.noise == "colored":
        stats = stats * white  # the whitened vector; scaled back below (post-processing)
    noisy = mechanisms.release_plan(ledger, charges, stats, plan, rngs, unit=unit)
    if config.noise == "colored":
        stats, noisy = stats / white, noisy / white
    if "skip-empty-clusters" in config.effects:
        empty = stats[..., -1] == 0
        noisy[empty] = stats[empty]  # zero count: the update keeps the previous centroid
    return noisy


def _weighted_iteration(stats: np.ndarray, config: DPLloydConfig, eps_t: float,
                        weights: np.ndarray, rngs: list[np.random.Generator],
                        unit: np.ndarray | None, ledger: PrivacyLedger) -> tuple[np.ndarray, np.ndarray]:
    """The releases of an iteration whose cluster j gets epsilon_t w_rj in replica r (an
    :class:`~dpkmeans.engine.hooks.AllocationRule`): charge the most expensive replica's parallel
    cost, then draw each replica's noise at its own scales (all replicas in one call, each
    from its own generator). Returns the noisy statistics and each replica's cost,
    epsilon_t max_j w_rj, and each element's noise scale (R, k, d + 1)."""
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("allocation weights must be finite and > 0")
    (label, cols, sens, _), = _release_specs(config, eps_t)
    cost = eps_t * weights.max(axis=1)
    cals = [[calibrate(config.sampler_noise, sens, eps_t * w, config.delta,
                       sampler=config.sampler,
                       coordinates=cols.stop - cols.start) for w in row] for row in weights]
    top = cals[int(np.argmax(cost))][int(np.argmax(weights[int(np.argmax(cost))]))]
    paid = entry(replace(top, epsilon=float(cost.max())),
                 label=f"{label}, every cluster in parallel at epsilon_t w_j",
                 details={"replicas": len(rngs),
                          "weights": f"{weights.min():.4g} to {weights.max():.4g}",
                          "cost per replica": f"mean {cost.mean():.4g}, max {cost.max():.4g}"})
    plans = [_element_plan([Release(label, j, cols, cal) for j, cal in enumerate(row)],
                           stats.shape[1:]) for row in cals]
    grid, steps, scale = (np.stack(a) for a in zip(*plans))  # (R, k, d + 1) each
    return _add_noise(stats, grid, steps, scale, config, rngs, unit, ledger, [paid]), cost, scale


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


def run(
    X: ArrayLike,
    config: DPLloydConfig | StandaloneConfig,
    seed: int | np.random.SeedSequence,
    *,
    replicas: int = 1,
    initial_centroids: ArrayLike | None = None,
    record_history: bool = False,
    ledger: PrivacyLedger | None = None,
    backend: str | Backend | None = None,
    client: Any = None,
) -> DPLloydResult:
    """Run ``replicas`` independent DP-Lloyd runs of ``config`` on X in one pass.

    X is clipped to the public bounds first (with a :class:`~dpkmeans.errors.ClippingWarning`
    that says only that clipping happened; ``result.n_clipped`` is the count, for the data
    holder only). Each replica's ledger total equals ``config.epsilon``; the returned ledger
    is that of one replica.

    ``initial_centroids`` (R, k, d) replaces the configuration's initializer: replica r
    starts from row r. They must not depend on the data (e.g. sphere-packing draws shared by
    several replicas, as in Ni et al.'s "20 initial-centroid sets x 50 runs"); the run cannot
    check that, so it is the caller's promise. They must lie in the bounds.

    ``ledger`` continues an existing ledger (same neighbour relation) whose declared budget
    covers what was spent before the run plus ``config.epsilon`` -- e.g. a noisy record count
    released first (:func:`dpkmeans.papers.su.variants.noisy_record_count`). At the end its total must
    equal its budget. By default the run opens a ledger whose budget is ``config.epsilon``.

    ``backend`` says where the statistics are computed (:mod:`dpkmeans.compute.backends`): ``"memory"``
    (default), ``"dask"`` (with an optional ``dask.distributed.Client`` in ``client``; without
    one a ``LocalCluster`` is started and closed) or a backend instance, left open. Every
    backend gives the same bits; the noise is always drawn here.

    ``config`` may also be a :class:`~dpkmeans.engine.standalone.StandaloneConfig`, an
    algorithm that is not a configuration of the loop and runs itself through the same privacy
    machinery (:func:`~dpkmeans.engine.standalone.run_standalone`).

    ``record_history`` keeps the centroids after every iteration (``result.history``) and the
    exact SSE of the centroids entering every iteration (``result.sse_history``): evaluation
    aids computed from the private data, not releases. It also keeps every iteration's noisy
    statistics with their noise scales (``result.release_history``): the release itself, which
    the transcript audit scores (book chapter 6, "Auditing an algorithm").
    """
    R = check_positive_int(replicas, "replicas")
    if isinstance(config, StandaloneConfig) and (initial_centroids is not None
                                                 or record_history):
        raise ValueError(f"{config.name} is not a DP-Lloyd configuration: it takes neither "
                         "initial_centroids nor record_history")
    engine = get_backend(backend, client=client)
    try:
        if isinstance(config, StandaloneConfig):
            own = run_standalone(engine, X, config, seed, R, ledger)
            return DPLloydResult(own.centroids, own.initial, own.noisy_counts, own.ledger,
                                 config, own.n_clipped, [], own.iterations, own.spent)
        return _run(engine, X, config, seed, R, initial_centroids, record_history, ledger)
    finally:
        if not isinstance(backend, Backend):
            engine.close()


def _run(engine: Backend, X: Any, config: DPLloydConfig, seed: int | np.random.SeedSequence,
         R: int, initial_centroids: ArrayLike | None, record_history: bool,
         ledger: PrivacyLedger | None) -> DPLloydResult:
    """:func:`run` on a backend."""
    data, n_rows, n_clipped = engine.prepare(X, config.bounds)
    warn_clipped(n_clipped)
    return run_prepared(engine, data, n_rows, config, seed, replicas=R,
                        initial_centroids=initial_centroids, record_history=record_history,
                        ledger=ledger, n_clipped=n_clipped)


def run_prepared(engine: Backend, data: Any, n_rows: int, config: DPLloydConfig,
                 seed: int | np.random.SeedSequence, *, replicas: int = 1,
                 initial_centroids: ArrayLike | None = None, record_history: bool = False,
                 ledger: PrivacyLedger | None = None, n_clipped: int = 0) -> DPLloydResult:
    """:func:`run` on data a backend already holds (``engine.prepare``: clipped to the
    public bounds), for a run nested in another algorithm, e.g. the Lloyd refinement that
    follows a standalone algorithm's first centroids
    (:class:`~dpkmeans.engine.standalone.StandaloneConfig`) on the same ledger."""
    R = check_positive_int(replicas, "replicas")
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = [np.random.default_rng(child) for child in seq.spawn(R)]
    k, d, T = config.n_clusters, config.bounds[0].size, config.iterations
    ledger = _open_ledger(config, ledger)
    if initial_centroids is not None:
        initial = _given_initial(initial_centroids, config, R, d)
    elif config.initial_release is not None:
        with ledger.sequential("initialisation"):
            initial = config.initial_release(HookContext(engine, data, n_rows, config, None,
                                                         rngs, ledger))
        initial = _given_initial(initial, config, R, d)
    else:
        initial = np.stack([config.initializer(config.bounds, k, g) for g in rngs])
    unit = (mechanisms.unit_noise(config.sampler_noise, rngs, (T, k, d + 1))
            if config.sampler == "continuous" else None)
    centre = box_midpoint(config.bounds) if config.centred else np.zeros(d)
    centre[:config.numeric_offset] = 0.0  # one-hot blocks are never centred
    spent = np.full(R, ledger.total().epsilon)
    iterations_run = np.zeros(R, dtype=int)
    active = np.ones(R, dtype=bool)
    centroids, history, releases_made = initial.copy(), [], []
    noisy = np.zeros((R, k, d + 1))
    sse = np.full((R, T), np.nan) if record_history else None
    square_sum = (float(engine.map_reduce(data, _square_sum)[0][0]) if record_history else 0.0)
    last_stats = np.zeros((R, k, d + 1)) if "partition-stop" in config.effects else None
    for t, eps_t in enumerate(config.schedule):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        previous = centroids[idx]
        sums, counts = engine.stats(data, previous, scores=config.scores)
        if sse is not None:
            sse[idx, t] = square_sum + np.einsum("rk,rk->r", counts, (previous**2).sum(axis=2)) \
                - 2.0 * np.einsum("rkd,rkd->r", sums, previous)
        if "partition-stop" in config.effects:  # recorded as a leak by _open_ledger
            same = _same_partition(sums, counts, last_stats[idx]) if t else np.zeros(idx.size, bool)
            last_stats[idx, ..., :-1], last_stats[idx, ..., -1] = sums, counts
            if same.any():
                active[idx[same]] = False
                idx, previous, sums, counts = (idx[~same], previous[~same], sums[~same],
                                               counts[~same])
                if idx.size == 0:
                    break
        sub_rngs = [rngs[i] for i in idx] if idx.size < R else rngs
        sub_unit = None if unit is None else unit[idx, t]
        category_counts = (None if config.categorical is None
                           else mode_scores(sums, config.categorical.layout))
        if config.centred:
            sums -= counts[..., None] * centre  # S_j - n_j m: the centred query
        stats = np.concatenate([sums, counts[..., None]], axis=2)
        before = ledger.total().epsilon
        with ledger.sequential(f"iteration {t + 1}"):
            if "exact-iterations" in config.effects:  # recorded as a leak by _open_ledger
                step = stats.copy()
            elif config.allocation_rule is None:
                releases = iteration_releases(config, float(eps_t))
                step = _noisy_iteration(stats, releases, config, sub_rngs, sub_unit, ledger)
                scale = _element_plan(releases, stats.shape[1:])[2] if record_history else None
                if category_counts is not None:
                    modes = config.categorical.release(
                        ledger, category_counts, float(config.categorical.schedule[t]),
                        sub_rngs, **_mode_options(config))
                spent[idx] += ledger.total().epsilon - before
            else:
                ctx = HookContext(engine, data, n_rows, config, previous, sub_rngs, ledger,
                                  t + 1, float(eps_t))
                weights = config.allocation_rule.weights(ctx)
                own = ledger.total().epsilon - before  # the rule's own releases
                step, cost, scale = _weighted_iteration(stats, config, float(eps_t), weights,
                                                        sub_rngs, sub_unit, ledger)
                spent[idx] += own + cost
            ledger.post_process(f"c_j = S'_j / n'_j{' + m' if config.centred else ''} if "
                                f"n'_j >= {config.count_floor:g}, else keep c_j; clip to the box")
        noisy[idx] = step
        updated = _update(step, previous, config, centre)
        if category_counts is not None:
            updated[..., :config.numeric_offset] = modes
        centroids[idx] = updated
        iterations_run[idx] += 1
        if config.stop_threshold is not None:
            shift = np.linalg.norm(updated - previous, axis=2).max(axis=1)
            active[idx[shift < config.stop_threshold]] = False
        if record_history:
            history.append(centroids.copy())
            if "exact-iterations" not in config.effects:
                full = np.zeros((R, k, d + 1))
                full[idx] = scale  # a stopped replica's elements: scale 0, nothing released
                releases_made.append((noisy.copy(), full))
    if "partition-stop" in config.effects and not active.all():
        ledger.post_process(f"stopped where the partition repeated (a leak, recorded above); "
                            f"iterations run: {iterations_run.min()} to {iterations_run.max()}")
    if sse is not None:  # a stopped replica keeps its centroids, so its SSE stays
        for t in range(1, T):
            sse[:, t] = np.where(np.isnan(sse[:, t]), sse[:, t - 1], sse[:, t])
    if config.stop_threshold is not None and not active.all():
        ledger.post_process(f"stop a replica once no centroid moves by {config.stop_threshold:g} "
                            f"or more (its released centroids); iterations run: "
                            f"{iterations_run.min()} to {iterations_run.max()}")
    released = centroids
    if config.release is not None:
        released = config.release(centroids, noisy[..., -1])
        ledger.post_process(f"final release: {getattr(config.release, '__name__', 'custom')}")
    if config.output_release is not None:
        before = ledger.total().epsilon
        with ledger.sequential("output release"):
            released = config.output_release(HookContext(engine, data, n_rows, config, released,
                                                         rngs, ledger, T + 1))
        spent += ledger.total().epsilon - before
    if not config.flaws and ledger.budget is not None:
        if config.budget is None and not ledger.is_fully_spent():
            raise RuntimeError(f"ledger total {ledger.total()} differs from the budget {ledger.budget}")
        if not ledger.total().fits_within(ledger.budget):  # pragma: no cover - the ledger refuses
            raise RuntimeError(f"ledger total {ledger.total()} exceeds the budget {ledger.budget}")
    return DPLloydResult(released, initial, noisy[..., -1], ledger, config, n_clipped, history,
                         iterations_run, spent, sse, releases_made)


def _square_sum(block: np.ndarray) -> tuple[np.ndarray]:
    """sum ||x||^2 over a block (the constant of the SSE identity in :func:`run`)."""
    return (np.array([np.einsum("nd,nd->", block, block)]),)


def _same_partition(sums: np.ndarray, counts: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per replica: whether the exact statistics equal the last iteration's ("partition-stop").
    An unchanged partition gives equal statistics; a changed one gives equal statistics only if
    the records moved in and out of every cluster have exactly equal counts and sums (possible
    on grid-valued data, and then the run stops one iteration early)."""
    return (np.all(counts == last[..., -1], axis=1)
            & np.all(sums == last[..., :-1], axis=(1, 2)))


def plan_ledger(config: DPLloydConfig, replicas: int = 1) -> PrivacyLedger:
    """The ledger a run of ``config`` records, without running it: every charge depends on the
    configuration only (public), so the privacy of a configuration is computed before, and
    without, any data. Used for the rows of contenders the engine does not run itself. Not for
    configurations with data-dependent hooks (an initial release or an allocation rule)."""
    if (config.initial_release is not None or config.allocation_rule is not None
            or config.output_release is not None):
        raise ValueError("a configuration with an initial release, an allocation rule or an "
                         "output release spends what its data decide: run it and read "
                         "result.spent")
    ledger = _open_ledger(config, None)
    for t, eps_t in enumerate(config.schedule):
        with ledger.sequential(f"iteration {t + 1}"):
            _charge_iteration(ledger, iteration_releases(config, float(eps_t)), replicas)
            if config.categorical is not None:
                _charge_modes(ledger, config, t, replicas)
    return ledger


def _charge_modes(ledger: PrivacyLedger, config: DPLloydConfig, t: int, replicas: int) -> float:
    """Record iteration t's categorical mode selections without drawing them (a plan of the
    spend); the epsilon of each cluster's draw."""
    return config.categorical.charge(ledger, float(config.categorical.schedule[t]), replicas,
                                     **_mode_options(config))


def _mode_options(config: DPLloydConfig) -> dict[str, Any]:
    """How the categorical modes are paid for: one record changes the counts of two clusters
    under replace, one under add/remove; the "replace-sensitivity-d" flaw understates it."""
    return {"clusters_touched": 2 if config.neighbour == "replace" else 1,
            "understated": "replace-sensitivity-d" in config.effects}


def _open_ledger(config: DPLloydConfig, ledger: PrivacyLedger | None) -> PrivacyLedger:
    """The run's ledger (a new one, or the caller's), with the configuration's flaws recorded."""
    budget = (config.epsilon, config.delta * config.iterations) if config.delta else config.epsilon
    return open_run_ledger(ledger, budget, config.neighbour, config.flaws)
