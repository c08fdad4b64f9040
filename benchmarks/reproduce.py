"""Wall-clock time of ``make reproduce``: every paper-scale sweep of the book from nothing, with
the time of each chapter's sweep (benchmark 7; target since 2026-11-26: at most 15 minutes on
2 cores, from an empty kernel cache, with results equal to the committed ones).

Run it on a quiet machine, from the repository root::

    .venv/bin/python -m benchmarks.reproduce            # writes benchmarks/reproduce.json

The compiled kernels are built again into an empty folder (``DPKMEANS_KERNEL_DIR`` and
``NUMBA_CACHE_DIR``), as on a fresh machine. It rewrites ``data/results/`` with what the sweeps compute, then compares every
results file with the committed one (``git show HEAD:...``), all columns but the timings and
versions (:data:`dpkmeans.study.sweep.BOOKKEEPING`), and records which are equal. This is a
benchmark, not a test: nothing fails.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 900


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def same_as_committed(name: str) -> bool | None:
    """Whether ``data/results/<name>.csv`` equals the committed file in every column but the
    bookkeeping ones (None: nothing committed under that name)."""
    import pandas as pd

    from dpkmeans.study.sweep import BOOKKEEPING

    path = f"data/results/{name}.csv"
    shown = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True,
                           text=True)
    if shown.returncode != 0:
        return None
    committed, rerun = pd.read_csv(io.StringIO(shown.stdout)), pd.read_csv(ROOT / path)
    keep = [c for c in committed.columns if c not in BOOKKEEPING]
    if sorted(keep) != sorted(c for c in rerun.columns if c not in BOOKKEEPING):
        return False
    return bool(committed[keep].equals(rerun[keep]))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m benchmarks.reproduce",
        description="Time every paper-scale sweep of the book from nothing and an empty "
                    "kernel cache; rewrites data/results/ and benchmarks/reproduce.json."
    ).parse_args(argv)
    from dpkmeans.reproduce import run_reproduce
    from dpkmeans.study.sweep import cpu_info, pin_cell_environment

    environment = pin_cell_environment(override=True)  # inherited by the cells' kernels
    kernels = tempfile.TemporaryDirectory(prefix="dpkmeans-kernels-")
    os.environ["DPKMEANS_KERNEL_DIR"] = kernels.name  # empty: every kernel compiled again
    os.environ["NUMBA_CACHE_DIR"] = str(Path(kernels.name) / "numba")  # numba's caches too
    cpu = cpu_info()

    load_before, commit = os.getloadavg(), _commit()  # the code that runs
    start = time.perf_counter()
    state = run_reproduce(ROOT, jobs=2, restart=True)
    wall = time.perf_counter() - start
    kernels.cleanup()
    same = {name: same_as_committed(name) for name in state["experiments"]}
    result = {
        "benchmark": 7,
        "what": "python -m dpkmeans reproduce --jobs 2 --restart (every sweep, fresh, from an "
                "empty kernel cache)",
        "wall_s": round(wall, 1), "target_s": TARGET_S,
        "met": wall <= TARGET_S and all(v is not False for v in same.values()),
        "results_equal_committed": same,
        "note": "the cells of all experiments share the two workers, longest first: "
                "cell_seconds is the time an experiment's cells took (summed over workers), "
                "finished_after_s when its last cell was in",
        "experiments": {name: {key: e[key] for key in ("chapter", "cell_seconds",
                                                       "finished_after_s", "cells")}
                        for name, e in state["experiments"].items()},
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "cpu_model": cpu["model"], "cpu_family": cpu["family"],
                    "cpu_model_number": cpu["model_number"], "avx512": "avx512f" in cpu["flags"],
                    "cell_environment": environment,
                    "load_before": load_before, "load_after": os.getloadavg()},
        "commit": commit,
    }
    (ROOT / "benchmarks" / "reproduce.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
