"""Floating-point exposure of the Laplace sampler (Mironov 2012; book "Auditing privacy").

numpy's ``Generator.laplace`` draws U = k / 2^53 and returns loc - b log(2 - 2U) if U >= 1/2,
else loc + b log(2U). Not every double is reachable from every ``loc``: an output that value
``v + 1`` cannot produce reveals that the input was not ``v + 1``. This module tests exactly,
in float64, whether an output is possible under a given value.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["laplace_output_possible"]


def laplace_output_possible(y, value: float, scale: float, window: int = 64) -> np.ndarray:
    """For each double y: can value + Generator.laplace(0, scale) return exactly y?"""
    y = np.asarray(y, dtype=float)
    z = (y - value) / scale
    offsets = np.arange(-window, window + 1)
    found = np.zeros(y.size, dtype=bool)
    for low in (True, False):  # U < 1/2: value + b log(2U); U >= 1/2: value - b log(2 - 2U)
        if low:
            k = np.clip(np.floor(2.0**52 * np.exp(np.minimum(z, 0.0)))[:, None] + offsets,
                        1, 2.0**52 - 1)
            u = k / 2.0**53
            arg = u + u
        else:
            k = np.clip(np.floor(2.0**53 - 2.0**52 * np.exp(-np.maximum(z, 0.0)))[:, None]
                        + offsets, 2.0**52, 2.0**53 - 1)
            u = k / 2.0**53
            arg = 2.0 - u - u
        sign = 1.0 if low else -1.0
        log_arg = np.log(arg)
        candidate = np.zeros(arg.shape, dtype=bool)
        for ulps in range(-2, 3):
            shifted = log_arg
            for _ in range(abs(ulps)):
                shifted = np.nextafter(shifted, np.inf if ulps > 0 else -np.inf)
            candidate |= value + sign * (scale * shifted) == y[:, None]
        for r, c in zip(*np.nonzero(candidate)):
            if not found[r] and value + sign * (scale * math.log(arg[r, c])) == y[r]:
                found[r] = True
    return found
