"""Large numbers of clusters: the ledger, sphere packing and whole DPLloyd fits at k = 10^3, 10^4.

Until 2026-11-26 the ledger re-composed every part of a parallel scope at each draw (quadratic
in its entries) and sphere packing compared each candidate with every accepted centre by
``np.linalg.norm`` (quadratic in k): k = 1000 on 200 rows took 11 s and k = 10^4 did not finish.

    python -m benchmarks.large_k                     # full run, writes benchmarks/large_k.json
    python -m benchmarks.large_k --quick             # the k = 1000 cases only; prints only
    python -m benchmarks.large_k --before SRC        # also time the library in SRC/src (e.g. a
                                                     # worktree of the commit before the fix)
    python -m benchmarks.large_k --out PATH          # write the JSON to PATH
    python -m benchmarks.large_k --profile           # the fits' costliest functions too

Every case runs in a fresh interpreter (``--child``), after an untimed warm-up fit on a tiny
problem (numba's compiled kernels are loaded then), once: these are minutes-long fits, not
micro-benchmarks. A case that exceeds ``--timeout`` is recorded as timed out, with the limit.
With ``--profile`` the fits also record their ten most expensive functions (cProfile).

Cases: one iteration's ledger (k parts of a parallel scope, one draw each); sphere packing in
[-1, 1]^d for d = 2, 10; a DPLloyd fit (``DPKMeans(algorithm="dplloyd")``, uniform starts, T = 5)
and a DPLloyd-Impr fit (sphere packing, Su's split, T by Su's rule, N stated). Target: the
DPLloyd fit at k = 10^4, N = 10^5, d = 10 in at most 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.run import _load, finish_report, machine_info

ROOT = Path(__file__).resolve().parent.parent
TARGET = {"case": "dplloyd fit", "k": 10_000, "n": 100_000, "d": 10, "seconds": 30.0}

CASES = [  # (name, kind, params); --quick keeps those with k <= 1000
    ("ledger, one iteration, k = 1000", "ledger", {"k": 1000}),
    ("ledger, one iteration, k = 10^4", "ledger", {"k": 10_000}),
    ("sphere packing, k = 1000, d = 2", "packing", {"k": 1000, "d": 2}),
    ("sphere packing, k = 10^4, d = 2", "packing", {"k": 10_000, "d": 2}),
    ("sphere packing, k = 1000, d = 10", "packing", {"k": 1000, "d": 10}),
    ("sphere packing, k = 10^4, d = 10", "packing", {"k": 10_000, "d": 10}),
    ("dplloyd fit, k = 1000, N = 1000, d = 2", "fit",
     {"algorithm": "dplloyd", "k": 1000, "n": 1000, "d": 2}),
    ("dplloyd-impr fit, k = 1000, N = 1000, d = 2", "fit",
     {"algorithm": "dplloyd-impr", "k": 1000, "n": 1000, "d": 2}),
    ("dplloyd fit, k = 10^4, N = 10^5, d = 10", "fit",
     {"algorithm": "dplloyd", "k": 10_000, "n": 100_000, "d": 10}),
]


def run_case(kind: str, params: dict, profile: bool = False) -> dict:
    """Run one case in this interpreter and return its timing (the ``--child`` side)."""
    import numpy as np

    import dpkmeans
    from dpkmeans.api.estimators import DPKMeans
    from dpkmeans.engine.init import sphere_packing
    from dpkmeans.privacy.accounting import PrivacyLedger

    out: dict = {"dpkmeans_file": dpkmeans.__file__}

    def fit(k: int, n: int, d: int, algorithm: str, seed: int = 1):
        X = np.random.default_rng(0).uniform(-1, 1, (n, d))
        extra = {"n_records": n} if algorithm == "dplloyd-impr" else {}
        model = DPKMeans(k, epsilon=1.0, bounds=(-1, 1), algorithm=algorithm,
                         random_state=seed, **extra)
        return lambda: model.fit(X)

    if kind == "ledger":
        def go():
            ledger = PrivacyLedger(budget=1.0)
            with ledger.sequential("iteration 1"), ledger.parallel("clusters"):
                for j in range(params["k"]):
                    with ledger.part(f"cluster {j}"):
                        ledger.charge("Laplace", epsilon=0.2, sensitivity=3.0, scale=15.0,
                                      label="(S_j, n_j)", details={"replicas": 1})
            return ledger
    elif kind == "packing":
        d = params["d"]

        def go():
            return sphere_packing((-np.ones(d), np.ones(d)), params["k"],
                                  np.random.default_rng(0))
    else:
        fit(4, 100, params["d"], params["algorithm"])()  # warm-up: load the compiled kernels
        go = fit(params["k"], params["n"], params["d"], params["algorithm"])
    if profile and kind == "fit":
        import cProfile
        import io
        import pstats

        prof = cProfile.Profile()
        start = time.perf_counter()
        prof.enable()
        result = go()
        prof.disable()
        out["seconds"] = time.perf_counter() - start
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
        out["profile_cumulative"] = [line.strip() for line in text.getvalue().splitlines()
                                     if "/" in line][:40]
    else:
        start = time.perf_counter()
        result = go()
        out["seconds"] = time.perf_counter() - start
    if kind == "fit":
        out["n_iter"] = int(result.n_iter_)
        out["ledger_entries"] = len(result.ledger_.entries)
        out["epsilon_spent"] = result.ledger_.total().epsilon
    elif kind == "ledger":
        out["ledger_entries"] = len(result.entries)
    return out


def spawn(kind: str, params: dict, src: Path, timeout: float, profile: bool) -> dict:
    """Run one case in a fresh interpreter with the library from ``src``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT)]))
    cmd = [sys.executable, "-m", "benchmarks.large_k", "--child",
           json.dumps({"kind": kind, "params": params, "profile": profile})]
    load = _load()
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timed_out": True, "timeout_s": timeout, "load_average_before": load,
                "load_average_after": _load()}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:], "load_average_before": load}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res.update({"wall_s_with_start_up": time.perf_counter() - start, "timed_out": False,
                "load_average_before": load, "load_average_after": _load()})
    return res


def _fmt(res: dict | None) -> str:
    if not res:
        return "-"
    if res.get("timed_out"):
        return f"> {res['timeout_s']:.0f} s (timed out)"
    if "seconds" not in res:
        return "error"
    s = res["seconds"]
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def table(results: list[dict]) -> str:
    head = "| case | after | before | target | met |\n|---|---|---|---|---|"
    rows = [f"| {r['name']} | {_fmt(r['after'])} | {_fmt(r.get('before'))} "
            f"| {r.get('target', '-')} "
            f"| {'-' if 'met' not in r else ('yes' if r['met'] else '**no**')} |"
            for r in results]
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.large_k", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the k = 1000 cases only")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON output (default: benchmarks/large_k.json for a full run, "
                             "none for --quick)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of the library before the fix: also time its SRC/src")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds allowed to one case (default 600)")
    parser.add_argument("--before-timeout", type=float, default=None,
                        help="seconds allowed to one case of --before (default: --timeout)")
    parser.add_argument("--profile", action="store_true",
                        help="record the fits' most expensive functions (cProfile)")
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        spec = json.loads(args.child)
        print(json.dumps(run_case(spec["kind"], spec["params"], spec.get("profile", False))))
        return 0
    mode = "quick" if args.quick else "full"
    out = args.out if args.out is not None else (None if args.quick
                                                 else ROOT / "benchmarks" / "large_k.json")
    cases = [c for c in CASES if not args.quick or c[2]["k"] <= 1000]
    if args.only:
        cases = [c for c in cases if args.only in c[0]]
    started = time.perf_counter()
    report = {"mode": mode, "machine": machine_info(), "load_average_before": _load(),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "method": "each case once in a fresh interpreter after an untimed warm-up fit "
                        "on a tiny problem; 'before' is the same case with the library of "
                        "--before (timed out cases record the limit)",
              "before_source": None if args.before is None else str(args.before),
              "timeout_s": args.timeout, "before_timeout_s": args.before_timeout or args.timeout,
              "results": []}
    for name, kind, params in cases:
        res = {"name": name, "kind": kind, "params": params,
               "after": spawn(kind, params, ROOT / "src", args.timeout, args.profile)}
        if args.before is not None:
            res["before"] = spawn(kind, params, args.before / "src",
                                  args.before_timeout or args.timeout, False)
        if kind == "fit" and all(params[key] == TARGET[key] for key in ("k", "n", "d")) \
                and params["algorithm"] == "dplloyd":
            res["target"] = f"<= {TARGET['seconds']:.0f} s"
            res["met"] = bool(res["after"].get("seconds", float("inf")) <= TARGET["seconds"])
        report["results"].append(res)
        print(f"{name}: after {_fmt(res['after'])}, before {_fmt(res.get('before'))}",
              file=sys.stderr, flush=True)
    return finish_report(report, started, table, out)


if __name__ == "__main__":
    sys.exit(main())
