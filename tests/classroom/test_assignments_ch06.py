"""Chapter 6's assignment: its references equal the chapter's formulas (the test bound, the
Clopper-Pearson bounds of a sound audit, the one-coordinate exercise), and classic mistakes
are marked wrong (fast: a few hundred trials, nothing is executed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpkmeans.engine.schedules import SU_RHO
from dpkmeans.privacy import mechanisms as mech
from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER6 = get_assignment(6)
PARAMETERS = {"STUDENT": "t", "SEED": 5, "CONFIDENCE": 0.99, "EPSILON": 1.0, "TAU": 0.5,
              "TRIALS": 400, "SWAP_D": 24}


@pytest.fixture(scope="module")
def ref():
    return CHAPTER6.references(PARAMETERS)


def _counts() -> tuple[int, int]:
    """h0 and h1 of the event {y <= TAU} in the setup cell's trials."""
    rng = np.random.default_rng(PARAMETERS["SEED"])
    eps, n, tau = PARAMETERS["EPSILON"], PARAMETERS["TRIALS"], PARAMETERS["TAU"]
    y0 = mech.laplace_mechanism(0.0, 1.0, eps, rng, ledger=None, repeats=n)
    y1 = mech.laplace_mechanism(1.0, 1.0, eps, rng, ledger=None, repeats=n)
    return int((y0 <= tau).sum()), int((y1 <= tau).sum())


def _bound(h0: int, h1: int, level: float) -> float:
    """ln(lower CP bound of h0/n / upper CP bound of h1/n), each at ``level``."""
    n = PARAMETERS["TRIALS"]
    return float(np.log(stats.beta.ppf(level, h0, n - h0 + 1)
                        / stats.beta.ppf(1 - level, h1 + 1, n - h1)))


def _right(variable: str, value: float, reference: float) -> bool:
    question = next(q for q in CHAPTER6.questions if q.variable == variable)
    answer = {"present": True, "value": float(value)}
    return mark_answer(question, answer, reference).points == question.points


def test_chapter6_references_match_the_book_formulas(ref):
    eps, tau = PARAMETERS["EPSILON"], PARAMETERS["TAU"]
    exact = np.log((1 - np.exp(-tau * eps) / 2) / (np.exp(-(1 - tau) * eps) / 2))
    assert ref["exact_log_ratio"] == pytest.approx(exact, rel=1e-12)
    assert ref["exact_log_ratio"] <= eps  # DP limits every test
    h0, h1 = _counts()
    assert ref["point_estimate"] == pytest.approx(np.log(h0 / h1), rel=1e-12)
    alpha = 1 - PARAMETERS["CONFIDENCE"]
    assert ref["fixed_event_bound"] == pytest.approx(max(_bound(h0, h1, alpha / 2), 0.0),
                                                     rel=1e-9)
    d = PARAMETERS["SWAP_D"]
    kappa = (4 * d * SU_RHO["[-1,1]"] ** 2) ** (1 / 3)
    assert ref["one_coordinate"] == pytest.approx((1 + kappa) / (d + kappa) * eps, rel=1e-12)
    verdict = 1 if ref["half_scale_bound"] > eps else 3
    assert ref["half_scale_verdict"] == verdict
    assert ref["skip_empty_bound"] > eps  # the flaw is caught with a few hundred trials
    assert 0.5 < ref["exposed_share"] < 1  # most float outputs are impossible on the neighbour
    assert ref == CHAPTER6.references(PARAMETERS)  # same seed, same numbers


def test_chapter6_one_coordinate_is_the_exercise_value():
    """The chapter's exercise: about 0.42 for d = 24 and epsilon = 4."""
    kappa = (4 * 24 * SU_RHO["[-1,1]"] ** 2) ** (1 / 3)
    question = next(q for q in CHAPTER6.questions if q.variable == "one_coordinate")
    value = question.reference({**PARAMETERS, "EPSILON": 4.0, "SWAP_D": 24}, {})
    assert value == pytest.approx(0.42, abs=0.005)
    assert value == pytest.approx((1 + kappa) / (24 + kappa) * 4.0, rel=1e-12)


def test_chapter6_classic_mistakes_are_marked_wrong(ref):
    h0, h1 = _counts()
    alpha = 1 - PARAMETERS["CONFIDENCE"]
    # the confidence must be shared between the two bounds (union bound)
    assert not _right("fixed_event_bound", _bound(h0, h1, alpha), ref["fixed_event_bound"])
    # the point estimate is not a bound
    assert not _right("fixed_event_bound", np.log(h0 / h1), ref["fixed_event_bound"])
    # an audit never proves a claim
    assert not _right("half_scale_verdict", 2, ref["half_scale_verdict"])
    # only the count's share: forgetting that c_i also reveals n'
    d, eps = PARAMETERS["SWAP_D"], PARAMETERS["EPSILON"]
    kappa = (4 * d * SU_RHO["[-1,1]"] ** 2) ** (1 / 3)
    assert not _right("one_coordinate", kappa / (d + kappa) * eps, ref["one_coordinate"])


def test_chapter6_solutions_fit_the_book_width():
    for question in CHAPTER6.questions:
        assert max(map(len, question.solution.splitlines())) <= 86, question.variable
