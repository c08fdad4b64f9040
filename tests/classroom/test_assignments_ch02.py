"""Chapter 2's assignment: its references equal the chapter's formulas, computed by hand here
with the normal CDF, and classic mistakes are marked wrong (fast: nothing is executed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER2 = get_assignment(2)
PARAMETERS = {"STUDENT": "t", "SEED": 5, "EPSILON": 2.0, "DELTA": 1e-5, "DIM": 8,
              "RADIUS": 1.0}


def _right(variable: str, value: float, reference: float) -> bool:
    question = next(q for q in CHAPTER2.questions if q.variable == variable)
    return mark_answer(question, {"present": True, "value": float(value)},
                       reference).points == question.points


def _profile(eps: float, s: float) -> float:
    """delta(epsilon) of the exact privacy profile theorem, by hand."""
    return norm.cdf(s / 2 - eps / s) - np.exp(eps) * norm.cdf(-s / 2 - eps / s)


def _pdp(eps: float, s: float) -> float:
    return norm.cdf(s / 2 - eps / s) + norm.cdf(-s / 2 - eps / s)


def test_chapter2_references_match_the_book_formulas():
    ref = CHAPTER2.references(PARAMETERS)
    eps, delta = 2.0, 1e-5
    assert ref["l2_sensitivity"] == pytest.approx(np.sqrt(8 * 1.0 + 1), rel=1e-12)
    s = 3.0 / ref["sigma_analytic"]
    assert _profile(eps, s) == pytest.approx(delta, rel=1e-6)  # exact calibration
    assert ref["loss_mean"] == pytest.approx(s**2 / 2, rel=1e-12)
    classic = np.sqrt(2 * np.log(1.25 / delta)) / eps
    assert ref["classic_delta_ratio"] == pytest.approx(_profile(eps, 1 / classic) / delta,
                                                       rel=1e-6)
    assert ref["classic_verdict"] == 2  # epsilon >= 1 but still private
    assert ref["pdp_tail_ratio"] == pytest.approx(_pdp(eps, s) / delta, rel=1e-6)
    assert ref["pdp_tail_ratio"] > 1  # DP does not imply PDP
    laplace_std = np.sqrt(2) * (8 * 1.0 + 1) / eps
    assert ref["less_noise"] == (2 if ref["sigma_analytic"] < laplace_std else 1)
    # The simulated tail estimates the exact PDP tail at delta = 0.01 (within 5 std errors).
    from dpkmeans.privacy.mechanisms import gaussian_sigma_analytic

    tail = _pdp(eps, 1 / gaussian_sigma_analytic(1.0, eps, 0.01))
    assert abs(ref["simulated_tail"] - tail) < 5 * np.sqrt(tail * (1 - tail) / 100_000)
    assert ref == CHAPTER2.references(PARAMETERS)


@pytest.mark.parametrize("epsilon, verdict", [(0.5, 1), (5.0, 2), (12.0, 3)])
def test_chapter2_the_classic_verdict_follows_epsilon(epsilon, verdict):
    assert CHAPTER2.references({**PARAMETERS, "EPSILON": epsilon})["classic_verdict"] == verdict


@pytest.mark.parametrize("variable, mistake", [
    ("l2_sensitivity", np.sqrt(8)),  # the count's change forgotten
    ("l2_sensitivity", 9.0),  # the L1 sensitivity d r + 1
    ("loss_mean", 0.0),  # the loss is not centred
    ("classic_verdict", 1),  # epsilon >= 1 is outside the theorem
])
def test_chapter2_classic_mistakes_are_wrong(variable, mistake):
    ref = CHAPTER2.references(PARAMETERS)
    assert not _right(variable, mistake, ref[variable])


def test_chapter2_sigma_with_the_l1_sensitivity_is_wrong():
    from dpkmeans.privacy.mechanisms import gaussian_sigma_analytic

    ref = CHAPTER2.references(PARAMETERS)
    assert not _right("sigma_analytic", gaussian_sigma_analytic(9.0, 2.0, 1e-5),
                      ref["sigma_analytic"])
