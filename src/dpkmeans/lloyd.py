"""Exact Lloyd statistics: assignment and per-cluster sums and counts (reference §1.4).

Assignment is one matrix product and an argmin: the nearest centroid minimises
||c||^2 - 2 x.c (the ||x||^2 term is the same for every centroid). The statistics are segment
sums (``np.bincount``). Everything is batched over R independent replicas (centroids shaped
``(R, k, d)``) and chunked over rows, so memory stays bounded and there is no Python loop
over points (DESIGN.md section 4).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "as_data_matrix",
    "as_centroids",
    "assign",
    "batched_stats",
    "cluster_stats",
    "lloyd_query",
    "lloyd_reference",
]

#: Target size of the per-chunk (rows x replicas x clusters) score array.
CHUNK_BYTES = 32 * 2**20


def as_data_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 (rows x features) array, or a ValueError naming the problem."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x features), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def as_centroids(centroids: ArrayLike, d: int) -> tuple[np.ndarray, bool]:
    """Centroids as an (R, k, d) array, and whether the input was a single (k, d) set."""
    C = np.asarray(centroids, dtype=np.float64)
    single = C.ndim == 2
    if single:
        C = C[None]
    if C.ndim != 3:
        raise ValueError(f"centroids must have shape (k, d) or (R, k, d), got {C.shape}")
    if C.shape[1] == 0:
        raise ValueError("centroids must contain at least one row")
    if C.shape[2] != d:
        raise ValueError(f"X has {d} features but centroids have {C.shape[2]}")
    if not np.all(np.isfinite(C)):
        raise ValueError("centroids must contain only finite values")
    return C, single


def _chunk_rows(n_rows: int, columns: int) -> int:
    return int(max(1, min(n_rows, CHUNK_BYTES // (8 * max(columns, 1)))))


def _nearest(X_chunk: np.ndarray, C_flat_T: np.ndarray, c_norms: np.ndarray, R: int, k: int):
    """(m, R) labels: argmin_j ||c_rj||^2 - 2 x.c_rj, one GEMM for all replicas."""
    scores = X_chunk @ C_flat_T  # (m, R*k)
    scores *= -2.0
    scores += c_norms
    return scores.reshape(X_chunk.shape[0], R, k).argmin(axis=2)


def assign(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """Nearest-centroid labels: shape (N,) for (k, d) centroids, (R, N) for (R, k, d)."""
    X = as_data_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    R, k, d = C.shape
    C_flat_T = np.ascontiguousarray(C.reshape(R * k, d).T)
    c_norms = (C * C).sum(axis=2).reshape(R * k)
    labels = np.empty((R, X.shape[0]), dtype=np.intp)
    step = _chunk_rows(X.shape[0], R * k)
    for start in range(0, X.shape[0], step):
        chunk = X[start:start + step]
        labels[:, start:start + chunk.shape[0]] = _nearest(chunk, C_flat_T, c_norms, R, k).T
    return labels[0] if single else labels


def batched_stats(X: ArrayLike, centroids: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts for every replica: (R, k, d) and (R, k) (or (k, d), (k,)).

    This is the exact DP-Lloyd query f(D) (book Thm. 1.3). Empty clusters get zero sums and
    counts; they still receive noise downstream.
    """
    X = as_data_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    R, k, d = C.shape
    C_flat_T = np.ascontiguousarray(C.reshape(R * k, d).T)
    c_norms = (C * C).sum(axis=2).reshape(R * k)
    offsets = (np.arange(R) * k)[None, :]
    sums = np.zeros((R * k, d))
    counts = np.zeros(R * k)
    step = _chunk_rows(X.shape[0], R * k)
    for start in range(0, X.shape[0], step):
        chunk = X[start:start + step]
        flat = (_nearest(chunk, C_flat_T, c_norms, R, k) + offsets).ravel()  # row-major (m, R)
        counts += np.bincount(flat, minlength=R * k)
        for j in range(d):  # d segment sums; each weight vector repeats a column R times
            weights = np.repeat(chunk[:, j], R) if R > 1 else chunk[:, j]
            sums[:, j] += np.bincount(flat, weights=weights, minlength=R * k)
    sums, counts = sums.reshape(R, k, d), counts.reshape(R, k)
    return (sums[0], counts[0]) if single else (sums, counts)


def cluster_stats(X: ArrayLike, centroids: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The DP-Lloyd query for one set of centroids: sums (k, d) and counts (k,)."""
    C = np.asarray(centroids, dtype=np.float64)
    if C.ndim != 2:
        raise ValueError(f"centroids must have shape (k, d), got {C.shape}")
    return batched_stats(X, C)


def lloyd_query(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """f(D) as one (k, d + 1) array, row j = (S_j, n_j): the layout whose L1 sensitivity
    :func:`dpkmeans.sensitivity.lloyd_query_sensitivity` bounds (book Thm. 1.3)."""
    sums, counts = cluster_stats(X, centroids)
    return np.hstack([sums, counts[:, None]])


def lloyd_reference(X: ArrayLike, initial_centroids: ArrayLike, iterations: int) -> np.ndarray:
    """Non-private Lloyd from the given centroids, for a fixed number of iterations.

    The reference for relative NICV and F-measure (reference §2.3: same initial centroids).
    A cluster that becomes empty keeps its previous centroid. Batched like the rest.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer) or iterations < 0:
        raise ValueError(f"iterations must be an integer >= 0, got {iterations!r}")
    X = as_data_matrix(X)
    C, single = as_centroids(initial_centroids, X.shape[1])
    C = C.copy()
    for _ in range(int(iterations)):
        sums, counts = batched_stats(X, C)
        nonempty = counts > 0
        C[nonempty] = sums[nonempty] / counts[nonempty][:, None]
    return C[0] if single else C
