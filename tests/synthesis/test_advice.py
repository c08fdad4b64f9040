"""The advice at equal privacy (:mod:`dpkmeans.synthesis.advice`): contenders ranked per
delta, the smallest epsilon within 10% and 50% of Lloyd, the rule of thumb and the gain of
accounting, on toy leaderboards whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkmeans.synthesis import advice, ranking

EPSILONS = (0.1, 1.0, 10.0)


def _row(case: str, eps: float, algorithm: str, form: str, delta: float, mean: float,
         *, N: int = 1000, d: int = 4, k: int = 2, half: float = 0.02,
         neighbour: str = "add/remove", accounting: str | None = None) -> dict:
    accounting = accounting or ("basic" if form in ("pure", "basic") else "tight")
    return {"case": case, "dataset": case, "k": k, "N": N, "d": d, "epsilon": eps,
            "algorithm": algorithm, "form": form, "delta": delta, "neighbour": neighbour,
            "accounting": accounting, "contender": f"{algorithm} ({form})",
            "comparable": neighbour == "add/remove", "rel_nicv_mean": mean,
            "rel_nicv_ci_low": mean - half, "rel_nicv_ci_high": mean + half}


def _board() -> pd.DataFrame:
    """Two datasets, three epsilons. At delta = 0, "a" beats "b"; at delta = 1e-6, "b"'s
    Gaussian form beats everything and "a"'s Laplace form is between its pure and Gaussian
    forms; one row under replace adjacency is not comparable."""
    rows = []
    for case, N in (("small", 1000), ("large", 100_000)):
        for eps in EPSILONS:
            scale = 1.0 / (N * eps / 2000)  # error falls with N eps / k
            rows += [_row(case, eps, "a", "pure", 0.0, 0.5 * scale, N=N),
                     _row(case, eps, "b", "pure", 0.0, 0.9 * scale, N=N),
                     _row(case, eps, "a", "laplace", 1e-6, 0.4 * scale, N=N),
                     _row(case, eps, "a", "gaussian", 1e-6, 0.3 * scale, N=N),
                     _row(case, eps, "b", "gaussian", 1e-6, 0.1 * scale, N=N),
                     _row(case, eps, "a", "pure", 0.0, 0.01, N=N, neighbour="replace")]
    board = pd.DataFrame(rows)
    board.loc[board["neighbour"] == "replace", "contender"] = "a (replace)"
    return board


def test_contenders_keep_comparable_rows_at_one_delta():
    board = _board()
    assert advice.deltas(board) == (0.0, 1e-6)
    pure = advice.contenders(board, 0.0)
    assert set(pure["algorithm"]) == {"a (pure)", "b (pure)"}
    assert set(pure["base_algorithm"]) == {"a", "b"}
    assert (pure["neighbour"] == "add/remove").all()
    assert set(advice.contenders(board, 1e-6)["algorithm"]) == {
        "a (laplace)", "a (gaussian)", "b (gaussian)"}
    with pytest.raises(ValueError, match="delta"):
        advice.contenders(board, 1e-3)
    with pytest.raises(ValueError, match="twice"):
        advice.contenders(pd.concat([board, board.iloc[:1]]), 0.0)


def test_the_advice_names_the_privacy_definition_beside_the_winner():
    board = _board()
    at_zero = advice.regime_advice(board, 0.0)
    assert set(at_zero["leader"]) == {"a (pure)"}
    assert set(at_zero["definition"]) == {"δ = 0, add/remove, basic"}
    at_delta = advice.regime_advice(board, 1e-6)
    assert set(at_delta["leader"]) == {"b (gaussian)"}
    assert set(at_delta["definition"]) == {"δ = 1e-6, add/remove, tight"}
    changes = advice.winner_changes(board)
    assert changes["leader_changes"].all()
    assert set(changes["leader_algorithm_low"]) == {"a"}
    assert set(changes["leader_algorithm_high"]) == {"b"}


def test_smallest_epsilon_reads_the_upper_bound_and_requires_staying_within():
    board = _board()
    first = advice.smallest_epsilon(board)
    row = first[(first["case"] == "large") & (first["contender"] == "a (pure)")].iloc[0]
    # large, a (pure): mean 0.5 / (50 eps): 0.1 -> 0.1 + 0.02 = 0.12 > 0.1; 1 -> 0.03
    assert row["eps_0.1"] == 1.0 and row["eps_0.5"] == 0.1
    by_mean = advice.smallest_epsilon(board, bound="rel_nicv_mean")
    row = by_mean[(by_mean["case"] == "large") & (by_mean["contender"] == "a (pure)")].iloc[0]
    assert row["eps_0.1"] == 0.1  # the mean alone, 0.1, passes where the bound does not
    small = first[(first["case"] == "small") & (first["contender"] == "b (pure)")].iloc[0]
    assert np.isnan(small["eps_0.1"])  # 0.9 / (0.5 * 10) + 0.02 = 0.2 at the largest
    assert "a (replace)" not in set(first["contender"])
    # a dip below the threshold followed by a rise is not "within from there on"
    dip = pd.DataFrame([_row("c", e, "a", "pure", 0.0, m)
                        for e, m in zip(EPSILONS, (0.05, 0.3, 0.05))])
    assert advice.smallest_epsilon(dip)["eps_0.1"].iloc[0] == 10.0
    assert advice.smallest_epsilon(dip, stay=False)["eps_0.1"].iloc[0] == 0.1


def test_the_rule_of_thumb_finds_the_signal_above_which_every_point_is_within():
    points = advice.leader_at_points(_board(), 0.0)
    assert set(points["contender"]) == {"a (pure)"} and len(points) == 6
    needed = advice.signal_needed(points).iloc[0]
    # a (pure): bound 0.5 * 2000 / (N eps) + 0.02 <= 0.1 iff N eps >= 12,500: signal 6,250
    within = points[points["rel_nicv_ci_high"] <= 0.1]
    assert needed["signal_from"] == within["signal"].min() == 50_000
    assert needed["last_miss"] == 5_000 and needed["above"] == needed["within"] == 2
    evidence = advice.rule_of_thumb(points)
    assert evidence["points"].sum() == 6
    assert evidence["within_0.1"].sum() == 2 and evidence["within_0.5"].sum() == 4


def test_the_gain_of_accounting_is_measured_form_against_form():
    board = _board()
    pld = advice.accounting_gain(board, "a", "laplace")
    assert pld["points"] == 6 and pld["median_ratio"] < 1
    mechanism = advice.accounting_gain(board, "a", "gaussian", against="laplace")
    assert mechanism["median_ratio"] < 1
    assert mechanism["better"] + mechanism["worse"] <= mechanism["points"]


def test_the_ranking_refuses_to_rank_across_privacy_definitions():
    board = _board()
    with pytest.raises(ValueError, match="twice"):
        ranking.point_ranks(board)  # the raw board: "a" in three forms at a point
    mixed = pd.concat([advice.contenders(board, 0.0).iloc[:1],
                       advice.contenders(board, 1e-6).iloc[:1]])
    with pytest.raises(ValueError, match="delta"):
        ranking.point_ranks(mixed)
    assert len(ranking.point_ranks(advice.contenders(board, 1e-6))) == 18
