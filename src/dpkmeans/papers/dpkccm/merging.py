"""DP-KCCM's final release: merge n*k noisy clusters down to k (Ni et al. 2021, eq. 12).

After the last iteration DP-KCCM holds n*k noisy centroids c_j = S'_j / n'_j and their noisy
counts n'_j. It repeatedly takes the two nearest centroids c_p, c_q (Euclidean) and replaces
them by one. The paper writes the merged centroid coordinate-wise (eq. 12),

    c_o^i = min(c_p^i, c_q^i) + |c_p^i - c_q^i| n'_m / (n'_p + n'_q),  m = argmax(c_p^i, c_q^i),

which is exactly the noisy-count-weighted mean c_o = (n'_p c_p + n'_q c_q) / (n'_p + n'_q)
(book chapter 7 proves it; :func:`merge_eq12` writes eq. 12 literally so a test can show it).
The paper does not say what the merged count is; we use n'_o = n'_p + n'_q, the only choice
under which every later merge is still the weighted mean of the original clusters it absorbed.

Everything here reads only released values (noisy centroids and noisy counts), so it is
post-processing and costs no budget (the last step of the paper's Theorem 1). Noisy counts
can be <= 0 (empty clusters get noise too, and the paper does not handle such counts); they
are first clamped to ``count_floor`` (default 1) so the weights are positive and finite --
also post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.validation import check_positive_int, check_real

__all__ = ["merge_eq12", "merge_to_k", "merge_release", "MergeRelease"]


def merge_eq12(c_p: ArrayLike, c_q: ArrayLike, n_p: ArrayLike, n_q: ArrayLike) -> np.ndarray:
    """Ni et al.'s eq. 12, written literally (coordinate-wise, broadcasting).

    c_o^i = min(c_p^i, c_q^i) + |c_p^i - c_q^i| n'_m / (n'_p + n'_q) with m = p if
    c_p^i >= c_q^i and m = q otherwise. Equal to the noisy-count-weighted mean whenever
    n'_p + n'_q != 0; kept for the proof-by-test, :func:`merge_to_k` uses the mean.
    """
    c_p, c_q = np.asarray(c_p, dtype=float), np.asarray(c_q, dtype=float)
    n_p, n_q = np.asarray(n_p, dtype=float), np.asarray(n_q, dtype=float)
    n_m = np.where(c_p >= c_q, n_p, n_q)
    return np.minimum(c_p, c_q) + np.abs(c_p - c_q) * n_m / (n_p + n_q)


def _check_floor(count_floor: object) -> float:
    floor = check_real(count_floor, "count_floor")
    if not (np.isfinite(floor) and floor > 0):
        raise ValueError(f"count_floor must be finite and > 0, got {floor}")
    return floor


def merge_to_k(
    centroids: ArrayLike,
    noisy_counts: ArrayLike,
    k: int,
    *,
    count_floor: float = 1.0,
    return_counts: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Merge m noisy clusters down to k, nearest pair first (Ni et al. 2021, Alg. 1).

    Parameters
    ----------
    centroids, noisy_counts:
        ``(R, m, d)`` and ``(R, m)`` for R replicas (or ``(m, d)`` and ``(m,)`` for one).
    k:
        Clusters to keep, ``1 <= k <= m``.
    count_floor:
        Noisy counts are clamped to ``>= count_floor`` before merging (post-processing).
    return_counts:
        Also return the merged counts, ``(R, k)`` (or ``(k,)``).

    Each step merges, in every replica at once, the pair (p, q), p < q, at the smallest
    Euclidean distance into slot p with c_p <- c_q + w (c_p - c_q), w = n'_p / (n'_p + n'_q)
    (the weighted mean, in a form that returns c exactly when c_p == c_q) and
    n'_p <- n'_p + n'_q; slot q is retired. Ties go to the lexicographically lowest (p, q).
    Returns the k surviving centroids in slot order: ``(R, k, d)`` (or ``(k, d)``).
    The count-weighted total sum_j n'_j c_j and the total count are preserved by every merge.
    """
    C = np.array(centroids, dtype=float)  # a copy: merged in place below
    n = np.array(noisy_counts, dtype=float)
    single = C.ndim == 2
    if single:
        C, n = C[None], n[None]
    if C.ndim != 3:
        raise ValueError("centroids must have shape (R, m, d) or (m, d), "
                         f"got {np.shape(centroids)}")
    R, m, _ = C.shape
    if n.shape != (R, m):
        shape = (R, m) if not single else (m,)
        raise ValueError(f"noisy_counts must have shape {shape} to match centroids "
                         f"{np.shape(centroids)}, got {np.shape(noisy_counts)}")
    if not (np.all(np.isfinite(C)) and np.all(np.isfinite(n))):
        raise ValueError("centroids and noisy_counts must be finite")
    k = check_positive_int(k, "k")
    if k > m:
        raise ValueError(f"k must be <= the number of clusters to merge ({m}), "
                         f"got {k}")
    n = np.maximum(n, _check_floor(count_floor))

    # Squared distances (same argmin as Euclidean), symmetric with inf on the diagonal,
    # so a row-major argmin is the lowest (p, q) with p < q. Only merged rows are
    # recomputed.
    D = np.stack([np.sum((C - C[:, i, None, :]) ** 2, axis=-1) for i in range(m)],
                 axis=1)
    D[:, np.arange(m), np.arange(m)] = np.inf
    alive = np.ones((R, m), dtype=bool)
    rows = np.arange(R)
    for _ in range(m - k):
        flat = np.argmin(D.reshape(R, m * m), axis=1)
        p, q = np.divmod(flat, m)  # p < q by symmetry (row p precedes row q)
        w = n[rows, p] / (n[rows, p] + n[rows, q])
        C[rows, p] = C[rows, q] + w[:, None] * (C[rows, p] - C[rows, q])
        n[rows, p] += n[rows, q]
        alive[rows, q] = False
        d_new = np.sum((C - C[rows, p][:, None, :]) ** 2, axis=-1)
        d_new[~alive] = np.inf
        d_new[rows, p] = np.inf
        D[rows, p, :] = d_new
        D[rows, :, p] = d_new
        D[rows, q, :] = np.inf
        D[rows, :, q] = np.inf
    # every replica keeps exactly k slots, in order
    out = C[alive].reshape(R, k, C.shape[2])
    counts = n[alive].reshape(R, k)
    if single:
        out, counts = out[0], counts[0]
    return (out, counts) if return_counts else out


@dataclass(frozen=True)
class MergeRelease:
    """DP-KCCM's output, a post-processing of the loop's release
    (:class:`~dpkmeans.engine.strategies.PostProcess`): :func:`merge_to_k` to ``k``.

    A frozen dataclass (not a closure) so configurations compare by value and pickle.
    """

    k: int
    count_floor: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))
        object.__setattr__(self, "count_floor", _check_floor(self.count_floor))

    @property
    def __name__(self) -> str:  # the engine's ledger names the release by its __name__
        return (f"merge n*k -> {self.k} by noisy-count-weighted mean "
                f"(counts clamped to >= {self.count_floor:g}; the paper's eq. 12)")

    def __call__(self, centroids: np.ndarray, noisy_counts: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, merge_to_k(centroids, noisy_counts, self.k,
                                           count_floor=self.count_floor))


def merge_release(k: int, count_floor: float = 1.0) -> MergeRelease:
    """The release callable for DP-KCCM's engine configuration: merge n*k clusters to k."""
    return MergeRelease(k, count_floor)
