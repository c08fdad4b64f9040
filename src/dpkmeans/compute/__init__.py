"""Exact computation: the block plan, the nearest-centroid rule, Lloyd statistics, the numba
kernels (optional: the ``fast`` extra) and their numpy references, which path runs
(``fastpath``), metrics and the backends (memory, Dask). Nothing here draws noise
(docs/design.md).
"""
