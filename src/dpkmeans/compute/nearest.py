"""The exact nearest-centroid rule: which centroid a record joins, exactly.

A record x joins the centroid c minimising ||c||^2 - 2 x.c, the lowest index on an exact tie,
decided in real arithmetic: a function of that record and the public centroids alone, never of
N, of the other records, of the chunking or of the BLAS kernel (chapter 5 explains why the
privacy proof needs it). :class:`Nearest` scores chunks of rows with one matrix product and
decides a row from the rounded scores only when its best score wins by more than a proven
bound on the rounding (:func:`score_margin`); the near ties go to :func:`exact_nearest`
(float64 with a bound, then comparisons shown free of rounding, then integer arithmetic).

:mod:`dpkmeans.compute.lloyd` (the Lloyd statistics) and :mod:`dpkmeans.compute.kernels` (their compiled
passes) both build on this module, which imports neither.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SCORE_PRECISIONS", "as_centroids", "as_data_matrix", "shadowed_centroids"]

#: Floating-point types of the assignment scores (the statistics are always float64).
SCORE_PRECISIONS = {"double": np.float64, "single": np.float32}

#: Target size of one block of scores (replicas x clusters x rows, float64): small enough for
#: the block, its one-hot twin and its rows to stay in one core's L2 cache.
BLOCK_BYTES = 512 * 2**10
#: Fewest rows per chunk (so that very many clusters still give products of some size).
MIN_ROWS = 256


def as_data_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 (rows x features) array, or a ValueError naming the problem."""
    arr = as_float_matrix(X, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def as_float_matrix(X: ArrayLike, name: str = "X") -> np.ndarray:
    """:func:`as_data_matrix` without the finiteness scan (the caller checks its results)."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        # not the shape: its number of rows is private
        raise ValueError(f"{name} must be a 2-D array (rows x features), got {arr.ndim}-D")
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


def _blocks(n_rows: int, k: int, d: int, R: int) -> tuple[int, int]:
    """(rows per chunk, replicas per block). The chunks depend on (k, d) only, never on N or R;
    the replicas per block fill the cache for the rows actually present (speed only: with
    exact assignment no number depends on how replicas are grouped)."""
    rows = int(max(MIN_ROWS, BLOCK_BYTES // (8 * max(k, d))))
    m = max(1, min(rows, n_rows))
    reps = int(min(R, max(1, BLOCK_BYTES // (8 * k * m))))
    return rows, reps


#: Target size of one group's scores in the one-hot path (replicas x clusters x rows): the
#: scores of a group of replicas are one matrix product (speed only, like the replica blocks).
GROUP_BYTES = 2 * 2**20


def _group(m: int, k: int, R: int) -> int:
    """Replicas per group of the one-hot path for chunks of ``m`` rows (speed only)."""
    return int(min(R, max(1, GROUP_BYTES // (8 * k * max(m, 1)))))


#: Rounding unit of each score precision: every computed score is within
#: (d + 4) u sum_i |a_i b_i| of the exact one (a = (x, 1), b = (-2 c, ||c||^2)), whatever the
#: order of the products (Higham, Accuracy and Stability, eq. 3.5), plus 2 u sum_i |a_i b_i|
#: for the rounding of a and b to float32 in single precision.
_UNIT_ROUNDING = {np.float64: 2.0**-53, np.float32: 2.0**-24}


def score_margin(b_norm: np.ndarray, d: int, dtype: type) -> np.ndarray:
    """The margin per replica (in ``dtype``) by which a row's best score must beat the others
    for the rounded scores to decide it, with ``b_norm`` = max_j ||b_j|| (R,): 2.2 times the
    bound (d + 4 [+ 2]) u ||a|| max_j ||b_j|| on the rounding of a score
    (:data:`_UNIT_ROUNDING`; sum_i |a_i b_i| <= ||a|| ||b|| by Cauchy-Schwarz), times
    ||a|| = sqrt(||x||^2 + 1) by the caller. The slack (2.3, not 2.2) covers the rounding of
    the margin itself and of low + margin."""
    u = _UNIT_ROUNDING[dtype]
    extra = 0 if dtype == np.float64 else 2
    return (2.3 * (d + 4 + extra) * u * b_norm).astype(dtype)


#: Up to this many centroids, :func:`shadowed_centroids` compares every pair (k (k - 1) / 2
#: vectorised comparisons over the replicas) instead of sorting.
_PAIRWISE_MOST = 16


def shadowed_centroids(C: np.ndarray) -> np.ndarray:
    """(R, k) booleans: centroid j of replica r equals (``==`` in every coordinate) a centroid
    of lower index in the same replica. One sort of all R k rows by replica, then coordinates:
    O(R k log(R k) d), not all pairs (k = 10^4 made the pairwise (R, k, k, d) comparison take
    seconds and a gigabyte), and one numpy call for any number of replicas. Up to
    :data:`_PAIRWISE_MOST` centroids, the pairs are compared directly (the same answer, faster).

    Rows equal under ``==`` are equal under the sort's order too (-0.0 and 0.0 included), so
    they end up side by side; a stable sort keeps the lowest index first in each run. A NaN
    coordinate equals nothing, as with ``==``.
    """
    R, k, d = C.shape
    if k <= _PAIRWISE_MOST:  # few centroids: every pair, all replicas at once, is faster
        out = np.zeros((R, k), dtype=bool)
        for j in range(1, k):
            for i in range(j):
                out[:, j] |= (C[:, j] == C[:, i]).all(axis=1)
        return out
    rows = C.reshape(R * k, d)
    replica = np.repeat(np.arange(R), k)
    order = np.lexsort((*rows.T[::-1], replica))  # the last key sorts first; stable
    ranked, ranked_replica = rows[order], replica[order]
    out = np.zeros(R * k, dtype=bool)
    out[order[1:]] = ((ranked[1:] == ranked[:-1]).all(axis=1)
                      & (ranked_replica[1:] == ranked_replica[:-1]))
    return out.reshape(R, k)


class Nearest:
    """Nearest-centroid one-hot matrices of X, block by block, in reusable buffers.

    The score of centroid c for row x is a.b with a = (x, 1) and b = (-2 c, ||c||^2) (scaling
    by -2 is exact): one product per chunk of rows and group of replicas, (r k, d + 1) times
    (d + 1, m), since the order of its rounding does not matter (below). The one-hot matrix
    gives the labels (:func:`dpkmeans.compute.lloyd.assign`).

    **Exact assignment.** A record joins the centroid whose *exact* score, in real arithmetic,
    is smallest (the lowest index on an exact tie), with b = (-2 c, fl(||c||^2)) fixed by the
    public centroids. The matrix product is rounded, and how depends on the BLAS kernel, the
    chunk and a row's place in it; so a row is decided by the product only when its best score
    beats every other by more than twice a proven bound on the rounding (:data:`_UNIT_ROUNDING`).
    The few rows that do not (near ties) are decided again in float64 and, if still too close,
    in exact integer arithmetic (:func:`exact_nearest`). A record's cluster is then a
    function of that record and the centroids alone: not of N, of the other records, of the
    chunking or of the number of BLAS threads (tested bit for bit across N).
    """

    def __init__(self, X: np.ndarray, C: np.ndarray, scores: str = "double"):
        if scores not in SCORE_PRECISIONS:
            raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, got {scores!r}")
        self.dtype = SCORE_PRECISIONS[scores]
        R, k, d = C.shape
        self.k, self.d, self.X = k, d, X
        self.rows, self.reps = _blocks(X.shape[0], k, d, R)
        m = min(self.rows, X.shape[0])
        self.group = _group(m, k, R)
        c_norms = (C * C).sum(axis=2)  # (R, k): fl(||c||^2), public
        self.B = np.ascontiguousarray(
            np.concatenate([(-2.0 * C).transpose(0, 2, 1), c_norms[:, None, :]], axis=1))
        # A centroid equal (bit for bit) to one of lower index ties it on every row and never
        # wins: its ||c||^2 is set to +inf, and so its scores, so that centroids clipped to the
        # same corner of the box do not make every row a near tie.
        self.shadowed = shadowed_centroids(C)  # (R, k): equals an earlier centroid
        self.CT = np.ascontiguousarray(self.B[:, :d, :], dtype=self.dtype)  # (R, d, k)
        self.c_norms = np.where(self.shadowed, np.inf, c_norms).astype(self.dtype)[:, :, None]
        # The b vectors (-2 c, ||c||^2 or +inf) one centroid a row, replicas one after the
        # other: the scores of a group of replicas are one product with the augmented rows.
        self.BT = np.concatenate([self.CT.transpose(0, 2, 1), self.c_norms], axis=2).reshape(
            R * k, d + 1)
        with np.errstate(invalid="ignore", over="ignore"):
            self.b_norm = np.sqrt((self.B * self.B).sum(axis=1)).max(axis=1)  # max_j ||b_j||
        self.margin = score_margin(self.b_norm, d, self.dtype)

    def blocks(self):
        """Yield (row start, replica slice, rows, scores (r, k, m), one-hot (r, k, m), counts).

        The one-hot matrix has exactly one 1 per column: the exact nearest centroid (class
        docstring), and ``counts`` (r, k) are its row sums. Rows with a non-finite score follow
        np.argmin (a NaN wins); the caller reports non-finite data. ``rows`` are the chunk's
        rows of X, (m, d).
        """
        R, k, d = self.CT.shape[0], self.k, self.d
        m_max = min(self.rows, self.X.shape[0])
        size = self.group * k * m_max
        scores_buffer, min_buffer = np.empty(size, self.dtype), np.empty(size // k, self.dtype)
        hot_buffer, marks_buffer = np.empty(size), np.empty(size, dtype=bool)
        threshold_buffer = np.empty(self.group * m_max, dtype=self.dtype)
        augmented = np.empty((m_max, d + 1), dtype=self.dtype)  # a = (x, 1)
        augmented[:, d] = 1.0
        count_type = np.uint16 if m_max < 2**16 else np.uint32  # holds any count of a chunk
        for start in range(0, self.X.shape[0], self.rows):
            chunk = self.X[start:start + self.rows]
            m = chunk.shape[0]
            a = augmented[:m]
            a[:, :d] = chunk
            row_norm = np.sqrt(np.einsum("ij,ij->i", chunk, chunk) + 1.0).astype(self.dtype)
            for r0 in range(0, R, self.group):
                reps = slice(r0, min(R, r0 + self.group))
                nr = reps.stop - r0
                S = scores_buffer[:nr * k * m].reshape(nr * k, m)
                # One GEMM for the group: the assignment is exact whatever the rounding order.
                np.matmul(self.BT[r0 * k:reps.stop * k], a.T, out=S)
                S = S.reshape(nr, k, m)
                low = min_buffer[:nr * m].reshape(nr, m)
                np.minimum.reduce(S, axis=1, out=low)
                threshold = threshold_buffer[:nr * m].reshape(nr, m)
                np.multiply.outer(self.margin[reps], row_norm, out=threshold)
                threshold += low
                marks = marks_buffer[:nr * k * m].reshape(nr, k, m)
                np.less_equal(S, threshold[:, None, :], out=marks)
                # Every row with finite scores marks at least its minimum, so one centroid per
                # row is exactly "nr * m marks" (a row of a non-finite record marks none; the
                # callers report non-finite data: assign checks X first, batched_stats its sums).
                if np.count_nonzero(marks) != nr * m:
                    near = np.add.reduce(marks.view(np.uint8), axis=1, dtype=np.intp)
                    rep_of, col = np.nonzero(near != 1)  # near ties (or non-finite rows)
                    replica = rep_of + r0
                    rows = np.hstack([chunk[col], np.ones((col.size, 1))])
                    labels = exact_nearest(rows, self.B[replica], S[rep_of, :, col],
                                            ~self.shadowed[replica])
                    marks[rep_of, :, col] = labels[:, None] == np.arange(k)[None, :]
                counts = np.add.reduce(marks.view(np.uint8), axis=2, dtype=count_type).astype(
                    np.float64)  # exact integers
                hot = hot_buffer[:nr * k * m].reshape(nr, k, m)
                np.copyto(hot, marks)
                yield start, reps, chunk, S, hot, counts


def exact_nearest(a: np.ndarray, B: np.ndarray, scores: np.ndarray,
                  allowed: np.ndarray) -> np.ndarray:
    """argmin_j of the exact score sum_i a_i B_ij for each of n rows (lowest j on a tie), over
    the centroids ``allowed`` (n, k) (a centroid equal to an earlier one never wins).

    ``a`` (n, d + 1) are augmented rows, ``B`` (n, d + 1, k) their centroids' b vectors and
    ``scores`` (n, k) the rounded scores already computed (used for non-finite rows, where a
    NaN wins as in np.argmin: the caller reports non-finite data). Float64 first, with the
    rounding margin; rows still within it are decided exactly: by floating-point comparisons
    shown free of rounding (:func:`_rounding_free_tournament`), else in integer arithmetic.
    """
    labels = np.argmin(scores, axis=1)
    finite = np.isfinite(a).all(axis=1) & np.isfinite(B).all(axis=(1, 2))
    rows = np.flatnonzero(finite)
    if rows.size == 0:
        return labels
    s64 = np.einsum("ni,nik->nk", a[rows], B[rows])
    bound = 2.2 * (a.shape[1] + 3) * 2.0**-53 * np.einsum("ni,nik->nk", np.abs(a[rows]),
                                                            np.abs(B[rows]))
    s64[~allowed[rows]] = np.inf
    low = np.argmin(s64, axis=1)
    lo = np.arange(rows.size)
    gap = s64 - s64[lo, low][:, None] - bound - bound[lo, low][:, None]
    gap[lo, low] = np.inf
    sure = (gap > 0).all(axis=1)
    labels[rows[sure]] = low[sure]
    near = rows[~sure]  # a near tie even in float64: exact comparisons
    if near.size:
        ns = ~sure
        best_bound = (s64[lo, low] + bound[lo, low])[ns]
        # the contenders: centroids the float64 bound cannot rule out (the others lose)
        contender = allowed[near] & (s64[ns] - bound[ns] <= best_bound[:, None])
        best, undecided = _rounding_free_tournament(a[near], B[near], contender)
        labels[near[~undecided]] = best[~undecided]
        near = near[undecided]
    decided: dict[bytes, int] = {}  # duplicated records against the same centroids: once
    for r in near:  # rounding somewhere: exact integer scores
        key = a[r].tobytes() + B[r].tobytes() + allowed[r].tobytes()
        if key not in decided:
            candidates = np.flatnonzero(allowed[r])
            exact = _exact_dots(a[r], B[r][:, candidates])
            decided[key] = int(candidates[min(range(candidates.size),
                                              key=lambda j: (exact[j], j))])
        labels[r] = decided[key]
    return labels


#: Magnitudes within which Dekker's product and Knuth's sum are error-free transformations
#: (no overflow in the split, no underflow of an error term): 0 or 2^-400 <= |v| <= 2^400.
_ERROR_FREE_RANGE = (2.0**-400, 2.0**400)
#: Veltkamp's splitting constant for float64, 2^27 + 1.
_SPLIT = 134217729.0


def _error_free_dot(a: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sum_i a_i v_i for each row (n,), summed in index order, and whether it is *exact*: no
    product and no partial sum rounded (Dekker's TwoProduct and Knuth's TwoSum give each
    rounding error exactly: Higham, Accuracy and Stability, §4.3 and eq. 4.11). A row with a
    value outside :data:`_ERROR_FREE_RANGE` is not claimed exact."""
    def in_range(w: np.ndarray) -> np.ndarray:
        mag = np.abs(w)
        return (mag == 0) | ((mag >= _ERROR_FREE_RANGE[0]) & (mag <= _ERROR_FREE_RANGE[1]))
    def split(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = _SPLIT * w
        high = c - (c - w)
        return high, w - high
    with np.errstate(over="ignore", invalid="ignore"):  # out of range: not exact anyway
        exact = in_range(a).all(axis=1) & in_range(v).all(axis=1)
        P = a * v
        a_hi, a_lo = split(a)
        v_hi, v_lo = split(v)
        exact &= (((a_hi * v_hi - P) + a_hi * v_lo + a_lo * v_hi) + a_lo * v_lo == 0).all(axis=1)
        total = P[:, 0].copy()
        for i in range(1, P.shape[1]):
            p = P[:, i]
            t = total + p
            z = t - total
            exact &= (total - (t - z)) + (p - z) == 0
            total = t
    return total, exact


def _rounding_free_tournament(a: np.ndarray, B: np.ndarray,
                              contender: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact nearest of the ``contender`` centroids (n, k) for rows ``a`` (n, d + 1) with
    b vectors ``B`` (n, d + 1, k), where floating point can say it without rounding: the
    contenders in index order, each replacing the best so far when a.(b_j - b_best) < 0, so
    that a tie keeps the lowest index. Returns (best, undecided): a row is undecided when one
    of its comparisons rounded (then the caller uses integer arithmetic).

    This settles the frequent exact ties cheaply: centroids clipped to the box share most
    coordinates, whose differences are exactly 0, and records with 0/1 or dyadic attributes
    meet the rest without rounding (chapter 10's adult data: most of the near ties).
    """
    n, _, k = B.shape
    best = np.argmax(contender, axis=1)
    undecided = np.zeros(n, dtype=bool)
    rows = np.arange(n)
    for j in range(1, k):
        challenge = rows[contender[:, j] & (best < j) & ~undecided]
        if challenge.size == 0:
            continue
        b_j, b_best = B[challenge, :, j], B[challenge, :, best[challenge]]
        with np.errstate(over="ignore", invalid="ignore"):
            delta = b_j - b_best
            z = delta - b_j
            exact = ((b_j - (delta - z)) + (-b_best - z) == 0).all(axis=1)  # TwoSum
        value, exact_dot = _error_free_dot(a[challenge], delta)
        exact &= exact_dot
        undecided[challenge[~exact]] = True
        best[challenge[exact & (value < 0)]] = j
    return best, undecided


def _exact_dots(a: np.ndarray, B: np.ndarray) -> list[int]:
    """sum_i a_i B_ij for every column j, exactly, as integers on a common scale 2^-E (every
    float64 is an integer times a power of two, so the products and sums are exact integers)."""
    def parts(v: np.ndarray) -> tuple[list[int], list[int]]:
        mantissa, exponent = np.frexp(v)  # v = mantissa * 2^exponent, 0.5 <= |mantissa| < 1
        return [int(m) for m in np.ldexp(mantissa, 53)], [int(e) - 53 for e in exponent]
    a_m, a_e = parts(a)
    rows = [parts(B[:, j]) for j in range(B.shape[1])]
    E = -min(min(a_e) + min(e) for _, e in rows)
    return [sum((x << (ea + eb + E)) * y for x, ea, y, eb in zip(a_m, a_e, b_m, b_e))
            for b_m, b_e in rows]
