"""The one DP-Lloyd loop that every algorithm in the book configures (book chapter 5).

    init -> for t in schedule: stats = backend.stats(X, centroids)      # exact
                               noisy = release(stats, budget_t, ledger)  # the only noise
                               centroids = update(noisy)                 # post-processing
         -> output release (e.g. merge n*k -> k, or one-shot colored noise)

The loop holds the replicas' generators but draws no noise itself: every release is charged and
drawn in one call of :mod:`dpkmeans.privacy.mechanisms` (``release_plan`` for an iteration,
``release_choices`` for the categorical modes), and strategies that read the data get a
releaser bound to the ledger (:class:`~dpkmeans.engine.hooks.HookContext`).

What differs between algorithms is not here: the configuration
(:class:`~dpkmeans.engine.config.DPLloydConfig`) holds a strategy for each part (the initial
release, the allocation, the per-iteration release, the mode release, the stopping rule, the
output release; :mod:`dpkmeans.engine.strategies`), and the releases of an iteration are
planned from it alone (:mod:`dpkmeans.engine.planning`). R replicas run in one pass; replica r
draws its initial centroids and all of its noise from the r-th child of one ``SeedSequence``,
so its numbers do not depend on how many replicas run beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.backends import Backend, get_backend
from dpkmeans.engine.checks import warn_clipped
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.planning import (
    Release,
    element_plan,
    iteration_charges,
    iteration_releases,
    mode_options,
    open_ledger,
)
from dpkmeans.engine.prototypes import mode_scores
from dpkmeans.engine.standalone import StandaloneConfig, run_standalone
from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.mechanisms import Charges, entry
from dpkmeans.privacy.noise import NoisePlan
from dpkmeans.privacy.seeding import replica_generators
from dpkmeans.privacy.sensitivity import box_midpoint
from dpkmeans.validation import check_positive_int

__all__ = ["DPLloydResult", "run", "run_prepared", "noisy_iteration", "weighted_iteration"]


@dataclass(frozen=True)
class DPLloydResult:
    """What a run returns. ``centroids`` is the release; the rest is for analysis.

    Parameters
    ----------
    centroids : numpy.ndarray
        (R, k', d): the published centroids of each replica.
    initial_centroids : numpy.ndarray
        (R, k, d).
    noisy_counts : numpy.ndarray
        (R, k), after the last iteration.
    ledger : PrivacyLedger
        One replica's accounting (with data-dependent weights or an early stop, each entry
        records the most expensive replica).
    config : DPLloydConfig
        The configuration run.
    n_clipped : int
        The values clipped (the data holder's).
    history : list of numpy.ndarray, default []
        The centroids after each iteration (``record_history``).
    iterations_run : numpy.ndarray or None, default None
        (R,): the iterations each replica ran.
    spent : numpy.ndarray or None, default None
        (R,): each replica's composed epsilon (its true spend); under a tight ledger, the
        ledger's epsilon at its budget's delta, which the most expensive replica bounds.
    sse_history : numpy.ndarray or None, default None
        (R, T): the exact SSE of the centroids entering each iteration (``record_history``;
        an evaluation aid, never released).
    release_history : list of tuple, default []
        Per iteration, the released noisy statistics and each element's noise scale
        (``record_history``; public).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.loop import run
    >>> X = np.array([[0.1, 0.1], [0.2, 0.1], [0.9, 0.8], [0.8, 0.9]])
    >>> config = DPLloydConfig(2, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> result = run(X, config, seed=0, record_history=True)
    >>> len(result.history), result.sse_history.shape, result.iterations_run
    (2, (1, 2), array([2]))
    """

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
    released first (:func:`dpkmeans.privacy.counting.noisy_record_count`). At the end its total must
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

    Parameters
    ----------
    X : array_like
        The (N, d) records.
    config : DPLloydConfig or StandaloneConfig
        The configuration.
    seed : int or numpy.random.SeedSequence
        The run's seed; replica r draws from the r-th child.
    replicas : int, default 1
        R.
    initial_centroids : array_like or None, default None
        (R, k, d) data-independent initial centroids, instead of the configuration's start.
    record_history : bool, default False
        Keep the history, the SSE history and the release history.
    ledger : PrivacyLedger or None, default None
        A ledger to continue.
    backend : str, Backend or None, default None
        Where the statistics are computed ("memory" when None).
    client : Any, default None
        A ``dask.distributed.Client`` for the "dask" backend.

    Returns
    -------
    DPLloydResult
        The release and what the run recorded.

    Raises
    ------
    ValueError
        If a standalone configuration is given initial centroids or ``record_history``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.loop import run
    >>> X = np.array([[0.1, 0.1], [0.2, 0.1], [0.9, 0.8], [0.8, 0.9]])
    >>> config = DPLloydConfig(2, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> result = run(X, config, seed=0, replicas=3)
    >>> result.centroids.shape, result.spent, result.ledger.total()
    ((3, 2, 2), array([1., 1., 1.]), PrivacyCost(epsilon=1.0, delta=0.0))
    """
    R = check_positive_int(replicas, "replicas")
    if isinstance(config, StandaloneConfig) and (initial_centroids is not None
                                                 or record_history):
        raise ValueError(f"{config.name} is not a DP-Lloyd configuration: it takes neither "
                         "initial_centroids nor record_history")
    opened = get_backend(backend, client=client)
    try:
        if isinstance(config, StandaloneConfig):
            own = run_standalone(opened, X, config, seed, R, ledger)
            return DPLloydResult(own.centroids, own.initial, own.noisy_counts, own.ledger,
                                 config, own.n_clipped, [], own.iterations, own.spent)
        data, n_rows, n_clipped = opened.prepare(X, config.bounds)
        warn_clipped(n_clipped)
        return run_prepared(opened, data, n_rows, config, seed, replicas=R,
                            initial_centroids=initial_centroids,
                            record_history=record_history, ledger=ledger, n_clipped=n_clipped)
    finally:
        if not isinstance(backend, Backend):
            opened.close()


def run_prepared(backend: Backend, data: Any, n_rows: int, config: DPLloydConfig,
                 seed: int | np.random.SeedSequence, *, replicas: int = 1,
                 initial_centroids: ArrayLike | None = None, record_history: bool = False,
                 ledger: PrivacyLedger | None = None, n_clipped: int = 0) -> DPLloydResult:
    """:func:`run` on data a backend already holds (``backend.prepare``: clipped to the
    public bounds), for a run nested in another algorithm, e.g. the Lloyd refinement that
    follows a standalone algorithm's first centroids
    (:class:`~dpkmeans.engine.standalone.StandaloneConfig`) on the same ledger.

    Parameters
    ----------
    backend : Backend
        The backend that holds the data.
    data : object
        The backend's handle of the clipped data.
    n_rows : int
        The number of rows it holds.
    config : DPLloydConfig
        The configuration.
    seed : int or numpy.random.SeedSequence
        The run's seed; replica r draws from the r-th child.
    replicas, initial_centroids, record_history, ledger
        As in :func:`run`.
    n_clipped : int, default 0
        The count of clipped values the result reports (the data holder's).

    Returns
    -------
    DPLloydResult
        The release and what the run recorded.

    Raises
    ------
    RuntimeError
        If the ledger (without flaws) does not end at its budget.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.compute.backends import get_backend
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.loop import run_prepared
    >>> X = np.array([[0.1, 0.1], [0.2, 0.1], [0.9, 0.8], [0.8, 0.9]])
    >>> config = DPLloydConfig(2, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> backend = get_backend("memory")
    >>> data, n_rows, n_clipped = backend.prepare(X, config.bounds)
    >>> result = run_prepared(backend, data, n_rows, config, 0)
    >>> result.centroids.shape, result.ledger.total()
    ((1, 2, 2), PrivacyCost(epsilon=1.0, delta=0.0))
    """
    R = check_positive_int(replicas, "replicas")
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = replica_generators(seq, R)  # default_rng of each of seq.spawn(R), in bulk
    state = _Run(backend, data, n_rows, config, open_ledger(config, ledger), rngs,
                 record_history)
    state.start(initial_centroids)
    for t, eps_t in enumerate(config.schedule):
        if not state.iterate(t, float(eps_t)):
            break
    return state.finish(n_clipped)


class _Run:
    """One run of the loop: its replicas' state, advanced one iteration at a time
    (:func:`run_prepared`)."""

    def __init__(self, backend: Backend, data: Any, n_rows: int, config: DPLloydConfig,
                 ledger: PrivacyLedger, rngs: list[np.random.Generator],
                 record_history: bool) -> None:
        self.backend, self.data, self.n_rows = backend, data, n_rows
        self.config, self.ledger, self.rngs = config, ledger, rngs
        R, k, d, T = len(rngs), config.n_clusters, config.bounds[0].size, config.iterations
        self.record_history = record_history
        self.centre = box_midpoint(config.bounds) if config.centred else np.zeros(d)
        self.centre[:config.numeric_offset] = 0.0  # one-hot blocks are never centred
        self.iterations_run = np.zeros(R, dtype=int)
        self.active = np.ones(R, dtype=bool)
        self.monitor = config.stop.monitor(R, k, d + 1)
        self.history: list[np.ndarray] = []
        self.releases_made: list[tuple[np.ndarray, np.ndarray]] = []
        self.noisy = np.zeros((R, k, d + 1))
        self.sse = np.full((R, T), np.nan) if record_history else None
        self.square_sum = (float(backend.map_reduce(data, _square_sum)[0][0])
                           if record_history else 0.0)

    def context(self, centroids: np.ndarray | None, gens: list[np.random.Generator],
                iteration: int = 0, epsilon: float = 0.0) -> HookContext:
        """What a strategy that reads the data sees."""
        return HookContext(self.backend, self.data, self.n_rows, self.config, centroids, gens,
                           self.ledger, iteration, epsilon)

    def start(self, initial_centroids: ArrayLike | None) -> None:
        """The initial centroids (the caller's, or the start strategy's) and, with the float
        sampler, every unit draw of the run (drawn up front, after the initial centroids)."""
        config, rngs, ledger = self.config, self.rngs, self.ledger
        R, k, d, T = len(rngs), config.n_clusters, config.bounds[0].size, config.iterations
        if initial_centroids is not None:
            initial = _given_initial(initial_centroids, config, R, d)
        elif config.start.charged:
            with ledger.sequential("initialisation"):
                initial = config.start(self.context(None, rngs))
            initial = _given_initial(initial, config, R, d)
        else:
            initial = config.start(self.context(None, rngs))
        self.initial, self.centroids = initial, initial.copy()
        self.unit = (None if config.noise.exact
                     else mechanisms.unit_noise(config.noise, rngs, (T, k, d + 1)))
        self.spent = np.full(R, ledger.total().epsilon)

    def iterate(self, t: int, eps_t: float) -> bool:
        """Iteration t of the active replicas: exact statistics, the stopping rule, the
        release, the update. False when no replica is left to run."""
        config, R = self.config, len(self.rngs)
        idx = np.flatnonzero(self.active)
        if idx.size == 0:
            return False
        previous = self.centroids[idx]
        relative = config.assign.relative
        sums, counts = config.assign.statistics(self.backend, self.data, previous, t, config)
        if self.sse is not None:
            nearest = (self.backend.stats(self.data, previous, scores=config.scores)
                       if relative else (sums, counts))  # the SSE of every record
            self.sse[idx, t] = self.square_sum \
                + np.einsum("rk,rk->r", nearest[1], (previous**2).sum(axis=2)) \
                - 2.0 * np.einsum("rkd,rkd->r", nearest[0], previous)
        stops = self.monitor.before_release(t, idx, sums, counts)
        if stops is not None and stops.any():
            self.active[idx[stops]] = False
            idx, previous, sums, counts = (idx[~stops], previous[~stops], sums[~stops],
                                           counts[~stops])
            if idx.size == 0:
                return False
        category_counts = (None if config.modes is None
                           else mode_scores(sums, config.modes.layout))
        if config.centred and not relative:  # offsets are centred on their own centre
            sums -= counts[..., None] * self.centre  # S_j - n_j m: the centred query
        stats = np.concatenate([sums, counts[..., None]], axis=2)
        white = config.step.whitening(config, t) if relative else None
        if white is not None:  # the released vector; scaled back below (post-processing)
            stats = stats * white
        step, scale, modes = self.release(t, eps_t, idx, previous, stats, category_counts)
        if white is not None:
            step = step / white
        self.noisy[idx] = step
        updated = (config.assign.update(step, previous, config, t) if relative
                   else _update(step, previous, config, self.centre))
        if modes is not None:
            updated[..., :config.numeric_offset] = modes
        self.centroids[idx] = updated
        self.iterations_run[idx] += 1
        stops = self.monitor.after_update(updated, previous)
        if stops is not None:
            self.active[idx[stops]] = False
        if self.record_history:
            self.history.append(self.centroids.copy())
            if config.step.noised:
                full = np.zeros((R, config.n_clusters, config.bounds[0].size + 1))
                full[idx] = scale  # a stopped replica's elements: scale 0, nothing released
                self.releases_made.append((self.noisy.copy(), full))
        return True

    def release(self, t: int, eps_t: float, idx: np.ndarray, previous: np.ndarray,
                stats: np.ndarray, category_counts: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Iteration t's releases of the active replicas ``idx``, in the ledger scope
        "iteration t": the noisy statistics, each element's noise scale (with
        ``record_history``) and the categorical modes (or None)."""
        config, ledger = self.config, self.ledger
        sub_rngs = [self.rngs[i] for i in idx] if idx.size < len(self.rngs) else self.rngs
        sub_unit = None if self.unit is None else self.unit[idx, t]
        scale = modes = None
        before = ledger.total().epsilon
        with ledger.sequential(f"iteration {t + 1}"):
            if not config.step.noised:  # a flaw its strategy records
                step = stats.copy()
            elif config.allocation.public:
                releases = iteration_releases(config, eps_t)
                step = noisy_iteration(stats, releases, config, sub_rngs, sub_unit, ledger)
                if self.record_history:
                    scale = element_plan(releases, stats.shape[1:])[2]
                if category_counts is not None:
                    modes = config.modes.release(ledger, category_counts,
                                                 float(config.modes.schedule[t]), sub_rngs,
                                                 **mode_options(config))
                self.spent[idx] += ledger.total().epsilon - before
            else:
                weights = config.allocation.weights(self.context(previous, sub_rngs, t + 1,
                                                                 eps_t))
                own = ledger.total().epsilon - before  # the rule's own releases
                step, cost, scale = weighted_iteration(stats, config, eps_t, weights, sub_rngs,
                                                       sub_unit, ledger)
                if ledger.accounting == "tight":  # replicas' costs do not add separately
                    self.spent[idx] += ledger.total().epsilon - before
                else:
                    self.spent[idx] += own + cost
            ledger.post_process(_update_text(config))
        return step, scale, modes

    def finish(self, n_clipped: int) -> DPLloydResult:
        """The stopping rule's note, the output release, the budget check and the result."""
        config, ledger, T = self.config, self.ledger, self.config.iterations
        if not self.active.all():
            note = self.monitor.note(self.iterations_run)
            if note is not None:
                ledger.post_process(note)
        if self.sse is not None:  # a stopped replica keeps its centroids, so its SSE stays
            for t in range(1, T):
                self.sse[:, t] = np.where(np.isnan(self.sse[:, t]), self.sse[:, t - 1],
                                          self.sse[:, t])
        before = ledger.total().epsilon
        released = config.output.publish(self.context(self.centroids, self.rngs, T + 1),
                                         self.noisy[..., -1])
        self.spent += ledger.total().epsilon - before
        if not config.flaws and ledger.budget is not None:
            if config.budget is None and not ledger.is_fully_spent():
                raise RuntimeError(f"ledger total {ledger.total()} differs from the budget "
                                   f"{ledger.budget}")
            if not ledger.total().fits_within(ledger.budget):  # pragma: no cover
                raise RuntimeError(f"ledger total {ledger.total()} exceeds the budget "
                                   f"{ledger.budget}")
        return DPLloydResult(released, self.initial, self.noisy[..., -1], ledger, config,
                             n_clipped, self.history, self.iterations_run, self.spent,
                             self.sse, self.releases_made)


def noisy_iteration(stats: np.ndarray, releases: list[Release], config: DPLloydConfig,
                     rngs: list[np.random.Generator], unit: np.ndarray | None,
                     ledger: PrivacyLedger) -> np.ndarray:
    """Charge an iteration's releases to ``ledger`` and add their noise to every cluster's
    (S_j, n_j), empty clusters included, in one call
    (:func:`dpkmeans.privacy.mechanisms.release_plan`).

    Discrete sampler: every noised element is rounded to its public grid and gets exact
    integer noise drawn now, per iteration, from each replica's own generator. Continuous:
    ``unit`` holds this iteration's unit draws (drawn up front). Columns that no release
    covers stay exact.

    Parameters
    ----------
    stats : numpy.ndarray
        The exact (centred) statistics (S_j, n_j), (R, k, d + 1).
    releases : list of Release
        The iteration's releases (:func:`~dpkmeans.engine.planning.iteration_releases`).
    config : DPLloydConfig
        The configuration.
    rngs : list of numpy.random.Generator
        One generator per replica.
    unit : numpy.ndarray or None
        The continuous sampler's unit draws of this iteration, or None.
    ledger : PrivacyLedger
        Charged first.

    Returns
    -------
    numpy.ndarray
        The noisy statistics, (R, k, d + 1).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.loop import noisy_iteration
    >>> from dpkmeans.engine.planning import iteration_releases
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> config = DPLloydConfig(2, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> stats = np.array([[[0.3, 0.2, 2.0], [1.7, 1.7, 2.0]]])
    >>> ledger = PrivacyLedger(budget=0.5)
    >>> noisy = noisy_iteration(stats, iteration_releases(config, 0.5), config,
    ...                         [np.random.default_rng(0)], None, ledger)
    >>> noisy.shape, ledger.total()
    ((1, 2, 3), PrivacyCost(epsilon=0.5, delta=0.0))
    """
    return _add_noise(stats, *element_plan(releases, stats.shape[1:]), config, rngs, unit,
                      ledger, iteration_charges(releases, stats.shape[0]))


def _add_noise(stats: np.ndarray, grid: np.ndarray, steps: np.ndarray, scale: np.ndarray,
               config: DPLloydConfig, rngs: list[np.random.Generator],
               unit: np.ndarray | None, ledger: PrivacyLedger, charges: Charges) -> np.ndarray:
    """:func:`noisy_iteration` from an element plan (:func:`~dpkmeans.engine.planning.element_plan`)
    and the ledger entries that pay for it: grid, steps and scale of shape (k, d + 1), shared
    by the replicas, or (R, k, d + 1), row r for replica r (an allocation rule's). Replica r's
    noise is the same either way, and the same as when r is noised alone
    (:func:`dpkmeans.privacy.noise.draw_steps`). Colored noise is released on the whitened
    vector and scaled back, and the iteration release's :meth:`after_release
    <dpkmeans.engine.strategies.IterationRelease.after_release>` may post-process the result."""
    plan = NoisePlan(config.noise, None, grid, steps, scale, config.step.shared)
    if config.step.shared or not config.noise.whitened:  # shared: one draw per cluster
        noisy = mechanisms.release_plan(ledger, charges, stats, plan, rngs, unit=unit)
        return config.step.after_release(stats, noisy)
    white = config.noise.whitening(config.bounds)
    stats = stats * white  # the whitened vector; scaled back below (post-processing)
    noisy = mechanisms.release_plan(ledger, charges, stats, plan, rngs, unit=unit)
    stats, noisy = stats / white, noisy / white
    return config.step.after_release(stats, noisy)


def weighted_iteration(stats: np.ndarray, config: DPLloydConfig, eps_t: float,
                        weights: np.ndarray, rngs: list[np.random.Generator],
                        unit: np.ndarray | None,
                        ledger: PrivacyLedger) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The releases of an iteration whose cluster j gets epsilon_t w_rj in replica r (an
    :class:`~dpkmeans.engine.strategies.AllocationRule`): charge the most expensive replica's
    parallel cost, then draw each replica's noise at its own scales (all replicas in one call,
    each from its own generator). Returns the noisy statistics, each replica's cost,
    epsilon_t max_j w_rj, and each element's noise scale (R, k, d + 1).

    Parameters
    ----------
    stats : numpy.ndarray
        The exact (centred) statistics (S_j, n_j), (R, k, d + 1).
    config : DPLloydConfig
        The configuration (a joint release).
    eps_t : float
        The iteration's budget.
    weights : numpy.ndarray
        (R, k) weights, all finite and > 0.
    rngs : list of numpy.random.Generator
        One generator per replica.
    unit : numpy.ndarray or None
        The continuous sampler's unit draws of this iteration, or None.
    ledger : PrivacyLedger
        Charged first.

    Returns
    -------
    tuple of numpy.ndarray
        The noisy statistics (R, k, d + 1), each replica's cost (R,) and each element's
        noise scale (R, k, d + 1).

    Raises
    ------
    ValueError
        If a weight is not finite and > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.loop import weighted_iteration
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> config = DPLloydConfig(2, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> stats = np.array([[[0.3, 0.2, 2.0], [1.7, 1.7, 2.0]]])
    >>> ledger = PrivacyLedger(budget=0.5)
    >>> noisy, cost, scale = weighted_iteration(stats, config, 0.5, np.array([[1.0, 0.5]]),
    ...                                         [np.random.default_rng(0)], None, ledger)
    >>> cost, scale[0, :, 0].round(6), ledger.total()
    (array([0.5]), array([4., 8.]), PrivacyCost(epsilon=0.5, delta=0.0))
    """
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("allocation weights must be finite and > 0")
    (spec,) = config.step.specs(config, eps_t)
    label, cols, sens = spec.label, spec.columns, spec.sensitivity
    cost = eps_t * weights.max(axis=1)
    cals = [[config.noise.calibrate(sens, eps_t * w, config.delta,
                                    coordinates=cols.stop - cols.start) for w in row]
            for row in weights]
    top = cals[int(np.argmax(cost))][int(np.argmax(weights[int(np.argmax(cost))]))]
    paid = entry(replace(top, epsilon=float(cost.max())),
                 label=f"{label}, every cluster in parallel at epsilon_t w_j",
                 details={"replicas": len(rngs),
                          "weights": f"{weights.min():.4g} to {weights.max():.4g}",
                          "cost per replica": f"mean {cost.mean():.4g}, max {cost.max():.4g}"},
                 parts=spec.parts)
    plans = [element_plan([Release(label, j, cols, cal) for j, cal in enumerate(row)],
                          stats.shape[1:]) for row in cals]
    grid, steps, scale = (np.stack(a) for a in zip(*plans))  # (R, k, d + 1) each
    return _add_noise(stats, grid, steps, scale, config, rngs, unit, ledger, [paid]), cost, scale


def _update_text(config: DPLloydConfig) -> str:
    """The ledger's note of the update (post-processing)."""
    floor = f"n'_j >= {config.count_floor:g}"
    if config.assign.relative:
        return (f"c_j = c_j + S'_j / n'_j (the move clipped to r_t) if {floor}, else keep c_j; "
                "fold into the box")
    centre = " + m" if config.centred else ""
    return f"c_j = S'_j / n'_j{centre} if {floor}, else keep c_j; clip to the box"


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


def _square_sum(block: np.ndarray) -> tuple[np.ndarray]:
    """sum ||x||^2 over a block (the constant of the SSE identity in :func:`run`)."""
    return (np.array([np.einsum("nd,nd->", block, block)]),)
