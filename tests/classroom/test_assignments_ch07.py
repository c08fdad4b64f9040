"""Chapter 7's assignment (DP-KCCM): the key's answers equal the chapter's formulas, and
classic mistakes are marked wrong. Fast: iris is bundled with scikit-learn, no notebook runs."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER7 = get_assignment(7)
QUESTIONS = {q.variable: q for q in CHAPTER7.questions}
P = {"STUDENT": "t", "SEED": 11, "DATASET": "iris", "EPSILON": 0.5, "K": 3, "MERGE_FACTOR": 3,
     "ITERATION": 2, "CLUSTER_SIZE": 100}


@pytest.fixture(scope="module")
def reference():
    return CHAPTER7.references(P)


def _marks(name: str, value: float, reference: dict[str, float]) -> float:
    return mark_answer(QUESTIONS[name], {"present": True, "value": value}, reference[name]).points


def test_chapter7_references_match_the_book_formulas(reference):
    d, eps = 4, P["EPSILON"]
    scale = (d + 1) / (eps / 24)  # iteration 2 is in the first block: eps / 24
    assert reference["noise_scale"] == pytest.approx(scale, rel=1e-6)
    assert reference["centroid_sd"] == pytest.approx(np.sqrt(2) * scale / 100, rel=1e-6)
    assert reference["minmax_shrink"] == pytest.approx(10 / 2.4, rel=1e-12)  # petal width
    assert reference["paper_ledger"] == 3  # total = epsilon, but a leak: not private
    assert reference["forgot_split_total"] == pytest.approx(12 * eps, rel=1e-12)
    assert reference["merge_vs_single"] == 3
    assert reference["versus_uniform"] == 1  # eps/24 against eps/12: twice the noise
    assert 0 < reference["nicv"] < 10
    assert reference == CHAPTER7.references(P)  # same seed, same numbers


@pytest.mark.parametrize("iteration, option", [(1, 1), (4, 1), (5, 2), (8, 2), (9, 3), (12, 3)])
def test_versus_uniform_follows_the_stepped_blocks(iteration, option):
    question = QUESTIONS["versus_uniform"]
    assert question.reference({**P, "ITERATION": iteration}, {}) == option


def test_classic_mistakes_are_wrong(reference):
    d, eps = 4, P["EPSILON"]
    assert _marks("noise_scale", d / (eps / 24), reference) == 0  # Delta_1 = d, not d + 1
    assert _marks("noise_scale", (d + 1) / (eps / 12), reference) == 0  # the uniform schedule
    assert _marks("forgot_split_total", eps, reference) == 0  # the declared, not the spent
    assert _marks("paper_ledger", 2, reference) == 0  # "min-max scaling is post-processing"
    assert _marks("centroid_sd", reference["noise_scale"] / 100, reference) == 0  # b, not sd
