"""Chapter 3's assignment: its references equal the chapter's formulas, computed by hand here,
and classic mistakes are marked wrong (fast: nothing is executed)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER3 = get_assignment(3)
PARAMETERS = {"STUDENT": "t", "SEED": 9, "ITERATIONS": 5, "K": 4, "DIM": 3, "EPS_SUM": 0.05,
              "EPS_COUNT": 0.02, "EPSILON_TOTAL": 1.0, "SCHEDULE": "halving",
              "CLUSTER_SIZE": 200, "M_WORLDS": 2, "RHO": 0.6, "N_MECHANISMS": 3}


def _right(variable: str, value: float, reference: float) -> bool:
    question = next(q for q in CHAPTER3.questions if q.variable == variable)
    return mark_answer(question, {"present": True, "value": float(value)},
                       reference).points == question.points


def test_chapter3_references_match_the_book_formulas():
    ref = CHAPTER3.references(PARAMETERS)
    eps_clusters = np.random.default_rng(9).choice([0.1, 0.2, 0.25, 0.4, 0.5], size=4)
    assert ref["run_cost"] == pytest.approx(5 * (0.05 + 0.02), rel=1e-12)
    assert ref["parallel_cost"] == eps_clusters.max()
    assert ref["replace_cost"] == pytest.approx(np.sort(eps_clusters)[-2:].sum(), rel=1e-12)
    assert ref["unspent"] == pytest.approx(2.0**-5, rel=1e-9)
    last = 2.0**-5 / (1 - 2.0**-5)  # normalised halving
    assert ref["last_noise_std"] == pytest.approx(np.sqrt(2) * (3 + 1) / last / 200, rel=1e-9)
    assert ref["later_budget"] == 2  # T = 5: 1/32 < 1/30
    assert ref["composed_rho"] == pytest.approx(1.5**3 / (1 + 1.5**3), rel=1e-12)
    assert ref["published_verdict"] == 1  # 2^2 0.6^3 = 0.864
    assert ref == CHAPTER3.references(PARAMETERS)


@pytest.mark.parametrize("changes, expected", [
    ({"SCHEDULE": "series_sum"}, {"unspent": 1 / 6}),
    ({"ITERATIONS": 4}, {"later_budget": 1}),  # 1/16 > 1/20
    ({"N_MECHANISMS": 4}, {"published_verdict": 2}),  # 8 * 0.6^4 > 1
])
def test_chapter3_references_follow_the_parameters(changes, expected):
    ref = CHAPTER3.references({**PARAMETERS, **changes})
    for name, value in expected.items():
        assert ref[name] == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("variable, mistake", [
    ("run_cost", 4 * 5 * (0.05 + 0.02)),  # clusters added up instead of composed in parallel
    ("run_cost", 5 * 0.05),  # the counts forgotten
    ("unspent", 0.0),  # the normalised schedule
    ("later_budget", 1),  # "halving decays faster" taken on trust at T = 5
])
def test_chapter3_classic_mistakes_are_wrong(variable, mistake):
    ref = CHAPTER3.references(PARAMETERS)
    assert not _right(variable, mistake, ref[variable])


def test_chapter3_parallel_cost_under_replace_is_wrong():
    ref = CHAPTER3.references(PARAMETERS)
    assert ref["replace_cost"] > ref["parallel_cost"]
    assert not _right("replace_cost", ref["parallel_cost"], ref["replace_cost"])
