"""The synthesis chapter (book chapter 12): the leaderboard's results, its ranks with ties, the
advice by regime, and the book-wide claims ledger."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.study.claims import CLAIM_VERDICTS
from dpkmeans.synthesis import leaderboard, ledger, ranking

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
LEADERBOARD = RESULTS / "leaderboard.csv"


def _point(algorithm: str, mean: float, half: float, **extra) -> dict:
    return {"case": "c", "dataset": "c", "epsilon": 1.0, "algorithm": algorithm,
            "rel_nicv_mean": mean, "rel_nicv_ci_low": mean - half,
            "rel_nicv_ci_high": mean + half, "N": 1000, "k": 4, "d": 3, **extra}


def test_ranks_tie_where_intervals_overlap():
    table = pd.DataFrame([_point("a", 0.1, 0.05), _point("b", 0.12, 0.05),
                          _point("c", 1.0, 0.1), _point("d", 5.0, 0.5)])
    ranked = ranking.point_ranks(table).set_index("algorithm")
    assert dict(ranked["rank"]) == {"a": 1, "b": 1, "c": 3, "d": 4}
    assert list(ranked.index[ranked["first"]]) == ["a", "b"]


def test_regimes_bin_the_signal_and_the_dimension():
    regimes = ranking.regime_of(np.array([100, 1000, 50_000]), np.array([0.5, 1.0, 1.0]),
                                np.array([5, 5, 2]), np.array([3, 24, 10]))
    assert list(regimes["signal"]) == [10.0, 200.0, 25_000.0]
    assert list(regimes["signal_regime"]) == ["N eps / k < 100", "100 <= N eps / k < 1000",
                                              "N eps / k >= 10000"]
    assert list(regimes["d_regime"]) == ["d <= 10", "d > 10", "d <= 10"]


def test_standings_order_a_regime_by_mean_rank():
    rows = []
    for eps in (0.5, 1.0, 2.0):
        rows += [_point("good", 0.1, 0.01, epsilon=eps), _point("fair", 0.5, 0.01, epsilon=eps),
                 _point("poor", 3.0, 0.01, epsilon=eps)]
    standing = ranking.standings(pd.DataFrame(rows))
    assert list(standing["algorithm"]) == ["good", "fair", "poor"]
    assert list(standing["place"]) == [1, 2, 3] and set(standing["points"]) == {3}
    assert list(standing["mean_rank"]) == [1.0, 2.0, 3.0]


def _spiky_regime() -> pd.DataFrame:
    """Seven points of one regime: "spiky" is first alone at three of them (more than any
    other) and last at the other four, so its mean rank is the worst of the three."""
    means = [{"spiky": 0.1, "steady": 0.5, "other": 0.5}] * 3 + [
        {"spiky": 3.0, "steady": 0.1, "other": 0.5}] * 2 + [
        {"spiky": 3.0, "steady": 0.5, "other": 0.1}] * 2
    return pd.DataFrame([_point(a, m, 0.01, case=f"c{i}", dataset=f"c{i}")
                         for i, point in enumerate(means) for a, m in point.items()])


def test_a_regime_is_led_by_its_best_mean_rank_not_by_its_most_firsts():
    results = _spiky_regime()
    ranked = ranking.point_ranks(results)
    firsts = ranked[ranked["first"]]["algorithm"].value_counts()
    assert firsts.idxmax() == "spiky"  # the old rule's choice
    advice = ranking.recommendations(results)
    assert len(advice) == 1
    row = advice.iloc[0]
    standing = ranking.standings(results).set_index("algorithm")
    assert row["leader"] == standing["mean_rank"].idxmin() != "spiky"
    assert standing.loc["spiky", "place"] == 3
    assert row["winner"] == ""  # seven points, each split: no clear winner
    assert "spiky" in row["tied"] and row["tied"][0] == row["leader"]


def _dominated(points: int, regimes: int = 1) -> pd.DataFrame:
    """``best`` beats ``next`` and ``last`` at every one of ``points`` points, in each of
    ``regimes`` regimes (N grows tenfold from one regime to the next)."""
    rows = []
    for r in range(regimes):
        for i in range(points):
            rows += [_point(a, m, 0.01, case=f"r{r}c{i}", dataset=f"r{r}c{i}", N=1000 * 10**r)
                     for a, m in (("best", 0.1), ("next", 0.5), ("last", 2.0))]
    return pd.DataFrame(rows)


def test_a_regime_winner_must_beat_its_runner_up_significantly():
    clear = ranking.recommendations(_dominated(10)).iloc[0]
    assert clear["winner"] == "best" and clear["tied"] == ("best",)
    assert (clear["wins"], clear["losses"]) == (10, 0)
    assert clear["p_value"] == pytest.approx(2 * 0.5**10) and clear["threshold"] == 0.05
    few = ranking.recommendations(_dominated(3)).iloc[0]  # 3 of 3 won: p = 0.25
    assert few["winner"] == "" and few["tied"] == ("best", "next", "last")
    assert few["runner_up"] == "next" and few["p_value"] == pytest.approx(0.25)


def test_the_winner_test_is_corrected_for_the_number_of_regimes():
    one = ranking.recommendations(_dominated(6))  # p = 2 / 64 = 0.031 < 0.05
    assert list(one["winner"]) == ["best"]
    two = ranking.recommendations(_dominated(6, regimes=2))  # 0.031 > 0.05 / 2
    assert len(two) == 2 and set(two["threshold"]) == {0.025}
    assert list(two["winner"]) == ["", ""]


def test_the_sign_test_is_exact_and_two_sided():
    assert ranking.sign_test(9, 0) == pytest.approx(2 / 512)
    assert ranking.sign_test(0, 9) == ranking.sign_test(9, 0)
    assert ranking.sign_test(0, 0) == 1.0 and ranking.sign_test(3, 3) == 1.0


def test_head_to_head_counts_only_points_where_the_intervals_are_apart():
    results = pd.DataFrame([_point("a", 0.1, 0.05, case="x"), _point("b", 0.12, 0.05, case="x"),
                            _point("a", 0.1, 0.01, case="y"), _point("b", 0.5, 0.01, case="y"),
                            _point("a", 0.9, 0.01, case="z"), _point("b", 0.5, 0.01, case="z")])
    assert ranking.head_to_head(results, "a", "b") == (1, 1)


# -- the committed leaderboard --------------------------------------------------------------
@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_csv(LEADERBOARD)


def test_leaderboard_has_every_algorithm_and_is_private(results):
    """Completeness at equal privacy, every form: tests/synthesis/test_leaderboard.py."""
    expected = {(c, a, e) for c in leaderboard.CASES for a in CATALOGUE
                for e in leaderboard.EPSILONS}
    assert set(zip(results["case"], results["algorithm"], results["epsilon"])) == expected
    assert results["is_private"].all()
    assert (results["replicas"] == leaderboard.RUNS).all()


def test_a_committed_point_is_recomputed_exactly(results):
    from dpkmeans.data import DataFileMissingError

    try:
        public = leaderboard.apdp_study.load_public("blood")
    except DataFileMissingError:
        pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
    X = np.asarray(public.X)
    base_seed = int(pd.read_csv(LEADERBOARD, usecols=["base_seed"])["base_seed"].iloc[0])
    reference = float(leaderboard.reference_nicv(X, "blood", base_seed).mean())
    for algorithm, epsilon in (("apdp", 0.5), ("dp-kccm", 2.0)):
        point = leaderboard.Point("blood", algorithm, epsilon)
        row = leaderboard.run_point(X, public.public_n_records, point, reference,
                                    base_seed=base_seed)
        stored = results[(results["case"] == "blood") & (results["algorithm"] == algorithm)
                         & (results["epsilon"] == epsilon) & (results["delta"] == 0)
                         & (results["neighbour"] == "add/remove")].iloc[0]
        for column in ("rel_nicv_mean", "rel_nicv_ci_low", "nicv_reference"):
            assert row[column] == pytest.approx(stored[column], rel=1e-9)


# -- the book-wide ledger -------------------------------------------------------------------
def test_headline_claims_cover_every_paper_with_valid_verdicts():
    claims = ledger.headline_claims(RESULTS)
    assert set(claims["paper"]) == {p.key for p in ledger.PAPERS}
    assert set(claims["verdict"]) <= set(CLAIM_VERDICTS) | {"not tested"}
    assert set(claims["corrected"]) <= set(CLAIM_VERDICTS) | {"not tested", ""}
    for paper in ledger.PAPERS:
        own = pd.read_csv(RESULTS / f"{paper.key}_claims.csv", dtype={"claim": str})
        assert (claims["paper"] == paper.key).sum() == own["claim"].nunique()


def test_privacy_claims_follow_the_published_configurations():
    privacy = ledger.privacy_claims(RESULTS).set_index("paper")
    for paper in ledger.PAPERS:
        flawed = bool(paper.published().flaws)
        assert (privacy.loc[paper.key, "published"] == "proven here") is (not flawed)
    assert privacy.loc["colored", "published"] == "refuted by audit"


def test_fewest_points_is_where_all_won_first_rejects():
    for threshold in (0.05, 0.05 / 8, 1 / 32):
        n = ranking.fewest_points(threshold)
        assert ranking.sign_test(n, 0) < threshold <= ranking.sign_test(n - 1, 0)


def test_regime_labels_for_math_and_for_text():
    assert ranking.regime_label("1000 <= N eps / k < 10000", "d > 10") == (
        r"$1000 \le N\varepsilon/k < 10^4$, $d > 10$")
    assert ranking.regime_label("N eps / k >= 10000", "d <= 10", "text") == (
        "Nε/k ≥ 10,000, d ≤ 10")
