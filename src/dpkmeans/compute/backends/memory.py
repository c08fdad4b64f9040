"""The in-memory backend: numpy in this process, over the public block plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpkmeans.compute.backends.base import Backend
from dpkmeans.compute.blocks import plan
from dpkmeans.compute.bounds import clip_to_bounds
from dpkmeans.compute.lloyd import as_data_matrix, assign, local_map_reduce

__all__ = ["MemoryBackend"]


class MemoryBackend(Backend):
    """Statistics computed here, block by block (:func:`dpkmeans.compute.lloyd.local_map_reduce`)."""

    name = "memory"

    def prepare(self, X: Any, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int, int]:
        clipped, n_clipped = clip_to_bounds(as_data_matrix(X), bounds)
        return clipped, clipped.shape[0], n_clipped

    def map_reduce(self, data: np.ndarray, fn: Callable[..., tuple[np.ndarray, ...]],
                   *args: Any, with_start: bool = False) -> tuple[np.ndarray, ...]:
        return local_map_reduce(data, fn, *args, with_start=with_start)

    def map_concat(self, data: np.ndarray, fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
        return np.concatenate([fn(data[rows], *args) for rows in plan(data.shape[0])], axis=-1)

    def labels(self, X: Any, centroids: np.ndarray) -> np.ndarray:
        return assign(X, centroids)
