"""Chapter 10's assignment (budget schedules): its references equal the chapter's formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans_classroom import get_assignment

CHAPTER10 = get_assignment(10)


def _epsilon_m(n: int, k: int, d: int, rho: float = 0.45) -> float:
    """Su et al.'s minimum, as the chapter writes it."""
    return math.sqrt(500 * k**3 / n**2 * (d + (4 * d * rho**2) ** (1 / 3)) ** 3)


def test_chapter10_references_match_the_book_formulas():
    """epsilon_m, the fallback share, the published spend, Su's T, the first-order noise and
    the progression's first/last ratio, on iris (N = 150, d = 4) and a survey of 20,000."""
    p = {"STUDENT": "t", "SEED": 11, "OFFSET": 0.25, "RAISE": 1.3, "DATASET": "iris", "K": 3,
         "EPSILON": 1.0, "N_SURVEY": 20_000}
    ref = CHAPTER10.references(p)
    floor = _epsilon_m(150, 3, 4)
    assert ref["epsilon_m"] == pytest.approx(floor, rel=1e-12)
    assert ref["fallback_fraction"] == pytest.approx(1.0 / 10 / floor, rel=1e-12)
    # the noisy-record initial centres cost eps / t_m, then eps / t_m per iteration run
    assert round(ref["published_spent"] * 10) in range(2, 12)
    assert ref["published_verdict"] == (2 if ref["published_spent"] <= 1.0 + 1e-9 else 4)
    r = 1.0 / _epsilon_m(20_000, 3, 4)
    T = 10 if r > 10 else int(min(max(r, 2), 7))
    assert ref["corrected_iterations"] == T
    growth = 2 * r / T - 1 if T >= 3 else 1.0
    assert ref["noise_growth"] == pytest.approx(growth, rel=1e-9)
    first_share = 2 * 1.0 / T - 1.0 / r if T >= 3 else 0.5
    sd = np.sqrt(2) * (4 / 2 + 1) * np.sqrt(1 + 0.25**2) / (20_000 / 3 * first_share)
    # the engine's discrete sampler puts the scale on its grid: a few parts in 10^9
    assert ref["first_noise_sd"] == pytest.approx(sd, rel=1e-7)
    T_raised = 10 if 1.3 * r > 10 else int(min(max(1.3 * r, 2), 7))
    raised = 2 * 1.3 * r / T_raised - 1
    assert ref["sawtooth"] == (1 if raised > growth else 2)
    assert ref == CHAPTER10.references(p)  # same seed, same numbers
