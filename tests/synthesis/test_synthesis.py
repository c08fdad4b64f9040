"""The synthesis chapter (book chapter 12): the leaderboard's results, its ranks with ties, the
advice by regime, and the book-wide claims ledger."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.study.claims import VERDICTS
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


def test_recommendations_put_the_most_often_first_on_top():
    rows = []
    for eps in (0.5, 1.0, 2.0):
        rows += [_point("good", 0.1, 0.01, epsilon=eps), _point("fair", 0.5, 0.01, epsilon=eps),
                 _point("poor", 3.0, 0.01, epsilon=eps)]
    advice = ranking.recommendations(pd.DataFrame(rows))
    assert list(advice["algorithm"]) == ["good", "fair", "poor"]
    assert list(advice["place"]) == [1, 2, 3] and set(advice["points"]) == {3}


# -- the committed leaderboard --------------------------------------------------------------
@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_csv(LEADERBOARD)


def test_leaderboard_is_complete_and_private(results):
    expected = {(c, a, e) for c in leaderboard.CASES for a in CATALOGUE
                for e in leaderboard.EPSILONS}
    assert set(zip(results["case"], results["algorithm"], results["epsilon"])) == expected
    assert len(results) == len(expected)
    assert results["is_private"].all()
    assert (results["epsilon_spent_max"] <= results["epsilon"] * (1 + 1e-9)).all()
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
                         & (results["epsilon"] == epsilon)].iloc[0]
        for column in ("rel_nicv_mean", "rel_nicv_ci_low", "nicv_reference"):
            assert row[column] == pytest.approx(stored[column], rel=1e-9)


# -- the book-wide ledger -------------------------------------------------------------------
def test_headline_claims_cover_every_paper_with_valid_verdicts():
    claims = ledger.headline_claims(RESULTS)
    assert set(claims["paper"]) == {p.key for p in ledger.PAPERS}
    assert set(claims["verdict"]) <= set(VERDICTS) | {"not tested"}
    for paper in ledger.PAPERS:
        own = pd.read_csv(RESULTS / f"{paper.key}_claims.csv", dtype={"claim": str})
        assert (claims["paper"] == paper.key).sum() == own["claim"].nunique()


def test_privacy_claims_follow_the_published_configurations():
    privacy = ledger.privacy_claims(RESULTS).set_index("paper")
    for paper in ledger.PAPERS:
        flawed = bool(paper.published().flaws)
        assert (privacy.loc[paper.key, "published"] == "proven here") is (not flawed)
    assert privacy.loc["colored", "published"] == "refuted by audit"
