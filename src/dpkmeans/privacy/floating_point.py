"""Floating-point exposure of noise samplers (Mironov 2012; book chapter 6, "Auditing a
mechanism").

numpy's ``Generator.laplace`` draws U = k / 2^53 and returns loc - b log(2 - 2U) if U >= 1/2,
else loc + b log(2U). Not every double is reachable from every ``loc``: an output that value
``v + 1`` cannot produce reveals that the input was not ``v + 1``. This module tests exactly,
in float64, whether an output is possible under a given value: for numpy's continuous sampler
(:func:`laplace_output_possible`) and for the library's exact discrete sampler on a public grid
(:func:`grid_output_possible`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["laplace_output_possible", "grid_output_possible"]


def laplace_output_possible(y, value: float, scale: float, window: int = 64) -> np.ndarray:
    """For each double y: can value + Generator.laplace(0, scale) return exactly y?

    Parameters
    ----------
    y : array_like of float
        The outputs to test (flattened).
    value : float
        The query's value, the mechanism's ``loc``.
    scale : float
        The Laplace scale b.
    window : int, default 64
        How many uniforms k / 2^53 on either side of the one that inverts y are tried.

    Returns
    -------
    ndarray of bool
        One flag per output: whether numpy's float64 sampler can produce it from ``value``.

    Examples
    --------
    Draws around 0 are mostly impossible around 1, which tells the two values apart
    (Mironov 2012):

    >>> import numpy as np
    >>> from dpkmeans.privacy.floating_point import laplace_output_possible
    >>> y = 0.0 + np.random.default_rng(0).laplace(0.0, 1.0, size=5)
    >>> laplace_output_possible(y, 0.0, 1.0)
    array([ True,  True,  True,  True,  True])
    >>> laplace_output_possible(y, 1.0, 1.0)
    array([False, False, False, False,  True])
    """
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


def grid_output_possible(y, value: float, grid: float) -> np.ndarray:
    """For each double y: can the discrete mechanism on ``grid`` return exactly y from
    ``value``? It returns (round(value / g) + Y) g for an integer Y of positive probability
    whatever its value (the discrete Laplace and Gaussian charge every integer), so y is
    possible exactly when y / g is an integer below 2^53 in magnitude (then (y / g) g = y
    exactly). ``value`` is accepted for symmetry with :func:`laplace_output_possible` and
    deliberately unused: the answer does not depend on it, which is the point.

    Parameters
    ----------
    y : array_like of float
        The outputs to test.
    value : float
        The query's value (unused).
    grid : float
        The public grid step g, a power of two.

    Returns
    -------
    ndarray of bool
        One flag per output: whether it is a possible output, under any value.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.floating_point import grid_output_possible
    >>> g = 2.0**-30
    >>> grid_output_possible(np.array([3 * g, 0.1, 2.5]), 0.0, g)
    array([ True, False,  True])
    """
    y = np.asarray(y, dtype=float)
    steps = y / grid  # exact: the grid is a power of two
    return np.isfinite(steps) & (steps == np.round(steps)) & (np.abs(steps) < 2.0**53)
