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
from dpkmeans.errors import DPKMeansError
from dpkmeans.study import sweep
from dpkmeans.study.sweep import (
    FLOAT_FORMAT,
    append_rows,
    expand,
    load_spec,
    run_cell_notebook,
    run_sweep,
)
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
    runner = ROOT / "src" / "dpkmeans_classroom" / "runner.py"
    proc = subprocess.run([sys.executable, str(runner),
                           str(tmp_path / "notebooks" / "sweeps" / "sleep_cell.ipynb"),
                           str(tmp_path / "executed.ipynb"), str(tmp_path / "result.json"), "60",
                           str(tmp_path / "progress.jsonl"), "answers.json", "so-far.json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "result.json").read_text()) == {"error": None}
    assert TCP_WARNING not in proc.stderr, proc.stderr


# --- one line for what used to be a traceback -------------------------------------------------
def _one_error(capsys, argv: list[str]) -> str:
    from dpkmeans.cli import main

    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    others = [line for line in lines if not line.startswith("error: ")]
    assert len(errors) == 1 and all("%|" in line for line in others), lines  # + progress bars
    return errors[0]


@pytest.fixture
def quiet_environment(monkeypatch):
    """The sweep command pins the cells' BLAS variables into os.environ; not in this process."""
    from dpkmeans.study import environment

    monkeypatch.setattr(environment, "cell_environment", lambda: {})


def test_a_failing_cell_is_one_line_with_its_log_and_the_finished_rows_are_kept(
        tmp_path, capsys, quiet_environment):
    import nbformat

    tiny_book(tmp_path, [0.1, 0.2])
    notebook = tmp_path / "notebooks" / "sweeps" / "sleep_cell.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    nb.cells[1].source += "\nif seconds == 0.2:\n    raise ValueError('no such luck')\n"
    nbformat.write(nb, str(notebook))
    spec_file = tmp_path / "notebooks" / "sweeps" / "dplloyd_baselines.yaml"
    line = _one_error(capsys, ["sweep", str(spec_file)])
    assert "of sleep_cell.ipynb (seconds=0.2) failed: ValueError: no such luck" in line
    log = Path(line.rsplit("the full log is ", 1)[1])
    assert log.parent == tmp_path / "_build" / "sweep-logs"
    assert "Traceback" in log.read_text() and "no such luck" in log.read_text()
    rows = pd.read_csv(tmp_path / "data" / "results" / "dplloyd_baselines.csv")
    assert rows["value"].tolist() == [0.1]


@pytest.mark.parametrize("kind", ["folder", "other experiment", "not results", "under a file"])
def test_a_results_path_the_sweep_cannot_use_is_refused_before_any_cell(
        tmp_path, capsys, quiet_environment, kind):
    tiny_book(tmp_path, [0.1])
    spec_file = tmp_path / "notebooks" / "sweeps" / "dplloyd_baselines.yaml"
    results = tmp_path / "r.csv"
    text = {"other experiment": "experiment,cell,value\napdp,abc,1\n",
            "not results": "a,b\n1,2\n", "under a file": "x\n"}.get(kind)
    if kind == "folder":
        results.mkdir()
    else:
        results.write_text(text)
    target = results / "x.csv" if kind == "under a file" else results
    line = _one_error(capsys, ["sweep", str(spec_file), "--results", str(target)])
    assert str(target) in line and "give another --results" in line
    if text is not None:
        assert results.read_text() == text  # left as it was
    assert not (tmp_path / "data").exists()


def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path):
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\n" + "\n".join(levels)
                    + "\ngrid: {epsilon: *i}\n")
    with pytest.raises(DPKMeansError, match="more than 100000 values once its YAML aliases"):
        load_spec(bomb)
    loop = tmp_path / "loop.yaml"
    loop.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\ngrid: &g {epsilon: [*g]}\n")
    with pytest.raises(DPKMeansError, match="refers to a value that contains it"):
        load_spec(loop)
    big = tmp_path / "big.yaml"
    big.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\ngrid: {epsilon: [1]}\n"
                   + "#" * (sweep.MAX_SPEC_BYTES + 1))
    with pytest.raises(DPKMeansError, match="larger than"):
        load_spec(big)
    shared = tmp_path / "shared.yaml"  # a plain alias or two is fine
    shared.write_text("experiment: x\nnotebook: n.ipynb\nseed: 1\nfixed: &f {runs: 2}\n"
                      "grid: {epsilon: [1, 2]}\nsmoke: {fixed: *f}\n")
    assert load_spec(shared, smoke=True).fixed == {"runs": 2}


def test_every_cell_of_the_books_sweeps_names_its_data() -> None:
    """Each book sweep's cells name a registry dataset or an alias of their paper's sweep
    record, so the check before a run sees every file (the silhouette sweep: its four)."""
    from dpkmeans.data import get_registry
    from dpkmeans.papers.registry import records

    aliases = {s.name: s.data_aliases for r in records() for s in r.sweeps}
    known = set(get_registry().names)
    for path in sorted(SWEEPS.glob("*.yaml")):
        spec = load_spec(path)
        for params in expand(spec):
            value = params.get("dataset", params.get("case"))
            if isinstance(value, str):
                assert value in known or value in aliases.get(spec.experiment, {}), (path, value)
        assert set(sweep.sweep_datasets(spec)) <= known
    assert sweep.sweep_datasets(load_spec(SWEEPS / "silhouette.yaml")) == (
        "covtype", "magic", "abalone", "blood")
    assert sweep.sweep_datasets(load_spec(SWEEPS / "colored.yaml")) == ("marketing_campaign",)
    assert sweep.sweep_datasets(load_spec(SWEEPS / "audit_power.yaml")) == ()


def test_the_notebook_command_reruns_a_notebook_without_the_tcp_warning(tmp_path):
    tiny_book(tmp_path, [0.1])
    notebook = tmp_path / "notebooks" / "sweeps" / "sleep_cell.ipynb"
    out_csv = tmp_path / "rows.csv"
    proc = subprocess.run([sys.executable, "-m", "dpkmeans", "notebook", str(notebook),
                           str(tmp_path / "out.ipynb"), "-p", "seconds", "0.25",
                           "-p", "output_csv", str(out_csv)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 0, proc.stderr
    assert pd.read_csv(out_csv)["value"].tolist() == [0.25]
    assert TCP_WARNING not in proc.stderr, proc.stderr
