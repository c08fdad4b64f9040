"""Chapter 9's assignment (colored noise): its references equal the chapter's formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans.privacy import colored
from dpkmeans_classroom import get_assignment

CHAPTER9 = get_assignment(9)


def _parameters(**changes) -> dict:
    p = {"STUDENT": "t", "SEED": 11, "N_RECORDS": 200, "EPSILON": 0.5, "DELTA": 1e-5, "K": 3,
         "DIM": 2, "DATASET": "wine"}
    return {**p, **changes}


def test_chapter9_references_match_the_book_formulas():
    """gamma*, the authors' factor and the box optimum's gain (the corollary) by formula."""
    p = _parameters()
    ref = CHAPTER9.references(p)
    gamma = colored.gamma_pdp(0.5, 1e-5)
    assert ref["gamma_star"] == pytest.approx(gamma, rel=1e-12)
    assert colored.pdp_tail(0.5, ref["gamma_star"]) == pytest.approx(1e-5, rel=1e-6)
    gamma_c = 3**2 / (2 * math.log(2 / 1e-5))  # gamma_c at epsilon K d = 0.5 * 3 * 2
    assert ref["gamma_factor"] == pytest.approx(gamma_c / gamma, rel=1e-9)
    half = np.array([20, 10, 5, 50, 250, 5, 6, 1, 5, 15, 2, 5, 2000]) / 2  # wine's box
    r = np.append(half / half.max(), 1.0)
    assert ref["box_trace_ratio"] == pytest.approx(r.sum() ** 2 / (r.size * (r @ r)), rel=1e-9)
    assert ref["narrow_ratio"] == pytest.approx(r[:-1].min() * r.sum() / (r @ r), rel=1e-9)
    assert ref["corner_ratio"] > 1  # a record added at the corner breaks the local calibration
    assert ref["lemma5"] == 2
    assert ref == CHAPTER9.references(p)  # same seed, same numbers


def test_chapter9_choices_follow_the_parameters():
    """gamma_c is conservative at a small epsilon K d, not past ceds_gamma_fails_from; and the
    cube (iris) gains nothing from colored noise."""
    assert CHAPTER9.references(_parameters(EPSILON=0.1))["ceds_conservative"] == 2
    cube = CHAPTER9.references(_parameters(EPSILON=1.0, K=4, DIM=4, DATASET="iris"))
    assert 16 > colored.ceds_gamma_fails_from(1e-5)
    assert cube["ceds_conservative"] == 3
    assert cube["box_trace_ratio"] == pytest.approx(1.0, rel=1e-12)
