"""Initial centroids. Only data-independent initialisers are private.

* :func:`sphere_packing` (Su et al. 2016): domain only.
* :func:`uniform_box`: uniform in the public box.
* :func:`kmeans_plusplus`: k-means++ on the data, a *non-private* reference only.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy.sensitivity import check_bounds
from dpkmeans.validation import check_generator, check_positive_int

__all__ = ["Initializer", "sphere_packing", "uniform_box", "kmeans_plusplus", "INITIALIZERS"]

#: An initializer maps (bounds, k, rng) to a (k, d) array of centroids, without the data.
Initializer = Callable[[tuple[np.ndarray, np.ndarray], int, np.random.Generator], np.ndarray]


def sphere_packing(
    bounds: tuple[ArrayLike, ArrayLike],
    n_clusters: int,
    rng: np.random.Generator,
    *,
    radius: float | None = None,
    max_failures: int = 100,
) -> np.ndarray:
    """Su et al.'s sphere packing: k centres at least ``a`` inside the box, pairwise
    at least 2a apart.

    Centres are proposed uniformly in the box shrunk by ``a`` and accepted one by one
    if they are at least 2a from every accepted centre. After ``max_failures``
    consecutive rejections the attempt restarts with ``a`` halved (as Ni et al. 2021
    describe it; diffprivlib's ``_init_centers`` does the same). The default ``a`` is
    a quarter of the narrowest side: 0.5 on [-1, 1]^d, as in Ni et al. Uses only the
    public bounds, so it costs no privacy budget.
    """
    lower, upper = check_bounds(bounds)
    k = check_positive_int(n_clusters, "n_clusters")
    rng = check_generator(rng)
    max_failures = check_positive_int(max_failures, "max_failures")
    width = float(np.min(upper - lower))
    a = width / 4.0 if radius is None else float(radius)
    if not a > 0:
        raise ValueError(f"radius must be > 0 (and the box must have positive "
                         f"width), got {a}")
    while True:
        centres = _pack(lower + a, upper - a, 2 * a, k, rng, max_failures)
        if centres is not None:
            return centres
        a /= 2.0


def _pack(low: np.ndarray, high: np.ndarray, spacing: float, k: int, rng: np.random.Generator,
          max_failures: int) -> np.ndarray | None:
    """One attempt of :func:`sphere_packing`: the k centres, or None after ``max_failures``
    consecutive rejections. The same draws and decisions as testing every accepted centre
    with ``np.linalg.norm(candidate - c) >= spacing``, in O(1) expected time per candidate
    once the centres fill a grid (instead of O(accepted))."""
    index = _Neighbours(low, high, spacing, k)
    failures = 0
    while index.size < k and failures < max_failures:
        candidate = rng.uniform(low, high)
        if index.is_clear(candidate):
            index.add(candidate)
            failures = 0
        else:
            failures += 1
    return index.points if index.size == k else None


class _Neighbours:
    """Accepted centres, bucketed on a grid of cells at least ``spacing`` wide over (up to)
    the three widest axes: a centre closer than ``spacing`` to a candidate lies in one of the
    3^m cells around the candidate's. Distances are screened with a rounding margin; only
    those too close to ``spacing`` to call are decided by the exact ``np.linalg.norm`` test."""

    FEW = 16  # up to this many neighbours, screen them one by one (math.dist), else in bulk

    def __init__(self, low: np.ndarray, high: np.ndarray, spacing: float, k: int) -> None:
        d = low.size
        self.points = np.empty((k, d))
        self.rows: list[list[float]] = []
        self.size = 0
        self.spacing = spacing
        # rounding of a d-term sum of squares in any order (BLAS dot, pairwise) and of sqrt
        margin = 1e-12 + 4.0 * (d + 2) * np.finfo(float).eps
        self.near_band = (spacing * (1.0 - margin), spacing * (1.0 + margin))
        self.exact_only = not 1e-140 < spacing < 1e140  # squares near under/overflow
        origin, width = np.minimum(low, high), np.abs(high - low)
        cell = np.maximum(spacing * (1.0 + 1e-6), width / 1e6)  # at most ~1e6 cells per axis
        self.axes = [] if self.exact_only or d > 10**5 else \
            [int(i) for i in np.argsort(-width, kind="stable")[:3] if width[i] >= 3 * cell[i]]
        self.origin = [float(origin[i]) for i in self.axes]
        self.cell = [float(cell[i]) for i in self.axes]
        self.cells: dict[tuple[int, ...], list[int]] = {}
        self.shifts = list(itertools.product((-1, 0, 1), repeat=len(self.axes)))

    def _key(self, x: list[float]) -> tuple[int, ...]:
        return tuple(math.floor((x[i] - o) / c)
                     for i, o, c in zip(self.axes, self.origin, self.cell))

    def _exact(self, candidate: np.ndarray, j: int) -> bool:
        return bool(np.linalg.norm(candidate - self.points[j]) >= self.spacing)

    def is_clear(self, candidate: np.ndarray) -> bool:
        """``all(np.linalg.norm(candidate - c) >= spacing for c in accepted)``."""
        if not self.size:
            return True
        if self.exact_only:
            return all(self._exact(candidate, j) for j in range(self.size))
        low, high = self.near_band
        if self.axes:
            x = candidate.tolist()
            key = self._key(x)
            near: list[int] = []
            for shift in self.shifts:
                bucket = self.cells.get(tuple(map(operator.add, key, shift)))
                if bucket:
                    near.extend(bucket)
            if len(near) <= self.FEW:
                for j in near:
                    dist = math.dist(x, self.rows[j])
                    if dist < low or (dist < high and not self._exact(candidate, j)):
                        return False
                return True
            index = np.array(near)
            others = self.points[index]
        else:
            index, others = None, self.points[:self.size]
        diff = candidate - others
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        if (dist < low).any():
            return False
        close = np.flatnonzero(dist < high)  # too close to call
        return all(self._exact(candidate, j) for j in (close if index is None
                                                         else index[close]).tolist())

    def add(self, centre: np.ndarray) -> None:
        self.points[self.size] = centre
        if self.axes:
            row = centre.tolist()
            self.rows.append(row)
            self.cells.setdefault(self._key(row), []).append(self.size)
        self.size += 1


def uniform_box(bounds: tuple[ArrayLike, ArrayLike], n_clusters: int,
                rng: np.random.Generator) -> np.ndarray:
    """k centres drawn uniformly in the public box (data-independent)."""
    lower, upper = check_bounds(bounds)
    k = check_positive_int(n_clusters, "n_clusters")
    return check_generator(rng).uniform(lower, upper, size=(k, lower.size))


def kmeans_plusplus(X: ArrayLike, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding on the data. NOT private: a non-private reference only."""
    from sklearn.cluster import kmeans_plusplus as _sk_kmeans_plusplus

    k = check_positive_int(n_clusters, "n_clusters")
    seed = int(check_generator(rng).integers(2**31 - 1))
    centres, _ = _sk_kmeans_plusplus(np.asarray(X, dtype=float), k, random_state=seed)
    return centres


#: Data-independent initializers by name (the ones a private configuration may use).
INITIALIZERS: dict[str, Initializer] = {
    "sphere-packing": sphere_packing,
    "uniform": uniform_box,
}
