"""The public block plan shared by every backend.

Statistics of the data are computed block by block, on fixed-size blocks of rows, and the
blocks' results are added in one fixed order: a pairwise tree over the blocks in row order.
The in-memory backend and the Dask backend use this plan and this order, and compute each
block with the same function, so they give the same bits for the same seed, however the data
are partitioned on the workers. The plan depends on the number of rows only (public, or the
noisy count of a release), never on the values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

__all__ = ["BLOCK_ROWS", "plan", "tree_reduce", "tree_sum", "add_parts"]

T = TypeVar("T")

#: Rows per block. Every dataset of the DP-KCCM study fits in one block, so its numbers are those
#: of a single pass.
BLOCK_ROWS = 2**16


def plan(n_rows: int, block_rows: int = BLOCK_ROWS) -> list[slice]:
    """The row slices of the blocks of an ``n_rows``-row matrix: [0, B), [B, 2B), ..."""
    if n_rows < 0:
        raise ValueError(f"n_rows must be >= 0, got {n_rows}")
    return [slice(start, min(start + block_rows, n_rows))
            for start in range(0, max(n_rows, 1), block_rows)]


def tree_reduce(parts: Sequence[T], combine: Callable[[T, T], T]) -> T:
    """Combine the blocks' results in the one fixed order: pairs of neighbours, then pairs of
    pairs, and so on (an odd last one is carried up unchanged). ``combine`` adds two results
    here (:func:`tree_sum`) or schedules their addition on a cluster (the Dask backend)."""
    level = list(parts)
    if not level:
        raise ValueError("a reduction needs at least one block")
    while len(level) > 1:
        paired = [combine(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def add_parts(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Two blocks' results (tuples of arrays) added element by element."""
    return tuple(x + y for x, y in zip(a, b, strict=True))


def tree_sum(parts: Sequence[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The blocks' results (each a tuple of arrays) added in the plan's fixed order."""
    return tree_reduce([tuple(p) for p in parts], add_parts)
