"""The Dask backend's speed: the paper's Fig 7 (speed-up against data size) and its overhead.

Zhang, Liu and Wang (2018) run on 5 Hadoop nodes and report the speed-up
S(m) = T_1 / T_m (their eq. 6) against data size. Here: 1 and 2 single-threaded worker
processes on this 2-core machine (``LocalCluster``), on synthetic Gaussian mixtures of the
paper's four dataset sizes (blood, abalone, gamma, covtype: rows x attributes, k classes), for
both versions of the paper's method. The data are persisted on the workers first (as they
would sit in HDFS); a time is one whole fit, from the persisted array to the released centroids.

Also measured in the same run:

- the overhead of the Dask path on one machine at N = 10^6, d = 10, k = 8 (one DPLloyd fit,
  T = 5): Dask with 2 workers over the in-memory path (target: at most 1.5x), and the same
  for a batch of 20 replicas;
- the fixed cost of one map-reduce round trip (one block, a trivial statistic): what every
  iteration pays on top of its arithmetic, and what a larger cluster does not shrink.

    python -m benchmarks.dask_scaling            # full run, writes benchmarks/dask_scaling.json
    python -m benchmarks.dask_scaling --quick    # fewer repeats, prints only

Rounds are interleaved (every contender once per round), as in :mod:`benchmarks.run`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.run import box, gaussian_mixture, machine_info, measure
from dpkmeans.compute.blocks import BLOCK_ROWS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "dask_scaling.json"
#: The paper's datasets: (rows, attributes, k). gamma has 19,020 rows (the paper prints 19,200).
SIZES = {"blood": (748, 5, 2), "abalone": (4177, 8, 3), "gamma": (19_020, 10, 2),
         "covtype": (581_012, 54, 7)}
OVERHEAD = {"n": 10**6, "d": 10, "k": 8}
#: The overhead is also measured on a batch of replicas (a study's unit of work).
OVERHEAD_REPLICAS = 20
EPSILON = 1.0
SEED = 2026
TARGET_OVERHEAD = 1.5


def _persisted(backend, X: np.ndarray):
    """X held on the backend's workers in the backend's own chunks (as data would sit in
    HDFS), so that a fit neither rechunks nor moves it."""
    from distributed import futures_of, wait

    arr = backend.client.persist(backend.as_chunks(X))
    with backend.client.as_current():
        wait(futures_of(arr))
    return arr


def _count(block: np.ndarray) -> tuple[np.ndarray]:
    return (np.array([block.shape[0]], dtype=float),)


def speedups(backends: dict, repeats: dict[str, int]) -> dict:
    """Fig 7: one fit of each method at each size on 1 and 2 workers."""
    from dpkmeans.engine.loop import run
    from dpkmeans.papers.silhouette.variants import as_published, corrected

    methods = {"as_published": lambda k, b: as_published(k, EPSILON, b, data_derived_bounds=False),
               "corrected": lambda k, b: corrected(k, EPSILON, b)}
    out = {}
    for name, (n, d, k) in SIZES.items():
        X = gaussian_mixture(n, d, k, seed=SEED)
        data = {w: _persisted(be, X) for w, be in backends.items()}
        for method, make in methods.items():
            config = make(k, box(d))
            fns = {w: (lambda w=w: run(data[w], config, SEED, backend=backends[w]))
                   for w in backends}
            iterations = int(run(X, config, SEED).iterations_run[0])
            m = measure(fns, repeats["covtype" if name == "covtype" else "small"])
            ratios = np.array(m["1 worker"]["times_s"]) / np.array(m["2 workers"]["times_s"])
            out[f"{method}: {name}"] = {
                "method": method, "dataset": name, "n": n, "d": d, "k": k,
                "iterations": iterations, "blocks": -(-n // BLOCK_ROWS),
                "seconds": {w: m[w]["median_s"] for w in m}, "measurements": m,
                "speedup_per_round": ratios.tolist(),
                "speedup_mean": float(ratios.mean()),
                "speedup_se": float(ratios.std(ddof=1) / np.sqrt(ratios.size))
                if ratios.size > 1 else float("nan"),
                "speedup_of_medians": m["1 worker"]["median_s"] / m["2 workers"]["median_s"],
            }
            print(f"{method:>13} {name:>8}: 1 worker {m['1 worker']['median_s']:.3f} s, "
                  f"2 workers {m['2 workers']['median_s']:.3f} s, speed-up {ratios.mean():.2f}")
    return out


def overhead(backends: dict, repeats: int) -> dict:
    """The Dask path over the in-memory path, one DPLloyd fit at N = 10^6."""
    from dpkmeans.engine.loop import run
    from dpkmeans.papers.su.variants import dplloyd

    n, d, k = OVERHEAD["n"], OVERHEAD["d"], OVERHEAD["k"]
    X = gaussian_mixture(n, d, k, seed=SEED)
    config = dplloyd(k, EPSILON, box(d))
    data = {w: _persisted(be, X) for w, be in backends.items()}
    out = {"params": {**OVERHEAD, "T": config.iterations, "algorithm": "DPLloyd"},
           "target": f"<= {TARGET_OVERHEAD}x (one fit)"}
    for replicas in (1, OVERHEAD_REPLICAS):
        fns = {"memory": lambda r=replicas: run(X, config, SEED, replicas=r)}
        fns.update({f"dask, {w}": (lambda w=w, r=replicas: run(data[w], config, SEED, replicas=r,
                                                                backend=backends[w]))
                    for w in backends})
        m = measure(fns, repeats)
        ratio = m["dask, 2 workers"]["median_s"] / m["memory"]["median_s"]
        print(f"overhead at N = {n}, {replicas} replicas: memory {m['memory']['median_s']:.3f} s, "
              f"dask 2 workers {m['dask, 2 workers']['median_s']:.3f} s ({ratio:.2f}x)")
        out[f"replicas={replicas}"] = {
            "measurements": m, "ratio_dask2_over_memory": ratio,
            "ratio_dask1_over_memory": m["dask, 1 worker"]["median_s"] / m["memory"]["median_s"]}
    out["ratio_dask2_over_memory"] = out["replicas=1"]["ratio_dask2_over_memory"]
    out["ratio_dask1_over_memory"] = out["replicas=1"]["ratio_dask1_over_memory"]
    out["met"] = out["ratio_dask2_over_memory"] <= TARGET_OVERHEAD
    return out


def round_trip(backends: dict, repeats: int) -> dict:
    """The fixed cost of one map-reduce (one block of 1000 rows, a count)."""
    X = np.zeros((1000, 2))
    out = {}
    for w, be in backends.items():
        data, _, _ = be.prepare(X, (np.full(2, -1.0), np.ones(2)))
        m = measure({w: lambda be=be, data=data: be.map_reduce(data, _count)}, repeats)
        out[w] = m[w]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats; print only")
    args = parser.parse_args(argv)
    from dpkmeans.compute.backends.dask import DaskBackend

    repeats = {"small": 3, "covtype": 2, "overhead": 2, "trip": 20} if args.quick else \
        {"small": 9, "covtype": 5, "overhead": 5, "trip": 50}
    start = time.perf_counter()
    with DaskBackend(n_workers=1) as one, DaskBackend(n_workers=2) as two:
        backends = {"1 worker": one, "2 workers": two}
        report = {
            "what": "python -m benchmarks.dask_scaling" + (" --quick" if args.quick else ""),
            "fig7_speedup": speedups(backends, repeats),
            "overhead": overhead(backends, repeats["overhead"]),
            "round_trip": round_trip(backends, repeats["trip"]),
        }
    report["wall_s"] = round(time.perf_counter() - start, 1)
    report["machine"] = machine_info()
    text = json.dumps(report, indent=2)
    if not args.quick:
        OUT.write_text(text + "\n")
    print(f"wall {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
