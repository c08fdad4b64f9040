"""Chapter 8's assignment (silhouette-weighted budgets): the key's answers equal the chapter's
formulas and the ledger's, and classic mistakes are marked wrong. Fast: iris is bundled with
scikit-learn, no notebook runs."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.compute.lloyd import block_silhouette, local_map_reduce
from dpkmeans_classroom import get_assignment, mark_answer

CHAPTER8 = get_assignment(8)
QUESTIONS = {q.variable: q for q in CHAPTER8.questions}
P = {"STUDENT": "t", "SEED": 11, "DATASET": "iris", "EPSILON": 1.0, "K": 3, "ITERATION": 2}


@pytest.fixture(scope="module")
def context():
    return CHAPTER8.prepare(P)


@pytest.fixture(scope="module")
def reference():
    return CHAPTER8.references(P)


def _marks(name: str, value: float, reference: dict[str, float]) -> float:
    return mark_answer(QUESTIONS[name], {"present": True, "value": value}, reference[name]).points


def test_chapter8_references_match_the_book_formulas(reference, context):
    eps = P["EPSILON"]
    e_t = eps * 2.0**-2 / (1 - 2.0**-10)
    assert reference["silhouette_scale"] == pytest.approx(2 / (0.1 * e_t), rel=1e-12)
    ran = int(context["published"].iterations_run[0])
    assert reference["overspend_bound"] == pytest.approx(1 + 2 * (1 - 2.0**-ran), rel=1e-12)
    assert 1 <= reference["first_multiplier"] <= 2
    assert eps < reference["published_spent"] <= reference["overspend_bound"] * eps
    assert reference["corrected_spent"] <= eps * (1 + 1e-12)
    assert reference["overspend_cap"] == 2
    assert reference == CHAPTER8.references(P)  # same seed, same numbers


def test_first_multiplier_is_the_silhouettes_of_the_initial_centres(reference, context):
    X = context["X"]
    sums, counts = local_map_reduce(X, block_silhouette, context["published"].initial_centroids)
    S = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0)[0]
    assert reference["first_multiplier"] == pytest.approx((1 + S.max()) / (1 + S.min()),
                                                          rel=1e-9)


def test_shared_ratio_is_what_the_initial_release_leaks(reference, context):
    X, k = context["X"], P["K"]
    first = X[: X.shape[0] // k]  # iris: 150 rows, the first split is rows 0..49
    n, V = len(first), first.sum(axis=0)
    assert reference["shared_ratio"] == pytest.approx((n - V[0]) / (n - V[1]), rel=1e-12)
    c = context["published"].initial_centroids[0, 0]
    if np.all((c > 0) & (c < 1)):  # not clipped: the shared draw cancels
        assert (1 - c[0]) / (1 - c[1]) == pytest.approx(reference["shared_ratio"], rel=1e-9)


def test_classic_mistakes_are_wrong(reference):
    eps = P["EPSILON"]
    assert _marks("published_spent", eps, reference) == 0  # the declared, not the spent
    assert _marks("first_multiplier", 1.0, reference) == 0  # the paper's claim
    assert _marks("overspend_bound", 2.0, reference) == 0  # the initial centres forgotten
    e_t = eps * 2.0**-2  # the unnormalised halving, and Delta = 1
    assert _marks("silhouette_scale", 2 / (0.1 * e_t), reference) == 0
    assert _marks("silhouette_scale", 1 / (0.1 * eps * 2.0**-2 / (1 - 2.0**-10)),
                  reference) == 0
