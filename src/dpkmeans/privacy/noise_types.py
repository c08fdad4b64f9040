"""Noise types: one class per noise family (docs/design.md, "How to add a mechanism").

A :class:`NoiseType` carries everything the library asks of a noise family, so that no code
tests a noise's name:

* its **calibration** (:meth:`NoiseType.calibrate`, :meth:`NoiseType.min_epsilon`): from the
  sensitivity and the budget only, the scale, and for an exact sampler a public grid and an
  integer noise parameter, rounded up so that rounding only adds noise (book chapter 6,
  "Floating-point-safe noise");
* its **sampler**: the exact integer sampler of :mod:`dpkmeans.privacy.discrete`
  (:meth:`NoiseType.draw_steps`), or numpy's float64 one (:meth:`NoiseType.draw`,
  :meth:`NoiseType.unit_noise`), which a ledger records as a leak (:data:`FLOAT_LEAK`);
* its **privacy loss** for the accountant and the auditor (:meth:`NoiseType.loss`): a pure
  epsilon, or the Gaussian mu = Delta_2 / sigma whose releases compose exactly
  (:func:`compose_losses`);
* its **transcript likelihood** (:meth:`NoiseType.log_ratio`): the per-element log-likelihood
  ratio an auditor scores a released transcript with (book chapter 6, "Auditing an algorithm");
* small queries: the norm its sensitivity is measured in, whether it needs a delta, its
  whitening weights, the family its samplers draw, the standard deviation of a scale.

The families: :data:`LAPLACE` and :data:`GAUSSIAN` (numpy's float samplers, as the papers used
them), :data:`DISCRETE_LAPLACE` and :data:`DISCRETE_GAUSSIAN` (exact noise on a public grid,
Canonne, Kamath and Steinke 2020; the default), and :data:`COLORED` (Gaussian noise with the box
optimum's covariance, Ravi, Scaglione and Peisert 2021, book chapter 9, released as white noise
on the whitened vector). :func:`noise_type` maps the names users pass (``noise="laplace"``,
``sampler="discrete"``) to these objects and accepts any :class:`NoiseType` as it is: a new
mechanism is a new subclass, and no other file of the library needs an edit.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.privacy.discrete import discrete_gaussian, discrete_laplace
from dpkmeans.privacy.gaussian import gaussian_sigma_analytic, zcdp_rho_for
from dpkmeans.privacy.sensitivity import coordinate_bounds
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_sensitivity

__all__ = [
    "SAMPLERS",
    "NOISE_KINDS",
    "NOISE_NAMES",
    "FLOAT_LEAK",
    "LAPLACE_GRID_BITS",
    "LAPLACE_MAX_SCALE",
    "GAUSSIAN_GRID_BITS",
    "check_sampler",
    "power_of_two_below",
    "round_up",
    "NoiseCalibration",
    "PrivacyLoss",
    "compose_losses",
    "NoiseType",
    "Laplace",
    "DiscreteLaplace",
    "Gaussian",
    "DiscreteGaussian",
    "ColoredGaussian",
    "LAPLACE",
    "DISCRETE_LAPLACE",
    "GAUSSIAN",
    "DISCRETE_GAUSSIAN",
    "COLORED",
    "COLORED_CONTINUOUS",
    "noise_type",
    "noise_type_of",
]

#: Noise samplers: exact discrete noise on a public grid (default) or numpy's float samplers.
SAMPLERS = ("discrete", "continuous")
#: The noise families the samplers draw.
NOISE_KINDS = ("laplace", "gaussian")
#: The names :func:`noise_type` knows: the samplers' families, and "colored".
NOISE_NAMES = NOISE_KINDS + ("colored",)
#: What a ledger records when a continuous (float64) sampler is used.
FLOAT_LEAK = ("continuous float64 noise (sampler='continuous'): some outputs are impossible "
              "under the neighbouring input (Mironov 2012), so no epsilon bounds the float "
              "release; sampler='discrete' is exact")
#: Laplace grid: g = 2^(floor(log2 Delta) - 30), so the rounded sensitivity exceeds Delta by at
#: most (c + 1) / 2^30 of itself, the scale t = ceil(steps / epsilon) is rounded up by at most
#: epsilon / 2^30 of itself, and values up to 2^31 Delta fit the integer arithmetic (larger ones
#: are clamped to that public range, :func:`dpkmeans.privacy.noise.to_grid`).
LAPLACE_GRID_BITS = 30
#: Gaussian grid: g = 2^(floor(log2 sigma) - 20) (at least Delta / 2^30), so sigma is at most
#: 2^21 steps and sigma^2 stays within the exact sampler's integer range
#: (:func:`dpkmeans.privacy.discrete.discrete_gaussian`).
GAUSSIAN_GRID_BITS = 20
#: Largest Laplace scale t (in grid steps) the exact sampler is given: a sample then overflows
#: int64 with probability about exp(-2^63 / t) = exp(-128) per draw
#: (:func:`dpkmeans.privacy.discrete.discrete_laplace`), never in practice; at the sampler's own
#: bound, 2^62, it would be about one draw in seven.
LAPLACE_MAX_SCALE = 2**56


def check_sampler(sampler: object) -> str:
    """``sampler`` must be one of :data:`SAMPLERS`.

    Parameters
    ----------
    sampler : object
        The sampler's name to check.

    Returns
    -------
    str
        ``sampler``.

    Raises
    ------
    ValueError
        If it is not ``"discrete"`` or ``"continuous"``.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import check_sampler
    >>> check_sampler("float")
    Traceback (most recent call last):
    ...
    ValueError: sampler must be one of ('discrete', 'continuous'), got 'float'
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return str(sampler)


def power_of_two_below(x: float) -> int:
    """floor(log2 x) for x > 0, exactly (from the binary exponent, not from a float log).

    Parameters
    ----------
    x : float
        A positive, finite number.

    Returns
    -------
    int
        The exponent e with 2^e <= x < 2^(e + 1).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import power_of_two_below
    >>> power_of_two_below(1.0), power_of_two_below(0.75), power_of_two_below(1000.0)
    (0, -1, 9)
    """
    mantissa, exponent = math.frexp(x)  # x = mantissa * 2^exponent, 0.5 <= mantissa < 1
    return exponent - 1


def round_up(x: float, digits: int = 3) -> float:
    """``x`` rounded up to ``digits`` significant digits: a limit that can be quoted in a
    message and passed back as it reads (``f"{round_up(x):g}"`` is at least x).

    Parameters
    ----------
    x : float
        A positive, finite number.
    digits : int, default 3
        Significant digits kept.

    Returns
    -------
    float
        The smallest number of ``digits`` significant digits that is at least ``x``.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import round_up
    >>> round_up(4.6521e-10), round_up(2.0)
    (4.66e-10, 2.0)
    """
    if not (math.isfinite(x) and x > 0):
        return x
    exponent = math.floor(math.log10(x)) - digits + 1
    candidate = math.ceil(Fraction(x) / Fraction(10) ** exponent)
    value = float(candidate * Fraction(10) ** exponent)
    return value if value >= x else math.nextafter(value, math.inf)


# --- what a calibration records ------------------------------------------------------------
@dataclass(frozen=True)
class NoiseCalibration:
    """The noise of one release: what was asked for and what is drawn.

    ``scale`` is the noise's Laplace scale b or Gaussian sigma in the value's units, at least the
    nominal one. For the discrete sampler, ``grid`` is the public step g, ``sensitivity_steps``
    the sensitivity of the rounded query in steps (an integer for Laplace; L2 for Gaussian) and
    ``noise_steps`` the integer parameter given to the exact sampler (Laplace t, Gaussian
    sigma^2 in steps^2), and ``nominal_scale`` the scale the same rule gives without any
    rounding (Delta / epsilon for Laplace). All are functions of public inputs only.

    Parameters
    ----------
    noise : NoiseType
        The noise type that calibrated it (and draws it).
    sensitivity, epsilon, delta : float
        What was asked for (in the noise type's norm: L1 for Laplace, L2 for Gaussian).
    scale : float
        The Laplace b or Gaussian sigma drawn, in the value's units (0: no noise).
    grid : float, default 0.0
        The public grid step g (discrete only).
    sensitivity_steps : float, default 0.0
        The sensitivity of the rounded query, in steps (discrete only).
    noise_steps : int, default 0
        The exact sampler's integer parameter (discrete only).
    nominal_scale : float, default 0.0
        The scale before any rounding (discrete only).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import DISCRETE_LAPLACE
    >>> cal = DISCRETE_LAPLACE.calibrate(1.0, 0.5)
    >>> cal.mechanism, cal.nominal_scale, cal.grid == 2.0**-30, cal.noise_steps
    ('Laplace (discrete)', 2.0, True, 2147483650)
    >>> f"{cal.scale / cal.nominal_scale - 1:.2g}"  # rounded up by a few parts in 10^9
    '9.3e-10'
    >>> cal.kind, cal.sampler, cal.leak is None
    ('laplace', 'discrete', True)
    """

    noise: NoiseType
    sensitivity: float
    epsilon: float
    delta: float
    scale: float
    grid: float = 0.0
    sensitivity_steps: float = 0.0
    noise_steps: int = 0
    nominal_scale: float = 0.0  # the scale before any rounding (discrete only)

    @property
    def adds_noise(self) -> bool:
        """Whether the release is noised at all (a zero sensitivity needs no noise)."""
        return self.scale > 0

    @property
    def kind(self) -> str:
        """The name of the noise's family (text for display: never branch on it)."""
        return self.noise.family

    @property
    def sampler(self) -> str:
        """The sampler's name, ``"discrete"`` or ``"continuous"`` (text for display)."""
        return self.noise.sampler

    @property
    def mechanism(self) -> str:
        """The ledger's name for the mechanism."""
        return self.noise.mechanism

    @property
    def leak(self) -> str | None:
        """What a ledger records as a leak with this release (a float sampler's), or None."""
        return self.noise.leak if self.adds_noise else None

    def details(self) -> dict[str, Any]:
        """What the ledger records about the sampler (the rounding included).

        Returns
        -------
        dict
            The sampler; for a discrete one also its grid, the sensitivity on the grid, the
            noise steps, the relative rounding of the scale and the float64 assumption.
        """
        return self.noise.details(self)

    def release(self, times: int = 1) -> Release | None:
        """What a ledger composes tightly for ``times`` such releases
        (:meth:`NoiseType.release`).

        Parameters
        ----------
        times : int, default 1
            How many releases of this calibration compose in sequence.

        Returns
        -------
        Release or None
            None when no noise is added (a zero sensitivity).
        """
        return self.noise.release(self, times)

    def loss(self) -> PrivacyLoss:
        """The release's privacy loss (:meth:`NoiseType.loss`).

        Returns
        -------
        PrivacyLoss
            Its pure epsilon or Gaussian mu, and delta.
        """
        return self.noise.loss(self)


@dataclass(frozen=True)
class PrivacyLoss:
    """The privacy loss of one release at its worst neighbouring pair, as the accountant and
    the auditor compose it.

    ``epsilon`` bounds |L| everywhere (pure DP; ``inf`` when nothing does, e.g. Gaussian
    noise). ``mu`` is set for Gaussian noise: L is then N(mu^2 / 2, mu^2) with
    mu = Delta_2 / sigma (book chapter 2), and Gaussian releases compose exactly into one
    Gaussian of mu^2 = sum mu_t^2 (:func:`compose_losses`). ``delta`` is the delta the release
    was calibrated to.

    Parameters
    ----------
    epsilon : float
        The pure-DP bound of the loss (``math.inf``: none).
    delta : float, default 0.0
        The calibration's delta.
    mu : float or None, default None
        Delta_2 / sigma of a Gaussian release.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import DISCRETE_GAUSSIAN, LAPLACE
    >>> LAPLACE.calibrate(1.0, 0.5).loss()
    PrivacyLoss(epsilon=0.5, delta=0.0, mu=None)
    >>> round(DISCRETE_GAUSSIAN.calibrate(1.0, 1.0, 1e-5).loss().mu, 4)
    0.2472
    """

    epsilon: float
    delta: float = 0.0
    mu: float | None = None

    @property
    def rho(self) -> float:
        """The zCDP rho: mu^2 / 2 for Gaussian noise, epsilon^2 / 2 for pure epsilon-DP (Bun
        and Steinke 2016, Prop. 1.4)."""
        return self.mu**2 / 2.0 if self.mu is not None else self.epsilon**2 / 2.0


def compose_losses(losses: Iterable[PrivacyLoss]) -> PrivacyLoss:
    """The sequential composition of releases' privacy losses: Gaussian ones into one Gaussian
    (mu^2 = sum mu_t^2, exact), pure ones by adding their epsilons; deltas add.

    Parameters
    ----------
    losses : iterable of PrivacyLoss
        The releases' losses, in order.

    Returns
    -------
    PrivacyLoss
        ``mu`` only when every release is Gaussian; ``epsilon`` the sum of the pure bounds.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import PrivacyLoss, compose_losses
    >>> inf = float("inf")
    >>> compose_losses([PrivacyLoss(inf, 1e-6, 0.3), PrivacyLoss(inf, 1e-6, 0.4)])
    PrivacyLoss(epsilon=inf, delta=2e-06, mu=0.5)
    """
    eps, delta, s2, gaussian = 0.0, 0.0, 0.0, True
    for loss in losses:
        eps += loss.epsilon
        delta = min(delta + loss.delta, 1.0)
        if loss.mu is None:
            gaussian = False
        else:
            s2 += loss.mu ** 2
    return PrivacyLoss(eps, delta, float(np.sqrt(s2)) if gaussian else None)


# --- the abstract noise type ---------------------------------------------------------------
class NoiseType(ABC):
    """One noise family with its sampler: calibration, draws, privacy loss, transcript
    likelihood and the small queries the engine asks (module docstring).

    A subclass sets ``family`` (the family's name, text for the ledger and messages),
    ``exact`` (an exact sampler, or numpy's float64 one), ``mechanism`` (the ledger's name),
    ``norm`` (1 or 2) and ``needs_delta``, and implements :meth:`calibrate` and
    :meth:`log_ratio`; an exact sampler implements :meth:`sample_steps`, a float one
    :meth:`draw` and :meth:`unit_noise`. Two noise types are equal when they are of one class
    with equal :meth:`key`.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import noise_type
    >>> lap = noise_type("laplace")
    >>> lap, lap.mechanism, lap.norm, lap.needs_delta, lap.exact
    (noise_type('laplace', sampler='discrete'), 'Laplace (discrete)', 1, False, True)
    """

    family: str = ""
    exact: bool = False
    mechanism: str = ""
    norm: int = 1
    needs_delta: bool = False

    # --- identity
    def key(self) -> tuple[Any, ...]:
        """What makes two noise types of one class equal (a pickled copy equals its original).

        Returns
        -------
        tuple
            The family, the sampler and the mechanism's name.
        """
        return (self.family, self.sampler, self.mechanism)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.key() == self.key()

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self.key()))

    def __repr__(self) -> str:
        if _BY_NAME.get((self.family, self.sampler)) == self:
            return f"noise_type({self.family!r}, sampler={self.sampler!r})"
        return f"{type(self).__name__}()"

    # --- (e) small queries
    @property
    def sampler(self) -> str:
        """The sampler's name: ``"discrete"`` (exact) or ``"continuous"`` (numpy's float64)."""
        return SAMPLERS[0] if self.exact else SAMPLERS[1]

    def with_sampler(self, sampler: str) -> NoiseType:
        """The same family drawn by ``sampler`` (the users' ``sampler=`` argument).

        Parameters
        ----------
        sampler : {"discrete", "continuous"}
            The sampler asked for.

        Returns
        -------
        NoiseType
            The library's type of this family and sampler, or this type if it is drawn so.

        Raises
        ------
        ValueError
            If the sampler is unknown, or this family has no type drawn by it.

        Examples
        --------
        >>> from dpkmeans.privacy.noise_types import LAPLACE
        >>> LAPLACE.with_sampler("discrete")
        noise_type('laplace', sampler='discrete')
        """
        if check_sampler(sampler) == self.sampler:
            return self
        named = _BY_NAME.get((self.family, sampler))
        if named is None:
            raise ValueError(f"{self!r} has no {sampler} sampler")
        return named

    @property
    def leak(self) -> str | None:
        """What a ledger records with a noised release of this type: :data:`FLOAT_LEAK` for a
        float sampler, None for an exact one."""
        return None if self.exact else FLOAT_LEAK

    @property
    def sampler_family(self) -> NoiseType:
        """The noise type its samplers draw and its transcript is scored with (itself; colored
        noise draws Gaussian noise on the whitened vector)."""
        return self

    @property
    def whitened(self) -> bool:
        """Whether it is released on a whitened vector (:meth:`whitening` is not all ones)."""
        return False

    def whitening(self, bounds: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        """Per coordinate of (S_j - n_j m, n_j), the factor that makes the noise white: ones
        (colored noise: 1 / sqrt(r_i), r the box's half-widths, and 1 for the count).

        Parameters
        ----------
        bounds : (lower, upper)
            The public box of the d features.

        Returns
        -------
        ndarray
            Shape (d + 1,).
        """
        return np.ones(coordinate_bounds(bounds).size + 1)

    def sd(self, scale: float) -> float:
        """The standard deviation of one noise coordinate at ``scale``.

        Parameters
        ----------
        scale : float
            The calibration's scale (Laplace b, Gaussian sigma).

        Returns
        -------
        float
            The standard deviation.
        """
        return float(scale)

    def check_delta(self, delta: float) -> float:
        """The delta a release of this noise may be calibrated with: in (0, 1) when it
        :attr:`needs_delta`, else exactly 0.

        Parameters
        ----------
        delta : float
            The delta asked for.

        Returns
        -------
        float
            ``delta``, checked.

        Raises
        ------
        ValueError
            If it does not fit the noise.
        """
        if self.needs_delta:
            return check_delta(delta)
        if delta != 0.0:
            raise ValueError(f"delta must be 0 for {self.family.capitalize()} noise")
        return 0.0

    # --- (a) calibration
    @abstractmethod
    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        """Calibrate the noise of one release of a ``coordinates``-vector.

        Parameters
        ----------
        sensitivity : float
            The whole vector's sensitivity in :attr:`norm` (>= 0).
        epsilon : float
            The privacy budget (> 0).
        delta : float, default 0.0
            In (0, 1) when the noise :attr:`needs_delta`, else 0.
        coordinates : int, default 1
            The number of coordinates released (each rounding adds to the sensitivity).
        integer_valued : bool, default False
            Every coordinate is an integer (a count).

        Returns
        -------
        NoiseCalibration
            The noise to draw and what the ledger records of it.

        Raises
        ------
        ValueError
            If an input is out of range (:class:`~dpkmeans.errors.BudgetTooSmallError` when
            the budget is too small for an exact sampler's integer range).
        """

    def min_epsilon(self, sensitivity: float, *, coordinates: int = 1,
                    integer_valued: bool = False) -> float:
        """The smallest epsilon :meth:`calibrate` accepts (0.0: every epsilon > 0).

        Parameters
        ----------
        sensitivity : float
            The sensitivity (>= 0).
        coordinates : int, default 1
            The number of coordinates released.
        integer_valued : bool, default False
            Every coordinate is an integer.

        Returns
        -------
        float
            The floor on epsilon.
        """
        check_sensitivity(sensitivity)
        check_positive_int(coordinates, "coordinates")
        return 0.0

    def details(self, cal: NoiseCalibration) -> dict[str, Any]:
        """What the ledger records about the sampler of ``cal``.

        Parameters
        ----------
        cal : NoiseCalibration
            A calibration of this noise.

        Returns
        -------
        dict
            At least the sampler's name.
        """
        return {"sampler": self.sampler}

    # --- (b) samplers
    def sample_steps(self, steps: np.ndarray,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Exact integer noise for parameters ``steps`` (all > 0), shape (R, *steps.shape),
        replica r from ``rngs[r]`` only (an exact sampler's; a float one has none).

        Parameters
        ----------
        steps : ndarray of int
            The integer noise parameter of each element.
        rngs : sequence of numpy.random.Generator
            One generator per replica.

        Returns
        -------
        ndarray of int64
            The noise in grid steps.

        Raises
        ------
        TypeError
            For a noise type without an exact sampler.
        """
        raise TypeError(f"{self!r} has no exact sampler")

    def draw_steps(self, noise_steps: np.ndarray, rngs: Sequence[np.random.Generator], *,
                   per_replica: bool = False) -> np.ndarray:
        """Integer noise in grid steps, shape (R, *noise_steps.shape), replica r from
        ``rngs[r]`` only; elements whose ``noise_steps`` is 0 get no noise. With
        ``per_replica``, ``noise_steps`` is (R, *S) and row r is what
        ``draw_steps(noise_steps[r], [rngs[r]])`` gives.

        Parameters
        ----------
        noise_steps : ndarray of int
            The integer noise parameter of each element (0: no noise).
        rngs : sequence of numpy.random.Generator
            One generator per replica.
        per_replica : bool, default False
            ``noise_steps`` has a leading axis of one row per replica.

        Returns
        -------
        ndarray of int64
            The noise in steps.

        Raises
        ------
        ValueError
            If ``per_replica`` and ``noise_steps`` has no leading axis of R rows.
        """
        steps = np.asarray(noise_steps, dtype=np.int64)
        if per_replica:
            if steps.ndim == 0 or steps.shape[0] != len(rngs):
                raise ValueError(f"per-replica noise steps need a leading axis of {len(rngs)} "
                                 f"replicas, got shape {steps.shape}")
            return self.draw_steps_per_replica(steps, rngs)
        active = steps > 0
        out = np.zeros((len(rngs), *steps.shape), dtype=np.int64)
        if not active.any():
            return out
        if active.all():
            return self.sample_steps(steps, rngs)
        out[:, active] = self.sample_steps(steps[active], rngs)
        return out

    def draw_steps_per_replica(self, steps: np.ndarray,
                               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """:meth:`draw_steps` with one row of ``steps`` per replica, (R, *S): one replica at a
        time (a sampler that can batch the replicas overrides it, with the same draws).

        Parameters
        ----------
        steps : ndarray of int64
            Row r: replica r's noise parameters.
        rngs : sequence of numpy.random.Generator
            One generator per replica.

        Returns
        -------
        ndarray of int64
            Shape (R, *S).
        """
        return np.stack([self.draw_steps(s, [g])[0] for s, g in zip(steps, rngs)])

    def draw(self, scale: float, rngs: Sequence[np.random.Generator],
             shape: tuple[int, ...]) -> np.ndarray:
        """Float64 noise at ``scale`` of shape (R, *shape), replica r from ``rngs[r]`` only
        (numpy's sampler: a ledger records it as a leak).

        Parameters
        ----------
        scale : float
            The scale (Laplace b, Gaussian sigma).
        rngs : sequence of numpy.random.Generator
            One generator per replica.
        shape : tuple of int
            One replica's shape.

        Returns
        -------
        ndarray
            Shape (R, *shape).

        Raises
        ------
        TypeError
            For a noise type without a float sampler.
        """
        raise TypeError(f"{self!r} has no float sampler")

    def unit_noise(self, rngs: Sequence[np.random.Generator],
                   shape: tuple[int, ...]) -> np.ndarray:
        """Unit-scale float64 noise of shape (R, *shape), drawn up front for releases that
        scale it later (:func:`dpkmeans.privacy.mechanisms.unit_noise`).

        Parameters
        ----------
        rngs : sequence of numpy.random.Generator
            One generator per replica.
        shape : tuple of int
            One replica's shape.

        Returns
        -------
        ndarray
            Shape (R, *shape).

        Raises
        ------
        TypeError
            For a noise type without a float sampler.
        """
        raise TypeError(f"{self!r} has no float sampler")

    # --- (c) privacy loss
    def release(self, cal: NoiseCalibration, times: int = 1) -> Release | None:
        """What a ledger composes tightly for ``times`` releases calibrated by ``cal`` (book
        chapter 3, "Tight composition"): Gaussian noise by mu = Delta_2 / sigma at the
        calibration's nominal sigma (the drawn sigma is at least that), noise with a pure
        epsilon as Laplace noise with Delta_1 / b = epsilon, else by (epsilon, delta).

        Parameters
        ----------
        cal : NoiseCalibration
            A calibration of this noise.
        times : int, default 1
            How many such releases compose in sequence.

        Returns
        -------
        Release or None
            None when no noise is added.

        Examples
        --------
        >>> from dpkmeans.privacy.noise_types import DISCRETE_GAUSSIAN, LAPLACE
        >>> LAPLACE.calibrate(2.0, 0.5).release()
        Release(kind='laplace', epsilon=0.5, delta=0.0, mu=0.0, times=1)
        >>> round(DISCRETE_GAUSSIAN.calibrate(1.0, 1.0, 1e-5).release().mu, 4)
        0.2472
        """
        if not cal.adds_noise:
            return None
        loss = self.loss(cal)
        if loss.mu is not None:
            nominal = cal.nominal_scale or cal.scale
            return Release("gaussian", epsilon=cal.epsilon, delta=cal.delta,
                           mu=cal.sensitivity / nominal, times=times)
        if math.isfinite(loss.epsilon) and cal.delta == 0:
            return Release("laplace", epsilon=cal.epsilon, times=times)
        return Release("approx", epsilon=cal.epsilon, delta=cal.delta, times=times)

    def loss(self, cal: NoiseCalibration) -> PrivacyLoss:
        """The privacy loss of a release calibrated by ``cal``: pure epsilon = Delta / scale
        (Laplace; at most the epsilon asked for, the scale being rounded up).

        Parameters
        ----------
        cal : NoiseCalibration
            A calibration of this noise.

        Returns
        -------
        PrivacyLoss
            Its loss description.
        """
        eps = cal.sensitivity / cal.scale if cal.adds_noise else 0.0
        return PrivacyLoss(eps, cal.delta)

    # --- (d) transcript likelihood
    @abstractmethod
    def log_ratio(self, y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
                  scale: np.ndarray) -> np.ndarray:
        """log f(y - mu0) - log f(y - mu1) per element, for noise of ``scale`` (all > 0).

        Parameters
        ----------
        y : ndarray
            The released values.
        mu0, mu1 : ndarray
            The exact values under D and D' (broadcast to ``y``).
        scale : ndarray
            Each element's scale (> 0).

        Returns
        -------
        ndarray
            The log-likelihood ratio of each element.
        """


# --- Laplace ---------------------------------------------------------------------------------
class Laplace(NoiseType):
    """Laplace noise, numpy's float64 sampler (as the papers; a ledger records the leak): scale
    b = Delta_1 / epsilon (book chapter 1).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import LAPLACE
    >>> LAPLACE.calibrate(1.0, 0.5).scale, LAPLACE.mechanism
    (2.0, 'Laplace (continuous)')
    """

    family = "laplace"
    exact = False
    mechanism = "Laplace (continuous)"
    norm = 1
    needs_delta = False

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        sens, eps = check_sensitivity(sensitivity), check_epsilon(epsilon)
        check_positive_int(coordinates, "coordinates")
        self.check_delta(delta)
        return NoiseCalibration(self, sens, eps, 0.0, sens / eps)

    def sd(self, scale: float) -> float:
        return float(np.sqrt(2.0) * scale)  # sqrt(2) b

    def draw(self, scale: float, rngs: Sequence[np.random.Generator],
             shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.laplace(0.0, scale, size=shape) for g in rngs])

    def unit_noise(self, rngs: Sequence[np.random.Generator],
                   shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.laplace(0.0, 1.0, size=shape) for g in rngs])

    def log_ratio(self, y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
                  scale: np.ndarray) -> np.ndarray:
        return (np.abs(y - mu1) - np.abs(y - mu0)) / scale


def _laplace_grid(sens: float, coordinates: int, integer_valued: bool) -> tuple[float, int]:
    """The public grid step g of a discrete Laplace release and its sensitivity in steps."""
    exponent = power_of_two_below(sens) - LAPLACE_GRID_BITS
    if integer_valued:
        exponent = min(exponent, 0)  # the integers lie on the grid
    grid = math.ldexp(1.0, exponent)
    return grid, math.ceil(sens / grid) + (0 if integer_valued else coordinates)


def _laplace_floor(steps: int) -> float:
    """The smallest float64 epsilon whose scale t = ceil(steps / epsilon) is at most
    :data:`LAPLACE_MAX_SCALE`, checked exactly in rationals."""
    floor = steps / LAPLACE_MAX_SCALE
    if Fraction(floor) < Fraction(steps, LAPLACE_MAX_SCALE):
        floor = math.nextafter(floor, math.inf)
    return floor


class DiscreteLaplace(Laplace):
    """Exact discrete Laplace noise on a public grid (Canonne, Kamath and Steinke 2020; book
    chapter 6): epsilon-DP for the rounded query, its sensitivity and scale rounded up.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import DISCRETE_LAPLACE
    >>> DISCRETE_LAPLACE.calibrate(1.0, 0.5, integer_valued=True).scale
    2.0
    >>> f"{DISCRETE_LAPLACE.min_epsilon(2.0, coordinates=3):.3g}"
    '1.49e-08'
    """

    exact = True
    mechanism = "Laplace (discrete)"

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        sens, eps = check_sensitivity(sensitivity), check_epsilon(epsilon)
        coordinates = check_positive_int(coordinates, "coordinates")
        self.check_delta(delta)
        b = sens / eps
        if sens == 0:
            return NoiseCalibration(self, sens, eps, 0.0, b)
        grid, steps = _laplace_grid(sens, coordinates, integer_valued)
        floor = _laplace_floor(steps)
        if eps < floor:
            minimum = round_up(floor)
            raise BudgetTooSmallError(
                f"epsilon = {eps:g} is too small for the exact sampler (Laplace noise, "
                f"sensitivity {sens:.3g}): give epsilon >= {minimum:g}",
                minimum, requested=eps)
        num, den = eps.as_integer_ratio()  # eps = num / den exactly
        t = -(-steps * den // num)  # ceil(steps / eps), exact in integers: t >= steps/eps
        return NoiseCalibration(self, sens, eps, 0.0, t * grid, grid, steps, t, b)

    # Integer scales t = ceil(steps / epsilon) of at most LAPLACE_MAX_SCALE = 2^56 steps, and a
    # real-valued release has 2^30 to 2^31 steps of sensitivity on its grid (LAPLACE_GRID_BITS,
    # plus one per coordinate): epsilon of at least 1.5e-8 to 3e-8 (0.0 for a zero sensitivity).
    def min_epsilon(self, sensitivity: float, *, coordinates: int = 1,
                    integer_valued: bool = False) -> float:
        sens = check_sensitivity(sensitivity)
        coordinates = check_positive_int(coordinates, "coordinates")
        if sens == 0:
            return 0.0
        return _laplace_floor(_laplace_grid(sens, coordinates, integer_valued)[1])

    def details(self, cal: NoiseCalibration) -> dict[str, Any]:
        return _grid_details(cal)

    def sample_steps(self, steps: np.ndarray,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return discrete_laplace(steps, rngs)

    # the replicas drawn together when they noise the same elements (discrete_laplace's
    # per_replica: the same draws as one at a time)
    def draw_steps_per_replica(self, steps: np.ndarray,
                               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        active = steps[0] > 0
        if not ((steps > 0) == active).all():  # one mask for all
            return super().draw_steps_per_replica(steps, rngs)
        out = np.zeros(steps.shape, dtype=np.int64)
        if active.any():
            out[:, active] = discrete_laplace(steps[:, active], rngs, per_replica=True)
        return out


def _grid_details(cal: NoiseCalibration) -> dict[str, Any]:
    """The ledger's details of an exact release on a grid (the rounding included)."""
    if not cal.adds_noise:
        return {"sampler": cal.noise.sampler}
    return {
        "sampler": cal.noise.sampler,
        "grid": cal.grid,
        "sensitivity on grid": cal.sensitivity_steps * cal.grid,
        "noise steps": cal.noise_steps,
        "scale rounding": cal.scale / cal.nominal_scale - 1.0,
        "assumes": "float64 statistic exact to within a grid step",
    }


# --- Gaussian --------------------------------------------------------------------------------
class Gaussian(NoiseType):
    """Gaussian noise, numpy's float64 sampler (a ledger records the leak), sigma from the
    analytic Gaussian mechanism (Balle and Wang 2018; book chapter 2).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import GAUSSIAN
    >>> round(GAUSSIAN.calibrate(1.0, 1.0, 1e-5).scale, 4), GAUSSIAN.norm, GAUSSIAN.needs_delta
    (3.7306, 2, True)
    """

    family = "gaussian"
    exact = False
    mechanism = "Gaussian (continuous, analytic)"
    norm = 2
    needs_delta = True

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        sens, eps = check_sensitivity(sensitivity), check_epsilon(epsilon)
        check_positive_int(coordinates, "coordinates")
        delta = self.check_delta(delta)
        if sens == 0:
            return NoiseCalibration(self, sens, eps, delta, 0.0)
        return NoiseCalibration(self, sens, eps, delta, gaussian_sigma_analytic(sens, eps, delta))

    def loss(self, cal: NoiseCalibration) -> PrivacyLoss:  # mu = Delta_2 / sigma, no pure eps
        if not cal.adds_noise:
            return PrivacyLoss(0.0, cal.delta, 0.0)
        return PrivacyLoss(math.inf, cal.delta, cal.sensitivity / cal.scale)

    def draw(self, scale: float, rngs: Sequence[np.random.Generator],
             shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.normal(0.0, scale, size=shape) for g in rngs])

    def unit_noise(self, rngs: Sequence[np.random.Generator],
                   shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.standard_normal(size=shape) for g in rngs])

    def log_ratio(self, y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
                  scale: np.ndarray) -> np.ndarray:
        return ((y - mu1) ** 2 - (y - mu0) ** 2) / (2.0 * scale**2)


class DiscreteGaussian(Gaussian):
    """Exact discrete Gaussian noise on a public grid, sigma^2 steps^2 rho-zCDP with
    rho = Delta_2^2 / (2 sigma^2) (Canonne, Kamath and Steinke 2020, Thm. 14), converted to
    (epsilon, delta) by their Cor. 13 (:func:`dpkmeans.privacy.gaussian.zcdp_delta`).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import DISCRETE_GAUSSIAN
    >>> cal = DISCRETE_GAUSSIAN.calibrate(1.0, 1.0, 1e-5)
    >>> cal.mechanism, round(cal.scale, 4)
    ('Gaussian (discrete, zCDP)', 4.0451)
    """

    exact = True
    mechanism = "Gaussian (discrete, zCDP)"

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        sens, eps = check_sensitivity(sensitivity), check_epsilon(epsilon)
        coordinates = check_positive_int(coordinates, "coordinates")
        delta = self.check_delta(delta)
        if sens == 0:
            return NoiseCalibration(self, sens, eps, delta, 0.0)
        rho = zcdp_rho_for(eps, delta)
        nominal = sens / math.sqrt(2.0 * rho)
        grid = math.ldexp(1.0, max(power_of_two_below(nominal) - GAUSSIAN_GRID_BITS,
                                   power_of_two_below(sens) - LAPLACE_GRID_BITS))
        steps = sens / grid + math.sqrt(coordinates)  # L2: rounding adds at most 1 per coordinate
        sigma2 = math.ceil(steps * steps / (2.0 * rho) * (1.0 + 1e-12)) + 1  # >= steps^2/(2 rho)
        return NoiseCalibration(self, sens, eps, delta, math.sqrt(sigma2) * grid, grid, steps,
                                sigma2, nominal)

    def details(self, cal: NoiseCalibration) -> dict[str, Any]:
        return _grid_details(cal)

    def sample_steps(self, steps: np.ndarray,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return discrete_gaussian(steps, rngs)


# --- colored Gaussian ------------------------------------------------------------------------
class ColoredGaussian(NoiseType):
    """Gaussian noise with the box optimum's covariance, prop. to diag(r, 1) for the centred
    (S_j - n_j m, n_j) of one cluster (Ravi, Scaglione and Peisert 2021; book chapter 9): white
    Gaussian noise of ``base`` on the whitened vector, scaled back. Its calibration, samplers
    and transcript likelihood are ``base``'s on the whitened vector.

    Parameters
    ----------
    base : Gaussian
        The Gaussian noise drawn on the whitened vector (exact or float).

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import COLORED
    >>> COLORED.whitening(([0.0, -1.0], [4.0, 1.0]))  # half-widths 2 and 1, and the count
    array([0.70710678, 1.        , 1.        ])
    >>> COLORED.sampler_family, COLORED.calibrate(2.0, 1.0, 1e-5).mechanism
    (noise_type('gaussian', sampler='discrete'), 'Gaussian (discrete, zCDP)')
    """

    family = "colored"
    norm = 2
    needs_delta = True

    def __init__(self, base: Gaussian) -> None:
        self.base = base
        self.exact = base.exact
        self.mechanism = base.mechanism

    def key(self) -> tuple[Any, ...]:
        return (self.family, self.base)

    @property
    def sampler_family(self) -> NoiseType:
        """``base``: Gaussian noise drawn on the whitened vector."""
        return self.base

    @property
    def whitened(self) -> bool:
        """True: released on the whitened vector."""
        return True

    def whitening(self, bounds: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        return 1.0 / np.sqrt(np.append(coordinate_bounds(bounds, True), 1.0))

    def sd(self, scale: float) -> float:
        return self.base.sd(scale)

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        # base's calibration for the whitened vector's L2 sensitivity
        return self.base.calibrate(sensitivity, epsilon, delta, coordinates=coordinates,
                                   integer_valued=integer_valued)

    def min_epsilon(self, sensitivity: float, *, coordinates: int = 1,
                    integer_valued: bool = False) -> float:
        return self.base.min_epsilon(sensitivity, coordinates=coordinates,
                                     integer_valued=integer_valued)

    def details(self, cal: NoiseCalibration) -> dict[str, Any]:
        return self.base.details(cal)

    def sample_steps(self, steps: np.ndarray,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return self.base.sample_steps(steps, rngs)

    def draw_steps_per_replica(self, steps: np.ndarray,
                               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return self.base.draw_steps_per_replica(steps, rngs)

    def draw(self, scale: float, rngs: Sequence[np.random.Generator],
             shape: tuple[int, ...]) -> np.ndarray:
        return self.base.draw(scale, rngs, shape)

    def unit_noise(self, rngs: Sequence[np.random.Generator],
                   shape: tuple[int, ...]) -> np.ndarray:
        return self.base.unit_noise(rngs, shape)

    def loss(self, cal: NoiseCalibration) -> PrivacyLoss:
        return self.base.loss(cal)

    def log_ratio(self, y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
                  scale: np.ndarray) -> np.ndarray:
        return self.base.log_ratio(y, mu0, mu1, scale)  # on whitened values


#: numpy's float64 Laplace sampler.
LAPLACE = Laplace()
#: Exact discrete Laplace noise on a public grid.
DISCRETE_LAPLACE = DiscreteLaplace()
#: numpy's float64 normal sampler, analytic calibration.
GAUSSIAN = Gaussian()
#: Exact discrete Gaussian noise on a public grid, zCDP calibration.
DISCRETE_GAUSSIAN = DiscreteGaussian()
#: Colored Gaussian noise drawn exactly (discrete Gaussian on the whitened vector).
COLORED = ColoredGaussian(DISCRETE_GAUSSIAN)
#: Colored Gaussian noise drawn with numpy's float64 normal sampler.
COLORED_CONTINUOUS = ColoredGaussian(GAUSSIAN)

_BY_NAME: dict[tuple[str, str], NoiseType] = {
    ("laplace", "continuous"): LAPLACE,
    ("laplace", "discrete"): DISCRETE_LAPLACE,
    ("gaussian", "continuous"): GAUSSIAN,
    ("gaussian", "discrete"): DISCRETE_GAUSSIAN,
    ("colored", "continuous"): COLORED_CONTINUOUS,
    ("colored", "discrete"): COLORED,
}


def noise_type(noise: NoiseType | str, sampler: str = "discrete") -> NoiseType:
    """The noise type of a public name and sampler; a :class:`NoiseType` is returned as it is.

    Parameters
    ----------
    noise : NoiseType or {"laplace", "gaussian", "colored"}
        A noise type, or the name users pass (``DPLloydConfig(noise=...)``).
    sampler : {"discrete", "continuous"}, default "discrete"
        The sampler of a named noise (not read for a :class:`NoiseType`).

    Returns
    -------
    NoiseType
        The noise type.

    Raises
    ------
    ValueError
        If the name or the sampler is unknown.

    Examples
    --------
    >>> from dpkmeans.privacy.noise_types import DISCRETE_GAUSSIAN, noise_type
    >>> noise_type("laplace", sampler="continuous")
    noise_type('laplace', sampler='continuous')
    >>> noise_type(DISCRETE_GAUSSIAN, sampler="continuous") is DISCRETE_GAUSSIAN
    True
    >>> noise_type("staircase")
    Traceback (most recent call last):
    ...
    ValueError: noise must be one of ('laplace', 'gaussian', 'colored'), got 'staircase'
    """
    if isinstance(noise, NoiseType):
        return noise
    if noise not in NOISE_NAMES:
        raise ValueError(f"noise must be one of {NOISE_NAMES}, got {noise!r}")
    return _BY_NAME[(str(noise), check_sampler(sampler))]


def noise_type_of(config: Any) -> NoiseType:
    """The noise type of a configuration with ``noise`` (a name or a :class:`NoiseType`) and
    ``sampler`` attributes (e.g. :class:`dpkmeans.engine.config.DPLloydConfig`).

    Parameters
    ----------
    config : object
        Its ``noise`` and ``sampler`` (``"discrete"`` if it has none) are read.

    Returns
    -------
    NoiseType
        :func:`noise_type` of them.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from dpkmeans.privacy.noise_types import noise_type_of
    >>> noise_type_of(SimpleNamespace(noise="colored", sampler="continuous")).sampler_family
    noise_type('gaussian', sampler='continuous')
    """
    return noise_type(config.noise, getattr(config, "sampler", "discrete"))
