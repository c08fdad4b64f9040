"""The numba kernel (dpkmeans.compute.kernels) against the numpy paths: labels and counts equal to
dpkmeans.compute.lloyd's, sums bit-identical to the numpy reference of the panels order and within a
rounding bound of lloyd.block_stats (the BLAS order)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.compute import kernels
from dpkmeans.compute.kernels import (
    TILE,
    kernel_block_labels,
    kernel_block_silhouette,
    kernel_block_stats,
    kernel_nearest_distance_sums,
    panels_block_stats,
)
from dpkmeans.compute.lloyd import (
    assign,
    block_silhouette_reference,
    block_stats,
    nearest_distance_sums_reference,
)


def _tricky(seed: int, n: int, d: int, k: int, R: int):
    """Random rows plus exact ties (dyadic midpoints of two centroids), near ties (a midpoint
    moved by one ulp), rows equal to centroids, and centroids repeated within a replica."""
    rng = np.random.default_rng(seed)
    C = np.round(rng.uniform(-1, 1, size=(R, k, d)) * 64) / 64  # dyadic: midpoints exact
    if k > 2:
        C[:, k - 1] = C[:, 1]  # a repeated centroid never wins
        C[0, 2] = C[0, 0]
    X = rng.uniform(-1.2, 1.2, size=(n, d))
    m = n // 4
    j = rng.integers(k, size=m)
    i = rng.integers(k, size=m)
    r = rng.integers(R, size=m)
    mid = (C[r, j] + C[r, i]) / 2
    X[:m] = mid
    X[m:2 * m] = np.nextafter(mid, mid + rng.choice([-1.0, 1.0], size=mid.shape))
    X[2 * m:2 * m + m // 4] = C[r[:m // 4], j[:m // 4]]
    rng.shuffle(X)
    return X, C


# (seed, n, d, k, R): d = 1, k = 1, k = 40, several replicas, partial last panels; k = 13 and
# k = 15: the generated scorers' centroid groups with a partial last group (_ASSIGN_GROUP,
# _SCORE_GROUP) and every group size of the per-d assigner (8 + 4 + 1, 8 + 4 + 2 + 1)
CASES = [(0, 3000, 3, 4, 1), (1, 5000, 10, 8, 3), (2, 2000, 2, 5, 4), (3, 777, 1, 3, 2),
         (4, 4100, 10, 1, 1), (5, 300, 3, 40, 2), (6, 1000, 1, 1, 2), (7, 1500, 5, 13, 3),
         (9, 1300, 3, 15, 2)]


@pytest.fixture(params=["generated", "generic"])
def scorer(request, monkeypatch):
    """Each test twice: with the scorer generated for (k, d) (even for small work) and with
    the generic one."""
    if request.param == "generic":
        monkeypatch.setattr(kernels, "_GENERATED_MAX", 0)
    else:
        monkeypatch.setattr(kernels, "_GENERATED_MIN_WORK", 0)
    return request.param


def _reference(X, C):
    """Exact labels by lloyd.assign, and the panels order by numpy from them."""
    labels = assign(X, C)
    return labels, panels_block_stats(X, C, labels)


def _assert_kernel_equals_reference(X, C):
    """The kernel's labels are assign's, its sums and counts the reference's, bit for bit."""
    np.testing.assert_array_equal(kernel_block_labels(X, C), assign(X, C))
    s, c = kernel_block_stats(X, C)
    _, (s_ref, c_ref) = _reference(X, C)
    assert np.array_equal(s, s_ref) and np.array_equal(c, c_ref)


def _fused_pass_undecided(p) -> int:
    """The undecided rows of one fused statistics pass of a kernels._Prepared (its labels
    computed, not given): 0 when the pass needs no redo."""
    R, k, d = p.shape
    return p.mod._k_block(*p._decided(), np.empty((R, 0), dtype=np.int64),
                          np.zeros((R, k, d)), np.zeros((R, k), dtype=np.int64),
                          np.zeros(R, dtype=np.int64))


@pytest.mark.parametrize("seed,n,d,k,R", CASES)
def test_labels_equal_assign(seed, n, d, k, R, scorer):
    X, C = _tricky(seed, n, d, k, R)
    np.testing.assert_array_equal(kernel_block_labels(X, C), assign(X, C))


@pytest.mark.parametrize("seed,n,d,k,R", CASES)
def test_stats_bits_and_bound(seed, n, d, k, R, scorer):
    X, C = _tricky(seed, n, d, k, R)
    labels, (s_ref, c_ref) = _reference(X, C)
    s, c = kernel_block_stats(X, C)
    assert s.dtype == c.dtype == np.float64 and s.shape == (R, k, d) and c.shape == (R, k)
    np.testing.assert_array_equal(c, np.stack([np.bincount(lab, minlength=k) for lab in labels]))
    np.testing.assert_array_equal(c, c_ref)
    assert np.array_equal(s, s_ref)  # bit for bit, not allclose
    # today's BLAS order: same counts, sums within the two orders' rounding bounds
    s_blas, c_blas = block_stats(X, C)
    np.testing.assert_array_equal(c, c_blas)
    s_abs, _ = panels_block_stats(np.abs(X), C, labels)  # sum |x| of each cluster's rows
    bound = 2 * (n + 1) * 2.0**-53 * s_abs
    assert (np.abs(s - s_blas) <= bound).all()


def test_panels_order_is_the_plain_loop():
    """Both implementations against the definition written as Python loops, on rows of very
    different magnitudes (so that any other order would give other bits), with k = d = 1 too
    (where np.add.reduce over the panels would sum pairwise)."""
    rng = np.random.default_rng(5)
    for n, d, k in [(1500, 3, 4), (2000, 1, 1), (600, 2, 1)]:
        X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-8, 8, size=(n, 1))
        C = rng.normal(size=(1, k, d))
        labels = assign(X, C)[0]
        want = np.zeros((k, d))
        for p0 in range(0, n, TILE):
            panel = np.zeros((k, d))
            for i in range(p0, min(n, p0 + TILE)):
                panel[labels[i]] += X[i]
            want += panel
        s, _ = panels_block_stats(X, C, labels[None])
        np.testing.assert_array_equal(s[0], want)
        s, _ = kernel_block_stats(X, C)
        np.testing.assert_array_equal(s[0], want)
        sequential = np.zeros((k, d))  # one long sum: other bits (the test can tell orders)
        for i in range(n):
            sequential[labels[i]] += X[i]
        assert not np.array_equal(sequential, want)


def test_labels_do_not_depend_on_n_or_place():
    X, C = _tricky(8, 3000, 4, 6, 2)
    full = kernel_block_labels(X, C)
    for n in (1, 255, 256, 257, 1000, 2999):
        np.testing.assert_array_equal(kernel_block_labels(X[:n], C), full[:, :n])
    order = np.random.default_rng(0).permutation(X.shape[0])
    np.testing.assert_array_equal(kernel_block_labels(X[order], C), full[:, order])


def test_replica_bits_do_not_depend_on_the_others():
    """Replica 2 alone has no near ties; the others do, so with R = 5 the block is redone from
    labels: replica 2's results are still the fused pass's bits."""
    rng = np.random.default_rng(12)
    X0, C_ties = _tricky(10, 4000, 5, 6, 4)
    C_alone = rng.normal(size=(1, 6, 5))
    X = X0 + 0.0
    C = np.concatenate([C_ties[:2], C_alone, C_ties[2:]])
    near_alone = kernels._Prepared(X, C_alone)
    near_all = kernels._Prepared(X, C)
    assert _fused_pass_undecided(near_alone) == 0 and _fused_pass_undecided(near_all) > 0
    s1, c1 = kernel_block_stats(X, C_alone)
    s5, c5 = kernel_block_stats(X, C)
    np.testing.assert_array_equal(s5[2], s1[0])
    np.testing.assert_array_equal(c5[2], c1[0])
    np.testing.assert_array_equal(kernel_block_labels(X, C)[2], kernel_block_labels(X, C_alone)[0])
    for r in range(5):  # and every replica alone
        s, c = kernel_block_stats(X, C[r:r + 1])
        assert np.array_equal(s[0], s5[r]) and np.array_equal(c[0], c5[r])


def test_rows_single_precision_cannot_decide_are_settled_in_float64(scorer):
    """Rows 1e-9 away from the midpoint of two centroids: inside the single-precision margin
    (about 1e-5 here), far outside float64's (about 1e-14). The generated assigner settles them
    in float64 (kernels._settle), so the fused pass decides every row (nothing to redo), with
    assign's labels and the reference's bits."""
    rng = np.random.default_rng(21)
    R, k, d, n = 3, 6, 5, 3000
    C = rng.uniform(-1, 1, size=(R, k, d))
    r = rng.integers(R, size=n)
    j = rng.integers(k, size=n)
    i = (j + 1 + rng.integers(k - 1, size=n)) % k
    X = (C[r, j] + C[r, i]) / 2 + 1e-9 * (C[r, j] - C[r, i]) * rng.choice([-1.0, 1.0], (n, 1))
    p = kernels._Prepared(X, C)
    scores, _ = kernels.canonical_scores(X, C)  # (R, k, n)
    own = np.sort(scores[r, :, np.arange(n)], axis=1)  # each row's scores for its replica
    single_margin = p.terms.margin32[r] * np.sqrt((X * X).sum(axis=1) + 1.0)
    assert (own[:, 1] - own[:, 0] < single_margin).sum() > n // 10  # single precision: no
    assert _fused_pass_undecided(p) == 0
    _assert_kernel_equals_reference(X, C)


@pytest.mark.parametrize("x_scale,c_scale", [(2.0**-70, 2.0**-70), (2.0**70, 2.0**70),
                                             (2.0**61, 1.0)])
def test_magnitudes_outside_single_precision(x_scale, c_scale, scorer):
    """Centroids too small or too large for the single-precision bound (max_j ||b_j|| outside
    kernels._SINGLE_B_RANGE) and rows with 1 + ||x||^2 above kernels._SINGLE_NRM_MAX are
    decided in float64: labels and bits as the numpy references."""
    X, C = _tricky(22, 2000, 4, 5, 2)
    _assert_kernel_equals_reference(X * x_scale, C * c_scale)


def test_centroid_terms_follow_the_centroids_bits():
    """The per-call cache of the centroid terms is keyed by C's bits: centroids changed in
    place, or of another shape, are new terms, never the cached ones."""
    X, C = _tricky(13, 3000, 4, 5, 2)
    C = C.copy()
    for _ in range(2 * kernels._TERMS_KEPT):  # more sets than the cache keeps
        _, (sums, counts) = _reference(X, C)
        s, c = kernel_block_stats(X, C)
        np.testing.assert_array_equal(s, sums)
        np.testing.assert_array_equal(c, counts)
        C[0, 0, 0] += 0.125  # in place
    s, c = kernel_block_stats(X, C[:1])
    np.testing.assert_array_equal(s[0], _reference(X, C[:1])[1][0][0])
    assert len(kernels._TERMS) <= kernels._TERMS_KEPT


def test_empty_and_tiny():
    C = np.array([[[0.0, 0.0], [1.0, 1.0]]])
    s, c = kernel_block_stats(np.empty((0, 2)), C)
    assert s.shape == (1, 2, 2) and not s.any() and not c.any()
    s, c = kernel_block_stats(np.array([[0.5, 0.5]]), C)  # exact tie: lowest index
    np.testing.assert_array_equal(c, [[1.0, 0.0]])
    np.testing.assert_array_equal(s, [[[0.5, 0.5], [0.0, 0.0]]])
    s, c = panels_block_stats(np.empty((0, 2)), C, np.empty((1, 0), dtype=np.intp))
    assert not s.any() and not c.any()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rejected(bad):
    X, C = _tricky(13, 700, 3, 4, 2)
    X[300, 1] = bad
    with pytest.raises(ValueError, match="finite"):
        kernel_block_stats(X, C)
    with pytest.raises(ValueError, match="finite"):
        panels_block_stats(X, C, np.zeros((2, 700), dtype=np.intp))


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
def test_overflow_of_finite_values_is_returned():
    """Huge finite rows: the sum overflows to inf, no error (as in lloyd.block_stats)."""
    X = np.full((3, 1), 1e308)
    C = np.array([[[0.0], [1.0]]])
    s, c = kernel_block_stats(X, C)
    s_blas, c_blas = block_stats(X, C)
    np.testing.assert_array_equal(c, c_blas)
    np.testing.assert_array_equal(s, s_blas)
    assert np.isinf(s).any()


def test_labels_shape_checked():
    X, C = _tricky(14, 50, 2, 3, 2)
    with pytest.raises(ValueError, match="labels"):
        panels_block_stats(X, C, assign(X, C)[0])


@pytest.mark.parametrize("seed,n,d,k,R", CASES)
def test_silhouette_equals_the_numpy_reference(seed, n, d, k, R, scorer):
    """Bit for bit the numpy reference (canonical scores, panels order); every value in [0, 1]."""
    X, C = _tricky(seed, n, d, k, R)
    sums, counts = kernel_block_silhouette(X, C)
    ref_sums, ref_counts = block_silhouette_reference(X, C)
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_array_equal(sums, ref_sums)
    assert (sums >= 0).all() and (sums <= counts).all()


@pytest.mark.parametrize("seed,n,d,k,R", CASES)
def test_nearest_distance_sums_equal_the_numpy_reference(seed, n, d, k, R, scorer):
    X, C = _tricky(seed, n, d, k, R)
    squared, plain = kernel_nearest_distance_sums(X, C)
    ref_squared, ref_plain = nearest_distance_sums_reference(X, C)
    np.testing.assert_array_equal(squared, ref_squared)
    np.testing.assert_array_equal(plain, ref_plain)


def test_silhouette_and_distances_do_not_depend_on_the_other_replicas():
    X, C = _tricky(15, 3000, 4, 5, 4)
    sums, counts = kernel_block_silhouette(X, C)
    squared, plain = kernel_nearest_distance_sums(X, C)
    for r in range(4):
        s, c = kernel_block_silhouette(X, C[r:r + 1])
        q, p = kernel_nearest_distance_sums(X, C[r:r + 1])
        assert np.array_equal(s[0], sums[r]) and np.array_equal(c[0], counts[r])
        assert q[0] == squared[r] and p[0] == plain[r]


def test_statistics_above_one_group_share_a_module_for_each_d():
    """k above one centroid group: the statistics and labels of every k share one compiled
    module for each d (compiled once, not once per k), the canonical-score kernels do not."""
    group = kernels._ASSIGN_GROUP
    shared = kernels._module(group + 1, 2, True)
    assert kernels._module(group + 5, 2, True) is shared
    assert kernels._module(group + 1, 3, True) is not shared
    assert kernels._module(group + 1, 2, True, scores=True) is not shared
    assert kernels._module(group, 2, True) is not shared  # one group: its own module


def _ties(seed: int, n: int, d: int, k: int, R: int):
    """Exact ties everywhere: rows on a grid of halves, centroids at corners of the box (as the
    as-published APDP's clipped starts on adult), and non-dyadic rows within a few ulps of
    centroids a few ulps apart (near ties that only exact arithmetic decides)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)) / 2.0
    C = rng.integers(0, 2, size=(R, k, d)).astype(float)
    base = rng.uniform(0.1, 0.9, size=d)
    C[:, -1] = base + rng.integers(-3, 4, size=(R, d)) * np.spacing(base)
    C[:, 0] = base + rng.integers(-3, 4, size=(R, d)) * np.spacing(base)
    X[: n // 4] = base + rng.integers(-2, 3, size=(n // 4, d)) * np.spacing(base)
    rng.shuffle(X)
    return X, C


@pytest.mark.parametrize("seed,n,d,k,R", [(30, 3000, 6, 5, 4), (31, 2000, 3, 9, 3),
                                          (32, 1500, 1, 3, 2)])
def test_exact_ties_are_settled_in_the_kernel(seed, n, d, k, R, scorer):
    """Near ties, exact ties included, are decided in the kernel (kernels._exact_row): the
    pass leaves nothing to redo, and the labels, statistics, silhouettes and distances are the
    numpy references', bit for bit."""
    X, C = _ties(seed, n, d, k, R)
    p = kernels._Prepared(X, C)
    labels = assign(X, C)
    scores, _ = kernels.canonical_scores(X, C)
    assert (np.sort(scores, axis=1)[:, 1] == np.sort(scores, axis=1)[:, 0]).sum() > n // 10
    assert _fused_pass_undecided(p) == 0
    _assert_kernel_equals_reference(X, C)
    s, c = kernel_block_silhouette(X, C)
    s_ref, c_ref = block_silhouette_reference(X, C)
    assert np.array_equal(s, s_ref) and np.array_equal(c, c_ref)
    assert np.array_equal(kernel_block_labels(X, C), labels)


def test_exact_row_is_exact_nearest():
    """kernels._exact_row gives exact_nearest's label (the exact argmin, lowest index on a tie)
    for rows that only exact arithmetic decides, through both of its paths (differences free of
    rounding, and the expansion of the product terms), and -1 outside its range."""
    from dpkmeans.compute.nearest import Nearest, exact_nearest
    rng = np.random.default_rng(33)
    for trial in range(400):
        d, k = int(rng.integers(1, 8)), int(rng.integers(2, 7))
        base = rng.random(d)
        C = (base + rng.integers(-5, 6, size=(k, d)) * np.spacing(base))[None]
        if trial % 3 == 0:
            C[0, -1] = C[0, 0]  # a repeated centroid never wins
        x = base + rng.integers(-3, 4, size=d) * np.spacing(base) if trial % 2 else rng.random(d)
        near = Nearest(np.zeros((1, d)), C)
        terms = kernels._CentroidTerms(C)
        a = np.append(x, 1.0)[None]
        want = exact_nearest(a, near.B, a[:, :d] @ terms.CT[0] + terms.cs[0], ~near.shadowed)
        got = kernels._exact_row(x[None], 0, terms.CT, terms.cs, terms.margin, 0)
        assert got == want[0]
    x = np.full((1, 2), 2.0**-500)
    terms = kernels._CentroidTerms(np.zeros((1, 2, 2)) + [[[0.0], [1.0]]])
    assert kernels._exact_row(x, 0, terms.CT, terms.cs, terms.margin, 0) == -1


def test_silhouettes_of_repeated_replicas_are_computed_once(monkeypatch):
    """Replicas with the same centroids (a study's shared starts) share one computation."""
    X, C = _tricky(34, 2000, 3, 4, 3)
    C = C[[0, 1, 0, 2, 1, 0]]
    seen = []
    real = kernels._Prepared.silhouette
    monkeypatch.setattr(kernels._Prepared, "silhouette",
                        lambda self: seen.append(self.shape[0]) or real(self))
    s, c = kernel_block_silhouette(X, C)
    s_ref, c_ref = block_silhouette_reference(X, C)
    assert np.array_equal(s, s_ref) and np.array_equal(c, c_ref) and seen == [3]


def test_silhouettes_fused_into_the_next_statistics_pass(scorer, monkeypatch):
    """A silhouette call that expects another iteration arms its block: the next statistics
    call on it computes its centroids' silhouettes in the same pass (kernels._Fusion), with the
    bits of the separate passes, and the silhouette call takes them without a pass of its own.
    A block changed in place, or too few replicas, runs the separate passes."""
    from dpkmeans.compute.lloyd import block_silhouette, block_silhouette_ahead
    X, C = _tricky(35, 3000, 4, 5, 9)
    C2 = C[::-1] * 0.75  # the next iteration's centroids
    passes = []
    real = kernels._Prepared.silhouette
    monkeypatch.setattr(kernels._Prepared, "silhouette",
                        lambda self: passes.append("silhouette") or real(self))
    kernels._FUSION.armed.clear()
    block_silhouette_ahead(X, C)
    assert len(kernels._FUSION.armed) == 1
    sums, counts = block_stats(X, C2)
    s, c = block_silhouette(X, C2)
    labels = assign(X, C2)
    s_ref, c_ref = panels_block_stats(X, C2, labels)
    sil_ref, cnt_ref = block_silhouette_reference(X, C2)
    assert np.array_equal(sums, s_ref) and np.array_equal(counts, c_ref)
    assert np.array_equal(s, sil_ref) and np.array_equal(c, cnt_ref)
    assert passes == ["silhouette"] and not kernels._FUSION.armed  # the first call's only
    block_silhouette_ahead(X, C)
    X[0, 0] += 1.0  # changed in place: not the block that was armed
    block_stats(X, C2)
    block_silhouette(X, C2)
    assert passes == ["silhouette"] * 3
    block_silhouette_ahead(X, C[:2])  # too few replicas to arm
    assert not kernels._FUSION.armed


def test_a_generated_kernel_in_high_dimension_compiles_and_is_exact():
    """k = 2, d = 256 (k d <= 640: generated): each row's squared norm is one statement per
    feature, not an expression nested d deep (Python refuses more than 200 parentheses)."""
    X, C = _tricky(11, 700, 256, 2, 1)
    _assert_kernel_equals_reference(X, C)
