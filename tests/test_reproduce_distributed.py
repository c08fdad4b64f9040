"""`reproduce --scheduler ADDRESS` on a real Dask cluster: a `dask scheduler` and two
`dask worker` processes on 127.0.0.1. The cluster's results are the local run's bit for bit (all
but the bookkeeping columns), a run resumes from the rows an earlier one kept, Ctrl-C and a
failed cell keep the finished cells' rows, and a cluster that cannot run the cells is one clear
error."""

from __future__ import annotations

import _thread
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans.cli import main
from dpkmeans.errors import DPKMeansError
from dpkmeans.extras import MissingExtraError
from dpkmeans.reproduce import Experiment, ReproduceInterrupted, run_reproduce
from dpkmeans.study import environment
from dpkmeans.study.cluster import ClusterCells, ClusterError, cell_pool
from dpkmeans.study.sweep import BOOKKEEPING, SweepCellError, load_spec

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
DASK = Path(sys.executable).parent / "dask"
#: Seconds the cluster may take to start (two workers, each a nanny and its process).
START_TIMEOUT_S = 60

#: A cell that fails for a negative ``seconds``, else waits while the file ``hold`` exists (at
#: most ``seconds``), then writes one row: its value and its kernel's process id.
SLEEP_CELL = """\
import os
import time

import pandas as pd

if seconds < 0:
    raise ValueError("a negative time")
start = time.monotonic()
while hold and os.path.exists(hold) and time.monotonic() - start < seconds:
    time.sleep(0.05)
if output_csv is not None:
    pd.DataFrame([{"value": seconds, "kernel": os.getpid()}]).to_csv(output_csv, index=False)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process's group (a worker's nanny and its process), SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[str]:
    """The address of a scheduler with two one-thread workers on 127.0.0.1 (this tree's src on
    their PYTHONPATH, as the cells' kernels need); every process is stopped at the end."""
    if not DASK.exists():
        pytest.skip(f"no dask command next to {sys.executable}")
    distributed = pytest.importorskip("distributed")
    folder = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{free_port()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("DPKMEANS_OFFLINE", None)
    common = {"env": env, "cwd": folder, "start_new_session": True,
              "stdout": subprocess.DEVNULL}
    procs = []
    try:
        procs.append(subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":")[-1],
             "--no-dashboard"], stderr=open(folder / "scheduler.log", "w"), **common))
        for i in range(2):
            procs.append(subprocess.Popen(
                [str(DASK), "worker", address, "--nthreads", "1", "--no-dashboard",
                 "--host", "127.0.0.1", "--name", f"w{i}", "--local-directory", str(folder)],
                stderr=open(folder / f"worker{i}.log", "w"), **common))
        with distributed.Client(address, timeout=START_TIMEOUT_S,
                                set_as_default=False) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT_S)
        yield address
    finally:
        for proc in reversed(procs):
            stop(proc)


def copy_cell(root: Path, notebook: str) -> Path:
    sweeps = root / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "notebooks" / "sweeps" / notebook, sweeps / notebook)
    return sweeps


def home_ground_book(root: Path) -> Experiment:
    """A book at ``root`` whose one experiment runs four small cells of FastLloyd's home-ground
    notebook (the library's code: data, fits, noise, BLAS)."""
    sweeps = copy_cell(root, "fastlloyd_home_cell.ipynb")
    (sweeps / "fastlloyd_home.yaml").write_text(
        "experiment: fastlloyd_home\nnotebook: notebooks/sweeps/fastlloyd_home_cell.ipynb\n"
        "seed: 7\nfixed: {base_seed: 20261129, runs: 2}\ngrid:\n  k: [3, 2]\n  d: [3, 2]\n")
    return Experiment("fastlloyd_home", "12", needs_data=False)


def sleep_book(root: Path, seconds: list[float], hold: Path | None = None) -> Experiment:
    """A book at ``root`` whose one experiment has one :data:`SLEEP_CELL` a value of
    ``seconds``."""
    sweeps = root / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell(
        "seconds = 0.1\nhold = ''\nseed = 0\noutput_csv = None")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, nbformat.v4.new_code_cell(SLEEP_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(sweeps / "sleep_cell.ipynb"))
    (sweeps / "sleepy.yaml").write_text(
        "experiment: sleepy\nnotebook: notebooks/sweeps/sleep_cell.ipynb\nseed: 1\n"
        f"fixed: {{hold: '{hold or ''}'}}\ngrid:\n  seconds: {seconds}\n")
    return Experiment("sleepy", "5", needs_data=False)


def results_text(root: Path, name: str) -> pd.DataFrame:
    """The results file as text, bookkeeping columns left out (the rest must match byte for
    byte)."""
    rows = pd.read_csv(root / "data" / "results" / f"{name}.csv", dtype=str,
                       keep_default_na=False)
    return rows[[c for c in rows.columns if c not in BOOKKEEPING]]


def idle_within(address: str, seconds: float) -> bool:
    """Whether every worker of the cluster is running no task within ``seconds``."""
    import distributed

    with distributed.Client(address, timeout=10, set_as_default=False) as client:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            busy = client.run(lambda dask_worker: dask_worker.state.executing_count)
            if not any(busy.values()):
                return True
            time.sleep(0.2)
    return False


def quiet(lines: list[str]):
    return dict(say=lines.append, progress=False)


def test_the_cluster_gives_the_local_results_bit_for_bit_and_resumes(tmp_path, cluster):
    local, remote = tmp_path / "local", tmp_path / "remote"
    experiment = home_ground_book(local)
    home_ground_book(remote)
    run_reproduce(local, experiments=[experiment], jobs=2, **quiet([]))
    expected = pd.read_csv(local / "data" / "results" / "fastlloyd_home.csv", dtype=str,
                           keep_default_na=False)
    # an earlier run kept the rows of the grid's third cell: the cluster runs the three others
    partial = remote / "_build" / "reproduce" / "fastlloyd_home.csv"
    partial.parent.mkdir(parents=True)
    kept = expected["cell"].unique()[2]
    expected[expected["cell"] == kept].to_csv(partial, index=False)
    said: list[str] = []
    state = run_reproduce(remote, experiments=[experiment], scheduler=cluster, **quiet(said))
    assert "[1/1] fastlloyd_home (chapter 12): 4 cells, 3 to run" in said
    assert state["experiments"]["fastlloyd_home"]["cells"] == 4
    got = results_text(remote, "fastlloyd_home")
    assert got.columns.tolist() == results_text(local, "fastlloyd_home").columns.tolist()
    pd.testing.assert_frame_equal(got, results_text(local, "fastlloyd_home"))
    rows = pd.read_csv(remote / "data" / "results" / "fastlloyd_home.csv", dtype=str)
    assert rows["cell"].tolist() == expected["cell"].tolist()  # the grid's order
    assert rows["cell_runtime_s"][rows["cell"] == kept].tolist() == (  # kept, not rerun
        expected["cell_runtime_s"][expected["cell"] == kept].tolist())
    assert not partial.exists()


def test_ctrl_c_on_the_cluster_keeps_the_finished_cells_and_the_next_run_resumes(
        tmp_path, cluster):
    hold = tmp_path / "hold"
    hold.touch()
    experiment = sleep_book(tmp_path, [0.1, 0.2, 0.3, 120.0], hold)
    partial = tmp_path / "_build" / "reproduce" / "sleepy.csv"

    interrupted_at: list[float] = []

    def interrupt_when_the_short_cells_are_in() -> None:
        deadline = time.monotonic() + 300  # a loaded machine starts the kernels slowly
        while time.monotonic() < deadline:
            if partial.exists() and len(pd.read_csv(partial)) == 3:
                time.sleep(1.0)  # the long cell is running on its worker
                break
            time.sleep(0.1)
        interrupted_at.append(time.monotonic())
        _thread.interrupt_main()

    said: list[str] = []
    threading.Thread(target=interrupt_when_the_short_cells_are_in, daemon=True).start()
    with pytest.raises(ReproduceInterrupted):
        run_reproduce(tmp_path, experiments=[experiment], scheduler=cluster, **quiet(said))
    assert interrupted_at and time.monotonic() - interrupted_at[0] < 30  # within seconds
    kept = pd.read_csv(partial)
    assert sorted(kept["value"]) == [0.1, 0.2, 0.3]
    assert kept["kernel"].nunique() < 3  # three cells, two workers: a kernel was kept warm
    assert any(line.startswith("interrupted:") and "run the command again" in line
               for line in said)
    assert idle_within(cluster, 15)  # the long cell's kernel was killed (`hold` is still there)
    hold.unlink()  # the long cell now returns at once; its kernel was killed, not left running
    said.clear()
    run_reproduce(tmp_path, experiments=[experiment], scheduler=cluster, **quiet(said))
    assert "[1/1] sleepy (chapter 5): 4 cells, 1 to run" in said
    rows = pd.read_csv(tmp_path / "data" / "results" / "sleepy.csv")
    assert rows["value"].tolist() == [0.1, 0.2, 0.3, 120.0]


def test_a_failed_cell_on_the_cluster_stops_the_run_and_keeps_the_finished_ones(
        tmp_path, cluster):
    experiment = sleep_book(tmp_path, [0.1, -1.0, 0.2, 0.3, 0.4])
    with pytest.raises(SweepCellError, match="ValueError: a negative time"):
        run_reproduce(tmp_path, experiments=[experiment], scheduler=cluster, **quiet([]))
    kept = pd.read_csv(tmp_path / "_build" / "reproduce" / "sleepy.csv")["value"].tolist()
    assert 0.1 in kept and -1.0 not in kept


def test_an_unreachable_scheduler_is_one_clear_error_within_seconds(tmp_path):
    experiment = sleep_book(tmp_path, [0.1])
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    start = time.monotonic()
    with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at '{address}'"):
        ClusterCells(address, [load_spec(experiment.sweep(tmp_path))], timeout=2)
    assert time.monotonic() - start < 15
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler"):
        cell_pool(2, "no-such-scheme://nowhere")


def test_a_scheduler_without_workers_is_one_clear_error(tmp_path):
    if not DASK.exists():
        pytest.skip(f"no dask command next to {sys.executable}")
    port = free_port()
    proc = subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                             "--no-dashboard"], cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.2)
        with pytest.raises(ClusterError, match="has no worker .*start some with `dask worker"):
            ClusterCells(f"tcp://127.0.0.1:{port}", [], timeout=2)
    finally:
        stop(proc)


def test_a_worker_that_cannot_see_the_notebooks_is_named(tmp_path, cluster):
    experiment = sleep_book(tmp_path, [0.1])
    spec = load_spec(experiment.sweep(tmp_path))
    elsewhere = tmp_path / "only-here" / "sleep_cell.ipynb"
    spec = dataclasses.replace(spec, notebook=elsewhere)
    with pytest.raises(ClusterError, match=f"worker tcp://127.0.0.1:[0-9]+ cannot see "
                                           f"{elsewhere}: every worker needs the repository"):
        ClusterCells(cluster, [spec])


def test_without_distributed_the_error_names_the_dask_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingExtraError, match=r"reproduce --scheduler needs distributed, "
                                                r"which the 'dask' extra installs"):
        cell_pool(2, "tcp://127.0.0.1:8786")


def test_the_command_refuses_jobs_with_a_scheduler(capsys, monkeypatch):
    monkeypatch.setattr(environment, "cell_environment", lambda: {})
    assert main(["reproduce", "--scheduler", "tcp://127.0.0.1:8786", "--jobs", "4"]) == 2
    assert "--jobs and --scheduler" in capsys.readouterr().err
    assert issubclass(ClusterError, DPKMeansError)
