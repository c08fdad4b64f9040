"""A DP-Lloyd configuration: the loop's own parameters and the strategies it is built from
(docs/design.md, "One loop, many papers"; book chapter 5).

Every field is public: nothing here may depend on the data. The loop's own parameters are the
clusters, the box, the budget schedule, the noise and its sampler, the neighbour relation, the
centring of the query, the count floor of the update and the as-published flaws the ledger
records. Everything that differs between algorithms is a strategy object
(:mod:`dpkmeans.engine.strategies`) chosen when the configuration is built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpkmeans.compute.lloyd import SCORE_PRECISIONS
from dpkmeans.engine.flaws import Flaw, check_flaws
from dpkmeans.engine.planning import check_schedule_floor
from dpkmeans.engine.prototypes import CategoricalModes
from dpkmeans.engine.relative import Assignment, NearestCentre
from dpkmeans.engine.strategies import (
    EQUAL_SHARES,
    Allocation,
    IterationRelease,
    JointRelease,
    Output,
    PublicStart,
    PublishAsIs,
    RunWholeSchedule,
    Start,
    StopMonitor,
    StopRule,
    Strategy,
)
from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS, PrivacyCost
from dpkmeans.privacy.noise_types import NoiseType, check_sampler, noise_type
from dpkmeans.privacy.sensitivity import check_box
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = ["DPLloydConfig"]


@dataclass(frozen=True)
class DPLloydConfig:
    """A DP-Lloyd configuration (book chapter 5). Every field is public.

    Parameters
    ----------
    n_clusters : int
        k, the number of clusters the loop runs.
    bounds : (array_like, array_like)
        The public box (lower, upper); the data are clipped to it.
    schedule : array_like
        The per-iteration budgets eps_1..eps_T (:mod:`dpkmeans.engine.schedules`); their sum is
        the run's epsilon (with the mode release's, if any).
    noise : NoiseType or {"laplace", "gaussian", "colored"}, default "laplace"
        The noise of every release (:mod:`dpkmeans.privacy.noise_types`; a name is looked up
        once, when the configuration is built); Gaussian and colored noise spend ``delta`` per
        iteration, so a run is (epsilon, T delta)-DP. "colored" is Gaussian with the box
        optimum's covariance (book chapter 9), released as white noise on the whitened vector
        (S_j - n_j m) / sqrt(r), n_j (r the half-widths), then scaled back.
    delta : float, default 0.0
        The delta of each iteration (0 for Laplace noise).
    sampler : {"discrete", "continuous"} or None, default None
        Exact noise on a public grid, or numpy's float64 samplers as the papers used (recorded
        as a leak) (:mod:`dpkmeans.privacy.noise`). None: "discrete" for a named noise, the
        noise type's own sampler for a :class:`~dpkmeans.privacy.noise_types.NoiseType`; after
        the configuration is built it is always the noise type's sampler.
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The neighbour relation every sensitivity follows from.
    centred : bool, default True
        Release each cluster's sum measured from the box's midpoint and add the midpoint back
        (book chapter 5): the sensitivity uses the half-widths of the box instead of the
        largest |coordinate|. False is the papers' Delta = d r + 1.
    count_floor : float, default 1.0
        Post-processing of the update: a cluster whose noisy count is below it keeps its
        previous centroid.
    scores : str, default "double"
        The precision of the nearest-centroid scores (:data:`dpkmeans.compute.lloyd.SCORE_PRECISIONS`).
    budget : float or None, default None
        The declared total, when the schedule may spend less (an early stop, a strategy with
        releases of its own); the schedule's sum otherwise.
    target : PrivacyCost or None, default None
        The (epsilon, delta) guarantee of the whole run under tight composition (book
        chapter 3): the run's ledger checks every draw against it
        (:mod:`dpkmeans.engine.equal_privacy` builds such configurations). None: the
        schedule's basic composition, (epsilon, T delta).
    name : str, default "dp-lloyd"
        The configuration's name in messages and tables.
    flaws : tuple of Flaw, default ()
        The as-published flaws the ledger records (:mod:`dpkmeans.engine.flaws`); every flaw a
        strategy reproduces must be among them.
    start : Start, default PublicStart(sphere_packing)
        The initial release (:class:`~dpkmeans.engine.strategies.Start`).
    allocation : Allocation, default EQUAL_SHARES
        The budget allocation over clusters: fixed public shares or an allocation rule.
    step : IterationRelease, default JointRelease()
        The per-iteration release of every cluster's (S_j, n_j).
    assign : Assignment, default NearestCentre()
        Which records each cluster's statistic covers and what each contributes
        (:mod:`dpkmeans.engine.relative`): every record its position, or FastLloyd's records
        within a radius, their offsets from the centre.
    modes : CategoricalModes or None, default None
        The categorical mode release of k-prototypes (:mod:`dpkmeans.engine.prototypes`).
    stop : StopRule, default RunWholeSchedule()
        When a replica stops before the end of its schedule.
    output : Output, default PublishAsIs()
        The output release: the loop's centroids, a post-processing of them, or a release with
        noise of its own.

    Raises
    ------
    ValueError
        If a field is out of range or the strategies do not fit together (the message names
        it).
    TypeError
        If a strategy or flaw is not of its type.
    dpkmeans.errors.BudgetTooSmallError
        If an iteration's budget is below what the exact sampler supports
        (:func:`dpkmeans.engine.planning.iteration_floor`), naming the smallest total epsilon
        of the schedule's shape.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.strategies import SuSplit
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5], step=SuSplit())
    >>> config.epsilon, config.iterations
    (1.0, 2)
    """

    n_clusters: int
    bounds: tuple[np.ndarray, np.ndarray]
    schedule: np.ndarray
    noise: NoiseType | str = "laplace"
    delta: float = 0.0
    sampler: str | None = None
    neighbour: str = "add/remove"
    centred: bool = True
    count_floor: float = 1.0
    scores: str = "double"
    budget: float | None = None
    target: PrivacyCost | None = None
    name: str = "dp-lloyd"
    flaws: tuple[Flaw, ...] = ()
    start: Start = PublicStart()
    allocation: Allocation = EQUAL_SHARES
    step: IterationRelease = JointRelease()
    assign: Assignment = NearestCentre()
    modes: CategoricalModes | None = None
    stop: StopRule = RunWholeSchedule()
    output: Output = PublishAsIs()

    def __post_init__(self) -> None:
        check_positive_int(self.n_clusters, "n_clusters")
        object.__setattr__(self, "bounds", check_box(self.bounds))
        schedule = np.atleast_1d(np.asarray(self.schedule, dtype=float))
        if schedule.ndim != 1 or schedule.size == 0:
            raise ValueError("schedule must be a non-empty 1-D array of per-iteration budgets")
        for t, eps_t in enumerate(schedule, start=1):
            check_epsilon(float(eps_t), f"schedule[{t}]")
        object.__setattr__(self, "schedule", schedule)
        noise = self._noise_type()
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "sampler", noise.sampler)
        noise.check_delta(self.delta)
        if self.neighbour not in NEIGHBOUR_RELATIONS:
            raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, "
                             f"got {self.neighbour!r}")
        if not isinstance(self.centred, bool | np.bool_):
            raise TypeError(f"centred must be True or False, got {self.centred!r}")
        if noise.whitened and not (self.centred and self.neighbour == "add/remove"):
            raise ValueError("noise='colored' needs centred=True and add/remove adjacency: "
                             "the box optimum is diagonal for the centred query of one "
                             "cluster (book chapter 9)")
        if not self.count_floor > 0:
            raise ValueError(f"count_floor must be > 0, got {self.count_floor}")
        if self.scores not in SCORE_PRECISIONS:
            raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, "
                             f"got {self.scores!r}")
        object.__setattr__(self, "flaws", check_flaws(self.flaws, self.neighbour))
        self._check_strategies()
        if self.target is not None and not isinstance(self.target, PrivacyCost):
            raise TypeError(f"target must be a PrivacyCost or None, got {self.target!r}")
        if self.target is not None and self.flaws:
            raise ValueError("an as-published configuration cannot declare a tight target")
        if self.budget is not None:
            total = check_epsilon(self.budget, "budget")
            if not self.flaws and self.schedule.sum() > total * (1 + 1e-9):
                raise ValueError(f"the schedule spends {self.schedule.sum():g}, more than the "
                                 f"budget {total:g}")
        check_schedule_floor(self)

    def _noise_type(self) -> NoiseType:
        """The noise type: a name looked up with the sampler; a noise type as it is, or drawn
        by ``sampler`` when one is given (``dataclasses.replace(config, sampler=...)``)."""
        if not isinstance(self.noise, NoiseType):
            return noise_type(self.noise, check_sampler(self.sampler or "discrete"))
        if self.sampler is None:
            return self.noise
        return self.noise.with_sampler(check_sampler(self.sampler))

    def _check_strategies(self) -> None:
        """Each strategy of its type, fit for this configuration, and every flaw it reproduces
        listed in ``flaws`` (so the ledger records it)."""
        kinds = {"start": Start, "allocation": Allocation, "step": IterationRelease,
                 "assign": Assignment, "stop": StopRule, "output": Output}
        for field_name, kind in kinds.items():
            value = getattr(self, field_name)
            if not isinstance(value, kind):
                raise TypeError(f"{field_name} must be a {kind.__name__} "
                                f"(dpkmeans.engine.strategies), got {value!r}")
        if self.modes is not None and not isinstance(self.modes, CategoricalModes):
            raise TypeError(f"modes must be CategoricalModes or None, got {self.modes!r}")
        for strategy in self.strategies:
            missing = [f.name for f in strategy.flaws if f not in self.flaws]
            if missing:
                raise ValueError(f"the strategy {strategy.name or type(strategy).__name__!r} "
                                 f"reproduces the as-published flaws {missing}: list them in "
                                 f"flaws, so that the ledger records them")
            strategy.check(self)
        self._check_exact_reads()
        carried = {flaw for strategy in self.strategies for flaw in strategy.flaws}
        unrun = [f.name for f in self.flaws if f.changes_loop and f not in carried]
        if unrun:
            raise ValueError(f"the as-published flaws {unrun} change a step of the loop: give "
                             f"the strategy that reproduces them (their paper's flaws module)")
        self._check_modes()

    def _check_exact_reads(self) -> None:
        """A strategy that reads the exact statistics (an iteration release's
        ``after_release``, a stopping rule's ``before_release``) is a flaw: refused unless it
        lists its flaw records."""
        reads = []
        if type(self.step).after_release is not IterationRelease.after_release:
            reads.append((self.step, "after_release"))
        monitor = type(self.stop.monitor(1, self.n_clusters, self.bounds[0].size + 1))
        if monitor.before_release is not StopMonitor.before_release:
            reads.append((self.stop, "before_release"))
        for strategy, method in reads:
            if not strategy.flaws:
                raise ValueError(f"the strategy {strategy.name or type(strategy).__name__!r} "
                                 f"reads the exact statistics ({method}): that is an "
                                 "as-published flaw, so it must list its flaw records in flaws")

    def _check_modes(self) -> None:
        """k-prototypes (:mod:`dpkmeans.engine.prototypes`): the box is the layout's augmented
        box, one categorical budget per iteration, joint Laplace noise on the numeric part."""
        modes = self.modes
        if modes is None:
            return
        if self.bounds[0].size != modes.layout.width:
            raise ValueError(f"bounds have {self.bounds[0].size} columns, the mixed layout "
                             f"{modes.layout.width} (one-hot blocks, then numeric)")
        if modes.schedule.size != self.schedule.size:
            raise ValueError("the categorical schedule needs one budget per iteration")
        if not isinstance(self.step, JointRelease) or self.noise.needs_delta \
                or self.noise.norm != 1 \
                or self.allocation != EQUAL_SHARES or not isinstance(self.output, PublishAsIs):
            raise ValueError("categorical modes need the joint release, Laplace noise, equal "
                             "shares and no output release")

    @property
    def strategies(self) -> tuple[Strategy, ...]:
        """The configuration's strategies, the mode release included when there is one."""
        out: tuple[Strategy, ...] = (self.start, self.allocation, self.step, self.assign,
                                     self.stop, self.output)
        return out + (() if self.modes is None else (self.modes,))

    @property
    def numeric_offset(self) -> int:
        """The first numeric column: 0, or after the one-hot blocks of a mixed layout."""
        return 0 if self.modes is None else self.modes.layout.n_onehot

    @property
    def numeric_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The box of the numeric columns (the ones the Laplace releases cover)."""
        c = self.numeric_offset
        return self.bounds[0][c:], self.bounds[1][c:]

    @property
    def epsilon(self) -> float:
        """The declared total budget: ``budget`` if given (a schedule that stops early or a
        strategy with its own releases may spend less), else the schedule's sum (sequential
        composition over iterations, parallel over clusters), plus the categorical schedule's."""
        if self.budget is not None:
            return float(self.budget)
        extra = 0.0 if self.modes is None else float(self.modes.schedule.sum())
        return float(self.schedule.sum()) + extra

    @property
    def iterations(self) -> int:
        """T, the length of the schedule."""
        return int(self.schedule.size)

