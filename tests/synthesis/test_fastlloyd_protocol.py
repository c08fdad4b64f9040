"""FastLloyd's protocol (dpkmeans.synthesis.fastlloyd_protocol): its datasets and k, what we can and
cannot obtain, delta = 1 / (N ln N), the contenders' configurations, a tiny cell, and sampled
rows of the committed data/results/fastlloyd_protocol.csv rebuilt exactly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.synthesis import fastlloyd_protocol as protocol
from dpkmeans.synthesis.fastlloyd_protocol import CONTENDERS, Contender

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results" / "fastlloyd_protocol.csv"


def test_every_dataset_of_the_paper_is_obtained_or_says_why_not() -> None:
    assert protocol.PAPER_DATASETS == {"iris": 3, "wine": 3, "breast": 2, "adult": 3,
                                       "yeast": 10, "house": 3, "lsun": 3, "s1": 15,
                                       "birch2": 100, "mnist": 10}
    assert set(protocol.OBTAINED) | set(protocol.NOT_OBTAINED) >= set(protocol.PAPER_DATASETS)
    assert not set(protocol.OBTAINED) & set(protocol.NOT_OBTAINED)
    assert "AblateSynth" in protocol.NOT_OBTAINED
    assert all(len(why) > 40 for why in protocol.NOT_OBTAINED.values())
    assert protocol.EPSILONS == (0.1, 0.25, 0.5, 0.75, 1.0) and protocol.RUNS == 100


def test_k_of_each_dataset() -> None:
    assert [protocol.k_of(n) for n in ("iris", "wine", "breast_cancer", "adult")] == [3, 3, 2, 3]
    assert protocol.k_of(protocol.g2_name(64, 30)) == 2
    assert len(protocol.datasets()) == 4 + 110
    with pytest.raises(ValueError, match="cannot be run: .*FCPS"):
        protocol.k_of("lsun")
    with pytest.raises(ValueError, match="dataset must be one of"):
        protocol.k_of("blood")


def test_delta_is_one_over_n_log_n() -> None:
    assert protocol.protocol_delta(150) == pytest.approx(1 / (150 * math.log(150)), rel=1e-15)
    with pytest.raises(ValueError):
        protocol.protocol_delta(1)


def test_the_data_are_scaled_from_public_bounds_to_the_box() -> None:
    ds = protocol.load_case("g2_2_10")
    assert ds.X.min() >= -1 and ds.X.max() <= 1
    assert ds.metadata["scaling"]["mode"] == "public"
    assert ds.metadata["scaling"]["source_bounds"][0] == (450.0, 650.0)


def test_each_contender_is_built_in_its_form() -> None:
    n = 2048
    delta = protocol.protocol_delta(n)
    configs = {c.name: protocol.config_of(c, 2, 0.5, 3, n) for c in CONTENDERS}
    assert configs["dplloyd"].iterations == protocol.MAX_ITER
    assert "laplace" in repr(configs["dplloyd-impr"].noise)
    twin = configs["dplloyd-impr (gaussian)"]
    assert twin.target.epsilon == 0.5 and twin.target.delta == pytest.approx(delta)
    assert configs["fastlloyd"].target.delta == pytest.approx(delta)
    assert configs["lsh (gaussian)"].delta == pytest.approx(delta)
    assert "laplace" in repr(configs["fastlloyd-laplace"].noise)
    with pytest.raises(ValueError, match="form must be one of"):
        protocol.config_of(Contender("x", "fastlloyd", "basic"), 2, 0.5, 3, n)
    with pytest.raises(ValueError, match="contender must be one of"):
        protocol.contender("fastlloyd (laplace)")


def test_a_tiny_cell_runs_every_contender_privately() -> None:
    rows = protocol.run_cell("iris", 0.5, 3, 11)
    assert list(rows["contender"]) == [c.name for c in CONTENDERS]
    assert (rows[["N", "d", "k", "runs"]].to_numpy() == [150, 4, 3, 3]).all()
    pure = rows["form"] == "pure"
    assert (rows.loc[pure, "delta"] == 0).all()
    assert np.allclose(rows.loc[~pure, "delta"], 1 / (150 * math.log(150)))
    assert rows["is_private"].all() and (rows["epsilon_at_delta"] <= 0.5 * (1 + 1e-6)).all()
    assert (rows["nicv_ci_low"] <= rows["nicv_mean"]).all()
    assert (rows["nicv_mean"] <= rows["nicv_ci_high"]).all()
    assert (rows["nicv_lloyd"] > 0).all() and rows["nicv_lloyd"].nunique() == 1
    again = protocol.run_point("iris", CONTENDERS[4], 0.5, runs=3, base_seed=11)
    assert again["nicv_mean"] == rows["nicv_mean"].iloc[4]  # the point alone: the same numbers
    assert again["point_seed"] == protocol.point_seed(11, "iris", CONTENDERS[4], 0.5)


# ---------------------------------------------------------------------- the committed results


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    if not RESULTS.is_file():
        pytest.skip(f"{RESULTS.name} is not committed yet")
    return pd.read_csv(RESULTS)


def test_the_committed_results_follow_the_protocol(results: pd.DataFrame) -> None:
    assert (results["runs"] == protocol.RUNS).all()
    assert set(results["epsilon"]) == set(protocol.EPSILONS)
    assert set(results["contender"]) == {c.name for c in CONTENDERS}
    assert results["is_private"].all()
    cells = results.groupby("dataset").size()
    assert (cells == len(CONTENDERS) * len(protocol.EPSILONS)).all()
    for _, row in results.iterrows():
        seed = protocol.point_seed(int(row["base_seed"]), row["dataset"],
                                   protocol.contender(row["contender"]), row["epsilon"])
        assert seed == row["point_seed"]


def test_two_sampled_committed_rows_are_rebuilt_exactly(results: pd.DataFrame) -> None:
    """Two rows drawn at random among those that need no data file and run in seconds (no
    adult, no LSH tree) are recomputed from their seed: the same numbers."""
    quick = results[(results["dataset"] != "adult") & (results["algorithm"] != "lsh")
                    & (results["d"] <= 32)]
    picks = quick.sample(2, random_state=np.random.default_rng(52).integers(2**31))
    for _, stored in picks.iterrows():
        row = protocol.rebuild_row(stored)
        for column in ("nicv_mean", "nicv_sd", "nicv_ci_low", "nicv_ci_high", "nicv_lloyd",
                       "epsilon_at_delta", "delta", "iterations", "N", "d", "k"):
            assert row[column] == pytest.approx(stored[column], rel=1e-9), (
                stored["dataset"], stored["contender"], column)
        assert row["point_seed"] == stored["point_seed"]
