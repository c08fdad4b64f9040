"""Zhang, Liu and Wang (2018) reproduced (book chapter 8): the study's points and rows, the claims
ledger, the audit, the sweep, and the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.papers.silhouette import claims, study
from dpkmeans.papers.silhouette.audit import RATIO, audit_pair, ratio_statistic, run_audits
from dpkmeans.papers.silhouette.study import Point
from dpkmeans.study.sweep import expand, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "silhouette.yaml"
RESULTS = ROOT / "data" / "results" / "silhouette.csv"
CLAIMS_FILE = ROOT / "data" / "results" / "silhouette_claims.csv"
SCALING = ROOT / "benchmarks" / "dask_scaling.json"


@pytest.fixture(scope="module")
def toy() -> dict:
    raw = gaussian_mixture_dataset(400, 3, 2, rng=np.random.default_rng(8), separation=6.0)
    with pytest.warns(Warning):
        paper = raw.with_paper_bounds().scaled(study.INTERVAL)
    return {"public": raw.scaled(study.INTERVAL), "paper": paper}


# --- points and rows ------------------------------------------------------------------------

def test_points_cover_every_algorithm_at_every_epsilon():
    for dataset, k in study.PAPER_DATASETS.items():
        todo = study.points(dataset)
        assert len(todo) == len(set(todo)) == len(study.ALGORITHMS) * len(study.EPSILONS)
        assert {p.k for p in todo} == {k}
    assert {p.k for p in study.points("iris", k=3)} == {3}
    with pytest.raises(ValueError, match="k="):
        study.points("iris")
    with pytest.raises(ValueError, match="algorithm"):
        study.study_config(Point("kmeans", 2, 1.0), 3, 100)


def test_point_seeds_are_stable_and_distinct():
    a = Point("corrected", 2, 0.5)
    assert study.point_seed(1, "blood", a) == study.point_seed(1, "blood", Point("corrected", 2, 0.5))
    seeds = {study.point_seed(1, "blood", a), study.point_seed(2, "blood", a),
             study.point_seed(1, "magic", a), study.point_seed(1, "blood", Point("corrected", 2, 1.0))}
    assert len(seeds) == 4


def test_run_point_rows_are_reproducible_and_account_honestly(toy):
    rows = {a: study.run_point(toy, Point(a, 3, 0.5), base_seed=4, dataset="toy", runs=6)
            for a in study.ALGORITHMS}
    again = study.run_point(toy, Point("corrected", 3, 0.5), base_seed=4, dataset="toy", runs=6)
    assert again == {**rows["corrected"], "run_s": again["run_s"]}
    for a, row in rows.items():
        assert 0.0 <= row["f_ci_low"] <= row["f_mean"] <= 1.0 and row["runs"] == 6
        assert 1 <= row["iterations_mean"] <= row["iterations_max"] <= 10
        if a == "as_published":  # paper scaling, exact silhouettes, an uncounted initial eps
            assert not row["is_private"] and row["bounds"] == "paper"
            assert 1.5 < row["overspend_max"] <= 3.0
        else:
            assert row["is_private"] and row["bounds"] == "public"
            assert row["epsilon_spent_max"] <= 0.5 * (1 + 1e-9)


# --- claims -----------------------------------------------------------------------------------

def _fake(f: dict[str, float], *, se: float = 1e-3, small_bonus: float = 0.0,
          iterations: dict[str, float] | None = None) -> pd.DataFrame:
    """Summaries with F-measure f[a] (+ small_bonus at small eps for the paper's methods)."""
    iterations = iterations or {}
    rows = []
    for dataset in ("blood", "magic"):
        for p in study.points(dataset):
            bonus = small_bonus if p.epsilon <= claims.SMALL and p.algorithm in claims.METHODS else 0
            it = iterations.get(p.algorithm, 5.0)
            rows.append({"dataset": dataset, **p.__dict__, "runs": 200,
                         "f_mean": f[p.algorithm] + bonus, "f_se": se,
                         "iterations_mean": it, "iterations_se": 0.0 if it == 5.0 else 0.05,
                         "run_s": it * 1e-3})
    return pd.DataFrame(rows)


BASE = {a: 0.8 for a in study.ALGORITHMS}


def test_the_paper_s_picture_holds_and_its_reverse_is_refuted():
    paper = claims.claims_ledger(_fake(BASE, small_bonus=0.1,
                                       iterations={"as_published": 3.0, "corrected": 3.0}))
    assert (paper["verdict"] == "holds").all(), paper  # claims 1 (bonus), 2 (equal), 3
    reverse = claims.claims_ledger(_fake(BASE, small_bonus=-0.1,
                                         iterations={"as_published": 9.0, "corrected": 9.0}))
    by_claim = reverse.groupby("claim")["verdict"].agg(set)
    assert by_claim[1] == {"refuted"} and by_claim[3] == {"refuted"}
    assert by_claim[2] == {"holds"}  # equivalent at large epsilon


def test_no_difference_is_inconclusive_not_the_opposite():
    wide = claims.claims_ledger(_fake(BASE, se=0.05))  # equal means, wide intervals
    assert set(wide.loc[wide["claim"].isin([1, 2]), "verdict"]) == {"inconclusive"}
    summary = claims.claims_summary(wide)
    assert set(summary["method"]) == set(claims.METHODS)


def test_speedup_claim_reads_the_scaling_table():
    def entry(name, n, ratios):
        return {"method": "corrected", "dataset": name, "n": n, "d": 2,
                "speedup_per_round": ratios, "speedup_mean": float(np.mean(ratios))}

    grows = {"a": entry("small", 10, [1.0, 1.01, 0.99]), "b": entry("big", 10**6, [1.8, 1.7, 1.75])}
    assert claims.speedup_claim(grows, "corrected")["verdict"] == "holds"
    falls = {"a": entry("small", 10, [1.8, 1.7, 1.75]), "b": entry("big", 10**6, [1.0, 1.01, 0.99])}
    assert claims.speedup_claim(falls, "corrected")["verdict"] == "refuted"
    with pytest.raises(ValueError, match="two sizes"):
        claims.speedup_claim({"a": grows["a"]}, "corrected")


# --- the audit ---------------------------------------------------------------------------------

def test_the_shared_draw_fixes_the_ratio_exactly():
    D, D_prime = audit_pair(50)
    assert D.shape == (100, 2) and D_prime.shape == (101, 2) and (D_prime[-1] == 0).all()
    assert RATIO == pytest.approx(8 / 7)

    class Fake:  # the first group's cluster released at (S + eta) / (n + eta), eta shared
        eta = np.array([3.0, -7.0, 40.0])
        centroids = np.stack([np.stack([(np.array([10.0, 15.0]) + e) / (50 + e),
                                        np.array([0.5, 0.5])]) for e in eta])

    np.testing.assert_allclose(ratio_statistic(Fake), 0.0, atol=1e-12)


@pytest.mark.slow
def test_audit_detects_the_as_published_noise_and_not_the_corrected():
    published, fixed = run_audits(1.0, 400, group_size=100, seed=3)
    assert published.verdict == "violation detected" and published.lower_bound > 1.0
    assert fixed.verdict == "consistent"


# --- the sweep and the committed results --------------------------------------------------------

def test_sweep_grid_and_smoke_override():
    full, smoke = load_spec(SPEC), load_spec(SPEC, smoke=True)
    assert {c["dataset"] for c in expand(full)} == set(study.PAPER_DATASETS)
    assert all(c["runs"] == study.RUNS for c in expand(full))
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
    assert len(rows) == len(study.ALGORITHMS) * len(study.EPSILONS)
    assert (rows["is_private"] == (rows["algorithm"] != "as_published")).all()


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    assert RESULTS.exists(), "run the sweep and commit data/results/silhouette.csv"
    return pd.read_csv(RESULTS)


def test_committed_results_are_complete(committed):
    stored = {(r.dataset, Point(r.algorithm, int(r.k), float(r.epsilon)))
              for r in committed.itertuples()}
    expected = {(d, p) for d in study.PAPER_DATASETS for p in study.points(d)}
    assert stored == expected and (committed["runs"] == study.RUNS).all()
    assert (committed["is_private"] == (committed["algorithm"] != "as_published")).all()
    private = committed[committed["is_private"]]
    assert (private["epsilon_spent_max"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (committed.loc[~committed["is_private"], "overspend_max"] > 1.0).all()


@pytest.mark.slow
def test_a_committed_point_is_recomputed_exactly(committed):
    """The blood rows of the corrected method at eps = 1 and the as-published one at 0.1,
    recomputed from their seeds, are the committed rows (the seeds depend on the point only)."""
    from dpkmeans.data.errors import DataFileMissingError

    try:
        data = study._datasets("blood")
    except DataFileMissingError:
        pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
    for algorithm, eps in (("corrected", 1.0), ("as_published", 0.1)):
        point = Point(algorithm, study.PAPER_DATASETS["blood"], eps)
        fresh = study.run_point(data, point, base_seed=int(load_spec(SPEC).fixed["base_seed"]),
                                dataset="blood")
        row = committed[(committed["dataset"] == "blood") & (committed["algorithm"] == algorithm)
                        & (committed["epsilon"] == eps)].iloc[0]
        for column in ("f_mean", "f_se", "nicv_mean", "iterations_mean", "epsilon_spent_max"):
            assert fresh[column] == pytest.approx(row[column], rel=1e-9), column  # CSV digits


def test_committed_claims_are_computed_from_the_committed_results(committed):
    scaling = json.loads(SCALING.read_text())["fig7_speedup"]
    fresh = claims.claims_ledger(committed, scaling)
    stored = pd.read_csv(CLAIMS_FILE)
    pd.testing.assert_frame_equal(fresh.reset_index(drop=True), stored, check_dtype=False)
