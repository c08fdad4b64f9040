"""Values beyond the exact sampler's integer range are clamped, never refused (book chapter 6).

The range is 2^61 grid steps, a threshold crossed by the private data's size: a noisy count of
N = 2^31 records, or the sums of about 4e9 records, raised a ValueError (in DPLloyd after the
count's noise had been drawn). Clamping to the public range keeps the guarantee (it moves no two
values further apart) and reveals nothing about the size. The data holder is warned, locally
(a ClippingWarning that names no value and is not part of the release).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpkmeans.errors import ClippingWarning
from dpkmeans.privacy import noise
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.counting import noisy_record_count
from dpkmeans.privacy.mechanisms import gaussian_mechanism, laplace_mechanism


def test_noisy_count_of_2_pow_31_records():
    n = 2**31
    ledger = PrivacyLedger(budget=1.0)
    noisy = noisy_record_count(n, 1.0, np.random.default_rng(0), ledger=ledger)
    assert abs(noisy - n) < 100
    assert ledger.total().epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2**31, 2**31 + 1, 2**40])
def test_counts_at_and_beyond_the_range_are_released(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)  # beyond 2^31: the holder is warned
        out = laplace_mechanism(float(n), 1.0, 1.0, np.random.default_rng(1), ledger=None,
                                integer_valued=True)
    assert np.isfinite(out) and abs(out - min(n, 2**31)) < 100


def test_sums_of_4e9_records_are_clamped_not_refused():
    """The sums and count of one cluster of about 4e9 records in [0, 1]^2 (DPLloyd's joint
    release, sensitivity d + 1 = 3)."""
    rows = 4.0e9
    value = np.array([0.9 * rows, 0.45 * rows, rows])
    with pytest.warns(ClippingWarning):
        out = laplace_mechanism(value, 1.0, 1.0, np.random.default_rng(2), ledger=None)
    cal = noise.calibrate("laplace", 1.0, 1.0, coordinates=3)
    top = 2.0**61 * cal.grid
    assert np.all(np.isfinite(out))
    assert np.allclose(out, np.minimum(value, top), rtol=0, atol=1e3)
    # beyond the range the release does not depend on the value: nothing about N shows
    with pytest.warns(ClippingWarning):
        again = laplace_mechanism(value * 1.5, 1.0, 1.0, np.random.default_rng(2), ledger=None)
    assert np.array_equal(out[[0, 2]], again[[0, 2]])


def test_gaussian_release_beyond_the_range():
    with pytest.warns(ClippingWarning):
        out = gaussian_mechanism(np.array([1e30, -1e30]), 1.0, 1.0, 1e-6,
                                 np.random.default_rng(3), ledger=None)
    assert np.all(np.isfinite(out)) and out[0] > 0 > out[1]


def test_to_grid_clamps_and_still_refuses_nan():
    grid = 2.0**-30
    with pytest.warns(ClippingWarning):
        assert noise.to_grid(np.array([1e300, -np.inf]), grid).tolist() == [2**61, -(2**61)]
    with pytest.raises(ValueError, match="not a number"):
        noise.to_grid(np.array([np.nan]), grid)


# -- the data holder is warned (locally; the warning is not part of the release) ---------------
def test_the_limit_follows_from_the_grid_constants():
    count = noise.calibrate("laplace", 1.0, 1.0, integer_valued=True)
    assert noise.grid_limit(count.grid) == 2**31 == 2 ** (61 - noise.LAPLACE_GRID_BITS)
    sums = noise.calibrate("laplace", 3.0, 1.0, coordinates=3)  # a cluster's sums and count
    assert noise.grid_limit(sums.grid) == 2**32
    for sens in (0.3, 1.0, 1.5, 7.0, 1e6):  # between 2^30 and 2^31 sensitivities
        limit = noise.grid_limit(noise.calibrate("laplace", sens, 1.0).grid)
        assert 2**30 * sens < limit <= 2**31 * sens
        gauss = noise.calibrate("gaussian", sens, 1.0, 1e-6)
        assert noise.grid_limit(gauss.grid) >= limit


def test_the_check_warns_from_the_count_alone():
    """No 2^31 records are allocated: the check reads the count (or records times the largest
    coordinate of a sum)."""
    grid = noise.calibrate("laplace", 1.0, 1.0, integer_valued=True).grid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not noise.check_grid_range(2**31, grid)
        assert not noise.check_grid_range(np.array([2**31, -(2**31)]), grid)
    with pytest.warns(ClippingWarning) as caught:
        assert noise.check_grid_range(2**31 + 1, grid)
    assert str(caught[0].message) == noise.GRID_CLAMPED
    sums = noise.calibrate("laplace", 3.0, 1.0, coordinates=3).grid
    with pytest.warns(ClippingWarning):  # 4.3e9 records with a coordinate of 1
        assert noise.check_grid_range(4.3e9 * 1.0, sums)


def test_a_clamped_release_warns_and_names_no_value():
    with pytest.warns(ClippingWarning) as caught:
        out = laplace_mechanism(5e9, 1.0, 1.0, np.random.default_rng(4), ledger=None,
                                integer_valued=True)
    assert abs(out - 2**31) < 100
    assert "5000000000" not in str(caught[0].message)
    with warnings.catch_warnings():  # within the range: no warning
        warnings.simplefilter("error")
        laplace_mechanism(float(2**31), 1.0, 1.0, np.random.default_rng(4), ledger=None,
                          integer_valued=True)
