"""Budget schedules never spend more than the total (book chapter 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkmeans import schedules


@given(eps=st.floats(1e-3, 100), T=st.integers(1, 200))
def test_schedules_fit_the_budget(eps, T):
    for fn in (schedules.uniform, schedules.halving, schedules.series_sum):
        budgets = fn(eps, T)
        assert budgets.shape == (T,)
        assert np.all(budgets > 0)
        assert budgets.sum() <= eps * (1 + 1e-12)


def test_closed_forms():
    assert schedules.uniform(1.0, 4).tolist() == [0.25] * 4
    np.testing.assert_allclose(schedules.halving(1.0, 3), [0.5, 0.25, 0.125])
    np.testing.assert_allclose(schedules.series_sum(1.0, 3), [1 / 2, 1 / 6, 1 / 12])
    assert schedules.series_sum(2.0, 9).sum() == pytest.approx(2.0 * 9 / 10)
    assert schedules.uniform(2.0, 7).sum() == pytest.approx(2.0)


@pytest.mark.parametrize("fn", [schedules.uniform, schedules.halving, schedules.series_sum])
def test_bad_arguments(fn):
    with pytest.raises(ValueError, match="iterations"):
        fn(1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        fn(-1.0, 3)
    with pytest.raises(TypeError, match="iterations"):
        fn(1.0, 2.5)
