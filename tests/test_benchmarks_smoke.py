"""Smoke test of the benchmark suite (benchmarks/run.py): every benchmark runs at tiny sizes
and reports what the table and the JSON need. No timing is asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import run

ROOT = Path(__file__).resolve().parents[1]

KEYS = {"benchmark", "name", "params", "measurements", "ratio", "ratio_definition", "target",
        "met", "method"}


def check(result: dict, number: int) -> None:
    assert KEYS <= set(result)
    assert result["benchmark"] == number
    assert isinstance(result["met"], bool)
    assert result["ratio"] > 0  # may be inf at tiny sizes, where a time difference is noise
    json.dumps(result)  # serialisable as it stands
    assert run.table_row(result).startswith(f"| {number} |")


def test_lloyd_iteration_vs_sklearn():
    res = run.bench_lloyd_iteration(n=3000, d=3, k=3, repeats=1, sklearn_repeats=1, long=4)
    check(res, 1)
    m = res["measurements"]
    assert {"dpkmeans_iteration", "sklearn_per_iteration"} <= set(m)
    assert m["dpkmeans_iteration"]["repeats"] == 1


def test_dplloyd_impr_vs_diffprivlib():
    """Benchmark 2, small, where diffprivlib imports: here, or in the comparison environment
    (``make compare-env``; ``make test`` makes it), as ``python -m benchmarks.run`` does."""
    from dpkmeans.papers.su.diffprivlib_env import compare_python, diffprivlib_available

    python = sys.executable if diffprivlib_available() else str(compare_python())
    code = ("import json; from benchmarks import run; print(json.dumps("
            "run.bench_dplloyd_impr_vs_diffprivlib(n=400, d=2, k=3, repeats=1, "
            "diffprivlib_repeats=1)))")
    done = subprocess.run([python, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout.splitlines()[-1])
    check(res, 2)
    assert {"dpkmeans_dplloyd_impr_fit", "diffprivlib_kmeans_fit"} <= set(res["measurements"])
    assert res["params"]["diffprivlib_iterations"] >= 2


def test_replicas_batched_vs_sequential():
    res = run.bench_replicas(n=60, d=2, k=2, iterations=2, replicas=4, repeats=1)
    check(res, 3)
    assert res["measurements"]["sequential"]["repeats"] == 1


def test_streaming_pass():
    res = run.bench_streaming(n=2000, d=3, k=2, repeats=1)
    check(res, 4)
    assert run.STREAM in res["measurements"] and res["bandwidth_GB_s"] > 0


def test_memory_in_a_fresh_process():
    res = run.bench_memory(n=2000, d=3, k=2, repeats=1)
    check(res, 5)
    assert res["params"]["X_MB"] == pytest.approx(2000 * 3 * 8 / run.MB)
    assert {"fit_peak_rss", "fit_peak_tracemalloc"} <= set(res["measurements"])


def test_data_and_lloyd_step():
    X = run.gaussian_mixture(1000, 3, 4, seed=1)
    assert X.shape == (1000, 3) and X.min() >= -1 and X.max() <= 1
    np.testing.assert_array_equal(X, run.gaussian_mixture(1000, 3, 4, seed=1))
    C = run._initial_centroids(X, 4, 2)
    step = run.lloyd_step(X, C)
    assert step.shape == C.shape and np.all(np.isfinite(step))


def test_sampler_benchmark_case_reports_its_units():
    """benchmarks/sampler.py at a tiny size: the per-draw and per-million figures agree."""
    from benchmarks import sampler

    res = sampler.bench_case("tiny", "laplace", 30, (3, 4), repeats=1, replicas=5)
    ns = res["ns_per_draw"]["dpkmeans"]
    assert res["ms_per_million_draws"]["dpkmeans"] == pytest.approx(ns)  # 1e6 draws x ns
    assert res["params"]["elements"] == 5 * 12
    json.dumps(res)


def test_colored_sdp_benchmark_case():
    """benchmarks/colored_sdp.py at a tiny size, on synthetic data (no dataset needed)."""
    from benchmarks import colored_sdp

    X = run.gaussian_mixture(300, 2, 4, seed=1)
    res = colored_sdp.bench_case(X, repeats=1)
    assert res["d"] == 2 and res["deltas"] == [300, 8]
    assert res["measurements"]["repeats"] == 1
    assert isinstance(res["met"], bool)
    assert res["violated"] == 0 and res["rescaled"] >= 1
    assert 0 < res["trace_ratio_to_white"] <= 1 + 1e-6  # never worse than white noise
    json.dumps(res)
    assert colored_sdp.table([res]).splitlines()[2].startswith("| 2 | 300 x 8 |")


@pytest.mark.slow
def test_grading_benchmark_reports_a_class():
    """benchmarks/grading.py for a class of two on chapter 3 (no data files needed)."""
    from benchmarks import grading

    row = grading.bench_chapter(3, students=2, jobs=2)
    assert row["full_marks"] == 2 and row["students"] == 2 and row["grade_s"] > 0
    assert row["sandbox"] in ("bubblewrap", "limits") and row["target_s"] == 8.0
    json.dumps(row)


def test_numpy_path_report_from_the_rounds():
    """benchmarks/numpy_path.py's figures from two rounds of benchmark 1 (numba and numpy
    paths); the children themselves run benchmark 1, tested above."""
    from benchmarks import numpy_path

    def result(ours: float, sk: float) -> dict:
        return {"measurements": {"dpkmeans_iteration": {"median_s": ours},
                                 "sklearn_per_iteration": {"median_s": sk}},
                "ratio": ours / sk}

    rounds = [{"numba": result(0.010, 0.020), "numpy": result(0.100, 0.020)},
              {"numba": result(0.012, 0.024), "numpy": result(0.110, 0.022)}]
    summary = numpy_path.summarise(rounds)
    assert summary["iteration_s"] == pytest.approx({"numba": 0.011, "numpy": 0.105})
    assert summary["ratio_vs_sklearn"] == pytest.approx({"numba": 0.5, "numpy": 5.0})
    assert summary["ratio_numpy_over_numba"] == pytest.approx(0.105 / 0.011)
    assert summary["ratio_numpy_over_numba_via_sklearn"] == pytest.approx(10.0)
    text = numpy_path.table(summary)
    assert "| numpy |" in text and "10.00x through scikit-learn" in text


def test_standalone_benchmarks_are_recorded_from_their_own_files(tmp_path):
    """Benchmarks 6-8 run on their own; a full run records each file's figure and judges it
    against today's target (a missing file is 'not measured', never met)."""
    from benchmarks import ci_time, reproduce
    (tmp_path / "reproduce.json").write_text(json.dumps(
        {"wall_s": reproduce.TARGET_S - 1, "commit": "abc",
         "results_equal_committed": {"apdp": True, "di": False}}))
    (tmp_path / "ci_time.json").write_text(json.dumps(
        {"name": ".ci/run from a clean clone", "wall_s": ci_time.TARGET_S - 1, "exit_code": 0,
         "commit": "abc", "stages_s": {"unit": 100}}))
    records = {r["benchmark"]: r for r in run.standalone_records(tmp_path)}
    assert sorted(records) == [6, 7, 8]
    assert records[6]["measured"] is False and records[6]["met"] is False
    assert records[7]["measured"] and records[7]["met"] is False  # one file differs
    assert "1 of 2 files" in records[7]["value"]
    assert records[8]["met"] is True and records[8]["commit"] == "abc"
    table = run.standalone_table(list(records.values()))
    assert table.count("\n") == 4 and "not measured" in table


def test_the_equal_privacy_benchmark_runs_one_case():
    from benchmarks import equal_privacy as ep

    res = ep.bench_case("dplloyd", 2, repeats=1, n_records=10**4)
    assert 0 < res["ratio_to_pure"]["twin"] < 1 and res["ratio_to_pure"]["laplace_at"] <= 1.001
    assert all(e <= 1.0 for e in res["epsilon_at_delta"].values())
    assert ep.table([res]).splitlines()[2].startswith("| dplloyd | 2 | 7 |")
