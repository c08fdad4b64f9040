"""The grouped score product of ``Nearest.blocks`` gives the same bits as the kernel it replaced,
and the compiled statistics (:func:`dpkmeans.compute.lloyd.block_stats`) the same bits as their numpy
reference (:func:`dpkmeans.compute.lloyd.block_stats_reference`), on the study datasets and on lattices
full of exact and near ties.

``_reference_blocks`` is the one-hot path of ``Nearest.blocks`` as it was before the scores of
a group of replicas became one product (one (m, d) x (d, k) product a replica, then + ||c||^2,
and a float64 one-hot matrix straight from the comparison). Every consumer (the sums and counts,
the labels, the silhouettes, the nearest distances) is run with both and compared bit for bit.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpkmeans.compute import lloyd, nearest
from dpkmeans.compute.nearest import exact_nearest
from dpkmeans.data import DataError


def _reference_blocks(self, onehot: bool = True):
    """The one-hot kernel before the grouped score product (verbatim, apart from its buffers,
    then attributes of ``Nearest``, allocated here)."""
    R, k, d = self.CT.shape[0], self.k, self.d
    ones = np.ones(k)
    m_max = min(self.rows, self.X.shape[0])
    scores_buffer = np.empty(self.reps * k * m_max, dtype=self.dtype)
    min_buffer = np.empty(self.reps * m_max, dtype=self.dtype)
    rows_buffer = None if self.dtype == np.float64 else np.empty((m_max, d), self.dtype)
    if onehot:  # buffers of the one-hot path only
        size = self.reps * min(self.rows, self.X.shape[0])
        hot_buffer, threshold_buffer = np.empty(size * k), np.empty(size, dtype=self.dtype)
        near_buffer = np.empty(size)
    for start in range(0, self.X.shape[0], self.rows):
        chunk = self.X[start:start + self.rows]
        m = chunk.shape[0]
        score_rows = chunk
        if rows_buffer is not None:
            score_rows = rows_buffer[:m]
            score_rows[:] = chunk
        if onehot:  # ||a|| of the augmented rows a = (x, 1)
            row_norm = np.sqrt(np.einsum("ij,ij->i", chunk, chunk) + 1.0).astype(self.dtype)
        for r0 in range(0, R, self.reps):
            reps = slice(r0, min(R, r0 + self.reps))
            nr = reps.stop - r0
            S = scores_buffer[:nr * k * m].reshape(nr, k, m)
            np.matmul(score_rows, self.CT[reps], out=S.transpose(0, 2, 1))  # one GEMM a replica
            S += self.c_norms[reps]
            low = min_buffer[:nr * m].reshape(nr, m)
            np.minimum.reduce(S, axis=1, out=low)
            if not onehot:
                yield start, reps, chunk, S, low, None
                continue
            threshold = threshold_buffer[:nr * m].reshape(nr, m)
            np.multiply.outer(self.margin[reps], row_norm, out=threshold)
            threshold += low
            hot = hot_buffer[:nr * k * m].reshape(nr, k, m)
            np.less_equal(S, threshold[:, None, :], out=hot)
            counts = hot.sum(axis=2)
            if counts.sum() != nr * m:
                near = np.matmul(ones, hot, out=near_buffer[:nr * m].reshape(nr, m))
                rep_of, col = np.nonzero(near != 1.0)  # near ties (or non-finite rows)
                replica = rep_of + r0
                a = np.hstack([chunk[col], np.ones((col.size, 1))])
                labels = exact_nearest(a, self.B[replica], S[rep_of, :, col],
                                        ~self.shadowed[replica])
                hot[rep_of, :, col] = labels[:, None] == np.arange(k)[None, :]
                counts = hot.sum(axis=2)
            yield start, reps, chunk, S, hot, counts


def _outputs(X, C):
    """Everything computed from the one-hot blocks, in both score precisions."""
    out = []
    for scores in ("double", "single"):
        out += [*lloyd.batched_stats(X, C, scores=scores), lloyd.assign(X, C, scores=scores)]
        out += [*lloyd.block_stats(X, C if C.ndim == 3 else C[None], scores)]
    C3 = C if C.ndim == 3 else C[None]
    out += [*lloyd.block_silhouette(X, C3), *lloyd.nearest_distance_sums(X, C3)]
    return out


def _assert_same_bits(X, C, monkeypatch):
    C3 = C if C.ndim == 3 else C[None]
    compiled, numpy_only = lloyd.block_stats(X, C3), lloyd.block_stats_reference(X, C3)
    for a, b in zip(compiled, numpy_only, strict=True):  # the kernel is the numpy reference
        assert a.tobytes() == b.tobytes()
    fresh = _outputs(X, C)
    with monkeypatch.context() as patch:
        patch.setattr(lloyd.Nearest, "blocks", _reference_blocks)
        reference = _outputs(X, C)
    assert len(fresh) == len(reference)
    for i, (a, b) in enumerate(zip(fresh, reference, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        assert np.array_equal(a, b, equal_nan=True), i
        assert a.tobytes() == b.tobytes(), i  # bit for bit (signed zeros too)


def _replicas(d, k, R, seed):
    from dpkmeans.engine.init import sphere_packing
    g = np.random.default_rng(seed)
    C = np.stack([sphere_packing((np.zeros(d), np.ones(d)), k, g) for _ in range(R)])
    return C + g.normal(0, 0.05, C.shape)


@pytest.mark.slow
@pytest.mark.parametrize("name, paper, k", [("adult", "dpkccm", 5),
                                            ("credit_card", "dpkccm", 5),
                                            ("covtype", "silhouette", 7),
                                            ("magic", "silhouette", 2)])
def test_study_datasets_same_bits(name, paper, k, monkeypatch):
    from dpkmeans.data import load
    try:
        X = np.asarray(load(name, paper=paper).scaled((0, 1)).X)
    except (DataError, FileNotFoundError) as err:
        pytest.skip(f"dataset not available here: {err}")
    C = _replicas(X.shape[1], k, 50, 0)
    _assert_same_bits(X, C, monkeypatch)
    _assert_same_bits(X, C[:1], monkeypatch)  # a single replica
    _assert_same_bits(X, C[7], monkeypatch)  # one (k, d) set
    _assert_same_bits(X, C[:, :1], monkeypatch)  # k = 1


@pytest.mark.parametrize("seed", range(12))
def test_random_data_with_duplicates_and_near_ties_same_bits(seed, monkeypatch):
    g = np.random.default_rng(seed)
    N, d, k, R = int(g.integers(1, 3000)), int(g.integers(1, 12)), int(g.integers(1, 9)), \
        int(g.integers(1, 40))
    X = g.integers(0, 4, (N, d)) / 3.0  # a lattice: duplicated rows, exact and near ties
    if seed % 3 == 1:
        X = g.normal(size=(N, d))
    C = g.integers(0, 4, (R, k, d)) / 3.0
    if seed % 2:
        C[:, -1] = C[:, 0]  # a duplicated centroid (shadowed)
    if seed % 4 == 0:
        C = C + g.normal(0, 1e-15, C.shape)  # ties broken by a few ulps
    _assert_same_bits(X, C, monkeypatch)


def test_points_on_bisectors_same_bits(monkeypatch):
    C = np.array([[[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]]] * 3)
    X = np.column_stack([np.full(500, 0.5), np.linspace(-1.0, 2.0, 500)])
    _assert_same_bits(np.vstack([X, X + 1e-16, X - 2**-52]), C, monkeypatch)


def test_many_chunks_and_groups_same_bits(rng, monkeypatch):
    """Several chunks of rows (and a last short one) and several replica groups, so that the
    sums are added over chunks in the kernel's order."""
    X = rng.uniform(0, 1, (3 * nearest._blocks(10**6, 3, 40, 1)[0] + 17, 40))
    X[1::5] = X[::5][: X[1::5].shape[0]]  # duplicated records
    C = rng.uniform(0, 1, (90, 3, 40))
    _assert_same_bits(X, C, monkeypatch)


def test_non_finite_rows_same_one_hot(monkeypatch):
    """Rows with NaN or infinite values (reported by the callers) follow np.argmin alike."""
    X = np.array([[0.1, 0.2], [np.nan, 0.0], [np.inf, 0.5], [0.4, -np.inf], [0.9, 0.9]])
    C = np.array([[[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]], [[0.5, 0.5], [0.0, 1.0], [1.0, 0.0]]])

    def one_hot():
        with np.errstate(invalid="ignore", over="ignore"):
            return [(hot.copy(), counts.copy()) for *_, hot, counts in
                    lloyd.Nearest(X, C).blocks()]

    fresh = one_hot()
    with monkeypatch.context() as patch:
        patch.setattr(lloyd.Nearest, "blocks", _reference_blocks)
        reference = one_hot()
    assert len(fresh) == len(reference)
    for (hot, counts), (ref_hot, ref_counts) in zip(fresh, reference, strict=True):
        assert np.array_equal(hot, ref_hot) and np.array_equal(counts, ref_counts)


def _integer_labels(a: np.ndarray, B: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """argmin of the exact integer scores (lowest index on a tie): the slow path alone."""
    out = []
    for r in range(a.shape[0]):
        candidates = np.flatnonzero(allowed[r])
        exact = nearest._exact_dots(a[r], B[r][:, candidates])
        out.append(int(candidates[min(range(candidates.size), key=lambda j: (exact[j], j))]))
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_rounding_free_comparisons_decide_like_integer_arithmetic(seed):
    """The rounding-free float path (``_rounding_free_tournament``) gives the integer path's
    labels on exact ties (a grid of dyadic records and clipped-corner centroids, the adult
    case), on near ties one ulp away and on values at and beyond its range; and
    ``_error_free_dot`` claims exactness only where its value is the exact one."""
    gen = np.random.default_rng(seed)
    n, d, k = 400, 5, 6
    X = gen.integers(0, 5, size=(n, d)) / 4  # 0, 1/4, ..., 1: dyadic
    X[:, 0] = gen.uniform(0, 1, size=n)  # one general attribute, as adult's age
    X[: n // 4] = np.nextafter(X[: n // 4], 2.0)  # off the grid by one ulp: rounding
    X[n // 4: n // 4 + 5, 1] = 2.0**-420  # below the error-free range
    X[n // 4 + 5: n // 4 + 10, 1] = 2.0**-400  # at its edge
    C = gen.integers(0, 2, size=(n, k, d)).astype(float)  # box corners: many exact ties
    C[:, :, 0] = 0.0
    C[: n // 8] += gen.uniform(0, 1, size=(n // 8, k, d))  # general centroids
    a = np.hstack([X, np.ones((n, 1))])
    B = np.concatenate([-2.0 * C.transpose(0, 2, 1), (C * C).sum(axis=2)[:, None, :]], axis=1)
    allowed = np.ones((n, k), dtype=bool)
    allowed[::7, 2] = False
    v = B[:, :, 1] - B[:, :, 0]
    value, exact = nearest._error_free_dot(a, v)
    assert exact[n // 4 + 10:].mean() > 0.5 and not exact[n // 4: n // 4 + 5].any()
    for r in np.flatnonzero(exact):
        assert Fraction(value[r]) == sum(Fraction(x) * Fraction(y) for x, y in zip(a[r], v[r]))
    best, undecided = nearest._rounding_free_tournament(a, B, allowed)
    assert undecided.mean() < 0.5
    want = _integer_labels(a, B, allowed)
    np.testing.assert_array_equal(best[~undecided], want[~undecided])
    s64 = np.einsum("ni,nik->nk", a, B)
    np.testing.assert_array_equal(exact_nearest(a, B, s64, allowed), want)
