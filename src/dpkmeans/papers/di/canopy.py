"""The "Optimized Canopy" initialiser of Shang et al. (2021), section 6, run on the raw,
private records: the initial centres *and* k.

The paper cites Zhao et al. (ICCCS 2018: "initial centers and the optimal cluster number based
on the minimum and maximum principle on MapReduce") and says no more. This module implements
one documented, deterministic reading of the max-min principle:

1. centre 1 is the record nearest (squared Euclidean) to the mean of all records;
2. centre i + 1 is the record whose minimum squared distance to centres 1..i is largest
   (farthest-first); D_{i+1} is that minimum distance (not squared), for i = 1..k_max;
3. Depth(i) = |D_i - D_{i-1}| + |D_{i+1} - D_i| for i = 2..k_max, with D_1 := D_2 (no
   distance is defined when centre 1 is added, so Depth(2) = |D_3 - D_2|), and k is the
   smallest i of largest Depth(i).

Ties go to the lowest row index. Everything runs through a backend's ``map_reduce``, ``records`` and
``map_concat`` (one code path; numpy input is held by a ``MemoryBackend``), so the Dask
backend gives the same bits. Nothing here is private: it reads the exact records (a leak).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkmeans.compute.backends.memory import MemoryBackend
from dpkmeans.compute.lloyd import as_data_matrix
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.strategies import InitialRelease
from dpkmeans.validation import check_positive_int

__all__ = ["CanopyInitialRelease", "CanopyResult", "optimized_canopy"]


@dataclass(frozen=True)
class CanopyResult:
    """The first ``n_clusters`` centres (k, d); ``max_min_distances[i - 2]`` is D_i for
    i = 2..k_max + 1 and ``depth[i - 2]`` is Depth(i) for i = 2..k_max (module docstring)."""

    centres: np.ndarray
    n_clusters: int
    max_min_distances: np.ndarray
    depth: np.ndarray


def _sum_count(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return block.sum(axis=0), np.array([block.shape[0]], dtype=np.int64)


def _sq_dist(block: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Each row's squared distance to one centre, in float64 (the same arithmetic everywhere)."""
    return ((block - centre) ** 2).sum(axis=1)


def _check_rows(n_rows: int, needed: int, k_max: int, n_clusters: int | None) -> None:
    if n_rows < needed:
        raise ValueError(f"Optimized Canopy needs at least {needed} records (k_max + 1 = "
                         f"{k_max + 1}, n_clusters = {n_clusters}); X has fewer")


def optimized_canopy(X: Any, *, n_clusters: int | None = None, k_max: int = 10,
                     backend: Any = None) -> CanopyResult:
    """Farthest-first centres from the record nearest the mean, and k by the depth index
    (Shang et al. 2021, section 6; module docstring).

    ``X`` is a finite (rows x features) array, or with ``backend`` the data that backend has
    prepared (``backend.prepare(X, bounds)[0]``). With ``n_clusters`` the number of centres is
    fixed; D and Depth are still reported over ``k_max`` (>= 2). Needs at least
    max(k_max + 1, n_clusters) records.
    """
    k_max = check_positive_int(k_max, "k_max", minimum=2)
    if n_clusters is not None:
        n_clusters = check_positive_int(n_clusters, "n_clusters")
    needed = max(k_max + 1, n_clusters or 0)
    if backend is None:
        X = as_data_matrix(X)
        _check_rows(X.shape[0], needed, k_max, n_clusters)
        backend = MemoryBackend()
        X, _, _ = backend.prepare(X, (X.min(axis=0), X.max(axis=0)))  # clips nothing
    total, count = backend.map_reduce(X, _sum_count)
    n_rows = int(count[0])
    _check_rows(n_rows, needed, k_max, n_clusters)

    def record(row: int) -> np.ndarray:
        return backend.records(X, np.array(row))

    centres = [record(int(np.argmin(backend.map_concat(X, _sq_dist, total / n_rows))))]
    nearest = backend.map_concat(X, _sq_dist, centres[0])
    distances = []
    while len(centres) < needed:
        row = int(np.argmax(nearest))
        distances.append(np.sqrt(nearest[row]))
        centres.append(record(row))
        if len(centres) < needed:
            nearest = np.minimum(nearest, backend.map_concat(X, _sq_dist, centres[-1]))
    D = np.array(distances[:k_max])  # D_2 .. D_{k_max + 1}
    steps = np.abs(np.diff(np.concatenate([D[:1], D])))  # |D_i - D_{i-1}|, i = 2..k_max + 1
    depth = steps[:-1] + steps[1:]  # Depth(i), i = 2..k_max
    k = n_clusters if n_clusters is not None else 2 + int(np.argmax(depth))
    return CanopyResult(np.stack(centres[:k]), k, D, depth)


@dataclass(frozen=True)
class CanopyInitialRelease(InitialRelease):
    """The engine's :class:`~dpkmeans.engine.strategies.InitialRelease` for Shang et al. (2021) as
    published: the
    Optimized Canopy's first ``config.n_clusters`` centres on the raw records, the same for
    every replica. It draws no randomness and charges nothing: reading the exact records is a
    leak, recorded by the configuration's flaw (the paper's section 6)."""

    name: str = "Optimized Canopy on the raw records (Shang et al. 2021, as published)"

    def __call__(self, ctx: HookContext) -> np.ndarray:
        canopy = optimized_canopy(ctx.data, n_clusters=ctx.config.n_clusters,
                                  backend=ctx.backend)
        ctx.ledger.post_process("initial centres: Optimized Canopy on the raw records (a leak, "
                                "recorded by the configuration's flaw)")
        return np.repeat(canopy.centres[None], ctx.replicas, axis=0)
