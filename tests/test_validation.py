"""Bad input raises a ValueError/TypeError that names the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans.privacy import identifiability as di
from dpkmeans.privacy import loss as pl
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

BAD_EPSILONS = [0.0, -1.0, math.nan, math.inf, -math.inf]
BAD_DELTAS = [0.0, 1.0, -0.1, 1.5, math.nan]


@pytest.mark.parametrize("eps", BAD_EPSILONS)
def test_bad_epsilon_is_named(eps, rng):
    with pytest.raises(ValueError, match="epsilon"):
        mech.laplace_mechanism(0.0, 1.0, eps, rng, ledger=None)
    with pytest.raises(ValueError, match="epsilon"):
        mech.gaussian_sigma_analytic(1.0, eps, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        mech.exponential_mechanism([0.0, 1.0], 1.0, eps, rng, ledger=None)
    with pytest.raises(ValueError, match="epsilon"):
        di.rho_from_epsilon(eps, 10)
    with pytest.raises(ValueError, match="epsilon"):
        PrivacyLedger().charge("Laplace", epsilon=eps, sensitivity=1.0, scale=1.0)


@pytest.mark.parametrize("delta", BAD_DELTAS)
def test_bad_delta_is_named(delta, rng):
    with pytest.raises(ValueError, match="delta"):
        mech.gaussian_sigma_analytic(1.0, 1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        mech.gaussian_sigma_classic(1.0, 0.5, delta)
    with pytest.raises(ValueError, match="delta"):
        mech.gaussian_mechanism(0.0, 1.0, 0.5, delta, rng, ledger=None)
    with pytest.raises(ValueError, match="delta"):
        pl.gaussian_pdp_sigma(1.0, 1.0, delta)


@pytest.mark.parametrize("sens", [-1.0, -1e-9, math.nan, math.inf])
def test_bad_sensitivity_is_named(sens, rng):
    with pytest.raises(ValueError, match="sensitivity"):
        mech.laplace_mechanism(0.0, sens, 1.0, rng, ledger=None)
    with pytest.raises(ValueError, match="sensitivity"):
        mech.gaussian_sigma_analytic(sens, 1.0, 1e-5)
    with pytest.raises(ValueError, match="sensitivity"):
        mech.exponential_probabilities([1.0, 2.0], sens, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        di.di_laplace_scale(sens, 0.5, 10)


@pytest.mark.parametrize("rho, m", [(0.1, 10), (0.05, 10), (1.0, 10), (1.2, 10), (0.0, 10),
                                    (math.nan, 10)])
def test_bad_rho_is_named(rho, m):
    with pytest.raises(ValueError, match="rho"):
        di.epsilon_from_rho(rho, m)
    with pytest.raises(ValueError, match="rho"):
        di.di_laplace_scale(1.0, rho, m)


@pytest.mark.parametrize("m", [1, 0, -3])
def test_bad_m_is_named(m):
    with pytest.raises(ValueError, match="m must be >= 2"):
        di.epsilon_from_rho(0.9, m)
    with pytest.raises(ValueError, match="m must be >= 2"):
        di.rho_from_epsilon(1.0, m)


@pytest.mark.parametrize("m", [2.5, "10", None, True])
def test_non_integer_m_is_a_type_error(m):
    with pytest.raises(TypeError, match="m must be an integer"):
        di.epsilon_from_rho(0.9, m)


@pytest.mark.parametrize("utility", [[], [1.0, math.nan], [math.inf, 0.0], [[1.0, 2.0]]])
def test_bad_utility_is_named(utility, rng):
    with pytest.raises(ValueError, match="utility"):
        mech.exponential_mechanism(utility, 1.0, 1.0, rng, ledger=None)


def test_zero_sensitivity_exponential_is_rejected():
    with pytest.raises(ValueError, match="sensitivity"):
        mech.exponential_probabilities([0.0, 1.0], 0.0, 1.0)


@pytest.mark.parametrize("bad_rng", [None, 0, np.random.RandomState(0), "seed"])
def test_rng_must_be_a_generator(bad_rng):
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        mech.laplace_mechanism(0.0, 1.0, 1.0, bad_rng, ledger=None)


@pytest.mark.parametrize("eps", ["1.0", None, True, [1.0]])
def test_non_numeric_epsilon_is_a_type_error(eps, rng):
    with pytest.raises(TypeError, match="epsilon"):
        mech.laplace_mechanism(0.0, 1.0, eps, rng, ledger=None)


def test_non_finite_value_is_rejected(rng):
    with pytest.raises(ValueError, match="value"):
        mech.laplace_mechanism([0.0, math.nan], 1.0, 1.0, rng, ledger=None)


def test_classic_gaussian_refuses_large_epsilon():
    with pytest.raises(ValueError, match="epsilon must be < 1"):
        mech.gaussian_sigma_classic(1.0, 1.0, 1e-5)


def test_unknown_calibration_and_neighbour(rng):
    with pytest.raises(ValueError, match="calibration"):
        mech.gaussian_mechanism(0.0, 1.0, 0.5, 1e-5, rng, ledger=None, calibration="fast")
    with pytest.raises(ValueError, match="neighbour"):
        PrivacyLedger(neighbour="swap")
    with pytest.raises(ValueError, match="neighbour"):
        lloyd_query_sensitivity(([0.0], [1.0]), neighbour="swap")


@pytest.mark.parametrize("bounds", [([1.0], [0.0]), ([0.0, math.nan], [1.0, 1.0]), (0.0,)])
def test_bad_bounds(bounds):
    with pytest.raises((ValueError, TypeError), match="bounds"):
        lloyd_query_sensitivity(bounds)


@pytest.mark.parametrize("repeats", [0, -2])
def test_bad_repeats(repeats, rng):
    with pytest.raises(ValueError, match="repeats"):
        mech.laplace_mechanism(0.0, 1.0, 1.0, rng, ledger=None, repeats=repeats)
