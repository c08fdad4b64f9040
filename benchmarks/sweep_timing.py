"""Wall-clock time of a whole reproduction sweep, as the README's command runs it.

Shared by the papers' reproduction benchmarks (``dpkccm_reproduction``,
``silhouette_reproduction``): every cell of a sweep file into a temporary results file, two
cells at a time with one BLAS thread per kernel, with the total wall time and each cell's time.
This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def main(argv: list[str] | None, *, spec_path: Path, out: Path, target_s: float,
         description: str, cell_name: Callable[[dict], str], cell_keys: list[str]) -> int:
    """The command line of a reproduction benchmark (see the calling module's docstring).
    ``cell_keys`` are the columns that identify a cell; ``cell_name`` names one cell."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--smoke", action="store_true", help="the CI grid; print only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--record", help="a results CSV of a sweep that already ran")
    parser.add_argument("--wall", type=float, help="with --record: its measured wall time (s)")
    parser.add_argument("--note", default="", help="with --record: how it was measured")
    parser.add_argument("--results", help="keep the timed run's results here (a new file)")
    args = parser.parse_args(argv)
    if args.results and Path(args.results).exists():
        parser.error(f"{args.results} exists: the timed run must start from no results")
    what = f"python -m dpkmeans sweep {spec_path.relative_to(spec_path.parents[2])} --jobs 2"

    def report(rows, wall: float, smoke: bool, load) -> dict:
        cells = rows.groupby(cell_keys, sort=False)["cell_runtime_s"].first()
        return {
            "what": f"{what} (fresh results)",
            "sampler": "discrete (exact, dpkmeans.privacy.discrete)",
            "smoke": smoke, "jobs": args.jobs, "wall_s": round(wall, 1),
            "target_s": target_s, "met": wall <= target_s,
            "cells_s": {cell_name(dict(zip(cell_keys, key if isinstance(key, tuple) else (key,),
                                               strict=True))): round(float(t), 1)
                        for key, t in cells.items()},
            "cpu_s_total": round(float(cells.sum()), 1),
            "points": int(rows["epsilon"].notna().sum()),
            "machine": {"cpu": platform.processor() or platform.machine(),
                        "cores": os.cpu_count(), "load_before": load,
                        "load_after": os.getloadavg()},
        }

    if args.record:
        if args.wall is None:
            parser.error("--record needs --wall")
        import pandas as pd

        result = report(pd.read_csv(args.record), args.wall, False, None)
        result["what"] = f"recorded run of {args.record}: {args.note}"
        print(json.dumps(result, indent=2))
        out.write_text(json.dumps(result, indent=2) + "\n")
        return 0
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # inherited by the kernels: one BLAS thread per cell

    from dpkmeans.study.sweep import load_spec, run_sweep

    spec = load_spec(spec_path, smoke=args.smoke)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.results) if args.results else Path(tmp) / "r.csv"
        start = time.perf_counter()
        rows = run_sweep(spec, jobs=args.jobs, results_path=path, progress=False)
        wall = time.perf_counter() - start
    result = report(rows, wall, args.smoke, load_before)
    if out.exists() and not args.smoke:  # the run this one replaces, for the comparison
        previous = json.loads(out.read_text())
        result["previous"] = {"wall_s": previous["wall_s"], "what": previous.get("what", ""),
                              "sampler": previous.get("sampler", "continuous (numpy float64)")}
        result["ratio_to_previous"] = round(wall / previous["wall_s"], 3)
    print(json.dumps(result, indent=2))
    if not args.smoke:
        out.write_text(json.dumps(result, indent=2) + "\n")
    return 0
