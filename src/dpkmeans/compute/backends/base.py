"""The backend interface (:mod:`dpkmeans.compute.backends`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpkmeans.compute.lloyd import stats_with

__all__ = ["Backend"]


class Backend:
    """Runs map-reduce steps over the public block plan of data it holds.

    Subclasses implement :meth:`prepare`, :meth:`map_reduce` and :meth:`map_concat`; the
    statistics every algorithm needs are built on them here, once.
    """

    name = "abstract"

    def prepare(self, X: Any, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[Any, int, int]:
        """Clip X to the public bounds and hold it: (data handle, rows, values clipped).
        The clip count is the data holder's: it decides whether to warn (the warning does not
        show it) and is kept in the run's result, never in a release."""
        raise NotImplementedError

    def map_reduce(self, data: Any, fn: Callable[..., tuple[np.ndarray, ...]],
                   *args: Any, with_start: bool = False) -> tuple[np.ndarray, ...]:
        """``fn(block, *args)`` on every block, added in the plan's fixed order; with
        ``with_start``, ``fn(block, start_row, *args)`` (the block's first row in the data)."""
        raise NotImplementedError

    def map_concat(self, data: Any, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
        """``fn(block, *args)`` on every block, concatenated along the last axis (per-row
        results such as labels)."""
        raise NotImplementedError

    def records(self, data: Any, rows: np.ndarray) -> np.ndarray:
        """The records at the integer positions ``rows`` (any shape), as an array of shape
        ``rows.shape + (features,)``: a map-reduce gather (each block contributes the records
        it holds, zeros elsewhere), so every backend returns the same bits."""
        (out,) = self.map_reduce(data, _gather, np.asarray(rows, dtype=np.int64),
                                 with_start=True)
        return out

    def labels(self, X: Any, centroids: np.ndarray) -> np.ndarray:
        """Each row's exact nearest centroid (:func:`dpkmeans.compute.lloyd.assign`) for the (k, d)
        centroids, as a numpy array: for the estimators' ``labels_`` and ``predict``."""
        raise NotImplementedError

    def stats(self, data: Any, centroids: np.ndarray,
              scores: str = "double") -> tuple[np.ndarray, np.ndarray]:
        """Exact per-cluster sums (R, k, d) and counts (R, k) (the DP-Lloyd query)."""
        return stats_with(self.map_reduce, data, centroids, scores)

    def close(self) -> None:
        """Release what the backend started (a cluster it created); a no-op by default."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _gather(block: np.ndarray, start: int, rows: np.ndarray) -> tuple[np.ndarray]:
    """The requested records that fall in this block, zeros elsewhere (:meth:`Backend.records`)."""
    out = np.zeros(rows.shape + (block.shape[1],))
    inside = (rows >= start) & (rows < start + block.shape[0])
    out[inside] = block[rows[inside] - start]
    return (out,)
