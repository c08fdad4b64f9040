"""Evaluation metrics against brute force (book chapter 4)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.compute import lloyd
from dpkmeans.compute.lloyd import assign
from dpkmeans.compute.metrics import (
    adjusted_rand_index,
    f_measure,
    nicv,
    nicv_unsquared,
    relative_nicv,
    sse,
)

FORMS = [
    (m, w) for m in ("hungarian", "larsen-aone") for w in ("reference", "predicted")
]


# ---------------------------------------------------------------------------------------------
# Brute-force references: plain Python loops over points, clusters and matchings.
# ---------------------------------------------------------------------------------------------


def brute_distances(X, C):
    """Distance of every row of X to its nearest centroid, one point at a time."""
    out = []
    for x in X:
        out.append(min(float(np.sqrt(np.sum((x - c) ** 2))) for c in C))
    return np.array(out)


def brute_dice(a, b):
    a, b = set(a), set(b)
    return 2 * len(a & b) / (len(a) + len(b))


def brute_clusters(labels):
    clusters = {}
    for i, lab in enumerate(labels):
        clusters.setdefault(lab, []).append(i)
    return list(clusters.values())


def brute_f(labels_true, labels_pred, matching, weights):
    """F-measure by enumerating every one-to-one matching (small inputs only)."""
    U, V = brute_clusters(labels_true), brute_clusters(labels_pred)
    if weights == "predicted":
        U, V = V, U
    n = len(labels_true)
    if matching == "larsen-aone":
        return sum(len(u) / n * max(brute_dice(u, v) for v in V) for u in U)
    # All injective partial matchings of the smaller side into the larger one; keep those of
    # maximal total overlap and, among them, the best F.
    best = None
    small, large = (U, V) if len(U) <= len(V) else (V, U)
    for perm in itertools.permutations(range(len(large)), len(small)):
        pairs = [(i, j) if small is U else (j, i) for i, j in enumerate(perm)]
        overlap = sum(len(set(U[i]) & set(V[j])) for i, j in pairs)
        f = sum(len(U[i]) / n * brute_dice(U[i], V[j]) for i, j in pairs)
        key = (overlap, f)
        if best is None or key > best:
            best = key
    return best[1]


# ---------------------------------------------------------------------------------------------
# SSE and NICV.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, k, d", [(1, 1, 1), (37, 3, 2), (200, 5, 7)])
def test_centroid_metrics_match_brute_force(n, k, d):
    rng = np.random.default_rng(n * 100 + k * 10 + d)
    X = rng.uniform(-1, 1, size=(n, d))
    C = rng.uniform(-1, 1, size=(k, d))
    dist = brute_distances(X, C)
    assert sse(X, C) == pytest.approx(np.sum(dist**2), rel=1e-12)
    assert nicv(X, C) == pytest.approx(np.mean(dist**2), rel=1e-12)
    assert nicv_unsquared(X, C) == pytest.approx(np.mean(dist), rel=1e-12)
    assert isinstance(nicv(X, C), float)


def test_nicv_is_sse_over_n_for_the_nearest_assignment(rng):
    X = rng.normal(size=(300, 4))
    C = rng.normal(size=(6, 4))
    labels = assign(X, C)
    expected = np.sum((X - C[labels]) ** 2)
    assert sse(X, C) == pytest.approx(expected, rel=1e-12)
    assert nicv(X, C) == pytest.approx(expected / len(X), rel=1e-12)


def test_unsquared_differs_from_squared():
    # One point at distance 2 from the only centroid: squared 4, unsquared 2.
    X = np.array([[2.0, 0.0]])
    C = np.zeros((1, 2))
    assert nicv(X, C) == 4.0
    assert nicv_unsquared(X, C) == 2.0


def test_batched_equals_loop_over_replicas(rng):
    X = rng.uniform(-1, 1, size=(500, 3))
    C = rng.uniform(-1, 1, size=(9, 4, 3))
    ref = rng.uniform(-1, 1, size=(4, 3))
    for f in (sse, nicv, nicv_unsquared):
        batched = f(X, C)
        assert batched.shape == (9,)
        np.testing.assert_allclose(batched, [f(X, c) for c in C], rtol=1e-12)
    rel = relative_nicv(X, C, ref)
    assert rel.shape == (9,)
    np.testing.assert_allclose(rel, [relative_nicv(X, c, ref) for c in C], rtol=1e-10)
    rel_pairs = relative_nicv(X, C, C[::-1])
    np.testing.assert_allclose(
        rel_pairs, [relative_nicv(X, c, r) for c, r in zip(C, C[::-1])], rtol=1e-10
    )


def test_chunking_does_not_change_the_result(rng, monkeypatch):
    """Force one-row chunks: same values as a single chunk (and as brute force)."""
    X = rng.uniform(-1, 1, size=(60, 2))
    C = rng.uniform(-1, 1, size=(5, 3, 2))
    whole = nicv(X, C)
    whole_single = nicv_unsquared(X, C[0])
    monkeypatch.setattr(lloyd, "BLOCK_BYTES", 1)
    monkeypatch.setattr(lloyd, "MIN_ROWS", 1)
    np.testing.assert_allclose(nicv(X, C), whole, rtol=1e-12)
    assert nicv_unsquared(X, C[0]) == pytest.approx(whole_single, rel=1e-12)
    assert nicv_unsquared(X, C[0]) == pytest.approx(np.mean(brute_distances(X, C[0])))


def test_chunk_memory_is_bounded(rng):
    """Peak temporary memory follows the block budget of dpkmeans.compute.lloyd (512 KB), not
    N * R * k (40 MB here unchunked)."""
    import tracemalloc

    R, n, k, d = 50, 20_000, 5, 3
    X = rng.uniform(-1, 1, size=(n, d))
    C = rng.uniform(-1, 1, size=(R, k, d))
    expected = [np.min(((X[:, None, :] - c) ** 2).sum(-1), axis=1).mean() for c in C]
    nicv(X, C)  # once before: loading the compiled kernel (dpkmeans.compute.kernels) is not temporary
    tracemalloc.start()
    try:
        got = nicv(X, C)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert peak < 2 * 2**20


def test_batched_labels_agree_with_assign(rng):
    """The batched path uses the same nearest-centroid rule as lloyd.assign."""
    X = rng.normal(size=(400, 3))
    C = rng.normal(size=(4, 5, 3))
    for r in range(4):
        labels = assign(X, C[r])
        expected = np.sum((X - C[r][labels]) ** 2)
        assert sse(X, C)[r] == pytest.approx(expected, rel=1e-12)


def test_relative_nicv(rng):
    X = rng.normal(size=(100, 2))
    C = rng.normal(size=(3, 2))
    assert relative_nicv(X, C, C) == 0.0
    C_batch = rng.normal(size=(5, 3, 2))
    np.testing.assert_array_equal(relative_nicv(X, C_batch, C_batch), np.zeros(5))
    worse = C + 10.0
    expected = (nicv(X, worse) - nicv(X, C)) / nicv(X, C)
    assert relative_nicv(X, worse, C) == pytest.approx(expected)
    assert relative_nicv(X, worse, C) > 0
    # The reference may have a different number of centroids.
    assert relative_nicv(X, C[:1], C) >= 0


def test_relative_nicv_zero_reference_raises():
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="reference NICV is 0"):
        relative_nicv(X, np.zeros((1, 2)), X)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    k=st.integers(1, 5),
    d=st.integers(1, 4),
    r=st.integers(1, 4),
)
def test_nicv_properties(seed, n, k, d, r):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    C = rng.uniform(-1, 1, size=(r, k, d))
    sq, un = nicv(X, C), nicv_unsquared(X, C)
    assert np.all(sq >= 0) and np.all(un >= 0)
    # Jensen: mean distance^2 >= (mean distance)^2.
    assert np.all(sq >= un**2 - 1e-12)
    # The squared distances come from the expansion ||x||^2 + ||c||^2 - 2 x.c, whose absolute
    # error is about 1e-15 (||x||^2 + ||c||^2) <= 1e-14 here (nearest_distance_sums): a tiny
    # NICV (a centroid almost on a point) is exact only to that, not to 1e-10 of itself.
    np.testing.assert_allclose(sq, [np.mean(brute_distances(X, c) ** 2) for c in C], rtol=1e-10,
                               atol=1e-13)
    # Adding a centroid never increases the NICV.
    extra = np.concatenate([C, rng.uniform(-1, 1, size=(r, 1, d))], axis=1)
    assert np.all(nicv(X, extra) <= sq + 1e-12)
    # Centroids placed on the data points give 0.
    if n <= 5:
        assert nicv(X, X) == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# F-measure and ARI.
# ---------------------------------------------------------------------------------------------


def test_split_and_merge_example_where_the_forms_differ():
    """Hand-built example: a merge and a split, N = 10.

    Reference U1 = {0..3} (4), U2 = {4,5,6} (3), U3 = {7,8,9} (3).
    Predicted V1 = U1 u U2 = {0..6} (7, a merge), V2 = {7,8} (2), V3 = {9} (1) (U3 split).

    Overlaps |U_i n V_j|: U1 -> (4,0,0), U2 -> (3,0,0), U3 -> (0,2,1).
    Dice 2|U n V|/(|U|+|V|): F(U1,V1) = 8/11, F(U2,V1) = 6/10 = 3/5,
    F(U3,V2) = 4/5, F(U3,V3) = 2/4 = 1/2, all other pairs 0.
    Hungarian matching of maximal total overlap (6, unique): U1-V1, U3-V2, U2-V3.

    weights="reference" (|U_i|/N = 4/10, 3/10, 3/10):
      Hungarian   = 4/10*8/11 + 3/10*0   + 3/10*4/5 = 16/55 + 6/25        = 146/275 = 0.530909...
      Larsen-Aone = 4/10*8/11 + 3/10*3/5 + 3/10*4/5 = 16/55 + 9/50 + 6/25 = 391/550 = 0.710909...
    weights="predicted" (|V_j|/N = 7/10, 2/10, 1/10):
      Hungarian   = 7/10*8/11 + 2/10*4/5 + 1/10*0   = 28/55 + 4/25        = 184/275 = 0.669090...
      Larsen-Aone = 7/10*8/11 + 2/10*4/5 + 1/10*1/2 = 184/275 + 1/20      = 791/1100 = 0.719090...
    """
    true = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    pred = [0, 0, 0, 0, 0, 0, 0, 1, 1, 2]
    expected = {
        ("hungarian", "reference"): Fraction(146, 275),
        ("larsen-aone", "reference"): Fraction(391, 550),
        ("hungarian", "predicted"): Fraction(184, 275),
        ("larsen-aone", "predicted"): Fraction(791, 1100),
    }
    # The fractions are the sums written in the docstring.
    assert expected[("hungarian", "reference")] == Fraction(4, 10) * Fraction(8, 11) + Fraction(
        3, 10
    ) * Fraction(4, 5)
    assert expected[("larsen-aone", "predicted")] == expected[
        ("hungarian", "predicted")
    ] + Fraction(1, 10) * Fraction(1, 2)
    for (m, w), value in expected.items():
        assert f_measure(true, pred, matching=m, weights=w) == pytest.approx(float(value), abs=1e-14)
        assert brute_f(true, pred, m, w) == pytest.approx(float(value), abs=1e-14)


def test_split_with_different_numbers_of_clusters():
    """One reference cluster of 6 split into 3 + 3: unmatched V2 contributes 0.

    Reference A = {0..5}, B = {6..9}; predicted V1 = {0,1,2}, V2 = {3,4,5}, V3 = B.
    F(A, V1) = F(A, V2) = 2*3/9 = 2/3, F(B, V3) = 1.
    reference weights: both forms = 6/10*2/3 + 4/10*1 = 4/5.
    predicted weights: Hungarian = 3/10*2/3 + 0 + 4/10 = 3/5; Larsen-Aone = 2*(3/10*2/3) + 4/10 = 4/5.
    """
    true = list("AAAAAABBBB")
    pred = [1, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    assert f_measure(true, pred) == pytest.approx(0.8)
    assert f_measure(true, pred, matching="larsen-aone") == pytest.approx(0.8)
    assert f_measure(true, pred, weights="predicted") == pytest.approx(0.6)
    assert f_measure(true, pred, matching="larsen-aone", weights="predicted") == pytest.approx(0.8)


@pytest.mark.parametrize("matching, weights", FORMS)
def test_identical_clusterings_give_one(matching, weights):
    labels = np.array([3, 3, 1, 1, 1, 7, 0])
    relabelled = np.array(["c", "c", "a", "a", "a", "z", "b"])
    assert f_measure(labels, labels, matching=matching, weights=weights) == 1.0
    assert f_measure(labels, relabelled, matching=matching, weights=weights) == pytest.approx(1.0)
    assert adjusted_rand_index(labels, relabelled) == pytest.approx(1.0)


@pytest.mark.parametrize("matching, weights", FORMS)
def test_f_measure_matches_brute_force(matching, weights):
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        true = rng.integers(0, int(rng.integers(1, 5)), size=n)
        pred = rng.integers(0, int(rng.integers(1, 5)), size=n)
        got = f_measure(true, pred, matching=matching, weights=weights)
        assert got == pytest.approx(brute_f(true, pred, matching, weights), abs=1e-12)


labels_strategy = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.permutations(range(5)),
        st.permutations(range(5)),
    )
)


@settings(max_examples=100, deadline=None)
@given(data=labels_strategy)
def test_f_measure_properties(data):
    true, pred, perm_true, perm_pred = data
    true, pred = np.array(true), np.array(pred)
    true_p, pred_p = np.array(perm_true)[true], np.array(perm_pred)[pred]
    for w in ("reference", "predicted"):
        h = f_measure(true, pred, matching="hungarian", weights=w)
        la = f_measure(true, pred, matching="larsen-aone", weights=w)
        assert 0.0 <= h <= la + 1e-12
        assert la <= 1.0 + 1e-12
        # Invariance to relabelling either clustering.
        assert f_measure(true_p, pred_p, matching="hungarian", weights=w) == pytest.approx(h)
        assert f_measure(true_p, pred_p, matching="larsen-aone", weights=w) == pytest.approx(la)
    # Swapping the roles of the clusterings swaps the weights.
    for m in ("hungarian", "larsen-aone"):
        assert f_measure(pred, true, matching=m, weights="reference") == pytest.approx(
            f_measure(true, pred, matching=m, weights="predicted")
        )
    assert adjusted_rand_index(true_p, pred_p) == pytest.approx(adjusted_rand_index(true, pred))


def test_adjusted_rand_index_wraps_sklearn():
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 3, 50), rng.integers(0, 4, 50)
    assert adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b))
    assert isinstance(adjusted_rand_index(a, b), float)


# ---------------------------------------------------------------------------------------------
# Bad inputs.
# ---------------------------------------------------------------------------------------------

X_OK = np.zeros((4, 2))
C_OK = np.ones((2, 2))


@pytest.mark.parametrize("f", [sse, nicv, nicv_unsquared])
@pytest.mark.parametrize(
    "X, C, match",
    [
        (np.zeros((0, 2)), C_OK, "X must not be empty"),
        (np.zeros(4), C_OK, "X must be a 2-D"),
        (np.zeros((2, 2, 2)), C_OK, "X must be a 2-D"),
        (np.array([[np.nan, 0.0]]), C_OK, "X must contain only finite"),
        (np.array([[np.inf, 0.0]]), C_OK, "X must contain only finite"),
        (X_OK, np.zeros((0, 2)), "centroids must not be empty"),
        (X_OK, np.zeros(2), "centroids must be a 2-D or 3-D"),
        (X_OK, np.zeros((1, 1, 1, 2)), "centroids must be a 2-D or 3-D"),
        (X_OK, np.array([[0.0, np.nan]]), "centroids must contain only finite"),
        (X_OK, np.full((2, 1, 2), np.inf), "centroids must contain only finite"),
        (X_OK, np.zeros((2, 3)), "2 features but centroids have 3"),
        (X_OK, np.zeros((5, 2, 3)), "2 features but centroids have 3"),
    ],
)
def test_centroid_metrics_reject_bad_input(f, X, C, match):
    with pytest.raises(ValueError, match=match):
        f(X, C)


def test_centroid_metrics_reject_non_numeric():
    with pytest.raises(TypeError, match="X must be an array of real numbers"):
        nicv([["a", "b"]], C_OK)
    with pytest.raises(TypeError, match="centroids must be an array of real numbers"):
        nicv(X_OK, [[{}, 1.0]])


def test_relative_nicv_rejects_bad_reference():
    with pytest.raises(ValueError, match="reference_centroids must contain only finite"):
        relative_nicv(X_OK, C_OK, np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="reference_centroids have 3"):
        relative_nicv(X_OK, C_OK, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="different numbers of replicas"):
        relative_nicv(X_OK, np.ones((3, 2, 2)), np.ones((4, 2, 2)))


@pytest.mark.parametrize("f", [f_measure, adjusted_rand_index])
@pytest.mark.parametrize(
    "true, pred, match",
    [
        ([0, 1, 1], [0, 1], "same length"),
        ([], [], "labels_true must not be empty"),
        ([0], [], "labels_pred must not be empty"),
        ([[0, 1]], [0, 1], "labels_true must be one-dimensional"),
        ([0, 1], [[0], [1]], "labels_pred must be one-dimensional"),
        ([0.0, np.nan], [0, 1], "labels_true must not contain missing"),
        ([0, 1], ["a", None], "labels_pred must not contain missing"),
    ],
)
def test_label_metrics_reject_bad_input(f, true, pred, match):
    with pytest.raises(ValueError, match=match):
        f(true, pred)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"matching": "hungarain"}, "matching must be one of"),
        ({"matching": None}, "matching must be one of"),
        ({"weights": "true"}, "weights must be one of"),
    ],
)
def test_f_measure_rejects_unknown_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        f_measure([0, 1], [0, 1], **kwargs)


def test_batched_adjusted_rand_indices_match_sklearn_row_by_row():
    from sklearn.metrics import adjusted_rand_score

    from dpkmeans.compute.metrics import adjusted_rand_indices

    rng = np.random.default_rng(4)
    truth = rng.integers(0, 4, 200)
    pred = rng.integers(0, 3, (30, 200))
    pred[0], pred[1], pred[2] = truth, (truth + 1) % 4, 0
    expected = [adjusted_rand_score(truth, p) for p in pred]
    np.testing.assert_allclose(adjusted_rand_indices(truth, pred), expected, atol=1e-12)
    per_row = rng.integers(0, 4, (30, 200))  # one reference per replica
    np.testing.assert_allclose(adjusted_rand_indices(per_row, pred),
                               [adjusted_rand_score(t, p) for t, p in zip(per_row, pred)],
                               atol=1e-12)
    with pytest.raises(ValueError, match="labels_pred must have shape"):
        adjusted_rand_indices(truth, truth)
    with pytest.raises(TypeError, match="non-negative integer"):
        adjusted_rand_indices(truth, pred.astype(float))


@pytest.mark.parametrize("matching,weights", FORMS)
def test_f_measures_equal_f_measure_row_by_row(matching, weights):
    """The batched F-measures are f_measure's floats, bit for bit: one reference for every
    row or one each, labels missing from a row, and labels of another kind (one row at a
    time)."""
    from dpkmeans.compute.metrics import f_measures
    rng = np.random.default_rng(40)
    pred = rng.choice([0, 2, 3, 6], size=(30, 200))
    pred[3] = 2  # one cluster
    shared = rng.integers(0, 3, size=200)
    each = rng.choice([1, 4, 5], size=(30, 200))
    text = np.array(["a", "b", "c"])[shared]
    for true in (shared, each, text):
        got = f_measures(true, pred, matching=matching, weights=weights)
        want = [f_measure(true if true.ndim == 1 else true[r], pred[r], matching=matching,
                          weights=weights) for r in range(pred.shape[0])]
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="labels_true must have shape"):
        f_measures(shared[:10], pred)
