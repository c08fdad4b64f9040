"""How the loop assigns records, and FastLloyd's radius and relative updates (Diaa, Humphries
and Kerschbaum 2025; book chapter 12, "FastLloyd").

The loop's assignment strategy says which records a cluster's statistic covers and what each
contributes. :class:`NearestCentre`, every other algorithm's, gives every record to its nearest
centre and releases its position (centred on the box's midpoint). :class:`RadiusAssignment`
leaves out of iteration t every record farther than a public radius r_t from its nearest
centre, and each record that stays contributes its offset x - c_j, whose L2 norm is at most
r_t instead of the box's diameter. The offsets are released by :class:`RelativeRelease`, on
the whitened vector (S_j / (r_t a), n_j / b) whose sensitivity is 1; the noisy offset sums move
the centres, each move clipped to r_t, and the centres are folded back into the box. All of it
is public: r_t reads the box, k, d and alpha only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from dpkmeans.compute.backends import Backend
from dpkmeans.engine.schedules import SU_RHO, su_split
from dpkmeans.engine.strategies import IterationRelease, ReleaseSpec, Strategy
from dpkmeans.validation import check_real

if TYPE_CHECKING:  # pragma: no cover
    from dpkmeans.engine.config import DPLloydConfig

__all__ = ["ALPHA", "Assignment", "NearestCentre", "RadiusAssignment", "RelativeRelease",
           "fold_into_box", "radius_statistics"]

#: FastLloyd's default radius factor (Diaa, Humphries and Kerschbaum 2025).
ALPHA = 0.8


class Assignment(Strategy):
    """Which records a cluster's statistic covers and what each contributes (the loop's exact
    query; book chapter 5). ``relative``: the sums are offsets from the previous centres,
    released by :class:`RelativeRelease` and applied by :meth:`update`.

    Examples
    --------
    >>> from dpkmeans.engine.relative import NearestCentre
    >>> NearestCentre().relative
    False
    """

    relative: ClassVar[bool] = False

    def statistics(self, backend: Backend, data: Any, centroids: np.ndarray, t: int,
                   config: DPLloydConfig) -> tuple[np.ndarray, np.ndarray]:
        """The exact per-cluster sums (R, k, d) and counts (R, k) of iteration ``t`` (from 0).

        Parameters
        ----------
        backend : Backend
            The backend holding the data.
        data : object
            The backend's handle of the clipped data.
        centroids : numpy.ndarray
            (R, k, d): the centres entering the iteration.
        t : int
            The iteration, from 0.
        config : DPLloydConfig
            The configuration.

        Returns
        -------
        tuple of numpy.ndarray
            The sums and the counts.
        """
        return backend.stats(data, centroids, scores=config.scores)


@dataclass(frozen=True)
class NearestCentre(Assignment):
    """Every record to its nearest centre, contributing its position (Lloyd's assignment).

    Parameters
    ----------
    name : str, default "nearest"
        The strategy's name.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> DPLloydConfig(2, ([0.0], [1.0]), [1.0]).assign
    NearestCentre(name='nearest')
    """

    name: str = "nearest"


@dataclass(frozen=True)
class RadiusAssignment(Assignment):
    """FastLloyd's radius-constrained assignment with relative updates (Diaa, Humphries and
    Kerschbaum 2025): a record farther than r_t from its nearest centre is left out of
    iteration t; a record that stays contributes x - c_j. r_1 is half the box's diagonal, then
    r_t = alpha diag / (2 k^(1/d)) (at most the diagonal). The update moves c_j by the noisy
    mean offset, clipped to r_t, and folds the centre back into the box.

    Parameters
    ----------
    alpha : float, default ALPHA
        The radius factor (finite, > 0).
    name : str, default "radius"
        The strategy's name.

    Raises
    ------
    ValueError
        If ``alpha`` is not finite and > 0.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.relative import RadiusAssignment, RelativeRelease
    >>> config = DPLloydConfig(4, ([-1.0, -1.0], [1.0, 1.0]), [0.5, 0.5], noise="gaussian",
    ...                        delta=1e-7, assign=RadiusAssignment(), step=RelativeRelease())
    >>> [round(config.assign.radius(t, config), 4) for t in range(3)]
    [1.4142, 0.5657, 0.5657]
    """

    alpha: float = ALPHA
    name: str = "radius"
    relative: ClassVar[bool] = True

    def __post_init__(self) -> None:
        alpha = check_real(self.alpha, "alpha")
        if not (math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha must be finite and > 0, got {self.alpha!r}")

    def radius(self, t: int, config: DPLloydConfig) -> float:
        """r_t of iteration ``t`` (from 0): public, from the box, k, d and alpha.

        Parameters
        ----------
        t : int
            The iteration, from 0.
        config : DPLloydConfig
            The configuration.

        Returns
        -------
        float
            The radius.
        """
        lower, upper = config.bounds
        diagonal = float(np.linalg.norm(upper - lower))
        if t == 0:
            return diagonal / 2.0
        k, d = config.n_clusters, lower.size
        return min(self.alpha * diagonal / (2.0 * k ** (1.0 / d)), diagonal)

    def statistics(self, backend: Backend, data: Any, centroids: np.ndarray, t: int,
                   config: DPLloydConfig) -> tuple[np.ndarray, np.ndarray]:
        sums, counts, _ = backend.map_reduce(data, _radius_block, centroids,
                                             self.radius(t, config) ** 2)
        return sums, counts

    def check(self, config: DPLloydConfig) -> None:
        if not isinstance(config.step, RelativeRelease):
            raise ValueError("the radius assignment releases offsets: it needs the relative "
                             "release (step=RelativeRelease())")

    def update(self, noisy: np.ndarray, previous: np.ndarray, config: DPLloydConfig,
               t: int) -> np.ndarray:
        """Post-processing: c_j + S'_j / n'_j if n'_j >= the count floor (else c_j), the move
        clipped to r_t, folded into the box.

        Parameters
        ----------
        noisy : numpy.ndarray
            (R, k, d + 1): the released offset sums and counts, in the data's units.
        previous : numpy.ndarray
            (R, k, d): the centres entering the iteration.
        config : DPLloydConfig
            The configuration.
        t : int
            The iteration, from 0.

        Returns
        -------
        numpy.ndarray
            (R, k, d): the new centres.
        """
        sums, counts = noisy[..., :-1], noisy[..., -1]
        usable = counts >= config.count_floor
        move = sums / np.where(usable, counts, 1.0)[..., None]
        length = np.linalg.norm(move, axis=-1, keepdims=True)
        r = self.radius(t, config)
        move = move * np.minimum(1.0, r / np.maximum(length, np.finfo(float).tiny))
        moved = np.where(usable[..., None], previous + move, previous)
        return fold_into_box(moved, config.bounds)


@dataclass(frozen=True)
class RelativeRelease(IterationRelease):
    """The release of FastLloyd's offsets (Diaa, Humphries and Kerschbaum 2025): each
    cluster's (S_j, n_j), S_j the sum of the offsets x - c_j of its records within r_t, is
    released as the whitened vector (w_s S_j / r_t, w_c n_j), whose sensitivity is 1.

    Gaussian noise (L2): w_s = (4d)^(1/4) / sqrt(1 + sqrt(4d)), w_c = 1 / sqrt(1 + sqrt(4d)),
    the paper's split (w_s^2 + w_c^2 = 1). Laplace noise (L1; a record's offset has L1 norm
    at most sqrt(d) r_t): w_s = p_s / sqrt(d), w_c = p_c, with p_c : p_s Su et al.'s count :
    sum split cbrt(4 d rho^2) : d. Under replace adjacency the release covers every cluster at
    once, with sensitivity max(sqrt(2), 2 w_s) (L2) or 2 (L1).

    Parameters
    ----------
    rho : float, default ``SU_RHO["[-1,1]"]``
        Su et al.'s factor of the Laplace split.
    name : str, default "relative"
        The strategy's name.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.relative import RadiusAssignment, RelativeRelease
    >>> config = DPLloydConfig(4, ([-1.0] * 4, [1.0] * 4), [0.5, 0.5], noise="gaussian",
    ...                        delta=1e-7, assign=RadiusAssignment(), step=RelativeRelease())
    >>> w_s, w_c = config.step.weights(config)
    >>> round(w_s**2 + w_c**2, 12), config.step.specs(config, 0.5)[0].sensitivity
    (1.0, 1.0)
    """

    rho: float = SU_RHO["[-1,1]"]
    name: str = "relative"

    def weights(self, config: DPLloydConfig) -> tuple[float, float]:
        """(w_s, w_c): the whitening of the offset sums (in units of r_t) and of the count.

        Parameters
        ----------
        config : DPLloydConfig
            The configuration.

        Returns
        -------
        tuple of float
            The two weights.
        """
        d = config.bounds[0].size
        if config.noise.norm == 2:
            root = math.sqrt(1.0 + math.sqrt(4.0 * d))
            return (4.0 * d) ** 0.25 / root, 1.0 / root
        eps_count, eps_dim = su_split(1.0, d, self.rho)
        return d * eps_dim / math.sqrt(d), eps_count

    def whitening(self, config: DPLloydConfig, t: int) -> np.ndarray:
        """The factors (d + 1,) that turn iteration ``t``'s (S_j, n_j) into the released
        vector.

        Parameters
        ----------
        config : DPLloydConfig
            The configuration (its assignment gives r_t).
        t : int
            The iteration, from 0.

        Returns
        -------
        numpy.ndarray
            w_s / r_t for each sum column, w_c for the count.
        """
        w_s, w_c = self.weights(config)
        d = config.bounds[0].size
        r = config.assign.radius(t, config)
        return np.r_[np.full(d, w_s / r), w_c]

    def specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        d = config.bounds[0].size
        sens = 1.0
        if config.neighbour == "replace":
            w_s = self.weights(config)[0]
            sens = max(math.sqrt(2.0), 2.0 * w_s) if config.noise.norm == 2 else 2.0
        return [ReleaseSpec("(S_j / (r_t a), n_j / b): offsets within r_t, whitened",
                            slice(0, d + 1), sens, eps_t)]

    def check(self, config: DPLloydConfig) -> None:
        if not config.assign.relative:
            raise ValueError("the relative release needs the radius assignment "
                             "(assign=RadiusAssignment())")
        if config.noise.whitened or config.modes is not None:
            raise ValueError("the relative release takes Laplace or white Gaussian noise, "
                             "numeric data only")


def fold_into_box(C: np.ndarray, bounds: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Reflect every coordinate outside the box back into it (FastLloyd's "fold";
    post-processing); a coordinate inside is kept as it is.

    Parameters
    ----------
    C : numpy.ndarray
        Points (..., d).
    bounds : (numpy.ndarray, numpy.ndarray)
        The box (lower, upper), upper > lower.

    Returns
    -------
    numpy.ndarray
        The folded points, inside the box.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.relative import fold_into_box
    >>> fold_into_box(np.array([[1.25, -1.5, 0.5]]), (np.full(3, -1.0), np.ones(3)))
    array([[ 0.75, -0.5 ,  0.5 ]])
    """
    lower, upper = bounds
    width = upper - lower
    offset = np.mod(C - lower, 2.0 * width)
    folded = lower + np.where(offset > width, 2.0 * width - offset, offset)
    return np.where((C >= lower) & (C <= upper), C, folded)  # a point inside stays exact


def radius_statistics(X: np.ndarray, centroids: np.ndarray,
                      radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact statistics of the radius assignment on records ``X`` (in memory): each
    cluster's offset sum and count, and each replica's number of records left out.

    Parameters
    ----------
    X : numpy.ndarray
        (N, d) records.
    centroids : numpy.ndarray
        (R, k, d) or (k, d) centres.
    radius : float
        r_t.

    Returns
    -------
    tuple of numpy.ndarray
        Offset sums (R, k, d), counts (R, k) and records left out (R,).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.relative import radius_statistics
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [0.9, 0.9]])
    >>> sums, counts, left_out = radius_statistics(X, np.array([[0.0, 0.0]]), 0.5)
    >>> sums.round(3).tolist(), counts.tolist(), left_out.tolist()
    ([[[0.1, 0.0]]], [[2.0]], [1.0])
    """
    C = np.asarray(centroids, dtype=float)
    C = C[None] if C.ndim == 2 else C
    return _radius_block(np.asarray(X, dtype=float), C, float(radius) ** 2)


def _radius_block(block: np.ndarray, centroids: np.ndarray,
                  r2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block's offset sums (R, k, d), counts (R, k) and records left out (R,)."""
    R, k, d = centroids.shape
    sums = np.zeros((R, k, d))
    counts = np.zeros((R, k))
    left_out = np.zeros(R)
    square = np.einsum("nd,nd->n", block, block)
    for r in range(R):
        C = centroids[r]
        dist = square[:, None] - 2.0 * block @ C.T + np.einsum("kd,kd->k", C, C)[None, :]
        nearest = np.argmin(dist, axis=1)
        offset = block - C[nearest]  # within r_t as summed, not only as expanded above
        inside = np.einsum("nd,nd->n", offset, offset) <= r2
        labels = nearest[inside]
        counts[r] = np.bincount(labels, minlength=k)
        for col in range(d):
            sums[r, :, col] = np.bincount(labels, weights=block[inside, col], minlength=k)
        sums[r] -= counts[r][:, None] * C
        left_out[r] = block.shape[0] - labels.size
    return sums, counts, left_out
