"""Bad input to `sweep` and `reproduce` is one line, `error: ...`, exit code 2, no traceback;
a closed pipe is silent; the help says what the commands do. Regression test: these printed
full tracebacks, and `reproduce --only ""` started the whole run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpkmeans.cli import build_parser, main
from dpkmeans.study import environment

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "notebooks" / "sweeps" / "dplloyd_baselines.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.fixture(autouse=True)
def _no_pinned_environment(monkeypatch):
    """The commands pin the cells' BLAS variables into os.environ; not in this process."""
    monkeypatch.setattr(environment, "cell_environment", lambda: {})


def one_error(capsys, argv: list[str], match: str) -> str:
    """Run the CLI in-process: exit code 2 and one stderr line `error: ...` naming ``match``."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert match in lines[0], lines[0]
    return lines[0]


def book(root: Path, yaml_text: str, name: str = "dplloyd_baselines") -> Path:
    path = root / "notebooks" / "sweeps" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml_text)
    return path


def test_sweep_bad_inputs(capsys, tmp_path):
    bad = book(tmp_path, "experiment: x\nnotebook: n.ipynb\nseed: 1\ngrid: {epsilon: [1, 2]\n")
    one_error(capsys, ["sweep", str(bad)], "not valid YAML (line")
    one_error(capsys, ["sweep", str(tmp_path / "absent.yaml")], "no sweep file at")
    one_error(capsys, ["sweep", str(SPEC), "--jobs", "0"], "--jobs must be at least 1, got 0")
    book(tmp_path, "- just\n- a list\n")
    one_error(capsys, ["sweep", str(bad)], "must be a mapping")
    book(tmp_path, "experiment: x\nnotebook: notebooks/sweeps/absent.ipynb\nseed: 1\n"
                   "grid: {epsilon: [1]}\n")
    one_error(capsys, ["sweep", str(bad)], "no notebook at")
    book(tmp_path, "experiment: x\nnotebook: n.ipynb\nseed: one\ngrid: {epsilon: [1]}\n")
    one_error(capsys, ["sweep", str(bad)], "seed must be an integer")


def test_sweep_missing_notebook_says_where_it_looked(capsys, tmp_path):
    elsewhere = tmp_path / "copy.yaml"
    elsewhere.write_text(SPEC.read_text())
    line = one_error(capsys, ["sweep", str(elsewhere), "--smoke"], "no notebook at")
    assert str(tmp_path) in line and "own folder" in line


def test_reproduce_bad_inputs(capsys, tmp_path):
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--jobs", "0"],
              "--jobs must be at least 1")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", ""], "empty name")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", "di,,apdp"], "empty name")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", "nope"],
              "unknown experiments ['nope']")
    one_error(capsys, ["reproduce", "--root", str(tmp_path / "absent")], "no such folder")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", "dplloyd_baselines"],
              "no sweep file at")
    book(tmp_path, "experiment: dplloyd_baselines\nnotebook: n.ipynb\nseed: [1\n")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", "dplloyd_baselines"],
              "not valid YAML")
    book(tmp_path, "experiment: dplloyd_baselines\nnotebook: notebooks/sweeps/n.ipynb\n"
                   "seed: 1\ngrid: {epsilon: [1]}\n")
    one_error(capsys, ["reproduce", "--root", str(tmp_path), "--only", "dplloyd_baselines"],
              "no notebook at")
    assert not (tmp_path / "_build" / "reproduce" / "state.json").exists()


def test_the_real_entry_point_prints_one_line(tmp_path):
    bad = book(tmp_path, "experiment: x\nnotebook: n.ipynb\nseed: 1\ngrid: {epsilon: [1, 2]\n")
    for argv in (["sweep", str(bad)], ["reproduce", "--root", str(tmp_path), "--only", ""]):
        proc = subprocess.run([sys.executable, "-m", "dpkmeans", *argv], env=ENV,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_closed_pipe_is_silent():
    """`python -m dpkmeans datasets info magic | head`: the reader has gone; no traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "dpkmeans", "datasets", "info", "magic"],
                              env=ENV, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    finally:
        os.close(write)
    assert proc.stderr == "" and proc.returncode == 1


def help_of(*argv: str) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return ""


def test_help_texts(capsys):
    from dpkmeans.reproduce import EXPERIMENTS

    help_of()
    top = capsys.readouterr().out
    assert "describe" not in top and "info" in top
    help_of("reproduce")
    text = capsys.readouterr().out
    assert all(e.name in text for e in EXPERIMENTS)
    assert "_build/reproduce/" in text and "state.json" in text
    for command in ("verify", "info", "list"):
        help_of("datasets", command)
        lines = capsys.readouterr().out.splitlines()
        line = next(i for i, s in enumerate(lines) if s.strip().startswith("--data-home"))
        described = lines[line].split("DATA_HOME", 1)[1].strip() or lines[line + 1].strip()
        assert described, lines
