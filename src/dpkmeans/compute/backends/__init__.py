"""Where the statistics of the data are computed: in memory, or on a Dask cluster (book
chapter 8; ``docs/design.md``, "Determinism and the block plan").

A backend holds the clipped data and runs *map-reduce* steps over the public block plan of
:mod:`dpkmeans.compute.blocks`: a map function computes an exact statistic of one block (e.g.
:func:`dpkmeans.compute.lloyd.block_stats`), and the blocks' results are added in the plan's fixed
order. Noise is never drawn by a backend: the engine draws it once, on the client, from the
exact sums. Both backends compute every block with the same function and add in the same
order, so they give the same bits for the same seed.

- :class:`MemoryBackend` (``"memory"``, the default): numpy in this process.
- :class:`dpkmeans.compute.backends.dask.DaskBackend` (``"dask"``): ``dask.distributed`` workers.
"""

from __future__ import annotations

from typing import Any

from dpkmeans.compute.backends.base import Backend

# The Dask backend module imports dask itself only when a DaskBackend is created
# (``backends.dask._import_dask``), so importing it here does not need the optional dependency.
from dpkmeans.compute.backends.dask import DaskBackend
from dpkmeans.compute.backends.memory import MemoryBackend

__all__ = ["Backend", "MemoryBackend", "get_backend", "BACKENDS"]

#: Backend names accepted by :func:`get_backend` (and ``backend=`` of the engine and estimators).
BACKENDS = ("memory", "dask")


def get_backend(backend: str | Backend | None = None, *, client: Any = None) -> Backend:
    """A backend from its name (``"memory"``, the default, or ``"dask"``) or an instance.

    ``client`` (a ``dask.distributed.Client``) selects the Dask backend's cluster; without one
    the Dask backend starts a ``LocalCluster`` and closes it with :meth:`Backend.close`.
    """
    if isinstance(backend, Backend):
        if client is not None:
            raise ValueError("pass client= with a backend name, not with a backend instance")
        return backend
    if backend is None or backend == "memory":
        if client is not None:
            raise ValueError("client= needs backend='dask'")
        return MemoryBackend()
    if backend == "dask":
        return DaskBackend(client=client)
    raise ValueError(f"backend must be 'memory', 'dask' or a Backend instance, got {backend!r}")
