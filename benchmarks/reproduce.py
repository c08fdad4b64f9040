"""Wall-clock time of ``make reproduce``: every paper-scale sweep of the book from nothing, with
the time of each chapter's sweep (target: at most 30 minutes on 2 cores).

Run it on a quiet machine, from the repository root::

    .venv/bin/python -m benchmarks.reproduce            # writes benchmarks/reproduce.json

It rewrites ``data/results/`` with what the sweeps compute (the same numbers, if the book is
reproducible: ``git diff data/results`` shows any difference). This is a benchmark, not a
test: nothing fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1800


def _commit() -> str:
    import subprocess
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m benchmarks.reproduce",
        description="Time every paper-scale sweep of the book from nothing (about 28 minutes); "
                    "rewrites data/results/ and benchmarks/reproduce.json.").parse_args(argv)
    from dpkmeans.reproduce import run_reproduce
    from dpkmeans.study.sweep import cpu_info, pin_cell_environment

    environment = pin_cell_environment(override=True)  # inherited by the cells' kernels
    cpu = cpu_info()

    load_before, commit = os.getloadavg(), _commit()  # the code that runs
    start = time.perf_counter()
    state = run_reproduce(ROOT, jobs=2, restart=True)
    wall = time.perf_counter() - start
    result = {
        "what": "python -m dpkmeans reproduce --jobs 2 --restart (every sweep, fresh)",
        "wall_s": round(wall, 1), "target_s": TARGET_S, "met": wall <= TARGET_S,
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
