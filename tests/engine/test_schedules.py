"""Budget schedules spend exactly their epsilon (book chapter 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.engine import schedules
from dpkmeans.privacy.accounting import PrivacyLedger

NORMALISED = [schedules.uniform, schedules.halving, schedules.series_sum]


@settings(deadline=None)  # a property test, not a timing one: a loaded machine must not fail it
@given(eps=st.floats(1e-3, 100), T=st.integers(1, 200))
def test_schedules_sum_exactly_to_epsilon(eps, T):
    for fn in NORMALISED:
        budgets = fn(eps, T)
        assert budgets.shape == (T,)
        assert np.all(budgets > 0)
        assert budgets.sum() == pytest.approx(eps, rel=1e-12)
        ledger = PrivacyLedger(budget=eps)
        for e in budgets:
            ledger.charge("Laplace", epsilon=float(e), sensitivity=1.0, scale=1.0 / e)
        assert ledger.is_fully_spent()


@given(eps=st.floats(1e-3, 100), blocks=st.integers(1, 20))
def test_stepped_schedule_sums_to_epsilon(eps, blocks):
    budgets = schedules.dpkccm_stepped(eps, 3 * blocks)
    assert budgets.sum() == pytest.approx(eps, rel=1e-12)
    assert np.all(np.diff(budgets) >= -1e-12 * eps)  # increasing: more noise early


def test_closed_forms():
    assert schedules.uniform(1.0, 4).tolist() == [0.25] * 4
    np.testing.assert_allclose(schedules.halving(1.0, 3, normalise=False), [0.5, 0.25, 0.125])
    np.testing.assert_allclose(schedules.halving(1.0, 3), np.array([4, 2, 1]) / 7)
    np.testing.assert_allclose(schedules.series_sum(1.0, 3, normalise=False), [1 / 2, 1 / 6, 1 / 12])
    assert schedules.series_sum(2.0, 9, normalise=False).sum() == pytest.approx(2.0 * 9 / 10)
    np.testing.assert_allclose(schedules.dpkccm_stepped(1.0),
                               [1 / 24] * 4 + [1 / 12] * 4 + [1 / 8] * 4)


def test_su_quantities_match_values_worked_by_hand():
    # Su et al.'s (2016) eps_m, worked by hand (rho = 0.225): Blood 3.518, Adult 0.144, gamma 0.126
    assert schedules.su_epsilon_m(748, 4, 5) == pytest.approx(3.518, abs=1e-3)
    assert schedules.su_epsilon_m(32561, 5, 6) == pytest.approx(0.144, abs=1e-3)
    assert schedules.su_epsilon_m(19020, 2, 10) == pytest.approx(0.126, abs=1e-3)
    assert schedules.su_epsilon_m(748, 4, 5, rho=0.45) == pytest.approx(4.049, abs=1e-3)
    assert schedules.su_iterations(1.0, 32561, 5, 6) == 6
    assert schedules.su_iterations(1.0, 748, 4, 5) == 2
    assert schedules.su_iterations(1.0, 19020, 2, 10) == 7


@given(eps=st.floats(1e-3, 10), d=st.integers(1, 100))
def test_su_split_is_the_right_way_round(eps, d):
    count, per_dim = schedules.su_split(eps, d)
    c = (4 * d * 0.225**2) ** (1 / 3)
    assert count == pytest.approx(c * per_dim, rel=1e-9)  # count : dimension = c : 1
    assert count + d * per_dim == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("fn", NORMALISED)
def test_bad_arguments(fn):
    with pytest.raises(ValueError, match="iterations"):
        fn(1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        fn(-1.0, 3)
    with pytest.raises(TypeError, match="iterations"):
        fn(1.0, 2.5)


def test_stepped_needs_three_blocks():
    with pytest.raises(ValueError, match="multiple of 3"):
        schedules.dpkccm_stepped(1.0, 10)
