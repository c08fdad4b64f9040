"""Scaling to a box by public bounds, with clipping that is counted.

Public bounds come from the registry and are data-independent. "Paper mode" takes the bounds
from the data's own min/max, as every paper did; it leaks the
extremes of the private data, so :func:`data_bounds` always emits a ``PrivacyLeakWarning``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from dpkmeans.errors import PrivacyLeakWarning

__all__ = [
    "MINUS_ONE_ONE",
    "ZERO_ONE",
    "ClipCounts",
    "check_bounds",
    "check_interval",
    "clip_columns",
    "data_bounds",
    "scale_to_interval",
    "unscale_from_interval",
]

MINUS_ONE_ONE: tuple[float, float] = (-1.0, 1.0)
ZERO_ONE: tuple[float, float] = (0.0, 1.0)


@dataclass(frozen=True)
class ClipCounts:
    """How many values were clipped, per column."""

    per_column: tuple[int, ...]

    @property
    def total(self) -> int:
        """All clipped values."""
        return int(sum(self.per_column))


def check_interval(interval: object) -> tuple[float, float]:
    """Return ``interval`` as ``(a, b)`` with finite ``a < b``, e.g. (-1, 1) or (0, 1)."""
    try:
        a, b = (float(v) for v in interval)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise TypeError(
            f"interval must be a pair of numbers such as (-1, 1), got {interval!r}"
        ) from None
    if not (np.isfinite(a) and np.isfinite(b) and a < b):
        raise ValueError(f"interval must satisfy finite a < b, got ({a}, {b})")
    return a, b


def check_bounds(bounds: object, n_features: int, *, allow_degenerate: bool = False) -> np.ndarray:
    """Return ``bounds`` as a float array of shape ``(n_features, 2)`` with lower <= upper."""
    arr = np.asarray(bounds, dtype=float)
    if arr.shape != (n_features, 2):
        raise ValueError(f"bounds must have shape ({n_features}, 2), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("bounds must be finite")
    ok = arr[:, 0] <= arr[:, 1] if allow_degenerate else arr[:, 0] < arr[:, 1]
    if not np.all(ok):
        bad = np.flatnonzero(~ok).tolist()
        raise ValueError(f"bounds need lower < upper; columns {bad} violate it")
    return arr


def _as_matrix(X: object) -> np.ndarray:
    arr = np.asarray(X, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-D array (rows x features), got {arr.ndim}-D")
    return arr


def clip_columns(X: object, bounds: object) -> tuple[np.ndarray, ClipCounts]:
    """Clip every column of ``X`` into its row of ``bounds`` (shape ``(d, 2)``) and count the
    clipped values per column; NaN stays NaN and is not counted. The engine's clip to its
    ``(lower, upper)`` box is :func:`dpkmeans.compute.bounds.clip_to_bounds`, built on this."""
    arr = _as_matrix(X)
    b = check_bounds(bounds, arr.shape[1], allow_degenerate=True)
    with np.errstate(invalid="ignore"):
        outside = (arr < b[:, 0]) | (arr > b[:, 1])
    counts = ClipCounts(tuple(int(c) for c in outside.sum(axis=0)))
    return np.clip(arr, b[:, 0], b[:, 1]), counts


def _width(b: np.ndarray) -> np.ndarray:
    # A column with lower == upper (only possible in paper mode) maps to the interval's lower end,
    # as scikit-learn's MinMaxScaler does.
    w = b[:, 1] - b[:, 0]
    return np.where(w > 0, w, 1.0)


def scale_to_interval(
    X: object, bounds: object, interval: object = MINUS_ONE_ONE
) -> tuple[np.ndarray, ClipCounts]:
    """Clip ``X`` into ``bounds``, then map each column affinely onto ``interval``."""
    a, b_hi = check_interval(interval)
    clipped, counts = clip_columns(X, bounds)
    b = np.asarray(bounds, dtype=float)
    unit = (clipped - b[:, 0]) / _width(b)
    return a + unit * (b_hi - a), counts


def unscale_from_interval(
    Y: object, bounds: object, interval: object = MINUS_ONE_ONE
) -> np.ndarray:
    """Inverse of :func:`scale_to_interval` (for values inside the interval); e.g. for centroids."""
    a, b_hi = check_interval(interval)
    arr = _as_matrix(Y)
    b = check_bounds(bounds, arr.shape[1], allow_degenerate=True)
    return b[:, 0] + (arr - a) / (b_hi - a) * (b[:, 1] - b[:, 0])


def data_bounds(X: object, *, stacklevel: int = 2) -> np.ndarray:
    """Per-column min and max of the data: the papers' normalisation ("paper mode").

    Always emits ``PrivacyLeakWarning``: the bounds reveal the private extremes and are not
    paid for with privacy budget.
    """
    arr = _as_matrix(X)
    if arr.shape[0] == 0:
        raise ValueError("paper-mode bounds need at least one row")
    warnings.warn(
        "paper mode: bounds taken from the data's own min/max, as the papers did. This leaks the "
        "extremes of the private data and is not differentially private; use the registry's "
        "public bounds for a private run.",
        PrivacyLeakWarning,
        stacklevel=stacklevel + 1,
    )
    return np.column_stack([np.nanmin(arr, axis=0), np.nanmax(arr, axis=0)])
