"""Benchmark 6: a DPKMeans fit on the Dask backend over Parquet files larger than memory.

One DPLloyd-Impr fit (k = 8, epsilon = 1, public bounds [-1, 1]^d, the stated N) through a
2-worker ``LocalCluster`` over a
:class:`~dpkmeans.compute.backends.parquet.ParquetRows` source: the data are streamed from disk
at every pass, never held (book chapter 8; ``docs/design.md``, "Determinism and the block
plan"). Measured in the same run:

- the write of the Parquet files, block by block from a seeded generator (a Gaussian mixture,
  some values outside the bounds so that clipping happens), uncompressed, one row group per
  block of the public plan (so a task's chunk is whole row groups);
- the disk's sequential read bandwidth: ``O_DIRECT`` reads of several GB of those files with
  aligned 16 MiB buffers (no page cache), before and after the fit;
- each pass of the fit (the check pass, then each iteration's map-reduce): wall time, the disk
  bytes read during it (``/proc/diskstats``: page-cache hits do not count), the throughput
  (file bytes / time) and its ratio to the disk bandwidth (target >= 0.5), the CPU time of the
  workers and the machine's CPU use;
- the resident memory (RSS, psutil, every 0.1 s) of the client process and of every nanny and
  worker process: the peak of the sum (target <= 4 GB) and each process's peak;
- per-block costs (2^16 rows): read and decode (cold and warm page cache), the check, the clip
  and the statistics kernel, so that a chapter can project to larger data on a cluster;
- the bits: on the first file (2^22 rows, it fits in memory), the streamed fit equals the
  in-memory fit on the same records regenerated from the seed.

    python -m benchmarks.out_of_core                    # 4 x 10^8 rows x 10 (32 GB) under /tmp
    python -m benchmarks.out_of_core --rows 1048576     # a smoke run
    python -m benchmarks.out_of_core --dir PATH --keep  # keep the files (--reuse them later)

Writes ``benchmarks/out_of_core.json`` (``--out``), entries shaped as ``benchmarks/results.json``.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.run import _load, _result, machine_info, write_report
from dpkmeans.compute.blocks import BLOCK_ROWS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out_of_core.json"
GB = 10**9
ROWS = 4 * 10**8
COLS = 10
K = 8
EPSILON = 1.0
SEED = 2026
#: Rows per file (64 row groups of one block each); the first file is the bits-check sample.
FILE_ROWS = 2**22
#: O_DIRECT read size and how much of the files the bandwidth measurement reads.
DIRECT_BUFFER = 16 * 2**20
DIRECT_BYTES = 4 * GB
TARGET_RATIO = 0.5
TARGET_MEMORY = 4 * GB
#: Free space kept beyond the files.
DISK_MARGIN = 4 * GB
MANIFEST = "manifest.json"


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def mixture_blocks(n: int, d: int, k: int = K, seed: int = SEED,
                   spread: float = 0.3) -> Iterator[np.ndarray]:
    """n rows of a k-blob Gaussian mixture (centres uniform in [-0.7, 0.7]^d), one block of
    the plan at a time: about 3% of the values fall outside [-1, 1] and are clipped."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.7, 0.7, size=(k, d))
    for start in range(0, n, BLOCK_ROWS):
        m = min(BLOCK_ROWS, n - start)
        block = rng.standard_normal((m, d))
        block *= spread
        block += centres[rng.integers(k, size=m)]
        yield block


def columns(d: int) -> list[str]:
    return [f"x{j}" for j in range(d)]


def write_files(folder: Path, n: int, d: int) -> dict:
    """The mixture as Parquet files of FILE_ROWS rows, one row group per block, uncompressed,
    plain-encoded, non-nullable float64 columns; never more than a block in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(c, pa.float64(), nullable=False) for c in columns(d)])
    options = dict(compression="none", use_dictionary=False, write_statistics=False)
    start = time.perf_counter()
    writer, rows, files = None, 0, []
    for block in mixture_blocks(n, d):
        if rows % FILE_ROWS == 0:
            if writer is not None:
                writer.close()
            files.append(str(folder / f"part-{len(files):05d}.parquet"))
            writer = pq.ParquetWriter(files[-1], schema, **options)
        table = pa.Table.from_arrays([pa.array(block[:, j]) for j in range(d)], schema=schema)
        writer.write_table(table, row_group_size=BLOCK_ROWS)
        rows += block.shape[0]
    writer.close()
    os.sync()
    seconds = time.perf_counter() - start
    size = sum(os.path.getsize(f) for f in files)
    manifest = {"rows": n, "cols": d, "seed": SEED, "file_rows": FILE_ROWS, "files": len(files),
                "file_bytes": size, "write_s": seconds, "write_GB_per_s": size / seconds / GB}
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return manifest


def evict(files: list[str]) -> None:
    """Drop the files' pages from the page cache (clean pages: no privilege needed)."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------------------------
# Disk and process meters
# --------------------------------------------------------------------------------------------


def disk_of(path: Path) -> str:
    """The /proc/diskstats name of the device holding ``path`` (its whole disk if the
    partition is not listed)."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    for line in Path("/proc/diskstats").read_text().splitlines():
        f = line.split()
        if int(f[0]) == major and int(f[1]) == minor:
            return f[2]
    raise RuntimeError(f"no /proc/diskstats entry for device {major}:{minor}")


def disk_read_bytes(name: str) -> int:
    for line in Path("/proc/diskstats").read_text().splitlines():
        f = line.split()
        if f[2] == name:
            return int(f[5]) * 512  # sectors read
    raise RuntimeError(f"device {name} left /proc/diskstats")


def cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the machine (/proc/stat), for a utilisation over a span."""
    values = [float(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def direct_bandwidth(files: list[str], limit: int = DIRECT_BYTES) -> dict:
    """Sequential O_DIRECT reads of the files (16 MiB aligned buffer) up to ``limit`` bytes."""
    buffer = mmap.mmap(-1, DIRECT_BUFFER)  # page-aligned, as O_DIRECT needs
    done, start = 0, time.perf_counter()
    for path in files:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        try:
            while done < limit:
                got = os.readv(fd, [buffer])
                done += got
                if got < DIRECT_BUFFER:
                    break
        finally:
            os.close(fd)
        if done >= limit:
            break
    seconds = time.perf_counter() - start
    buffer.close()
    return {"bytes": done, "seconds": seconds, "GB_per_s": done / seconds / GB}


class Meter(threading.Thread):
    """Samples, every ``interval`` s, the RSS of this process and all its descendants (the
    LocalCluster's nannies and workers) and the load average."""

    def __init__(self, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        import psutil

        self.psutil, self.interval = psutil, interval
        self.me = psutil.Process()
        self.samples: list[tuple[float, int]] = []
        self.peak: dict[int, int] = {}
        self.names: dict[int, str] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            total = 0
            try:
                procs = [self.me, *self.me.children(recursive=True)]
            except self.psutil.Error:
                procs = [self.me]
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    if p.pid not in self.names:
                        self.names[p.pid] = " ".join(p.cmdline()[:3])[:80]
                except self.psutil.Error:  # gone, or a zombie
                    continue
                total += rss
                self.peak[p.pid] = max(self.peak.get(p.pid, 0), rss)
            self.samples.append((time.perf_counter(), total))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def peak_between(self, t0: float, t1: float) -> int:
        return max((s for t, s in self.samples if t0 <= t <= t1), default=0)


@contextmanager
def timed_passes(device: str, workers: Callable[[], list[int]]) -> Iterator[list[dict]]:
    """Time every pass of the Dask backend in this block: ``prepare`` (the check pass) and
    each ``map_reduce``, with the disk bytes read, the workers' CPU time and the machine's CPU
    use during it. The class's methods are wrapped for the block only (a measurement aid:
    the backend is not changed)."""
    import psutil

    from dpkmeans.compute.backends.dask import DaskBackend

    passes: list[dict] = []

    def cpu_seconds() -> float:
        total = 0.0
        for pid in workers():
            try:
                t = psutil.Process(pid).cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def wrap(method: Callable, kind: str) -> Callable:
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            disk0, cpu0, busy0, t0 = (disk_read_bytes(device), cpu_seconds(), cpu_busy(),
                                      time.perf_counter())
            load0 = _load()
            out = method(self, *args, **kwargs)
            t1 = time.perf_counter()
            busy1 = cpu_busy()
            passes.append({"kind": kind, "t0": t0, "t1": t1, "seconds": t1 - t0,
                           "disk_read_bytes": disk_read_bytes(device) - disk0,
                           "workers_cpu_s": cpu_seconds() - cpu0,
                           "machine_cpu_busy": (busy1[0] - busy0[0]) / (busy1[1] - busy0[1]),
                           "load_average_before": load0, "load_average_after": _load()})
            return out
        return timed

    saved = DaskBackend.prepare, DaskBackend.map_reduce
    DaskBackend.prepare = wrap(saved[0], "check")
    DaskBackend.map_reduce = wrap(saved[1], "iteration")
    try:
        yield passes
    finally:
        DaskBackend.prepare, DaskBackend.map_reduce = saved


# --------------------------------------------------------------------------------------------
# Per-block costs and the bits
# --------------------------------------------------------------------------------------------


def block_costs(src: Any, bounds: tuple[np.ndarray, np.ndarray], centroids: np.ndarray,
                samples: int = 12) -> dict:
    """Per-block costs in this process, one thread, on ``samples`` chunks spread over the
    data: read and decode (``O_DIRECT``, as the fit reads; and through the page cache, cold and
    warm), the row-major fill with the clip, the check pass's count, and the statistics kernel
    (``block_stats``, R = 1, k = 8)."""
    from dpkmeans.compute.backends.dask import stream_blocks
    from dpkmeans.compute.backends.parquet import ParquetRows, _kernels, clip_mode
    from dpkmeans.compute.lloyd import block_stats

    per = stream_blocks(src.n_rows, src.n_features, 2)
    sources = {True: ParquetRows(src.files, src.columns, direct=True),
               False: ParquetRows(src.files, src.columns, direct=False)}
    chunks = {k: s.chunks(per * BLOCK_ROWS) for k, s in sources.items()}
    picks = sorted({int(i) for i in np.linspace(0, len(chunks[True]) - 1, samples)})
    lower, upper = bounds
    C = centroids[None]
    names = ("read_decode_direct", "read_decode_cached_cold", "read_decode_cached_warm",
             "fill_clip", "check", "stats")
    times: dict[str, list[float]] = {k: [] for k in names}
    fill, count = _kernels()
    mode = clip_mode(src.n_features)
    blocks = 0
    block_stats(np.zeros((BLOCK_ROWS, src.n_features)), C)  # compiled before timing
    for i in picks:
        chunk, cached = chunks[True][i][1], chunks[False][i][1]
        n_blocks = -(-chunk.rows // BLOCK_ROWS)
        blocks += n_blocks
        t0 = time.perf_counter()
        decoded = list(chunk._batches())  # pyarrow's arrays: copies, safe to keep
        t1 = time.perf_counter()
        built = []
        for cols in decoded:  # a row group of the files here is one block
            built.append(np.empty((cols[0].shape[0], src.n_features)))
            fill(built[-1], 0, cols, lower, upper, mode)
        t2 = time.perf_counter()
        for cols in decoded:
            count(cols, lower, upper)
        t3 = time.perf_counter()
        for block in built:
            block_stats(block, C)
        t4 = time.perf_counter()
        evict(sorted({p.path for p in cached.pieces}))
        t5 = time.perf_counter()
        for _ in cached._batches():
            pass
        t6 = time.perf_counter()
        for _ in cached._batches():
            pass
        t7 = time.perf_counter()
        for name, seconds in (("read_decode_direct", t1 - t0),
                              ("fill_clip", t2 - t1), ("check", t3 - t2),
                              ("stats", t4 - t3), ("read_decode_cached_cold", t6 - t5),
                              ("read_decode_cached_warm", t7 - t6)):
            times[name].append(seconds / n_blocks)
    block_bytes = BLOCK_ROWS * src.n_features * 8
    return {"block_rows": BLOCK_ROWS, "block_bytes": block_bytes, "chunks_sampled": len(picks),
            "blocks_sampled": blocks,
            "median_ms_per_block": {k: 1e3 * float(np.median(v)) for k, v in times.items()},
            "GB_per_s": {k: block_bytes / float(np.median(v)) / GB for k, v in times.items()
                         if np.median(v) > 0},
            "load_average": _load(),
            "note": "wall time per block of 2^16 rows, one thread of the client process, no fit "
                    "running. read_decode: the chunk's row groups read (O_DIRECT as in the fit, "
                    "or through the page cache, evicted first, then again) and decoded by "
                    "pyarrow; fill_clip: fill_rows, the row-major fill with the clip, into a "
                    "fresh block per row group; check: count_rows on decoded columns; stats: "
                    "block_stats (exact assignment and sums), R = 1, k = 8."}


def bits_check(files: list[str], n_total: int, d: int, client: Any, bounds: tuple) -> dict:
    """The first file streamed through the Dask backend against the in-memory fit on the same
    records regenerated from the seed: the same centroids, bit for bit, and the same ledger."""
    from dpkmeans import DPKMeans
    from dpkmeans.compute.backends.parquet import ParquetRows

    src = ParquetRows(files[:1], columns(d))
    n = src.n_rows
    blocks = mixture_blocks(n_total, d)  # the same draws as the write, up to the first file
    X = np.concatenate([next(blocks) for _ in range(-(-n // BLOCK_ROWS))])
    params = dict(n_clusters=K, epsilon=EPSILON, bounds=bounds, algorithm="dplloyd-impr",
                  n_records=n, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the clipping warning
        t0 = time.perf_counter()
        memory = DPKMeans(**params).fit(X)
        t1 = time.perf_counter()
        streamed = DPKMeans(**params, backend="dask", client=client).fit(src)
        t2 = time.perf_counter()
    same = (memory.cluster_centers_.tobytes() == streamed.cluster_centers_.tobytes()
            and memory.ledger_.entries == streamed.ledger_.entries
            and memory.n_iter_ == streamed.n_iter_)
    return {"rows": n, "same_bits": bool(same), "memory_fit_s": t1 - t0,
            "streamed_fit_s": t2 - t1, "iterations": int(memory.n_iter_),
            "method": "the first file (ParquetRows of one file) with backend='dask' on the same "
                      "cluster, against DPKMeans().fit on the same rows regenerated in memory "
                      "from the seed; centroids compared byte for byte, ledgers entry for "
                      "entry"}


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def warm_up(d: int) -> float:
    """Compile this process's kernels (the statistics kernel, the fill and the count) before
    anything is timed: numba compiles on first use, which would land in the first pass."""
    from dpkmeans.compute.backends.parquet import _kernels, clip_mode
    from dpkmeans.compute.lloyd import block_stats

    start = time.perf_counter()
    block_stats(np.zeros((BLOCK_ROWS, d)), np.zeros((1, K, d)))
    fill, count = _kernels()
    cols = tuple(np.zeros(8) for _ in range(d))
    fill(np.empty((8, d)), 0, cols, np.zeros(d), np.ones(d), clip_mode(d))
    count(cols, np.zeros(d), np.ones(d))
    return time.perf_counter() - start


def fit_out_of_core(folder: Path, files: list[str], n: int, d: int, file_bytes: int) -> dict:
    """The streamed fit with its passes, memory and CPU measured; then the bits check and the
    per-block costs."""
    import dask
    from distributed import Client, LocalCluster

    from dpkmeans import DPKMeans
    from dpkmeans.compute.backends.dask import WORKER_MALLOC_ENV
    from dpkmeans.compute.backends.parquet import ParquetRows

    bounds = (-np.ones(d), np.ones(d))
    device = disk_of(folder)
    meter = Meter()
    meter.start()
    environ = {**dask.config.get("distributed.nanny.pre-spawn-environ"), **WORKER_MALLOC_ENV}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=40)
    client = Client(cluster, set_as_default=False)
    try:
        workers = list(client.run(os.getpid).values())
        warm = client.run(warm_up, d)  # numba's compilation, outside the timed passes
        nannies = list(client.run(os.getpid, nanny=True).values())
        src = ParquetRows(folder, columns(d))
        assert src.n_rows == n, (src.n_rows, n)
        evict(files)  # the first pass reads from the disk, not from what the write left cached
        model = DPKMeans(n_clusters=K, epsilon=EPSILON, bounds=bounds, algorithm="dplloyd-impr",
                         backend="dask", client=client, n_records=n, random_state=SEED)
        with timed_passes(device, lambda: workers) as passes, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the clipping warning
            t0 = time.perf_counter()
            model.fit(src)
            fit_s = time.perf_counter() - t0
        fit_window, fit_peaks = (t0, t0 + fit_s), dict(meter.peak)  # the bits check apart
        bits = bits_check(files, n, d, client, bounds)
    finally:
        client.close()
        cluster.close()
        meter.stop()
    for p in passes:
        p["file_bytes_per_s"] = file_bytes / p["seconds"]
        p["data_bytes_per_s"] = n * d * 8 / p["seconds"]
        p["peak_rss_sum_bytes"] = meter.peak_between(p["t0"], p["t1"])
    roles = {pid: f"nanny {i}" for i, pid in enumerate(nannies)}
    roles.update({pid: f"worker {i}" for i, pid in enumerate(workers)})
    roles[os.getpid()] = "client (with the scheduler and the nannies)"  # LocalCluster's
    per_process = {f"{roles.get(pid, 'other')} (pid {pid})": rss
                   for pid, rss in sorted(fit_peaks.items(), key=lambda x: -x[1])}
    others = {f"pid {pid}": meter.names.get(pid, "") for pid in meter.peak if pid not in roles}
    return {"fit_s": fit_s, "passes": passes, "iterations": int(model.n_iter_),
            "worker_warm_up_s": sorted(warm.values()),
            "direct": src.direct,
            "n_records_used": model.n_records_used_,
            "memory": {"peak_rss_sum_bytes": meter.peak_between(*fit_window),
                       "peak_rss_sum_whole_run_bytes": max(s for _, s in meter.samples),
                       "peak_rss_per_process_bytes": per_process, "other_processes": others,
                       "note": "per-process peaks from the cluster's start to the end of the "
                               "fit; the whole-run peak includes the bits check, whose "
                               "in-memory fit holds its 2^22-row sample in the client",
                       "samples": len(meter.samples), "interval_s": meter.interval},
            "bits": bits, "centroids": model.cluster_centers_.tolist(),
            "costs": block_costs(src, bounds, model.cluster_centers_)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.out_of_core",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS, help=f"records (default {ROWS:.0e})")
    parser.add_argument("--cols", type=int, default=COLS, help="features (default 10)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="folder for the Parquet files (default: a new one under /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the files afterwards")
    parser.add_argument("--reuse", action="store_true",
                        help="use the files a --keep run left in --dir (same rows and cols)")
    parser.add_argument("--out", type=Path, default=OUT, help="JSON output")
    args = parser.parse_args(argv)
    if args.rows < BLOCK_ROWS or args.cols < 1:
        parser.error(f"--rows must be at least {BLOCK_ROWS} and --cols at least 1")
    n, d = args.rows, args.cols
    started = time.perf_counter()
    report = {"mode": "full" if n >= ROWS else "small", "machine": machine_info(),
              "load_average_start": _load(),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": []}
    folder = args.dir or Path(tempfile.mkdtemp(prefix="dpkmeans-out-of-core-", dir="/tmp"))
    folder.mkdir(parents=True, exist_ok=True)
    made = args.dir is None or not any(folder.iterdir())
    try:
        manifest_path = folder / MANIFEST
        if args.reuse and manifest_path.exists():
            manifest = json.loads(manifest_path.read_text())
            if (manifest["rows"], manifest["cols"], manifest["seed"]) != (n, d, SEED):
                parser.error(f"{folder} holds {manifest['rows']} x {manifest['cols']} rows")
            manifest["reused"] = True
        else:
            if any(p.suffix == ".parquet" for p in folder.iterdir()):
                parser.error(f"{folder} already holds Parquet files (--reuse them, or empty it)")
            need = int(n * d * 8 * 1.01) + DISK_MARGIN
            free = shutil.disk_usage(folder).free
            print(f"free disk {free / GB:.1f} GB, need {need / GB:.1f} GB", flush=True)
            if free < need:
                parser.error(f"not enough free disk in {folder}: {free / GB:.1f} GB free, "
                             f"{need / GB:.1f} GB needed")
            made = True
            manifest = write_files(folder, n, d)
            print(f"wrote {manifest['files']} files, {manifest['file_bytes'] / GB:.2f} GB in "
                  f"{manifest['write_s']:.0f} s", flush=True)
        files = sorted(str(p) for p in folder.glob("*.parquet"))
        file_bytes = sum(os.path.getsize(f) for f in files)
        before = direct_bandwidth(files)
        print(f"disk (O_DIRECT) {before['GB_per_s']:.2f} GB/s", flush=True)
        load_before = _load()
        fit = fit_out_of_core(folder, files, n, d, file_bytes)
        after = direct_bandwidth(files[len(files) // 2:])
        bandwidth = max(before["GB_per_s"], after["GB_per_s"]) * GB
        for p in fit["passes"]:
            p["ratio_to_disk"] = p["file_bytes_per_s"] / bandwidth
            print(f"{p['kind']:>9}: {p['seconds']:6.1f} s, {p['file_bytes_per_s'] / GB:.2f} GB/s "
                  f"({p['ratio_to_disk']:.2f} of the disk), disk read "
                  f"{p['disk_read_bytes'] / GB:.1f} GB, machine CPU "
                  f"{100 * p['machine_cpu_busy']:.0f}%", flush=True)
        worst = min(p["ratio_to_disk"] for p in fit["passes"])
        peak = fit["memory"]["peak_rss_sum_bytes"]
        met = {"throughput": worst >= TARGET_RATIO, "memory": peak <= TARGET_MEMORY,
               "bits": fit["bits"]["same_bits"]}
        print(f"peak RSS sum {peak / GB:.2f} GB; bits equal: {fit['bits']['same_bits']}")
        measurements = {
            "write": manifest, "disk_bandwidth": {"before_fit": before, "after_fit": after,
                                                  "used_GB_per_s": bandwidth / GB},
            "fit_s": fit["fit_s"], "worker_warm_up_s": fit["worker_warm_up_s"],
            "passes": fit["passes"], "memory": fit["memory"],
            "per_block_costs": fit["costs"], "bits": fit["bits"]}
        res = _result(
            6, "DPKMeans fit over Parquet larger than memory (Dask, streamed)",
            {"n": n, "d": d, "k": K, "epsilon": EPSILON, "algorithm": "dplloyd-impr",
             "T": fit["iterations"], "bounds": [-1.0, 1.0], "workers": 2,
             "threads_per_worker": 1, "data_GB": n * d * 8 / GB, "file_GB": file_bytes / GB,
             "files": len(files), "row_group_rows": BLOCK_ROWS, "o_direct": fit["direct"],
             "ram_GB": report["machine"]["ram_GB"]},
            measurements, worst,
            "slowest pass: (Parquet bytes / pass time) / the disk's O_DIRECT sequential read "
            "bandwidth (the larger of the measurements before and after the fit)",
            f">= {TARGET_RATIO} of the disk per pass; peak RSS sum <= {TARGET_MEMORY / GB:g} GB; "
            "same bits as in memory", all(met.values()),
            "One DPKMeans(n_clusters=8, epsilon=1, bounds=[-1, 1]^d, algorithm='dplloyd-impr', "
            "backend='dask', n_records=N).fit(ParquetRows(folder, columns)) on a LocalCluster of "
            "2 single-threaded worker processes, whose kernels are compiled first (numba). The "
            "files' pages are evicted from the page cache before the fit; each pass is DaskBackend.prepare (the check pass) or one "
            "map_reduce (an iteration), timed around the call. Disk bytes from /proc/diskstats "
            "(sectors read on the device). RSS of this process (client and scheduler) and of "
            "every descendant (nannies, workers) sampled every 0.1 s; the sum over-counts "
            "shared pages, so it is an upper bound.",
            met_each=met, peak_rss_sum_GB=peak / GB, load_average_before=load_before,
            load_average_after=_load())
        report["results"].append(res)
    finally:
        if made and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        elif args.keep:
            print(f"kept {folder}")
    report["wall_s"] = time.perf_counter() - started
    report["load_average_end"] = _load()
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
