"""APDPk-means reproduced and the schedules compared (book chapter 10): the study's points and
rows, the claims ledger and the ranking, the sweep, and the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine.strategies import SuSplit
from dpkmeans.papers.apdp import claims, study
from dpkmeans.papers.apdp.study import Point
from dpkmeans.study.sweep import expand, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "apdp.yaml"
RESULTS = ROOT / "data" / "results" / "apdp.csv"
CLAIMS_FILE = ROOT / "data" / "results" / "apdp_claims.csv"


@pytest.fixture(scope="module")
def toy() -> dict:
    raw = gaussian_mixture_dataset(500, 3, 3, rng=np.random.default_rng(8), separation=6.0)
    with pytest.warns(Warning):
        paper = raw.with_paper_bounds().scaled(study.INTERVAL)
    return {"public": raw.scaled(study.INTERVAL), "paper": paper}


# --- points and rows ------------------------------------------------------------------------------

def test_points_cover_every_algorithm_at_every_epsilon():
    for case in study.CASES:
        todo = study.points(case)
        assert len(todo) == len(set(todo)) == len(study.ALGORITHMS) * len(study.EPSILONS)
    assert set(study.FAMILIES.values()) == {"published", "corrected", "other"}
    with pytest.raises(ValueError, match="case must be one of"):
        study.points("iris")
    with pytest.raises(ValueError, match="algorithm must be one of"):
        study.study_config(Point("blood", "kmeans", 1.0), 3, 100)


def test_every_private_schedule_starts_from_the_shared_starts():
    starts = study.shared_starts("blood", 5, 3, inits=4, runs=2)
    assert starts.shape == (8, 4, 5) and np.all(starts[::2] == starts[1::2])
    again = study.shared_starts("blood", 5, 3, inits=4, runs=2)
    np.testing.assert_array_equal(starts, again)
    assert not np.array_equal(starts, study.shared_starts("blood", 5, 4, inits=4, runs=2))


def test_configurations_follow_their_papers():
    cfg = {a: study.study_config(Point("adult", a, 2.0), 6, 32561) for a in study.ALGORITHMS}
    assert {c.iterations for a, c in cfg.items() if a in study.CORRECTED} == {10}
    assert cfg["dplloyd"].iterations == 5 and cfg["dpkccm_stepped"].iterations == 12
    assert isinstance(cfg["dplloyd_impr"].step, SuSplit)
    assert not cfg["silhouette"].allocation.public
    for name, config in cfg.items():
        assert bool(config.flaws) == (name in study.PUBLISHED), name
        assert config.epsilon == pytest.approx(2.0)


def _rows(toy, algorithms, eps=1.0, base_seed=4, case="blood"):
    starts = study.shared_starts(case, 3, base_seed, inits=3, runs=2)
    return {a: study.run_point(toy, Point(case, a, eps), base_seed=base_seed, starts=starts,
                               inits=3, runs=2) for a in algorithms}


def test_rows_are_reproducible_and_say_what_is_private(toy):
    rows = _rows(toy, study.ALGORITHMS)
    again = _rows(toy, ("apdp", "ap_published"))
    for name, row in again.items():
        assert row == {**rows[name], "run_s": row["run_s"]}
    for name, row in rows.items():
        assert row["is_private"] == (name not in study.PUBLISHED), name
        assert row["branch"] in ("-", "ap", "fallback", "su-ap", "su-uniform")
        curve = json.loads(row["curve_nicv_mean"])
        assert len(curve) == row["iterations"] + 1
        if row["is_private"]:
            assert row["epsilon_spent_max"] <= 1.0 + 1e-9 and row["groups"] == 3
            assert curve[-1] == pytest.approx(row["nicv_mean"], rel=1e-6)
        else:
            assert row["overspend_max"] > 1.0 and row["groups"] == 1
            assert row["curve_scaling"] == "paper"
    assert rows["apdp"]["branch"] == "su-uniform"  # eps_m of the toy's 500 records is large


# --- claims --------------------------------------------------------------------------------------

def _summary(algorithm, eps, mean, se, branch="su-ap", family=None, curve=None):
    family = family or study.FAMILIES[algorithm]
    curve = curve or [mean] * 4
    return {"case": "adult", "dataset": "adult", "k": 5, "algorithm": algorithm,
            "family": family, "epsilon": eps, "branch": branch, "epsilon_m": 0.1,
            "n_records": 32561, "iterations": 3, "N": 32561, "d": 6, "replicas": 1000,
            "groups": 20 if family != "published" else 1, "nicv_mean": mean, "nicv_se": se,
            "nicv_ci_low": mean - 2 * se, "nicv_ci_high": mean + 2 * se,
            "curve_nicv_mean": json.dumps(curve), "curve_nicv_se": json.dumps([se] * 4)}


def _table(ap_mean, uniform_mean, se=0.001, eps=(0.5, 1.0), branch="su-ap"):
    rows = []
    for e in eps:
        rows += [_summary("apdp", e, ap_mean, se, branch),
                 _summary("uniform", e, uniform_mean, se, branch),
                 _summary("dichotomy", e, uniform_mean, se, branch),
                 _summary("series_sum", e, uniform_mean, se, branch)]
    return pd.DataFrame(rows)


def test_a_significant_advantage_holds_and_its_reverse_is_refuted():
    ledger = claims.claims_ledger(_table(0.030, 0.040))
    corrected = ledger[ledger["method"] == "corrected"].set_index(["claim", "comparator"])
    summary = claims.claims_summary(ledger).set_index(["claim", "method"])
    assert summary.loc[("2", "corrected"), "verdict"] == "holds"
    assert summary.loc[("2", "corrected"), "evidence"] == "holds in 3 of 3 tests"
    assert corrected.loc[("1", "uniform"), "verdict"] == "holds"
    reverse = claims.claims_ledger(_table(0.040, 0.030))
    rev = reverse[reverse["method"] == "corrected"].set_index(["claim", "comparator"])
    assert rev.loc[("2", "uniform"), "verdict"] == "refuted"


def test_no_difference_is_inconclusive_not_the_opposite():
    ledger = claims.claims_ledger(_table(0.0400, 0.0401, se=0.01))
    assert set(ledger.loc[ledger["method"] == "corrected", "verdict"]) <= {"inconclusive",
                                                                           "holds", "mixed"}
    assert (ledger.loc[(ledger["method"] == "corrected") & (ledger["claim"] == "2"),
                       "verdict"] == "inconclusive").all()


def test_points_outside_the_progression_are_not_evidence():
    """Where APDP is uniform (Su's T = 2) nothing is compared, whatever the numbers say."""
    ledger = claims.claims_ledger(_table(0.030, 0.040, branch="su-uniform"))
    corrected = ledger[ledger["method"] == "corrected"]
    assert (corrected["points"] == 0).all() and (corrected["verdict"] == "inconclusive").all()


def test_ranking_marks_the_ties_with_the_best():
    table = _table(0.030, 0.0302, se=0.001, eps=(1.0,))
    table.loc[table["algorithm"] == "series_sum", "nicv_mean"] = 0.05
    ranks = claims.ranking(table).set_index("algorithm")
    assert ranks.loc["apdp", "rank"] == 1 and ranks.loc["uniform", "among_best"]
    assert not ranks.loc["series_sum", "among_best"]


# --- the sweep and the committed results -------------------------------------------------------

def test_sweep_grid_and_smoke_override():
    full, smoke = load_spec(SPEC), load_spec(SPEC, smoke=True)
    assert {c["case"] for c in expand(full)} == set(study.CASES)
    assert all(c["inits"] == study.PAPER_INITS and c["runs"] == study.PAPER_RUNS
               for c in expand(full))
    assert len(expand(smoke)) == 1


@pytest.mark.slow
def test_smoke_sweep_runs_through_papermill(tmp_path):
    try:
        rows = run_sweep(load_spec(SPEC, smoke=True), jobs=1, results_path=tmp_path / "s.csv",
                         progress=False)
    except Exception as err:  # papermill wraps the kernel's error
        if "not found" in str(err) and "DPKMEANS_DATA" in str(err):
            pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
        raise
    assert len(rows) == len(study.ALGORITHMS) * len(study.EPSILONS) + 1


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    assert RESULTS.exists(), "run the sweep and commit data/results/apdp.csv"
    return pd.read_csv(RESULTS)


def test_committed_results_are_complete(committed):
    ran = committed[committed["family"] != "reference"]
    stored = {Point(r.case, r.algorithm, float(r.epsilon)) for r in ran.itertuples()}
    assert stored == {p for case in study.CASES for p in study.points(case)}
    assert (ran["replicas"] == study.PAPER_INITS * study.PAPER_RUNS).all()
    assert (ran["inits"] == study.PAPER_INITS).all() and (ran["runs"] == study.PAPER_RUNS).all()
    assert (ran["is_private"] == ~ran["algorithm"].isin(study.PUBLISHED)).all()
    private = ran[ran["is_private"]]
    assert (private["epsilon_spent_max"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (ran.loc[~ran["is_private"], "overspend_max"] > 1.0).all()
    apdp = ran[ran["algorithm"].isin(study.PUBLISHED + study.CORRECTED)]
    assert set(apdp["branch"]) <= {"ap", "fallback", "su-ap", "su-uniform"}
    assert set(committed.loc[committed["family"] == "reference", "case"]) == set(study.CASES)


@pytest.mark.slow
def test_a_committed_point_is_recomputed_exactly(committed):
    """Two blood points, recomputed from their seeds, are the committed rows."""
    from dpkmeans.data.errors import DataFileMissingError

    try:
        data = study.load_case("blood")
    except DataFileMissingError:
        pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
    base = int(load_spec(SPEC).fixed["base_seed"])
    d = np.asarray(data["public"].X).shape[1]
    starts = study.shared_starts("blood", d, base, study.PAPER_INITS, study.PAPER_RUNS)
    for algorithm, eps in (("apdp", 5.0), ("ap_published", 0.1)):
        fresh = study.run_point(data, Point("blood", algorithm, eps), base_seed=base,
                                starts=starts)
        row = committed[(committed["case"] == "blood") & (committed["algorithm"] == algorithm)
                        & (committed["epsilon"] == eps)].iloc[0]
        for column in ("nicv_mean", "nicv_se", "sse_note_mean", "iterations_run_mean",
                       "epsilon_spent_max"):
            assert fresh[column] == pytest.approx(row[column], rel=1e-9), column  # CSV digits
        assert fresh["branch"] == row["branch"]


def test_committed_claims_are_computed_from_the_committed_results(committed):
    fresh = claims.claims_ledger(committed)
    stored = pd.read_csv(CLAIMS_FILE, dtype={"claim": str})
    pd.testing.assert_frame_equal(fresh.reset_index(drop=True), stored, check_dtype=False)
