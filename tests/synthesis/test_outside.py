"""The outside algorithms in the synthesis chapter: their places on the leaderboard
(:mod:`dpkmeans.synthesis.outside`), their home-ground benchmark
(:mod:`dpkmeans.synthesis.home_ground`) and their audit (:mod:`dpkmeans.synthesis.outside_audit`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.study.sweep import load_spec
from dpkmeans.synthesis import home_ground, outside, outside_audit

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"


def _toy_results() -> pd.DataFrame:
    """Three algorithms at two points: a wins at the first, b at the second, c never."""
    rows = []
    for case, eps, N, d, k, means in (("one", 0.1, 1000, 4, 2, (0.1, 0.5, 2.0)),
                                      ("two", 1.0, 50000, 20, 5, (0.6, 0.2, 1.0))):
        for algorithm, m in zip(("lsh", "dplloyd-impr", "balcan"), means):
            rows.append({"case": case, "dataset": case, "epsilon": eps, "N": N, "d": d, "k": k,
                         "algorithm": algorithm, "rel_nicv_mean": m,
                         "rel_nicv_ci_low": m - 0.05, "rel_nicv_ci_high": m + 0.05,
                         "run_s": {"lsh": 0.02, "dplloyd-impr": 0.003, "balcan": 0.1}[algorithm]
                         * N / 1000})
    return pd.DataFrame(rows)


def test_against_compares_point_by_point():
    out = outside.against(_toy_results(), "lsh")
    assert out["points"] == 2 and out["better"] == 1 and out["worse"] == 1
    assert out["mean_rel_nicv"] == pytest.approx(0.35)
    assert out["baseline_mean_rel_nicv"] == pytest.approx(0.35)
    assert out["min_ratio"] == pytest.approx(1.1 / 1.5)
    assert out["max_ratio"] == pytest.approx(1.6 / 1.2)


def test_regime_places_rank_every_outside_algorithm_in_every_regime():
    places = outside.regime_places(_toy_results())
    assert set(places["algorithm"]) == {"lsh", "balcan"} and (places["of"] == 3).all()
    lsh = places[places["algorithm"] == "lsh"].set_index("signal_regime")["place"]
    assert lsh["N eps / k < 100"] == 1 and lsh["N eps / k >= 10000"] == 2
    assert (places[places["algorithm"] == "balcan"]["place"] == 3).all()


def test_fit_times_read_the_largest_dataset():
    times = outside.fit_times(_toy_results())
    assert times.index[-1] == "balcan" and times["balcan"] == pytest.approx(5.0)


def test_the_audit_statistic_sorts_the_centroids_of_each_fit():
    class Result:
        centroids = np.array([[[0.5, 1.0], [-0.5, 2.0]], [[-1.0, 0.0], [1.0, 3.0]]])

    np.testing.assert_array_equal(outside_audit.statistic(Result()),
                                  [[-0.5, 2.0, 0.5, 1.0], [-1.0, 0.0, 1.0, 3.0]])


def test_the_audit_plants_an_overspend_and_refuses_a_loop_algorithm():
    shipped = outside_audit.config_at("lsh", 1.0)
    planted = outside_audit.config_at("lsh", 5.0)
    assert shipped.epsilon == 1.0 and planted.epsilon == 5.0 and planted.delta == shipped.delta
    with pytest.raises(ValueError, match="transcript audit"):
        outside_audit.config_at("dplloyd", 1.0)
    X0, X1, _ = outside_audit.pair()
    assert X1.shape[0] == X0.shape[0] + 1 and X1[-1].tolist() == [1.0, -1.0]


@pytest.mark.parametrize("name", outside_audit.ALGORITHMS)
def test_a_small_audit_runs_and_bounds_from_below(name):
    rows = outside_audit.audit_rows(name, trials=20, factors=(1.0, 2.0))
    assert list(rows["factor"]) == [1.0, 2.0]
    assert (rows["lower_bound"] >= 0).all() and (rows["claimed_epsilon"] == 1.0).all()
    again = outside_audit.audit_rows(name, trials=20, factors=(2.0,))
    assert again["lower_bound"].iloc[0] == rows["lower_bound"].iloc[1]  # seeded by the point


def test_the_home_ground_cell_on_a_small_mixture(monkeypatch):
    monkeypatch.setattr(home_ground, "N_RECORDS", 3000)
    monkeypatch.setattr(home_ground, "DIMENSION", 6)
    monkeypatch.setattr(home_ground, "COMPONENTS", 4)
    rows = home_ground.evaluate_cell(4, base_seed=1, runs=2)
    assert list(rows["algorithm"]) == [home_ground.REFERENCE, *home_ground.ALGORITHMS]
    assert rows["ratio_to_reference"].iloc[0] == 1.0
    private = rows[rows["is_private"].astype(bool)]
    assert len(private) == 3 and (private["epsilon_spent_max"] <= 1.0 + 1e-9).all()
    assert (rows["loss_mean"] > 0).all()
    again = home_ground.evaluate_cell(4, base_seed=1, runs=2)
    pd.testing.assert_frame_equal(rows.drop(columns="run_s"), again.drop(columns="run_s"))


def test_the_home_ground_runs_every_k_of_googles_plots():
    assert home_ground.GOOGLE_KS == (2, 4, 8, 16, 32, 64)
    assert sorted(home_ground.KS) == sorted(home_ground.GOOGLE_KS)


def test_one_centre_loss_is_the_mean_squared_distance_to_the_mean():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0], [1.0, -3.0]])  # mean (1, 0)
    assert home_ground.one_centre_loss(X) == pytest.approx((1 + 1 + 9 + 9) / 4)


def test_the_sweeps_cover_the_studies():
    spec = load_spec(ROOT / "notebooks" / "sweeps" / "home_ground.yaml")
    assert sorted(spec.grid["target"]) == sorted(home_ground.KS)
    assert spec.fixed["runs"] == home_ground.RUNS
    spec = load_spec(ROOT / "notebooks" / "sweeps" / "outside_audit.yaml")
    assert sorted(spec.grid["target"]) == sorted(outside_audit.ALGORITHMS)
    assert spec.fixed["runs"] == outside_audit.TRIALS


def test_committed_home_ground_and_audit_are_complete():
    home = pd.read_csv(RESULTS / "home_ground.csv")
    expected = {(k, a) for k in home_ground.KS
                for a in (home_ground.REFERENCE, *home_ground.ALGORITHMS)}
    assert set(zip(home["k"], home["algorithm"])) == expected
    assert (home.loc[home["is_private"], "epsilon_spent_max"] <= 1.0 + 1e-9).all()
    audit = pd.read_csv(RESULTS / "outside_audit.csv")
    assert set(zip(audit["algorithm"], audit["factor"])) == {
        (a, f) for a in outside_audit.ALGORITHMS for f in outside_audit.FACTORS}
    shipped = audit[audit["factor"] == 1.0]
    assert (shipped["verdict"] == "consistent").all(), "an audit exposed a shipped algorithm"
