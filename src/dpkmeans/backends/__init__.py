"""Where the statistics of the data are computed: in memory, or on a Dask cluster (book
chapter 8; ``docs/design.md``, "Determinism and the block plan").

A backend holds the clipped data and runs *map-reduce* steps over the public block plan of
:mod:`dpkmeans.blocks`: a map function computes an exact statistic of one block (e.g.
:func:`dpkmeans.lloyd.block_stats`), and the blocks' results are added in the plan's fixed
order. Noise is never drawn by a backend: the engine draws it once, on the client, from the
exact sums. Both backends compute every block with the same function and add in the same
order, so they give the same bits for the same seed.

- :class:`MemoryBackend` (``"memory"``, the default): numpy in this process.
- :class:`dpkmeans.backends.dask.DaskBackend` (``"dask"``): ``dask.distributed`` workers.
"""

from __future__ import annotations

from .base import Backend, get_backend
from .memory import MemoryBackend

__all__ = ["Backend", "MemoryBackend", "get_backend", "BACKENDS"]

#: Backend names accepted by :func:`get_backend` (and ``backend=`` of the engine and estimators).
BACKENDS = ("memory", "dask")
