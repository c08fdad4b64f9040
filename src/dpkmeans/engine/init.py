"""Initial centroids. Only data-independent initialisers are private.

* :func:`sphere_packing` (Su et al. 2016): domain only.
* :func:`uniform_box`: uniform in the public box.
* :func:`kmeans_plusplus`: k-means++ on the data, a *non-private* reference only.
"""

from __future__ import annotations

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

    Parameters
    ----------
    bounds : tuple of array_like
        The public box ``(lower, upper)``, each of shape (d,).
    n_clusters : int
        k.
    rng : numpy.random.Generator
        The generator of the candidates.
    radius : float, optional
        ``a``; by default a quarter of the box's narrowest side.
    max_failures : int, default 100
        Consecutive rejections before ``a`` is halved.

    Returns
    -------
    numpy.ndarray
        The (k, d) centres.

    Raises
    ------
    ValueError
        If ``radius`` is not > 0 (or the box has a side of width 0).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.init import sphere_packing
    >>> c = sphere_packing(([-1, -1], [1, 1]), 3, np.random.default_rng(0), radius=0.25)
    >>> c.shape, bool(np.all(np.abs(c) <= 0.75))
    ((3, 2), True)
    >>> bool(min(np.linalg.norm(c[i] - c[j]) for i in range(3) for j in range(i)) >= 0.5)
    True
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


#: The first batch of candidates of an attempt (doubled at every batch of the attempt).
_FIRST_BATCH = 32
#: At most this many coordinates of candidates are drawn at once.
_BATCH_VALUES = 2**16
#: At most this many coordinate differences are screened at once.
_SCREEN_VALUES = 2**16


def _pack(low: np.ndarray, high: np.ndarray, spacing: float, k: int, rng: np.random.Generator,
          max_failures: int) -> np.ndarray | None:
    """One attempt of :func:`sphere_packing`: the k centres, or None after ``max_failures``
    consecutive rejections. The same draws and decisions as drawing one candidate at a time,
    ``rng.uniform(low, high)``, and testing it against every accepted centre with
    ``np.linalg.norm(candidate - c) >= spacing``.

    Candidates are drawn in batches, one ``rng.uniform`` call for a batch (the same numbers in
    the same order as one call per candidate), screened against the accepted centres all at
    once (:meth:`_Neighbours.clear_many`), then walked in order: the first clear one is
    accepted (unless ``max_failures`` rejections come first) and the rest of the batch is
    screened against it alone. A batch that is not used up is drawn again up to its last
    examined candidate from the generator's state before the batch, so the generator is left
    exactly where the one-by-one loop leaves it.
    """
    index = _Neighbours(low, high, spacing, k)
    d = low.size
    bits = rng.bit_generator
    failures, batch = 0, _FIRST_BATCH
    while index.size < k and failures < max_failures:
        rows = max(1, min(batch, _BATCH_VALUES // max(d, 1)))
        state = bits.state
        candidates = rng.uniform(low, high, size=(rows, d))
        clear = index.clear_many(candidates)
        used, i = rows, 0
        while i < rows:
            ahead = np.flatnonzero(clear[i:])
            j = i + int(ahead[0]) if ahead.size else rows  # the next clear candidate
            if failures + (j - i) >= max_failures:  # the attempt fails before reaching it
                used, failures = i + (max_failures - failures), max_failures
                break
            failures += j - i
            if j == rows:
                break
            index.add(candidates[j])
            failures, i = 0, j + 1
            if index.size == k:
                used = i
                break
            clear[i:] &= index.clear_many(candidates[i:], last_only=True)
        if used < rows:  # leave the generator just after the last candidate examined
            bits.state = state
            rng.uniform(low, high, size=(used, d))
        batch *= 2
    return index.points if index.size == k else None


class _Neighbours:
    """Accepted centres, and the test ``norm(candidate - c) >= spacing`` against them.
    Distances are screened with a rounding margin; only those too close to ``spacing`` to call
    are decided by the exact ``np.linalg.norm`` test."""

    def __init__(self, low: np.ndarray, high: np.ndarray, spacing: float, k: int) -> None:
        d = low.size
        self.points = np.empty((k, d))
        self.size = 0
        self.spacing = spacing
        # rounding of a d-term sum of squares in any order (BLAS dot, pairwise) and of sqrt
        margin = 1e-12 + 4.0 * (d + 2) * np.finfo(float).eps
        self.near_band = (spacing * (1.0 - margin), spacing * (1.0 + margin))
        self.exact_only = not 1e-140 < spacing < 1e140  # squares near under/overflow

    def _exact(self, candidate: np.ndarray, j: int) -> bool:
        return bool(np.linalg.norm(candidate - self.points[j]) >= self.spacing)

    def is_clear(self, candidate: np.ndarray) -> bool:
        """``all(np.linalg.norm(candidate - c) >= spacing for c in accepted)``."""
        return bool(self.clear_many(np.asarray(candidate)[None])[0])

    def clear_many(self, candidates: np.ndarray, *, last_only: bool = False) -> np.ndarray:
        """:meth:`is_clear` of every row of ``candidates`` (against the last accepted centre
        alone with ``last_only``)."""
        out = np.ones(candidates.shape[0], dtype=bool)
        if not self.size:
            return out
        index = np.arange(self.size - 1 if last_only else 0, self.size)
        others = self.points[index]
        low, high = self.near_band
        step = max(1, _SCREEN_VALUES // (index.size * max(others.shape[1], 1)))
        for start in range(0, candidates.shape[0], step):
            part = candidates[start:start + step]
            diff = part[:, None, :] - others[None, :, :]
            if self.exact_only:
                ok, unsure = np.ones(part.shape[0], dtype=bool), np.ones(diff.shape[:2], bool)
            else:
                dist = np.sqrt(np.einsum("cjd,cjd->cj", diff, diff))
                ok = ~(dist < low).any(axis=1)
                unsure = dist < high  # too close to call (where not already below low)
            for c, j in zip(*np.nonzero(unsure & ok[:, None])):
                if ok[c] and not self._exact(part[c], int(index[j])):
                    ok[c] = False
            out[start:start + step] = ok
        return out

    def add(self, centre: np.ndarray) -> None:
        self.points[self.size] = centre
        self.size += 1


def uniform_box(bounds: tuple[ArrayLike, ArrayLike], n_clusters: int,
                rng: np.random.Generator) -> np.ndarray:
    """k centres drawn uniformly in the public box (data-independent).

    Parameters
    ----------
    bounds : tuple of array_like
        The public box ``(lower, upper)``, each of shape (d,).
    n_clusters : int
        k.
    rng : numpy.random.Generator
        The generator of the centres.

    Returns
    -------
    numpy.ndarray
        The (k, d) centres.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.init import uniform_box
    >>> uniform_box(([0, 0], [1, 2]), 2, np.random.default_rng(0)).round(3)
    array([[0.637, 0.54 ],
           [0.041, 0.033]])
    """
    lower, upper = check_bounds(bounds)
    k = check_positive_int(n_clusters, "n_clusters")
    return check_generator(rng).uniform(lower, upper, size=(k, lower.size))


def kmeans_plusplus(X: ArrayLike, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding on the data. NOT private: a non-private reference only.

    Parameters
    ----------
    X : array_like
        The (N, d) records.
    n_clusters : int
        k.
    rng : numpy.random.Generator
        Draws the seed of scikit-learn's ``kmeans_plusplus``.

    Returns
    -------
    numpy.ndarray
        The (k, d) centres, chosen among the records.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.init import kmeans_plusplus
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> c = kmeans_plusplus(X, 2, np.random.default_rng(0))
    >>> sorted(bool(row[0] > 1) for row in c)
    [False, True]
    """
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
