"""Noise mechanisms: Laplace, Gaussian (classic and analytic calibration), exponential.

Every draw of privacy noise in dpkmeans goes through this module (docs/design.md, "Privacy
rules"): :func:`release` charges the ledger and draws the noise in one call, the ledger first, so
a release the budget refuses draws nothing. Its batched forms draw a whole DP-Lloyd iteration in
one vectorised call (:func:`release_plan`) and the exponential mechanism over many groups
(:func:`release_choices`); :func:`unit_noise` draws the continuous sampler's unit noise up front,
before any release scales it. ``tests/test_privacy_boundary.py`` fails when code outside the
privacy modules draws random numbers on the private path.

The mechanisms below take an explicit ``numpy.random.Generator`` and a keyword-only ``ledger``:
pass a :class:`~dpkmeans.privacy.accounting.PrivacyLedger` to record the draw (it is charged *before*
the noise is drawn, so an over-budget draw never happens), or ``ledger=None`` to say, in the
code, that this call is a demonstration that is not accounted.

Laplace and Gaussian noise is exact and floating-point safe by default (``sampler="discrete"``:
:mod:`dpkmeans.privacy.noise`); ``sampler="continuous"`` is numpy's float64 sampler, as the papers used
it, and a ledger records it as a leak. The exponential mechanism is exact too: the utility is
rounded to a public grid and the index drawn with integer arithmetic only
(:func:`dpkmeans.privacy.discrete.exponential_choice`), so no candidate is ever impossible; a sampler
that reads float64 probabilities off a cumulative sum never returns a candidate below about
2**-53 (book chapter 6).

The Gaussian calibrations (classic and analytic) live in :mod:`dpkmeans.privacy.gaussian` and are
re-exported here.

Book: chapter 1 (Laplace), chapter 2 (Gaussian), chapter 3 (accounting), chapter 6 (floats).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.discrete import exponential_choice, exponential_choices
from dpkmeans.privacy.gaussian import (  # noqa: F401 (importable here)
    calibrate_noise_multiplier,
    gaussian_delta,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    gaussian_tail_at,
)
from dpkmeans.privacy.noise import (
    NOISE_KINDS,
    CovarianceNoise,
    NoiseCalibration,
    NoisePlan,
    perturb,
    perturb_elements,
)
from dpkmeans.privacy.noise_types import (
    DISCRETE_LAPLACE,
    GAUSSIAN,
    NoiseType,
    noise_type,
    power_of_two_below,
)
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import (
    check_delta,
    check_epsilon,
    check_finite_vector,
    check_generator,
    check_positive_int,
    check_sensitivity,
)

__all__ = [
    "laplace_scale",
    "laplace_mechanism",
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_delta",
    "gaussian_mechanism",
    "exponential_probabilities",
    "exponential_grid",
    "exponential_mechanism",
    "charge",
    "Entry",
    "Parallel",
    "Charges",
    "entry",
    "charge_all",
    "release",
    "release_plan",
    "release_choices",
    "unit_noise",
    "NOISE_KINDS",
]


def _as_value(value: ArrayLike) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError("value must be a real number or an array of real numbers") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError("value must contain only finite numbers")
    return arr


def _output_shape(value: np.ndarray, repeats: int | None) -> tuple[int, ...]:
    if repeats is None:
        return value.shape
    return (check_positive_int(repeats, "repeats"), *value.shape)


def _repeat_factor(repeats: int | None) -> int:
    return 1 if repeats is None else int(repeats)


def _entry_details(details: Mapping[str, Any] | None, repeats: int | None) -> dict[str, Any]:
    out = dict(details or {})
    if repeats is not None:
        out["repeats"] = int(repeats)
    return out


# --- Laplace ----------------------------------------------------------------------------
def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """The scale b = Delta_1 / epsilon of the Laplace mechanism (book Thm. 1.1).

    Parameters
    ----------
    sensitivity : float
        The L1 sensitivity Delta_1 of the query (>= 0).
    epsilon : float
        The privacy budget (> 0).

    Returns
    -------
    float
        The noise scale b.

    Raises
    ------
    ValueError
        If ``sensitivity`` is negative or ``epsilon`` is not positive and finite.

    Examples
    --------
    >>> from dpkmeans.privacy.mechanisms import laplace_scale
    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    return check_sensitivity(sensitivity) / check_epsilon(epsilon)


def laplace_mechanism(
    value: ArrayLike,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None,
    label: str = "",
    repeats: int | None = None,
    details: Mapping[str, Any] | None = None,
    sampler: str = "discrete",
    integer_valued: bool = False,
) -> np.ndarray:
    """Release ``value + Lap(sensitivity / epsilon)`` noise on every coordinate.

    ``sensitivity`` is the L1 sensitivity of the whole vector ``value`` under the
    ledger's neighbour relation; the release is epsilon-DP (book chapter 1). With
    ``repeats=R`` the result has a leading axis of R independent releases, and the
    ledger is charged for their sequential composition, R * epsilon. ``details`` are
    stored with the ledger entry.

    ``sampler="discrete"`` (default) draws exact discrete Laplace noise on a public
    grid (:mod:`dpkmeans.privacy.noise`; the scale is rounded up by at most a few parts in
    10^9); ``"continuous"`` is numpy's float64 sampler (recorded as a leak).
    ``integer_valued`` says the value is a count: it then sits exactly on the grid
    (checked).

    Parameters
    ----------
    value : array_like
        The exact value of the query (finite).
    sensitivity : float
        The L1 sensitivity of the whole vector (>= 0).
    epsilon : float
        The privacy budget of one release (> 0).
    rng : numpy.random.Generator
        The source of the noise.
    ledger : PrivacyLedger or None
        Charged before the noise is drawn; ``None`` for a demonstration that is not
        accounted.
    label : str, default ""
        The ledger entry's label.
    repeats : int or None, default None
        R independent releases along a new leading axis, charged R times epsilon.
    details : mapping or None, default None
        Stored with the ledger entry.
    sampler : {"discrete", "continuous"}, default "discrete"
        The exact sampler on a public grid, or numpy's float64 sampler (recorded as a leak).
    integer_valued : bool, default False
        The value is a count (integers; checked).

    Returns
    -------
    ndarray
        ``value`` plus the noise, shape ``value``'s (with a leading axis of R for ``repeats``).

    Raises
    ------
    dpkmeans.errors.BudgetExceededError
        If the ledger's budget would be exceeded (nothing is drawn).
    ValueError, TypeError
        If an input is out of range or not a number.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import laplace_mechanism
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> laplace_mechanism([10.0, 20.0], 1.0, 0.5, np.random.default_rng(0), ledger=ledger,
    ...                   label="sums")
    array([ 8.98027705, 23.4113711 ])
    >>> print(ledger.total())
    epsilon=0.5
    >>> laplace_mechanism([7.0], 1.0, 0.5, np.random.default_rng(0), ledger=None, repeats=3)
    array([[8.21110992],
           [8.72795851],
           [8.27851102]])
    """
    arr = _as_value(value)
    cal = DISCRETE_LAPLACE.with_sampler(sampler).calibrate(
        sensitivity, epsilon, coordinates=max(arr.size, 1), integer_valued=integer_valued)
    return _release_one(arr, cal, rng, ledger=ledger, label=label, repeats=repeats,
                        details=details, integer_valued=integer_valued)


def _release_one(arr: np.ndarray, cal: NoiseCalibration, rng: np.random.Generator, *,
                 ledger: PrivacyLedger | None, label: str, repeats: int | None,
                 details: Mapping[str, Any] | None, integer_valued: bool = False) -> np.ndarray:
    """Charge ``repeats`` (or one) release(s) of ``arr`` to the ledger, then draw them."""
    rng = check_generator(rng)
    shape = _output_shape(arr, repeats)
    return release(ledger, cal, np.broadcast_to(arr, shape)[None], [rng], label=label,
                   details=_entry_details(details, repeats), times=_repeat_factor(repeats),
                   integer_valued=integer_valued)[0]


# --- one charge, then one draw ------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One ledger entry of a release: what :meth:`~dpkmeans.privacy.accounting.PrivacyLedger.charge`
    records, and a ``leak`` recorded right after it (a continuous sampler's).

    Parameters
    ----------
    mechanism : str
        The mechanism's name.
    epsilon : float
        The entry's epsilon.
    sensitivity : float
        The sensitivity the noise is calibrated to.
    scale : float
        The noise scale.
    delta : float, default 0.0
        The entry's delta.
    label : str, default ""
        What is released.
    details : mapping or None, default None
        Stored with the entry.
    leak : str or None, default None
        A leak to record right after the entry.
    release : Release or None, default None
        What the release is, for tight composition (:meth:`NoiseCalibration.release
        <dpkmeans.privacy.noise_types.NoiseCalibration.release>`).

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import Entry, charge_all
    >>> ledger = PrivacyLedger()
    >>> charge_all(ledger, [Entry("Laplace (continuous)", 0.5, 2.0, 4.0, label="sums",
    ...                           leak="float64 noise")])
    >>> print(ledger.total())
    epsilon=0.5
    >>> ledger.is_private
    False
    """

    mechanism: str
    epsilon: float
    sensitivity: float
    scale: float
    delta: float = 0.0
    label: str = ""
    details: Mapping[str, Any] | None = None
    leak: str | None = None
    release: Release | None = None


@dataclass(frozen=True)
class Parallel:
    """Ledger entries that compose in parallel: ``parts`` holds (name, entries) per disjoint
    subset of the records (e.g. one cluster each, under add/remove adjacency), recorded in a
    parallel scope called ``name``. The same entry may serve many parts.

    Parameters
    ----------
    name : str
        The name of the parallel scope.
    parts : sequence of (str, sequence of Entry)
        Each disjoint part's name and entries.

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import Entry, Parallel, charge_all
    >>> sums = Entry("Laplace (discrete)", 0.5, 2.0, 4.0, label="(S_j, n_j)")
    >>> ledger = PrivacyLedger()
    >>> charge_all(ledger, Parallel("iteration 1", [("cluster 0", [sums]), ("cluster 1", [sums])]))
    >>> print(ledger.total())
    epsilon=0.5
    >>> [e.scope for e in ledger.entries]
    ['iteration 1[parallel] > cluster 0', 'iteration 1[parallel] > cluster 1']
    """

    name: str
    parts: Sequence[tuple[str, Sequence[Entry]]]


#: What a release charges: entries in sequence, or in parallel over disjoint parts.
Charges = Sequence[Entry] | Parallel


def entry(cal: NoiseCalibration | CovarianceNoise, *, label: str = "",
          details: Mapping[str, Any] | None = None, times: int = 1,
          parts: tuple[float, ...] = ()) -> Entry:
    """The ledger entry of ``times`` releases calibrated by ``cal`` (sequential composition); a
    continuous (float64) sampler also records a leak.

    Parameters
    ----------
    cal : NoiseCalibration or CovarianceNoise
        The calibration of one release.
    label : str, default ""
        What is released.
    details : mapping or None, default None
        Added to the calibration's details.
    times : int, default 1
        The number of releases (epsilon times ``times``; delta too, at most 1).
    parts : tuple of float, default ()
        For Laplace noise on a vector, its elements' bounds when they hold together and add
        up to the calibration's sensitivity: the tight release is then accounted by its
        elements (:class:`dpkmeans.privacy.tight.Release`, ``parts``).

    Returns
    -------
    Entry
        The entry, not yet recorded (:func:`charge_all` records it).

    Examples
    --------
    >>> from dpkmeans.privacy.mechanisms import entry
    >>> from dpkmeans.privacy.noise import calibrate
    >>> e = entry(calibrate("laplace", 1.0, 0.5), label="count", times=2)
    >>> e.mechanism, e.epsilon, e.leak
    ('Laplace (discrete)', 1.0, None)
    """
    release = cal.release(times) if isinstance(cal, NoiseCalibration) else None
    extra: dict[str, Any] = {}
    if parts and release is not None and release.kind == "laplace":
        release = replace(release, parts=tuple(
            release.epsilon * p / cal.sensitivity for p in parts))
        extra["element bounds"] = tuple(float(p) for p in parts)
    return Entry(cal.mechanism, times * cal.epsilon, cal.sensitivity, cal.scale,
                 min(times * cal.delta, 1.0), label,
                 {**cal.details(), **dict(details or {}), **extra}, cal.leak, release)


def charge_all(ledger: PrivacyLedger, charges: Charges) -> None:
    """Record ``charges`` in order (each before its noise is drawn): a sequence of entries, or a
    :class:`Parallel` set (one ``ledger.part`` per part, inside one parallel scope).

    Parameters
    ----------
    ledger : PrivacyLedger
        The ledger to charge.
    charges : sequence of Entry, or Parallel
        What to record.

    Raises
    ------
    dpkmeans.errors.BudgetExceededError
        If an entry would exceed the budget (the entries before it stay recorded).

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import Entry, charge_all
    >>> ledger = PrivacyLedger()
    >>> charge_all(ledger, [Entry("Laplace (discrete)", 0.25, 1.0, 4.0, label="count"),
    ...                     Entry("Laplace (discrete)", 0.75, 2.0, 8 / 3, label="sums")])
    >>> print(ledger.total())
    epsilon=1
    """
    if not isinstance(charges, Parallel):
        for e in charges:
            _record(ledger, e)
        return
    with ledger.parallel(charges.name):
        for name, group in charges.parts:
            with ledger.part(name):
                for e in group:
                    _record(ledger, e)


def _record(ledger: PrivacyLedger, e: Entry) -> None:
    ledger.charge(e.mechanism, epsilon=e.epsilon, delta=e.delta, sensitivity=e.sensitivity,
                  scale=e.scale, label=e.label, details=e.details, release=e.release)
    if e.leak is not None:
        ledger.leak(e.leak)


def charge(ledger: PrivacyLedger, cal: NoiseCalibration | CovarianceNoise, *, label: str = "",
           details: Mapping[str, Any] | None = None, times: int = 1,
           parts: tuple[float, ...] = ()) -> None:
    """Record ``times`` releases calibrated by ``cal`` (sequential composition) *before* their
    noise is drawn; a continuous (float64) sampler is also recorded as a leak. Charging alone
    draws nothing (a plan of the spend); :func:`release` charges and draws.

    Parameters
    ----------
    ledger : PrivacyLedger
        The ledger to charge.
    cal : NoiseCalibration or CovarianceNoise
        The calibration of one release.
    label : str, default ""
        What is released.
    details : mapping or None, default None
        Added to the calibration's details.
    times : int, default 1
        The number of releases.
    parts : tuple of float, default ()
        Its elements' bounds, when they hold together for every neighbouring pair and add up
        to the calibration's sensitivity (:func:`entry`).

    Raises
    ------
    dpkmeans.errors.BudgetExceededError
        If the charge would exceed the ledger's budget (nothing is recorded).

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import charge
    >>> from dpkmeans.privacy.noise import calibrate
    >>> ledger = PrivacyLedger()
    >>> charge(ledger, calibrate("laplace", 1.0, 0.5), label="sums", times=3)
    >>> print(ledger.total())
    epsilon=1.5
    """
    _record(ledger, entry(cal, label=label, details=details, times=times, parts=parts))


def release(ledger: PrivacyLedger | None, calibration: NoiseCalibration | CovarianceNoise,
            values: ArrayLike, rngs: Sequence[np.random.Generator], *, label: str,
            details: Mapping[str, Any] | None = None, times: int = 1,
            integer_valued: bool = False, shared: bool = False,
            unit: np.ndarray | None = None, parts: tuple[float, ...] = ()) -> np.ndarray:
    """Charge ``ledger`` for the release of ``values`` calibrated by ``calibration``, then draw
    its noise: values (R, *S) plus noise, replica r's drawn from ``rngs[r]`` only.

    The ledger entry (``label``, ``details``; ``times`` releases in sequence) is recorded
    first: a release the ledger refuses (:class:`~dpkmeans.errors.BudgetExceededError`) draws
    nothing. ``ledger=None`` says, in the code, that the release is a demonstration that is
    not accounted.

    ``calibration`` is a :class:`~dpkmeans.privacy.noise.NoiseCalibration` (Laplace or Gaussian; the
    exact discrete sampler on its public grid, or numpy's float64 sampler, recorded as a leak)
    or a :class:`~dpkmeans.privacy.noise.CovarianceNoise` (a Gaussian covariance per replica).
    ``integer_valued`` promises integer values (counts: exactly on the grid). ``shared`` adds one
    draw per row of the last axis to all of its columns (an as-published flaw). ``unit``
    (continuous only) is unit-scale noise of the values' shape drawn up front
    (:func:`unit_noise`), scaled instead of drawing now.

    Parameters
    ----------
    ledger : PrivacyLedger or None
        Charged first; ``None`` for a demonstration that is not accounted.
    calibration : NoiseCalibration or CovarianceNoise
        The noise of one release.
    values : array_like
        The exact values, shape (R, *S): one row per replica.
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    label : str
        What is released (the ledger entry's label).
    details : mapping or None, default None
        Added to the calibration's details in the entry.
    times : int, default 1
        The number of releases the entry stands for (sequential composition).
    integer_valued : bool, default False
        The values are integers (counts; checked).
    shared : bool, default False
        One draw per row of the last axis, added to all of its columns.
    unit : ndarray or None, default None
        Unit-scale noise of the values' shape drawn earlier (continuous sampler only).
    parts : tuple of float, default ()
        Its elements' bounds, when they hold together for every neighbouring pair and add up
        to the calibration's sensitivity (:func:`entry`).

    Returns
    -------
    ndarray
        The noisy values, shape (R, *S).

    Raises
    ------
    ValueError
        If ``values`` has no leading axis of one row per generator (without ``unit``).
    dpkmeans.errors.BudgetExceededError
        If the ledger refuses the charge (nothing is drawn).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import release
    >>> from dpkmeans.privacy.noise import calibrate
    >>> cal = calibrate("laplace", 1.0, 0.5, coordinates=2)
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> release(ledger, cal, [[10.0, 20.0]], [np.random.default_rng(0)], label="sums")
    array([[ 8.98027705, 23.4113711 ]])
    >>> release(ledger, cal, [[10.0, 20.0]], [np.random.default_rng(0)], label="sums",
    ...         times=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpkmeans.errors.BudgetExceededError: Laplace (discrete) draw (sums) with epsilon=1, ...
    """
    values = np.asarray(values, dtype=float)
    if unit is None and (values.ndim == 0 or values.shape[0] != len(rngs)):
        raise ValueError(f"values need a leading axis of one row per generator ({len(rngs)}), "
                         f"got shape {values.shape}")
    if ledger is not None:
        charge(ledger, calibration, label=label, details=details, times=times, parts=parts)
    return perturb(values, calibration, rngs, integer_valued=integer_valued, shared=shared,
                   unit=unit)


def release_plan(ledger: PrivacyLedger, charges: Charges, values: np.ndarray, plan: NoisePlan,
                 rngs: Sequence[np.random.Generator], *,
                 unit: np.ndarray | None = None) -> np.ndarray:
    """A batched :func:`release`: record ``charges`` (:func:`charge_all`), then draw the noise
    of ``plan`` onto ``values`` (R, k, c) in one vectorised call for every element and replica
    (:func:`~dpkmeans.privacy.noise.perturb_elements`). A refused entry draws nothing. The engine
    releases one DP-Lloyd iteration this way (under add/remove, each cluster's entries in
    parallel over the clusters).

    Parameters
    ----------
    ledger : PrivacyLedger
        The ledger to charge first.
    charges : sequence of Entry, or Parallel
        What the release costs.
    values : ndarray
        The exact statistic, shape (R, k, c).
    plan : NoisePlan
        The noise of each element.
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    unit : ndarray or None, default None
        Unit-scale noise (R, k, c), required by a continuous plan.

    Returns
    -------
    ndarray
        The noisy statistic, shape (R, k, c).

    Raises
    ------
    dpkmeans.errors.BudgetExceededError
        If the ledger refuses an entry (nothing is drawn).

    Examples
    --------
    Two clusters' (S_j, n_j) on [0, 1] (centred sensitivity 1.5), in parallel:

    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import Parallel, entry, release_plan
    >>> from dpkmeans.privacy.noise import NoisePlan, calibrate
    >>> cal = calibrate("laplace", 1.5, 0.5, coordinates=2)
    >>> e = entry(cal, label="(S_j, n_j)")
    >>> plan = NoisePlan("laplace", "discrete", grid=np.full((2, 2), cal.grid),
    ...                  steps=np.full((2, 2), cal.noise_steps), scale=np.full((2, 2), cal.scale))
    >>> ledger = PrivacyLedger(budget=0.5)
    >>> release_plan(ledger, Parallel("iteration 1", [("cluster 0", [e]), ("cluster 1", [e])]),
    ...              np.array([[[1.5, 4.0], [-2.0, 6.0]]]), plan, [np.random.default_rng(0)])
    array([[[ 2.31398092,  4.28530551],
            [ 3.00880094, 12.56987444]]])
    >>> print(ledger.total())
    epsilon=0.5
    """
    charge_all(ledger, charges)
    return perturb_elements(values, plan, rngs, unit=unit)


def release_choices(ledger: PrivacyLedger, charges: Charges, gaps: Sequence[np.ndarray],
                    rngs: Sequence[np.random.Generator], *, coefficient: Fraction,
                    widths: np.ndarray) -> np.ndarray:
    """The exponential mechanism over many groups of candidates, for every replica: record
    ``charges``, then for replica r pick one candidate per group with P proportional to
    exp(-coefficient gap) from the integer utility gaps ``gaps[r]`` (groups of ``widths``
    candidates, back to back), exactly (:func:`~dpkmeans.privacy.discrete.exponential_choice`), from
    ``rngs[r]`` only, the replicas batched
    (:func:`~dpkmeans.privacy.discrete.exponential_choices`: the same draws as one call per
    replica). Returns the picks (R, groups). A refused entry draws nothing.

    Parameters
    ----------
    ledger : PrivacyLedger
        The ledger to charge first.
    charges : sequence of Entry, or Parallel
        What the release costs.
    gaps : sequence of ndarray
        Replica r's integer utility gaps (each candidate's distance to its group's best).
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    coefficient : fractions.Fraction
        c in exp(-c gap).
    widths : ndarray
        The number of candidates of each group.

    Returns
    -------
    ndarray
        The index picked within each group, shape (R, groups).

    Raises
    ------
    dpkmeans.errors.BudgetExceededError
        If the ledger refuses an entry (nothing is drawn).

    Examples
    --------
    >>> from fractions import Fraction
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import Entry, release_choices
    >>> ledger = PrivacyLedger()
    >>> release_choices(ledger, [Entry("exponential", 1.0, 1.0, 2.0, label="modes")],
    ...                 [np.array([3, 0, 1, 0, 2])], [np.random.default_rng(0)],
    ...                 coefficient=Fraction(1, 2), widths=np.array([3, 2]))
    array([[1, 0]])
    """
    charge_all(ledger, charges)
    # every replica at once, each its own sequential run's draws (exponential_choices)
    return exponential_choices(list(gaps), coefficient, widths, list(rngs))


def unit_noise(kind: NoiseType | str, rngs: Sequence[np.random.Generator],
               shape: tuple[int, ...]) -> np.ndarray:
    """Continuous sampler only: unit-scale float64 noise (Laplace or standard normal) of shape
    (R, *shape), replica r's from ``rngs[r]`` only, drawn up front for releases that scale it
    later (``release(..., unit=...)``, :func:`release_plan`). It depends on no data and is
    nothing until a charged release scales it; the engine draws a run's whole supply right
    after its initial centroids, so a replica's numbers do not depend on when it stops.

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian", "colored"}
        The noise type (or its name) whose float sampler draws: unit Laplace (scale 1) or
        standard normal noise.
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    shape : tuple of int
        The shape of one replica's noise.

    Returns
    -------
    ndarray
        Shape (R, *shape).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import release, unit_noise
    >>> from dpkmeans.privacy.noise import calibrate
    >>> unit = unit_noise("laplace", [np.random.default_rng(0)], (2,))
    >>> cal = calibrate("laplace", 1.0, 0.5, sampler="continuous")
    >>> ledger = PrivacyLedger()
    >>> noisy = release(ledger, cal, [[10.0, 20.0]], [], label="sums", unit=unit)
    >>> bool(np.all(noisy == np.array([[10.0, 20.0]]) + cal.scale * unit)), ledger.is_private
    (True, False)
    """
    return noise_type(kind).unit_noise(rngs, shape)


# --- Gaussian ---------------------------------------------------------------------------
def gaussian_mechanism(
    value: ArrayLike,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None,
    calibration: str | None = None,
    label: str = "",
    repeats: int | None = None,
    details: Mapping[str, Any] | None = None,
    sampler: str = "discrete",
) -> np.ndarray:
    """Release ``value + N(0, sigma^2 I)``, (epsilon, delta)-DP for L2 ``sensitivity``.

    ``sampler="discrete"`` (default): exact discrete Gaussian noise on a public grid, sigma from
    zCDP (:mod:`dpkmeans.privacy.noise`; ``calibration`` must be None or ``"zcdp"``).
    ``sampler="continuous"``: numpy's float64 normal (recorded as a leak), with ``calibration``
    ``"analytic"`` (Balle & Wang, exact, any epsilon; the default) or ``"classic"``
    (Dwork-Roth, epsilon < 1 only). ``repeats`` as in :func:`laplace_mechanism`.

    Parameters
    ----------
    value : array_like
        The exact value of the query (finite).
    sensitivity : float
        The L2 sensitivity of the whole vector (>= 0).
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The failure probability, in (0, 1).
    rng : numpy.random.Generator
        The source of the noise.
    ledger : PrivacyLedger or None
        Charged before the noise is drawn; ``None`` for a demonstration that is not
        accounted.
    calibration : {None, "zcdp", "analytic", "classic"}, default None
        How sigma is found: ``None`` or ``"zcdp"`` for the discrete sampler, ``None`` or
        ``"analytic"`` or ``"classic"`` for the continuous one.
    label : str, default ""
        The ledger entry's label.
    repeats : int or None, default None
        R independent releases along a new leading axis, charged R times epsilon.
    details : mapping or None, default None
        Stored with the ledger entry.
    sampler : {"discrete", "continuous"}, default "discrete"
        The exact sampler on a public grid, or numpy's float64 sampler (recorded as a leak).

    Returns
    -------
    ndarray
        ``value`` plus the noise (with a leading axis of R for ``repeats``).

    Raises
    ------
    ValueError
        If ``calibration`` does not fit the sampler, or an input is out of range.
    dpkmeans.errors.BudgetExceededError
        If the ledger's budget would be exceeded (nothing is drawn).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import gaussian_mechanism
    >>> ledger = PrivacyLedger()
    >>> gaussian_mechanism([1.0, 2.0], 1.0, 1.0, 1e-5, np.random.default_rng(0), ledger=ledger)
    array([6.60103607, 8.72801971])
    >>> ledger.entries[0].mechanism
    'Gaussian (discrete, zCDP)'
    >>> gaussian_mechanism([1.0], 1.0, 1.0, 1e-5, np.random.default_rng(0), ledger=None,
    ...                    calibration="classic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: calibration must be None or 'zcdp' with sampler='discrete', got 'classic' ...
    """
    noise = GAUSSIAN.with_sampler(sampler)
    arr = _as_value(value)
    if noise.exact:
        if calibration not in (None, "zcdp"):
            raise ValueError(f"calibration must be None or 'zcdp' with sampler='discrete', got "
                             f"{calibration!r} ('analytic' and 'classic' are continuous-noise "
                             "theorems: pass sampler='continuous')")
        cal = noise.calibrate(sensitivity, epsilon, delta, coordinates=max(arr.size, 1))
    elif calibration in (None, "analytic"):
        cal = noise.calibrate(sensitivity, epsilon, delta)
    elif calibration == "classic":
        cal = NoiseCalibration(noise, check_sensitivity(sensitivity), check_epsilon(epsilon),
                               check_delta(delta),
                               gaussian_sigma_classic(sensitivity, epsilon, delta))
    else:
        raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
    return _release_one(arr, cal, rng, ledger=ledger, label=label, repeats=repeats,
                        details=details)


# --- Exponential ------------------------------------------------------------------------
def _exponential_inputs(utility: ArrayLike, sensitivity: float,
                        epsilon: float) -> tuple[np.ndarray, float, float]:
    """The exponential mechanism's checked utility, sensitivity (> 0) and epsilon."""
    u = check_finite_vector(utility, "utility")
    sens = check_sensitivity(sensitivity)
    if sens == 0:
        raise ValueError("sensitivity of the utility must be > 0 for the exponential "
                         "mechanism")
    return u, sens, check_epsilon(epsilon)


def exponential_probabilities(utility: ArrayLike, sensitivity: float,
                              epsilon: float) -> np.ndarray:
    """P[z] proportional to exp(epsilon * q(z) / (2 Delta q)) for the utility q
    (McSherry-Talwar 2007; book ch. 1), in float64: for display and tests; the mechanism
    itself samples exactly (:func:`exponential_mechanism`).

    Parameters
    ----------
    utility : array_like
        One utility per candidate (finite, 1-D).
    sensitivity : float
        The utility's sensitivity Delta q (> 0).
    epsilon : float
        The privacy budget (> 0).

    Returns
    -------
    ndarray
        The probabilities, summing to 1.

    Raises
    ------
    ValueError
        If the sensitivity is 0, or an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.mechanisms import exponential_probabilities
    >>> exponential_probabilities([1.0, 5.0, 2.0], 1.0, 1.0).round(4)
    array([0.0996, 0.7361, 0.1643])
    """
    u, sens, eps = _exponential_inputs(utility, sensitivity, epsilon)
    logits = eps * u / (2.0 * sens)
    logits -= logits.max()
    weights = np.exp(logits)
    return weights / weights.sum()


#: Exponential-mechanism grid: g = 2^(floor(log2 Delta) - 20), so the utility's sensitivity in
#: grid steps, ceil(Delta / g) + 1, exceeds Delta / g by at most 2^-19 of it.
EXPONENTIAL_GRID_BITS = 20


def exponential_grid(utility: ArrayLike, sensitivity: float, epsilon: float, *,
                     integer_valued: bool = False) -> tuple[list[int], Fraction, dict[str, Any]]:
    """The exact exponential mechanism's integer inputs: each candidate's utility gap to the best
    in grid steps, the coefficient c = epsilon / (2 Delta_steps) of the weights exp(-c gap), and
    the ledger details.

    The grid g is a power of two chosen from ``sensitivity`` only (public). Rounding each utility
    to the nearest step moves it by at most half a step, so neighbouring utilities differ by at
    most Delta / g + 1 steps: the sensitivity in steps is ceil(Delta / g) + 1 (only adds noise).
    ``integer_valued`` promises integer utilities (counts): g then divides 1, they sit on the
    grid exactly and the sensitivity is not rounded up (checked).

    Parameters
    ----------
    utility : array_like
        One utility per candidate (finite, 1-D).
    sensitivity : float
        The utility's sensitivity Delta (> 0).
    epsilon : float
        The privacy budget (> 0).
    integer_valued : bool, default False
        The utilities are integers (checked).

    Returns
    -------
    gaps : list of int
        Each candidate's gap to the best, in grid steps.
    coefficient : fractions.Fraction
        c = epsilon / (2 Delta_steps).
    details : dict
        The sampler, the grid and the sensitivity on the grid, for the ledger.

    Raises
    ------
    ValueError
        If the sensitivity is 0, an input is out of range, or an integer-valued utility is not
        an integer.

    Examples
    --------
    >>> from dpkmeans.privacy.mechanisms import exponential_grid
    >>> gaps, coefficient, details = exponential_grid([1.0, 5.0, 2.0], 1.0, 1.0)
    >>> gaps, coefficient, details["grid"] == 2.0**-20
    ([4194304, 0, 3145728], Fraction(1, 2097154), True)
    """
    u, sens, eps = _exponential_inputs(utility, sensitivity, epsilon)
    exponent = power_of_two_below(sens) - EXPONENTIAL_GRID_BITS
    if integer_valued:
        if not np.all(u == np.round(u)):
            raise ValueError("integer_valued=True but the utility has a non-integer entry")
        exponent = min(exponent, 0)
    grid = Fraction(2) ** exponent
    scaled = np.ldexp(u, -exponent)  # exact unless it overflows
    if np.all(np.isfinite(scaled)):
        steps = [int(v) for v in np.rint(scaled).tolist()]
    else:
        steps = [round(Fraction(float(v)) / grid) for v in u.tolist()]
    best = max(steps)
    gaps = [best - v for v in steps]
    sens_steps = math.ceil(Fraction(sens) / grid) + (0 if integer_valued else 1)
    coefficient = Fraction(eps) / (2 * sens_steps)
    details = {"sampler": "exact (integer arithmetic, rejection from uniform proposals)",
               "grid": float(grid), "sensitivity on grid": float(sens_steps * grid)}
    return gaps, coefficient, details


def exponential_mechanism(
    utility: ArrayLike,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None,
    label: str = "",
    repeats: int | None = None,
    details: Mapping[str, Any] | None = None,
    integer_valued: bool = False,
) -> int | np.ndarray:
    """Pick an index of ``utility`` with the exponential mechanism, P[z] proportional to
    exp(epsilon q(z) / (2 Delta q)); epsilon-DP (McSherry and Talwar 2007; book chapter 1).

    Returns one index, or an array of ``repeats`` independent picks. The draw is exact
    (:func:`exponential_grid`, :func:`dpkmeans.privacy.discrete.exponential_choice`): the utility is
    rounded to a public grid and its sensitivity rounded up, so every candidate keeps a positive
    probability and the release is epsilon-DP for the stated sensitivity, as charged.
    ``integer_valued`` promises integer utilities (then no rounding slack). The draw's running
    time and the random words it uses depend on the utilities (rejection sampling, bounded in
    distribution: :func:`~dpkmeans.privacy.discrete.exponential_choice`); epsilon covers the
    index only, not a timing of the call.

    Parameters
    ----------
    utility : array_like
        One utility per candidate (finite, 1-D; higher is better).
    sensitivity : float
        The utility's sensitivity Delta q (> 0).
    epsilon : float
        The privacy budget of one pick (> 0).
    rng : numpy.random.Generator
        The source of the draw.
    ledger : PrivacyLedger or None
        Charged before the noise is drawn; ``None`` for a demonstration that is not
        accounted.
    label : str, default ""
        The ledger entry's label.
    repeats : int or None, default None
        R independent releases along a new leading axis, charged R times epsilon.
    details : mapping or None, default None
        Stored with the ledger entry.
    integer_valued : bool, default False
        The utilities are integers (checked).

    Returns
    -------
    int or ndarray
        The index picked, or an array of ``repeats`` indices.

    Raises
    ------
    ValueError
        If the sensitivity is 0, or an input is out of range.
    dpkmeans.errors.BudgetExceededError
        If the ledger's budget would be exceeded (nothing is drawn).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.mechanisms import exponential_mechanism
    >>> ledger = PrivacyLedger()
    >>> exponential_mechanism([1.0, 5.0, 2.0], 1.0, 1.0, np.random.default_rng(0), ledger=ledger)
    1
    >>> exponential_mechanism([1.0, 5.0, 2.0], 1.0, 1.0, np.random.default_rng(0), ledger=ledger,
    ...                       repeats=5)
    array([0, 1, 1, 1, 2])
    >>> print(ledger.total())
    epsilon=6
    """
    gaps, coefficient, grid_details = exponential_grid(utility, sensitivity, epsilon,
                                                       integer_valued=integer_valued)
    rng = check_generator(rng)
    if repeats is not None:
        check_positive_int(repeats, "repeats")
    if ledger is not None:
        r = _repeat_factor(repeats)
        ledger.charge("exponential", epsilon=r * epsilon, sensitivity=sensitivity,
                      scale=2.0 * sensitivity / epsilon, label=label,
                      release=Release("pure", epsilon=epsilon, times=r),
                      details={"range_size": len(gaps), **grid_details,
                               **_entry_details(details, repeats)})
    picks = exponential_choice(np.array(gaps, dtype=object), coefficient, [len(gaps)], rng,
                               groups=np.zeros(_repeat_factor(repeats), dtype=np.int64))
    return picks if repeats is not None else int(picks[0])



