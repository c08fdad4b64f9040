"""Clipping the data to the public bounds before any statistic is computed (book chapter 5).

Every backend calls :func:`clip_to_bounds` in ``prepare`` (the Dask backend does the same check
block by block on its workers), so the sensitivity of every statistic is that of the public box
(:mod:`dpkmeans.privacy.sensitivity`). The per-column clip with counts is
:func:`dpkmeans.data.scaling.clip_columns`; this one takes the engine's ``(lower, upper)`` box.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.lloyd import as_data_matrix
from dpkmeans.data.scaling import clip_columns
from dpkmeans.privacy.sensitivity import check_bounds

__all__ = ["clip_to_bounds"]


def clip_to_bounds(X: ArrayLike, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
    """Clip every value to the public bounds; return the clipped data and how many changed."""
    X = as_data_matrix(X)
    lower, upper = check_bounds(bounds)
    if lower.size != X.shape[1]:
        raise ValueError(f"bounds have {lower.size} features but X has {X.shape[1]}")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one row")
    if np.all(X.min(axis=0) >= lower) and np.all(X.max(axis=0) <= upper):
        return X, 0  # already inside: no copy of X (the usual case with scaled data)
    clipped, counts = clip_columns(X, np.column_stack([lower, upper]))
    return clipped, counts.total
