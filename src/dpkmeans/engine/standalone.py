"""Algorithms that are not configurations of the DP-Lloyd loop (book chapter 12, "Beyond the
five papers").

Some strong private k-means algorithms never iterate Lloyd's noisy update: a prefix tree over
locality-sensitive hashes with a private coreset, or a private candidate set searched with the
exponential mechanism. A :class:`StandaloneConfig` describes one such algorithm from public
inputs only and runs itself, one replica at a time (:meth:`StandaloneConfig.fit_replica`), on a
backend's data and through the same privacy machinery as the loop: every release charged and
drawn by one call of :mod:`dpkmeans.privacy.mechanisms`, exact samplers, public bounds.
:func:`dpkmeans.engine.loop.run` hands such a configuration to :func:`run_standalone`, so the
estimator, the leaderboard, the audits and the tests run it like any configuration of the loop.

A subclass is a frozen dataclass that adds its own public parameters and implements
:meth:`~StandaloneConfig.fit_replica`; its releases go through :meth:`Replica.release` (charged
to the replica's ledger first), and its public randomness (hash directions, projections, shifts,
post-processing on released values) through :attr:`Replica.public_rng`, each use listed in
``tests/test_privacy_boundary.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.backends import Backend
from dpkmeans.engine.checks import warn_clipped
from dpkmeans.engine.flaws import Flaw, open_run_ledger
from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS, PrivacyCost, PrivacyLedger
from dpkmeans.privacy.noise import CovarianceNoise, NoiseCalibration
from dpkmeans.privacy.seeding import replica_generators
from dpkmeans.privacy.sensitivity import check_box
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int

__all__ = ["Replica", "StandaloneConfig", "StandaloneFit", "StandaloneRun", "run_standalone"]


@dataclass(frozen=True)
class StandaloneFit:
    """What one replica of a standalone algorithm publishes: its k centroids (the release),
    the rounds it ran (public: fixed by public inputs or by released values) and, optionally,
    its noisy cluster sizes (released values) and the centroids before a final refinement.

    Parameters
    ----------
    centroids : numpy.ndarray
        The k released centroids, (k, d).
    iterations : int, default 0
        The rounds run (public).
    noisy_counts : numpy.ndarray or None, default None
        The noisy cluster sizes, (k,), if released.
    initial : numpy.ndarray or None, default None
        The centroids before a final refinement, (k, d), if any.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.standalone import StandaloneFit
    >>> StandaloneFit(np.zeros((2, 1)))
    StandaloneFit(centroids=array([[0.],
           [0.]]), iterations=0, noisy_counts=None, initial=None)
    """

    centroids: np.ndarray
    iterations: int = 0
    noisy_counts: np.ndarray | None = None
    initial: np.ndarray | None = None


@dataclass
class Replica:
    """One replica's view of the run: the backend and its (clipped) data, the public row count
    of the block plan, the replica's ledger and generator.

    The generator is held, not handed out for noise: :meth:`release` charges the ledger and
    draws from it; :attr:`public_rng` names it for randomness that is not privacy noise.

    Parameters
    ----------
    backend : Backend
        The compute backend.
    data : Any
        The backend's (clipped, private) data.
    n_rows : int
        The public row count of the block plan.
    ledger : PrivacyLedger
        The replica's ledger.
    _rng : numpy.random.Generator
        The replica's generator.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.compute.backends import get_backend
    >>> from dpkmeans.engine.standalone import Replica
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.noise import calibrate
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> replica = Replica(get_backend("memory"), None, 5, ledger, np.random.default_rng(0))
    >>> noisy = replica.release(calibrate("laplace", 1.0, 0.5), 5.0, label="a value")
    >>> round(float(noisy), 4)
    1.7889
    >>> replica.choose([1.0, 5.0, 2.0], 1.0, 0.5, label="an index")
    1
    >>> ledger.total()
    PrivacyCost(epsilon=1.0, delta=0.0)
    """

    backend: Backend
    data: Any
    n_rows: int
    ledger: PrivacyLedger
    _rng: np.random.Generator = field(repr=False)

    def release(self, calibration: NoiseCalibration | CovarianceNoise, values: ArrayLike, *,
                label: str, details: Mapping[str, Any] | None = None, times: int = 1,
                integer_valued: bool = False) -> np.ndarray:
        """Release ``values`` (any shape) with the noise of ``calibration``: charged to this
        replica's ledger, then drawn from its generator
        (:func:`dpkmeans.privacy.mechanisms.release`; a refused release draws nothing).

        Parameters
        ----------
        calibration : NoiseCalibration or CovarianceNoise
            The noise of one release.
        values : array_like
            The exact values.
        label : str
            What is released (the ledger entry's label).
        details : mapping or None, default None
            Added to the calibration's details in the entry.
        times : int, default 1
            The number of releases the entry stands for.
        integer_valued : bool, default False
            The values are integers (counts).

        Returns
        -------
        numpy.ndarray
            The noisy values, of the shape of ``values``.
        """
        values = np.asarray(values, dtype=float)
        return mechanisms.release(self.ledger, calibration, values[None], [self._rng],
                                  label=label, details=details, times=times,
                                  integer_valued=integer_valued)[0]

    def choose(self, utility: ArrayLike, sensitivity: float, epsilon: float, *, label: str,
               details: Mapping[str, Any] | None = None) -> int:
        """Pick an index of ``utility`` (higher is better) with the exponential mechanism,
        charged to this replica's ledger first (:func:`dpkmeans.privacy.mechanisms.
        exponential_mechanism`: exact, on a public grid).

        Parameters
        ----------
        utility : array_like
            The utility of each index.
        sensitivity : float
            The utility's sensitivity.
        epsilon : float
            The selection's budget.
        label : str
            What is chosen (the ledger entry's label).
        details : mapping or None, default None
            Added to the entry's details.

        Returns
        -------
        int
            The chosen index.
        """
        return int(mechanisms.exponential_mechanism(utility, sensitivity, epsilon, self._rng,
                                                    ledger=self.ledger, label=label,
                                                    details=details))

    @property
    def public_rng(self) -> np.random.Generator:
        """The replica's generator, for draws that are not privacy noise (a choice that
        depends on no data, or post-processing of released values); each use is listed, with
        its reason, in ``tests/test_privacy_boundary.py``."""
        return self._rng

    def seed_sequence(self) -> np.random.SeedSequence:
        """A child seed for a nested run of the DP-Lloyd loop (e.g. a refinement), drawn from
        this replica's generator so that it follows from the run's one seed.

        Returns
        -------
        numpy.random.SeedSequence
            The child seed.
        """
        return np.random.SeedSequence(int(self._rng.integers(2**63)))


@dataclass(frozen=True)
class StandaloneConfig:
    """Public inputs of an algorithm that runs itself (not a DP-Lloyd configuration).

    Every field is public: nothing here may depend on the data. ``epsilon`` (and ``delta``)
    is the run's whole budget; the replica's ledger total must equal it at the end.

    Parameters
    ----------
    n_clusters : int
        k.
    bounds : (lower, upper)
        The public box (data outside are clipped to it before the run).
    epsilon : float
        The run's budget.
    delta : float, default 0.0
        The run's delta (0 for a pure epsilon-DP algorithm).
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The adjacency its guarantee is proven under.
    name : str
        The algorithm's name (the catalogue's).
    flaws : tuple of Flaw, default ()
        Flaws a variant reproduces (recorded in the ledger; none for a corrected algorithm).

    Raises
    ------
    ValueError
        If an input is out of range or ``neighbour`` is unknown.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from dpkmeans.engine.standalone import StandaloneConfig, StandaloneFit
    >>> from dpkmeans.privacy.noise import calibrate
    >>> @dataclass(frozen=True)
    ... class Midpoints(StandaloneConfig):  # k copies of the box's midpoint, and a noisy count
    ...     def fit_replica(self, replica):
    ...         cal = calibrate("laplace", 1.0, self.epsilon, integer_valued=True)
    ...         n = replica.release(cal, [replica.n_rows], label="rows", integer_valued=True)
    ...         mid = (self.bounds[0] + self.bounds[1]) / 2
    ...         return StandaloneFit(np.tile(mid, (self.n_clusters, 1)),
    ...                              noisy_counts=np.full(self.n_clusters, n[0] / 2))
    >>> config = Midpoints(2, ([0.0, 0.0], [1.0, 2.0]), 1.0, name="midpoints")
    >>> config.cost
    PrivacyCost(epsilon=1.0, delta=0.0)
    """

    n_clusters: int
    bounds: tuple[np.ndarray, np.ndarray]
    epsilon: float
    delta: float = 0.0
    neighbour: str = "add/remove"
    name: str = "standalone"
    flaws: tuple[Flaw, ...] = ()

    def __post_init__(self) -> None:
        check_positive_int(self.n_clusters, "n_clusters")
        object.__setattr__(self, "bounds", check_box(self.bounds))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.delta:
            object.__setattr__(self, "delta", check_delta(self.delta))
        if self.neighbour not in NEIGHBOUR_RELATIONS:
            raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, "
                             f"got {self.neighbour!r}")

    @property
    def iterations(self) -> int:
        """The rounds the algorithm plans (a subclass says what a round is); 0 by default."""
        return 0

    @property
    def cost(self) -> PrivacyCost:
        """The declared budget of the run."""
        return PrivacyCost(self.epsilon, self.delta)

    @property
    def target(self) -> PrivacyCost | None:
        """The (epsilon, delta) a run meets under tight composition of its releases (its ledger
        then composes tightly, :func:`run_standalone`), or None (the default): its releases
        add up to :attr:`cost` by basic composition."""
        return None

    def planned_releases(self) -> list[Release] | None:
        """What a run composes in sequence, from public inputs only: a ledger at a tight
        :attr:`target` checks it whole before the first draw
        (:meth:`~dpkmeans.privacy.accounting.PrivacyLedger.expect`). None (the default): no
        plan, every draw is checked as it comes.

        Returns
        -------
        list of Release or None
            The planned releases.
        """
        return None

    def fit_replica(self, replica: Replica) -> StandaloneFit:
        """Run the algorithm once on ``replica.data``; every release through
        ``replica.release``.

        Parameters
        ----------
        replica : Replica
            The replica's data, ledger and generator.

        Returns
        -------
        StandaloneFit
            What the replica publishes.

        Raises
        ------
        NotImplementedError
            Here: a subclass implements it.
        """
        raise NotImplementedError


def _open(config: StandaloneConfig, ledger: PrivacyLedger | None) -> PrivacyLedger:
    target = config.target
    if target is not None:  # the run's guarantee under tight composition
        opened = open_run_ledger(ledger, target, config.neighbour, config.flaws,
                                 accounting="tight")
        plan = config.planned_releases()
        if plan is not None:
            opened.expect(plan)
        return opened
    return open_run_ledger(ledger, config.cost if config.delta else config.epsilon,
                           config.neighbour, config.flaws)


@dataclass(frozen=True)
class StandaloneRun:
    """R replicas of a standalone algorithm: their centroids (R, k, d), the centroids before
    a final refinement (R, k, d), noisy cluster sizes (R, k; nan where none is released),
    replica 0's ledger, the values clipped (for the data holder only), the rounds each ran and
    each one's spend. :func:`dpkmeans.engine.loop.run` returns it as a ``DPLloydResult``.

    Parameters
    ----------
    centroids : numpy.ndarray
        (R, k, d).
    initial : numpy.ndarray
        The centroids before a final refinement, (R, k, d).
    noisy_counts : numpy.ndarray
        (R, k); nan where none is released.
    ledger : PrivacyLedger
        Replica 0's ledger.
    n_clipped : int
        The values clipped (private: for the data holder only).
    iterations : numpy.ndarray
        The rounds each replica ran, (R,).
    spent : numpy.ndarray
        Each replica's epsilon spent, (R,).

    Examples
    --------
    :func:`run_standalone` returns it.

    >>> from dpkmeans.engine.standalone import StandaloneRun
    >>> list(StandaloneRun.__dataclass_fields__)[:3]
    ['centroids', 'initial', 'noisy_counts']
    """

    centroids: np.ndarray
    initial: np.ndarray
    noisy_counts: np.ndarray
    ledger: PrivacyLedger
    n_clipped: int
    iterations: np.ndarray
    spent: np.ndarray


def run_standalone(backend: Backend, X: Any, config: StandaloneConfig,
                   seed: int | np.random.SeedSequence, R: int,
                   ledger: PrivacyLedger | None = None) -> StandaloneRun:
    """Run ``R`` independent replicas of ``config`` on X (clipped to its public bounds first,
    with a :class:`~dpkmeans.errors.ClippingWarning` that does not say how many values,
    :mod:`dpkmeans.engine.checks`); replica r draws from
    the r-th child of ``seed`` only. ``ledger`` (a caller's, e.g. after a noisy record count)
    becomes replica 0's; the others open their own with the run's budget. Each replica's
    spend is checked against the budget.

    Parameters
    ----------
    backend : Backend
        Where the data are held (:mod:`dpkmeans.compute.backends`).
    X : Any
        The records.
    config : StandaloneConfig
        The algorithm.
    seed : int or numpy.random.SeedSequence
        The run's one seed.
    R : int
        The number of replicas.
    ledger : PrivacyLedger or None, default None
        A caller's ledger for replica 0.

    Returns
    -------
    StandaloneRun
        The replicas' releases and spends.

    Raises
    ------
    RuntimeError
        If a replica's ledger (without flaws) does not end fully spent.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from dpkmeans.compute.backends import get_backend
    >>> from dpkmeans.engine.standalone import StandaloneConfig, StandaloneFit, run_standalone
    >>> from dpkmeans.privacy.noise import calibrate
    >>> @dataclass(frozen=True)
    ... class Midpoints(StandaloneConfig):  # k copies of the box's midpoint, and a noisy count
    ...     def fit_replica(self, replica):
    ...         cal = calibrate("laplace", 1.0, self.epsilon, integer_valued=True)
    ...         n = replica.release(cal, [replica.n_rows], label="rows", integer_valued=True)
    ...         mid = (self.bounds[0] + self.bounds[1]) / 2
    ...         return StandaloneFit(np.tile(mid, (self.n_clusters, 1)),
    ...                              noisy_counts=np.full(self.n_clusters, n[0] / 2))
    >>> config = Midpoints(2, ([0.0, 0.0], [1.0, 2.0]), 1.0, name="midpoints")
    >>> X = np.array([[0.1, 0.2], [0.9, 1.8], [0.5, 1.0]])
    >>> run = run_standalone(get_backend("memory"), X, config, seed=0, R=2)
    >>> run.centroids.shape, run.spent, run.ledger.total()
    ((2, 2, 2), array([1., 1.]), PrivacyCost(epsilon=1.0, delta=0.0))
    """
    data, n_rows, n_clipped = backend.prepare(X, config.bounds)
    warn_clipped(n_clipped)
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = replica_generators(seq, R)  # default_rng of each of seq.spawn(R), in bulk
    first = _open(config, ledger)
    before = first.total().epsilon
    fits, spent, ledgers = [], np.zeros(R), []
    for r, rng in enumerate(rngs):
        own = first if r == 0 else _open(config, None)
        start = own.total().epsilon
        fits.append(config.fit_replica(Replica(backend, data, n_rows, own, rng)))
        spent[r] = before + own.total().epsilon - start
        ledgers.append(own)
    for own in ledgers:
        if not config.flaws and own.budget is not None and not own.is_fully_spent():
            raise RuntimeError(f"{config.name}: ledger total {own.total()} differs from the "
                               f"budget {own.budget}")
    k, d = config.n_clusters, config.bounds[0].size
    centroids = np.stack([np.asarray(f.centroids, dtype=float).reshape(k, d) for f in fits])
    initial = np.stack([centroids[r] if f.initial is None else np.asarray(f.initial, float)
                        for r, f in enumerate(fits)])
    counts = np.stack([np.full(k, np.nan) if f.noisy_counts is None
                       else np.asarray(f.noisy_counts, float) for f in fits])
    iterations = np.array([f.iterations for f in fits], dtype=int)
    return StandaloneRun(centroids, initial, counts, first, n_clipped, iterations, spent)
