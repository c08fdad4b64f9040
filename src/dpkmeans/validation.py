"""Checks of user-supplied privacy parameters.

Every public function validates its inputs here, so that bad input raises a ``ValueError``
(or ``TypeError``) that names the offending parameter instead of failing deep inside numpy.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from dpkmeans.errors import InvalidParameterError

__all__ = [
    "check_real",
    "check_epsilon",
    "check_delta",
    "check_sensitivity",
    "check_generator",
    "check_positive_int",
    "check_finite_array",
    "check_finite_vector",
]


def check_real(value: object, name: str) -> float:
    """Return ``value`` as a float; booleans, strings and containers are an
    :class:`~dpkmeans.errors.InvalidParameterError` (a ``TypeError`` and a ``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise InvalidParameterError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float; it must be finite and strictly positive."""
    eps = check_real(epsilon, name)
    if math.isnan(eps) or math.isinf(eps):
        raise ValueError(f"{name} must be finite, got {eps}")
    if eps <= 0:
        raise ValueError(f"{name} must be > 0, got {eps}")
    return eps


def check_delta(delta: object, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Return ``delta`` as a float in (0, 1) (or [0, 1) with ``allow_zero``)."""
    d = check_real(delta, name)
    if math.isnan(d):
        raise ValueError(f"{name} must not be NaN")
    low_ok = d >= 0 if allow_zero else d > 0
    if not (low_ok and d < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {d}")
    return d


def check_sensitivity(sensitivity: object, name: str = "sensitivity") -> float:
    """Return ``sensitivity`` as a float; it must be finite and >= 0."""
    s = check_real(sensitivity, name)
    if math.isnan(s) or math.isinf(s):
        raise ValueError(f"{name} must be finite, got {s}")
    if s < 0:
        raise ValueError(f"{name} must be >= 0, got {s}")
    return s


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``; a non-integer (``2.5``, ``"3"``, ``True``) is
    an :class:`~dpkmeans.errors.InvalidParameterError` (a ``TypeError`` and a ``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidParameterError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_generator(rng: object, name: str = "rng") -> np.random.Generator:
    """Require an explicit ``numpy.random.Generator`` (seeded randomness: ``docs/design.md``,
    "Determinism and the block plan")."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_finite_array(values: object, name: str, ndims: tuple[int, ...] = (1,)) -> np.ndarray:
    """Return ``values`` as a non-empty float array of one of the allowed dimensions, with only
    finite entries; a TypeError for non-numbers, a ValueError naming anything else."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers") from exc
    if arr.ndim not in ndims:
        want = " or ".join(f"{n}-D" for n in ndims)
        raise ValueError(f"{name} must be a {want} array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def check_finite_vector(values: object, name: str) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float array with only finite entries."""
    return check_finite_array(values, name, (1,))
