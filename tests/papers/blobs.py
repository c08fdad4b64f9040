"""Well-separated Gaussian blobs in [-1, 1]^3, shared by the tests of the outside algorithms
(``test_lsh.py``, ``test_balcan.py``)."""

from __future__ import annotations

import numpy as np

#: Three centres, far apart in [-1, 1]^3.
THREE_CENTRES = np.array([[0.6, 0.6, 0.0], [-0.6, 0.0, 0.6], [0.0, -0.6, -0.6]])


def blobs(n: int, centres: np.ndarray, std: float, seed: int) -> np.ndarray:
    """``n`` records around ``centres`` (normal, ``std``), clipped to [-1, 1]."""
    rng = np.random.default_rng(seed)
    X = centres[rng.integers(len(centres), size=n)] + rng.normal(0, std, (n, centres.shape[1]))
    return np.clip(X, -1.0, 1.0)
