"""dpkmeans.privacy.colored (Ravi, Scaglione and Peisert 2021; book chapter 9): calibration, Delta
sets, covariances, checks.

Every expected value comes from an independent computation (scipy's normal tail, the
bisection of :mod:`dpkmeans.privacy.loss`, an explicit leave-one-out recomputation, the
Sigma-form SDP solved with cvxpy + SCS, np.linalg.solve, Monte Carlo) or from the printed
numbers of a verification run made before this module (GAMMA_TABLE, the tails at gamma_c and
the make_blobs settings below), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from dpkmeans.privacy import colored
from dpkmeans.privacy.colored import (
    MAX_BOX_VERTICES_DIM,
    box_covariance,
    box_deltas,
    ceds_covariance,
    ceds_gamma_fails_from,
    constraint_check,
    draw_colored,
    gamma_analytic,
    gamma_ceds,
    gamma_pdp,
    leave_one_out_deltas,
    optimal_covariance,
    pdp_tail,
    white_covariance,
)

EPS, DELTA = 1.0, 1e-5
GAMMA = EPS**2 / (2.0 * math.log(2.0 / DELTA))  # gamma_c(1, 1e-5), written out


# --- independent helpers ---------------------------------------------------------------------
def tail(eps: float, s2: float) -> float:
    """P[|L| > eps], L ~ N(s2/2, s2), straight from scipy's normal survival function."""
    s = math.sqrt(s2)
    return float(stats.norm.sf((eps - s2 / 2) / s) + stats.norm.sf((eps + s2 / 2) / s))


def random_spd(m: int, seed: int, cond: float = 20.0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(gen.standard_normal((m, m)))
    return (Q * np.geomspace(1.0, cond, m)) @ Q.T


def blobs(n: int, seed: int, K: int = 3, d: int = 3):
    """make_blobs + sklearn KMeans (n_init=1), the verification run's setting; the
    centroids are the plain cluster means of the labels."""
    X, _ = make_blobs(n, n_features=d, centers=K, random_state=seed)
    labels = KMeans(K, n_init=1, random_state=seed).fit(X).labels_
    C = np.array([X[labels == k].mean(axis=0) for k in range(K)])
    return X, labels, C


def explicit_loo(X: np.ndarray, labels: np.ndarray, K: int, n: int) -> np.ndarray:
    """Stacked centroids of the full data minus those without record n, labels frozen."""
    full = np.concatenate([X[labels == k].mean(axis=0) for k in range(K)])
    keep = np.arange(len(X)) != n
    Xr, lr = X[keep], labels[keep]
    reduced = np.concatenate([Xr[lr == k].mean(axis=0) for k in range(K)])
    return full - reduced


def scs_sigma_sdp(D: np.ndarray, gamma: float) -> np.ndarray:
    """min tr(S) s.t. [[S, Delta_n], [Delta_n', gamma]] >= 0 for every row, the Sigma form
    (the Schur complement of Ravi et al.'s eq. 11), solved with cvxpy + SCS on the rescaled
    problem (max ||Delta|| = 1, gamma = 1); S = S_1 a^2 / gamma."""
    import cvxpy as cp

    a2 = float(np.max(np.einsum("ij,ij->i", D, D)))
    U = D / math.sqrt(a2)
    m = D.shape[1]
    S = cp.Variable((m, m), symmetric=True)
    one = np.ones((1, 1))
    cons = [cp.bmat([[S, u[:, None]], [u[None, :], one]]) >> 0 for u in U]
    problem = cp.Problem(cp.Minimize(cp.trace(S)), cons)
    problem.solve(solver=cp.SCS, eps=1e-9, max_iters=200000)
    assert problem.status == cp.OPTIMAL, problem.status
    return (S.value + S.value.T) / 2 * a2 / gamma


def ceds_reference(D: np.ndarray, gamma: float) -> np.ndarray:
    """The authors' closed form for Lemma 5 (their code, CEDS), written again: sort by norm
    ascending, keep the first independent columns (greedy matrix_rank), SVD,
    M = (U diag(sqrt s) V')^2, lambda = (gamma M^-1 1)^-2, R = D_S diag(lambda) D_S',
    Sigma = R^(1/2) by SVD."""
    cols = D.T[:, np.argsort(np.linalg.norm(D, axis=1), kind="stable")]
    pivots: list[int] = []
    for i in range(cols.shape[1]):
        if np.linalg.matrix_rank(cols[:, pivots + [i]]) > len(pivots):
            pivots.append(i)
        if len(pivots) == cols.shape[0]:
            break
    DS = cols[:, pivots]
    U, s, Vt = np.linalg.svd(DS)
    M = (U @ np.diag(np.sqrt(s)) @ Vt) ** 2
    lam = (gamma * np.linalg.solve(M, np.ones(len(s)))) ** -2.0
    R = DS @ np.diag(lam) @ DS.T
    U, s, Vt = np.linalg.svd(R)
    return U @ np.diag(np.sqrt(s)) @ Vt


@pytest.fixture(scope="module")
def blob_sets():
    """seed -> (X, labels, C, D) for make_blobs(200, 3 features, 3 centres)."""
    out = {}
    for seed in range(4):
        X, labels, C = blobs(200, seed)
        out[seed] = (X, labels, C, leave_one_out_deltas(X, labels, C))
    return out


@pytest.fixture(scope="module")
def blob_solutions(blob_sets):
    return {seed: optimal_covariance(v[3], GAMMA) for seed, v in blob_sets.items()}


# --- 1. gamma*(eps, delta) -------------------------------------------------------------------
GAMMA_TABLE = [  # eps, delta, gamma_c, gamma*, decimals printed
    (0.1, 1e-5, 0.0004, 0.0005, 4),
    (1.0, 1e-5, 0.0410, 0.0506, 4),
    (1.0, 0.1, 0.1669, 0.3405, 4),
    (2.0, 1e-5, 0.1639, 0.1964, 4),
    (5.0, 1e-3, 1.6445, 1.7711, 4),
    (10.0, 1e-5, 4.0963, 3.6667, 4),
    (11.2, 0.1, 20.94, 13.12, 2),
]


@pytest.mark.parametrize("eps, delta, g_c, g_star, dec", GAMMA_TABLE)
def test_gamma_pdp_and_gamma_ceds_match_the_table(eps, delta, g_c, g_star, dec):
    half_unit = 0.5 * 10.0**-dec + 1e-12
    assert abs(gamma_pdp(eps, delta) - g_star) <= half_unit
    assert abs(gamma_ceds(eps, delta) - g_c) <= half_unit


@pytest.mark.parametrize("eps, delta",
                         [(e, d) for e, d, *_ in GAMMA_TABLE] + [(0.5, 1e-8), (3.0, 1e-6)])
def test_gamma_pdp_is_the_root_of_the_tail(eps, delta):
    g = gamma_pdp(eps, delta)
    assert pdp_tail(eps, g) == pytest.approx(delta, rel=1e-6)
    assert tail(eps, g) == pytest.approx(delta, rel=1e-6)  # scipy's own tail
    # the tail increases in s2: slightly above the root breaks delta, slightly below holds
    assert tail(eps, g * 1.001) > delta > tail(eps, g * 0.999)


@pytest.mark.parametrize("eps, delta, expected, rel", [
    (0.1, 1e-5, 7.8e-7, 0.01), (1.0, 1e-5, 8.8e-7, 0.01), (1.0, 0.1, 1.6e-2, 0.04),
    (2.0, 1e-5, 1.2e-6, 0.05), (5.0, 1e-3, 5.6e-4, 0.01),
    (10.0, 1e-5, 4.3e-5, 0.02), (11.2, 0.1, 0.44, 0.02),
])
def test_tail_at_gamma_c_matches_the_table(eps, delta, expected, rel):
    t = pdp_tail(eps, gamma_ceds(eps, delta))
    assert t == pytest.approx(expected, rel=rel)  # printed to 2 significant digits
    assert t == pytest.approx(tail(eps, gamma_ceds(eps, delta)), rel=1e-9)
    assert (t > delta) == (eps >= 10)  # the two large-eps rows violate PDP


def test_pdp_tail_edges():
    assert pdp_tail(1.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        pdp_tail(1.0, -1e-3)
    with pytest.raises(ValueError):
        pdp_tail(1.0, float("nan"))
    # tiny and large s2 against scipy
    for s2 in (1e-4, 0.3, 4.0, 50.0):
        assert pdp_tail(1.5, s2) == pytest.approx(tail(1.5, s2), rel=1e-9)


def test_gamma_bad_inputs_raise():
    for eps, delta in [(0.0, 1e-5), (-1.0, 1e-5), (1.0, 0.0), (1.0, 1.0), (1.0, -0.1)]:
        with pytest.raises(ValueError):
            gamma_pdp(eps, delta)
        with pytest.raises(ValueError):
            gamma_ceds(eps, delta)


# --- 2. the privacy loss of a colored Gaussian, by Monte Carlo ------------------------------
@pytest.mark.statistical
@pytest.mark.parametrize("eps, target_s2", [(1.0, 1.0), (1.0, None), (3.0, 2.5)])
def test_pdp_tail_matches_monte_carlo_privacy_loss(eps, target_s2):
    """y = mu0 + w, w ~ N(0, Sigma); mu1 = mu0 - Delta; L = ln p(y|mu0) / p(y|mu1) (scipy
    logpdf). L ~ N(s2/2, s2), and P[|L| > eps] = pdp_tail(eps, s2) within a binomial CI."""
    seed = 11 if target_s2 is None else int(target_s2 * 10) + int(eps)
    gen = np.random.default_rng(seed)
    m, n = 4, 200_000
    Sigma = random_spd(m, seed + 100, cond=30.0)
    Delta = gen.standard_normal(m)
    if target_s2 is None:
        target_s2 = gamma_pdp(eps, 0.01)  # the tail is 0.01 exactly
    Delta *= math.sqrt(target_s2 / (Delta @ np.linalg.solve(Sigma, Delta)))
    s2 = float(Delta @ np.linalg.solve(Sigma, Delta))
    mu0 = gen.normal(0, 3, m)
    mu1 = mu0 - Delta
    y = mu0 + gen.multivariate_normal(np.zeros(m), Sigma, size=n)
    L = (stats.multivariate_normal.logpdf(y, mu0, Sigma)
         - stats.multivariate_normal.logpdf(y, mu1, Sigma))
    s = math.sqrt(s2)
    assert abs(L.mean() - s2 / 2) < 5 * s / math.sqrt(n)
    assert abs(L.var() - s2) < 5 * s2 * math.sqrt(2.0 / n)
    p = pdp_tail(eps, s2)
    p_hat = float(np.mean(np.abs(L) > eps))
    assert abs(p_hat - p) < 5 * math.sqrt(p * (1 - p) / n)


# --- 3. gamma_c, gamma*, the analytic Gaussian ----------------------------------------------
@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-5), (7.5, 1e-3), (11.2, 0.1)])
def test_gamma_ceds_formula(eps, delta):
    assert gamma_ceds(eps, delta) == pytest.approx(eps**2 / (2 * math.log(2 / delta)),
                                                   rel=1e-12)


def test_ceds_gamma_fails_from():
    e = ceds_gamma_fails_from(1e-5)
    assert 5.0 < e < 10.0
    assert gamma_ceds(e, 1e-5) == pytest.approx(gamma_pdp(e, 1e-5), rel=1e-6)
    # independently: at that epsilon gamma_c reaches the tail delta exactly
    assert tail(e, e**2 / (2 * math.log(2e5))) == pytest.approx(1e-5, rel=1e-5)
    for eps in (0.05, 0.5, 1.0, 3.0, 0.9 * e):
        assert gamma_ceds(eps, 1e-5) < gamma_pdp(eps, 1e-5)
        assert tail(eps, gamma_ceds(eps, 1e-5)) < 1e-5
    for eps in (1.1 * e, 10.0, 20.0, 100.0):
        assert gamma_ceds(eps, 1e-5) > gamma_pdp(eps, 1e-5)
        assert tail(eps, gamma_ceds(eps, 1e-5)) > 1e-5


def test_ceds_gamma_fails_from_at_delta_0_1_is_below_11_2():
    # GAMMA_TABLE: at delta = 0.1, eps = 11.2 already violates; eps = 1 does not
    e = ceds_gamma_fails_from(0.1)
    assert 1.0 < e < 11.2
    assert tail(e, gamma_ceds(e, 0.1)) == pytest.approx(0.1, rel=1e-5)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-5), (1.0, 0.1), (2.0, 1e-6),
                                        (5.0, 1e-3), (10.0, 1e-5)])
def test_gamma_analytic_exceeds_gamma_pdp(eps, delta):
    ga = gamma_analytic(eps, delta)
    assert ga > gamma_pdp(eps, delta)
    # independently, Balle & Wang's exact delta at sensitivity/sigma = sqrt(ga) equals delta
    s = math.sqrt(ga)
    bw = stats.norm.cdf(s / 2 - eps / s) - math.exp(eps) * stats.norm.cdf(-s / 2 - eps / s)
    assert bw == pytest.approx(delta, rel=1e-5)


# --- 4. leave-one-out Delta's ----------------------------------------------------------------
def test_leave_one_out_deltas_match_explicit_recomputation(blob_sets):
    for seed in (0, 2):
        X, labels, C, D = blob_sets[seed]
        K, d = C.shape
        assert D.shape == (len(X), K * d)
        for n in (0, 1, 17, 64, 123, 199):
            assert np.allclose(D[n], explicit_loo(X, labels, K, n), rtol=1e-10, atol=1e-13)
        # only the record's own block is non-zero
        blocks = D.reshape(len(X), K, d)
        own = blocks[np.arange(len(X)), labels]
        assert np.all(np.linalg.norm(own, axis=1) > 0)
        other = blocks.copy()
        other[np.arange(len(X)), labels] = 0.0
        assert not np.any(other)


def test_leave_one_out_deltas_every_row_small_case():
    gen = np.random.default_rng(5)
    X = gen.normal(size=(13, 2))
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 1, 2])
    C = np.array([X[labels == k].mean(axis=0) for k in range(3)])
    D = leave_one_out_deltas(X, labels, C)
    for n in range(13):
        assert np.allclose(D[n], explicit_loo(X, labels, 3, n), rtol=1e-12, atol=1e-14)


def test_leave_one_out_deltas_bad_input():
    gen = np.random.default_rng(6)
    X = gen.normal(size=(10, 2))
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    C = np.array([X[labels == k].mean(axis=0) for k in range(3)])
    single = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 2])  # cluster 2 has one record
    with pytest.raises(ValueError, match=r"\[2\]"):
        leave_one_out_deltas(X, single, C)
    for bad in (np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3]),  # out of range
                np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, -1]),
                labels.astype(float),  # floats
                labels[:-1],  # wrong length
                labels.reshape(5, 2)):
        with pytest.raises(ValueError):
            leave_one_out_deltas(X, bad, C)
    with pytest.raises(ValueError):
        leave_one_out_deltas(X, labels, C[:, :1])  # d mismatch
    with pytest.raises(ValueError):
        leave_one_out_deltas(X[:, 0], labels, C)


# --- 5. the optimal covariance ---------------------------------------------------------------
def test_optimal_covariance_meets_every_constraint(blob_sets, blob_solutions):
    for seed in (0, 1, 2):
        D = blob_sets[seed][3]
        sol = blob_solutions[seed]
        chk = constraint_check(D, sol.covariance, GAMMA)
        assert chk.violated == 0
        assert chk.worst <= 1 + 1e-6
        # independently of constraint_check: Delta' Sigma^-1 Delta by solve
        s2 = np.einsum("ij,ij->i", D, np.linalg.solve(sol.covariance, D.T).T)
        assert s2.max() <= GAMMA * (1 + 1e-6)
        assert s2.max() >= GAMMA * (1 - 1e-4)  # at the optimum some constraint is tight
        assert np.allclose(sol.precision @ sol.covariance, np.eye(9), atol=1e-6)
        assert np.allclose(sol.covariance, sol.covariance.T)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_optimal_covariance_matches_an_independent_scs_solve(seed):
    X, labels, C = blobs(50, seed)
    D = leave_one_out_deltas(X, labels, C)
    S_ref = scs_sigma_sdp(D, GAMMA)
    sol = optimal_covariance(D, GAMMA)
    assert np.trace(sol.covariance) == pytest.approx(np.trace(S_ref), rel=1e-3)
    assert np.allclose(sol.covariance, S_ref, atol=1e-3 * np.abs(S_ref).max())


@pytest.mark.parametrize("seed, sdp, white", [(0, 0.384, 0.535), (1, 0.415, 0.621),
                                              (2, 0.502, 0.742), (3, 0.444, 0.857)])
def test_optimal_and_white_traces_reproduce_appendix_a3(blob_sets, blob_solutions, seed, sdp,
                                                        white):
    D = blob_sets[seed][3]
    assert abs(np.trace(blob_solutions[seed].covariance) - sdp) <= 5e-4
    white_ref = 9 * np.max(np.sum(D**2, axis=1)) / GAMMA  # sigma^2 = max ||Delta||^2 / gamma
    assert abs(white_ref - white) <= 5e-4
    W = white_covariance(D, GAMMA)
    assert np.allclose(W, np.eye(9) * white_ref / 9, rtol=1e-12)
    assert np.trace(blob_solutions[seed].covariance) < np.trace(W)


def test_active_constraints_are_among_the_largest_deltas(blob_sets, blob_solutions):
    for seed in (0, 1, 2):
        D = blob_sets[seed][3]
        sol = blob_solutions[seed]
        ratios = np.einsum("ij,ij->i", D, np.linalg.solve(sol.covariance, D.T).T) / GAMMA
        expected_active = np.flatnonzero(ratios >= 1 - 1e-4)
        assert np.array_equal(np.sort(sol.active), expected_active)
        assert expected_active.size >= 9  # Sigma non-singular needs >= K d tight constraints
        ranks = np.argsort(np.argsort(np.linalg.norm(D, axis=1)))  # 0 = smallest
        assert ranks[expected_active].min() >= 0.85 * len(D)


def test_blocks_give_the_same_optimum(blob_sets, blob_solutions):
    for seed in (0, 1):
        D = blob_sets[seed][3]
        split = optimal_covariance(D, GAMMA, blocks=3)
        whole = blob_solutions[seed]
        assert np.trace(split.covariance) == pytest.approx(np.trace(whole.covariance), rel=1e-4)
        assert constraint_check(D, split.covariance, GAMMA).violated == 0
        # the split solution is block diagonal
        off = split.covariance.copy()
        for k in range(3):
            off[3 * k:3 * k + 3, 3 * k:3 * k + 3] = 0
        assert not np.any(off)


def test_optimal_trace_scales_as_one_over_gamma():
    X, labels, C = blobs(60, 4)
    D = leave_one_out_deltas(X, labels, C)
    t1 = np.trace(optimal_covariance(D, GAMMA).covariance)
    t2 = np.trace(optimal_covariance(D, 2 * GAMMA).covariance)
    assert t1 == pytest.approx(2 * t2, rel=1e-6)
    t3 = np.trace(optimal_covariance(3.0 * D, GAMMA).covariance)  # and as ||Delta||^2
    assert t3 == pytest.approx(9 * t1, rel=1e-6)


def test_post_check_rescales_an_infeasible_solver_answer(monkeypatch):
    """If the SDP solver returns a precision 1.5x too large (every s^2 1.5x too big), the
    post-check over all rows must scale it back: rescaled = 1.5, the constraints hold."""
    X, labels, C = blobs(40, 9)
    D = leave_one_out_deltas(X, labels, C)
    honest = optimal_covariance(D, GAMMA)
    assert honest.rescaled == pytest.approx(1.0, abs=1e-6)
    solve = colored._solve_working_set
    monkeypatch.setattr(colored, "_solve_working_set",
                        lambda Dw, g: (1.5 * solve(Dw, g)[0], "patched"))
    sol = optimal_covariance(D, GAMMA, max_rounds=3)
    assert sol.rescaled == pytest.approx(1.5, rel=1e-5)
    assert sol.status == "patched"
    chk = constraint_check(D, sol.covariance, GAMMA)
    assert chk.violated == 0 and chk.worst == pytest.approx(1.0, rel=1e-6)
    assert np.trace(sol.covariance) == pytest.approx(np.trace(honest.covariance), rel=1e-5)


def test_rank_deficient_deltas_give_a_singular_covariance():
    X, labels, C = blobs(60, 7)
    X = X.copy()
    X[:, 1] = 2.5  # a constant feature: no Delta moves coordinate 1 of any centroid
    C = np.array([X[labels == k].mean(axis=0) for k in range(3)])
    D = leave_one_out_deltas(X, labels, C)
    assert not np.any(D[:, [1, 4, 7]])
    for blocks in (1, 3):
        sol = optimal_covariance(D, GAMMA, blocks=blocks)
        S = sol.covariance
        assert np.linalg.matrix_rank(S, tol=1e-9 * np.abs(S).max()) == 6
        assert np.allclose(S[[1, 4, 7]], 0, atol=1e-12)
        chk = constraint_check(D, S, GAMMA)
        assert chk.violated == 0 and np.isfinite(chk.worst) and chk.worst <= 1 + 1e-6
        # the same optimum as the SDP on the 6 moving coordinates
        keep = [0, 2, 3, 5, 6, 8]
        ref = optimal_covariance(D[:, keep], GAMMA)
        assert np.trace(S) == pytest.approx(np.trace(ref.covariance), rel=1e-4)
    # a Delta outside the range of that covariance is distinguished with certainty
    probe = np.zeros((1, 9))
    probe[0, 1] = 1e-3
    assert constraint_check(probe, S, GAMMA).worst == math.inf


def test_optimal_covariance_bad_input():
    gen = np.random.default_rng(8)
    D = np.zeros((6, 6))
    D[:3, :3] = gen.normal(size=(3, 3))
    D[3:, 3:] = gen.normal(size=(3, 3))
    optimal_covariance(D, 1.0, blocks=2)  # fine
    for blocks in (4, 0, -2, 1.0, 2.0):
        with pytest.raises(ValueError):
            optimal_covariance(D, 1.0, blocks=blocks)
    spanning = D.copy()
    spanning[0, 4] = 0.5  # row 0 now changes both blocks
    with pytest.raises(ValueError):
        optimal_covariance(spanning, 1.0, blocks=2)
    optimal_covariance(spanning, 1.0, blocks=1)  # fine with one block
    nan = D.copy()
    nan[2, 1] = np.nan
    for bad in (nan, np.where(D == 0, np.inf, D), np.zeros((0, 6)), np.zeros((6, 0)),
                D[0], np.zeros((6, 6))):
        with pytest.raises(ValueError):
            optimal_covariance(bad, 1.0)
    for g in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            optimal_covariance(D, g)


# --- 6. the CEDS closed form, as published ---------------------------------------------------
def test_ceds_covariance_violates_its_constraints(blob_sets, blob_solutions):
    for seed in (0, 1, 2, 3):
        D = blob_sets[seed][3]
        S = ceds_covariance(D, GAMMA)
        assert np.array_equal(S, S.T)
        assert np.allclose(S, ceds_reference(D, GAMMA), rtol=1e-8,
                           atol=1e-10 * np.abs(S).max())
        ratios = np.einsum("ij,ij->i", D, np.linalg.solve(S, D.T).T) / GAMMA
        assert np.mean(ratios > 1 + 1e-6) > 0.9
        assert ratios.max() > 100
        chk = constraint_check(D, S, GAMMA)
        assert chk.violated == np.count_nonzero(ratios > 1 + 1e-6)
        assert chk.worst == pytest.approx(ratios.max(), rel=1e-6)
        assert np.trace(S) < np.trace(blob_solutions[seed].covariance) / 20


def test_ceds_covariance_bad_input():
    with pytest.raises(ValueError):
        ceds_covariance(np.zeros((4, 3)), 1.0)
    with pytest.raises(ValueError):
        ceds_covariance(np.ones((4, 3)), 0.0)


# --- 7. the box optimum ----------------------------------------------------------------------
BOXES = [
    (np.array([0.0, -1.0]), np.array([1.0, 3.0])),  # half-widths 0.5, 2
    (np.array([0.0, 0.0, -2.0]), np.array([1.0, 4.0, 2.0])),  # 0.5, 2, 2
    (np.array([-1.0, 2.0, 0.0, 5.0]), np.array([2.0, 2.4, 0.5, 9.0])),  # 1.5, 0.2, 0.25, 2
]


@pytest.mark.parametrize("box", BOXES, ids=["d2", "d3", "d4"])
def test_box_covariance_is_the_sdp_optimum_over_the_box_vertices(box):
    gamma = gamma_pdp(1.0, 1e-5)
    D = box_deltas(box, centred=True)
    S = box_covariance(box, gamma)
    S_ref = scs_sigma_sdp(D, gamma)
    assert np.trace(S) == pytest.approx(np.trace(S_ref), rel=1e-4)
    assert np.allclose(S, S_ref, atol=1e-4 * np.abs(S_ref).max())
    # every vertex constraint is tight
    chk = constraint_check(D, S, gamma)
    assert np.allclose(chk.ratios, 1.0, rtol=0, atol=1e-9)
    # colored (sum r + 1)^2 / gamma <= white (d + 1)(sum r^2 + 1) / gamma
    r = (box[1] - box[0]) / 2
    assert np.trace(S) == pytest.approx((r.sum() + 1) ** 2 / gamma, rel=1e-12)
    W = white_covariance(D, gamma)
    assert np.trace(W) == pytest.approx((r.size + 1) * (np.sum(r**2) + 1) / gamma, rel=1e-12)
    assert np.trace(S) < np.trace(W)


@pytest.mark.parametrize("d", [1, 3, 5])
def test_box_covariance_equals_white_on_unit_half_widths(d):
    box = (np.full(d, -3.0), np.full(d, -1.0))  # every half-width 1
    D = box_deltas(box)
    S, W = box_covariance(box, 0.7), white_covariance(D, 0.7)
    assert np.trace(S) == pytest.approx(np.trace(W), rel=1e-12)
    assert np.allclose(S, W)
    assert np.allclose(constraint_check(D, S, 0.7).ratios, 1.0, atol=1e-9)


@pytest.mark.parametrize("box", BOXES, ids=["d2", "d3", "d4"])
def test_box_deltas(box):
    lower, upper = box
    d = lower.size
    mid, r = (lower + upper) / 2, (upper - lower) / 2
    Dc = box_deltas(box, centred=True)
    Dn = box_deltas(box, centred=False)
    for D in (Dc, Dn):
        assert D.shape == (2**d, d + 1)
        assert np.all(D[:, -1] == 1.0)
        assert len({tuple(row) for row in D}) == 2**d  # all distinct
    assert np.allclose(np.abs(Dc[:, :d]), r)
    assert np.all((np.isclose(Dn[:, :d], lower)) | (np.isclose(Dn[:, :d], upper)))
    assert np.allclose(Dn[:, :d] - mid, Dc[:, :d])
    # centred rows are symmetric: x is a row iff -x is
    pos = {tuple(np.round(row, 12)) for row in Dc[:, :d]}
    neg = {tuple(np.round(-row, 12) + 0.0) for row in Dc[:, :d]}
    assert pos == neg


def test_box_bad_input():
    big = (np.zeros(MAX_BOX_VERTICES_DIM + 1), np.ones(MAX_BOX_VERTICES_DIM + 1))
    with pytest.raises(ValueError):
        box_deltas(big)
    assert box_covariance(big, 1.0).shape == (MAX_BOX_VERTICES_DIM + 2,) * 2  # needs no vertices
    with pytest.raises(ValueError):
        box_deltas((np.array([0.0, 1.0]), np.array([1.0, 1.0])))  # zero width
    with pytest.raises(ValueError):
        box_covariance((np.array([0.0, 1.0]), np.array([1.0, 1.0])), 1.0)
    with pytest.raises(ValueError):
        box_covariance(BOXES[0], 0.0)


# --- 8. the constraint check -----------------------------------------------------------------
def test_constraint_check_ratios_against_solve():
    gen = np.random.default_rng(21)
    S = random_spd(5, 22, cond=100.0)
    D = gen.normal(size=(40, 5))
    gamma = 0.37
    chk = constraint_check(D, S, gamma, tolerance=1e-3)
    ref = np.array([row @ np.linalg.solve(S, row) for row in D]) / gamma
    assert np.allclose(chk.ratios, ref, rtol=1e-9)
    assert chk.violated == np.count_nonzero(ref > 1 + 1e-3)
    assert chk.fraction == pytest.approx(np.mean(ref > 1 + 1e-3))
    assert chk.worst == pytest.approx(ref.max(), rel=1e-9)
    assert chk.gamma == gamma
    for eps in (0.5, 2.0):
        assert chk.worst_tail(eps) == pytest.approx(tail(eps, ref.max() * gamma), rel=1e-8)
        assert chk.worst_tail(eps) == pytest.approx(pdp_tail(eps, chk.worst * gamma), rel=1e-12)
    row = chk.as_row()
    assert row["constraints"] == 40 and row["violated"] == chk.violated
    assert row["median s2/gamma"] == pytest.approx(np.median(ref), rel=1e-9)


def test_constraint_check_singular_covariance():
    Q, _ = np.linalg.qr(np.random.default_rng(23).normal(size=(3, 3)))
    S = (Q * np.array([1.0, 4.0, 0.0])) @ Q.T  # null direction Q[:, 2]
    inside = np.array([Q[:, 0] * 0.5 + Q[:, 1] * 2.0])
    outside = inside + 1e-3 * Q[:, 2]
    chk = constraint_check(np.vstack([inside, outside]), S, 2.0)
    assert chk.ratios[0] == pytest.approx((0.25 / 1.0 + 4.0 / 4.0) / 2.0, rel=1e-9)
    assert chk.ratios[1] == math.inf
    assert chk.worst == math.inf and chk.violated == 1
    assert np.isfinite(constraint_check(inside, S, 2.0).worst)


def test_worst_tail_of_an_infinite_ratio_is_one():
    """A Delta outside the range of a singular Sigma: s^2 = inf, the pair is distinguished with
    certainty (constraint_check's docstring), so the delta it reaches is P[|L| > eps] = 1."""
    S = np.diag([1.0, 0.0])
    chk = constraint_check(np.array([[0.0, 1.0]]), S, 1.0)
    assert chk.worst == math.inf
    assert chk.worst_tail(1.0) == 1.0


def test_constraint_check_bad_input():
    D = np.ones((3, 2))
    with pytest.raises(ValueError):
        constraint_check(D, np.diag([1.0, -1.0]), 1.0)  # not PSD
    with pytest.raises(ValueError):
        constraint_check(D, np.eye(3), 1.0)  # wrong shape
    with pytest.raises(ValueError):
        constraint_check(D, np.eye(2)[0], 1.0)
    with pytest.raises(ValueError):
        constraint_check(D, np.eye(2), 0.0)
    with pytest.raises(ValueError):
        constraint_check(np.full((3, 2), np.nan), np.eye(2), 1.0)


# --- 9. drawing ------------------------------------------------------------------------------
@pytest.mark.statistical
def test_draw_colored_sample_covariance():
    S = random_spd(4, 31, cond=50.0)
    n = 100_000
    W = draw_colored(S, np.random.default_rng(32), size=n)
    assert W.shape == (n, 4)
    se_mean = np.sqrt(np.diag(S) / n)
    assert np.all(np.abs(W.mean(axis=0)) < 5 * se_mean)
    emp = np.cov(W, rowvar=False)
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n)  # sd of a sample covariance
    assert np.all(np.abs(emp - S) < 5 * se)


def test_draw_colored_seeding_and_singular():
    S = random_spd(3, 33)
    a = draw_colored(S, np.random.default_rng(34), size=5)
    b = draw_colored(S, np.random.default_rng(34), size=5)
    c = draw_colored(S, np.random.default_rng(35), size=5)
    assert np.array_equal(a, b) and not np.allclose(a, c)
    assert draw_colored(S, np.random.default_rng(34)).shape == (3,)
    Q, _ = np.linalg.qr(np.random.default_rng(36).normal(size=(3, 3)))
    sing = (Q * np.array([2.0, 1.0, 0.0])) @ Q.T
    W = draw_colored(sing, np.random.default_rng(37), size=20_000)
    # nothing along the null direction (up to the square root of a rounding eigenvalue)
    assert np.abs(W @ Q[:, 2]).max() < 1e-6
    assert np.var(W @ Q[:, 0]) == pytest.approx(2.0, rel=0.05)


def test_module_exports():
    for name in colored.__all__:
        assert hasattr(colored, name)
