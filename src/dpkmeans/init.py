"""Initial centroids. Only data-independent initialisers are private.

* :func:`sphere_packing` (Su et al. 2016): domain only.
* :func:`uniform_box`: uniform in the public box.
* :func:`kmeans_plusplus`: k-means++ on the data, a *non-private* reference only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .sensitivity import check_bounds
from .validation import check_generator, check_positive_int

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
        centres: list[np.ndarray] = []
        failures = 0
        while len(centres) < k and failures < max_failures:
            candidate = rng.uniform(lower + a, upper - a)
            if all(np.linalg.norm(candidate - c) >= 2 * a for c in centres):
                centres.append(candidate)
                failures = 0
            else:
                failures += 1
        if len(centres) == k:
            return np.array(centres)
        a /= 2.0


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
