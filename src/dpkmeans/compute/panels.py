"""The numpy references of the compiled passes (:mod:`dpkmeans.compute.kernels`), bit for bit,
and the numpy path of the library when numba is not installed (:mod:`dpkmeans.compute.fastpath`).
No numba here: this module imports numpy and :mod:`dpkmeans.compute.nearest` only.

**The panels order** (the sums' contract, shared with the kernels): the block's rows are cut
into panels of :data:`TILE` = 256 rows from the block's start; a panel's sum of a cluster is
the left-to-right float64 sum of its rows in row order, from +0.0; the panels' sums are added
in panel order to the block's sums, from +0.0. :func:`_panel_sums` reproduces it with
``np.bincount`` (no BLAS); its rounding error is at most about (256 + m / 256) u sum |x| for an
m-row block.

**The canonical scores** of the silhouettes and distances (:func:`canonical_scores`): each
row's scores rounded in one order, no fused multiply-add, so that the bits are the same on
every CPU and in the compiled and numpy passes alike.

* :func:`panels_block_stats`: sums (R, k, d) and counts (R, k) of one block, given its exact
  labels (:func:`dpkmeans.compute.lloyd.assign`).
* :func:`panels_block_silhouette`: per-cluster sums of the centre-based silhouette and counts.
* :func:`panels_nearest_distance_sums`: per replica, the sums of the squared and plain
  distances to the nearest centroid.
"""

from __future__ import annotations

import numpy as np

from dpkmeans.compute.nearest import Nearest, as_data_matrix

__all__ = ["TILE", "canonical_scores", "panels_block_silhouette", "panels_block_stats",
           "panels_nearest_distance_sums"]

#: Rows of a tile (scored together by the kernels) and of a panel of the sums (module
#: docstring).
TILE = 256


def checked_sums(X: np.ndarray, sums: np.ndarray, counts: np.ndarray):
    """``(sums, counts)`` unchanged, after a ValueError if a non-finite sum comes from a
    non-finite value of ``X`` (an overflow of finite values is returned as it is)."""
    if not np.isfinite(sums).all():
        as_data_matrix(X)  # raises on NaN or inf in the block (else: overflow, returned)
    return sums, counts


def _panel_sums(values: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """The panels order with numpy: sums (k, w) of the rows of ``values`` (m, w) by label (m,):
    one ``np.bincount`` over (panel, label, column) bins of the flattened rows (a left-to-right
    loop from +0.0: each bin gets its rows in row order), then the panels' sums added in panel
    order to +0.0 by an explicit loop (``np.add.reduce`` may sum pairwise)."""
    m, w = values.shape
    P = max(1, -(-m // TILE))
    lab = labels.astype(np.intp, copy=False)
    base = (np.arange(m, dtype=np.intp) // TILE) * k + lab  # (panel, label) bin of each row
    bins = ((base * w)[:, None] + np.arange(w, dtype=np.intp)).ravel()
    per_panel = np.bincount(bins, weights=values.ravel(), minlength=P * k * w).reshape(P, k * w)
    out = np.zeros(k * w)  # +0.0, then the panels in order
    for p in range(P):
        out += per_panel[p]
    return out.reshape(k, w)


def canonical_scores(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores (R, k, m) of the rows of X (m, d) in the canonical order of the silhouettes
    and distances, and ||x||^2 (m,): s = fl(||c||^2) (as :class:`dpkmeans.compute.nearest.Nearest`
    rounds it), then each product fl(-2 c_f x_f) added in feature order, no fused
    multiply-add; ||x||^2 likewise from +0.0. Numpy, elementwise: the compiled scorer's bits."""
    near = Nearest(X, C)
    d = near.CT.shape[1]
    scores = np.repeat(near.B[:, d, :, None], X.shape[0], axis=2)  # (R, k, m)
    sq = np.zeros(X.shape[0])
    for f in range(d):
        scores += near.CT[:, f, :, None] * X[None, None, :, f]
        sq += X[:, f] * X[:, f]
    return scores, sq


def panels_block_stats(X: np.ndarray, C: np.ndarray,
                       labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The panels order with numpy only (no numba, no BLAS): sums (R, k, d) and counts (R, k)
    of one block X (m, d) whose exact labels (R, m) are given (:func:`dpkmeans.compute.lloyd.assign`)
    (:func:`_panel_sums` per replica)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    R, k, d = C.shape
    m = X.shape[0]
    labels = np.asarray(labels)
    if labels.shape != (R, m):
        raise ValueError(f"labels must have shape {(R, m)}, got {labels.shape}")
    sums = np.empty((R, k, d))
    counts = np.empty((R, k))
    for r in range(R):
        counts[r] = np.bincount(labels[r].astype(np.intp, copy=False), minlength=k)
        sums[r] = _panel_sums(X, labels[r], k)
    return checked_sums(X, sums, counts)


def panels_block_silhouette(X: np.ndarray, C: np.ndarray,
                            labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kernel_block_silhouette` with numpy only, bit for bit: each row's value from the
    :func:`canonical_scores`, given the exact labels (R, m), added in the panels order."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    R, k, _ = C.shape
    m = X.shape[0]
    scores, sq = canonical_scores(X, C)
    rows = np.arange(m)
    sums, counts = np.empty((R, k)), np.empty((R, k))
    with np.errstate(invalid="ignore", divide="ignore"):
        for r in range(R):
            lab = labels[r].astype(np.intp, copy=False)
            a2 = scores[r, lab, rows] + sq
            others = scores[r].copy()
            others[lab, rows] = np.inf
            b2 = others.min(axis=0) + sq if k > 1 else a2
            a = np.sqrt(np.maximum(a2, 0.0))  # NaN stays NaN (reported by the caller)
            b = np.sqrt(np.maximum(b2, 0.0))
            top = np.where(a > b, a, b)
            value = np.where(top > 0, (b - a) / np.where(top > 0, top, 1.0), 0.0)
            value = np.where(value < 0, 0.0, np.where(value > 1, 1.0, value))
            value[np.isnan(a) | np.isnan(b)] = np.nan
            counts[r] = np.bincount(lab, minlength=k)
            sums[r] = _panel_sums(value[:, None], lab, k)[:, 0]
    return checked_sums(X, sums, counts)


def panels_nearest_distance_sums(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kernel_nearest_distance_sums` with numpy only, bit for bit (one block): the
    minimum :func:`canonical_scores` of each row plus ||x||^2 (below 0: 0), and its square
    root, added in the panels order."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    R = C.shape[0]
    scores, sq = canonical_scores(X, C)
    squared, plain = np.empty(R), np.empty(R)
    zero = np.zeros(X.shape[0], dtype=np.intp)
    for r in range(R):
        v = scores[r].min(axis=0) + sq
        v = np.where(v > 0, v, 0.0)
        squared[r], plain[r] = _panel_sums(np.column_stack([v, np.sqrt(v)]), zero, 1)[0]
    return squared, plain
