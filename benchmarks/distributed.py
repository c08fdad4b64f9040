"""The reproduction on a Dask cluster: its wall time measured on 1 and 2 local workers, and
projected on W = 1, 2, 8, 32 and 128 workers from the measured cell times.

Run it from the repository root::

    .venv/bin/python -m benchmarks.distributed                      # projection only
    .venv/bin/python -m benchmarks.distributed --measure fastlloyd_home   # and measure

**Projection.** Every committed results file (``data/results/*.csv``) records each cell's time,
``cell_runtime_s`` (once per cell: a cell's rows repeat it). A reproduction on W workers
sends the cells longest first (``reproduce --scheduler``, by Dask priority), and a worker that
finishes a cell takes the longest one left. That is Graham's (1969) longest-processing-time
list scheduling: each cell in turn, longest first, goes to the worker with the least work so
far, and the wall time is the largest worker's total. It is at least the larger of the critical
path (the longest cell: no number of workers finishes sooner) and the total cell-seconds over
W, and at most 4/3 of the best schedule (Graham 1969). ``whole_book_in_parts`` projects the
same work as the tasks the sweep files split it into (``parts:``), each part an equal share of
its cell's time (:func:`task_times`). The projection leaves out what the
measured cell times do not hold: the kernel each worker starts before its first cell (a few
seconds), the scheduler's round trips (milliseconds a cell), and the checks and file writing
of the client. The committed cell times were measured with two cells at once on a 2-core
machine, so a cell alone on a core of its own may take less.

**Measurement** (``--measure NAME``, e.g. ``fastlloyd_home``: 20 cells, no data file). For each
W of ``--workers`` (default 1 and 2): a scratch clone of this repository's HEAD, a ``dask
scheduler`` and W ``dask worker --nthreads 1`` processes on 127.0.0.1 (with this checkout's
``src`` on their PYTHONPATH; ``--workers 1,2,1,2`` interleaves two runs of each), and
``reproduce --only NAME --restart --scheduler ADDRESS`` in
the clone, timed from the start of the run to the experiment's last cell (``finished_after_s``
of ``_build/reproduce/state.json``; the cluster starts before the clock). The clone's results
file is compared with the committed one, every column but the timings and versions
(:data:`dpkmeans.study.sweep.BOOKKEEPING`), as text. The machine's load average is recorded
before and after each run: other work on the machine slows the cells. ``--wall W=SECONDS``
records a wall time measured otherwise instead.

It writes ``benchmarks/distributed.json``. This is a benchmark, not a test: nothing fails.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks.reproduce import _commit as commit  # the short HEAD, as benchmark 7 records it

ROOT = Path(__file__).resolve().parents[1]
WORKERS = (1, 2, 8, 32, 128)
OUT = ROOT / "benchmarks" / "distributed.json"
#: Seconds the local cluster may take to start.
START_TIMEOUT_S = 120


def cell_times(root: Path = ROOT) -> list[tuple[str, str, float]]:
    """(experiment, cell id, seconds) of every cell of the committed results files, each cell
    once (its rows repeat its ``cell_runtime_s``)."""
    import pandas as pd

    out = []
    for path in sorted((root / "data" / "results").glob("*.csv")):
        columns = pd.read_csv(path, nrows=0).columns
        if not {"cell", "cell_runtime_s"} <= set(columns):
            continue  # a derived file: no cells
        rows = pd.read_csv(path, usecols=["cell", "cell_runtime_s"])
        for cell, seconds in rows.groupby("cell", sort=False)["cell_runtime_s"].first().items():
            out.append((path.stem, str(cell), float(seconds)))
    return out


def task_times(cells: list[tuple[str, str, float]],
               root: Path = ROOT) -> list[tuple[str, str, float]]:
    """The same work as tasks: a cell its sweep file splits into parts (``parts:``) counts as
    that many tasks of an equal share of its committed time (the parts' own times are not
    recorded: a cell's ``cell_runtime_s`` is their sum)."""
    from dpkmeans.study.sweep import cell_id, cell_tasks, expand, load_spec

    parts: dict[tuple[str, str], int] = {}
    for sweep in sorted((root / "notebooks" / "sweeps").glob("*.yaml")):
        spec = load_spec(sweep)
        for cell in expand(spec):
            parts[(spec.experiment, cell_id(cell))] = len(cell_tasks(spec, cell))
    out = []
    for name, cell, seconds in cells:
        n = parts.get((name, cell), 1)
        out += [(name, f"{cell} part {k + 1}/{n}" if n > 1 else cell, seconds / n)
                for k in range(n)]
    return out


def longest_first(seconds: Sequence[float], workers: int) -> list[float]:
    """Each worker's total when the cells, longest first, each go to the least-loaded worker
    (Graham 1969); the wall time is the largest."""
    loads = [(0.0, w) for w in range(workers)]
    for s in sorted(seconds, reverse=True):
        load, w = heapq.heappop(loads)
        heapq.heappush(loads, (load + s, w))
    return sorted((load for load, _ in loads), reverse=True)


def projection(cells: list[tuple[str, str, float]], workers: Sequence[int] = WORKERS) -> dict:
    """The projected wall time on each number of workers, with its lower bound."""
    seconds = [s for _, _, s in cells]
    total = sum(seconds)
    name, cell, longest = max(cells, key=lambda c: c[2])
    out = {"cells": len(cells), "cell_seconds": round(total, 1),
           "critical_path": {"experiment": name, "cell": cell, "seconds": round(longest, 1)},
           "workers": {}}
    for w in workers:
        wall = longest_first(seconds, w)[0]
        bound = max(longest, total / w)
        out["workers"][str(w)] = {
            "wall_s": round(wall, 1), "wall_min": round(wall / 60, 2),
            "lower_bound_s": round(bound, 1), "speedup": round(total / wall, 2),
            "bound_by": "critical path" if longest >= total / w else "cell-seconds / W"}
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=15)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def local_cluster(workers: int, folder: Path) -> Iterator[str]:
    """A ``dask scheduler`` and ``workers`` one-thread ``dask worker`` processes on 127.0.0.1,
    with this checkout's ``src`` on their PYTHONPATH; yields the scheduler's address."""
    import distributed

    dask = Path(sys.executable).parent / "dask"
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    common = {"env": env, "cwd": folder, "start_new_session": True,
              "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":")[-1], "--no-dashboard"], **common)]
    try:
        procs += [subprocess.Popen([str(dask), "worker", address, "--nthreads", "1",
                                    "--no-dashboard", "--host", "127.0.0.1",
                                    "--local-directory", str(folder)], **common)
                  for _ in range(workers)]
        with distributed.Client(address, timeout=START_TIMEOUT_S,
                                set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=START_TIMEOUT_S)
        yield address
    finally:
        for proc in reversed(procs):
            _stop(proc)


def same_as_committed(clone: Path, name: str) -> bool:
    """Whether the clone's results file equals this checkout's, every column but the
    bookkeeping ones, as text."""
    import pandas as pd

    from dpkmeans.study.sweep import BOOKKEEPING

    def text(root: Path) -> pd.DataFrame:
        rows = pd.read_csv(root / "data" / "results" / f"{name}.csv", dtype=str,
                           keep_default_na=False)
        return rows[[c for c in rows.columns if c not in BOOKKEEPING]]

    return bool(text(clone).equals(text(ROOT)))


def measure(name: str, workers: int) -> dict:
    """One run of experiment ``name`` on a local cluster of ``workers`` workers, in a scratch
    clone of HEAD (module docstring)."""
    from dpkmeans.reproduce import run_reproduce

    with tempfile.TemporaryDirectory(prefix="dpkmeans-distributed-") as tmp:
        clone = Path(tmp) / "root"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        with local_cluster(workers, Path(tmp)) as address:
            load_before = os.getloadavg()
            start = time.perf_counter()
            state = run_reproduce(clone, only=[name], restart=True, scheduler=address,
                                  progress=False, say=lambda s: None)
            wall = time.perf_counter() - start
            load_after = os.getloadavg()
        done = state["experiments"][name]
        same = same_as_committed(clone, name)
        shutil.rmtree(clone, ignore_errors=True)
    return {"cells_wall_s": done["finished_after_s"], "run_wall_s": round(wall, 1),
            "cell_seconds": done["cell_seconds"], "cells": done["cells"],
            "results_equal_committed": same,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in load_after]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.distributed",
        description="Project the reproduction's wall time on W workers from the committed cell "
                    "times; optionally measure one experiment on 1 and 2 local Dask workers. "
                    "Writes benchmarks/distributed.json.")
    parser.add_argument("--measure", metavar="NAME",
                        help="time `reproduce --only NAME --restart --scheduler` on a local "
                             "cluster (e.g. fastlloyd_home)")
    parser.add_argument("--workers", default="1,2",
                        help="the local clusters' sizes with --measure, run in this order "
                             "(default 1,2; 1,2,1,2 interleaves two runs of each)")
    parser.add_argument("--wall", action="append", default=[], metavar="W=SECONDS",
                        help="record a wall time measured otherwise (with --measure's NAME)")
    args = parser.parse_args(argv)
    from dpkmeans.study.sweep import pin_cell_environment

    environment = pin_cell_environment()
    cells = cell_times()
    result: dict = {
        "what": "python -m benchmarks.distributed" + (f" --measure {args.measure}"
                                                      if args.measure else ""),
        "method": "longest-processing-time list scheduling (Graham 1969) of every committed "
                  "cell's cell_runtime_s; leaves out each worker's kernel start and the "
                  "scheduler's round trips",
        "whole_book": projection(cells),
        "whole_book_in_parts": projection(task_times(cells)),
        "commit": commit(), "cores": os.cpu_count(), "cell_environment": environment,
    }
    if args.measure:
        mine = [c for c in cells if c[0] == args.measure]
        runs = []
        for w in [int(x) for x in args.workers.split(",")]:  # in the order given: 1,2,1,2
            runs.append({"workers": w, **measure(args.measure, w)})  # interleaves them
            print(f"{args.measure}: {runs[-1]}", flush=True)
        for given in args.wall:
            w, _, seconds = given.partition("=")
            runs.append({"workers": int(w), "cells_wall_s": float(seconds), "given": True})
        sizes = sorted({run["workers"] for run in runs})
        fastest = {str(w): min(r["cells_wall_s"] for r in runs if r["workers"] == w)
                   for w in sizes}
        result["measured"] = {"experiment": args.measure,
                              "projection": projection(mine, sizes),
                              "fastest_cells_wall_s": fastest, "runs": runs}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
