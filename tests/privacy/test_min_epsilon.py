"""The smallest epsilon the exact Laplace sampler takes (``min_epsilon``) is exactly where
``calibrate`` starts refusing, with a one-sentence message that names it, and the scales it
allows never reach the range where a sample overflows int64."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dpkmeans.privacy.noise import LAPLACE_MAX_SCALE, calibrate, min_epsilon, round_up


def test_the_too_small_message_is_one_sentence_naming_the_smallest_epsilon():
    with pytest.raises(ValueError) as err:
        calibrate("laplace", 1.0, 1e-300)
    text = str(err.value)
    assert len(text) < 120 and "continuous" not in text and not re.search(r"\d{16}", text)
    assert text.endswith(f"give epsilon >= {round_up(min_epsilon('laplace', 1.0)):g}")


@pytest.mark.parametrize("sensitivity, coordinates, integer_valued", [
    (1.0, 1, True), (2.0, 3, False), (0.75, 11, False), (3.0, 1, False), (1e-3, 2, False)])
def test_min_epsilon_is_where_calibrate_starts_refusing(sensitivity, coordinates,
                                                        integer_valued):
    floor = min_epsilon("laplace", sensitivity, coordinates=coordinates,
                        integer_valued=integer_valued)
    cal = calibrate("laplace", sensitivity, floor, coordinates=coordinates,
                    integer_valued=integer_valued)
    assert cal.noise_steps <= LAPLACE_MAX_SCALE
    with pytest.raises(ValueError, match="too small for the exact sampler"):
        calibrate("laplace", sensitivity, math.nextafter(floor, 0.0), coordinates=coordinates,
                  integer_valued=integer_valued)


def test_scales_stay_below_the_overflow_range_of_the_sampler():
    # a scale of 2^61 steps was accepted, and one draw in fifty overflowed int64
    with pytest.raises(ValueError):
        calibrate("laplace", 1.0, 2.0**30 / 2.0**61)  # t = 2^61 + 2^31
    assert min_epsilon("laplace", 1.0) > 2.0**30 / 2.0**57


def test_no_floor_for_gaussian_or_continuous_noise():
    assert min_epsilon("gaussian", 1.0) == 0.0
    assert min_epsilon("laplace", 1.0, sampler="continuous") == 0.0
    assert min_epsilon("laplace", 0.0) == 0.0
    assert np.isfinite(calibrate("gaussian", 1.0, 1e-300, 1e-6).scale)


@pytest.mark.parametrize("x", [4.6521e-10, 2.0, 0.1 + 0.2, 9.999e7, 1.0000001])
def test_round_up_keeps_three_digits_and_never_goes_below(x):
    up = round_up(x)
    assert up >= x and float(f"{up:g}") == up and up <= x * 1.01
