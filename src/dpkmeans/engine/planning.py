"""Release planning of the DP-Lloyd loop: what every iteration releases, at which noise, and
what it costs, computed from the configuration alone (public), before and without any data
(docs/design.md, "One loop, many papers"; book chapters 5 and 6).

The per-iteration release strategy (:class:`~dpkmeans.engine.strategies.IterationRelease`) says
which columns of a cluster's (S_j, n_j) each release covers, its sensitivity and its epsilon;
this module calibrates them (:func:`iteration_releases`), plans the ledger of a whole run
(:func:`plan_ledger`), and gives the smallest budget an iteration supports
(:func:`iteration_floor`) and the most iterations a budget can pay for
(:func:`check_iterations`, :func:`meaningful_iterations`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkmeans.engine.flaws import open_run_ledger
from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.privacy import mechanisms, tight
from dpkmeans.privacy.accounting import TIGHT_RTOL, PrivacyLedger
from dpkmeans.privacy.mechanisms import Charges, Entry, Parallel, entry
from dpkmeans.privacy.noise import NoiseCalibration, round_up
from dpkmeans.validation import check_epsilon

if TYPE_CHECKING:  # the configuration imports this module to check its schedule
    from dpkmeans.engine.config import DPLloydConfig

__all__ = [
    "Release",
    "iteration_releases",
    "iteration_floor",
    "check_schedule_floor",
    "check_iterations",
    "meaningful_iterations",
    "check_meaningful_iterations",
    "plan_ledger",
    "iteration_charges",
    "element_plan",
    "open_ledger",
    "plan_releases",
    "mode_options",
    "clusters_touched",
]

@dataclass(frozen=True)
class Release:
    """One noise release of an iteration: the columns of the (d + 1)-vector (S_j, n_j) it
    covers, for one cluster (``cluster = j``) or all of them at once (``None``, replace
    adjacency), and its calibrated noise.

    Parameters
    ----------
    label : str
        The ledger entry's label.
    cluster : int or None
        The cluster j, or None for all clusters at once.
    columns : slice
        The columns of (S_j, n_j) it covers.
    calibration : NoiseCalibration
        Its noise.
    parts : tuple of float, default ()
        Its elements' bounds, when they hold together
        (:class:`~dpkmeans.engine.strategies.ReleaseSpec`).

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import iteration_releases
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> release = iteration_releases(config, 0.5)[0]
    >>> release.label, release.cluster, release.columns, release.calibration.sensitivity
    ('(S_j, n_j)', 0, slice(0, 3, None), 2.0)
    """

    label: str
    cluster: int | None
    columns: slice
    calibration: NoiseCalibration
    parts: tuple[float, ...] = ()


def iteration_releases(config: DPLloydConfig, eps_t: float) -> list[Release]:
    """Every release of one iteration, calibrated (public: it reads the configuration only).

    Under add/remove adjacency cluster j's releases use the budget eps_t times its public
    share (equal shares for an allocation rule, whose weights come from released values).
    The grid's rounding slack (:mod:`dpkmeans.privacy.noise`, book chapter 6) counts the elements one
    record can change: a release's columns in one cluster under add/remove, in two under
    replace (the record leaves one cluster and joins another), so 2 (d + 1) for the joint
    (S_j, n_j). Calibrations are computed once per distinct (sensitivity, epsilon, elements).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration.
    eps_t : float
        The iteration's budget.

    Returns
    -------
    list of Release
        The releases, cluster by cluster (add/remove), or of all clusters at once (replace).

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import iteration_releases
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5], neighbour="replace")
    >>> [(r.cluster, r.calibration.sensitivity) for r in iteration_releases(config, 0.5)]
    [(None, 4.0)]
    """
    cache: dict[tuple[float, float, int], NoiseCalibration] = {}
    touched = clusters_touched(config)

    def cal(sens: float, eps: float, elements: int) -> NoiseCalibration:
        key = (sens, eps, elements)
        if key not in cache:
            cache[key] = config.noise.calibrate(sens, eps, config.delta, coordinates=elements)
        return cache[key]

    planned: dict[float, list[tuple[str, slice, NoiseCalibration, tuple[float, ...]]]] = {}

    def specs(cluster: int | None, budget: float) -> list[Release]:
        if budget not in planned:  # the same for every cluster of one budget
            planned[budget] = [
                (s.label, s.columns,
                 cal(s.sensitivity, s.epsilon, touched * (s.columns.stop - s.columns.start)),
                 s.parts)
                for s in config.step.specs(config, budget)]
        return [Release(label, cluster, cols, c, parts)
                for label, cols, c, parts in planned[budget]]

    if config.neighbour == "replace":
        return specs(None, eps_t)
    shares = config.allocation.of(config.n_clusters)
    return [r for j in range(config.n_clusters) for r in specs(j, eps_t * float(shares[j]))]


def clusters_touched(config: DPLloydConfig) -> int:
    """The clusters one record can change in an iteration: one under add/remove, two under
    replace (it leaves one cluster and joins another).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration.

    Returns
    -------
    int
        1 or 2 (1 when k = 1).

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import clusters_touched
    >>> box = ([0.0, 0.0], [1.0, 1.0])
    >>> clusters_touched(DPLloydConfig(3, box, [1.0], neighbour="replace"))
    2
    """
    return 1 if config.neighbour != "replace" else min(2, config.n_clusters)


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
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import iteration_floor
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> f"{iteration_floor(config):.3g}"  # (S_j, n_j): sensitivity 2, three coordinates
    '1.49e-08'
    """
    if not config.step.noised:
        return 0.0
    share = config.allocation.least()
    floor = 0.0
    for s in config.step.specs(config, 1.0):
        need = config.noise.min_epsilon(
            s.sensitivity,
            coordinates=clusters_touched(config) * (s.columns.stop - s.columns.start))
        floor = max(floor, need / (s.epsilon * share))
    return floor * (1.0 + _FLOOR_MARGIN)


def check_schedule_floor(config: DPLloydConfig) -> None:
    """Refuse a schedule with an iteration below :func:`iteration_floor` (BudgetTooSmallError
    naming the smallest total epsilon the schedule's shape supports).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration (it checks itself with this when it is built).

    Raises
    ------
    dpkmeans.errors.BudgetTooSmallError
        If an iteration's budget is below the floor.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1e-9])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpkmeans.errors.BudgetTooSmallError: dp-lloyd: iteration 1 gets epsilon 1e-09, below ...
    """
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
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import check_iterations
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
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import meaningful_iterations
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1.0])  # one joint release
    >>> meaningful_iterations(config, 1.0, 237)
    237
    """
    if not config.step.noised:
        return 2**62  # no iteration is noised
    return math.floor(Fraction(epsilon) * Fraction(_smallest_share(config)) * n_records)


def _smallest_share(config: DPLloydConfig) -> float:
    """The smallest share of an iteration's budget that one of its releases gets."""
    return min(s.epsilon for s in config.step.specs(config, 1.0)) * config.allocation.least()


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
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import check_meaningful_iterations
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
    mechanisms.charge_all(ledger, iteration_charges(releases, replicas))


def iteration_charges(releases: list[Release], replicas: int) -> Charges:
    """An iteration's ledger entries: sequential over releases that cover all clusters
    (replace), in parallel over the disjoint clusters otherwise (add/remove).

    Parameters
    ----------
    releases : list of Release
        The iteration's releases (:func:`iteration_releases`).
    replicas : int
        The number of replicas (recorded in the entries' details).

    Returns
    -------
    Charges
        A list of entries (replace) or a :class:`~dpkmeans.privacy.mechanisms.Parallel`.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import iteration_charges, iteration_releases
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> charges = iteration_charges(iteration_releases(config, 0.5), 1)
    >>> [name for name, _ in charges.parts]
    ['cluster 0', 'cluster 1', 'cluster 2']
    """
    details = {"replicas": replicas}
    if releases[0].cluster is None:
        return [entry(r.calibration, label=f"{r.label}, all clusters", details=details,
                      parts=r.parts) for r in releases]
    made: dict[tuple[int, str], Entry] = {}  # one entry per (calibration, label), not per cluster
    by_cluster: dict[int, list[Entry]] = {}  # one pass, not one per cluster (large k)
    for r in releases:
        key = (id(r.calibration), r.label)
        if key not in made:
            made[key] = entry(r.calibration, label=r.label, details=details, parts=r.parts)
        by_cluster.setdefault(r.cluster, []).append(made[key])
    return Parallel("clusters", [(f"cluster {j}", by_cluster[j]) for j in sorted(by_cluster)])


def element_plan(releases: list[Release], shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """Per element of (k, d + 1): grid step, noise steps and continuous scale (0: no noise).

    Parameters
    ----------
    releases : list of Release
        The iteration's releases (:func:`iteration_releases`).
    shape : tuple of int
        (k, d + 1).

    Returns
    -------
    tuple of numpy.ndarray
        The grid steps, the noise steps (int64) and the continuous scales, each of ``shape``.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import element_plan, iteration_releases
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> grid, steps, scale = element_plan(iteration_releases(config, 0.5), (3, 3))
    >>> scale.round(6)
    array([[4., 4., 4.],
           [4., 4., 4.],
           [4., 4., 4.]])
    """
    grid, steps, scale = np.ones(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape)
    for r in releases:
        rows = slice(None) if r.cluster is None else r.cluster
        c = r.calibration
        grid[rows, r.columns] = c.grid if c.grid > 0 else 1.0
        steps[rows, r.columns] = c.noise_steps
        scale[rows, r.columns] = c.scale
    return grid, steps, scale


def plan_ledger(config: DPLloydConfig, replicas: int = 1) -> PrivacyLedger:
    """The ledger a run of ``config`` records, without running it: every charge depends on the
    configuration only (public), so the privacy of a configuration is computed before, and
    without, any data. Used for the rows of contenders the engine does not run itself. Not for
    configurations with data-dependent strategies (an initial release, an allocation rule or
    an output release with noise of its own).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration.
    replicas : int, default 1
        The number of replicas (recorded in the entries' details).

    Returns
    -------
    PrivacyLedger
        The planned ledger.

    Raises
    ------
    ValueError
        If ``config`` has a data-dependent strategy.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import plan_ledger
    >>> plan_ledger(DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5]))
    PrivacyLedger(neighbour='add/remove', entries=6, total=epsilon=1, budget=epsilon=1)
    """
    if config.start.charged or not config.allocation.public or config.output.charged:
        raise ValueError("a configuration with an initial release, an allocation rule or an "
                         "output release spends what its data decide: run it and read "
                         "result.spent")
    ledger = open_ledger(config, None)
    for t, eps_t in enumerate(config.schedule):
        with ledger.sequential(f"iteration {t + 1}"):
            _charge_iteration(ledger, iteration_releases(config, float(eps_t)), replicas)
            if config.modes is not None:
                _charge_modes(ledger, config, t, replicas)
    return ledger


def plan_releases(config: DPLloydConfig) -> list[tight.Release]:
    """What a run of ``config`` composes in sequence, from the configuration alone: every
    iteration's releases at the schedule's budgets (a parallel scope by its most expensive
    cluster; an allocation rule's releases by its :meth:`planned_entries
    <dpkmeans.engine.strategies.AllocationRule.planned_entries>` and every cluster at the
    whole budget, its largest share; categorical modes by their selections). A stopping rule
    only ends a run early, so the whole schedule is the most a run spends.

    Parameters
    ----------
    config : DPLloydConfig
        A configuration without an initial release or an output release with noise of its
        own.

    Returns
    -------
    list of dpkmeans.privacy.tight.Release

    Raises
    ------
    ValueError
        If the configuration spends outside the iterations' releases, or carries a flaw.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import plan_releases
    >>> plan_releases(DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5]))
    ... # doctest: +NORMALIZE_WHITESPACE
    [Release(kind='laplace', epsilon=0.5, delta=0.0, mu=0.0, times=1, parts=(0.125, 0.125, 0.25)),
     Release(kind='laplace', epsilon=0.5, delta=0.0, mu=0.0, times=1, parts=(0.125, 0.125, 0.25))]
    """
    if config.flaws:
        raise ValueError("an as-published configuration has no privacy to compose")
    if config.start.charged or config.output.charged:
        raise ValueError("tight planning covers the iterations' releases only: a configuration "
                         "with an initial release or an output release is not supported")
    ledger = PrivacyLedger(neighbour=config.neighbour)
    for t, eps_t in enumerate(config.schedule):
        with ledger.sequential(f"iteration {t + 1}"):
            if not config.allocation.public:
                mechanisms.charge_all(ledger, config.allocation.planned_entries(config,
                                                                               float(eps_t)))
            mechanisms.charge_all(ledger, iteration_charges(
                iteration_releases(config, float(eps_t)), 1))
            if config.modes is not None:
                _charge_modes(ledger, config, t, 1)
    return ledger.releases()


def _charge_modes(ledger: PrivacyLedger, config: DPLloydConfig, t: int, replicas: int) -> float:
    """Record iteration t's categorical mode selections without drawing them (a plan of the
    spend); the epsilon of each cluster's draw."""
    return config.modes.charge(ledger, float(config.modes.schedule[t]), replicas,
                                     **mode_options(config))


def mode_options(config: DPLloydConfig) -> dict[str, Any]:
    """How the categorical modes are paid for: one record changes the counts of two clusters
    under replace, one under add/remove (:meth:`CategoricalModes.entries
    <dpkmeans.engine.prototypes.CategoricalModes.entries>`).

    Parameters
    ----------
    config : DPLloydConfig
        The configuration.

    Returns
    -------
    dict
        The keyword arguments of the mode release's charges.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import mode_options
    >>> mode_options(DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [1.0], neighbour="replace"))
    {'clusters_touched': 2}
    """
    return {"clusters_touched": 2 if config.neighbour == "replace" else 1}


def open_ledger(config: DPLloydConfig, ledger: PrivacyLedger | None) -> PrivacyLedger:
    """The run's ledger (a new one, or the caller's), with the configuration's flaws recorded.

    Parameters
    ----------
    config : DPLloydConfig
        The configuration: its budget (epsilon, T delta), or its tight target (a ledger with
        ``accounting="tight"``), neighbour relation and flaws.
    ledger : PrivacyLedger or None
        The caller's ledger, or None for a new one.

    Returns
    -------
    PrivacyLedger
        The run's ledger (:func:`dpkmeans.engine.flaws.open_run_ledger`).

    Raises
    ------
    ValueError
        If a configuration with a tight ``target`` was calibrated with releases before the run
        that ``ledger`` does not hold (its plan would not reach the target).
    dpkmeans.errors.BudgetExceededError
        If its plan exceeds the ledger's budget.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.planning import open_ledger
    >>> open_ledger(DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5]), None).budget
    PrivacyCost(epsilon=1.0, delta=0.0)
    """
    if config.target is not None:  # the run's guarantee under tight composition
        opened = open_run_ledger(ledger, config.target, config.neighbour, config.flaws,
                                 accounting="tight")
        planned = opened.expect(plan_releases(config))
        if planned is not None and config.budget is None and \
                planned < config.target.epsilon * (1.0 - TIGHT_RTOL):
            raise ValueError(f"the configuration was calibrated to spend {config.target} with "
                             f"releases before the run that this ledger does not hold: its "
                             f"plan spends epsilon={planned:.6g}; build it with the ledger's "
                             "releases as its prefix")
        return opened
    budget = (config.epsilon, config.delta * config.iterations) if config.delta else config.epsilon
    return open_run_ledger(ledger, budget, config.neighbour, config.flaws)
