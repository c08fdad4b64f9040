"""Unit and property tests of the mechanisms (book chapters 1 and 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.accounting import PrivacyLedger

eps_st = st.floats(min_value=1e-3, max_value=20.0, allow_nan=False)
small_eps_st = st.floats(min_value=1e-3, max_value=0.999, allow_nan=False)
delta_st = st.floats(min_value=1e-12, max_value=0.5, allow_nan=False)
sens_st = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


def test_laplace_shape_and_determinism():
    a = mech.laplace_mechanism(np.zeros((3, 2)), 1.0, 1.0, np.random.default_rng(1), ledger=None)
    b = mech.laplace_mechanism(np.zeros((3, 2)), 1.0, 1.0, np.random.default_rng(1), ledger=None)
    assert a.shape == (3, 2)
    np.testing.assert_array_equal(a, b)
    r = mech.laplace_mechanism([1.0, 2.0], 1.0, 1.0, np.random.default_rng(1), ledger=None,
                               repeats=5)
    assert r.shape == (5, 2)


def test_zero_sensitivity_adds_no_noise(rng):
    out = mech.laplace_mechanism([1.0, 2.0], 0.0, 1.0, rng, ledger=None)
    np.testing.assert_array_equal(out, [1.0, 2.0])
    out = mech.gaussian_mechanism([1.0, 2.0], 0.0, 1.0, 1e-5, rng, ledger=None, repeats=2)
    np.testing.assert_array_equal(out, [[1.0, 2.0], [1.0, 2.0]])


def test_mechanisms_record_in_ledger(rng):
    ledger = PrivacyLedger(budget=(3.0, 1e-5))
    mech.laplace_mechanism(np.zeros(4), 2.0, 0.5, rng, ledger=ledger, label="sums")
    mech.gaussian_mechanism(np.zeros(4), 1.0, 0.5, 1e-5, rng, ledger=ledger)
    mech.exponential_mechanism([1.0, 2.0, 3.0], 1.0, 1.0, rng, ledger=ledger)
    mech.laplace_mechanism(0.0, 1.0, 0.25, rng, ledger=ledger, repeats=4)
    kinds = [e.mechanism for e in ledger.entries]
    assert kinds == ["Laplace (discrete)", "Gaussian (discrete, zCDP)", "exponential",
                     "Laplace (discrete)"]
    assert ledger.entries[0].scale == pytest.approx(4.0)
    assert ledger.entries[0].label == "sums"
    assert ledger.entries[3].epsilon == pytest.approx(1.0)
    assert ledger.entries[3].details["repeats"] == 4
    assert ledger.total().epsilon == pytest.approx(3.0)
    assert ledger.total().delta == pytest.approx(1e-5)
    assert ledger.is_fully_spent()


def test_over_budget_draw_is_refused_before_drawing():
    ledger = PrivacyLedger(budget=1.0)
    gen = np.random.default_rng(5)
    mech.laplace_mechanism(0.0, 1.0, 0.75, gen, ledger=ledger)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="exceeds the declared budget"):
        mech.laplace_mechanism(0.0, 1.0, 0.5, gen, ledger=ledger)
    assert gen.bit_generator.state == state, "no noise may be drawn for a refused release"
    assert len(ledger.entries) == 1


def test_known_analytic_gaussian_value():
    # Balle & Wang (2018), eps = 1, delta = 1e-5, Delta = 1: sigma ~ 3.73 (classic: undefined).
    assert mech.gaussian_sigma_analytic(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)


@settings(max_examples=200, deadline=None)
@given(sens=sens_st, eps=eps_st, delta=delta_st)
def test_analytic_sigma_hits_delta_exactly(sens, eps, delta):
    sigma = mech.gaussian_sigma_analytic(sens, eps, delta)
    assert mech.gaussian_delta(eps, sigma, sens) == pytest.approx(delta, rel=1e-6)
    # any less noise breaks (epsilon, delta)-DP
    assert mech.gaussian_delta(eps, sigma * (1 - 1e-4), sens) > delta


@settings(max_examples=200, deadline=None)
@given(sens=sens_st, eps=small_eps_st, delta=delta_st)
def test_classic_is_private_but_never_tighter_than_analytic(sens, eps, delta):
    classic = mech.gaussian_sigma_classic(sens, eps, delta)
    analytic = mech.gaussian_sigma_analytic(sens, eps, delta)
    assert analytic <= classic * (1 + 1e-9)
    assert mech.gaussian_delta(eps, classic, sens) <= delta * (1 + 1e-9)


@settings(max_examples=100, deadline=None)
@given(eps=eps_st, delta=delta_st)
def test_analytic_sigma_is_monotone(eps, delta):
    base = mech.gaussian_sigma_analytic(1.0, eps, delta)
    assert mech.gaussian_sigma_analytic(1.0, eps * 1.1, delta) <= base
    assert mech.gaussian_sigma_analytic(1.0, eps, delta / 2) >= base
    assert mech.gaussian_sigma_analytic(2.0, eps, delta) == pytest.approx(2 * base, rel=1e-9)


def test_classic_formula_fails_for_large_epsilon():
    """Where the classic formula is extrapolated past epsilon = 1 it can break (eps, delta)-DP."""
    eps, delta = 10.0, 1e-5
    extrapolated = math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert mech.gaussian_delta(eps, extrapolated) > 2 * delta


@settings(max_examples=200, deadline=None)
@given(
    u=st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=12),
    shift=st.lists(st.floats(-1, 1, allow_nan=False), min_size=12, max_size=12),
    eps=st.floats(0.01, 10),
)
def test_exponential_mechanism_ratio_is_bounded(u, shift, eps):
    """Neighbouring utilities (|u - u'| <= Delta = 1) change each probability by <= e^eps."""
    u = np.array(u)
    u2 = u + np.array(shift[: u.size])
    p = mech.exponential_probabilities(u, 1.0, eps)
    q = mech.exponential_probabilities(u2, 1.0, eps)
    assert np.all(np.abs(np.log(p / q)) <= eps * (1 + 1e-9) + 1e-12)


def test_exponential_probabilities_formula():
    p = mech.exponential_probabilities([0.0, 1.0, 2.0], 1.0, 2.0)
    w = np.exp(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(p, w / w.sum())
    assert isinstance(mech.exponential_mechanism([0.0, 1.0], 1.0, 1.0, np.random.default_rng(0),
                                                 ledger=None), int)
