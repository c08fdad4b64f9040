"""The Dask backend: the paper's MapReduce on ``dask.distributed`` (book chapter 8).

*Map*: the data are a persisted ``dask.array`` on the workers whose chunks are runs of 2^m
aligned blocks of the public plan (:mod:`dpkmeans.compute.blocks`); one task per chunk computes the
exact statistic of each of its blocks (e.g. the per-cluster sums and counts of
:func:`dpkmeans.compute.lloyd.block_stats`, every cluster, zeros included) and adds them in the plan's
pairwise order. *Reduce*: a tree of tasks adds the chunks' results in the same order
(:func:`dpkmeans.compute.blocks.tree_reduce`), and only the (R, k, d + 1) total comes back to the
client, where the engine draws the noise, once. Workers never draw noise.

A chunk of 2^m aligned blocks is exactly one node of the plan's pairwise tree, so the chunking
(chosen from the number of workers, :func:`chunk_blocks`, to keep the scheduler's per-task cost
small) changes no bit: whatever the input's partitioning (it is rechunked first) and however
many workers there are, every block is computed by the same function as in memory and the
additions are the same. The Dask path gives the in-memory path's bits for the same seed.

*Streamed data* (:class:`~dpkmeans.compute.backends.parquet.ParquetRows`, or any input with
``DaskBackend(persist=False)``) are never held: each map-reduce reads every chunk again in the
task that computes its node (Parquet files on disk: :mod:`dpkmeans.compute.backends.parquet`),
so a fit needs a few blocks' memory per worker, however large the data. The chunks of a Parquet
source are up to :data:`STREAM_CHUNK_BYTES` of records (:func:`stream_blocks`), still aligned
runs of 2^m blocks: the bits do not change.

Fault tolerance is Dask's: a task lost with a worker is recomputed from its graph (the data
chunks too: they are built from a graph, never scattered), and the engine draws an iteration's
noise only after the reduction has returned, so a recomputed iteration is never noised twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkmeans.compute.backends.base import Backend
from dpkmeans.compute.backends.parquet import ParquetRows, RowChunk
from dpkmeans.compute.blocks import BLOCK_ROWS, add_parts, plan, tree_reduce, tree_sum
from dpkmeans.compute.lloyd import assign
from dpkmeans.extras import require
from dpkmeans.privacy.sensitivity import check_bounds

__all__ = ["DaskBackend", "HeldChunks", "StreamedChunks", "chunk_blocks", "stream_blocks",
           "lazy_labels", "DEFAULT_WORKERS", "STREAM_CHUNK_BYTES"]

#: Workers of the LocalCluster started when no client is given (one per core here).
DEFAULT_WORKERS = 2

#: glibc allocator settings for the workers of our own LocalCluster. distributed's default
#: (``MALLOC_TRIM_THRESHOLD_=65536``) makes every per-block temporary (an ``n x k`` distance
#: matrix, megabytes) a fresh ``mmap`` plus page faults; a worker's CPU per call then grew
#: from 0.4 s to 2.0 s over eight consecutive calls at N = 10^6 (``benchmarks/README.md``,
#: "The Dask backend and the silhouette reproduction"). Keeping freed memory in the heap holds
#: it at 0.4 s. Numbers only: no effect on results. A user's own cluster is configured by its
#: owner.
WORKER_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": 2**31 - 1, "MALLOC_MMAP_THRESHOLD_": 2**30}

#: Largest chunk of a streamed Parquet source, in float64 bytes: one task reads it in a few
#: long sequential reads but never holds it whole (a block and two read windows at a time,
#: :mod:`dpkmeans.compute.backends.parquet`); fewer, larger tasks pay the scheduler less. 16
#: blocks at d = 10 were faster than 8 and no slower than 32 (``benchmarks/README.md``,
#: benchmark 6).
STREAM_CHUNK_BYTES = 128 * 2**20


def _import_dask() -> tuple[Any, Any]:
    dask = require("dask", "backend='dask'")
    require("distributed", "backend='dask'")
    return dask, require("dask.array", "backend='dask'")


def _clip_block(block: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return np.clip(block, lower, upper)


def _check_block(block: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """(non-finite values, values outside the bounds) of one block, as a (1, 2) chunk."""
    finite = np.isfinite(block)
    outside = finite & ((block < lower) | (block > upper))
    return np.array([[np.count_nonzero(~finite), np.count_nonzero(outside)]])


def _assign_block(block: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    return assign(block, centroids)


def chunk_blocks(n_rows: int, n_workers: int, tasks_per_worker: int = 2) -> int:
    """Blocks per chunk: the largest power of two that still leaves at least
    ``tasks_per_worker`` chunks per worker (so the load stays balanced). A chunk of 2^m aligned
    blocks is one node of the plan's pairwise tree, so computing it in one task changes no bit
    (:func:`_chunk_reduce`); fewer, larger tasks pay the scheduler's per-task cost (several
    milliseconds) fewer times."""
    blocks = len(plan(n_rows))
    target = max(1, n_workers * tasks_per_worker)
    size = 1
    while -(-blocks // (2 * size)) >= target:
        size *= 2
    return size


def stream_blocks(n_rows: int, n_features: int, n_workers: int,
                  max_bytes: int = STREAM_CHUNK_BYTES) -> int:
    """Blocks per chunk of a streamed source: :func:`chunk_blocks`, but no more than the largest
    power of two whose float64 chunk fits in ``max_bytes`` (at least one block). Still an
    aligned run of 2^m blocks, so the bits are those of any other chunking."""
    per_block = BLOCK_ROWS * max(n_features, 1) * 8
    size = 1
    while 2 * size * per_block <= max_bytes:
        size *= 2
    return max(1, min(size, chunk_blocks(n_rows, n_workers)))


def _chunk_reduce(chunk: np.ndarray, chunk_start: int, fn: Callable[..., tuple[np.ndarray, ...]],
                  with_start: bool, *args: Any) -> tuple[np.ndarray, ...]:
    """The tree node of one chunk: its blocks' results added in the plan's order. The chunk
    starts at a multiple of 2^m blocks and holds at most 2^m of them, so the node is the one the
    in-memory tree builds for the same blocks."""
    return tree_sum([fn(chunk[rows], chunk_start + rows.start, *args) if with_start
                     else fn(chunk[rows], *args) for rows in plan(chunk.shape[0])])


def _chunk_concat(chunk: np.ndarray, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    return np.concatenate([fn(chunk[rows], *args) for rows in plan(chunk.shape[0])], axis=-1)


def _read_chunk(chunk: RowChunk) -> np.ndarray:
    """A chunk of a Parquet source as stored (for ``as_chunks``: checked and clipped later)."""
    return chunk.read()


def _read_check(chunk: RowChunk, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray]:
    """The counts of :func:`_check_block` for a chunk read from disk (the check pass)."""
    return (chunk.check(lower, upper),)


def _read_reduce(chunk: RowChunk, chunk_start: int, lower: np.ndarray, upper: np.ndarray,
                 clip: bool, fn: Callable[..., tuple[np.ndarray, ...]], with_start: bool,
                 *args: Any) -> tuple[np.ndarray, ...]:
    """:func:`_chunk_reduce` of a chunk read from disk in this task, block by block: each
    block is clipped to the bounds if the check pass found a value outside them (as
    :func:`_clip_block`), mapped, and dropped. The blocks are the plan's and their results
    are added in its order (:func:`dpkmeans.compute.blocks.tree_sum`): the same node."""
    return tree_sum([fn(block, chunk_start + start, *args) if with_start else fn(block, *args)
                     for start, block in chunk.blocks(lower, upper, clip=clip)])


def _read_assign(chunk: RowChunk, centroids: np.ndarray) -> np.ndarray:
    return assign(chunk.read(), centroids)


def lazy_labels(source: ParquetRows, centroids: np.ndarray,
                n_workers: int = DEFAULT_WORKERS) -> Any:
    """The exact nearest of the (k, d) ``centroids`` for every record of a Parquet source, as
    a lazy int64 dask array: each chunk is read again when (and where) it is computed.

    Parameters
    ----------
    source : ParquetRows
        The records (not clipped: as the in-memory ``labels_``).
    centroids : (k, d) array
        The centroids.
    n_workers : int
        Workers the chunks are sized for (:func:`stream_blocks`); no effect on the labels.

    Returns
    -------
    dask.array.Array
        Shape (n_records,), one chunk per task.
    """
    dask, da = _import_dask()
    C = np.asarray(centroids, dtype=float)
    if C.ndim != 2 or C.shape[1] != source.n_features:
        raise ValueError(f"centroids must have shape (k, {source.n_features}), got {C.shape}")
    per = stream_blocks(source.n_rows, source.n_features, n_workers)
    task = dask.delayed(_read_assign, pure=True)
    return da.concatenate([da.from_delayed(task(chunk, C), shape=(chunk.rows,), dtype=np.int64)
                           for _, chunk in source.chunks(per * BLOCK_ROWS)])


@dataclass(frozen=True)
class HeldChunks:
    """Data held on the workers: the persisted array, its chunks' futures in row order, and
    the rows where each chunk starts (multiples of ``blocks_per_chunk`` blocks)."""

    array: Any
    chunks: list[Any]
    starts: list[int]
    blocks_per_chunk: int

    @property
    def n_rows(self) -> int:
        return int(self.array.shape[0])


@dataclass(frozen=True)
class StreamedChunks:
    """Data read again at every map-reduce, never held: for each chunk, in row order, a
    :class:`~dpkmeans.compute.backends.parquet.RowChunk` (read, then clipped to ``bounds`` when
    ``clip``) or the ``dask.delayed`` chunk of a dask array's graph (already clipped), and the
    rows where the chunks start (multiples of ``blocks_per_chunk`` blocks)."""

    parts: list[Any]
    starts: list[int]
    blocks_per_chunk: int
    n_rows: int
    bounds: tuple[np.ndarray, np.ndarray]
    clip: bool


class DaskBackend(Backend):
    """Statistics computed on ``dask.distributed`` workers.

    Parameters
    ----------
    client : dask.distributed.Client or None
        The cluster (e.g. ``Client("tcp://scheduler:8786")``); it is used and left open.
        Without one, a ``LocalCluster`` of ``n_workers`` single-threaded worker processes is
        started, and :meth:`close` shuts it down.
    n_workers : int
        Workers of that ``LocalCluster``.
    persist : bool or None
        Whether :meth:`prepare` holds the data on the workers. ``None`` (default): in-memory
        inputs (numpy, pandas, dask arrays and dataframes) are persisted, a
        :class:`~dpkmeans.compute.backends.parquet.ParquetRows` source is streamed (read
        again at every map-reduce, for data larger than the cluster's memory). ``True``:
        everything is persisted (a Parquet source read once). ``False``: everything is
        streamed (a dask array's graph is computed again at every map-reduce).
    """

    name = "dask"

    def __init__(self, client: Any = None, *, n_workers: int = DEFAULT_WORKERS,
                 persist: bool | None = None) -> None:
        if persist is not None and not isinstance(persist, bool):
            raise TypeError(f"persist must be True, False or None, got {persist!r}")
        _import_dask()
        from distributed import Client, LocalCluster

        self.persist = persist

        self._owned: tuple[Any, Any] | None = None
        if client is None:
            import dask

            environ = {**dask.config.get("distributed.nanny.pre-spawn-environ"),
                       **WORKER_MALLOC_ENV}
            with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, dashboard_address=":0", silence_logs=40)
            client = Client(cluster, set_as_default=False)
            self._owned = (client, cluster)
        elif not isinstance(client, Client):
            raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        self.client = client

    # -- data ------------------------------------------------------------------------------
    def _workers(self) -> int:
        return max(1, len(self.client.scheduler_info()["workers"]))

    def _streams(self, X: Any) -> bool:
        """Whether :meth:`prepare` streams X (``persist``) rather than holding it."""
        return self.persist is False or (self.persist is None and isinstance(X, ParquetRows))

    def as_chunks(self, X: Any, blocks_per_chunk: int | None = None) -> Any:
        """X (numpy, pandas, dask array, dask dataframe or a
        :class:`~dpkmeans.compute.backends.parquet.ParquetRows` source) as a float64 dask array
        whose chunks are ``blocks_per_chunk`` blocks of the plan (by default
        :func:`chunk_blocks` for the cluster's workers, :func:`stream_blocks` for a Parquet
        source): a lazy graph, recomputable if a worker is lost. For repeated fits, persist
        this once (``client.persist(backend.as_chunks(X))``): a fit then neither rechunks nor
        moves the data."""
        dask, da = _import_dask()
        if isinstance(X, ParquetRows):
            n_rows, d = X.shape
            per = blocks_per_chunk or stream_blocks(n_rows, d, self._workers())
            parts = [da.from_delayed(dask.delayed(_read_chunk, pure=True)(chunk),
                                     shape=(chunk.rows, d), dtype=np.float64)
                     for _, chunk in X.chunks(per * BLOCK_ROWS)]
            return da.concatenate(parts, axis=0)
        if hasattr(X, "to_dask_array"):  # a dask dataframe
            X = X.to_dask_array(lengths=True)
        if not isinstance(X, da.Array):
            arr = np.asarray(X, dtype=np.float64)
            if arr.ndim != 2:
                raise ValueError(f"X must be a 2-D array (rows x features), got {arr.ndim}-D")
            X = da.from_array(arr, chunks=(BLOCK_ROWS, -1))  # rechunked below
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (rows x features), got {X.ndim}-D")
        if X.dtype.kind not in "iuf":
            raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()
        if blocks_per_chunk is None:
            blocks_per_chunk = chunk_blocks(int(X.shape[0]), self._workers())
        return X.astype(np.float64).rechunk((blocks_per_chunk * BLOCK_ROWS, -1))

    def prepare(self, X: Any, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[Any, int, int]:
        """Check X (finite, its values outside the bounds counted) in one pass on the workers,
        clip it only if a value lies outside (as in memory), and hold its blocks there; for
        streamed data (``persist``), only note how to read them again
        (:class:`StreamedChunks`)."""
        from distributed import futures_of, wait

        lower, upper = check_bounds(bounds)
        if isinstance(X, ParquetRows) and self._streams(X):
            return self._prepare_parquet(X, lower, upper)
        arr = self.as_chunks(X)
        n_rows, d = (int(s) for s in arr.shape)
        if lower.size != d:
            raise ValueError(f"bounds have {lower.size} features but X has {d}")
        if n_rows == 0:
            raise ValueError("X must contain at least one row")
        checks = arr.map_blocks(_check_block, lower, upper, chunks=(1, 2), dtype=np.int64)
        non_finite, n_clipped = (int(v) for v in self.client.compute(checks.sum(axis=0)).result())
        if non_finite:
            raise ValueError("X must contain only finite values")
        if n_clipped:
            arr = arr.map_blocks(_clip_block, lower, upper, dtype=np.float64)
        starts = np.concatenate([[0], np.cumsum(arr.chunks[0][:-1])]).astype(int).tolist()
        per_chunk = int(arr.chunks[0][0]) // BLOCK_ROWS if len(starts) > 1 else \
            len(plan(n_rows))
        if self._streams(X):
            parts = list(arr.to_delayed().ravel())
            return (StreamedChunks(parts, starts, per_chunk, n_rows, (lower, upper), False),
                    n_rows, n_clipped)
        held = self.client.persist(arr)  # a no-op for data already held on the workers
        by_key = {future.key: future for future in futures_of(held)}
        chunks = [by_key[row[0]] for row in held.__dask_keys__()]
        with self.client.as_current():
            wait(chunks)  # held on the workers before the first iteration
        return HeldChunks(held, chunks, starts, per_chunk), n_rows, n_clipped

    def _prepare_parquet(self, X: ParquetRows, lower: np.ndarray,
                         upper: np.ndarray) -> tuple[StreamedChunks, int, int]:
        """The check pass over a Parquet source, each task reading its chunk from disk; only
        the two counts come back. Nothing is held."""
        dask, _ = _import_dask()
        n_rows, d = X.shape
        if lower.size != d:
            raise ValueError(f"bounds have {lower.size} features but X has {d}")
        if n_rows == 0:
            raise ValueError("X must contain at least one row")
        per = stream_blocks(n_rows, d, self._workers())
        starts, parts = (list(t) for t in zip(*X.chunks(per * BLOCK_ROWS), strict=True))
        task, add = dask.delayed(_read_check), dask.delayed(add_parts)
        counts = self.client.compute(tree_reduce([task(c, lower, upper) for c in parts], add),
                                     optimize_graph=False).result()[0]
        non_finite, n_clipped = (int(v) for v in counts)
        if non_finite:
            raise ValueError("X must contain only finite values (no NaN, infinity or null)")
        per_chunk = per if len(parts) > 1 else len(plan(n_rows))
        return (StreamedChunks(parts, starts, per_chunk, n_rows, (lower, upper), n_clipped > 0),
                n_rows, n_clipped)

    # -- map-reduce ------------------------------------------------------------------------
    def _nodes(self, data: HeldChunks | StreamedChunks, fn: Callable[..., tuple[np.ndarray, ...]],
               args: tuple[Any, ...], with_start: bool) -> list[Any]:
        """One delayed task per chunk: its node of the tree (read from disk first, for a
        streamed Parquet source)."""
        dask, _ = _import_dask()
        task = dask.delayed(_chunk_reduce)
        if isinstance(data, HeldChunks):
            return [task(chunk, start, fn, with_start, *args)
                    for chunk, start in zip(data.chunks, data.starts, strict=True)]
        read = dask.delayed(_read_reduce)
        lower, upper = data.bounds
        return [read(part, start, lower, upper, data.clip, fn, with_start, *args)
                if isinstance(part, RowChunk) else task(part, start, fn, with_start, *args)
                for part, start in zip(data.parts, data.starts, strict=True)]

    def submit(self, data: HeldChunks | StreamedChunks, fn: Callable[..., tuple[np.ndarray, ...]],
               *args: Any, with_start: bool = False) -> Any:
        """The future of :meth:`map_reduce`'s result: one task per chunk (its node of the
        tree), then the rest of the tree, all on the workers, submitted as one graph."""
        dask, _ = _import_dask()
        nodes = self._nodes(data, fn, args, with_start)
        return self.client.compute(tree_reduce(nodes, dask.delayed(add_parts)),
                                   optimize_graph=False)

    def map_reduce(self, data: HeldChunks | StreamedChunks,
                   fn: Callable[..., tuple[np.ndarray, ...]], *args: Any,
                   with_start: bool = False) -> tuple[np.ndarray, ...]:
        return tuple(self.submit(data, fn, *args, with_start=with_start).result())

    def map_concat(self, data: HeldChunks | StreamedChunks, fn: Callable[..., np.ndarray],
                   *args: Any) -> np.ndarray:
        """Per-row results gathered on the client: refused for streamed data, which may be
        larger than the client's memory (an N-sized array)."""
        if isinstance(data, StreamedChunks):
            raise ValueError("this step gathers one value per record on the client, which "
                             "streamed data (a ParquetRows source, or persist=False) must "
                             "not do; for data that fit on the workers use "
                             "DaskBackend(persist=True)")
        dask, _ = _import_dask()
        task = dask.delayed(_chunk_concat)
        parts = self.client.compute([task(chunk, fn, *args) for chunk in data.chunks],
                                    optimize_graph=False)
        return np.concatenate(self.client.gather(parts), axis=-1)

    def labels(self, X: Any, centroids: np.ndarray) -> Any:
        """Each row's exact nearest centroid: a numpy array, or, for streamed X (``persist``),
        a lazy dask array, computed when (and by the scheduler with which) it is asked for,
        reading X again."""
        C = np.asarray(centroids, dtype=float)
        if isinstance(X, ParquetRows) and self._streams(X):
            return lazy_labels(X, C, self._workers())
        lazy = self.as_chunks(X).map_blocks(_assign_block, C, drop_axis=1, dtype=np.int64)
        return lazy if self._streams(X) else lazy.compute(scheduler=self.client)

    def close(self) -> None:
        if self._owned is not None:
            client, cluster = self._owned
            self._owned = None
            client.close()
            cluster.close()
