"""The Dask backend: the paper's MapReduce on ``dask.distributed`` (book chapter 8).

*Map*: every block of the public plan (:mod:`dpkmeans.blocks`) is one chunk of a persisted
``dask.array`` on the workers, and one task computes its exact statistic (e.g. the per-cluster
sums and counts of :func:`dpkmeans.lloyd.block_stats`, every cluster, zeros included).
*Reduce*: the blocks' results are added by a tree of tasks in the plan's fixed pairwise order
(:func:`dpkmeans.blocks.tree_reduce`), and only the (R, k, d + 1) total comes back to the
client, where the engine draws the noise, once. Workers never draw noise.

The chunks are the plan's blocks whatever the input's partitioning (the array is rechunked
first), each block is computed by the same function as in memory, and the additions are the
same: so the Dask path gives the in-memory path's bits for the same seed.

Fault tolerance is Dask's: a task lost with a worker is recomputed from its graph (the data
chunks too: they are built from a graph, never scattered), and the engine draws an iteration's
noise only after the reduction has returned, so a recomputed iteration is never noised twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..blocks import BLOCK_ROWS, add_parts, plan, tree_reduce
from ..lloyd import assign
from .base import Backend

__all__ = ["DaskBackend", "DEFAULT_WORKERS"]

#: Workers of the LocalCluster started when no client is given (one per core here).
DEFAULT_WORKERS = 2


def _import_dask() -> tuple[Any, Any]:
    try:
        import dask
        import dask.array as da
    except ImportError as err:  # pragma: no cover - the dask extra is installed by make
        raise ImportError("backend='dask' needs dask[distributed]: "
                          "pip install 'dpkmeans[dask]'") from err
    return dask, da


def _clip_block(block: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return np.clip(block, lower, upper)


def _check_block(block: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """(non-finite values, values outside the bounds) of one block, as a (1, 2) chunk."""
    finite = np.isfinite(block)
    outside = finite & ((block < lower) | (block > upper))
    return np.array([[np.count_nonzero(~finite), np.count_nonzero(outside)]])


def _assign_block(block: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    return assign(block, centroids)


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
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster, set_as_default=False)
            self._owned = (client, cluster)
        elif not isinstance(client, Client):
            raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        self.client = client

    # -- data ------------------------------------------------------------------------------
    def as_blocks(self, X: Any) -> Any:
        """X (numpy, pandas, dask array or dask dataframe) as a float64 dask array whose
        chunks are the plan's blocks (a lazy graph, recomputable if a worker is lost)."""
        _, da = _import_dask()
        if hasattr(X, "to_dask_array"):  # a dask dataframe
            X = X.to_dask_array(lengths=True)
        if not isinstance(X, da.Array):
            arr = np.asarray(X, dtype=np.float64)
            if arr.ndim != 2:
                raise ValueError(f"X must be a 2-D array (rows x features), got shape {arr.shape}")
            X = da.from_array(arr, chunks=(BLOCK_ROWS, -1))
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (rows x features), got {X.ndim}-D")
        if X.dtype.kind not in "iuf":
            raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()
        return X.astype(np.float64).rechunk((BLOCK_ROWS, -1))

    def prepare(self, X: Any, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[Any, int, int]:
        from ..sensitivity import check_bounds

        lower, upper = check_bounds(bounds)
        arr = self.as_blocks(X)
        n_rows, d = (int(s) for s in arr.shape)
        if lower.size != d:
            raise ValueError(f"bounds have {lower.size} features but X has {d}")
        if n_rows == 0:
            raise ValueError("X must contain at least one row")
        checks = arr.map_blocks(_check_block, lower, upper, chunks=(1, 2), dtype=np.int64)
        non_finite, n_clipped = (int(v) for v in self.client.compute(checks.sum(axis=0)).result())
        if non_finite:
            raise ValueError("X must contain only finite values")
        from distributed import futures_of, wait

        clipped = self.client.persist(arr.map_blocks(_clip_block, lower, upper, dtype=np.float64))
        with self.client.as_current():
            wait(futures_of(clipped))  # held on the workers before the first iteration
        return clipped, n_rows, n_clipped

    # -- map-reduce ------------------------------------------------------------------------
    def submit(self, data: Any, fn: Callable[..., tuple[np.ndarray, ...]], *args: Any,
               with_start: bool = False) -> Any:
        """The future of :meth:`map_reduce`'s result (one map task per block, then the tree
        of additions on the workers)."""
        dask, _ = _import_dask()
        blocks = data.to_delayed().ravel()
        starts = [rows.start for rows in plan(int(data.shape[0]))]
        if len(starts) != len(blocks):  # pragma: no cover - as_blocks guarantees the plan
            raise RuntimeError("the data's chunks are not the public block plan")
        task = dask.delayed(fn, pure=True)
        mapped = [task(block, start, *args) if with_start else task(block, *args)
                  for block, start in zip(blocks, starts)]
        total = tree_reduce(mapped, dask.delayed(add_parts, pure=True))
        return self.client.compute(total)

    def map_reduce(self, data: Any, fn: Callable[..., tuple[np.ndarray, ...]], *args: Any,
                   with_start: bool = False) -> tuple[np.ndarray, ...]:
        return tuple(self.submit(data, fn, *args, with_start=with_start).result())

    def map_concat(self, data: Any, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
        dask, _ = _import_dask()
        task = dask.delayed(fn, pure=True)
        parts = self.client.compute([task(block, *args) for block in data.to_delayed().ravel()])
        return np.concatenate(self.client.gather(parts), axis=-1)

    def labels(self, X: Any, centroids: np.ndarray) -> np.ndarray:
        return self.map_concat(self.as_blocks(X), _assign_block, np.asarray(centroids, float))

    def close(self) -> None:
        if self._owned is not None:
            client, cluster = self._owned
            self._owned = None
            client.close()
            cluster.close()
