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

Fault tolerance is Dask's: a task lost with a worker is recomputed from its graph (the data
chunks too: they are built from a graph, never scattered), and the engine draws an iteration's
noise only after the reduction has returned, so a recomputed iteration is never noised twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkmeans.compute.blocks import BLOCK_ROWS, add_parts, plan, tree_reduce, tree_sum
from dpkmeans.extras import require
from dpkmeans.compute.lloyd import assign
from dpkmeans.privacy.sensitivity import check_bounds
from dpkmeans.compute.backends.base import Backend

__all__ = ["DaskBackend", "HeldChunks", "chunk_blocks", "DEFAULT_WORKERS"]

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


def _chunk_reduce(chunk: np.ndarray, chunk_start: int, fn: Callable[..., tuple[np.ndarray, ...]],
                  with_start: bool, *args: Any) -> tuple[np.ndarray, ...]:
    """The tree node of one chunk: its blocks' results added in the plan's order. The chunk
    starts at a multiple of 2^m blocks and holds at most 2^m of them, so the node is the one the
    in-memory tree builds for the same blocks."""
    return tree_sum([fn(chunk[rows], chunk_start + rows.start, *args) if with_start
                     else fn(chunk[rows], *args) for rows in plan(chunk.shape[0])])


def _chunk_concat(chunk: np.ndarray, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    return np.concatenate([fn(chunk[rows], *args) for rows in plan(chunk.shape[0])], axis=-1)


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


class DaskBackend(Backend):
    """Statistics computed on ``dask.distributed`` workers.

    ``client`` is a ``dask.distributed.Client`` (e.g. ``Client("tcp://scheduler:8786")`` for a
    real cluster); it is used and left open. Without one, :meth:`DaskBackend` starts a
    ``LocalCluster`` of ``n_workers`` single-threaded worker processes and :meth:`close`
    shuts it down.
    """

    name = "dask"

    def __init__(self, client: Any = None, *, n_workers: int = DEFAULT_WORKERS) -> None:
        _import_dask()
        from distributed import Client, LocalCluster

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
    def as_chunks(self, X: Any, blocks_per_chunk: int | None = None) -> Any:
        """X (numpy, pandas, dask array or dask dataframe) as a float64 dask array whose
        chunks are ``blocks_per_chunk`` blocks of the plan (by default :func:`chunk_blocks`
        for the cluster's workers): a lazy graph, recomputable if a worker is lost. For
        repeated fits, persist this once (``client.persist(backend.as_chunks(X))``): a fit
        then neither rechunks nor moves the data."""
        _, da = _import_dask()
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
            workers = len(self.client.scheduler_info()["workers"])
            blocks_per_chunk = chunk_blocks(int(X.shape[0]), workers)
        return X.astype(np.float64).rechunk((blocks_per_chunk * BLOCK_ROWS, -1))

    def prepare(self, X: Any, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[Any, int, int]:
        """Check X (finite, its values outside the bounds counted) in one pass on the workers,
        clip it only if a value lies outside (as in memory), and hold its blocks there."""
        from distributed import futures_of, wait

        lower, upper = check_bounds(bounds)
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
        held = self.client.persist(arr)  # a no-op for data already held on the workers
        by_key = {future.key: future for future in futures_of(held)}
        chunks = [by_key[row[0]] for row in held.__dask_keys__()]
        starts = np.concatenate([[0], np.cumsum(held.chunks[0][:-1])]).astype(int).tolist()
        with self.client.as_current():
            wait(chunks)  # held on the workers before the first iteration
        per_chunk = int(held.chunks[0][0]) // BLOCK_ROWS if len(chunks) > 1 else \
            len(plan(n_rows))
        return HeldChunks(held, chunks, starts, per_chunk), n_rows, n_clipped

    # -- map-reduce ------------------------------------------------------------------------
    def submit(self, data: HeldChunks, fn: Callable[..., tuple[np.ndarray, ...]], *args: Any,
               with_start: bool = False) -> Any:
        """The future of :meth:`map_reduce`'s result: one task per chunk (its node of the
        tree), then the rest of the tree, all on the workers, submitted as one graph."""
        dask, _ = _import_dask()
        task, add = dask.delayed(_chunk_reduce), dask.delayed(add_parts)
        nodes = [task(chunk, start, fn, with_start, *args)
                 for chunk, start in zip(data.chunks, data.starts, strict=True)]
        return self.client.compute(tree_reduce(nodes, add), optimize_graph=False)

    def map_reduce(self, data: HeldChunks, fn: Callable[..., tuple[np.ndarray, ...]], *args: Any,
                   with_start: bool = False) -> tuple[np.ndarray, ...]:
        return tuple(self.submit(data, fn, *args, with_start=with_start).result())

    def map_concat(self, data: HeldChunks, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
        dask, _ = _import_dask()
        task = dask.delayed(_chunk_concat)
        parts = self.client.compute([task(chunk, fn, *args) for chunk in data.chunks],
                                    optimize_graph=False)
        return np.concatenate(self.client.gather(parts), axis=-1)

    def labels(self, X: Any, centroids: np.ndarray) -> np.ndarray:
        C = np.asarray(centroids, dtype=float)
        return self.as_chunks(X).map_blocks(_assign_block, C, drop_axis=1, dtype=np.int64) \
            .compute(scheduler=self.client)

    def close(self) -> None:
        if self._owned is not None:
            client, cluster = self._owned
            self._owned = None
            client.close()
            cluster.close()
