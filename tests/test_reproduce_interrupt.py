"""Ctrl-C on `python -m dpkmeans reproduce`: the command stops within a few
seconds, keeps every finished cell's rows, and says how to continue; a second run resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A cell that sleeps `seconds`, then writes one row.
CELL = """\
import time

import pandas as pd

time.sleep(seconds)
if output_csv is not None:
    pd.DataFrame([{"value": seconds}]).to_csv(output_csv, index=False)
"""


#: ``python -m dpkmeans ARGS`` as a terminal starts it, with Ctrl-C neither blocked nor ignored:
#: a child inherits its parent's signal mask and ignored signals, and a test worker's may
#: differ (twice in a clean-clone run the command here never saw the SIGINT).
AS_FROM_A_TERMINAL = (
    "import runpy, signal, sys\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "sys.argv = ['dpkmeans', *sys.argv[1:]]\n"
    "runpy.run_module('dpkmeans', run_name='__main__', alter_sys=True)\n")


def tiny_book(root: Path, seconds: list[float]) -> Path:
    """A book at ``root`` whose one experiment (named as the book's first, so that `reproduce
    --only` accepts it) has one cell per value of ``seconds``."""
    sweeps = root / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("seconds = 0.1\nseed = 0\noutput_csv = None")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(sweeps / "sleep_cell.ipynb"))
    (sweeps / "dplloyd_baselines.yaml").write_text(
        "experiment: dplloyd_baselines\nnotebook: notebooks/sweeps/sleep_cell.ipynb\nseed: 1\n"
        f"grid:\n  seconds: {seconds}\n")
    return root / "_build" / "reproduce" / "dplloyd_baselines.csv"


def test_ctrl_c_stops_within_seconds_and_keeps_finished_cells(tmp_path):
    partial = tiny_book(tmp_path, [0.1, 0.2, 0.3, 300.0])
    # PYTHONFAULTHANDLER: a run still going after Ctrl-C is sent SIGABRT, and Python's
    # faulthandler prints where each of its threads stands (the failure message shows it)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1",
           "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_TERMINAL, "reproduce", "--root", str(tmp_path),
         "--jobs", "2", "--only", "dplloyd_baselines"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:  # the three short cells are in
            if partial.exists() and len(pd.read_csv(partial)) == 3:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        else:
            pytest.fail("the short cells did not finish")
        time.sleep(3)  # the long cell's kernel is up and sleeping
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            waited = time.monotonic() - start
            status = Path(f"/proc/{proc.pid}/status")  # blocked, ignored, pending signals
            signals = (" ".join(line.strip() for line in status.read_text().splitlines()
                                if line.startswith(("SigPnd", "ShdPnd", "SigBlk", "SigIgn")))
                       if status.exists() else "no /proc status")
            proc.send_signal(signal.SIGABRT)  # faulthandler dumps every thread's stack
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
            pytest.fail(f"still running {waited:.0f} s after Ctrl-C ({signals}); its "
                        f"output's end:\n{out[-2000:]}\n{err[-8000:]}")
        seconds = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print(f"exited {seconds:.2f} s after SIGINT")
    assert seconds < 10, seconds
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    # said once, by the run (what it kept, how to continue); the killed kernel is not news
    assert (out + err).count("interrupted") == 1, (out, err)
    assert "Kernel died" not in err, err
    assert sorted(pd.read_csv(partial)["value"]) == [0.1, 0.2, 0.3]
    state = tmp_path / "_build" / "reproduce" / "state.json"
    assert not state.exists() or "dplloyd_baselines" not in json.loads(
        state.read_text())["experiments"]


def test_a_cell_finishing_while_the_run_stops_keeps_its_rows(tmp_path):
    """Ctrl-C arrives (here: a cell raises KeyboardInterrupt) while another cell is finishing:
    the finishing cell's rows are kept, the cells not started are not run, and the next run
    runs only what is missing."""
    from dpkmeans.reproduce import Experiment, run_reproduce

    partial = tiny_book(tmp_path, [1.0, 2.0, 3.0, 4.0])
    calls = []

    def runner(notebook, params, workdir):
        calls.append(params["seconds"])
        if params["seconds"] == 2.0 and len(calls) <= 2:
            time.sleep(0.2)
            raise KeyboardInterrupt
        if params["seconds"] == 1.0:
            time.sleep(1.0)  # still running when the interrupt arrives
        return pd.DataFrame([{"value": params["seconds"]}])

    experiments = (Experiment("dplloyd_baselines", "5"),)
    with pytest.raises(KeyboardInterrupt):
        run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=2,
                      say=lambda s: None, progress=False)
    kept = pd.read_csv(partial)["value"].tolist()
    # the finishing cell is kept; no cell starts once the run is stopping, not even one a
    # worker takes before the main thread has seen the interrupt (CellGate)
    assert kept == [1.0] and sorted(calls) == [1.0, 2.0]
    run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=2,
                  say=lambda s: None, progress=False)
    assert sorted(calls) == [1.0, 2.0, 2.0, 3.0, 4.0]  # nothing kept ran again
    rows = pd.read_csv(tmp_path / "data" / "results" / "dplloyd_baselines.csv")
    assert rows["value"].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_no_cell_starts_after_one_fails_even_before_the_main_thread_sees_it(tmp_path):
    """One worker: the cell after a failed one would start at once in that worker (the main
    thread has not yet cancelled it); the gate refuses it, whatever the timing."""
    from dpkmeans.reproduce import Experiment, run_reproduce

    tiny_book(tmp_path, [1.0, 2.0, 3.0])
    calls = []

    def runner(notebook, params, workdir):
        calls.append(params["seconds"])
        if params["seconds"] == 1.0:
            raise KeyboardInterrupt
        return pd.DataFrame([{"value": params["seconds"]}])

    with pytest.raises(KeyboardInterrupt):
        run_reproduce(tmp_path, experiments=(Experiment("dplloyd_baselines", "5"),),
                      runner=runner, jobs=1, say=lambda s: None, progress=False)
    assert calls == [1.0]


def test_state_after_a_resumed_run_counts_every_cells_time(tmp_path):
    """`state.json`'s cell_seconds is the time of all the experiment's cells, those of the
    interrupted run included (it counted only the cells of the run that finished it)."""
    from dpkmeans.reproduce import Experiment, run_reproduce

    tiny_book(tmp_path, [1.0, 2.0, 3.0])
    stop = {"at": 3.0}

    def runner(notebook, params, workdir):
        if params["seconds"] == stop["at"]:
            raise KeyboardInterrupt
        time.sleep(0.3 if params["seconds"] == 1.0 else 0.0)
        return pd.DataFrame([{"value": params["seconds"]}])

    experiments = (Experiment("dplloyd_baselines", "5"),)
    with pytest.raises(KeyboardInterrupt):
        run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=1,
                      say=lambda s: None, progress=False)
    stop["at"] = None
    state = run_reproduce(tmp_path, experiments=experiments, runner=runner, jobs=1,
                          say=lambda s: None, progress=False)
    rows = pd.read_csv(tmp_path / "data" / "results" / "dplloyd_baselines.csv")
    assert sorted(rows["value"]) == [1.0, 2.0, 3.0]
    total = rows.groupby("cell")["cell_runtime_s"].first().sum()
    assert total >= 0.3  # the cell of the interrupted run (its 0.3 s sleep) is in it
    assert state["experiments"]["dplloyd_baselines"]["cell_seconds"] == round(total, 1)
    saved = json.loads((tmp_path / "_build" / "reproduce" / "state.json").read_text())
    assert saved["experiments"]["dplloyd_baselines"]["cell_seconds"] == round(total, 1)
