"""Tests of the exact discrete samplers (dpkmeans.privacy.discrete; Canonne, Kamath & Steinke 2020).

Statistical tests use fixed seeds (deterministic) and are each paired with a deliberately
wrong sampler that the same check must reject: a statistical test that cannot fail is not a
test. Exact pmfs are computed in float64 here, in the tests only.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpkmeans.privacy import discrete as D
from dpkmeans.privacy.discrete import (
    MAX_INT,
    MAX_SIGMA2,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
)
from tests.statistics_helpers import ALPHA, chi2_pvalue

N_DRAWS = 200_000


def gens(seeds) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in seeds]


# --------------------------------------------------------------------------------------------
# Exact distributions (float64, for the checks only)
# --------------------------------------------------------------------------------------------


def laplace_cdf(y: np.ndarray, t: float) -> np.ndarray:
    """P[Y <= y] for P[Y = y] ~ exp(-|y| / t): q^{-y} / (1 + q) below 0, else
    1 - q^{y + 1} / (1 + q), q = exp(-1/t)."""
    q = math.exp(-1.0 / t)
    y = np.asarray(y, dtype=float)
    return np.where(y < 0, q ** (-y) / (1 + q), 1 - q ** (y + 1) / (1 + q))


def gaussian_pmf(sigma2: int) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of N_Z(0, sigma2), truncated where the mass is below 1e-300."""
    k = int(40 * math.sqrt(sigma2)) + 10
    ys = np.arange(-k, k + 1)
    w = np.exp(-(ys.astype(float) ** 2) / (2 * sigma2))
    return ys, w / w.sum()


def bins_for(edges_probs: np.ndarray, n: int, min_expected: float = 20.0) -> np.ndarray:
    """Indices of bin boundaries merging consecutive cells until each expects >= min_expected."""
    cuts = [0]
    acc = 0.0
    for i, p in enumerate(edges_probs):
        acc += p
        if acc * n >= min_expected:
            cuts.append(i + 1)
            acc = 0.0
    if cuts[-1] != len(edges_probs):
        cuts[-1] = len(edges_probs)  # merge the remainder into the last bin
    return np.asarray(cuts)


def laplace_pvalue(y: np.ndarray, t: float) -> float:
    """Chi-square p-value of integer samples against the discrete Laplace with scale t, cells
    of about t/4 integers (single integers for small t), merged to expect >= 20 each."""
    y = np.ravel(y)
    width = max(1, int(t) // 4)
    lo = -int(30 * t) - width
    edges = np.arange(lo, -lo + 2 * width, width)  # cell i = [edges[i], edges[i+1])
    cdf = laplace_cdf(edges - 1, t)
    cell = np.diff(cdf)
    probs = np.concatenate([[cdf[0]], cell, [1 - cdf[-1]]])  # outer cells take the tails
    cuts = bins_for(probs, y.size)
    merged = np.add.reduceat(probs, cuts[:-1])
    # cell index of each sample, then merged bin
    idx = np.searchsorted(edges, y, side="right")  # 0: below edges[0], len(edges): above
    picks = np.searchsorted(cuts, idx, side="right") - 1
    return chi2_pvalue(picks, merged / merged.sum())


def gaussian_pvalue(y: np.ndarray, sigma2: int) -> float:
    y = np.ravel(y)
    ys, pmf = gaussian_pmf(sigma2)
    cuts = bins_for(pmf, y.size)
    merged = np.add.reduceat(pmf, cuts[:-1])
    idx = np.clip(y - ys[0], 0, ys.size - 1)
    picks = np.searchsorted(cuts, idx, side="right") - 1
    return chi2_pvalue(picks, merged / merged.sum())


# --------------------------------------------------------------------------------------------
# Exactness of the distributions (each check paired with a wrong sampler it rejects)
# --------------------------------------------------------------------------------------------


@pytest.mark.statistical
@pytest.mark.parametrize("t", [1, 3, 1000])
def test_discrete_laplace_matches_exact_pmf(t):
    y = discrete_laplace(np.full(N_DRAWS, t), np.random.default_rng(100 + t))
    assert y.dtype == np.int64
    assert laplace_pvalue(y, t) > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("t", [1, 3, 1000])
def test_laplace_check_rejects_wrong_samplers(t):
    rng = np.random.default_rng(200 + t)
    if t < 20:  # rounding a continuous Laplace is visibly wrong only for small t
        rounded = np.rint(rng.laplace(scale=t, size=N_DRAWS)).astype(np.int64)
        assert laplace_pvalue(rounded, t) < ALPHA
    else:  # an integer scale 5% too large
        wrong = discrete_laplace(np.full(N_DRAWS, round(t * 1.05)), rng)
        assert laplace_pvalue(wrong, t) < ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [1, 10, 10**6])
def test_discrete_gaussian_matches_exact_pmf(sigma2):
    y = discrete_gaussian(np.full(N_DRAWS, sigma2), np.random.default_rng(300 + sigma2))
    assert y.dtype == np.int64
    assert gaussian_pvalue(y, sigma2) > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [1, 10, 10**6])
def test_gaussian_check_rejects_wrong_samplers(sigma2):
    rng = np.random.default_rng(400 + sigma2)
    rounded = np.rint(rng.normal(scale=math.sqrt(sigma2), size=N_DRAWS)).astype(np.int64)
    wrong = discrete_gaussian(np.full(N_DRAWS, math.ceil(sigma2 * 1.1)), rng)
    if sigma2 <= 1:  # rounding a continuous normal is visibly wrong only for small sigma
        assert gaussian_pvalue(rounded, sigma2) < ALPHA
    assert gaussian_pvalue(wrong, sigma2) < ALPHA


GAMMAS = [(0, 1), (1, 3), (1, 2), (1, 1), (3, 2), (7, 3), (10, 1), (2**61, 2**62 - 1),
          (5 * 2**59 + 3, 2**60 + 1)]


def bernoulli_pvalue(hits: np.ndarray, num: int, den: int) -> float:
    p = math.exp(-num / den)
    k, n = int(hits.sum()), hits.size
    if p == 1.0:
        return 1.0 if k == n else 0.0
    return float(stats.binomtest(k, n, p).pvalue)


@pytest.mark.statistical
def test_bernoulli_exp_matches_exp_minus_gamma():
    nums = np.array([g[0] for g in GAMMAS], dtype=np.int64)[:, None]
    dens = np.array([g[1] for g in GAMMAS], dtype=np.int64)[:, None]
    b = bernoulli_exp(nums, np.broadcast_to(dens, (len(GAMMAS), N_DRAWS)),
                      np.random.default_rng(5))
    assert b.shape == (1, len(GAMMAS), N_DRAWS) and b.dtype == bool
    for i, (num, den) in enumerate(GAMMAS):
        assert bernoulli_pvalue(b[0, i], num, den) > ALPHA, (num, den)


@pytest.mark.statistical
def test_bernoulli_check_rejects_wrong_gammas():
    rng = np.random.default_rng(6)
    for num, den in GAMMAS[1:]:
        # gamma 5% (+0.02) larger; for the tiny probability exp(-10), e times larger.
        if num >= 5 * den:
            wn, wd = num - den, den
        elif den < 2**50:
            wn, wd = num * 1050 + 20 * den, 1000 * den
        else:
            wn, wd = num * 21 // 20 + den // 50, den
        b = bernoulli_exp(np.full(N_DRAWS, wn), wd, rng)
        assert bernoulli_pvalue(b[0], num, den) < ALPHA, (num, den)


@pytest.mark.statistical
def test_symmetry_of_laplace_and_gaussian():
    rng = np.random.default_rng(7)
    for y in (discrete_laplace(np.full(N_DRAWS, 5), rng),
              discrete_gaussian(np.full(N_DRAWS, 7), rng)):
        y = y.ravel()
        pos, neg = int((y > 0).sum()), int((y < 0).sum())
        assert stats.binomtest(pos, pos + neg, 0.5).pvalue > ALPHA
        # The same check fails for a sampler that flips the sign of 5% of its negatives.
        skewed = np.where((y < 0) & (rng.random(y.size) < 0.05), -y, y)
        sp, sn = int((skewed > 0).sum()), int((skewed < 0).sum())
        assert stats.binomtest(sp, sp + sn, 0.5).pvalue < ALPHA


@pytest.mark.statistical
def test_per_element_scales():
    scales = np.array([1, 3, 1000])
    y = discrete_laplace(np.broadcast_to(scales, (N_DRAWS // 2, 3)), np.random.default_rng(8))
    for j, t in enumerate(scales):
        assert laplace_pvalue(y[0, :, j], t) > ALPHA
    # The check of column 1 (t = 3) rejects column 0 (t = 1).
    assert laplace_pvalue(y[0, :, 0], 3) < ALPHA
    s2 = np.array([2, 10**6])
    g = discrete_gaussian(np.broadcast_to(s2, (N_DRAWS // 2, 2)), np.random.default_rng(9))
    for j, v in enumerate(s2):
        assert gaussian_pvalue(g[0, :, j], v) > ALPHA
    assert gaussian_pvalue(g[0, :, 0], 3) < ALPHA


def truncated_exp_cdf(x: np.ndarray) -> np.ndarray:
    """CDF of U/t for P[U = u] ~ exp(-u/t) on [0, t), t -> infinity (exact to O(1/t))."""
    return (1 - np.exp(-x)) / (1 - math.exp(-1))


@pytest.mark.statistical
@pytest.mark.parametrize("t", [2**44 + 999, 2**56 + 1, 3 * 2**60 + 1, 2**62 - 1])
def test_u_phase_at_huge_scales(t):
    """U of Algorithm 2 (the only part that depends on t) at scales up to 2**62 - 1: narrow
    (16-bit chunk) and wide (uniforms below t, 2t, 3t) attempts, single and per-slot rejection
    thresholds (3 * 2**60 + 1 rejects about 6% of its words)."""
    n = 40_000
    st = D._Stream([np.random.default_rng(t % 1000).bit_generator], grow=1000)
    rows = np.zeros(n, dtype=np.int64)
    sc = D._Scale(np.array([t], dtype=np.uint64), True)
    U = D._u_phase(st, rows, sc, st.take(rows, sc.width))
    assert U.dtype == np.uint64 and int(U.max()) < t
    x = U.astype(float) / t
    assert stats.kstest(x, truncated_exp_cdf).pvalue > ALPHA
    # The same check rejects plain uniforms (no Bernoulli(exp(-U/t)) acceptance).
    uni = st.take(rows, 1)[0] % np.uint64(t)
    assert stats.kstest(uni.astype(float) / t, truncated_exp_cdf).pvalue < ALPHA


@pytest.mark.statistical
def test_wide_scale_laplace_is_laplace():
    t = 2**56 + 12345  # wide attempts; |Y| >= 2**63 has probability exp(-128)
    y = discrete_laplace(np.full(50_000, t), np.random.default_rng(11))[0]
    assert stats.kstest(y.astype(float) / t, stats.laplace().cdf).pvalue > ALPHA
    assert stats.kstest(y.astype(float) / (1.1 * t), stats.laplace().cdf).pvalue < ALPHA


@pytest.mark.statistical
def test_tie_resolution_of_the_16_bit_chunks():
    """Force x_1 = h_1 (a tie) and x_2 > h_2: then A_1 ~ Bernoulli(rho_1 / t) exactly, A_2 = 0,
    and the attempt is accepted iff A_1 fails: P = 1 - rho_1 / t."""
    t, u = 1000, 337
    h1 = (u << 16) // t
    rho = (u << 16) - h1 * t
    n = 50_000
    w0 = np.full(n, u, dtype=np.uint64)  # U = w0 mod t (w0 >= 2**64 mod t is not needed)
    w0 += np.uint64(t) * np.arange(1, n + 1, dtype=np.uint64)
    w1 = np.full(n, h1 | (0xFFFF << 16), dtype=np.uint64)
    st = D._Stream([np.random.default_rng(12).bit_generator], grow=1000)
    sc = D._Scale(np.array([t], dtype=np.uint64), True)
    thr = int(sc.thr[0])
    assert thr < t  # every w0 above is valid
    U, acc = D._u_attempts(st, np.zeros(n, dtype=np.int64), sc, np.stack([w0, w1]))
    assert np.all(U == u)
    p = 1 - rho / t
    assert stats.binomtest(int(acc.sum()), n, p).pvalue > ALPHA
    assert stats.binomtest(int(acc.sum()), n, 1 - (rho + 40) / t).pvalue < ALPHA


@pytest.mark.statistical
def test_slow_path_bernoulli_exp():
    st = D._Stream([np.random.default_rng(13).bit_generator], grow=1000)
    for gamma in (Fraction(1, 2), Fraction(7, 3)):
        hits = np.array([D._slow_bern_exp(st, 0, gamma) for _ in range(20_000)])
        assert bernoulli_pvalue(hits, gamma.numerator, gamma.denominator) > ALPHA
        wrong = gamma * Fraction(6, 5)
        assert bernoulli_pvalue(hits, wrong.numerator, wrong.denominator) < ALPHA


def test_gaussian_slow_path_for_huge_candidates():
    """Candidates with m >= 2**31 or |Y| t >= 2**62 go to the Python-integer path (gamma >= 32:
    32 vectorised Bernoulli(exp(-1)) trials first); they are rejected, exactly."""
    a = MAX_SIGMA2
    t = math.isqrt(a) + 1
    Y = np.array([2**33, -(2**40), 2**34 + 7, 3, 2**62 // t + 1], dtype=np.int64)
    st = D._Stream([np.random.default_rng(22).bit_generator], grow=1000)
    rows = np.zeros(Y.size, dtype=np.int64)
    ok = D._gauss_accept(st, rows, Y, np.full(Y.size, a), np.full(Y.size, t), a, t, True)
    assert ok.dtype == bool and not ok[[0, 1, 2, 4]].any()
    assert int(st.off[0]) > 0


@pytest.mark.statistical
def test_gaussian_with_every_element_on_the_slow_path(monkeypatch):
    """The Python-integer path of the acceptance test (astronomically rare tails in practice)
    forced for every element: the distribution is still exact."""
    monkeypatch.setattr(D, "_SLOW_M", 0)
    y = discrete_gaussian(np.full(20_000, 10), np.random.default_rng(14))
    assert gaussian_pvalue(y, 10) > ALPHA
    assert gaussian_pvalue(y, 13) < ALPHA


# --------------------------------------------------------------------------------------------
# Batch independence, determinism, shapes
# --------------------------------------------------------------------------------------------

SAMPLERS = {
    "laplace": lambda p, r: discrete_laplace(p, r),
    "gaussian": lambda p, r: discrete_gaussian(p, r),
    "bernoulli": lambda p, r: bernoulli_exp(p, 7, r),
}
PARAMS = {  # mixed per-element parameters: narrow and wide scales, small and large sigma^2
    "laplace": np.array([[1, 3, 1000, 2**30 + 5], [2**44 + 1, 7, 2**50 + 3, 2]]),
    "gaussian": np.array([[1, 2, 10, 2**40 + 1], [3, 10**6, 5, 2**44]]),
    "bernoulli": np.array([[0, 1, 3, 7], [10, 14, 21, 100]]),
}


@pytest.mark.parametrize("kind", [*SAMPLERS, "gaussian_slow_path"])
def test_batch_independence(kind, monkeypatch):
    """Replica 3 alone, or among others (different seeds, R = 10 and R = 1000, another
    position), gives the same row and leaves its generator in the same state."""
    if kind == "gaussian_slow_path":  # every acceptance test on the Python-integer path
        monkeypatch.setattr(D, "_SLOW_M", 0)
        kind = "gaussian"
    f, p = SAMPLERS[kind], PARAMS[kind]
    alone_rng = np.random.default_rng(333)
    alone = f(p, [alone_rng])[0]
    batch10 = gens([1, 2, 3, 333, 5, 6, 7, 8, 9, 10])
    out10 = f(p, batch10)
    batch1000 = gens(range(10_000, 11_000))
    batch1000[3] = np.random.default_rng(333)
    batch1000[500] = np.random.default_rng(333)
    out1000 = f(p, batch1000)
    np.testing.assert_array_equal(out10[3], alone)
    np.testing.assert_array_equal(out1000[3], alone)
    np.testing.assert_array_equal(out1000[500], alone)
    nxt = alone_rng.bit_generator.random_raw(4)
    np.testing.assert_array_equal(batch10[3].bit_generator.random_raw(4), nxt)
    np.testing.assert_array_equal(batch1000[3].bit_generator.random_raw(4), nxt)
    np.testing.assert_array_equal(batch1000[500].bit_generator.random_raw(4), nxt)
    assert not np.array_equal(out1000[4], alone)  # other seeds give other rows


def test_batch_independence_across_chunks():
    """Replica chunks (many elements per replica) and element chunks (more elements than one
    chunk holds): a replica's row does not depend on the batch."""
    scales = np.arange(1, 40_001) % 977 + 1  # 40000 elements: three element chunks
    alone = discrete_laplace(scales, [np.random.default_rng(42)])[0]
    pair = discrete_laplace(scales, gens([41, 42]))
    np.testing.assert_array_equal(pair[1], alone)
    small = np.full(5000, 2**31 + 1)  # 5000 elements: 13 replicas per replica chunk
    seeds = list(range(100, 140))
    out = discrete_laplace(small, gens(seeds))
    for r in (0, 12, 13, 39):
        np.testing.assert_array_equal(out[r], discrete_laplace(small, gens([seeds[r]]))[0])


def test_per_replica_scales_match_each_replica_alone():
    """Per-replica scales (an allocation rule's): row r, and the state its generator is left
    in, are those of replica r sampled alone with its own scales; narrow replicas are drawn
    together, a replica with a wide scale (> 2**48) alone, in every element chunk."""
    rng = np.random.default_rng(8)
    scales = rng.integers(1, 2**40, size=(40, 3, 5))
    scales[:, 1] = rng.integers(1, 9, size=(40, 5))  # tiny scales: long rejection runs
    scales[7, 2, 3] = 2**50 + 3  # one wide replica
    scales[11] = 977  # one replica with a single scale
    seeds = list(range(500, 540))
    batch, alone_gens = gens(seeds), gens(seeds)
    out = discrete_laplace(scales, batch, per_replica=True)
    assert out.shape == scales.shape
    for r, g in enumerate(alone_gens):
        np.testing.assert_array_equal(out[r], discrete_laplace(scales[r], [g])[0])
        np.testing.assert_array_equal(batch[r].bit_generator.random_raw(3),
                                      g.bit_generator.random_raw(3))
    many = np.tile(np.arange(1, 20_001) % 977 + 1, (2, 1))  # 20000 elements: two chunks
    many[1] *= 3
    pair = discrete_laplace(many, gens([41, 42]), per_replica=True)
    np.testing.assert_array_equal(pair[1], discrete_laplace(many[1], gens([42]))[0])


def test_exponential_choices_match_each_replica_alone():
    """The replicas' exponential mechanisms batched (the k-prototypes modes): row r, and the
    state its generator is left in, are those of exponential_choice for replica r alone, for
    small and large coefficients (coins on the whole part and on the fraction) and gaps, one
    Python-integer replica among int64 ones."""
    from fractions import Fraction

    from dpkmeans.privacy.discrete import exponential_choice, exponential_choices
    rng = np.random.default_rng(9)
    widths = np.array([3, 1, 5, 2, 7])
    for coefficient, top in ((Fraction(1, 2), 4), (0.37, 60), (3.3, 9), (25.0, 2**40), (0.0, 5)):
        gaps = []
        for _ in range(25):
            counts = [rng.integers(0, top, w) for w in widths]
            gaps.append(np.concatenate([c.max() - c for c in counts]).astype(np.int64))
        seeds = list(range(600, 625))
        batch, alone = gens(seeds), gens(seeds)
        out = exponential_choices(gaps, coefficient, widths, batch)
        for r, g in enumerate(alone):
            np.testing.assert_array_equal(out[r], exponential_choice(gaps[r], coefficient,
                                                                     widths, g))
            assert batch[r].bit_generator.state == g.bit_generator.state
        mixed = gaps[:3] + [np.array([int(v) for v in gaps[3]], dtype=object)]
        batch, alone = gens(seeds[:4]), gens(seeds[:4])
        out = exponential_choices(mixed, coefficient, widths, batch)
        for r, g in enumerate(alone):
            np.testing.assert_array_equal(out[r], exponential_choice(mixed[r], coefficient,
                                                                     widths, g))
    with pytest.raises(ValueError, match="replicas"):
        exponential_choices(gaps[:2], 0.5, widths, gens([1]))


def test_per_replica_scales_need_one_row_per_replica():
    with pytest.raises(ValueError, match="leading axis of 3 replicas"):
        discrete_laplace(np.ones((2, 4), dtype=np.int64), gens([1, 2, 3]), per_replica=True)
    with pytest.raises(ValueError, match="leading axis"):
        discrete_laplace(5, gens([1]), per_replica=True)


@pytest.mark.parametrize("kind", list(SAMPLERS))
def test_determinism(kind):
    f, p = SAMPLERS[kind], PARAMS[kind]
    a = f(p, gens([1, 2, 3]))
    b = f(p, gens([1, 2, 3]))
    np.testing.assert_array_equal(a, b)
    c = f(p, gens([1, 2, 4]))
    np.testing.assert_array_equal(a[:2], c[:2])
    assert not np.array_equal(a[2], c[2])


def test_shapes_and_dtypes():
    g = np.random.default_rng(0)
    assert discrete_laplace(5, g).shape == (1,)
    assert discrete_laplace(5, gens([1, 2])).shape == (2,)
    y = discrete_laplace(np.full((2, 3), 5), gens([1, 2, 3, 4]))
    assert y.shape == (4, 2, 3) and y.dtype == np.int64
    assert discrete_laplace(np.empty((0, 3), dtype=np.int64), g).shape == (1, 0, 3)
    assert discrete_gaussian(np.full((3, 1), 10), g).shape == (1, 3, 1)
    assert discrete_gaussian([1, 2, 3], gens([1, 2])).dtype == np.int64
    b = bernoulli_exp(np.arange(3)[:, None], np.arange(1, 5)[None, :], gens([1, 2]))
    assert b.shape == (2, 3, 4) and b.dtype == bool
    assert bernoulli_exp(0, 1, g).all()
    # Scales given as Python ints, lists, uint64 and int32 arrays.
    for s in (7, [7, 8], np.array([7], dtype=np.uint64), np.array([7], dtype=np.int32)):
        assert discrete_laplace(s, g).dtype == np.int64
    # A numpy array of generators is a sequence of generators.
    arr = np.empty(2, dtype=object)
    arr[:] = gens([5, 6])
    np.testing.assert_array_equal(discrete_laplace([3, 4], arr),
                                  discrete_laplace([3, 4], gens([5, 6])))


def test_huge_scales_near_2_61():
    t = 2**61 + 12345
    g = np.random.default_rng(15)
    y = discrete_laplace(np.full(40, t), g)[0]
    assert y.dtype == np.int64
    assert (y > 0).any() and (y < 0).any()
    assert int(np.abs(y).max()) > t // 8  # a scale of 2**61, not a small one
    y2 = discrete_laplace(np.array([2**62 - 1, 2**61 - 1, 1]), gens([16, 17]))
    assert y2.shape == (2, 3) and abs(int(y2[0, 2])) < 100
    # |Y| >= 2**63 (probability about 2% per draw at t = 2**61) is an OverflowError.
    with pytest.raises(OverflowError, match="int64"):
        discrete_laplace(np.full(3000, 2**61 + 1), np.random.default_rng(18))


def test_sigma2_range():
    g = np.random.default_rng(19)
    y = discrete_gaussian(np.full(2000, 2**44), g)
    assert 0.8 * 2**22 < y.std() < 1.2 * 2**22
    assert discrete_gaussian(MAX_SIGMA2, g).shape == (1,)
    with pytest.raises(ValueError, match="sigma2"):
        discrete_gaussian(MAX_SIGMA2 + 1, g)


def test_isqrt_is_exact():
    rng = np.random.default_rng(20)
    vals = np.concatenate([np.arange(0, 2000), rng.integers(0, 2**62, 2000),
                           [k * k + d for k in (2**28, 2**30, 3037000499) for d in (-1, 0, 1)]])
    got = D._isqrt(vals.astype(np.int64))
    assert got.tolist() == [math.isqrt(int(v)) for v in vals]


def test_words_come_from_the_replica_stream_only():
    """Each row is a function of its generator's raw words: a generator with the same state
    reached another way gives the same row."""
    a = np.random.default_rng(21)
    b = np.random.default_rng(21)
    b.bit_generator.random_raw(0)
    np.testing.assert_array_equal(discrete_laplace([3, 9], [a]), discrete_laplace([3, 9], [b]))


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------

G = np.random.default_rng(0)


@pytest.mark.parametrize("scale, err", [
    (np.array([1.0, 2.0]), TypeError),
    (np.array([np.nan]), TypeError),
    (2.5, TypeError),
    ("3", TypeError),
    (None, TypeError),
    (True, TypeError),
    ([1, "a"], TypeError),
    (0, ValueError),
    (-3, ValueError),
    (np.array([5, 0]), ValueError),
    (MAX_INT, ValueError),
    (2**70, ValueError),
    (np.array([2**63], dtype=np.uint64), ValueError),
])
def test_bad_scale(scale, err):
    with pytest.raises(err, match="scale"):
        discrete_laplace(scale, G)


@pytest.mark.parametrize("sigma2, err", [
    (np.array([1.5]), TypeError), (np.nan, TypeError), (0, ValueError), (-1, ValueError),
    (MAX_SIGMA2 + 1, ValueError), (2**62, ValueError)])
def test_bad_sigma2(sigma2, err):
    with pytest.raises(err, match="sigma2"):
        discrete_gaussian(sigma2, G)


@pytest.mark.parametrize("num, den, err, name", [
    (-1, 1, ValueError, "num"), (1, 0, ValueError, "den"), (1.0, 1, TypeError, "num"),
    (1, np.array([2.0]), TypeError, "den"), (MAX_INT, 1, ValueError, "num"),
    (1, MAX_INT, ValueError, "den"), (np.ones(3, dtype=np.int64), np.ones(4, dtype=np.int64),
                                      ValueError, "num and den")])
def test_bad_bernoulli_args(num, den, err, name):
    with pytest.raises(err, match=name):
        bernoulli_exp(num, den, G)


@pytest.mark.parametrize("rngs, err", [
    ([], ValueError), ((), ValueError), (5, TypeError), ("rng", TypeError), (None, TypeError),
    ([G, 5], TypeError), (np.random.RandomState(0), TypeError),
    ([np.random.RandomState(0)], TypeError), (np.random.PCG64(0), TypeError)])
@pytest.mark.parametrize("kind", list(SAMPLERS))
def test_bad_rngs(rngs, err, kind):
    with pytest.raises(err, match="rngs"):
        SAMPLERS[kind](np.array([3]), rngs)
