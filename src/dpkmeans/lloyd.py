"""Exact Lloyd statistics: assignment and per-cluster sums and counts (reference §1.4).

Assignment is one matrix product, ||x||^2 - 2 x.c + ||c||^2, and an argmin; the
statistics are segment sums. No Python loop over points (DESIGN.md section 4).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["assign", "cluster_stats", "lloyd_query"]


def _as_matrix(x: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x features), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def assign(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """Index of the nearest centroid (squared Euclidean distance) for every row of X."""
    X = _as_matrix(X, "X")
    C = _as_matrix(centroids, "centroids")
    if X.shape[1] != C.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but centroids have {C.shape[1]}")
    if C.shape[0] == 0:
        raise ValueError("centroids must contain at least one row")
    d2 = (X * X).sum(axis=1)[:, None] - 2.0 * X @ C.T + (C * C).sum(axis=1)[None, :]
    return np.argmin(d2, axis=1)


def cluster_stats(X: ArrayLike, centroids: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The DP-Lloyd query f(D): per-cluster sums S (k x d) and counts n (k,), exact.

    Empty clusters get a zero sum and a zero count (they still receive noise downstream).
    """
    X = _as_matrix(X, "X")
    C = _as_matrix(centroids, "centroids")
    labels = assign(X, C)
    k, d = C.shape
    sums = np.zeros((k, d))
    np.add.at(sums, labels, X)
    counts = np.bincount(labels, minlength=k).astype(float)
    return sums, counts


def lloyd_query(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """f(D) as one (k, d + 1) array, row j = (S_j, n_j): the layout whose L1 sensitivity
    :func:`dpkmeans.sensitivity.lloyd_query_sensitivity` bounds (book Thm. 1.3)."""
    sums, counts = cluster_stats(X, centroids)
    return np.hstack([sums, counts[:, None]])
