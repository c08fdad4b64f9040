"""Chapter 11's assignment: the key's answers equal the chapter's formulas, and classic
mistakes are marked wrong (fast: no notebook is executed)."""

from __future__ import annotations

import math

import pytest

from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER11 = get_assignment(11)
QUESTIONS = {q.variable: q for q in CHAPTER11.questions}


def _params(**overrides):
    p = {"STUDENT": "t", "SEED": 11, "DATASET": "iris", "K": 3, "M": 101, "RHO": 0.1,
         "RHO_C": 0.7, "M_C": 2, "MIXED": "heart"}
    return {**p, **overrides}



@pytest.fixture(scope="module")
def key(data_available):
    p = _params()
    return p, CHAPTER11.references(p)


def _right(name: str, value: float, reference: float) -> bool:
    mark = mark_answer(QUESTIONS[name], {"present": True, "value": value}, reference)
    return mark.points == QUESTIONS[name].points


def test_chapter11_references_match_the_book_formulas(key):
    p, ref = key
    m, rho, d = p["M"], p["RHO"], 4
    eps = math.log((m - 1) * rho / (1 - rho))
    assert ref["epsilon_rho"] == pytest.approx(eps, rel=1e-12)
    assert ref["rho_sequential"] == pytest.approx(1 / (1 + (m - 1) * math.exp(-2 * eps)))
    assert ref["proposition_2"] == (3 if m * rho**2 > 1 else 2)
    first = eps / 2 / (1 - 2.0**-10)  # normalised halving over T = 10
    assert ref["scale_first"] == pytest.approx(2 * (d + 1) / first, rel=1e-6)
    assert ref["literal_rule"] == (1 if eps / 2 > 1 else 2)
    eps_c = math.log(p["RHO_C"] / (1 - p["RHO_C"]))  # m_c = 2
    assert ref["epsilon_kprototypes"] == pytest.approx(eps + eps_c, rel=1e-12)
    assert ref["rho_kprototypes"] == pytest.approx(1 / (1 + (m - 1) * math.exp(-eps - eps_c)))
    assert ref["nicv_di"] > 0


def test_chapter11_classic_mistakes_are_marked_wrong(key):
    p, ref = key
    m, rho = p["M"], p["RHO"]
    assert not _right("epsilon_rho", math.log(m * rho / (1 - rho)), ref["epsilon_rho"])
    assert not _right("rho_sequential", m * rho * rho, ref["rho_sequential"])  # Prop. 2
    assert not _right("scale_first", 5 / (ref["epsilon_rho"] / 2), ref["scale_first"])
    assert not _right("epsilon_kprototypes", ref["epsilon_rho"], ref["epsilon_kprototypes"])
    assert not _right("rho_kprototypes", rho, ref["rho_kprototypes"])


def test_chapter11_choices_follow_the_parameters(data_available):
    small = get_assignment(11).references(_params(M=21, RHO=0.06))
    assert (small["proposition_2"], small["literal_rule"]) == (2, 2)
