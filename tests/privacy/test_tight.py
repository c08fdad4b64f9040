"""Tight composition (book chapter 3, "Tight composition"): the closed forms of
:mod:`dpkmeans.privacy.tight` against Google's ``dp-accounting``, the maintained accountant."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.privacy.gaussian import gaussian_delta, zcdp_delta
from dpkmeans.privacy.tight import (
    ACCOUNTINGS,
    Release,
    basic_cost,
    epsilon_at,
    epsilon_by,
    gdp_epsilon,
    gdp_mu,
    gdp_mu_of,
    pld_epsilon,
    zcdp_epsilon,
    zcdp_rho_of,
)

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

RTOL = 1e-3  # the agreement asked of our accountings with dp-accounting's PLD


def reference_gaussians(mus: list[float], delta: float) -> float:
    """dp-accounting's epsilon at ``delta`` of Gaussian noise with sigma = 1 / mu_i, composed
    (its default discretisation, pessimistic: an upper bound)."""
    composed = None
    for mu in mus:
        one = pld.from_gaussian_mechanism(1.0 / mu, sensitivity=1.0)
        composed = one if composed is None else composed.compose(one)
    return float(composed.get_epsilon_for_delta(delta))


def reference_laplaces(epsilons: list[float], delta: float) -> float:
    """dp-accounting's epsilon at ``delta`` of Laplace noise with b = 1 / epsilon_i, composed."""
    composed = None
    for eps in epsilons:
        one = pld.from_laplace_mechanism(1.0 / eps, sensitivity=1.0)
        composed = one if composed is None else composed.compose(one)
    return float(composed.get_epsilon_for_delta(delta))


# --- Gaussian DP ----------------------------------------------------------------------------
@pytest.mark.parametrize("mus", [[0.05], [0.5], [1.0], [2.0], [0.1] * 10, [1.0, 0.3, 0.2],
                                 [0.2367 / math.sqrt(7)] * 7])
@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-9])
def test_gdp_epsilon_is_dp_accountings_pld(mus, delta):
    """Gaussians compose into one Gaussian with mu^2 = sum mu_i^2 (Dong, Roth and Su 2022),
    whose exact epsilon is what dp-accounting's PLD of the composition gives."""
    mine = gdp_epsilon(math.sqrt(sum(m * m for m in mus)), delta)
    ref = reference_gaussians(mus, delta)
    assert mine == pytest.approx(ref, rel=RTOL)
    assert mine <= ref * (1 + 1e-9)  # the PLD's pessimistic estimate is an upper bound
    releases = [Release("gaussian", mu=m) for m in mus]
    assert epsilon_by("gdp", releases, delta) == mine


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-9])
def test_gdp_mu_round_trip(epsilon, delta):
    mu = gdp_mu(epsilon, delta)
    # rounded down: the exact delta of Gaussian noise with sigma = 1 / mu at the target
    # epsilon meets the target delta (to 1e-6 of it: the bisection ends at float precision)
    assert gaussian_delta(epsilon, 1.0 / mu) <= delta
    assert gaussian_delta(epsilon, 1.0 / mu) == pytest.approx(delta, rel=1e-6)
    back = gdp_epsilon(mu, delta)
    # the inverse bisection lands on the target to float precision (gaussian_delta is not
    # monotone below 1e-13 relative, so back may exceed epsilon by that much)
    assert back == pytest.approx(epsilon, rel=1e-12)
    assert gdp_mu(back, delta) == pytest.approx(mu, rel=1e-9)


def test_gdp_epsilon_edges():
    assert gdp_epsilon(0.0, 1e-6) == 0.0
    assert gdp_epsilon(1e-9, 1e-6) == 0.0  # delta covers the total variation already
    with pytest.raises(ValueError):
        gdp_epsilon(-1.0, 1e-6)
    with pytest.raises(ValueError):
        gdp_epsilon(math.inf, 1e-6)
    with pytest.raises(ValueError):
        gdp_epsilon(1.0, 0.0)


def test_gdp_mu_of_needs_every_release_gaussian():
    assert gdp_mu_of([Release("gaussian", mu=0.3, times=4)]) == pytest.approx(0.6)
    assert gdp_mu_of([Release("gaussian", mu=0.3), Release("laplace", epsilon=0.1)]) is None
    assert epsilon_by("gdp", [Release("laplace", epsilon=0.1)], 1e-6) is None


# --- zCDP -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mus", [[0.05], [0.5], [2.0], [0.1] * 10, [1.0, 0.3, 0.2]])
@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-9])
def test_zcdp_is_looser_than_gdp_for_gaussians(mus, delta):
    releases = [Release("gaussian", mu=m) for m in mus]
    rho = zcdp_rho_of(releases)
    assert rho == pytest.approx(sum(m * m for m in mus) / 2)
    eps_z = zcdp_epsilon(rho, delta)
    eps_g = gdp_epsilon(gdp_mu_of(releases), delta)
    assert eps_z >= eps_g
    assert epsilon_by("zcdp", releases, delta) == eps_z
    # consistent with the conversion the discrete Gaussian is calibrated by (CKS 2020, Cor. 13):
    # delta(eps_z) meets the target, and a smaller epsilon does not
    assert zcdp_delta(rho, eps_z) <= delta
    assert zcdp_delta(rho, eps_z * (1 - 1e-6)) > delta


def test_zcdp_of_pure_releases_and_approx():
    releases = [Release("laplace", epsilon=0.5), Release("pure", epsilon=0.2, times=3)]
    assert zcdp_rho_of(releases) == pytest.approx(0.5**2 / 2 + 3 * 0.2**2 / 2)
    assert zcdp_rho_of([Release("approx", epsilon=0.5, delta=1e-7)]) is None
    assert zcdp_epsilon(0.0, 1e-6) == 0.0


# --- basic composition ----------------------------------------------------------------------
def test_basic_composition_adds():
    releases = [Release("laplace", epsilon=0.25, times=2), Release("pure", epsilon=0.1),
                Release("approx", epsilon=0.3, delta=1e-7, times=3),
                Release("gaussian", epsilon=0.2, delta=2e-7, mu=0.1)]
    eps, dlt = basic_cost(releases)
    assert eps == pytest.approx(0.5 + 0.1 + 0.9 + 0.2)
    assert dlt == pytest.approx(5e-7)
    assert epsilon_by("basic", releases, 5e-7) == pytest.approx(1.7)
    assert epsilon_by("basic", releases, 4e-7) is None  # below the sum of deltas
    assert basic_cost([Release("approx", epsilon=1.0, delta=0.6, times=2)])[1] == 1.0


def test_gaussian_recorded_with_delta_zero_has_no_basic_cost():
    """A Gaussian release recorded without the (epsilon, delta) it was calibrated to has no
    basic composition (inf), but Gaussian DP still composes it."""
    releases = [Release("gaussian", mu=0.5), Release("laplace", epsilon=0.1)]
    assert basic_cost(releases) == (math.inf, 1.0)
    assert epsilon_by("basic", releases, 1e-6) is None
    eps, how = epsilon_at([Release("gaussian", mu=0.5)], 1e-6)
    assert how == "gdp" and eps == gdp_epsilon(0.5, 1e-6)
    assert math.isfinite(epsilon_at(releases, 1e-6)[0])


# --- the smallest of the accountings --------------------------------------------------------
SEQUENCES = {
    "seven Laplace": [Release("laplace", epsilon=1 / 7)] * 7,
    "one Laplace": [Release("laplace", epsilon=1.0)],
    "Gaussians": [Release("gaussian", epsilon=0.5, delta=1e-7, mu=gdp_mu(0.5, 1e-7))] * 5,
    "mixed": [Release("laplace", epsilon=0.1, times=5), Release("gaussian", mu=0.1, times=3)],
    "with approx": [Release("approx", epsilon=0.2, delta=1e-8, times=4),
                    Release("laplace", epsilon=0.2)],
    "exponential": [Release("pure", epsilon=0.05, times=20)],
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
def test_epsilon_at_is_the_minimum_and_names_it(name, delta):
    releases = SEQUENCES[name]
    eps, how = epsilon_at(releases, delta)
    valid = {a: epsilon_by(a, releases, delta) for a in ACCOUNTINGS}
    valid = {a: e for a, e in valid.items() if e is not None}
    assert valid, "some accounting applies"
    if "gdp" in valid:  # exact for Gaussians: PLD is not computed
        assert how == "gdp" and eps == valid["gdp"]
        assert valid["gdp"] <= valid.get("pld", math.inf) * (1 + 1e-9)
    else:
        assert eps == min(valid.values())
        assert valid[how] == eps
    for accounting, e in valid.items():
        assert eps <= e * (1 + RTOL), accounting


def test_epsilon_at_pld_beats_basic_for_many_laplace():
    eps, how = epsilon_at(SEQUENCES["seven Laplace"], 1e-6)
    assert how == "pld" and eps < 1.0
    assert eps == pytest.approx(reference_laplaces([1 / 7] * 7, 1e-6), rel=RTOL)


def test_epsilon_at_pure_and_empty():
    assert epsilon_at([], 1e-6) == (0.0, "basic")
    assert epsilon_at([Release("laplace", epsilon=0.3, times=2)], 0.0) == (
        pytest.approx(0.6), "basic")
    assert epsilon_at([Release("gaussian", mu=0.3)], 0.0)[0] == math.inf
    with pytest.raises(ValueError, match="accounting"):
        epsilon_by("renyi", [Release("laplace", epsilon=0.1)], 1e-6)


# --- privacy-loss distributions -------------------------------------------------------------
@pytest.mark.parametrize("epsilons", [[0.01], [1.0], [0.2] * 5, [1 / 7] * 7,
                                      [0.5, 0.25, 0.125, 0.0625], [0.05] * 40])
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
def test_pld_of_laplace_composition_is_at_most_the_basic_sum(epsilons, delta):
    releases = [Release("laplace", epsilon=e) for e in epsilons]
    mine = pld_epsilon(releases, delta)
    assert mine <= sum(epsilons)
    assert mine == pytest.approx(reference_laplaces(epsilons, delta), rel=RTOL)


def test_pld_merges_runs_and_skips_zero_releases():
    split = [Release("laplace", epsilon=0.1)] * 6
    merged = [Release("laplace", epsilon=0.1, times=6)]
    assert pld_epsilon(split, 1e-6) == pytest.approx(pld_epsilon(merged, 1e-6), rel=1e-12)
    assert pld_epsilon([Release("laplace", epsilon=0.0)], 1e-6) == 0.0


# --- Release --------------------------------------------------------------------------------
def test_release_validation():
    with pytest.raises(ValueError, match="kind"):
        Release("poisson", epsilon=1.0)
    with pytest.raises(ValueError, match="times"):
        Release("laplace", epsilon=1.0, times=0)
    with pytest.raises(ValueError, match="times"):
        Release("gaussian", mu=1.0, times=-2)
    assert Release("pure", epsilon=0.5).pure_epsilon == 0.5
    assert Release("approx", epsilon=0.5, delta=1e-6).pure_epsilon == math.inf
    assert Release("approx", epsilon=0.5, delta=1e-6).basic == (0.5, 1e-6)


# --- properties -----------------------------------------------------------------------------
releases_st = st.one_of(
    st.builds(lambda e, t: Release("laplace", epsilon=e, times=t),
              st.floats(0.01, 1.0), st.integers(1, 3)),
    st.builds(lambda m, t: Release("gaussian", epsilon=1.0, delta=1e-8, mu=m, times=t),
              st.floats(0.01, 1.0), st.integers(1, 3)),
    st.builds(lambda e: Release("pure", epsilon=e), st.floats(0.01, 1.0)),
)


@settings(max_examples=15, deadline=None)
@given(st.lists(releases_st, min_size=1, max_size=3), releases_st,
       st.sampled_from([1e-7, 1e-6, 1e-4]))
def test_epsilon_at_grows_with_a_release(releases, extra, delta):
    before = epsilon_at(releases, delta)[0]
    after = epsilon_at([*releases, extra], delta)[0]
    # each accounting is monotone; the PLD's discretisation (1e-4 of the scale) may move it
    assert after >= before * (1 - 1e-4)


@settings(max_examples=15, deadline=None)
@given(st.lists(releases_st, min_size=1, max_size=3),
       st.floats(1e-9, 1e-3), st.floats(1.01, 100.0))
def test_epsilon_at_decreases_in_delta(releases, delta, factor):
    assert epsilon_at(releases, delta * factor)[0] <= epsilon_at(releases, delta)[0]


def test_without_dp_accounting_laplace_composes_by_zcdp_and_gaussians_exactly(monkeypatch):
    """The core install (no accounting extra): Gaussian DP stays exact, Laplace releases fall
    back to zCDP or basic composition, whichever is smaller; PLD is then unavailable."""
    from dpkmeans.privacy import tight

    laplace = [tight.Release("laplace", epsilon=0.01)] * 200
    gauss = [tight.Release("gaussian", mu=0.05)] * 20
    with_pld = tight.epsilon_at(laplace, 1e-6)
    monkeypatch.setattr(tight, "accounting_available", lambda: False)
    assert tight.epsilon_by("pld", laplace, 1e-6) is None
    eps, how = tight.epsilon_at(laplace, 1e-6)
    assert how in ("zcdp", "basic") and eps >= with_pld[0]
    assert eps == min(tight.epsilon_by("zcdp", laplace, 1e-6), 2.0)
    eps, how = tight.epsilon_at(gauss, 1e-6)
    assert how == "gdp" and eps == pytest.approx(tight.gdp_epsilon(0.05 * 20**0.5, 1e-6),
                                                 rel=1e-12)
    with pytest.raises(ImportError, match="accounting"):
        tight.pld_epsilon(laplace, 1e-6)
