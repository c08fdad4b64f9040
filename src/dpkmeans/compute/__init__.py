"""Exact computation: the block plan, the nearest-centroid rule, Lloyd statistics, the numba
kernels, metrics and the backends (memory, Dask). Nothing here draws noise (docs/design.md).
"""
