"""Speed of the exact discrete samplers (dpkmeans.privacy.discrete) against numpy's float samplers.

Every comparison is measured in the same run, on the same number of draws, with the
contenders interleaved (each round runs every contender once, in turn), so background load
falls on all of them alike; a time is the median of the repeats after a warm-up.

    python -m benchmarks.sampler              # full run, writes benchmarks/sampler.json
    python -m benchmarks.sampler --quick      # fewer repeats, same sizes; prints only
    python -m benchmarks.sampler --out PATH   # write the JSON to PATH

Contenders, for R replicas (one numpy Generator each) and S elements per replica:

* ``dpkmeans``: ``discrete_laplace(scale, rngs)`` / ``discrete_gaussian(sigma2, rngs)``, exact;
* ``numpy_per_replica``: ``[g.laplace(0, t, S) for g in rngs]`` (resp. ``g.normal``), the same
  R calls of float noise the engine makes with ``sampler="continuous"``;
* ``numpy_single``: one Generator drawing all R x |S| float values at once (raw throughput).

Targets (discrete_laplace): <= 100 ns per draw amortised for R |S| >= 3e5 elements, and
<= 3 ms in total for R = 1000, S = (12, 5).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.run import _load, finish_report, machine_info, measure
from dpkmeans.privacy.discrete import discrete_gaussian, discrete_laplace

ROOT = Path(__file__).resolve().parent.parent
R = 1000
BIG = (15, 300)   # 4500 elements per replica: 4.5e6 draws
SMALL = (12, 5)   # 60 elements per replica: 6e4 draws
REPEATS = {"full": {"big": 7, "small": 41, "gauss_big": 5, "gauss_small": 21},
           "quick": {"big": 3, "small": 11, "gauss_big": 2, "gauss_small": 5}}


def scales_for(kind: str, level: int, shape: tuple[int, ...], per_element: bool) -> np.ndarray:
    """Integer scales around 2**level: one shared value, or one per element in
    [2**level, 2**(level + 1)) (fixed seed), as the engine passes them."""
    if not per_element:
        return np.full(shape, 2**level + 12345, dtype=np.int64)
    rng = np.random.default_rng(level)
    return rng.integers(2**level, 2**(level + 1), size=shape, dtype=np.int64)


def bench_case(name: str, kind: str, level: int, shape: tuple[int, ...], repeats: int,
               per_element: bool = False, replicas: int = R) -> dict:
    params = scales_for(kind, level, shape, per_element)
    rngs = [np.random.default_rng(10_000 + r) for r in range(replicas)]
    one = np.random.default_rng(1)
    draws = replicas * int(np.prod(shape))
    if kind == "laplace":
        t = float(params.flat[0])  # numpy's float noise at the same scale

        def ours() -> None:
            discrete_laplace(params, rngs)

        def per_replica() -> None:
            for g in rngs:
                g.laplace(0.0, t, shape)

        def single() -> None:
            one.laplace(0.0, t, (replicas, *shape))
    else:
        sd = float(np.sqrt(float(params.flat[0])))

        def ours() -> None:
            discrete_gaussian(params, rngs)

        def per_replica() -> None:
            for g in rngs:
                g.normal(0.0, sd, shape)

        def single() -> None:
            one.normal(0.0, sd, (replicas, *shape))

    m = measure({"dpkmeans": ours, "numpy_per_replica": per_replica, "numpy_single": single},
                repeats)
    med = {k: v["median_s"] for k, v in m.items()}
    ns = {k: v / draws * 1e9 for k, v in med.items()}
    result = {
        "name": name, "sampler": f"discrete_{kind}",
        "params": {"replicas": replicas, "S": list(shape), "elements": draws,
                   "scale": f"2**{level}" + (" .. 2**%d, one per element" % (level + 1)
                                             if per_element else " + 12345, shared"),
                   "numpy_scale": "t" if kind == "laplace" else "sqrt(sigma2)"},
        "measurements": m,
        "ns_per_draw": ns,
        "ms_per_million_draws": dict(ns),  # x ns a draw = x ms a million draws
        "ratios": {"dpkmeans / numpy_per_replica": med["dpkmeans"] / med["numpy_per_replica"],
                   "dpkmeans / numpy_single": med["dpkmeans"] / med["numpy_single"]},
    }
    if kind == "laplace":
        if draws >= 300_000:
            result["target"] = "<= 100 ns per draw"
            result["met"] = bool(ns["dpkmeans"] <= 100.0)
        elif shape == SMALL and replicas == R:
            result["target"] = "<= 3 ms in total"
            result["met"] = bool(med["dpkmeans"] <= 3e-3)
    return result


CASES = [
    ("laplace t~2^30, R=1000 x 4500", "laplace", 30, BIG, "big", False),
    ("laplace t~2^44, R=1000 x 4500", "laplace", 44, BIG, "big", False),
    ("laplace t in [2^30, 2^31) per element, R=1000 x 4500", "laplace", 30, BIG, "big", True),
    ("laplace t in [2^44, 2^45) per element, R=1000 x 4500", "laplace", 44, BIG, "big", True),
    ("laplace t~2^30, R=1000 x 60", "laplace", 30, SMALL, "small", False),
    ("laplace t~2^44, R=1000 x 60", "laplace", 44, SMALL, "small", False),
    ("laplace t in [2^30, 2^31) per element, R=1000 x 60", "laplace", 30, SMALL, "small", True),
    ("gaussian sigma2~2^40, R=1000 x 4500", "gaussian", 40, BIG, "gauss_big", False),
    ("gaussian sigma2~2^40, R=1000 x 60", "gaussian", 40, SMALL, "gauss_small", False),
]


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def table(results: list[dict]) -> str:
    head = ("| case | dpkmeans | ns/draw | numpy per replica | numpy single | ratio (per "
            "replica) | ratio (single) | target | met |\n|---|---|---|---|---|---|---|---|---|")
    rows = []
    for res in results:
        m = res["measurements"]
        rows.append(
            f"| {res['name']} | {_fmt(m['dpkmeans']['median_s'])} "
            f"| {res['ns_per_draw']['dpkmeans']:.0f} "
            f"| {_fmt(m['numpy_per_replica']['median_s'])} "
            f"| {_fmt(m['numpy_single']['median_s'])} "
            f"| {res['ratios']['dpkmeans / numpy_per_replica']:.1f}x "
            f"| {res['ratios']['dpkmeans / numpy_single']:.1f}x "
            f"| {res.get('target', '-')} "
            f"| {'-' if 'met' not in res else ('yes' if res['met'] else '**no**')} |")
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sampler", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, same sizes")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON output (default: benchmarks/sampler.json for a full run, "
                             "none for --quick)")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    out = args.out if args.out is not None else (None if args.quick
                                                 else ROOT / "benchmarks" / "sampler.json")
    reps = REPEATS[mode]
    started = time.perf_counter()
    report = {"mode": mode, "machine": machine_info(), "load_average_before": _load(),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "method": "medians of interleaved repeats after one warm-up call of each "
                        "contender; ratios are of medians measured in the same run",
              "results": []}
    for name, kind, level, shape, rep_key, per_element in CASES:
        load = _load()
        res = bench_case(name, kind, level, shape, reps[rep_key], per_element)
        res.update({"load_average_before": load, "load_average_after": _load()})
        report["results"].append(res)
        print(f"{name}: {_fmt(res['measurements']['dpkmeans']['median_s'])}, "
              f"{res['ns_per_draw']['dpkmeans']:.0f} ns/draw", file=sys.stderr, flush=True)
    return finish_report(report, started, table, out)


if __name__ == "__main__":
    sys.exit(main())
