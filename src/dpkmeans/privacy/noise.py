"""How a release's noise is calibrated and drawn (book chapter 6, "Floating-point-safe noise").

Two samplers:

* ``"discrete"`` (the default, floating-point safe). The value is rounded to a public grid
  g Z (g a power of two chosen from the sensitivity and the scale only), integer noise is drawn
  exactly by :mod:`dpkmeans.privacy.discrete` (discrete Laplace or discrete Gaussian, Canonne, Kamath
  and Steinke 2020), and the output is (round(value / g) + noise) g. Rounding moves each
  coordinate by at most half a step, so two neighbouring values that differ by Delta (L1) have
  rounded images that differ by at most Delta / g + c steps (c coordinates): the sensitivity is
  rounded *up* to ``sensitivity_steps`` and the noise parameter is rounded *up* to an integer
  number of steps. Both roundings only add noise; the ledger shows them (:meth:`details`).
  The output is an integer number of grid steps whatever the input: every output is possible
  under every input, so Mironov's attack on the low-order bits has nothing to read.
* ``"continuous"``: numpy's float64 Laplace and normal samplers, as every paper of the book used
  them. Not floating-point safe (Mironov 2012; the book measures 81-94% of outputs impossible
  under the neighbouring value): a ledger that records such a draw records a *leak*.

Laplace on the grid is exactly epsilon-DP for the rounded query (integer L1 sensitivity
``sensitivity_steps``, integer scale t >= sensitivity_steps / epsilon). The discrete Gaussian
with sigma^2 steps^2 is rho-zCDP with rho = Delta_2^2 / (2 sigma^2) (CKS20 Thm. 14), converted
to (epsilon, delta) by CKS20 Cor. 13 (:func:`zcdp_delta`); that conversion is valid for every
dimension, at the price of slightly more noise than the analytic continuous calibration.

One assumption is not removed: the statistic is computed in float64 and treated as exact. Its
rounding error (about N u max|x|, u = 2^-53) is far below one grid step for every dataset of
the book, but it is an assumption, stated here and in the ledger details.

Each noise family is a :class:`~dpkmeans.privacy.noise_types.NoiseType`, which holds its
calibration and its samplers; the functions here take one, or the name users pass
(``"laplace"``, ``"gaussian"``; :func:`~dpkmeans.privacy.noise_types.noise_type`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.errors import ClippingWarning, caller_stacklevel
from dpkmeans.privacy.gaussian import zcdp_delta, zcdp_rho_for
from dpkmeans.privacy.noise_types import (
    FLOAT_LEAK,
    GAUSSIAN_GRID_BITS,
    LAPLACE_GRID_BITS,
    LAPLACE_MAX_SCALE,
    NOISE_KINDS,
    SAMPLERS,
    NoiseCalibration,
    NoiseType,
    check_sampler,
    noise_type,
    round_up,
)
from dpkmeans.validation import check_epsilon, check_positive_int, check_sensitivity

__all__ = [
    "SAMPLERS",
    "NOISE_KINDS",
    "FLOAT_LEAK",
    "LAPLACE_GRID_BITS",
    "LAPLACE_MAX_SCALE",
    "GAUSSIAN_GRID_BITS",
    "NoiseCalibration",
    "calibrate",
    "min_epsilon",
    "round_up",
    "check_sampler",
    "zcdp_delta",
    "zcdp_rho_for",
    "to_grid",
    "grid_limit",
    "check_grid_range",
    "GRID_CLAMPED",
    "draw_steps",
    "grid_release",
    "shared_grid_release",
    "perturb",
    "NoisePlan",
    "perturb_elements",
    "CovarianceNoise",
    "draw_colored",
]

#: Largest |value| / g that fits the integer arithmetic (int64 with head room for the noise):
#: :func:`to_grid` clamps to it.
_MAX_STEPS = 2.0**61
#: What :func:`check_grid_range` tells the data holder (it names no value: whether it is shown
#: depends on the private data, :class:`~dpkmeans.errors.ClippingWarning`).
GRID_CLAMPED = ("a value to release exceeds its noise grid's public range (2^61 grid steps) "
                "and is released as the range's end: the guarantee holds, but the release is "
                "wrong for that value. The range is 2^(31 + floor(log2 sensitivity)) for Laplace "
                "noise (2^31 = 2147483648 for a record count); dpkmeans.privacy.noise.grid_limit "
                "gives it for a release. This warning is for the data holder: do not publish it")


def calibrate(kind: NoiseType | str, sensitivity: float, epsilon: float, delta: float = 0.0, *,
              sampler: str = "discrete", coordinates: int = 1,
              integer_valued: bool = False) -> NoiseCalibration:
    """Calibrate the noise of one release of a ``coordinates``-vector.

    ``sensitivity`` is L1 for Laplace and L2 for Gaussian (under the caller's neighbour
    relation). ``integer_valued`` promises that every coordinate of the value is an integer
    (a count): the grid then divides 1, the value sits on it exactly and the sensitivity is not
    rounded up (only checked by :func:`to_grid`). Raises ValueError for budgets so small that the
    noise does not fit the exact sampler's integer range.

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian", "colored"}
        The noise type, or its name (with ``sampler``, :func:`noise_type`).
    sensitivity : float
        L1 (Laplace) or L2 (Gaussian) sensitivity of the whole vector (>= 0).
    epsilon : float
        The privacy budget (> 0).
    delta : float, default 0.0
        0 for Laplace; in (0, 1) for Gaussian.
    sampler : {"discrete", "continuous"}, default "discrete"
        The exact sampler on a public grid, or numpy's float64 sampler (a leak, when charged),
        of a named noise. A continuous Gaussian is calibrated by the analytic Gaussian
        mechanism; a discrete one through zCDP.
    coordinates : int, default 1
        The number of coordinates of the released vector (each rounding adds to the
        sensitivity in steps).
    integer_valued : bool, default False
        Every coordinate is an integer (a count).

    Returns
    -------
    NoiseCalibration
        The noise to draw and what the ledger records of it.

    Raises
    ------
    ValueError
        If an input is out of range, ``kind`` is unknown, a Laplace ``delta`` is not 0, or the
        budget is too small for the exact sampler.

    Examples
    --------
    >>> from dpkmeans.privacy.noise import calibrate
    >>> calibrate("laplace", 1.0, 0.5, integer_valued=True).scale
    2.0
    >>> gauss = calibrate("gaussian", 1.0, 1.0, 1e-5)
    >>> gauss.mechanism, round(gauss.scale, 4)
    ('Gaussian (discrete, zCDP)', 4.0451)
    >>> round(calibrate("gaussian", 1.0, 1.0, 1e-5, sampler="continuous").scale, 4)
    3.7306
    """
    sampler = check_sampler(sampler)
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    coordinates = check_positive_int(coordinates, "coordinates")
    return noise_type(kind, sampler).calibrate(sens, eps, delta, coordinates=coordinates,
                                               integer_valued=integer_valued)


def min_epsilon(kind: NoiseType | str, sensitivity: float, *, sampler: str = "discrete",
                coordinates: int = 1, integer_valued: bool = False) -> float:
    """The smallest epsilon :func:`calibrate` accepts for a release with these inputs.

    The exact discrete Laplace sampler is given integer scales t = ceil(steps / epsilon) of at
    most :data:`LAPLACE_MAX_SCALE` = 2^56 steps, and a real-valued release has 2^30 to 2^31
    steps of sensitivity on its grid (:data:`LAPLACE_GRID_BITS`, plus one per coordinate), so
    it needs epsilon of at least 1.5e-8 to 3e-8. The discrete Gaussian's grid follows its
    scale, and numpy's float samplers take any epsilon: both give 0.

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian", "colored"}
        The noise type, or its name (with ``sampler``, :func:`noise_type`).
    sensitivity : float
        L1 (Laplace) or L2 (Gaussian) sensitivity of the whole vector (>= 0).
    sampler : {"discrete", "continuous"}, default "discrete"
        The sampler.
    coordinates : int, default 1
        The number of coordinates of the released vector.
    integer_valued : bool, default False
        Every coordinate is an integer (a count).

    Returns
    -------
    float
        The smallest epsilon (0.0: every epsilon > 0 is supported).

    Raises
    ------
    ValueError
        If an input is out of range or ``kind`` is unknown.

    Examples
    --------
    >>> from dpkmeans.privacy.noise import calibrate, min_epsilon
    >>> floor = min_epsilon("laplace", 2.0, coordinates=3)
    >>> f"{floor:.3g}", calibrate("laplace", 2.0, floor, coordinates=3).noise_steps <= 2**56
    ('1.49e-08', True)
    >>> min_epsilon("gaussian", 1.0), min_epsilon("laplace", 1.0, sampler="continuous")
    (0.0, 0.0)
    """
    sampler = check_sampler(sampler)
    sens = check_sensitivity(sensitivity)
    coordinates = check_positive_int(coordinates, "coordinates")
    return noise_type(kind, sampler).min_epsilon(sens, coordinates=coordinates,
                                                 integer_valued=integer_valued)


# --- drawing -----------------------------------------------------------------------------
def grid_limit(grid: np.ndarray | float) -> np.ndarray | float:
    """The largest magnitude a release on the grid ``grid`` keeps: 2^61 grid steps (the exact
    samplers' integer range, with head room for the noise); :func:`to_grid` clamps beyond it.

    For discrete Laplace noise the grid is g = 2^(floor(log2 Delta) - 30)
    (:data:`~dpkmeans.privacy.noise_types.LAPLACE_GRID_BITS`; at most 1 for a count), so the
    limit is 2^(31 + floor(log2 Delta)), between 2^30 and 2^31 sensitivities: 2^31 =
    2147483648 for a record count (Delta = 1); 2^32 for a release of L1 sensitivity 3 (a
    cluster's two sums and count on [0, 1]^2), whose sums leave the range beyond 2^32 records
    with a coordinate near 1. A sum of N values of magnitude at most m stays in range while
    N m is at most the limit. The discrete Gaussian's grid is at least the Laplace one of the
    same sensitivity, so its limit is at least as large.

    Parameters
    ----------
    grid : float or ndarray
        The grid step (a power of two), or one per element.

    Returns
    -------
    float or ndarray
        2^61 times ``grid``.

    Examples
    --------
    >>> from dpkmeans.privacy.noise import calibrate, grid_limit
    >>> grid_limit(calibrate("laplace", 1.0, 1.0, integer_valued=True).grid) == 2**31
    True
    """
    return _MAX_STEPS * np.asarray(grid, dtype=float) if np.ndim(grid) else _MAX_STEPS * grid


def check_grid_range(magnitude: ArrayLike, grid: np.ndarray | float) -> bool:
    """Warn the data holder (:class:`~dpkmeans.errors.ClippingWarning`, :data:`GRID_CLAMPED`)
    when a value of the given magnitude would be clamped to the grid's public range
    (:func:`grid_limit`). :func:`to_grid` calls it when a release's values exceed the range,
    before the release is returned; a data holder can call it before a fit with the number of
    records (a count, or the records times the largest coordinate of a sum).

    The warning is raised locally and is not part of the release: the release is the clamped
    value, which reveals nothing about the size. Whether the warning shows depends on the
    private data, so its message names no value, and it must not be published (like the
    clipping warning, :func:`dpkmeans.engine.checks.warn_clipped`).

    Parameters
    ----------
    magnitude : array_like
        The values (or bounds on their magnitudes) to check; NaN is never clamped.
    grid : float or ndarray
        The grid step, or one per element (broadcast with ``magnitude``).

    Returns
    -------
    bool
        True (and the warning) if a value exceeds the range.

    Examples
    --------
    >>> import warnings
    >>> from dpkmeans.privacy.noise import check_grid_range
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     check_grid_range(2**31, 2.0**-30), check_grid_range(2**31 + 1, 2.0**-30)
    (False, True)
    >>> [type(w.message).__name__ for w in caught]
    ['ClippingWarning']
    """
    with np.errstate(over="ignore", invalid="ignore"):
        over = bool(np.any(np.abs(np.asarray(magnitude, dtype=float)) > grid_limit(grid)))
    if over:
        warnings.warn(GRID_CLAMPED, ClippingWarning, stacklevel=caller_stacklevel())
    return over


def to_grid(values: np.ndarray, grid: np.ndarray | float, *,
            integer_valued: bool = False) -> np.ndarray:
    """round(values / grid) as int64 (nearest, ties to even), each value first clamped to the
    grid's public range [-2^61 g, 2^61 g] (the integer arithmetic's, :func:`grid_limit`; for
    Laplace noise 2^(31 + floor(log2 Delta)), more than 2^30 times the sensitivity, 2^31 for a
    record count). Clamping moves neighbouring values no further apart, so the release keeps
    its guarantee, and whether a value was clamped is never released: no error depends on the
    data's size (a count of more than 2^31 records, or sums of more than about 4 10^9 records,
    would otherwise raise after earlier releases were drawn). A clamped value is released as
    the range's end, and the data holder is warned locally, before the release is returned
    (:func:`check_grid_range`; the warning is not part of the release). A ValueError for a
    NaN, or, with ``integer_valued``, a non-integer value.

    Parameters
    ----------
    values : ndarray
        The values to round.
    grid : float or ndarray
        The grid step (a power of two), or one per element (broadcast).
    integer_valued : bool, default False
        Check that every value is an integer.

    Returns
    -------
    ndarray of int64
        The values in grid steps.

    Raises
    ------
    ValueError
        For a NaN, or a non-integer value with ``integer_valued``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import to_grid
    >>> to_grid(np.array([0.3, -1.0, 1.0]), 0.25)
    array([ 1, -4,  4])
    """
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError("a released value is not a number")
    if integer_valued and not np.all(values == np.round(values)):
        raise ValueError("integer_valued=True but the value has a non-integer coordinate")
    with np.errstate(over="ignore"):  # exact (grid a power of two) or +-inf, then clamped
        scaled = values / grid
    if np.any(np.abs(scaled) > _MAX_STEPS):  # rare: the warning's check, on the same values
        check_grid_range(values, grid)
    return np.rint(np.clip(scaled, -_MAX_STEPS, _MAX_STEPS)).astype(np.int64)


def draw_steps(kind: NoiseType | str, noise_steps: np.ndarray,
               rngs: Sequence[np.random.Generator], *, per_replica: bool = False) -> np.ndarray:
    """Integer noise in grid steps, shape (R, *noise_steps.shape); replica r draws from rngs[r]
    only (:mod:`dpkmeans.privacy.discrete`). Elements whose ``noise_steps`` is 0 get no noise.

    With ``per_replica``, ``noise_steps`` has shape (R, *S), row r for replica r, and the
    result is (R, *S): row r is what ``draw_steps(kind, noise_steps[r], [rngs[r]])`` gives
    (the discrete Laplace replicas drawn together, :func:`~dpkmeans.privacy.discrete.discrete_laplace`;
    anything else one replica at a time).

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian"}
        An exact noise type, or its name: discrete Laplace (parameter t) or discrete Gaussian
        (parameter sigma^2 in steps^2).
    noise_steps : ndarray of int
        The integer noise parameter of each element (0: no noise).
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    per_replica : bool, default False
        ``noise_steps`` has a leading axis of one row per replica.

    Returns
    -------
    ndarray of int64
        The noise in steps, shape (R, *S).

    Raises
    ------
    ValueError
        If ``per_replica`` and ``noise_steps`` has no leading axis of R rows.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import draw_steps
    >>> rngs = [np.random.default_rng(0), np.random.default_rng(1)]
    >>> draw_steps("laplace", np.array([10, 0, 1000]), rngs)
    array([[   -1,     0,  1617],
           [   -7,     0, -4086]])
    """
    return noise_type(kind).draw_steps(noise_steps, rngs, per_replica=per_replica)


def grid_release(kind: NoiseType | str, values: np.ndarray, grid: np.ndarray | float,
                 noise_steps: np.ndarray, rngs: Sequence[np.random.Generator], *,
                 integer_valued: bool = False, per_replica: bool = False) -> np.ndarray:
    """(round(values / grid) + integer noise) * grid for values (R, *S), with a grid and a noise
    parameter per element (broadcast to S; with ``per_replica``, both (R, *S), row r for
    replica r: :func:`draw_steps`): the discrete release of :mod:`dpkmeans.privacy.noise`.

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian"}
        The (exact) noise type, or its name.
    values : ndarray
        The exact values, shape (R, *S).
    grid : float or ndarray
        The grid step of each element (a power of two).
    noise_steps : ndarray of int
        The integer noise parameter of each element.
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    integer_valued : bool, default False
        Check that every value is an integer (a count).
    per_replica : bool, default False
        ``grid`` and ``noise_steps`` have one row per replica.

    Returns
    -------
    ndarray
        The noisy values, shape (R, *S), each an integer number of grid steps.

    Raises
    ------
    ValueError
        As :func:`to_grid` and :func:`draw_steps`.

    Examples
    --------
    Laplace noise of scale 1 (1024 steps of 2^-10) on two replicas:

    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import grid_release
    >>> rngs = [np.random.default_rng(0), np.random.default_rng(1)]
    >>> grid_release("laplace", np.array([[1.0, 2.0], [1.0, 2.0]]), 2.0**-10,
    ...              np.array([1024, 1024]), rngs)
    array([[ 0.40722656,  3.78222656],
           [ 0.75097656, -2.09960938]])
    """
    on_grid = to_grid(values, grid, integer_valued=integer_valued)
    return (on_grid + draw_steps(kind, noise_steps, rngs, per_replica=per_replica)) * grid


def shared_grid_release(kind: NoiseType | str, values: np.ndarray, grid: np.ndarray | float,
                        noise_steps: np.ndarray, rngs: Sequence[np.random.Generator], *,
                        per_replica: bool = False) -> np.ndarray:
    """Like :func:`grid_release` for values (R, k, c), but with ONE integer draw per row k added
    to all c columns (noise_steps has shape (k,), or (R, k) with ``per_replica``): a flaw that
    Zhang, Liu and Wang (2018) read literally, kept for its as-published variant
    (:class:`dpkmeans.papers.silhouette.flaws.SharedNoise`).

    Parameters
    ----------
    kind : NoiseType or {"laplace", "gaussian"}
        The (exact) noise type, or its name.
    values : ndarray
        The exact values, shape (R, k, c).
    grid : float or ndarray
        The grid step of each element.
    noise_steps : ndarray of int
        The integer noise parameter of each row, shape (k,) (or (R, k) with ``per_replica``).
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    per_replica : bool, default False
        ``noise_steps`` has one row per replica.

    Returns
    -------
    ndarray
        The noisy values, shape (R, k, c).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import shared_grid_release
    >>> shared_grid_release("laplace", np.array([[[1.0, 2.0, 3.0]]]), 2.0**-10, np.array([1024]),
    ...                     [np.random.default_rng(0)])  # one draw moves all three
    array([[[-0.59277344,  0.40722656,  1.40722656]]])
    """
    steps = np.asarray(noise_steps, dtype=np.int64)
    draws = draw_steps(kind, steps, rngs, per_replica=per_replica)[..., None]
    return (to_grid(values, grid) + draws) * grid


def perturb(values: np.ndarray, calibration: NoiseCalibration | CovarianceNoise,
            rngs: Sequence[np.random.Generator], *, integer_valued: bool = False,
            shared: bool = False, unit: np.ndarray | None = None) -> np.ndarray:
    """values (R, *S) plus the calibrated noise; replica r draws only from ``rngs[r]``.

    Uncharged: a release goes through :func:`dpkmeans.privacy.mechanisms.release`, which charges the
    ledger first. ``shared`` adds one draw per row of the last axis to all of its columns (the
    "shared-noise" flaw of an as-published variant); ``unit`` (continuous sampler only) holds
    unit-scale noise of the values' shape drawn earlier (:func:`dpkmeans.privacy.mechanisms.unit_noise`),
    which is scaled instead of drawing now. A :class:`CovarianceNoise` draws N(0, Sigma_r) for
    replica r.

    Parameters
    ----------
    values : ndarray
        The exact values, shape (R, *S).
    calibration : NoiseCalibration or CovarianceNoise
        The noise to add.
    rngs : sequence of numpy.random.Generator
        One generator per replica: replica r draws from ``rngs[r]`` only.
    integer_valued : bool, default False
        The values are integers (counts; checked).
    shared : bool, default False
        One draw per row of the last axis, added to all of its columns.
    unit : ndarray or None, default None
        Unit-scale noise of the values' shape drawn earlier (continuous sampler only).

    Returns
    -------
    ndarray
        The noisy values (a copy of ``values`` if the calibration adds no noise).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import calibrate, perturb
    >>> perturb(np.array([[10.0, 20.0]]), calibrate("laplace", 1.0, 0.5),
    ...         [np.random.default_rng(0)])
    array([[ 8.78889008, 23.72795851]])
    """
    values = np.asarray(values, dtype=float)
    if isinstance(calibration, CovarianceNoise):
        draws = np.stack([draw_colored(S, g) for S, g in zip(calibration.covariances, rngs)])
        return values + draws.reshape(values.shape)
    if not calibration.adds_noise:
        return values.copy()
    noise = calibration.noise
    if not noise.exact:
        if unit is not None:
            return values + calibration.scale * (unit[..., :1] if shared else unit)
        shape = values.shape[1:-1] + (1,) if shared else values.shape[1:]
        return values + noise.draw(calibration.scale, rngs, shape)
    if shared:
        steps = np.full(values.shape[1:-1], calibration.noise_steps, dtype=np.int64)
        return shared_grid_release(noise, values, calibration.grid, steps, rngs)
    steps = np.full(values.shape[1:], calibration.noise_steps, dtype=np.int64)
    return grid_release(noise, values, calibration.grid, steps, rngs,
                        integer_valued=integer_valued)


@dataclass(frozen=True, eq=False)
class NoisePlan:
    """The noise of each element of a batched statistic (k, c), e.g. one DP-Lloyd iteration's
    (S_j, n_j) of every cluster, whose elements belong to releases of different calibrations.

    ``grid``, ``steps`` and ``scale`` hold, per element, the public grid step, the exact
    sampler's integer noise parameter and the continuous scale (0: the element gets no noise);
    shape (k, c), shared by the replicas, or (R, k, c), row r for replica r. ``shared`` adds one
    draw per row to all of its columns (the "shared-noise" flaw; every column of a row then has
    one grid and one scale).

    Parameters
    ----------
    noise : NoiseType or {"laplace", "gaussian", "colored"}
        The noise type, or its name.
    sampler : {"discrete", "continuous"} or None
        The sampler of a named noise (None: "discrete"); a noise type's own is kept.
    grid, steps, scale : ndarray
        Per element: the grid step, the integer noise parameter and the continuous scale;
        shape (k, c), or (R, k, c) for one plan per replica.
    shared : bool, default False
        One draw per row, added to all of its columns.

    Examples
    --------
    One cluster's (S_j, n_j) of which only the sum is noised, at scale 1:

    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import NoisePlan, perturb_elements
    >>> plan = NoisePlan("laplace", "discrete", grid=np.full((1, 2), 2.0**-10),
    ...                  steps=np.array([[1024, 0]]), scale=np.array([[1.0, 0.0]]))
    >>> plan.per_replica
    False
    >>> perturb_elements(np.array([[[5.0, 3.0]]]), plan, [np.random.default_rng(0)])
    array([[[3.40722656, 3.        ]]])
    """

    noise: NoiseType | str
    sampler: str | None
    grid: np.ndarray
    steps: np.ndarray
    scale: np.ndarray
    shared: bool = False

    def __post_init__(self) -> None:
        noise = noise_type(self.noise, self.sampler or "discrete")
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "sampler", noise.sampler)

    @property
    def kind(self) -> str:
        """The name of the family the plan's sampler draws (text for display)."""
        return self.noise.sampler_family.family

    @property
    def per_replica(self) -> bool:
        """Whether each replica has its own plan (arrays of shape (R, k, c))."""
        return self.grid.ndim == 3

    def row(self, r: int) -> NoisePlan:
        """Replica r's plan, of a per-replica plan.

        Parameters
        ----------
        r : int
            The replica.

        Returns
        -------
        NoisePlan
            The plan of arrays (k, c) of replica r.
        """
        return NoisePlan(self.noise, None, self.grid[r], self.steps[r], self.scale[r],
                         self.shared)


def perturb_elements(values: np.ndarray, plan: NoisePlan, rngs: Sequence[np.random.Generator],
                     *, unit: np.ndarray | None = None) -> np.ndarray:
    """values (R, k, c) plus the noise of ``plan`` (uncharged: see
    :func:`dpkmeans.privacy.mechanisms.release_plan`): every noised element of every replica in one
    vectorised draw, replica r from ``rngs[r]`` only, so replica r's noise is the same as when it
    is noised alone (:func:`draw_steps`). Continuous sampler: ``unit`` holds unit-scale noise
    (R, k, c) drawn earlier, which is scaled. Elements the plan does not noise stay exact.

    Parameters
    ----------
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

    Examples
    --------
    Replica 1's noise is the same as when it is noised alone:

    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import NoisePlan, perturb_elements
    >>> plan = NoisePlan("laplace", "discrete", grid=np.full((1, 2), 2.0**-10),
    ...                  steps=np.array([[1024, 0]]), scale=np.array([[1.0, 0.0]]))
    >>> values = np.array([[[5.0, 3.0]], [[5.0, 3.0]]])
    >>> both = perturb_elements(values, plan, [np.random.default_rng(0), np.random.default_rng(1)])
    >>> alone = perturb_elements(values[1:], plan, [np.random.default_rng(1)])
    >>> both[1], bool((both[1] == alone[0]).all())
    (array([[4.75097656, 3.        ]]), True)
    """
    per_replica = plan.per_replica
    if plan.shared:
        if not plan.noise.exact:
            return values + plan.scale * unit[..., :1]
        return shared_grid_release(plan.noise, values, plan.grid, plan.steps[..., 0], rngs,
                                   per_replica=per_replica)
    noised = plan.scale > 0
    if per_replica and not (noised == noised[0]).all():  # the replicas noise other elements
        return np.concatenate([perturb_elements(values[r:r + 1], plan.row(r), [g],
                                                unit=None if unit is None else unit[r:r + 1])
                               for r, g in enumerate(rngs)])
    mask = noised[0] if per_replica else noised
    grid, steps, scale = (a[:, mask] if per_replica else a[mask]
                          for a in (plan.grid, plan.steps, plan.scale))
    noisy = values.copy()
    if not plan.noise.exact:
        noisy[:, mask] = values[:, mask] + scale * unit[:, mask]
    elif mask.any():
        noisy[:, mask] = grid_release(plan.noise, values[:, mask], grid, steps, rngs,
                                      per_replica=per_replica)
    return noisy


# --- colored (correlated) Gaussian noise -------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CovarianceNoise:
    """Gaussian noise N(0, Sigma_r) with its own covariance per replica, ``covariances`` of
    shape (R, m, m), drawn with numpy's float64 normal (continuous: a ledger records the leak),
    and what the ledger records of it: ``mechanism``, ``sensitivity``, ``epsilon``, ``delta``
    and ``scale`` (Ravi, Scaglione and Peisert 2021; book chapter 9).

    Parameters
    ----------
    covariances : ndarray
        Sigma_r of each replica, shape (R, m, m).
    mechanism : str
        The ledger's name for the mechanism.
    sensitivity, epsilon, delta : float
        What the ledger records of the release.
    scale : float
        The noise scale the ledger records (e.g. the square root of the largest variance).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import CovarianceNoise, perturb
    >>> noise = CovarianceNoise(np.array([[[1.0, 0.9], [0.9, 1.0]]]), "Gaussian (colored)",
    ...                         sensitivity=1.0, epsilon=1.0, delta=1e-5, scale=1.0)
    >>> perturb(np.zeros((1, 2)), noise, [np.random.default_rng(0)])
    array([[-0.15687403, -0.10064576]])
    """

    covariances: np.ndarray
    mechanism: str
    sensitivity: float
    epsilon: float
    delta: float
    scale: float

    sampler = "continuous"
    adds_noise = True
    leak = FLOAT_LEAK

    def details(self) -> dict[str, Any]:
        """Nothing beyond the caller's details: the covariance is the caller's to describe.

        Returns
        -------
        dict
            An empty dict.
        """
        return {}


def draw_colored(covariance: ArrayLike, rng: np.random.Generator,
                 size: int | None = None) -> np.ndarray:
    """Draws of N(0, Sigma) from ``rng`` (continuous float64, as the paper; chapter 9 records
    it): the symmetric square root, so a singular Sigma is fine. Uncharged: a release goes
    through :func:`dpkmeans.privacy.mechanisms.release` with a :class:`CovarianceNoise`.

    Parameters
    ----------
    covariance : array_like
        Sigma, (m, m), symmetric positive semi-definite.
    rng : numpy.random.Generator
        The source of the draws.
    size : int or None, default None
        The number of draws (None: one draw, shape (m,)).

    Returns
    -------
    ndarray
        Shape (m,), or (size, m).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.noise import draw_colored
    >>> draw_colored([[1.0, 0.9], [0.9, 1.0]], np.random.default_rng(0), size=3)
    array([[-0.15687403, -0.10064576],
           [-0.04095887,  0.24544684],
           [ 0.47221858,  0.23265995]])
    """
    S = np.asarray(covariance, dtype=float)
    w, V = np.linalg.eigh((S + S.T) / 2.0)
    root = V * np.sqrt(np.clip(w, 0.0, None))
    z = rng.standard_normal((S.shape[0],) if size is None else (size, S.shape[0]))
    return z @ root.T
