"""The roofline of benchmarks 1 and 4: how fast one exact Lloyd iteration at N = 10^6, d = 10,
k = 8 (float64) could be on this machine, from two measured ceilings.

* Memory: one read of X (80 MB) by two threads (benchmark 4's :class:`benchmarks.run.StreamingPass`)
  and by one: the bandwidth in GB/s.
* Arithmetic: a compiled loop of fused multiply-adds (numba, ``fastmath={"contract"}``) over an
  array that stays in the L1 cache, twelve independent chains a value so that the FMA units,
  not their latency, limit it, vectorised by LLVM over the array; on one thread and on two
  (threads releasing the GIL), in float64 and in float32 (the assigner scores in single
  precision): the peak rate in GFMA/s.

The iteration must read X once (``bytes``) and compute N k d multiply-adds for the scores
(``fmas``): its time is at least max(bytes / bandwidth, fmas / peak) on two threads. The
script prints both ceilings, that bound, the iteration's measured time on one and two threads
(:func:`benchmarks.run.lloyd_step`, medians), and the targets of benchmarks 1 and 4 against it.

    python -m benchmarks.roofline             # ~30 s; prints, writes nothing
    python -m benchmarks.roofline --json PATH # also the figures as JSON

Run it on a quiet machine (``cat /proc/loadavg``): every figure is a rate on shared cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba as nb
import numpy as np

from benchmarks.run import (
    BIG,
    STREAMING_TARGET,
    StreamingPass,
    _initial_centroids,
    _load,
    gaussian_mixture,
    lloyd_step,
)

#: Independent FMA chains per array value, and FMAs per chain: enough chains to cover the FMA
#: latency (4 cycles on Zen 4) on both pipes.
CHAINS, STEPS = 12, 16
#: Values per thread (16 KB of float64: in L1) and passes over them per call.
VALUES, PASSES = 2048, 400


def _fma_source() -> str:
    # constants from ``consts`` (x's dtype): a Python float literal would make float32 code
    # compute in float64
    lines = ['@nb.njit(nogil=True, fastmath={"contract"})',
             "def fma_loop(x, out, passes, consts):", f"    half = consts[{CHAINS}]"]
    lines += [f"    a{c} = consts[{c}]" for c in range(CHAINS)]
    lines += ["    for _ in range(passes):", "        for i in range(x.size):",
              "            v = x[i]"]
    lines += [f"            y{c} = v + a{c}" for c in range(CHAINS)]
    for _ in range(STEPS):
        lines += [f"            y{c} = y{c} * v + half" for c in range(CHAINS)]
    lines.append("            out[i] = " + " + ".join(f"y{c}" for c in range(CHAINS)))
    lines.append("    return out")
    return "\n".join(lines) + "\n"


_NS: dict = {"nb": nb}
exec(_fma_source(), _NS)  # noqa: S102 - generated source of a fixed loop, no input
fma_loop = _NS["fma_loop"]


def _best(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_fma(dtype: type, threads: int, repeats: int = 7) -> float:
    """GFMA/s of :func:`fma_loop` on ``threads`` threads, each on its own array (the best of
    ``repeats`` runs: a peak)."""
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-0.5, 0.5, VALUES).astype(dtype) for _ in range(threads)]
    outs = [np.empty_like(x) for x in xs]
    consts = np.append(np.arange(CHAINS) / 8, 0.5).astype(dtype)
    work = threads * VALUES * CHAINS * STEPS * PASSES

    def one(t: int) -> None:
        fma_loop(xs[t], outs[t], PASSES, consts)

    with ThreadPoolExecutor(threads) as pool:
        seconds = _best(lambda: list(pool.map(one, range(threads))), repeats)
    return work / seconds / 1e9


def bandwidth(X: np.ndarray, threads: int, repeats: int = 15) -> float:
    """GB/s of one read of X by ``threads`` threads (:class:`StreamingPass`), median."""
    stream = StreamingPass(X, threads)
    try:
        stream()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            stream()
            times.append(time.perf_counter() - start)
    finally:
        stream.close()
    return X.nbytes / float(np.median(times)) / 1e9


def iteration(X: np.ndarray, C0: np.ndarray, threads: int, repeats: int = 15) -> float:
    """Median seconds of :func:`lloyd_step` with the blocks on ``threads`` threads."""
    from dpkmeans.compute import lloyd

    usable = lloyd._usable_cores
    lloyd._usable_cores = lambda: threads
    try:
        lloyd_step(X, C0)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            lloyd_step(X, C0)
            times.append(time.perf_counter() - start)
    finally:
        lloyd._usable_cores = usable
    return float(np.median(times))


def roofline(n: int = BIG["n"], d: int = BIG["d"], k: int = BIG["k"]) -> dict:
    """The measured ceilings, the bound they give and the iteration's times (module docstring)."""
    load_before = _load()
    X = gaussian_mixture(n, d, k, 0)
    C0 = _initial_centroids(X, k, 1)
    out: dict = {"n": n, "d": d, "k": k, "bytes": int(X.nbytes), "fmas": n * k * d,
                 "cpu_count": os.cpu_count()}
    out["bandwidth_GB_s"] = {t: bandwidth(X, t) for t in (1, 2)}
    out["peak_GFMA_s"] = {np.dtype(dt).name: {t: peak_fma(dt, t) for t in (1, 2)}
                          for dt in (np.float64, np.float32)}
    memory_s = out["bytes"] / (out["bandwidth_GB_s"][2] * 1e9)
    fma64_s = out["fmas"] / (out["peak_GFMA_s"]["float64"][2] * 1e9)
    fma32_s = out["fmas"] / (out["peak_GFMA_s"]["float32"][2] * 1e9)
    out["bound_s"] = {"memory": memory_s, "fma_float64": fma64_s, "fma_float32": fma32_s,
                      "iteration": max(memory_s, fma32_s)}
    out["iteration_s"] = {t: iteration(X, C0, t) for t in (1, 2)}
    out["streaming_target_s"] = STREAMING_TARGET * memory_s
    out["load_average"] = {"before": load_before, "after": _load()}
    return out


def report(r: dict) -> str:
    bw, peak, b, it = r["bandwidth_GB_s"], r["peak_GFMA_s"], r["bound_s"], r["iteration_s"]
    ms = 1e3
    return "\n".join([
        f"X: {r['bytes'] / 1e6:.0f} MB read once; scores: {r['fmas'] / 1e6:.0f} M multiply-adds "
        f"(N k d, N = {r['n']}, d = {r['d']}, k = {r['k']})",
        f"memory bandwidth: {bw[1]:.1f} GB/s on 1 thread, {bw[2]:.1f} GB/s on 2 "
        f"-> X in {b['memory'] * ms:.2f} ms",
        f"peak FMA rate: float64 {peak['float64'][1]:.1f} / {peak['float64'][2]:.1f} GFMA/s "
        f"(1 / 2 threads) -> {b['fma_float64'] * ms:.2f} ms; float32 "
        f"{peak['float32'][1]:.1f} / {peak['float32'][2]:.1f} -> {b['fma_float32'] * ms:.2f} ms",
        f"lower bound of one iteration (2 threads): {b['iteration'] * ms:.2f} ms "
        f"({'memory' if b['memory'] >= b['fma_float32'] else 'arithmetic'}-bound)",
        f"measured iteration (lloyd_step): {it[1] * ms:.2f} ms on 1 thread, "
        f"{it[2] * ms:.2f} ms on 2 ({it[2] / b['iteration']:.1f}x the bound)",
        f"benchmark 4's target ({STREAMING_TARGET:g}x the streaming pass): "
        f"{r['streaming_target_s'] * ms:.2f} ms",
        f"load average before {r['load_average']['before']}, after {r['load_average']['after']}",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.roofline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    result = roofline()
    print(report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
