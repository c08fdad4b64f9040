"""Differential identifiability: the rho <-> epsilon map and DI composition (Lee and Clifton 2012;
Shang et al. 2021; book chapter 11)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpkmeans.privacy import identifiability as di
from dpkmeans.privacy.accounting import PrivacyLedger

m_st = st.integers(min_value=2, max_value=10**6)


def test_published_examples():
    # Lee and Clifton's (2012) Theorem 1: m = 10001, rho = 0.05 -> 6.266; m = 2, rho = 0.7 -> 0.847
    assert di.epsilon_from_rho(0.05, 10001) == pytest.approx(6.266, abs=1e-3)
    assert di.epsilon_from_rho(0.7, 2) == pytest.approx(0.847, abs=1e-3)
    # Shang et al.'s (2021) sequential bound can exceed 1 (vacuous): m = 2, rho = 3/4 twice
    assert di.compose_rho_published([0.75, 0.75], 2) == pytest.approx(9 / 8)


@settings(max_examples=300, deadline=None)
@given(m=m_st, u=st.floats(1e-6, 1 - 1e-6))
def test_round_trip(m, u):
    rho = 1.0 / m + u * (1 - 1.0 / m)
    assume(1.0 / m < rho < 1.0 - 1e-9)
    eps = di.epsilon_from_rho(rho, m)
    assume(eps > 1e-9)
    assert di.rho_from_epsilon(eps, m) == pytest.approx(rho, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(m=m_st, epsilons=st.lists(st.floats(1e-3, 5.0), min_size=1, max_size=6))
def test_published_sequential_bound_is_valid_but_loose(m, epsilons):
    """m^(n-1) prod rho_i >= the exact composed posterior (Shang et al. 2021, Proposition 2: valid
    but loose; book chapter 11)."""
    rhos = [di.rho_from_epsilon(e, m) for e in epsilons]
    assume(all(1.0 / m < r < 1.0 for r in rhos))
    exact = di.compose_rho_exact(rhos, m)
    assert exact == pytest.approx(di.rho_from_epsilon(sum(epsilons), m), rel=1e-9)
    assert di.compose_rho_published(rhos, m) >= exact * (1 - 1e-9)


def test_exact_composition_of_one_mechanism_is_itself():
    assert di.compose_rho_exact([0.3], 100) == pytest.approx(0.3)
    assert di.compose_rho_published([0.3], 100) == pytest.approx(0.3)


def test_parallel_composition_published_vs_correct():
    assert di.compose_rho_parallel([0.2, 0.5], 10) == 0.5
    assert di.compose_rho_parallel([0.2, 0.5], 10, as_published=True) == 0.2


def test_di_laplace_scale_matches_epsilon_view():
    lam = di.di_laplace_scale(10.0, 0.05, 10001)
    assert lam == pytest.approx(10.0 / 6.265901, rel=1e-6)


def test_di_mechanisms_need_replace_adjacency(rng):
    with pytest.raises(ValueError, match="replace"):
        di.di_laplace_mechanism(np.zeros(2), 1.0, 0.5, 10, rng, ledger=PrivacyLedger())
    ledger = PrivacyLedger(neighbour="replace")
    di.di_laplace_mechanism(np.zeros(2), 2.0, 0.5, 10, rng, ledger=ledger)
    di.di_exponential_mechanism([1.0, 2.0], 1.0, 0.7, 2, rng, ledger=ledger)
    first, second = ledger.entries
    assert first.details["rho"] == 0.5 and first.details["m"] == 10
    assert first.epsilon == pytest.approx(math.log(9.0))
    assert second.mechanism == "exponential" and second.epsilon == pytest.approx(math.log(7 / 3))


def test_empty_composition_is_rejected():
    with pytest.raises(ValueError, match="rhos"):
        di.compose_rho_exact([], 10)
