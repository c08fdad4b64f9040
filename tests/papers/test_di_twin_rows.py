"""DI's rho-derived rows (Shang et al. 2021; book chapter 11): a DP twin on MAGIC runs at
eps(rho) of a grid rho. Its row records that rho as given, and its epsilon and seed are
derived from it, so the row alone gives both exactly; its seed is written as an integer."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.compute.lloyd import assign
from dpkmeans.engine.prototypes import MixedLayout
from dpkmeans.papers.di import study, variants
from dpkmeans.papers.di.study import Point
from dpkmeans.privacy.identifiability import epsilon_from_rho
from dpkmeans.study.shared import stable_seed
from dpkmeans.study.sweep import FLOAT_FORMAT, append_rows

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results" / "di.csv"
BASE = 20261125


def _printed_formula(rho: float, m: int) -> float:
    """The paper's eq. 5 as printed, ln((m - 1) rho / (1 - rho)): the library's map differs
    from it in the last place at most grid values of rho."""
    return math.log((m - 1) * rho / (1 - rho))


def _small_magic() -> study.Case:
    """A case named as MAGIC (k-means) on 60 random records in [0, 1]^3: no data file."""
    X = np.random.default_rng(0).random((60, 3))
    labels = assign(X, X[:2])
    return study.Case("magic", X, X, None, labels, labels, None)


def test_every_twin_is_given_by_its_grid_rho():
    twins = [p for p in study.points("magic") + study.iteration_points()
             if p.case == "magic" and p.algorithm.startswith("dp_")]
    assert len(twins) == 2 * len(study.RHOS) + 2 * (len(study.ITERATION_GRID) - 1)
    assert all(p.rho in study.RHOS and p.epsilon is None for p in twins)
    assert {study.point_epsilon(p) for p in twins} == {
        epsilon_from_rho(r, variants.M_NUMERIC) for r in study.RHOS}


def test_a_twins_seed_hashes_its_rho_not_a_float_derived_from_it(monkeypatch):
    twin = Point("magic", "dp_corrected", rho=0.05)
    assert study.point_seed(BASE, twin) == stable_seed(BASE, {
        "paper": "di", "case": "magic", "algorithm": "dp_corrected", "rho": 0.05,
        "rho_c": None, "epsilon": None, "iterations": variants.ITERATIONS})
    seed, eps = study.point_seed(BASE, twin), study.point_epsilon(twin)
    # the printed formula moves eps(0.05) by one place; the seed does not move
    monkeypatch.setattr(study, "epsilon_from_rho", _printed_formula)
    assert study.point_epsilon(twin) != eps and study.point_seed(BASE, twin) == seed


def test_a_point_takes_one_budget():
    with pytest.raises(ValueError, match="exactly one budget"):
        Point("magic", "dp_corrected", rho=0.05, epsilon=6.2)
    with pytest.raises(ValueError, match="exactly one budget"):
        Point("magic", "dp_corrected")
    with pytest.raises(ValueError, match="not epsilon"):
        Point("magic", "di_corrected", epsilon=6.2)
    with pytest.raises(ValueError, match="no configuration"):  # a twin is a k-means point
        study.study_config(Point("heart", "dp_corrected", rho=0.05),
                           MixedLayout((2,), 2, 0.12), 2)


def test_a_twin_row_round_trips_through_the_results_file(tmp_path):
    """A twin's row, appended after rows with no seed (as DI's gamma cell's) and read back:
    it records the grid rho as given, its epsilon is eps(rho) as the file prints floats, and
    its seed is the integer the study derives from the point the row gives."""
    case = _small_magic()
    twins = [Point("magic", a, rho=r) for a in ("dp_published", "dp_corrected")
             for r in (0.005, 0.05)]
    path = tmp_path / "di.csv"
    append_rows(path, pd.DataFrame([{"dataset": "heart", "algorithm": "kprototypes_nonprivate",
                                     "gamma": 0.12}]))
    append_rows(path, pd.DataFrame([study.run_point(case, p, base_seed=BASE, runs=2)
                                     for p in twins]))
    text = pd.read_csv(path, dtype=str).iloc[1:]
    assert text["rho"].tolist() == ["0.005", "0.05"] * 2
    for (_, row), twin in zip(pd.read_csv(path).iloc[1:].iterrows(), twins):
        point = study.row_point(row)
        assert point == twin
        assert text.loc[row.name, "point_seed"] == str(study.point_seed(BASE, point))
        assert row["epsilon"] == float(FLOAT_FORMAT % study.point_epsilon(point))


def test_every_committed_di_row_gives_its_epsilon_and_seed():
    """Every DI row of the committed di.csv: the point its columns give (a twin's rho) has
    the row's epsilon as printed and, exactly, the row's integer seed."""
    text = pd.read_csv(RESULTS, dtype=str)
    table = pd.read_csv(RESULTS)
    ran = table["algorithm"] != "kprototypes_nonprivate"
    twins = ran & (table["dataset"] == "magic") & table["algorithm"].str.startswith("dp_")
    assert twins.sum() == 2 * len(study.RHOS) + 2 * (len(study.ITERATION_GRID) - 1)
    assert set(table.loc[twins, "rho"]) == set(study.RHOS)
    wrong = []
    for i in table.index[ran]:
        point = study.row_point(table.loc[i])
        eps = study.point_epsilon(point)
        if ((eps is not None and table.loc[i, "epsilon"] != float(FLOAT_FORMAT % eps))
                or text.loc[i, "point_seed"]
                != str(study.point_seed(int(table.loc[i, "base_seed"]), point))):
            wrong.append(i)
    assert not wrong, f"{len(wrong)} of {ran.sum()} rows: {wrong[:5]}"
