"""Exact Lloyd statistics: assignment and per-cluster sums and counts (reference §1.4).

The nearest centroid minimises ||c||^2 - 2 x.c (the ||x||^2 term is the same for every
centroid), so assignment is one matrix product per block of rows and a minimum. The statistics
come from a second product: a block's one-hot assignment matrix (clusters x rows) times its
rows gives the per-cluster sums, and its row sums give the counts. Everything is batched over R
independent replicas (centroids shaped ``(R, k, d)``) and chunked over rows and replicas, so
memory stays bounded, the working set stays in cache and there is no Python loop over points
(DESIGN.md section 4).

Determinism: the row chunks depend on (N, k, d) only and every matrix product is one product per
replica, so replica r's numbers are bit-identical whatever the number of replicas beside it.
Ties go to the lowest centroid index, as with ``np.argmin``.

Precision: ``scores="single"`` computes the assignment scores in float32 (about 1.3x faster on
large inputs) while the sums and counts stay float64. Which centroid a row joins is still a
deterministic function of that row and the centroids, so the query's sensitivity is unchanged
(book Thm. 1.3); only rows within about 1e-6 of a tie may join a different centroid than in
float64. The sums are never accumulated in float32: a float32 sum of thousands of rows could
move by more than the rounding a sensitivity bound can ignore.
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
    "nearest_distance_sums",
    "lloyd_query",
    "lloyd_reference",
    "SCORE_PRECISIONS",
]

#: Floating-point types of the assignment scores (the statistics are always float64).
SCORE_PRECISIONS = {"double": np.float64, "single": np.float32}

#: Target size of one block of scores (replicas x clusters x rows, float64): small enough for
#: the block, its one-hot twin and its rows to stay in one core's L2 cache.
BLOCK_BYTES = 512 * 2**10
#: Fewest rows per chunk (so that very many clusters still give products of some size).
MIN_ROWS = 256
#: Largest X that is copied once with a column of ones (see :class:`_Nearest`).
AUGMENT_BYTES = 4 * 2**20


def as_data_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 (rows x features) array, or a ValueError naming the problem."""
    arr = _as_matrix(X, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _as_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    """:func:`as_data_matrix` without the finiteness scan (the caller checks its results)."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x features), got shape {arr.shape}")
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


def _blocks(n_rows: int, R: int, k: int, d: int) -> tuple[int, int]:
    """(rows per chunk, replicas per block). Rows depend on (N, k, d) only, never on R."""
    rows = int(min(max(n_rows, 1), max(MIN_ROWS, BLOCK_BYTES // (8 * max(k, d)))))
    reps = int(min(R, max(1, BLOCK_BYTES // (8 * k * rows))))
    return rows, reps


class _Nearest:
    """Nearest-centroid one-hot matrices of X, block by block, in reusable buffers.

    The score of centroid c for row x is ||c||^2 + (-2 c).x (scaling by -2 is exact). When X
    fits in one chunk it is augmented with a column of ones, once, so that one product gives
    the scores (||c||^2 rides along as the weight of that column) and, later, the product of
    the one-hot matrix with the augmented rows gives sums and counts together. Otherwise
    ||c||^2 is added to each block and the counts are row sums of the one-hot matrix. The
    choice depends on (N, k, d) only, like the chunks.
    """

    def __init__(self, X: np.ndarray, C: np.ndarray, scores: str = "double"):
        if scores not in SCORE_PRECISIONS:
            raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, got {scores!r}")
        dtype = SCORE_PRECISIONS[scores]
        R, k, d = C.shape
        self.k = k
        self.rows, self.reps = _blocks(X.shape[0], R, k, d)
        self.augmented = X.shape[0] <= self.rows and 8 * X.shape[0] * (d + 1) <= AUGMENT_BYTES
        CT = (-2.0 * C).transpose(0, 2, 1)  # (R, d, k)
        c_norms = (C * C).sum(axis=2)  # (R, k)
        if self.augmented:
            self.CT = np.ascontiguousarray(np.concatenate([CT, c_norms[:, None, :]], axis=1),
                                           dtype=dtype)
            self.data = np.empty((X.shape[0], d + 1))
            self.data[:, :d] = X
            self.data[:, d] = 1.0
        else:
            self.CT, self.data = np.ascontiguousarray(CT, dtype=dtype), X
            self.c_norms = c_norms[:, :, None].astype(dtype)
        # The rows the score products read: X itself, or a float32 copy in single precision.
        self.score_data = self.data if dtype == np.float64 else self.data.astype(dtype)
        size = self.reps * k * self.rows
        self._scores, self._onehot = np.empty(size, dtype=dtype), np.empty(size)
        self._min = np.empty(self.reps * self.rows, dtype=dtype)

    def blocks(self, onehot: bool = True):
        """Yield (row start, replica slice, rows, scores (r, k, m), one-hot (r, k, m)).

        With ``onehot=False`` the last item is instead the minimum score of each row, (r, m).

        The one-hot matrix marks every centroid at the minimum score; it has exactly one 1 in
        each column unless there is a tie or a non-finite score (see :meth:`first_minimum`).
        ``rows`` are the rows of X, with the column of ones when augmented.
        """
        R, k = self.CT.shape[0], self.k
        for start in range(0, self.data.shape[0], self.rows):
            chunk = self.data[start:start + self.rows]
            score_rows = self.score_data[start:start + self.rows]
            m = chunk.shape[0]
            for r0 in range(0, R, self.reps):
                reps = slice(r0, min(R, r0 + self.reps))
                nr = reps.stop - r0
                S = self._scores[:nr * k * m].reshape(nr, k, m)
                np.matmul(score_rows, self.CT[reps], out=S.transpose(0, 2, 1))  # one GEMM a replica
                if not self.augmented:
                    S += self.c_norms[reps]
                low = self._min[:nr * m].reshape(nr, m)
                np.minimum.reduce(S, axis=1, out=low)
                if not onehot:
                    yield start, reps, chunk, S, low
                    continue
                hot = self._onehot[:nr * k * m].reshape(nr, k, m)
                np.equal(S, low[:, None, :], out=hot)
                yield start, reps, chunk, S, hot

    def first_minimum(self, S: np.ndarray, onehot: np.ndarray, bad: np.ndarray) -> np.ndarray:
        """Redo the one-hot matrices of the replicas flagged ``bad`` with np.argmin's rule (the
        lowest index wins a tie; a NaN score wins); return their indices."""
        idx = np.flatnonzero(bad)
        first = S[idx].argmin(axis=1)
        onehot[idx] = first[:, None, :] == np.arange(self.k)[None, :, None]
        return idx


def assign(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """Nearest-centroid labels: shape (N,) for (k, d) centroids, (R, N) for (R, k, d)."""
    X = as_data_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    R, k, _ = C.shape
    labels = np.empty((R, X.shape[0]), dtype=np.intp)
    index = np.arange(k, dtype=np.float64)
    nearest = _Nearest(X, C)
    for start, reps, chunk, S, onehot in nearest.blocks():
        bad = (onehot.sum(axis=1) != 1).any(axis=1)
        if bad.any():
            nearest.first_minimum(S, onehot, bad)
        labels[reps, start:start + chunk.shape[0]] = np.matmul(index, onehot)  # exact integers
    return labels[0] if single else labels


def batched_stats(X: ArrayLike, centroids: ArrayLike, *,
                  scores: str = "double") -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts for every replica: (R, k, d) and (R, k) (or (k, d), (k,)).

    This is the exact DP-Lloyd query f(D) (book Thm. 1.3). Empty clusters get zero sums and
    counts; they still receive noise downstream. ``scores`` is the precision of the
    assignment scores (see the module docstring); sums and counts are float64 either way.
    """
    X = _as_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    R, k, d = C.shape
    sums = np.zeros((R, k, d))
    counts = np.zeros((R, k))
    nearest = _Nearest(X, C, scores)
    with np.errstate(invalid="ignore"):  # NaN or inf in X: reported below, not warned about
        for _, reps, chunk, S, onehot in nearest.blocks():
            part = np.matmul(onehot, chunk)  # (r, k, m) @ (m, d[+1]): one GEMM a replica
            block_counts = part[:, :, d] if nearest.augmented else onehot.sum(axis=2)
            bad = block_counts.sum(axis=1) != chunk.shape[0]  # a tie or a non-finite score
            if bad.any():
                idx = nearest.first_minimum(S, onehot, bad)
                part[idx] = np.matmul(onehot[idx], chunk)
                block_counts[idx] = onehot[idx].sum(axis=2)
            sums[reps] += part[:, :, :d]
            counts[reps] += block_counts
    # Finiteness of X is checked here rather than up front (a full pass over X): every row is
    # in exactly one cluster with weight 1.0, so a NaN or infinite value in X makes a sum
    # non-finite. Only then is X scanned, to tell bad data from overflow of huge values.
    if not np.isfinite(sums).all():
        as_data_matrix(X)
    return (sums[0], counts[0]) if single else (sums, counts)


def nearest_distance_sums(X: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replica, the sums over rows of the squared and of the plain Euclidean distance to
    the nearest centroid: two arrays of shape (R,) for (R, k, d) centroids.

    One score product per block: ||x - c||^2 = ||x||^2 + (||c||^2 - 2 x.c), minimised over c.
    The expansion loses absolute accuracy of about 1e-15 (||x||^2 + ||c||^2) per row, so a
    row sitting on a centroid can give a tiny negative square (set to 0) or a plain distance
    of order 1e-7 instead of 0. X and the centroids must already be checked (finite).
    """
    C, _ = as_centroids(centroids, X.shape[1])
    R, _, d = C.shape
    sq_norms = np.einsum("nd,nd->n", X, X)
    squared, plain = np.zeros(R), np.zeros(R)
    for start, reps, chunk, _, low in _Nearest(X, C).blocks(onehot=False):
        dist2 = low + sq_norms[start:start + chunk.shape[0]]
        np.maximum(dist2, 0.0, out=dist2)
        squared[reps] += dist2.sum(axis=1)
        plain[reps] += np.sqrt(dist2).sum(axis=1)
    return squared, plain


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
