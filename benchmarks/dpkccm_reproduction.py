"""Wall-clock time of the whole DP-KCCM reproduction (issue 6: at most 15 minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/dpkccm.yaml`` (20 x 50 runs per point) into a temporary
results file, two cells at a time with one BLAS thread per kernel, exactly as the README's
command does, and records the total wall time and each cell's time: the "epsilon" cell of a
dataset is its figure among figures 3-8, the "k" cell its figure among 9-14 (without the
point it shares with the epsilon figure), "ablations" the chapter's ablation table.

    python -m benchmarks.dpkccm_reproduction            # full run, writes the JSON below
    python -m benchmarks.dpkccm_reproduction --results data/results/dpkccm.csv
                                                        # the same, keeping the results (a
                                                        # fresh file: it must not exist)
    python -m benchmarks.dpkccm_reproduction --smoke    # the CI grid, prints only
    python -m benchmarks.dpkccm_reproduction --record data/results/dpkccm.csv --wall 1195 \
        --note "..."   # record a sweep that already ran (its wall time from its own log)

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "dpkccm.yaml"
OUT = ROOT / "benchmarks" / "dpkccm_reproduction.json"
TARGET_S = 15 * 60
FIGURES = {"epsilon": "NICV vs epsilon (figs 3-8)", "k": "NICV vs k (figs 9-14)",
           "ablations": "ablations"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the CI grid; print only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--record", help="a results CSV of a sweep that already ran")
    parser.add_argument("--wall", type=float, help="with --record: its measured wall time (s)")
    parser.add_argument("--note", default="", help="with --record: how it was measured")
    parser.add_argument("--results", help="keep the timed run's results here (a new file)")
    args = parser.parse_args(argv)
    if args.results and Path(args.results).exists():
        parser.error(f"{args.results} exists: the timed run must start from no results")
    if args.record:
        if args.wall is None:
            parser.error("--record needs --wall")
        import pandas as pd

        rows = pd.read_csv(args.record)
        report = _report(rows, args.wall, smoke=False, jobs=args.jobs, load=None)
        report["what"] = f"recorded run of {args.record}: {args.note}"
        print(json.dumps(report, indent=2))
        OUT.write_text(json.dumps(report, indent=2) + "\n")
        return 0
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # inherited by the kernels: one BLAS thread per cell

    from dpkmeans.sweep import load_spec, run_sweep

    spec = load_spec(SPEC, smoke=args.smoke)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.results) if args.results else Path(tmp) / "r.csv"
        start = time.perf_counter()
        rows = run_sweep(spec, jobs=args.jobs, results_path=out, progress=False)
        wall = time.perf_counter() - start
    report = _report(rows, wall, smoke=args.smoke, jobs=args.jobs, load=load_before)
    if OUT.exists() and not args.smoke:  # the run this one replaces, for the comparison
        previous = json.loads(OUT.read_text())
        report["previous"] = {"wall_s": previous["wall_s"], "what": previous.get("what", ""),
                              "sampler": previous.get("sampler", "continuous (numpy float64)")}
        report["ratio_to_previous"] = round(wall / previous["wall_s"], 3)
    print(json.dumps(report, indent=2))
    if not args.smoke:
        OUT.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _report(rows, wall: float, *, smoke: bool, jobs: int, load) -> dict:
    """The JSON report of one sweep run: wall time and each cell's time."""
    cells = rows.groupby(["dataset", "axis"], sort=False)["cell_runtime_s"].first()
    return {
        "what": "python -m dpkmeans sweep notebooks/sweeps/dpkccm.yaml --jobs 2 (fresh results)",
        "sampler": "discrete (exact, dpkmeans.discrete)",
        "smoke": smoke, "jobs": jobs, "wall_s": round(wall, 1),
        "target_s": TARGET_S, "met": wall <= TARGET_S,
        "cells_s": {f"{FIGURES[a]}: {d}": round(float(t), 1) for (d, a), t in cells.items()},
        "cpu_s_total": round(float(cells.sum()), 1),
        "points": int(rows["epsilon"].notna().sum()),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "load_before": load, "load_after": os.getloadavg()},
    }


if __name__ == "__main__":
    raise SystemExit(main())
