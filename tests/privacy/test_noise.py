"""Calibration of exact noise on a public grid (book chapter 6)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpkmeans.errors import ClippingWarning
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy import noise
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.floating_point import grid_output_possible, laplace_output_possible
from tests.statistics_helpers import ALPHA, ks_pvalue


@settings(max_examples=200, deadline=None)
@given(sens=st.floats(1e-6, 1e6), eps=st.floats(1e-6, 1e3), coords=st.integers(1, 60))
def test_discrete_laplace_never_adds_less_noise_than_asked(sens, eps, coords):
    cal = noise.calibrate("laplace", sens, eps, coordinates=coords)
    g = cal.grid
    assert math.frexp(g)[0] == 0.5  # a power of two
    # the rounded query's sensitivity covers Delta plus half a step per coordinate, twice
    assert cal.sensitivity_steps >= sens / g + coords
    # the integer scale t covers sensitivity_steps / eps exactly (rational arithmetic)
    assert Fraction(cal.noise_steps) >= Fraction(int(cal.sensitivity_steps)) / Fraction(eps)
    # and is the least such integer (the ceiling, computed in integers)
    assert Fraction(cal.noise_steps - 1) < Fraction(int(cal.sensitivity_steps)) / Fraction(eps)
    assert cal.scale >= sens / eps
    assert cal.scale <= (sens / eps) * (1 + (coords + 2) * 2.0**-29) + g  # and barely more
    assert cal.details()["scale rounding"] >= 0


@settings(max_examples=60, deadline=None)
@given(sens=st.floats(1e-3, 1e3), eps=st.floats(0.01, 20.0), delta=st.floats(1e-12, 1e-2))
def test_discrete_gaussian_sigma_covers_its_zcdp_guarantee(sens, eps, delta):
    cal = noise.calibrate("gaussian", sens, eps, delta, coordinates=5)
    rho = (cal.sensitivity_steps / math.sqrt(cal.noise_steps)) ** 2 / 2  # CKS20 Thm. 14
    assert noise.zcdp_delta(rho, eps) <= delta * (1 + 1e-9)
    assert cal.noise_steps < 2**44
    analytic = mech.gaussian_sigma_analytic(sens, eps, delta)
    assert analytic <= cal.scale <= 1.6 * analytic  # zCDP costs some noise, not much


def test_zcdp_conversion_matches_known_values():
    # rho = eps^2 / 2 for pure eps-DP gives, e.g., the CKS20 Cor. 13 value for rho = 0.5, eps=1
    assert noise.zcdp_delta(0.0, 1.0) == 0.0
    d = noise.zcdp_delta(0.05, 1.0)
    assert 1e-4 < d < 1e-3
    assert noise.zcdp_delta(noise.zcdp_rho_for(1.0, 1e-5), 1.0) <= 1e-5
    assert noise.zcdp_delta(noise.zcdp_rho_for(1.0, 1e-5) * 1.001, 1.0) > 1e-5
    # the classic bound eps = rho + 2 sqrt(rho log(1/delta)) is looser than the conversion
    rho = 0.1
    classic = rho + 2 * math.sqrt(rho * math.log(1 / 1e-6))
    assert noise.zcdp_delta(rho, classic) <= 1e-6


def test_outputs_lie_on_the_grid_and_any_output_is_possible_under_any_value(rng):
    cal = noise.calibrate("laplace", 1.0, 0.5)
    y0 = mech.laplace_mechanism(np.zeros(20_000), 1.0, 0.5, rng, ledger=None)
    y1 = mech.laplace_mechanism(np.ones(20_000), 1.0, 0.5, rng, ledger=None)
    assert grid_output_possible(y0, 1.0, cal.grid).all()  # none is impossible under value 1
    assert grid_output_possible(y1, 0.0, cal.grid).all()
    # the continuous sampler is exposed: most outputs on 0 are impossible on 1
    z0 = mech.laplace_mechanism(np.zeros(2_000), 1.0, 0.5, rng, ledger=None, sampler="continuous")
    assert (~laplace_output_possible(z0, 1.0, 2.0)).mean() > 0.5
    assert not grid_output_possible(z0, 1.0, cal.grid).all()


def test_a_continuous_draw_is_recorded_as_a_leak(rng):
    ledger = PrivacyLedger(budget=2.0)
    mech.laplace_mechanism(0.0, 1.0, 1.0, rng, ledger=ledger)
    assert ledger.is_private
    mech.laplace_mechanism(0.0, 1.0, 1.0, rng, ledger=ledger, sampler="continuous")
    assert not ledger.is_private
    assert [e.mechanism for e in ledger.entries] == ["Laplace (discrete)", "Laplace (continuous)",
                                                     "LEAK (not private)"]


def test_the_ledger_shows_the_grid_and_the_rounding(rng):
    ledger = PrivacyLedger()
    mech.laplace_mechanism(np.zeros(3), 7.0, 0.25, rng, ledger=ledger)
    details = ledger.entries[0].details
    assert details["sampler"] == "discrete" and details["grid"] == 2.0**-28  # 7 < 2^3
    assert details["sensitivity on grid"] >= 7.0 and details["noise steps"] >= 28 * 2**28
    assert 0 <= details["scale rounding"] < 1e-7


def test_a_count_stays_exact_on_its_grid(rng):
    out = mech.laplace_mechanism(np.arange(5.0), 1.0, 1.0, rng, ledger=None, integer_valued=True,
                                 repeats=1000)
    cal = noise.calibrate("laplace", 1.0, 1.0, integer_valued=True)
    assert cal.sensitivity_steps == 2**30  # no rounding slack: the counts lie on the grid
    assert grid_output_possible(out, 0.0, cal.grid).all()
    with pytest.raises(ValueError, match="non-integer"):
        mech.laplace_mechanism([0.5], 1.0, 1.0, rng, ledger=None, integer_valued=True)


def test_limits_of_the_exact_sampler_are_clear_errors(rng):
    with pytest.raises(ValueError, match="too small for the exact sampler"):
        noise.calibrate("laplace", 1.0, 1e-12)
    # beyond 2^61 grid steps a value is clamped to the grid's public range, not refused (the
    # data holder is warned)
    top = 2.0**61 * noise.calibrate("laplace", 1e-3, 1.0).grid
    with pytest.warns(ClippingWarning, match="public range"):
        out = mech.laplace_mechanism([1e12], 1e-3, 1.0, rng, ledger=None)[0]
    assert abs(out - top) < 1.0
    with pytest.raises(ValueError, match="sampler"):
        noise.calibrate("laplace", 1.0, 1.0, sampler="snapping")
    with pytest.raises(ValueError, match="calibration"):
        mech.gaussian_mechanism(0.0, 1.0, 1.0, 1e-5, rng, ledger=None, calibration="analytic")


@pytest.mark.statistical
@pytest.mark.parametrize("sens, eps, delta", [(1.0, 1.0, 1e-5), (2.0, 0.3, 1e-6)])
def test_discrete_gaussian_noise_has_its_calibrated_scale(sens, eps, delta):
    n = 200_000
    cal = noise.calibrate("gaussian", sens, eps, delta, coordinates=n)
    draws = mech.gaussian_mechanism(np.zeros(n), sens, eps, delta, np.random.default_rng(12),
                                    ledger=None)
    assert ks_pvalue(draws, stats.norm(scale=cal.scale)) > ALPHA
    assert ks_pvalue(draws, stats.norm(scale=cal.scale * 0.97)) < ALPHA


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_per_replica_steps_match_each_replica_alone(kind):
    """draw_steps with one row of steps per replica: row r is replica r's draw alone, with the
    same elements left without noise (0 steps); rows that leave out other elements too."""
    rng = np.random.default_rng(4)
    steps = rng.integers(1, 2**30, size=(6, 3, 4))
    steps[:, 0, 1] = 0  # no noise there, in every replica
    uneven = steps.copy()
    uneven[2, 1, 1] = 0  # and one more element in one replica only
    for plan in (steps, uneven):
        batch, alone = gens(range(6)), gens(range(6))
        out = noise.draw_steps(kind, plan, batch, per_replica=True)
        for r in range(6):
            np.testing.assert_array_equal(out[r], noise.draw_steps(kind, plan[r], [alone[r]])[0])
        assert (out[plan == 0] == 0).all()
    with pytest.raises(ValueError, match="leading axis of 2 replicas"):
        noise.draw_steps(kind, steps, gens(range(2)), per_replica=True)


def gens(seeds) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in seeds]
