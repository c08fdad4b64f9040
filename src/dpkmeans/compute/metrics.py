"""Evaluation metrics: SSE, NICV, F-measure, ARI (chapter 4 defines them).

Centroid metrics (:func:`sse`, :func:`nicv`, :func:`nicv_unsquared`, :func:`relative_nicv`)
accept one centroid set ``(k, d)`` and return a float, or a batch of ``R`` replicas
``(R, k, d)`` and return an array of shape ``(R,)``. Rows of ``X`` are processed in the blocks
of :mod:`dpkmeans.compute.lloyd` (bounded memory, one matrix product per block, no Python loop over
points).

The distance of a point to its nearest centroid is ``min_c ||x||^2 + (||c||^2 - 2 x.c)``
(:func:`dpkmeans.compute.lloyd.nearest_distance_sums`): one product per block and no gather of the
chosen centroids, about ten times faster than computing ``||x - c||`` directly. The expansion
costs absolute accuracy of about 1e-15 (||x||^2 + ||c||^2) per squared distance, far below
anything the book reports (a point on a centroid adds at most ~1e-7 to the unsquared sum).

Partition metrics (:func:`f_measure`, :func:`adjusted_rand_index`) compare a clustering with a
reference clustering (the non-private run from the same initial centroids).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from dpkmeans.compute.lloyd import nearest_distance_sums
from dpkmeans.validation import check_finite_array

__all__ = [
    "sse",
    "nicv",
    "nicv_unsquared",
    "nicv_pair",
    "relative_nicv",
    "f_measure",
    "f_measures",
    "adjusted_rand_index",
    "adjusted_rand_indices",
]


_MATCHINGS = ("hungarian", "larsen-aone")
_WEIGHTS = ("reference", "predicted")


# --------------------------------------------------------------------------------------------
# Input checks (arrays through validation.check_finite_array; labels are checked here, with
# the same conventions: a ValueError or TypeError that names the offending argument).
# --------------------------------------------------------------------------------------------


def _check_data(X: ArrayLike) -> np.ndarray:
    return check_finite_array(X, "X", (2,))


def _check_centroids(X: np.ndarray, centroids: ArrayLike, name: str) -> tuple[np.ndarray, bool]:
    """Centroids as an ``(R, k, d)`` array, and whether the input was batched (3-D)."""
    C = check_finite_array(centroids, name, (2, 3))
    batched = C.ndim == 3
    C3 = C if batched else C[None]
    if C3.shape[2] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but {name} have {C3.shape[2]}")
    return C3, batched


def _check_labels(labels_true: ArrayLike, labels_pred: ArrayLike) -> tuple[np.ndarray, ...]:
    """Integer codes 0..n-1 for two equally long, non-empty 1-D label vectors."""
    codes = []
    for name, labels in (("labels_true", labels_true), ("labels_pred", labels_pred)):
        arr = np.asarray(labels)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name} must not be empty")
        try:
            code, _ = pd.factorize(arr, use_na_sentinel=True)
        except TypeError as exc:
            raise TypeError(f"{name} must contain hashable labels") from exc
        if np.any(code < 0):
            raise ValueError(f"{name} must not contain missing labels (NaN or None)")
        codes.append(code)
    if codes[0].shape[0] != codes[1].shape[0]:
        raise ValueError(
            f"labels_true and labels_pred must have the same length, "
            f"got {codes[0].shape[0]} and {codes[1].shape[0]}"
        )
    return tuple(codes)


# --------------------------------------------------------------------------------------------
# Nearest-centroid distances, chunked over rows, batched over replicas.
# --------------------------------------------------------------------------------------------


def _reduce(X: np.ndarray, C3: np.ndarray, *, squared: bool) -> np.ndarray:
    """Per-replica sum over rows of the (squared or plain) distance to the nearest centroid."""
    sums = nearest_distance_sums(X, C3)
    return sums[0] if squared else sums[1]


def nicv_pair(X: ArrayLike, centroids: ArrayLike) -> tuple[float | np.ndarray, float | np.ndarray]:
    """(:func:`nicv`, :func:`nicv_unsquared`) from one pass over X."""
    X = _check_data(X)
    C3, batched = _check_centroids(X, centroids, "centroids")
    squared, plain = nearest_distance_sums(X, C3)
    return _out(squared / X.shape[0], batched), _out(plain / X.shape[0], batched)


def _out(values: np.ndarray, batched: bool) -> float | np.ndarray:
    return values if batched else float(values[0])


# --------------------------------------------------------------------------------------------
# Centroid metrics.
# --------------------------------------------------------------------------------------------


def sse(X: ArrayLike, centroids: ArrayLike) -> float | np.ndarray:
    """Sum of squared errors (Shang et al. 2021, eq. 4).

    ``SSE = sum_x min_j ||x - c_j||_2^2``: every row of ``X`` (N x d) counts with its squared
    Euclidean distance to the nearest centroid. ``centroids`` is ``(k, d)`` (returns a float)
    or ``(R, k, d)`` (returns an array of shape ``(R,)``, one value per replica).
    """
    X = _check_data(X)
    C3, batched = _check_centroids(X, centroids, "centroids")
    return _out(_reduce(X, C3, squared=True), batched)


def nicv(X: ArrayLike, centroids: ArrayLike) -> float | np.ndarray:
    """Squared NICV = SSE / N (Su et al. 2016). The primary metric.

    ``NICV = (1/N) sum_j sum_{x in C_j} ||x - c_j||_2^2`` where ``C_j`` are the points
    whose nearest *output* centroid is ``c_j``. Compute it on the normalised data
    (``[-1, 1]^d``). Accepts ``(k, d)`` centroids (returns a float) or ``(R, k, d)``
    (returns an array of shape ``(R,)``).
    """
    X = _check_data(X)
    C3, batched = _check_centroids(X, centroids, "centroids")
    return _out(_reduce(X, C3, squared=True) / X.shape[0], batched)


def nicv_unsquared(X: ArrayLike, centroids: ArrayLike) -> float | np.ndarray:
    """Unsquared NICV as printed in Ni et al. (2021), eq. 5:
    ``(1/N) sum_x min_j ||x - c_j||_2``.

    The paper cites Su et al.'s NICV, which squares the norm; the missing square is almost
    surely a typesetting slip (the unsquared sum is the k-median objective). It is kept only
    so that the DP-KCCM paper's curves can be compared; report :func:`nicv` as
    the primary metric. Accepts ``(k, d)`` or ``(R, k, d)`` centroids like :func:`nicv`.
    """
    X = _check_data(X)
    C3, batched = _check_centroids(X, centroids, "centroids")
    return _out(_reduce(X, C3, squared=False) / X.shape[0], batched)


def relative_nicv(
    X: ArrayLike, centroids: ArrayLike, reference_centroids: ArrayLike
) -> float | np.ndarray:
    """Relative squared NICV, ``(NICV_dp - NICV_np) / NICV_np``.

    ``centroids`` are the private output, ``reference_centroids`` the non-private ones (they
    may have a different number of centroids). Either may be a single ``(k, d)`` set or a
    batch ``(R, k, d)``; a single set is compared with every replica of a batch, and two
    batches must have the same ``R``. Returns a float when both are single sets, else an
    array of shape ``(R,)``. Raises ``ValueError`` if the reference NICV is 0.
    """
    X = _check_data(X)
    C3, batched = _check_centroids(X, centroids, "centroids")
    ref3, ref_batched = _check_centroids(X, reference_centroids, "reference_centroids")
    if batched and ref_batched and C3.shape[0] != ref3.shape[0]:
        raise ValueError(
            f"centroids and reference_centroids have different numbers of replicas "
            f"({C3.shape[0]} and {ref3.shape[0]})"
        )
    n = X.shape[0]
    dp = _reduce(X, C3, squared=True) / n
    ref = _reduce(X, ref3, squared=True) / n
    if np.any(ref == 0):
        raise ValueError("the reference NICV is 0, so the relative NICV is undefined")
    return _out((dp - ref) / ref, batched or ref_batched)


# --------------------------------------------------------------------------------------------
# Partition metrics.
# --------------------------------------------------------------------------------------------


def _contingency(codes_true: np.ndarray, codes_pred: np.ndarray) -> np.ndarray:
    """``C[i, j] = |U_i intersect V_j|`` for reference clusters ``U_i``, predicted ``V_j``."""
    n_true = int(codes_true.max()) + 1
    n_pred = int(codes_pred.max()) + 1
    flat = np.bincount(codes_true * n_pred + codes_pred, minlength=n_true * n_pred)
    return flat.reshape(n_true, n_pred)


def f_measure(
    labels_true: ArrayLike,
    labels_pred: ArrayLike,
    *,
    matching: Literal["hungarian", "larsen-aone"] = "hungarian",
    weights: Literal["reference", "predicted"] = "reference",
) -> float:
    """F-measure between a clustering and a reference clustering.

    ``labels_true`` is the reference (non-private) clustering ``{U_i}``,
    ``labels_pred`` the clustering to evaluate ``{V_j}``; labels are any hashable
    values and need not correspond. The per-pair score is the Dice coefficient
    ``F(U_i, V_j) = 2 |U_i n V_j| / (|U_i| + |V_j|)``, which equals the harmonic mean
    of precision and recall used by Zhang, Liu and Wang (2018) and Shang et al. (2021,
    eq. 17).

    ``matching``
        ``"hungarian"``: a one-to-one matching ``pi`` maximising the total overlap
        ``sum_i |U_i n V_pi(i)|`` (``scipy.optimize.linear_sum_assignment``), then
        ``F = sum_i w_i F(U_i, V_pi(i))``. When the two clusterings have different
        numbers of clusters, the clusters left unmatched contribute 0. Ties in total
        overlap are broken in favour of the larger F, so the value does not depend on
        the label order.
        ``"larsen-aone"`` (the classical clustering F-measure):
        ``F = sum_i w_i max_j F(U_i, V_j)``. It is never below the Hungarian value;
        the two differ when clusters are split or merged.
    ``weights``
        Which clustering supplies the weights and the outer sum. ``"reference"``:
        ``w_i = |U_i| / N`` over reference clusters (Zhang, Liu and Wang 2018).
        ``"predicted"``: the roles swap, ``F = sum_j |V_j| / N F(V_j, U_match(j))``
        over predicted clusters (Shang et al. 2021).

    Returns a float in ``[0, 1]``; 1 exactly when the two partitions coincide up to
    relabelling.
    """
    _check_options(matching, weights)
    codes_true, codes_pred = _check_labels(labels_true, labels_pred)
    overlap = _contingency(codes_true, codes_pred)
    return _f_from_overlap(overlap, codes_true.shape[0], matching, weights)


def _check_options(matching: str, weights: str) -> None:
    if matching not in _MATCHINGS:
        raise ValueError(f"matching must be one of {_MATCHINGS}, got {matching!r}")
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}")


def _f_from_overlap(overlap: np.ndarray, n: int, matching: str, weights: str) -> float:
    """:func:`f_measure` from the codes' contingency table (:func:`_contingency`)."""
    if weights == "predicted":
        overlap = overlap.T  # rows are now the weighted side
    row_sizes = overlap.sum(axis=1)
    col_sizes = overlap.sum(axis=0)
    # term[i, j] = |U_i| F(U_i, V_j) = 2 |U_i| |U_i n V_j| / (|U_i| + |V_j|); F is a
    # sum of terms divided by N. Dividing once at the end keeps F = 1 exact for equal
    # partitions.
    term = (2.0 * row_sizes[:, None] * overlap
            / (row_sizes[:, None] + col_sizes[None, :]))
    if matching == "larsen-aone":
        total = term.max(axis=1).sum()
    else:
        # Lexicographic objective: total overlap (an integer) first; the weighted F,
        # at most 1 over any matching and halved here, only breaks ties in total
        # overlap.
        # Imported here: every sweep cell imports this module.
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(overlap + 0.5 * term / n, maximize=True)
        total = term[rows, cols].sum()
    return float(min(total / n, 1.0))


def _batch_shapes(labels_true: ArrayLike, labels_pred: ArrayLike) -> tuple[np.ndarray,
                                                                         np.ndarray]:
    """The batched metrics' inputs as arrays: ``labels_pred`` (replicas, n), ``labels_true``
    one (n,) for every replica or one row each; a clear ValueError for other shapes."""
    pred = np.asarray(labels_pred)
    if pred.ndim != 2 or pred.shape[1] == 0:
        raise ValueError(f"labels_pred must have shape (replicas, n), got {pred.shape}")
    true = np.asarray(labels_true)
    if true.shape not in ((pred.shape[1],), pred.shape):
        raise ValueError(f"labels_true must have shape ({pred.shape[1]},) or {pred.shape}, "
                         f"got {true.shape}")
    return true, pred


def _replica_tables(codes_true: np.ndarray, codes_pred: np.ndarray, n_true: int,
                    n_pred: int) -> np.ndarray:
    """Each replica's contingency table (replicas, n_true, n_pred) of integer codes (replicas,
    n) below ``n_true`` and ``n_pred``, counted in one pass (:func:`_contingency` per row)."""
    reps = codes_pred.shape[0]
    flat = (np.arange(reps)[:, None] * n_true + codes_true) * n_pred + codes_pred
    return np.bincount(flat.ravel(), minlength=reps * n_true * n_pred).reshape(
        reps, n_true, n_pred)


def f_measures(
    labels_true: ArrayLike,
    labels_pred: ArrayLike,
    *,
    matching: Literal["hungarian", "larsen-aone"] = "hungarian",
    weights: Literal["reference", "predicted"] = "reference",
) -> np.ndarray:
    """:func:`f_measure` of each row of ``labels_pred`` (replicas, n) against ``labels_true``,
    one (n,) for all rows or one row each (replicas, n): the same floats, bit for bit, with the
    labels coded and the contingency tables counted for all replicas at once (the F-measures
    of chapters 8 and 11 score thousands of replicas a point). Non-negative integer labels
    are coded here (by first appearance, as :func:`f_measure`'s ``pd.factorize``); any other
    labels go through :func:`f_measure` one row at a time. Shape (replicas,)."""
    _check_options(matching, weights)
    true, pred = _batch_shapes(labels_true, labels_pred)
    shared = true.ndim == 1
    if shared:
        codes_true, _ = _check_labels(true, pred[0]) if pred.shape[0] else (None, None)
    coded = _small_codes(pred) if shared else _small_codes(true, pred)
    if coded is None:  # labels of another kind: one row at a time
        rows = [true if shared else true[r] for r in range(pred.shape[0])]
        return np.array([f_measure(t, p, matching=matching, weights=weights)
                         for t, p in zip(rows, pred, strict=True)], dtype=float)
    out = np.empty(pred.shape[0])
    n = pred.shape[1]
    if shared:
        (cp, kp), = coded
        n_true = int(codes_true.max()) + 1
        ct = np.broadcast_to(codes_true, pred.shape)
        kt = np.full(pred.shape[0], n_true)
    else:
        (ct, kt), (cp, kp) = coded
        n_true = int(kt.max())
    tables = _replica_tables(ct, cp, n_true, int(kp.max()))
    for r in range(pred.shape[0]):
        overlap = np.ascontiguousarray(tables[r, :kt[r], :kp[r]])  # as _contingency's
        out[r] = _f_from_overlap(overlap, n, matching, weights)
    return out


#: Largest label value that :func:`_small_codes` codes with one pass per value.
_SMALL_LABELS = 64


def _small_codes(*labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """For each (replicas, n) array of integer labels in 0 .. :data:`_SMALL_LABELS` - 1: the
    codes of each row by first appearance (``pd.factorize``'s) and the number of distinct
    labels of each row; None if an array holds other labels."""
    out = []
    for lab in labels:
        if (not np.issubdtype(lab.dtype, np.integer) or lab.size == 0 or lab.min() < 0
                or lab.max() >= _SMALL_LABELS):
            return None
        R, n = lab.shape
        K = int(lab.max()) + 1
        first = np.full((R, K), n, dtype=np.int64)  # n: absent from the row
        for v in range(K):
            hit = lab == v
            seen = hit.any(axis=1)
            first[seen, v] = hit.argmax(axis=1)[seen]
        order = np.argsort(first, axis=1, kind="stable")  # present labels by first index
        code = np.empty((R, K), dtype=np.int64)
        np.put_along_axis(code, order, np.arange(K)[None, :], axis=1)
        out.append((np.take_along_axis(code, lab.astype(np.int64), axis=1),
                    (first < n).sum(axis=1)))
    return out


def adjusted_rand_index(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Adjusted Rand index (Hubert and Arabie 1985): ``sklearn.metrics.adjusted_rand_score``.

    Labels are any hashable values; 1 for identical partitions, about 0 for independent ones.
    """
    from sklearn.metrics import adjusted_rand_score  # here: sweep cells import metrics

    codes_true, codes_pred = _check_labels(labels_true, labels_pred)
    return float(adjusted_rand_score(codes_true, codes_pred))


def adjusted_rand_indices(labels_true: ArrayLike, labels_pred: ArrayLike) -> np.ndarray:
    """The adjusted Rand index of each row of ``labels_pred`` (replicas, n) against the
    reference ``labels_true``, one (n,) for all rows or one row each (replicas, n):
    :func:`adjusted_rand_index` for a batch, from the replicas' contingency tables at once
    (integer labels 0..k-1 only, as :func:`dpkmeans.compute.lloyd.assign` returns). Shape (replicas,)."""
    true, pred = _batch_shapes(labels_true, labels_pred)
    true = np.broadcast_to(true, pred.shape)
    for name, arr in (("labels_true", true), ("labels_pred", pred)):
        if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0:
            raise TypeError(f"{name} must hold non-negative integer labels")
    n = pred.shape[1]
    table = _replica_tables(true, pred, int(true.max()) + 1, int(pred.max()) + 1).astype(float)

    def pairs(x: np.ndarray) -> np.ndarray:
        return x * (x - 1.0) / 2.0

    index = pairs(table).sum(axis=(1, 2))
    rows, cols = pairs(table.sum(axis=2)).sum(axis=1), pairs(table.sum(axis=1)).sum(axis=1)
    expected = rows * cols / pairs(float(n))
    top = (rows + cols) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ari = (index - expected) / (top - expected)
    # sklearn's convention: both partitions trivial (one cluster, or all singletons) give 1
    return np.where(top == expected, 1.0, ari)
