"""Speed of the optimal-covariance SDP, ``dpkmeans.privacy.colored.optimal_covariance`` (book chapter 9).

Target: for K = 4 and d up to 28 the SDP solves in under 10 s here.

The input is chapter 9's: the Marketing campaign data as the colored-noise paper uses it
(``load("marketing_campaign", paper="colored").scaled()``: 2212 x 28 in [-1, 1]; two
columns are constant), for d < 28 its first d columns; ``KMeans(4, n_init=1, random_state=0)``
without privacy; the leave-one-out Delta set (2212 rows, K d columns); gamma = 1; one SDP per
centroid (``blocks=K``). A time is the median of the repeats after one untimed call (which
also imports cvxpy); the solution's rounds, working set, statuses, post-check factor, trace
against white noise's and the constraint check over every Delta come from that call (the
solve is deterministic).

    python -m benchmarks.colored_sdp              # full run (~1 min), writes the JSON below
    python -m benchmarks.colored_sdp --quick      # 2 repeats; prints only
    python -m benchmarks.colored_sdp --out PATH   # write the JSON to PATH

Needs the data ($DPKMEANS_DATA or data/raw/; see data/README.md). This is a benchmark, not a
test: nothing fails. Run it on a quiet machine and read the recorded load averages.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.run import _load, machine_info, measure, write_report
from dpkmeans.privacy import colored

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "colored_sdp.json"
DIMS = (2, 8, 16, 28)
K = 4
GAMMA = 1.0
TARGET_S = 10.0
REPEATS = {"full": 5, "quick": 2}


def marketing() -> np.ndarray:
    """The 2212 x 28 Marketing matrix scaled to [-1, 1], as chapter 9 loads it."""
    from dpkmeans.data import load

    return np.asarray(load("marketing_campaign", paper="colored").scaled().X, dtype=float)


def deltas(X: np.ndarray, k: int = K, seed: int = 0) -> np.ndarray:
    """The leave-one-out Delta set of ``KMeans(k, n_init=1, random_state=seed)`` on X."""
    from sklearn.cluster import KMeans

    km = KMeans(k, n_init=1, random_state=seed).fit(X)
    return colored.leave_one_out_deltas(X, km.labels_, km.cluster_centers_)


def bench_case(X: np.ndarray, *, k: int = K, repeats: int = REPEATS["full"],
               gamma: float = GAMMA) -> dict:
    """Time ``optimal_covariance(D, gamma, blocks=k)`` on the Delta set of X and describe its
    solution."""
    D = deltas(X, k)
    load_before = _load()
    sol = colored.optimal_covariance(D, gamma, blocks=k)  # the warm-up; its solution is reported
    times = measure({"optimal_covariance": lambda: colored.optimal_covariance(D, gamma,
                                                                              blocks=k)},
                    repeats, warmup=0)["optimal_covariance"]
    check = colored.constraint_check(D, sol.covariance, gamma)
    white = float(np.trace(colored.white_covariance(D, gamma)))
    trace = float(np.trace(sol.covariance))
    return {
        "d": int(X.shape[1]), "K": k, "gamma": gamma,
        "deltas": list(D.shape), "distinct_deltas": int(len(np.unique(D, axis=0))),
        "measurements": times, "median_s": times["median_s"],
        "rounds": sol.rounds, "working_set": sol.constraints, "active": int(sol.active.size),
        "status": sol.status, "rescaled": sol.rescaled,
        "trace": trace, "white_trace": white, "trace_ratio_to_white": trace / white,
        "violated": check.violated, "worst_s2_over_gamma": check.worst,
        "target": f"< {TARGET_S:g} s", "met": bool(times["median_s"] < TARGET_S),
        "load_average_before": load_before, "load_average_after": _load(),
    }


def table_row(res: dict) -> str:
    m = res["measurements"]
    return (f"| {res['d']} | {res['deltas'][0]} x {res['deltas'][1]} | {m['median_s']:.2f} s "
            f"| {m['min_s']:.2f}-{m['max_s']:.2f} s | {res['rounds']} | {res['working_set']} "
            f"| {res['active']} | {res['status']} | {res['rescaled'] - 1:.1e} "
            f"| {res['trace_ratio_to_white']:.4f} | {res['violated']} "
            f"| {'yes' if res['met'] else '**no**'} |")


def table(results: list[dict]) -> str:
    head = ("| d | Delta set | median | min-max | rounds | working set | tight | status "
            "| rescaled - 1 | tr / tr(white) | violated | < 10 s |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|")
    return "\n".join([head, *(table_row(res) for res in results)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.colored_sdp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, same sizes")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON output (default: benchmarks/colored_sdp.json for a full run, "
                             "none for --quick)")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    out = args.out if args.out is not None else (None if args.quick else OUT)
    started = time.perf_counter()
    import clarabel
    import cvxpy

    report = {"mode": mode, "machine": machine_info(), "load_average_start": _load(),
              "solver_versions": {"cvxpy": cvxpy.__version__, "clarabel": clarabel.__version__,
                                  "clarabel_options": dict(colored.CLARABEL_OPTIONS),
                                  "start_multiple": colored.START_MULTIPLE},
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "data": "marketing_campaign (paper colored), scaled to [-1, 1], first d "
                      "columns; KMeans(4, n_init=1, random_state=0); leave-one-out Delta's",
              "method": f"median of {REPEATS[mode]} calls of optimal_covariance(D, 1.0, "
                        "blocks=4) after one untimed call",
              "target": f"every d: median < {TARGET_S:g} s", "results": []}
    X = marketing()
    for d in DIMS:
        res = bench_case(X[:, :d], repeats=REPEATS[mode])
        report["results"].append(res)
        print(f"d = {d}: {res['median_s']:.2f} s, {res['rounds']} round(s), "
              f"status {res['status']}", file=sys.stderr, flush=True)
    report["met"] = all(res["met"] for res in report["results"])
    report["load_average_end"] = _load()
    report["wall_s"] = time.perf_counter() - started
    report["table"] = table(report["results"])
    print(report["table"])
    print(f"\n{mode} run, {report['wall_s']:.0f} s; load average (1, 5, 15 min) at start "
          f"{report['load_average_start']}, at end {report['load_average_end']}")
    if out is not None:
        write_report(report, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
