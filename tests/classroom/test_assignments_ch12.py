"""Chapter 12's assignment: the key's answers equal the chapter's formulas and rules, and
classic mistakes are marked wrong (fast: no notebook is executed; iris is bundled)."""

from __future__ import annotations

import math

import pytest

from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER12 = get_assignment(12)
QUESTIONS = {q.variable: q for q in CHAPTER12.questions}
PARAMS = {"STUDENT": "t", "SEED": 11, "DATASET": "iris", "K": 3, "EPSILON": 1.0,
          "BUDGET": 1.0, "HOLDER_N": 20_000, "HOLDER_K": 5, "HOLDER_D": 12,
          "ALGORITHM": "apdp"}


@pytest.fixture(scope="module")
def ref():
    return CHAPTER12.references(PARAMS)


def _right(name: str, value: float, reference: float) -> bool:
    mark = mark_answer(QUESTIONS[name], {"present": True, "value": value}, reference)
    return mark.points == QUESTIONS[name].points


def test_chapter12_references_match_the_chapter(ref):
    assert ref["regime"] == 3  # N eps / k = 4000: 1000 <= signal < 10^4
    assert ref["epsilon_top"] == pytest.approx(10_000 * 5 / 20_000)
    assert ref["left"] == pytest.approx(PARAMS["BUDGET"] - PARAMS["EPSILON"] / 2, abs=1e-9)
    assert ref["third_fit"] == (3 if ref["left"] < PARAMS["EPSILON"] else 2)
    assert 1 <= ref["n_first"] <= 4 and ref["n_first"] == int(ref["n_first"])
    growth = math.log2(ref["noise_growth"])  # each halving step doubles the scale
    assert growth == pytest.approx(round(growth), abs=1e-6) and 0 <= round(growth) <= 9
    assert ref["nicv_mean"] > 0
    assert ref == CHAPTER12.references(PARAMS)  # same seed, same numbers


def test_chapter12_regime_choices_are_the_library_bins():
    from dpkmeans.synthesis.ranking import SIGNAL_BINS, SIGNAL_REGIMES

    regime = QUESTIONS["regime"]
    assert len(regime.choices) == len(SIGNAL_REGIMES) == len(SIGNAL_BINS) + 1


def test_chapter12_classic_mistakes_are_marked_wrong(ref):
    assert not _right("left", PARAMS["BUDGET"] - PARAMS["EPSILON"], ref["left"])
    assert not _right("epsilon_top", 10_000 / 20_000, ref["epsilon_top"])  # k forgotten
    assert not _right("third_fit", 4, ref["third_fit"])  # never "what is left"
