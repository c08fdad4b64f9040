"""Benchmark 1 (one Lloyd iteration at N = 10^6, d = 10, k = 8 against scikit-learn's) on the
numpy path (numba missing, or ``DPKMEANS_NO_NUMBA=1``; ``dpkmeans.compute.fastpath``) and on the
compiled (numba) path, in one run:

    python -m benchmarks.numpy_path            # writes benchmarks/numpy_path.json
    python -m benchmarks.numpy_path --quick    # fewer repeats; prints only
    python -m benchmarks.numpy_path --out PATH

The path is decided once per process, so each path runs in a fresh process of its own
(``python -m benchmarks.numpy_path --child numba|numpy``), one after the other, each running
``benchmarks.run.bench_lloyd_iteration`` (dpkmeans interleaved with scikit-learn, as in
benchmark 1). Reported: each path's time per iteration, each against scikit-learn's measured
in the same process, and the numpy path's time over the compiled path's, directly (medians of
the two processes) and through scikit-learn (the ratio of the two ratios, which cancels a
change of the machine's load between the two processes). The children are run in the order
numba, numpy, numba, numpy, ... (``--rounds``) and the medians taken over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import run

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("numba", "numpy")


def child(path: str, quick: bool) -> dict:
    """Benchmark 1 in this process, whose path the parent set (``DPKMEANS_NO_NUMBA``)."""
    from dpkmeans.compute import fastpath

    compiled = fastpath.compiled()
    if compiled != (path == "numba"):
        raise RuntimeError(f"asked for the {path} path, got compiled={compiled}")
    reps = run.REPEATS["quick" if quick else "full"]
    res = run.bench_lloyd_iteration(repeats=reps["iteration"], sklearn_repeats=reps["sklearn"])
    res["path"] = path
    return res


def _spawn(path: str, quick: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DPKMEANS_NO_NUMBA"}
    if path == "numpy":
        env["DPKMEANS_NO_NUMBA"] = "1"
    cmd = [sys.executable, "-m", "benchmarks.numpy_path", "--child", path]
    cmd += ["--quick"] if quick else []
    load_before = run._load()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    res = json.loads(done.stdout.strip().splitlines()[-1])
    res.update({"load_average_before": load_before, "load_average_after": run._load(),
                "wall_s": time.perf_counter() - t0})
    return res


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def summarise(rounds: list[dict[str, dict]]) -> dict:
    """The figures of the report from the rounds' results (each round: path -> result)."""
    ours = {p: _median([r[p]["measurements"]["dpkmeans_iteration"]["median_s"] for r in rounds])
            for p in PATHS}
    sklearn = {p: _median([r[p]["measurements"]["sklearn_per_iteration"]["median_s"]
                           for r in rounds]) for p in PATHS}
    against = {p: _median([r[p]["ratio"] for r in rounds]) for p in PATHS}
    return {
        "iteration_s": ours, "sklearn_per_iteration_s": sklearn,
        "ratio_vs_sklearn": against,
        "ratio_numpy_over_numba": ours["numpy"] / ours["numba"],
        "ratio_numpy_over_numba_via_sklearn": against["numpy"] / against["numba"],
    }


def table(summary: dict) -> str:
    rows = ["| path | dpkmeans per iteration | scikit-learn per iteration (same process) "
            "| ratio to scikit-learn |", "|---|---|---|---|"]
    for p in PATHS:
        rows.append(f"| {p} | {run._fmt_time(summary['iteration_s'][p])} "
                    f"| {run._fmt_time(summary['sklearn_per_iteration_s'][p])} "
                    f"| {summary['ratio_vs_sklearn'][p]:.2f}x |")
    rows.append(f"\nnumpy path / numba path: {summary['ratio_numpy_over_numba']:.2f}x directly, "
                f"{summary['ratio_numpy_over_numba_via_sklearn']:.2f}x through scikit-learn")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.numpy_path", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, same sizes")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each path, alternating (default 1)")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON output (default: benchmarks/numpy_path.json for a full run, "
                             "none for --quick)")
    parser.add_argument("--child", choices=PATHS, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.quick)))
        return 0

    mode = "quick" if args.quick else "full"
    out = args.out if args.out is not None else (None if args.quick
                                                 else ROOT / "benchmarks" / "numpy_path.json")
    started = time.perf_counter()
    report = {"mode": mode, "command": "python -m benchmarks.numpy_path"
              + (f" --rounds {args.rounds}" if args.rounds != 1 else ""),
              "machine": run.machine_info(), "load_average_before": run._load(),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "results": []}  # one entry a round: path -> benchmark 1's result
    for _ in range(max(1, args.rounds)):
        this = {}
        for path in PATHS:
            this[path] = _spawn(path, args.quick)
            print(f"{path}: {run.table_row(this[path])}", file=sys.stderr, flush=True)
        report["results"].append(this)
    report["summary"] = summarise(report["results"])
    return run.finish_report(report, started, lambda _: table(report["summary"]), out)


if __name__ == "__main__":
    sys.exit(main())
