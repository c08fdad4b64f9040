"""Chapter 4's assignment: its references equal the chapter's formulas, computed by hand here,
and classic mistakes are marked wrong (fast: iris is bundled, nothing is executed)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.data import load
from dpkmeans.engine.init import uniform_box
from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER4 = get_assignment(4)
PARAMETERS = {"STUDENT": "t", "SEED": 3, "DATASET": "iris", "K": 4, "INIT": "uniform",
              "ITERATIONS": 10, "SIGMA": 0.1}


def _distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared distance of every record to every centroid, (N, k)."""
    return ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)


def _lloyd(X: np.ndarray, C: np.ndarray, iterations: int) -> np.ndarray:
    """Lloyd's algorithm as chapter 4 states it (an empty cluster keeps its centroid)."""
    C = C.copy()
    for _ in range(iterations):
        labels = _distances(X, C).argmin(axis=1)
        for j in range(len(C)):
            if (labels == j).any():
                C[j] = X[labels == j].mean(axis=0)
    return C


@pytest.fixture(scope="module")
def worked():
    X = load("iris", scale=(-1, 1)).X
    rng = np.random.default_rng(PARAMETERS["SEED"])
    start = uniform_box((-np.ones(4), np.ones(4)), PARAMETERS["K"], rng)
    noise = rng.standard_normal((PARAMETERS["K"], 4))
    return X, start, noise, CHAPTER4.references(PARAMETERS)


def _right(variable: str, value: float, reference: float) -> bool:
    question = next(q for q in CHAPTER4.questions if q.variable == variable)
    answer = {"present": True, "value": float(value)}
    return mark_answer(question, answer, reference).points == question.points


def test_chapter4_references_match_the_book_formulas(worked):
    X, start, noise, ref = worked
    final = _lloyd(X, start, PARAMETERS["ITERATIONS"])
    sse = _distances(X, start).min(axis=1).sum()
    sse_one = _distances(X, _lloyd(X, start, 1)).min(axis=1).sum()
    assert ref["sse_drop"] == pytest.approx(sse - sse_one, rel=1e-9)
    assert ref["sse_drop"] >= 0  # a Lloyd step never increases the SSE
    nicv = _distances(X, final).min(axis=1).mean()
    assert ref["nicv_lloyd"] == pytest.approx(nicv, rel=1e-9)
    assert ref["nicv1_lloyd"] == pytest.approx(np.sqrt(_distances(X, final)).min(axis=1).mean(),
                                               rel=1e-9)
    assert ref["nicv_rescaled"] == pytest.approx(nicv / 4, rel=1e-9)
    counts = np.bincount(_distances(X, final).argmin(axis=1), minlength=PARAMETERS["K"])
    assert ref["empty_clusters"] == (counts == 0).sum()
    perturbed = _distances(X, final + PARAMETERS["SIGMA"] * noise).min(axis=1).mean()
    assert ref["relative"] == pytest.approx((perturbed - nicv) / nicv, rel=1e-9)
    assert 0 <= ref["f_spread"] <= 1
    assert ref["la_vs_hungarian"] in (2, 3)  # Larsen-Aone is never below Hungarian
    assert ref == CHAPTER4.references(PARAMETERS)  # same seed, same numbers


def test_chapter4_classic_mistakes_are_marked_wrong(worked):
    _, _, _, ref = worked
    assert _right("nicv_rescaled", ref["nicv_lloyd"] / 4, ref["nicv_rescaled"])
    # NICV_1 scales like the data, NICV like its square
    assert not _right("nicv_rescaled", ref["nicv_lloyd"] / 2, ref["nicv_rescaled"])
    # the unsquared NICV is not the square root of the squared one
    assert not _right("nicv1_lloyd", np.sqrt(ref["nicv_lloyd"]), ref["nicv1_lloyd"])
    assert not _right("la_vs_hungarian", 1, ref["la_vs_hungarian"])


def test_chapter4_solutions_fit_the_book_width():
    for question in CHAPTER4.questions:
        assert max(map(len, question.solution.splitlines())) <= 86, question.variable
