"""The leaderboard at equal privacy (book chapter 12, "Equal privacy"): its contenders, their
seeds (today's points keep theirs), a tiny cell, and the committed board."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import CATALOGUE, FORMS, choice, loop_choices
from dpkmeans.privacy.accounting import TIGHT_RTOL
from dpkmeans.study.shared import Point, stable_seed
from dpkmeans.synthesis import leaderboard
from dpkmeans.synthesis.leaderboard import BoardPoint, Contender

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = ROOT / "data" / "results" / "leaderboard.csv"
BASE_SEED = 20261125


def _expected_contenders() -> set[tuple[str, str, float, str]]:
    """The brief of the board, spelled out: (algorithm, form, delta, relation)."""
    pure = {n for n, c in CATALOGUE.items() if not c.needs_delta}
    out = {(n, "pure", 0.0, "add/remove") for n in pure}
    out.add(("di", "pure", 0.0, "replace"))
    for name, entry in loop_choices().items():
        both = ("gaussian", "basic") if entry.needs_delta else ("gaussian", "laplace")
        if entry.tight_native:  # FastLloyd: its own analysis is the tight one
            both = ("gaussian",)
        out |= {(name, form, 1e-6, "add/remove") for form in both}
    out.add(("balcan", "pure", 1e-6, "add/remove"))
    out.add(("lsh", "basic", 1e-6, "add/remove"))
    if choice("lsh").build_tight is not None:
        out.add(("lsh", "gaussian", 1e-6, "add/remove"))
    return out


def test_the_contenders_are_every_form_at_both_deltas():
    got = [(c.algorithm, c.form, c.delta, c.neighbour) for c in leaderboard.CONTENDERS]
    assert len(got) == len(set(got))
    assert set(got) == _expected_contenders()
    assert {"dplloyd", "dplloyd-impr", "dp-kccm", "silhouette", "apdp", "di",
            "balcan", "fastlloyd-laplace"} == {a for a, _, d, _ in got if d == 0}
    assert ("fastlloyd", "gaussian", 1e-6, "add/remove") in got  # its own form: tight
    names = [c.name for c in leaderboard.CONTENDERS]
    assert "dplloyd-impr (gaussian)" in names and "di (pure, replace)" in names
    assert len({(c.name, c.delta) for c in leaderboard.CONTENDERS}) == len(got)


def test_accounting_and_comparability_of_a_contender():
    assert Contender("dplloyd", "laplace", 1e-6).accounting == "tight"
    assert Contender("colored", "gaussian", 1e-6).accounting == "tight"
    assert Contender("colored", "basic", 1e-6).accounting == "basic"
    assert Contender("dplloyd", "pure", 0.0).accounting == "basic"
    assert not Contender("di", "pure", 0.0, "replace").comparable
    assert all(c.comparable for c in leaderboard.CONTENDERS if c.neighbour == "add/remove")
    assert {c.form for c in leaderboard.CONTENDERS} <= set(FORMS)


def test_an_algorithm_as_by_itself_keeps_its_seed():
    for name, entry in CATALOGUE.items():
        point = Point("blood", name, 0.5)
        today = stable_seed(BASE_SEED, {"study": "leaderboard", **asdict(point)})
        assert leaderboard.point_seed(BASE_SEED, point) == today
        own_form = "gaussian" if entry.tight_native else "basic"
        form, delta = (own_form, 1e-6) if entry.needs_delta else ("pure", 0.0)
        own = BoardPoint("blood", name, 0.5, form, delta, entry.neighbour)
        assert leaderboard.point_seed(BASE_SEED, own) == today
    # a pure algorithm at delta > 0 is the same algorithm: the same runs
    balcan = [BoardPoint("blood", "balcan", 0.5, "pure", d, "add/remove") for d in (0.0, 1e-6)]
    assert len({leaderboard.point_seed(BASE_SEED, p) for p in balcan}) == 1
    # another form or relation: another seed
    others = {leaderboard.point_seed(BASE_SEED, BoardPoint("blood", "di", 0.5, f, d, n))
              for f, d, n in (("pure", 0.0, "replace"), ("pure", 0.0, "add/remove"),
                              ("gaussian", 1e-6, "add/remove"), ("laplace", 1e-6, "add/remove"))}
    assert len(others) == 4


def _data_or_skip(case: str):
    from dpkmeans.data import DataFileMissingError

    try:
        return leaderboard.apdp_study.load_public(case)
    except DataFileMissingError:
        pytest.skip(f"the {case} file is not available (set DPKMEANS_DATA)")


def _check_rows(rows: pd.DataFrame) -> None:
    assert rows["is_private"].all()
    basic = rows["accounting"] == "basic"
    # every run's spend is within its epsilon: basic composition, or the tight one at delta
    assert (rows["epsilon_spent_max"] <= rows["epsilon"] * (1 + 1e-9)).all()
    at = rows["epsilon_at_delta"] / rows["epsilon"]
    assert (at[basic] <= 1 + 1e-9).all()
    assert ((at[~basic] - 1).abs() <= TIGHT_RTOL).all(), rows.loc[~basic, "epsilon_at_delta"]
    pure0 = (rows["form"] == "pure") & (rows["delta"] == 0)
    np.testing.assert_allclose(at[pure0], 1.0, rtol=1e-9)
    assert set(rows["accounting"]) <= {"basic", "tight"}
    assert (rows["comparable"] == (rows["neighbour"] == "add/remove")).all()
    assert (rows.loc[rows["form"].isin(["gaussian", "laplace"]), "accounting"] == "tight").all()


def test_a_tiny_cell_has_every_form_and_meets_its_targets():
    public = _data_or_skip("blood")
    algorithms = ("dplloyd-impr", "di", "balcan", "colored", "lsh")
    rows = leaderboard.evaluate_cell("blood", base_seed=BASE_SEED, runs=2,
                                     epsilons=(0.5, 2.0), algorithms=algorithms)
    contenders = [c for c in leaderboard.CONTENDERS if c.algorithm in algorithms]
    assert len(rows) == 2 * len(contenders)
    assert list(rows["contender"].drop_duplicates()) == list(
        dict.fromkeys(c.name for c in contenders))
    _check_rows(rows)
    assert (rows["N"] == np.asarray(public.X).shape[0]).all()
    # the pure balcan at delta > 0 reuses its delta-0 runs: the same numbers, another epsilon
    balcan = rows[rows["algorithm"] == "balcan"].set_index(["epsilon", "delta"])
    for eps in (0.5, 2.0):
        assert balcan.loc[(eps, 0.0), "rel_nicv_mean"] == balcan.loc[(eps, 1e-6),
                                                                     "rel_nicv_mean"]
        assert balcan.loc[(eps, 1e-6), "epsilon_at_delta"] <= eps
    noise = rows.set_index("contender")["noise"]
    assert "colored" in noise["dplloyd-impr (gaussian)"].iloc[0]
    assert "laplace" in noise["dplloyd-impr (laplace)"].iloc[0]


# -- the committed board --------------------------------------------------------------------
@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_csv(LEADERBOARD)


def test_the_committed_board_is_complete(results):
    expected = {(case, c.name, c.delta, eps) for case in leaderboard.CASES
                for c in leaderboard.CONTENDERS for eps in leaderboard.EPSILONS}
    got = list(zip(results["case"], results["contender"], results["delta"],
                   results["epsilon"]))
    assert set(got) == expected
    assert len(got) == len(expected)
    assert (results["replicas"] == leaderboard.RUNS).all()
    assert set(results["form"]) <= set(FORMS)
    _check_rows(results)


def test_the_committed_board_keeps_todays_seeds(results):
    """Every row of an algorithm as it runs by itself has the seed of today's point."""
    for _, row in results.iterrows():
        point = BoardPoint(row["case"], row["algorithm"], float(row["epsilon"]), row["form"],
                           float(row["delta"]), row["neighbour"])
        assert leaderboard.point_seed(int(row["base_seed"]), point) == row["point_seed"]


@pytest.mark.slow
def test_committed_rows_of_every_form_are_recomputed_exactly(results):
    public = _data_or_skip("blood")
    X = np.asarray(public.X)
    base_seed = int(results["base_seed"].iloc[0])
    reference = float(leaderboard.reference_nicv(X, "blood", base_seed).mean())
    picks = (("dplloyd-impr (gaussian)", 1e-6, 0.5), ("apdp (laplace)", 1e-6, 2.0),
             ("di (pure, replace)", 0.0, 1.0), ("colored (basic)", 1e-6, 0.2),
             ("lsh (gaussian)", 1e-6, 1.0), ("balcan (pure)", 1e-6, 5.0))
    for name, delta, eps in picks:
        stored = results[(results["case"] == "blood") & (results["contender"] == name)
                         & (results["delta"] == delta) & (results["epsilon"] == eps)]
        if stored.empty and name.startswith("lsh"):
            continue  # lsh has no tight form in this catalogue
        stored = stored.iloc[0]
        point = BoardPoint("blood", stored["algorithm"], eps, stored["form"], delta,
                           stored["neighbour"])
        row = leaderboard.run_point(X, public.public_n_records, point, reference,
                                    base_seed=base_seed)
        for column in ("rel_nicv_mean", "rel_nicv_ci_low", "nicv_reference",
                       "epsilon_at_delta", "point_seed"):
            assert row[column] == pytest.approx(stored[column], rel=1e-9), (name, column)
        assert row["noise"] == stored["noise"] and row["contender"] == name


@pytest.mark.parametrize("point", [
    BoardPoint("blood", "fastlloyd", 0.5, "gaussian", 1e-6, "add/remove"),
    BoardPoint("blood", "fastlloyd-laplace", 2.0, "pure", 0.0, "add/remove"),
])
def test_a_committed_fastlloyd_point_is_recomputed_exactly(point):
    public = _data_or_skip("blood")
    X = np.asarray(public.X)
    reference = float(leaderboard.reference_nicv(X, "blood", BASE_SEED).mean())
    row = leaderboard.run_point(X, public.public_n_records, point, reference,
                                base_seed=BASE_SEED)
    board = pd.read_csv(LEADERBOARD)
    stored = board[(board["case"] == "blood") & (board["algorithm"] == point.algorithm)
                   & (board["epsilon"] == point.epsilon) & (board["form"] == point.form)
                   & (board["delta"] == point.delta)].iloc[0]
    for column in ("rel_nicv_mean", "rel_nicv_ci_low", "epsilon_at_delta", "iterations"):
        assert row[column] == pytest.approx(stored[column], rel=1e-9), column
