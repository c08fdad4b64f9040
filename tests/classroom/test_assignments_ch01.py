"""Chapter 1's assignment: its references equal the chapter's formulas, computed by hand here,
and classic mistakes are marked wrong (fast: synthetic data, nothing is executed)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans_classroom import get_assignment, mark_answer
from dpkmeans_classroom.chapter01 import SETUP
from dpkmeans_classroom.spec import run_setup

CHAPTER1 = get_assignment(1)
PARAMETERS = {"STUDENT": "t", "SEED": 11, "EPSILON": 0.5, "DIM": 3, "LOWER": -2, "UPPER": 1,
              "K": 4, "Y_OUT": 0.2, "NOISE_FRACTION": 0.5, "N_PEOPLE": 1000}


def _right(variable: str, value: float, reference: float) -> bool:
    question = next(q for q in CHAPTER1.questions if q.variable == variable)
    return mark_answer(question, {"present": True, "value": float(value)},
                       reference).points == question.points


def _query(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The DP-Lloyd query by hand: row j = (S_j, n_j) of the records nearest centroid j."""
    labels = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    return np.array([np.append(X[labels == j].sum(axis=0), (labels == j).sum())
                     for j in range(len(C))])


def test_chapter1_references_match_the_book_formulas():
    ref = CHAPTER1.references(PARAMETERS)
    eps, d = 0.5, 3
    H = d * 2  # the largest L1 norm of a record of [-2, 1]^3
    assert ref["sensitivity_add_remove"] == H + 1
    assert ref["scale_replace"] == pytest.approx(2 * (H + 1) / eps, rel=1e-12)
    assert ref["privacy_loss"] == pytest.approx(eps * (abs(0.2 - 1) - abs(0.2)), rel=1e-12)
    assert ref["true_epsilon"] == pytest.approx(eps / 0.5, rel=1e-12)
    assert ref["noise_std"] == pytest.approx(np.sqrt(2) * 120 / 1000 / eps, rel=1e-12)

    ns = run_setup(SETUP, PARAMETERS)
    X, C, x_new = ns["X"], ns["C"], ns["x_new"]
    assert ((X >= -2) & (X <= 1)).all() and set(np.unique(x_new)) <= {-2.0, 1.0}
    replaced = X.copy()
    replaced[0] = x_new
    change = np.abs(_query(replaced, C) - _query(X, C)).sum()
    assert ref["replace_change"] == pytest.approx(change, rel=1e-9)
    assert change <= 2 * (H + 1)
    touched = int((np.abs(_query(replaced, C) - _query(X, C)).sum(axis=1) > 0).sum())
    assert ref["clusters_touched"] == touched
    if touched == 2:  # the proof's case: both records counted with their norms and counts
        assert change == pytest.approx(np.abs(X[0]).sum() + np.abs(x_new).sum() + 2)
    weights = np.exp(eps * ns["utility"] / 2)
    assert ref["best_probability"] == pytest.approx(weights.max() / weights.sum(), rel=1e-9)
    assert ref == CHAPTER1.references(PARAMETERS)  # same seed, same numbers


def test_chapter1_both_cases_of_a_replacement_occur():
    touched = {CHAPTER1.references({**PARAMETERS, "SEED": seed})["clusters_touched"]
               for seed in range(12)}
    assert touched == {1, 2}


@pytest.mark.parametrize("variable, mistake", [
    ("sensitivity_add_remove", 3 * 3 + 1),  # the box's width (u - l) instead of max(|l|, |u|)
    ("scale_replace", 7 / 0.5),  # the add/remove sensitivity under replace
    ("privacy_loss", -0.5 * 0.6),  # D and D' swapped
    ("true_epsilon", 0.5 * 0.5),  # multiplied instead of divided
    ("noise_std", 120 / 1000 / 0.5),  # the scale b, not the standard deviation
])
def test_chapter1_classic_mistakes_are_wrong(variable, mistake):
    ref = CHAPTER1.references(PARAMETERS)
    assert _right(variable, ref[variable], ref[variable])
    assert not _right(variable, mistake, ref[variable])


def test_chapter1_forgetting_the_factor_two_of_the_exponential_mechanism_is_wrong():
    ref = CHAPTER1.references(PARAMETERS)
    utility = run_setup(SETUP, PARAMETERS)["utility"]
    weights = np.exp(0.5 * utility)
    assert not _right("best_probability", weights.max() / weights.sum(),
                      ref["best_probability"])
