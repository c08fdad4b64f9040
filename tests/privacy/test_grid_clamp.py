"""Values beyond the exact sampler's integer range are clamped, never refused (book chapter 6).

The range is 2^61 grid steps, a threshold crossed by the private data's size: a noisy count of
N = 2^31 records, or the sums of about 4e9 records, raised a ValueError (in DPLloyd after the
count's noise had been drawn). Clamping to the public range keeps the guarantee (it moves no two
values further apart) and reveals nothing about the size.
"""

from __future__ import annotations

import numpy as np
import pytest

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
    out = laplace_mechanism(float(n), 1.0, 1.0, np.random.default_rng(1), ledger=None,
                            integer_valued=True)
    assert np.isfinite(out) and abs(out - min(n, 2**31)) < 100


def test_sums_of_4e9_records_are_clamped_not_refused():
    """The sums and count of one cluster of about 4e9 records in [0, 1]^2 (DPLloyd's joint
    release, sensitivity d + 1 = 3)."""
    rows = 4.0e9
    value = np.array([0.9 * rows, 0.45 * rows, rows])
    out = laplace_mechanism(value, 1.0, 1.0, np.random.default_rng(2), ledger=None)
    cal = noise.calibrate("laplace", 1.0, 1.0, coordinates=3)
    top = 2.0**61 * cal.grid
    assert np.all(np.isfinite(out))
    assert np.allclose(out, np.minimum(value, top), rtol=0, atol=1e3)
    # beyond the range the release does not depend on the value: nothing about N shows
    again = laplace_mechanism(value * 1.5, 1.0, 1.0, np.random.default_rng(2), ledger=None)
    assert np.array_equal(out[[0, 2]], again[[0, 2]])


def test_gaussian_release_beyond_the_range():
    out = gaussian_mechanism(np.array([1e30, -1e30]), 1.0, 1.0, 1e-6,
                             np.random.default_rng(3), ledger=None)
    assert np.all(np.isfinite(out)) and out[0] > 0 > out[1]


def test_to_grid_clamps_and_still_refuses_nan():
    grid = 2.0**-30
    assert noise.to_grid(np.array([1e300, -np.inf]), grid).tolist() == [2**61, -(2**61)]
    with pytest.raises(ValueError, match="not a number"):
        noise.to_grid(np.array([np.nan]), grid)
