"""Exact Lloyd statistics: assignment and per-cluster sums and counts.

The nearest centroid minimises ||c||^2 - 2 x.c (the ||x||^2 term is the same for every
centroid), so assignment is one matrix product per block of rows and a minimum. The statistics
(per-cluster sums and counts, :func:`block_stats`) come from a compiled pass over each block
(:mod:`dpkmeans.compute.kernels`): each tile of rows is scored against every replica's
centroids and added to its cluster's sum while it is in cache, in the "panels" order, which
:func:`block_stats_reference` reproduces with numpy alone. Without numba (or with
``DPKMEANS_NO_NUMBA=1``) the map steps run these numpy references instead, with the same bits
(:mod:`dpkmeans.compute.fastpath`). Everything is batched over R
independent replicas (centroids shaped ``(R, k, d)``) and chunked over rows and replicas, so
memory stays bounded and there is no Python loop over points.

Determinism: a record's cluster is its exact nearest centroid (:mod:`dpkmeans.compute.nearest`), a
function of that record and the centroids alone, never of N, of the chunking or of the replicas
beside it (a neighbouring dataset must not change how the other records are assigned). The
sums of replica r are added in an order fixed by the rows alone (:mod:`dpkmeans.compute.kernels`), and
the distances of :func:`nearest_distance_sums` and the silhouettes come from scores rounded in
one canonical order (:func:`dpkmeans.compute.panels.canonical_scores`, no fused multiply-add), so
replica r's numbers are bit-identical whatever the number of replicas beside it, and on any
CPU. Ties go to the lowest centroid index, as with ``np.argmin``.

Precision: ``scores="single"`` computes the numpy path's assignment scores in float32. The
labels are the exact ones in either precision (more rows only need a second look), so every
number is the same; the compiled statistics always score in float64. Sums are never
accumulated in float32: a float32 sum of thousands of rows could move by more than the
rounding a sensitivity bound can ignore.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute import fastpath
from dpkmeans.compute.blocks import plan, tree_sum
from dpkmeans.compute.gil import marked_gil_free, releases_gil
from dpkmeans.compute.nearest import (  # noqa: F401  (re-exported: the rule's names as they were here)
    BLOCK_BYTES,
    GROUP_BYTES,
    MIN_ROWS,
    SCORE_PRECISIONS,
    Nearest,
    as_centroids,
    as_data_matrix,
    as_float_matrix,
    shadowed_centroids,
)
from dpkmeans.compute.panels import (
    panels_block_silhouette,
    panels_block_stats,
    panels_nearest_distance_sums,
)

__all__ = [
    "as_data_matrix",
    "as_centroids",
    "assign",
    "block_stats",
    "block_stats_reference",
    "block_silhouette",
    "block_silhouette_ahead",
    "block_silhouette_reference",
    "local_map_reduce",
    "stats_with",
    "batched_stats",
    "cluster_stats",
    "nearest_distance_sums",
    "nearest_distance_sums_reference",
    "lloyd_query",
    "lloyd_reference",
    "SCORE_PRECISIONS",
]


def assign(X: ArrayLike, centroids: ArrayLike, *, scores: str = "double") -> np.ndarray:
    """Nearest-centroid labels: shape (N,) for (k, d) centroids, (R, N) for (R, k, d).

    The exact nearest centroid of each row (:class:`Nearest`), whatever ``scores``: the
    precision only changes how many near ties need a second look.
    """
    X = as_data_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    R, k, _ = C.shape
    labels = np.empty((R, X.shape[0]), dtype=np.intp)
    index = np.arange(k, dtype=np.float64)
    for start, reps, chunk, _, onehot, _ in Nearest(X, C, scores).blocks():
        labels[reps, start:start + chunk.shape[0]] = np.matmul(index, onehot)  # exact integers
    return labels[0] if single else labels


@releases_gil
def block_stats(X: np.ndarray, C: np.ndarray, scores: str = "double") -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (R, k, d) and counts (R, k) of one block of rows (the map step).

    Compiled: :func:`dpkmeans.compute.kernels.kernel_block_stats`, one pass over the block for every
    replica. The sums are added in the "panels" order (:mod:`dpkmeans.compute.kernels`: rows in row
    order within panels of 256, the panels in order), which :func:`block_stats_reference`
    reproduces with numpy alone, bit for bit. The labels are exact in either score precision,
    so ``scores`` changes nothing here (the kernel scores in float64; ``"single"`` only speeds
    up the numpy path). A NaN or infinite value in the block raises the ValueError of
    :func:`as_data_matrix`. Without the compiled path (:mod:`dpkmeans.compute.fastpath`):
    :func:`block_stats_reference`, the same bits.
    """
    if scores not in SCORE_PRECISIONS:
        raise ValueError(f"scores must be one of {sorted(SCORE_PRECISIONS)}, got {scores!r}")
    compiled = fastpath.kernels()
    if compiled is None:
        return block_stats_reference(X, C, scores)
    return compiled.kernel_block_stats(X, C)


def block_stats_reference(X: np.ndarray, C: np.ndarray,
                          scores: str = "double") -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_stats` with numpy only, the tested reference: the exact labels of
    :class:`Nearest` (:func:`assign`), then the sums in the panels order
    (:func:`dpkmeans.compute.panels.panels_block_stats`, ``np.bincount``, no BLAS)."""
    R = C.shape[0]
    labels = assign(X, C, scores=scores).reshape(R, -1)
    return panels_block_stats(X, C, labels)


@releases_gil
def block_silhouette(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of the centre-based ("simplified") silhouette of one block, and counts:
    (R, k) and (R, k) (the O(n) form of Zhang, Liu and Wang, 2018).

    A record x of cluster j (its exact nearest centroid) has a = ||x - c_j|| and
    b = min over the other centroids of ||x - c_i||, and S(x) = (b - a) / max(a, b), which lies
    in [0, 1] because b >= a (0 when a = b = 0, and for k = 1). Each S(x) depends on its record
    and the centroids only, so adding a record moves one cluster's sum by at most 1.

    Compiled (:func:`dpkmeans.compute.kernels.kernel_block_silhouette`): one pass over the block for
    every replica, the values added in the panels order; :func:`block_silhouette_reference`
    is the numpy path (the same labels, counts and sums, bit for bit), which runs without the
    compiled path (:mod:`dpkmeans.compute.fastpath`).
    """
    compiled = fastpath.kernels()
    if compiled is None:
        return block_silhouette_reference(X, C)
    return compiled.kernel_block_silhouette(X, C)


@releases_gil
def block_silhouette_ahead(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_silhouette` for a caller that will ask for the statistics of the block
    next (the silhouette allocation's next iteration, chapter 8): the compiled path then
    computes that call's silhouettes in the same pass and keeps them for the silhouette call
    that follows (:class:`dpkmeans.compute.kernels._Fusion`); the same bits as
    :func:`block_silhouette` and :func:`block_stats`, one pass fewer per iteration."""
    compiled = fastpath.kernels()
    if compiled is None:
        return block_silhouette_reference(X, C)
    return compiled.kernel_block_silhouette_ahead(X, C)


def block_silhouette_reference(X: np.ndarray,
                               C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_silhouette` with numpy only, the tested reference, bit for bit: the exact
    labels of :func:`assign`, then :func:`dpkmeans.compute.panels.panels_block_silhouette`."""
    return panels_block_silhouette(X, C, assign(X, C).reshape(C.shape[0], -1))


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def local_map_reduce(X: np.ndarray, fn, *args, with_start: bool = False) -> tuple[np.ndarray, ...]:
    """``fn(block, *args)`` on every block of the public plan, added in its fixed order: the
    in-memory backend (:mod:`dpkmeans.compute.blocks`). With ``with_start`` the map function is called
    as ``fn(block, start_row, *args)`` (for statistics that depend on a row's position).

    The compiled map steps (:func:`dpkmeans.compute.gil.releases_gil`, which release the
    GIL) run their blocks on every usable core, in threads, when the compiled path is on
    (:mod:`dpkmeans.compute.fastpath`; the numpy path runs one block at a time); the results
    are still added in the plan's order, so the bits do not depend on the number of threads.
    """
    def one(rows: slice) -> tuple[np.ndarray, ...]:
        return fn(X[rows], rows.start, *args) if with_start else fn(X[rows], *args)
    blocks = plan(X.shape[0])
    threaded = marked_gil_free(fn) and len(blocks) > 1 and fastpath.compiled()
    workers = min(_usable_cores(), len(blocks)) if threaded else 1
    if workers <= 1:
        return tree_sum([one(rows) for rows in blocks])
    with ThreadPoolExecutor(workers) as pool:
        return tree_sum(list(pool.map(one, blocks)))


def _may_repeat(C: np.ndarray) -> bool:
    """False when no two replicas' centroids are equal, decided from one integer hash per
    replica (equal centroids hash alike; a collision or a NaN only means the full
    comparison runs): after the first iteration, sorting every replica's k d coordinates to
    find no repeat cost more than the statistics of a small pair."""
    R = C.shape[0]
    flat = np.ascontiguousarray(C.reshape(R, -1) + 0.0)  # + 0.0: -0.0 becomes 0.0
    if np.isnan(flat).any():
        return True
    words = flat.view(np.uint64)
    mix = np.arange(1, 2 * words.shape[1], 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    hashes = (words * mix).sum(axis=1, dtype=np.uint64)
    hashes ^= hashes >> np.uint64(29)
    return np.unique(hashes).size < R


def stats_with(map_reduce, data, C: np.ndarray, scores: str = "double") -> tuple[np.ndarray, ...]:
    """Sums and counts of every replica through a backend's ``map_reduce``. Replicas with equal
    centroids (the shared starts of a study's first iteration) are computed once: with exact
    assignment their statistics are the same bits anyway."""
    R, k, d = C.shape
    unique, inverse = C, None
    if R > 1 and _may_repeat(C):
        unique, inverse = np.unique(C.reshape(R, -1), axis=0, return_inverse=True)
        unique = unique.reshape(-1, k, d)
        if unique.shape[0] == R:
            unique, inverse = C, None
    sums, counts = map_reduce(data, block_stats, unique, scores)
    if inverse is None:
        return sums, counts
    return sums[inverse.ravel()], counts[inverse.ravel()]


def batched_stats(X: ArrayLike, centroids: ArrayLike, *,
                  scores: str = "double") -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts for every replica: (R, k, d) and (R, k), or (k, d)
    and (k,) for one set of centroids.

    This is the exact DP-Lloyd query f(D) of chapter 1. Empty clusters get zero
    sums and counts; they still receive noise downstream. ``scores`` is the precision
    of the assignment scores (see the module docstring); sums and counts are float64
    either way. Computed block by block on the public plan and added in its fixed
    order (:mod:`dpkmeans.compute.blocks`), exactly as the Dask backend does.
    """
    X = as_float_matrix(X)
    C, single = as_centroids(centroids, X.shape[1])
    sums, counts = stats_with(local_map_reduce, X, C, scores)
    return (sums[0], counts[0]) if single else (sums, counts)


def nearest_distance_sums(X: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replica, the sums over rows of the squared and of the plain Euclidean distance to
    the nearest centroid: two arrays of shape (R,) for (R, k, d) centroids.

    ||x - c||^2 = ||x||^2 + (||c||^2 - 2 x.c), minimised over c: compiled
    (:func:`dpkmeans.compute.kernels.kernel_nearest_distance_sums`) on the blocks of the public plan,
    added in its order (:func:`local_map_reduce`). The expansion loses absolute accuracy of
    about 1e-15 (||x||^2 + ||c||^2) per row, so a row sitting on a centroid can give a tiny
    negative square (set to 0) or a plain distance of order 1e-7 instead of 0. X and the
    centroids must already be checked (finite). :func:`nearest_distance_sums_reference` is
    the numpy path (the same bits), which runs without the compiled path
    (:mod:`dpkmeans.compute.fastpath`).
    """
    C, _ = as_centroids(centroids, X.shape[1])
    if X.shape[0] == 0:
        return np.zeros(C.shape[0]), np.zeros(C.shape[0])
    compiled = fastpath.kernels()
    if compiled is None:
        return nearest_distance_sums_reference(X, C)
    return local_map_reduce(np.ascontiguousarray(X, dtype=np.float64),
                            compiled.kernel_nearest_distance_sums, C)


def nearest_distance_sums_reference(X: np.ndarray,
                                    centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_distance_sums` with numpy only, the tested reference, bit for bit
    (:func:`dpkmeans.compute.panels.panels_nearest_distance_sums` on the same blocks)."""
    C, _ = as_centroids(centroids, X.shape[1])
    if X.shape[0] == 0:
        return np.zeros(C.shape[0]), np.zeros(C.shape[0])
    return local_map_reduce(np.ascontiguousarray(X, dtype=np.float64),
                            panels_nearest_distance_sums, C)


def cluster_stats(X: ArrayLike, centroids: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The DP-Lloyd query for one set of centroids: sums (k, d) and counts (k,)."""
    C = np.asarray(centroids, dtype=np.float64)
    if C.ndim != 2:
        raise ValueError(f"centroids must have shape (k, d), got {C.shape}")
    return batched_stats(X, C)


def lloyd_query(X: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """f(D) as one (k, d + 1) array, row j = (S_j, n_j): the layout whose L1 sensitivity
    :func:`dpkmeans.privacy.sensitivity.lloyd_query_sensitivity` bounds (book Thm. 1.3)."""
    sums, counts = cluster_stats(X, centroids)
    return np.hstack([sums, counts[:, None]])


def lloyd_reference(X: ArrayLike, initial_centroids: ArrayLike,
                    iterations: int) -> np.ndarray:
    """Non-private Lloyd from the given centroids, for a fixed number of iterations.

    The reference of the relative NICV and the F-measure: a private run is compared
    with this run from the same initial centroids. A cluster that becomes empty keeps
    its previous centroid. Batched like the rest.
    """
    if (isinstance(iterations, bool) or not isinstance(iterations, int | np.integer)
            or iterations < 0):
        raise ValueError(f"iterations must be an integer >= 0, got {iterations!r}")
    X = as_data_matrix(X)
    C, single = as_centroids(initial_centroids, X.shape[1])
    C = C.copy()
    for _ in range(int(iterations)):
        sums, counts = batched_stats(X, C)
        nonempty = counts > 0
        C[nonempty] = sums[nonempty] / counts[nonempty][:, None]
    return C[0] if single else C
