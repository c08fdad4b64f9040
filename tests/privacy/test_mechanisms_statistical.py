"""Monte-Carlo tests of the noise distributions, each with fixed seeds.

Every check is also run against a deliberately mis-scaled sampler, and must reject it:
that is what shows the suite would catch a wrong scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpkmeans.privacy import loss as pl
from dpkmeans.privacy import mechanisms as mech
from tests.statistics_helpers import ALPHA, chi2_pvalue, ks_pvalue

pytestmark = pytest.mark.statistical

N = 200_000


def laplace_draws(sens: float, eps: float, seed: int, misscale: float = 1.0) -> np.ndarray:
    draws = mech.laplace_mechanism(np.zeros(N), sens, eps, np.random.default_rng(seed), ledger=None)
    return draws * misscale


#: The Laplace draws' seed. It was 11 with numpy's float sampler; with the exact sampler seed 11
#: happens to give 50.45% positive signs in 200,000 draws (a 4-sigma sample, KS p = 4e-4 at
#: every scale, since the signs do not depend on the scale), while the sign z-scores of seeds
#: 0..199 follow N(0, 1) (KS p = 0.73; tests/privacy/test_discrete.py checks the symmetry). The test
#: now uses the project's base seed, for both the check and its mis-scaled twin.
LAPLACE_SEED = 20261122


@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (3.0, 0.1), (0.5, 5.0)])
def test_laplace_noise_has_the_calibrated_scale(sens, eps):
    assert ks_pvalue(laplace_draws(sens, eps, LAPLACE_SEED),
                     stats.laplace(scale=sens / eps)) > ALPHA


@pytest.mark.parametrize("misscale", [0.95, 1.05, 0.5])
def test_laplace_check_rejects_a_wrong_scale(misscale):
    draws = laplace_draws(1.0, 1.0, LAPLACE_SEED, misscale)
    assert ks_pvalue(draws, stats.laplace(scale=1.0)) < ALPHA


@pytest.mark.parametrize("sens, eps, delta", [(1.0, 1.0, 1e-5), (2.0, 0.3, 1e-6), (1.0, 8.0, 1e-3)])
def test_gaussian_noise_has_the_calibrated_scale(sens, eps, delta):
    sigma = mech.gaussian_sigma_analytic(sens, eps, delta)
    draws = mech.gaussian_mechanism(np.zeros(N), sens, eps, delta, np.random.default_rng(12),
                                    ledger=None, sampler="continuous")
    assert ks_pvalue(draws, stats.norm(scale=sigma)) > ALPHA


def test_gaussian_check_rejects_a_wrong_scale():
    sigma = mech.gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    draws = mech.gaussian_mechanism(np.zeros(N), 1.0, 1.0, 1e-5, np.random.default_rng(12),
                                    ledger=None, sampler="continuous") * 0.95
    assert ks_pvalue(draws, stats.norm(scale=sigma)) < ALPHA


def test_exponential_mechanism_frequencies():
    u = np.array([0.0, 1.0, 2.5, 3.0, -1.0])
    p = mech.exponential_probabilities(u, 1.0, 1.5)
    picks = mech.exponential_mechanism(u, 1.0, 1.5, np.random.default_rng(13), ledger=None,
                                       repeats=N)
    assert chi2_pvalue(picks, p) > ALPHA
    # The same check rejects the classic mistake of dropping the factor 2 in eps * u / (2 Delta).
    assert chi2_pvalue(picks, mech.exponential_probabilities(u, 0.5, 1.5)) < ALPHA


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_laplace_observed_privacy_loss_stays_below_epsilon(eps):
    """Neighbouring counts 0 and 1 (sensitivity 1): no bin may show a log ratio above eps."""
    rng = np.random.default_rng(14)
    out0 = mech.laplace_mechanism(np.zeros(N), 1.0, eps, rng, ledger=None)
    out1 = mech.laplace_mechanism(np.ones(N), 1.0, eps, rng, ledger=None)
    edges = np.linspace(-3 / eps, 1 + 3 / eps, 25)
    assert pl.estimate_log_ratios(out0, out1, edges).epsilon_lower_bound() <= eps


def test_privacy_loss_check_catches_under_noising():
    """A Laplace release with 30% too little noise shows a log ratio above the claimed eps."""
    eps = 1.0
    rng = np.random.default_rng(14)
    out0 = 0.7 * mech.laplace_mechanism(np.zeros(N), 1.0, eps, rng, ledger=None)
    out1 = 1 + 0.7 * mech.laplace_mechanism(np.zeros(N), 1.0, eps, rng, ledger=None)
    edges = np.linspace(-3, 4, 25)
    assert pl.estimate_log_ratios(out0, out1, edges).epsilon_lower_bound() > eps


def test_gaussian_privacy_loss_distribution():
    """Lemma 2.1: the privacy loss of a Gaussian release is N(s^2/2, s^2), s = Delta / sigma."""
    eps, delta = 1.0, 1e-2
    sigma = mech.gaussian_sigma_analytic(1.0, eps, delta)
    s = 1.0 / sigma
    y = mech.gaussian_mechanism(np.zeros(N), 1.0, eps, delta, np.random.default_rng(15), ledger=None,
                                sampler="continuous")
    loss = pl.gaussian_privacy_loss(y, 0.0, 1.0, sigma)
    assert ks_pvalue(loss, stats.norm(loc=s**2 / 2, scale=s)) > ALPHA


N_DELTA = 4_000_000


def empirical_delta_excess(noise_factor: float, eps: float = 1.0, delta: float = 1e-2) -> float:
    """How many standard errors the measured delta exceeds the target, on the worst set.

    Releases f(D) = 0 and f(D') = 1 (Delta_2 = 1) with the analytic Gaussian mechanism, with
    its noise multiplied by ``noise_factor`` (1 = as calibrated), and measures
    P[M(D) in S] - e^eps P[M(D') in S] on S = {y : L(y) > eps} = {y < 1/2 - eps sigma^2}, the
    set where Theorem 2.1's delta is attained for the claimed sigma.
    """
    sigma = mech.gaussian_sigma_analytic(1.0, eps, delta)
    gen = np.random.default_rng(16)
    y_D = noise_factor * mech.gaussian_mechanism(np.zeros(N_DELTA), 1.0, eps, delta, gen,
                                                 ledger=None, sampler="continuous")
    y_Dp = 1.0 + noise_factor * mech.gaussian_mechanism(np.zeros(N_DELTA), 1.0, eps, delta, gen,
                                                        ledger=None, sampler="continuous")
    threshold = 0.5 - eps * sigma**2
    p_D, p_Dp = np.mean(y_D < threshold), np.mean(y_Dp < threshold)
    measured = p_D - math.exp(eps) * p_Dp
    std_err = math.sqrt((p_D * (1 - p_D) + math.exp(2 * eps) * p_Dp * (1 - p_Dp)) / N_DELTA)
    return (measured - delta) / std_err


def test_gaussian_mechanism_attains_but_does_not_exceed_its_delta():
    assert abs(empirical_delta_excess(1.0)) < 4.0


def test_gaussian_delta_check_catches_five_percent_too_little_noise():
    assert empirical_delta_excess(0.95) > 4.0
