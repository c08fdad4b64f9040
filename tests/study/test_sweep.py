"""Sweeps: grid expansion, stable seeds, resume, a real papermill smoke run, and spot checks
of the committed results (``docs/design.md``, "Notebooks and chapters")."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.data import DataError
from dpkmeans.papers.su.study import evaluate
from dpkmeans.study.sweep import cell_id, cell_seed, expand, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "dplloyd_baselines.yaml"
RESULTS = ROOT / "data" / "results" / "dplloyd_baselines.csv"
METRICS = ["nicv", "nicv_unsquared", "relative_nicv", "f_hungarian", "f_larsen_aone", "ari",
           "epsilon_spent"]


def test_grid_expansion_and_smoke_override():
    full, smoke = load_spec(SPEC), load_spec(SPEC, smoke=True)
    cells = expand(full)
    assert len(cells) == 4 * 3 * 6
    assert len(expand(smoke)) == 4 and all(c["replicas"] == 3 for c in expand(smoke))
    blood = next(c for c in cells if c["case"] == "blood")
    assert blood["dataset"] == "blood" and blood["paper"] == "dp-kccm" and blood["k"] == 4
    assert len({c["seed"] for c in cells}) == len(cells)


def test_cell_seeds_are_stable_and_local():
    params = {"case": "blood", "epsilon": 0.5}
    assert cell_seed(1, params) == cell_seed(1, dict(reversed(params.items())))
    assert cell_seed(1, params) != cell_seed(2, params)
    assert 0 <= cell_seed(1, params) < 2**63


def test_resume_skips_finished_cells(tmp_path):
    spec = load_spec(SPEC, smoke=True)
    calls = []

    def fake_runner(notebook, params, workdir):
        calls.append(params["seed"])
        return pd.DataFrame({"replica": [0], "nicv": [float(params["epsilon"])]})

    out = tmp_path / "results.csv"
    first = run_sweep(spec, results_path=out, runner=fake_runner, progress=False)
    assert len(first) == 4 and len(calls) == 4
    again = run_sweep(spec, results_path=out, runner=fake_runner, progress=False)
    assert again.empty and len(calls) == 4
    table = pd.read_csv(out)
    assert len(table) == 4 and set(table["cell"]) == {cell_id(c) for c in expand(spec)}
    assert table.columns[0] == "experiment"


def test_a_relative_results_path_survives_a_runner_that_changes_directory(tmp_path, monkeypatch):
    """papermill changes the process's working directory while a cell runs; with two workers
    the other thread's rows must still land in the file the caller named (a relative path
    used to break the timed DP-KCCM reproduction)."""
    spec = load_spec(SPEC, smoke=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)

    def wandering_runner(notebook, params, workdir):
        os.chdir(elsewhere)  # what papermill's cwd= does, process-wide
        return pd.DataFrame({"replica": [0], "nicv": [float(params["epsilon"])]})

    run_sweep(spec, results_path=Path("results.csv"), runner=wandering_runner, jobs=2,
              progress=False)
    assert len(pd.read_csv(tmp_path / "results.csv")) == 4
    assert not (elsewhere / "results.csv").exists()


def test_bad_sweep_files(tmp_path):
    bad = tmp_path / "notebooks" / "sweeps" / "bad.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\n")
    with pytest.raises(ValueError, match="missing keys \\['grid'\\]"):
        load_spec(bad)
    bad.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\ngrid: {case: [nowhere]}\n")
    with pytest.raises(ValueError, match="not defined under `cases`"):
        load_spec(bad)
    with pytest.raises(FileNotFoundError):
        load_spec(tmp_path / "absent.yaml")
    with pytest.raises(ValueError, match="jobs"):
        run_sweep(load_spec(SPEC, smoke=True), jobs=0, results_path=tmp_path / "r.csv")


def test_smoke_sweep_runs_through_papermill(tmp_path):
    """The CI smoke sweep: every smoke cell executes the real cell notebook."""
    spec = load_spec(SPEC, smoke=True)
    rows = run_sweep(spec, jobs=2, results_path=tmp_path / "smoke.csv", progress=False)
    assert len(rows) == 4 * 3
    assert np.all(np.isfinite(rows["nicv"]))
    assert np.allclose(rows["epsilon_spent"], rows["epsilon"])
    versions = rows["versions"].iloc[0]
    assert "dpkmeans=" in versions and "numpy=" in versions


def _spot_cells() -> list[tuple[dict, int]]:
    """Three committed cells (one per algorithm) and one replica of each, chosen by a fixed rule."""
    if not RESULTS.exists():
        return []
    table = pd.read_csv(RESULTS)
    cells = {cell_id(c): c for c in expand(load_spec(SPEC))}
    picks = []
    for algorithm in sorted(table["algorithm"].unique()):
        rows = table[table["algorithm"] == algorithm].sort_values(["cell", "replica"])
        row = rows.iloc[len(rows) // 3]
        picks.append((cells[row["cell"]], int(row["replica"])))
    return picks


@pytest.mark.parametrize("params, replica", _spot_cells(),
                         ids=lambda p: p["algorithm"] if isinstance(p, dict) else str(p))
def test_committed_results_reproduce(params, replica):
    table = pd.read_csv(RESULTS)
    stored = table[(table["cell"] == cell_id(params)) & (table["replica"] == replica)].iloc[0]
    kwargs = {k: v for k, v in params.items() if k not in ("case", "replicas")}
    try:
        fresh = evaluate(**kwargs, replicas=1, first_replica=replica).iloc[0]
    except DataError as err:
        pytest.skip(f"dataset not available here: {err}")
    for metric in METRICS:
        if metric in fresh and not pd.isna(stored[metric]):
            assert fresh[metric] == pytest.approx(stored[metric], rel=1e-9, abs=1e-12), metric


def test_results_file_is_committed():
    assert RESULTS.exists(), "run the sweep and commit data/results/dplloyd_baselines.csv"
    assert os.path.getsize(RESULTS) < 5 * 2**20


def _two_sweeps(root: Path, epsilons: list[float]) -> Path:
    """Sweep files "one" and "two" over ``epsilons`` in a tiny book at ``root``."""
    sweeps = root / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True)
    for name in ("one", "two"):
        (sweeps / f"{name}.yaml").write_text(
            f"experiment: {name}\nnotebook: notebooks/sweeps/cell.ipynb\nseed: 1\n"
            f"grid:\n  epsilon: {epsilons}\n")
    return sweeps


def test_reproduce_runs_each_experiment_once_resumes_and_restarts(tmp_path):
    """make reproduce's driver on two tiny experiments (a fake cell runner): results moved into
    data/results, ledgers rebuilt, the state remembered, --restart forgets it."""
    from dpkmeans.reproduce import Experiment, run_reproduce

    _two_sweeps(tmp_path, [0.5, 1.0])
    calls, finished = [], []

    def runner(notebook, params, workdir):
        calls.append(params["epsilon"])
        return pd.DataFrame([{"value": params["epsilon"] * 2}])

    def finish(root):
        finished.append(pd.read_csv(root / "data" / "results" / "two.csv")["value"].sum())

    experiments = (Experiment("one", "1"), Experiment("two", "2", finish))
    state = run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=1,
                          say=lambda s: None)
    assert sorted(state["experiments"]) == ["one", "two"] and len(calls) == 4
    assert finished == [3.0]
    assert len(pd.read_csv(tmp_path / "data" / "results" / "one.csv")) == 2
    run_reproduce(tmp_path, experiments=experiments, runner=runner, say=lambda s: None)
    assert len(calls) == 4  # nothing ran again
    run_reproduce(tmp_path, experiments=experiments, runner=runner, only=["one"], restart=True,
                  say=lambda s: None)
    assert len(calls) == 6
    from dpkmeans.errors import DPKMeansError
    with pytest.raises(DPKMeansError, match="unknown experiments \\['three'\\]"):
        run_reproduce(tmp_path, experiments=experiments, only=["three"])


def test_the_book_reproduces_every_sweep_file():
    from dpkmeans.reproduce import EXPERIMENTS

    files = {p.stem for p in (ROOT / "notebooks" / "sweeps").glob("*.yaml")}
    assert {e.name for e in EXPERIMENTS} == files


def test_reproduce_shares_one_pool_longest_first_and_keeps_each_grid_order(tmp_path):
    """The cells of both experiments run longest first (by the committed runtimes; a cell
    never run before goes first), and each results file still lists its cells in grid order,
    whatever order they finished in; a failing cell stops the run and the rest resumes."""
    from dpkmeans.reproduce import Experiment, run_reproduce
    from dpkmeans.study.sweep import cell_id

    sweeps = _two_sweeps(tmp_path, [0.5, 1.0, 2.0])
    results = tmp_path / "data" / "results"
    results.mkdir(parents=True)
    runtimes = {("one", 0.5): 1.0, ("one", 1.0): 9.0, ("two", 0.5): 5.0, ("two", 1.0): 3.0,
                ("two", 2.0): 7.0}  # ("one", 2.0) never ran: first
    for name in ("one", "two"):
        spec = load_spec(sweeps / f"{name}.yaml")
        pd.DataFrame([{"cell": cell_id(c), "cell_runtime_s": runtimes[(name, c["epsilon"])]}
                      for c in expand(spec) if (name, c["epsilon"]) in runtimes]).to_csv(
            results / f"{name}.csv", index=False)
    calls = []

    def runner(notebook, params, workdir):
        calls.append((Path(notebook).name, params["epsilon"]))
        if len(calls) == 4 and not failed:
            failed.append(True)
            raise RuntimeError("a cell failed")
        return pd.DataFrame([{"value": params["epsilon"]}, {"value": -params["epsilon"]}])

    failed: list[bool] = []
    experiments = (Experiment("one", "1"), Experiment("two", "2"))
    with pytest.raises(RuntimeError, match="a cell failed"):
        run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=1,
                      say=lambda s: None, progress=False)
    # one/2.0 (new), one/1.0, two/2.0, two/0.5 (failed); the worker may have started more
    assert [e for _, e in calls[:4]] == [2.0, 1.0, 2.0, 0.5]
    state = run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=2,
                          say=lambda s: None, progress=False)
    # every cell that finished was kept: the second run ran the others and the failed one
    assert len(calls) == 6 + 1
    for name in ("one", "two"):
        rows = pd.read_csv(results / f"{name}.csv")
        assert rows["value"].tolist() == [0.5, -0.5, 1.0, -1.0, 2.0, -2.0]
        # the replaced file's columns keep their order (not the first finished cell's)
        assert rows.columns[:2].tolist() == ["cell", "cell_runtime_s"]
        assert state["experiments"][name]["cells"] == 3
    assert state["wall_s"] >= 0


def test_reproduce_pins_the_cells_environment(monkeypatch):
    """One BLAS/OpenMP thread a cell, and on x86-64 with AVX2 and FMA OpenBLAS's AVX2 kernels
    whatever the CPU (their rounding moved chapter 9's CEDS numbers on an AVX-512 machine); a
    variable the user set is kept unless the benchmark overrides it."""
    from dpkmeans.study import environment as sweep  # numpy-free: conftest pins it early

    def flags(names):
        return lambda: {"model": None, "family": None, "model_number": None, "flags": names}

    monkeypatch.setattr(sweep.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(sweep, "cpu_info", flags({"sse2", "avx2", "fma", "avx512f"}))
    env = sweep.cell_environment()
    assert env == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "OPENBLAS_CORETYPE": "Haswell"}
    monkeypatch.setattr(sweep, "cpu_info", flags({"sse2", "avx"}))  # no AVX2: not forced
    assert "OPENBLAS_CORETYPE" not in sweep.cell_environment()
    monkeypatch.setattr(sweep.platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(sweep, "cpu_info", flags({"avx2", "fma"}))
    assert "OPENBLAS_CORETYPE" not in sweep.cell_environment()

    monkeypatch.setattr(sweep.platform, "machine", lambda: "x86_64")
    for var in env:  # set first, so that monkeypatch restores each one (or its absence)
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    seen = sweep.pin_cell_environment()
    assert seen["OMP_NUM_THREADS"] == "3" and os.environ["OPENBLAS_CORETYPE"] == "Haswell"
    assert sweep.pin_cell_environment(override=True)["OMP_NUM_THREADS"] == "1"


def test_the_sweep_command_runs_its_cells_in_the_reproduce_environment(monkeypatch, capsys):
    """`python -m dpkmeans sweep` pins the cells' environment as `make reproduce` does."""
    import argparse

    from dpkmeans.study import environment, sweep

    monkeypatch.setattr(environment, "cell_environment", lambda: {"DPKMEANS_TEST_PIN": "yes"})
    monkeypatch.setenv("DPKMEANS_TEST_PIN", "")  # so that monkeypatch removes it afterwards
    monkeypatch.delenv("DPKMEANS_TEST_PIN")
    seen = {}

    def fake_run_sweep(spec, **kwargs):
        seen["pin"] = os.environ.get("DPKMEANS_TEST_PIN")
        return pd.DataFrame()

    monkeypatch.setattr(sweep, "run_sweep", fake_run_sweep)
    args = argparse.Namespace(file=str(SPEC), smoke=True, jobs=1, results=None)
    assert sweep._cmd_sweep(args) == 0
    assert seen["pin"] == "yes"
