"""The strategies a DP-Lloyd configuration is built from (docs/design.md, "One loop, many
papers").

A :class:`~dpkmeans.engine.config.DPLloydConfig` holds the loop's own parameters and one object
for each part that differs between algorithms, chosen when the configuration is built:

* the initial release (:class:`Start`): data-independent initial centroids
  (:class:`PublicStart`), or an :class:`InitialRelease` that reads the data and pays for it;
* the budget allocation over clusters (:class:`Allocation`): fixed public shares
  (:class:`FixedShares`, equal by default), or an :class:`AllocationRule` that computes
  weights from released values in every iteration;
* the per-iteration release (:class:`IterationRelease`): which columns of each cluster's
  (S_j, n_j) get which noise (:class:`JointRelease`, :class:`SuSplit`);
* the categorical mode release (:class:`dpkmeans.engine.prototypes.CategoricalModes`, or none);
* the stopping rule (:class:`StopRule`): run the whole schedule, or stop once no centroid moves
  by a threshold (:class:`ShiftBelow`);
* the output release (:class:`Output`): publish the loop's centroids as they are, a
  post-processing of them (:class:`PostProcess`, e.g. DP-KCCM's merge), or an
  :class:`OutputRelease` with its own, charged, noise.

An as-published flaw that changes a step of the loop is a strategy its paper supplies
(``dpkmeans.papers.<key>.flaws``), a subclass of one of these that lists its records in
``flaws``; the configuration refuses a strategy whose flaws it does not carry, so the ledger
records every one of them. The engine names no paper.

Two hooks of a strategy see exact statistics: :meth:`IterationRelease.after_release` and
:meth:`StopMonitor.before_release`. The engine's own strategies do not use them; a strategy that
does reproduces a flaw, and the configuration refuses it unless it lists its flaw records.
The engine's strategies are frozen dataclasses: a configuration stays public data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.init import Initializer, sphere_packing
from dpkmeans.engine.schedules import SU_RHO, su_split
from dpkmeans.privacy.sensitivity import coordinate_bounds, lloyd_query_sensitivity
from dpkmeans.validation import check_real

if TYPE_CHECKING:  # the configuration imports this module
    from dpkmeans.engine.config import DPLloydConfig
    from dpkmeans.privacy.mechanisms import Entry

__all__ = [
    "Strategy",
    "Start",
    "PublicStart",
    "InitialRelease",
    "Allocation",
    "FixedShares",
    "EQUAL_SHARES",
    "AllocationRule",
    "ReleaseSpec",
    "IterationRelease",
    "JointRelease",
    "SuSplit",
    "StopRule",
    "StopMonitor",
    "RunWholeSchedule",
    "ShiftBelow",
    "Output",
    "PublishAsIs",
    "PostProcess",
    "OutputRelease",
]


class Strategy:
    """What every strategy has: a name (for messages) and the as-published flaws it reproduces
    (empty for the engine's own strategies; a paper's flawed strategy lists its records).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import JointRelease
    >>> JointRelease().name, JointRelease().flaws
    ('joint', ())
    """

    name: str = ""
    flaws: tuple[Flaw, ...] = ()

    def check(self, config: DPLloydConfig) -> None:
        """Refuse, with a ValueError naming the problem, a configuration this strategy cannot
        serve (called when the configuration is built).

        Parameters
        ----------
        config : DPLloydConfig
            The configuration being built.

        Raises
        ------
        ValueError
            If the strategy cannot serve ``config`` (here: never).
        """


# --- the initial release -------------------------------------------------------------------


class Start(Strategy, ABC):
    """The initial centroids (R, k, d) of every replica. ``charged`` says whether it reads the
    data and pays for what it reads (then the loop opens the ledger scope "initialisation" and
    checks the centroids lie in the box).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import InitialRelease, PublicStart
    >>> PublicStart.charged, InitialRelease.charged
    (False, True)
    """

    charged: ClassVar[bool] = True

    @abstractmethod
    def __call__(self, ctx: HookContext) -> np.ndarray: ...


@dataclass(frozen=True)
class PublicStart(Start):
    """Data-independent initial centroids: ``initializer(bounds, k, rng)`` per replica, from
    that replica's generator (its first draws; :mod:`dpkmeans.engine.init`).

    Parameters
    ----------
    initializer : Initializer, default sphere_packing
        A data-independent initializer (:data:`dpkmeans.engine.init.INITIALIZERS`).

    Examples
    --------
    >>> from dpkmeans.engine.init import uniform_box
    >>> from dpkmeans.engine.strategies import PublicStart
    >>> PublicStart().name, PublicStart(uniform_box).name
    ('sphere_packing', 'uniform_box')
    """

    initializer: Initializer = sphere_packing
    charged: ClassVar[bool] = False

    @property
    def name(self) -> str:  # type: ignore[override]
        """The initializer's name."""
        return getattr(self.initializer, "__name__", type(self.initializer).__name__)

    def __call__(self, ctx: HookContext) -> np.ndarray:
        config = ctx.config
        return np.stack([self.initializer(config.bounds, config.n_clusters, g)
                         for g in ctx.public_rngs])


class InitialRelease(Start):
    """Initial centroids computed from the data (e.g. the noisy means of equal splits of Zhang,
    Liu and Wang 2018), releasing through ``ctx.release`` (charged before any noise is drawn);
    an as-published one records what it reads for free in ``ctx.ledger``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.strategies import InitialRelease
    >>> class Midpoints(InitialRelease):  # reads nothing: k copies of the box's midpoint
    ...     name = "midpoints"
    ...     def __call__(self, ctx):
    ...         lower, upper = ctx.config.bounds
    ...         return np.tile((lower + upper) / 2, (ctx.replicas, ctx.config.n_clusters, 1))
    >>> Midpoints().charged
    True
    """


# --- the budget allocation over clusters ---------------------------------------------------


class Allocation(Strategy):
    """How an iteration's budget eps_t is shared over clusters (add/remove adjacency: the
    clusters compose in parallel, so the iteration costs eps_t times the largest share).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import EQUAL_SHARES, AllocationRule
    >>> EQUAL_SHARES.public, AllocationRule.public
    (True, False)
    """

    #: True when the shares are public (planned before any data); False for a rule that
    #: computes them from released values in every iteration.
    public: ClassVar[bool] = True

    def of(self, n_clusters: int) -> np.ndarray:
        """The planned share of each of ``n_clusters`` clusters: equal shares, unless public
        shares say otherwise (a rule's weights come from released values, in the run).

        Parameters
        ----------
        n_clusters : int
            k.

        Returns
        -------
        numpy.ndarray
            The k shares.
        """
        return np.ones(n_clusters)

    def least(self) -> float:
        """The smallest planned share a cluster gets (1 with equal shares).

        Returns
        -------
        float
            The smallest share.
        """
        return 1.0


@dataclass(frozen=True, eq=False)
class FixedShares(Allocation):
    """Public shares in (0, 1], the largest 1 (``None``: every cluster the whole eps_t).

    Parameters
    ----------
    shares : array_like or None, default None
        One share per cluster, or None for equal shares.
    name : str, default "fixed shares"
        The strategy's name.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.strategies import FixedShares
    >>> shares = FixedShares(np.array([1.0, 0.5, 0.5]))
    >>> shares.of(3), shares.least()
    (array([1. , 0.5, 0.5]), 0.5)
    """

    shares: np.ndarray | None = None
    name: str = "fixed shares"

    def __post_init__(self) -> None:
        if self.shares is not None:
            object.__setattr__(self, "shares", np.asarray(self.shares, dtype=float))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FixedShares):
            return NotImplemented
        if self.shares is None or other.shares is None:
            return self.shares is None and other.shares is None
        return bool(np.array_equal(self.shares, other.shares))

    def __hash__(self) -> int:
        return hash(None if self.shares is None else self.shares.tobytes())

    def of(self, n_clusters: int) -> np.ndarray:
        return np.ones(n_clusters) if self.shares is None else self.shares

    def least(self) -> float:
        return 1.0 if self.shares is None else float(self.shares.min())

    def check(self, config: DPLloydConfig) -> None:
        if self.shares is None:
            return
        shares = self.shares
        if shares.shape != (config.n_clusters,) or not np.all((shares > 0) & (shares <= 1)):
            raise ValueError("allocation must hold one share in (0, 1] per cluster")
        if shares.max() != 1.0:
            raise ValueError(f"allocation must give its largest share 1 (the most expensive "
                             f"cluster spends the iteration's budget), got max "
                             f"{shares.max():g}: divide the shares by their maximum")
        if config.neighbour == "replace":
            raise ValueError("allocation needs add/remove adjacency: under replace a record "
                             "touches two clusters, so per-cluster budgets do not compose "
                             "in parallel")


#: Every cluster spends the iteration's whole budget (the default).
EQUAL_SHARES = FixedShares()


class AllocationRule(Allocation, ABC):
    """Per-cluster weights (R, k) of an iteration, all > 0, from released quantities (e.g. the
    silhouette-weighted budgets of Zhang, Liu and Wang 2018); releases through
    ``ctx.release`` (charged before any noise is drawn) and, in an as-published variant,
    records its leaks in ``ctx.ledger``. Cluster j's release gets eps_t w_j and the iteration
    costs eps_t max_j w_j.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.strategies import AllocationRule
    >>> class Equal(AllocationRule):  # reads nothing: every cluster the whole eps_t
    ...     name = "equal"
    ...     def weights(self, ctx):
    ...         return np.ones((ctx.replicas, ctx.config.n_clusters))
    >>> config = DPLloydConfig(2, ([0.0], [1.0]), [0.5, 0.5], allocation=Equal())
    >>> config.allocation.public
    False
    """

    public: ClassVar[bool] = False

    @abstractmethod
    def weights(self, ctx: HookContext) -> np.ndarray:
        """The weights of the iteration ``ctx.iteration``.

        Parameters
        ----------
        ctx : HookContext
            The run's state before the iteration's release.

        Returns
        -------
        numpy.ndarray
            (R, k) weights, all > 0.
        """

    def planned_entries(self, config: DPLloydConfig, eps_t: float) -> list[Entry]:
        """The ledger entries of the rule's own releases in an iteration of budget ``eps_t``,
        from the configuration alone (tight planning, :func:`dpkmeans.engine.planning.
        plan_releases`). A rule that does not declare them cannot be planned.

        Parameters
        ----------
        config : DPLloydConfig
            The configuration.
        eps_t : float
            The iteration's budget.

        Returns
        -------
        list of Entry

        Raises
        ------
        ValueError
            Unless the rule declares its releases.
        """
        raise ValueError(f"the allocation rule {self.name!r} does not declare its releases "
                         "(planned_entries), so its spend cannot be planned")

    def check(self, config: DPLloydConfig) -> None:
        if not isinstance(config.step, JointRelease):
            raise ValueError("an allocation rule needs the joint release of (S_j, n_j)")
        if config.neighbour != "add/remove":
            raise ValueError("an allocation rule needs add/remove adjacency (parallel "
                             "composition over clusters)")


# --- the per-iteration release -------------------------------------------------------------


class ReleaseSpec(NamedTuple):
    """One release of a cluster's (d + 1)-vector (S_j, n_j): its label, the columns it covers,
    its sensitivity and the epsilon it really spends.

    Parameters
    ----------
    label : str
        The ledger entry's label.
    columns : slice
        The columns of (S_j, n_j) it covers.
    sensitivity : float
        The sensitivity of those columns.
    epsilon : float
        The epsilon it spends.
    parts : tuple of float, default ()
        For Laplace noise: each column's own bound, when the bounds hold together for every
        neighbouring pair and add up to ``sensitivity`` (the ledger then accounts the release
        by its elements, :class:`dpkmeans.privacy.tight.Release`); empty otherwise.

    Examples
    --------
    >>> from dpkmeans.engine.strategies import ReleaseSpec
    >>> ReleaseSpec("n_j", slice(2, 3), 1.0, 0.25)
    ReleaseSpec(label='n_j', columns=slice(2, 3, None), sensitivity=1.0, epsilon=0.25, parts=())
    """

    label: str
    columns: slice
    sensitivity: float
    epsilon: float
    parts: tuple[float, ...] = ()


class IterationRelease(Strategy, ABC):
    """How one iteration releases every cluster's exact (S_j, n_j): the releases
    (:meth:`specs`: columns, sensitivity, epsilon; public, from the configuration only),
    whether the iterations are noised at all (``noised``), whether one draw per cluster goes
    to every column (``shared``), and any post-processing of the noisy statistics
    (:meth:`after_release`).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import JointRelease
    >>> JointRelease.noised, JointRelease.shared
    (True, False)
    """

    noised: ClassVar[bool] = True
    shared: ClassVar[bool] = False

    @abstractmethod
    def specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        """The releases of one cluster in an iteration with budget ``eps_t``.

        Parameters
        ----------
        config : DPLloydConfig
            The configuration.
        eps_t : float
            The iteration's budget (of a cluster with share 1).

        Returns
        -------
        list of ReleaseSpec
            The releases, together covering the columns of (S_j, n_j) that get noise.
        """

    def after_release(self, stats: np.ndarray, noisy: np.ndarray) -> np.ndarray:
        """Post-processing of the noisy statistics (R, k, d + 1) given the exact ones.

        Parameters
        ----------
        stats : numpy.ndarray
            The exact statistics, (R, k, d + 1).
        noisy : numpy.ndarray
            The noisy statistics, (R, k, d + 1).

        Returns
        -------
        numpy.ndarray
            The statistics of the update (here ``noisy``, as they are).
        """
        return noisy


@dataclass(frozen=True)
class JointRelease(IterationRelease):
    """One release of each cluster's whole (S_j, n_j) (DPLloyd; DP-KCCM, Ni et al. 2021):
    Laplace noise at the L1 sensitivity of the Lloyd query, Gaussian at its L2 sensitivity,
    colored Gaussian on the whitened vector (book chapter 9). Under replace adjacency the
    release covers all clusters at once with the joint sensitivity.

    Parameters
    ----------
    name : str, default "joint"
        The strategy's name.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.strategies import JointRelease
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> JointRelease().specs(config, 0.5)  # doctest: +NORMALIZE_WHITESPACE
    [ReleaseSpec(label='(S_j, n_j)', columns=slice(0, 3, None), sensitivity=2.0, epsilon=0.5,
                 parts=(0.5, 0.5, 1.0))]
    """

    name: str = "joint"

    def specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        lower, upper = config.bounds
        d = lower.size
        per_dim = coordinate_bounds(config.bounds, config.centred)
        if config.noise.whitened:  # the whitened vector: |(x_i - m_i) / sqrt(r_i)|^2 <= r_i
            return [ReleaseSpec("(S_j, n_j) whitened: colored noise, covariance prop. to "
                                "diag(r, 1)", slice(0, d + 1),
                                float(np.sqrt(np.sum(per_dim) + 1.0)), eps_t)]
        if config.noise.norm == 2:
            l2 = float(np.sqrt(np.sum(per_dim**2) + 1.0))
            if config.neighbour == "replace":
                l2 = max(float(np.linalg.norm(upper - lower)), np.sqrt(2.0) * l2)
            return [ReleaseSpec("(S_j, n_j)", slice(0, d + 1), l2, eps_t)]
        return self.laplace_specs(config, eps_t)

    def laplace_specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        """The Laplace release of the numeric columns' (S_j, n_j) (the one-hot blocks of a
        mixed layout are released by the mode release).

        Parameters
        ----------
        config : DPLloydConfig
            The configuration.
        eps_t : float
            The iteration's budget.

        Returns
        -------
        list of ReleaseSpec
            The one release, at the L1 sensitivity of the Lloyd query.
        """
        sens = lloyd_query_sensitivity(config.numeric_bounds, config.neighbour,
                                       centred=config.centred)
        delta1 = sens.joint if config.neighbour == "replace" else sens.per_cluster
        d = config.bounds[0].size
        return [ReleaseSpec("(S_j, n_j)", slice(config.numeric_offset, d + 1), delta1, eps_t,
                            _element_bounds(config, delta1))]


def _element_bounds(config: DPLloydConfig, delta1: float) -> tuple[float, ...]:
    """Under add/remove adjacency, the bound of each element of one cluster's numeric
    (S_j, n_j): a record at a corner of the box moves every sum coordinate by its bound and the
    count by 1 at once, and they add up to the L1 sensitivity, so the Laplace release is the
    composition of its elements' (book chapter 3, "Tight composition"). Empty under replace
    adjacency (a record that stays in its cluster moves one sum by twice its bound)."""
    if config.neighbour != "add/remove":
        return ()
    parts = (*map(float, coordinate_bounds(config.numeric_bounds, config.centred)), 1.0)
    return parts if abs(sum(parts) - delta1) <= 1e-12 * delta1 else ()


@dataclass(frozen=True)
class SuSplit(IterationRelease):
    """DPLloyd-Impr (Su et al. 2016): the count and each sum dimension released separately,
    count : dimension = cbrt(4 d rho^2) : 1 (:func:`dpkmeans.engine.schedules.su_split`).

    Parameters
    ----------
    rho : float, default ``SU_RHO["[-1,1]"]``
        The typical |centroid coordinate| factor (finite, > 0).
    name : str, default "su"
        The strategy's name.

    Raises
    ------
    ValueError
        If ``rho`` is not finite and > 0.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.strategies import SuSplit
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5], step=SuSplit())
    >>> [(s.label, s.sensitivity, round(s.epsilon, 4)) for s in config.step.specs(config, 0.5)]
    [('n_j', 1.0, 0.135), ('S_j[0]', 0.5, 0.1825), ('S_j[1]', 0.5, 0.1825)]
    """

    rho: float = SU_RHO["[-1,1]"]
    name: str = "su"

    def __post_init__(self) -> None:
        rho = check_real(self.rho, "rho")
        if not (np.isfinite(rho) and rho > 0):
            raise ValueError(f"rho must be finite and > 0, got {self.rho!r}")

    def shares(self, eps_t: float, d: int) -> tuple[float, float]:
        """The count's and each dimension's epsilon.

        Parameters
        ----------
        eps_t : float
            The iteration's budget.
        d : int
            The dimension.

        Returns
        -------
        tuple of float
            ``(epsilon_count, epsilon_per_dimension)``.
        """
        return su_split(eps_t, d, self.rho)

    def specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        d = config.bounds[0].size
        per_dim = coordinate_bounds(config.bounds, config.centred)
        eps_count, eps_dim = self.shares(eps_t, d)
        factor = 2.0 if config.neighbour == "replace" else 1.0
        out = [ReleaseSpec("n_j", slice(d, d + 1), factor, eps_count)]
        out += [ReleaseSpec(f"S_j[{i}]", slice(i, i + 1), factor * float(per_dim[i]), eps_dim)
                for i in range(d)]
        return out

    def check(self, config: DPLloydConfig) -> None:
        if config.noise.norm != 1 or config.noise.needs_delta:
            raise ValueError("the 'su' split is defined for Laplace noise only")


# --- the stopping rule ---------------------------------------------------------------------


class StopMonitor:
    """One run's state of a stopping rule. The loop asks it, in every iteration, which active
    replicas stop before their release (:meth:`before_release`, from the exact statistics) and
    which stop after their update (:meth:`after_update`, from released centroids), and at the
    end what to note in the ledger (:meth:`note`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.strategies import StopMonitor
    >>> StopMonitor().note(np.array([3, 3])) is None
    True
    """

    def before_release(self, t: int, idx: np.ndarray, sums: np.ndarray,
                       counts: np.ndarray) -> np.ndarray | None:
        """Per active replica (``idx``), True where it stops before iteration t's release.

        Parameters
        ----------
        t : int
            The iteration (1-based).
        idx : numpy.ndarray
            The active replicas.
        sums : numpy.ndarray
            Their exact sums, (R', k, d).
        counts : numpy.ndarray
            Their exact counts, (R', k).

        Returns
        -------
        numpy.ndarray or None
            (R',) booleans, or None: none stops.
        """
        return None

    def after_update(self, updated: np.ndarray, previous: np.ndarray) -> np.ndarray | None:
        """Per active replica, True where it stops after this iteration's update.

        Parameters
        ----------
        updated : numpy.ndarray
            The active replicas' released centroids after the update, (R', k, d).
        previous : numpy.ndarray
            Their centroids before it, (R', k, d).

        Returns
        -------
        numpy.ndarray or None
            (R',) booleans, or None: none stops.
        """
        return None

    def note(self, iterations_run: np.ndarray) -> str | None:
        """The post-processing note of a run in which some replica stopped early.

        Parameters
        ----------
        iterations_run : numpy.ndarray
            The iterations each replica ran, (R,).

        Returns
        -------
        str or None
            The note, or None for no note.
        """
        return None


class StopRule(Strategy):
    """When a replica stops before the end of its schedule (the default: never).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import RunWholeSchedule
    >>> RunWholeSchedule().monitor(2, 3, 3).after_update(None, None) is None
    True
    """

    def monitor(self, replicas: int, n_clusters: int, width: int) -> StopMonitor:
        """A fresh monitor for one run of ``replicas`` replicas of (k, d + 1) statistics.

        Parameters
        ----------
        replicas : int
            R.
        n_clusters : int
            k.
        width : int
            d + 1, the width of a cluster's statistics.

        Returns
        -------
        StopMonitor
            The run's monitor.
        """
        return StopMonitor()


@dataclass(frozen=True)
class RunWholeSchedule(StopRule):
    """Every replica runs every iteration of the schedule.

    Parameters
    ----------
    name : str, default "whole schedule"
        The strategy's name.

    Examples
    --------
    >>> from dpkmeans.engine.strategies import RunWholeSchedule
    >>> RunWholeSchedule()
    RunWholeSchedule(name='whole schedule')
    """

    name: str = "whole schedule"


@dataclass(frozen=True)
class ShiftBelow(StopRule):
    """Stop a replica once no centroid moves by ``threshold`` or more (its released centroids:
    post-processing).

    Parameters
    ----------
    threshold : float
        The shift below which a replica stops (finite, >= 0).
    name : str, default "shift below"
        The strategy's name.

    Raises
    ------
    ValueError
        If ``threshold`` is not finite and >= 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.strategies import ShiftBelow
    >>> monitor = ShiftBelow(0.1).monitor(2, 3, 3)
    >>> monitor.after_update(np.zeros((2, 3, 2)), np.stack([np.zeros((3, 2)), np.ones((3, 2))]))
    array([ True, False])
    """

    threshold: float
    name: str = "shift below"

    def __post_init__(self) -> None:
        thr = check_real(self.threshold, "threshold")
        if not (np.isfinite(thr) and thr >= 0):
            raise ValueError(f"the stop threshold must be finite and >= 0, got {thr}")

    def monitor(self, replicas: int, n_clusters: int, width: int) -> StopMonitor:
        return _ShiftMonitor(self.threshold)


class _ShiftMonitor(StopMonitor):
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def after_update(self, updated: np.ndarray, previous: np.ndarray) -> np.ndarray:
        return np.linalg.norm(updated - previous, axis=2).max(axis=1) < self.threshold

    def note(self, iterations_run: np.ndarray) -> str:
        return (f"stop a replica once no centroid moves by {self.threshold:g} or more (its "
                f"released centroids); iterations run: {iterations_run.min()} to "
                f"{iterations_run.max()}")


# --- the output release --------------------------------------------------------------------


class Output(Strategy):
    """Turns the loop's final centroids (``ctx.centroids``, (R, k, d)) and noisy counts (R, k)
    into the published centroids (the default: as they are). ``charged`` says whether it
    releases noise of its own (then its spend is what the data decide).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import OutputRelease, PublishAsIs
    >>> PublishAsIs.charged, OutputRelease.charged
    (False, True)
    """

    charged: ClassVar[bool] = False

    def publish(self, ctx: HookContext, noisy_counts: np.ndarray) -> np.ndarray:
        """The published centroids (here the loop's final ones, as they are).

        Parameters
        ----------
        ctx : HookContext
            The run's state after the last iteration.
        noisy_counts : numpy.ndarray
            The last iteration's noisy counts, (R, k).

        Returns
        -------
        numpy.ndarray
            The published centroids, (R, k', d).
        """
        return ctx.centroids


@dataclass(frozen=True)
class PublishAsIs(Output):
    """The loop's final centroids are the release.

    Parameters
    ----------
    name : str, default "as is"
        The strategy's name.

    Examples
    --------
    >>> from dpkmeans.engine.strategies import PublishAsIs
    >>> PublishAsIs()
    PublishAsIs(name='as is')
    """

    name: str = "as is"


@dataclass(frozen=True)
class PostProcess(Output):
    """A post-processing of the loop's release: ``function(centroids, noisy_counts)`` (e.g.
    DP-KCCM's merge of n k noisy clusters down to k, Ni et al. 2021, eq. 12); recorded in the
    ledger at no cost.

    Parameters
    ----------
    function : callable
        ``function(centroids, noisy_counts)``: (R, k, d) and (R, k) to (R, k', d).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import PostProcess
    >>> def first_cluster(centroids, noisy_counts):
    ...     return centroids[:, :1]
    >>> PostProcess(first_cluster).name
    'first_cluster'
    """

    function: Callable[[np.ndarray, np.ndarray], np.ndarray]

    @property
    def name(self) -> str:  # type: ignore[override]
        """The function's name ("custom" without one)."""
        return getattr(self.function, "__name__", "custom")

    def publish(self, ctx: HookContext, noisy_counts: np.ndarray) -> np.ndarray:
        released = self.function(ctx.centroids, noisy_counts)
        ctx.ledger.post_process(f"final release: {self.name}")
        return released


class OutputRelease(Output, ABC):
    """The published centroids (R, k', d) from the loop's final ones with noise of its own,
    released through ``ctx.release`` (charged first, in the ledger scope "output release";
    leaks recorded in ``ctx.ledger``), e.g. the one-shot colored noise of Ravi, Scaglione and
    Peisert (2021).

    Examples
    --------
    >>> from dpkmeans.engine.strategies import OutputRelease
    >>> class Unchanged(OutputRelease):  # releases nothing more: the loop's centroids
    ...     name = "unchanged"
    ...     def __call__(self, ctx):
    ...         return ctx.centroids
    >>> Unchanged().charged
    True
    """

    charged: ClassVar[bool] = True

    @abstractmethod
    def __call__(self, ctx: HookContext) -> np.ndarray: ...

    def publish(self, ctx: HookContext, noisy_counts: np.ndarray) -> np.ndarray:
        with ctx.ledger.sequential("output release"):
            return self(ctx)

