"""Sweeps refuse what they used to accept silently, write their files whole, and keep the
kernels quiet (regression tests: a half-written file, an unknown parameter or an experiment
name outside data/results/ accepted, and every kernel start printing a warning)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from dpkmeans import files
from dpkmeans.study import sweep
from dpkmeans.errors import DPKMeansError
from dpkmeans.study.sweep import (FLOAT_FORMAT, append_rows, expand, load_spec, run_cell_notebook,
                                  run_sweep)
from tests.test_reproduce_interrupt import tiny_book

ROOT = Path(__file__).resolve().parents[2]
SWEEPS = ROOT / "notebooks" / "sweeps"
TCP_WARNING = "without encryption"


# --- item 5: silent acceptance ---------------------------------------------------------------
def test_an_unknown_parameter_is_refused_listing_the_cells_parameters(tmp_path):
    spec_file = tmp_path / "notebooks" / "sweeps" / "x.yaml"
    tiny_book(tmp_path, [0.1])
    spec_file.write_text("experiment: x\nnotebook: notebooks/sweeps/sleep_cell.ipynb\nseed: 1\n"
                         "fixed: {secnods: 2}\ngrid: {seconds: [0.1]}\n")
    spec = load_spec(spec_file)
    with pytest.raises(DPKMeansError, match=r"\['secnods'\] are not parameters of "
                                            r"sleep_cell.ipynb; its parameters are \['seconds'\]"):
        sweep.check_spec(spec)
    with pytest.raises(DPKMeansError, match="secnods"):  # before any cell runs
        run_sweep(spec, results_path=tmp_path / "r.csv", progress=False)
    assert not (tmp_path / "r.csv").exists()
    spec_file.write_text("experiment: x\nnotebook: notebooks/sweeps/sleep_cell.ipynb\nseed: 1\n"
                         "grid: {case: [a]}\ncases: {a: {seconds: 1, sleep: 2}}\n")
    with pytest.raises(DPKMeansError, match=r"\['case', 'sleep'\] are not parameters"):
        sweep.check_spec(load_spec(spec_file))


@pytest.mark.parametrize("path", sorted(SWEEPS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_sweep_of_the_book_passes_the_checks(path):
    for smoke in (False, True):
        sweep.check_spec(load_spec(path, smoke=smoke))


@pytest.mark.parametrize("name", ["../../x", "a/b", "x.csv", "", "1st", "a b"])
def test_experiment_names_are_plain_identifiers(tmp_path, name):
    spec_file = tmp_path / "notebooks" / "sweeps" / "x.yaml"
    spec_file.parent.mkdir(parents=True)
    spec_file.write_text(f"experiment: {json.dumps(name)}\nnotebook: n.ipynb\nseed: 1\n"
                         "grid: {epsilon: [1]}\n")
    with pytest.raises(DPKMeansError, match="not a plain identifier"):
        load_spec(spec_file)


def test_a_sweep_file_outside_notebooks_sweeps_resolves_against_its_own_folder(tmp_path):
    folder = tmp_path / "my" / "study"
    tiny_book(tmp_path / "book", [0.1])
    folder.mkdir(parents=True)
    (folder / "cell.ipynb").write_bytes(
        (tmp_path / "book" / "notebooks" / "sweeps" / "sleep_cell.ipynb").read_bytes())
    (folder / "s.yaml").write_text("experiment: s\nnotebook: cell.ipynb\nseed: 1\n"
                                   "grid: {seconds: [0.1]}\n")
    spec = load_spec(folder / "s.yaml")
    assert spec.notebook == folder / "cell.ipynb"
    assert spec.results_path == folder / "data" / "results" / "s.csv"
    sweep.check_spec(spec)
    # in a book: the folder above notebooks/sweeps/, whatever the working directory
    book_spec = load_spec(tmp_path / "book" / "notebooks" / "sweeps" / "dplloyd_baselines.yaml")
    assert book_spec.notebook == tmp_path / "book" / "notebooks" / "sweeps" / "sleep_cell.ipynb"
    assert book_spec.results_path == (tmp_path / "book" / "data" / "results"
                                      / "dplloyd_baselines.csv")


# --- item 2: files written whole -------------------------------------------------------------
def _rows(values: list[float], extra: dict | None = None) -> pd.DataFrame:
    return pd.DataFrame({"cell": ["c"] * len(values), "value": values, **(extra or {})})


def test_appending_rows_replaces_the_file_whole_with_the_same_content(tmp_path, monkeypatch):
    path = tmp_path / "r.csv"
    first, second = _rows([1 / 3, 2.0]), _rows([0.1 + 0.2])
    append_rows(path, first)
    append_rows(path, second)
    expected = (first.to_csv(index=False, float_format=FLOAT_FORMAT)
                + second.to_csv(index=False, header=False, float_format=FLOAT_FORMAT))
    assert path.read_text() == expected  # what appending in place wrote
    before = path.read_text()

    def crash(fd):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "fsync", crash)
    with pytest.raises(OSError, match="disk full"):
        append_rows(path, _rows([5.0]))
    with pytest.raises(OSError, match="disk full"):
        append_rows(path, _rows([5.0], {"new_column": [1]}))
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]  # no temporary file left


def test_reproduce_writes_its_results_and_state_through_the_atomic_writer(tmp_path, monkeypatch):
    from dpkmeans.reproduce import Experiment, run_reproduce

    tiny_book(tmp_path, [1.0, 2.0])
    written = []
    original = files.write_text

    def recording(path, text, **kwargs):
        written.append(Path(path).relative_to(tmp_path).as_posix())
        original(path, text, **kwargs)

    from dpkmeans import reproduce

    for module in (files, reproduce, sweep):  # wherever the name is bound
        monkeypatch.setattr(module, "write_text", recording, raising=False)
    run_reproduce(tmp_path, experiments=(Experiment("dplloyd_baselines", "5"),), jobs=1,
                  runner=lambda nb, params, wd: pd.DataFrame([{"value": params["seconds"]}]),
                  say=lambda s: None, progress=False)
    assert {"_build/reproduce/dplloyd_baselines.csv", "data/results/dplloyd_baselines.csv",
            "_build/reproduce/state.json"} <= set(written)


# --- item 9: kernel noise --------------------------------------------------------------------
def test_a_cells_kernel_prints_no_tcp_warning(tmp_path, capfd):
    tiny_book(tmp_path, [0.1])
    spec = load_spec(tmp_path / "notebooks" / "sweeps" / "dplloyd_baselines.yaml")
    with tempfile.TemporaryDirectory() as work:
        rows = run_cell_notebook(spec.notebook, expand(spec)[0], Path(work))
    assert rows["value"].tolist() == [0.1]
    assert TCP_WARNING not in capfd.readouterr().err


def test_the_grading_runner_prints_no_tcp_warning(tmp_path):
    tiny_book(tmp_path, [0.1])
    runner = ROOT / "src" / "dpkmeans" / "assignments" / "runner.py"
    proc = subprocess.run([sys.executable, str(runner),
                           str(tmp_path / "notebooks" / "sweeps" / "sleep_cell.ipynb"),
                           str(tmp_path / "executed.ipynb"), str(tmp_path / "result.json"), "60"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "result.json").read_text()) == {"error": None}
    assert TCP_WARNING not in proc.stderr, proc.stderr
