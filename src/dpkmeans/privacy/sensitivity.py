"""Sensitivity of the per-iteration DP-Lloyd query under both neighbour relations (book chapter 1).

With the assignment fixed by already-public centroids, one DP-Lloyd iteration asks for
f(D) = (S_1, n_1, ..., S_k, n_k): the sum and the count of the records in each cluster.
Records lie in a public box [lower, upper] (clipped to it), so one record moves f by a
bounded amount that depends on the neighbour relation.

*Centred* release (the library's default, book chapter 5): release instead
f_c(D) = (S_j - n_j m, n_j)_j with m the midpoint of the public box, and add n'_j m back after
the noise (post-processing). A record's size is then measured from m, not from the origin:
[0, 1]^6 has Delta_1 = 6 * 1/2 + 1 = 4 instead of 7, [17, 90]^6 has 220 instead of 541.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS

__all__ = [
    "LloydSensitivity",
    "check_bounds",
    "check_box",
    "box_midpoint",
    "coordinate_bounds",
    "lloyd_query_sensitivity",
    "sum_sensitivity",
]


@dataclass(frozen=True)
class LloydSensitivity:
    """L1 sensitivities of the DP-Lloyd query under one neighbour relation.

    Parameters
    ----------
    neighbour : {"add/remove", "replace"}
        The neighbour relation the sensitivities are under.
    per_cluster : float
        Largest L1 change of a single cluster's (S_j, n_j).
    joint : float
        Largest L1 change of all k clusters' (S, n) together.
    clusters_touched : int
        How many clusters one neighbouring change can touch (1 for add/remove, 2 for replace).

    Examples
    --------
    >>> from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
    >>> lloyd_query_sensitivity(([0.0, 0.0], [1.0, 1.0]), "replace")
    LloydSensitivity(neighbour='replace', per_cluster=3.0, joint=6.0, clusters_touched=2)
    """

    neighbour: str
    per_cluster: float
    joint: float
    clusters_touched: int


def check_bounds(bounds: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """Validate public bounds ``(lower, upper)``: finite 1-D arrays with lower <= upper.

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.

    Returns
    -------
    lower, upper : ndarray
        Float copies, broadcast to one length.

    Raises
    ------
    TypeError
        If ``bounds`` is not a pair.
    ValueError
        If a side is not 1-D or not finite, or lower > upper somewhere.

    Examples
    --------
    >>> from dpkmeans.privacy.sensitivity import check_bounds
    >>> check_bounds((0.0, [1.0, 2.0]))
    (array([0., 0.]), array([1., 2.]))
    >>> check_bounds(([0, 1], [1, 0]))
    Traceback (most recent call last):
    ...
    ValueError: bounds must satisfy lower <= upper in every feature
    """
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise TypeError("bounds must be a pair (lower, upper) of arrays or numbers")
    lower = np.atleast_1d(np.asarray(bounds[0], dtype=float))
    upper = np.atleast_1d(np.asarray(bounds[1], dtype=float))
    if lower.ndim != 1 or upper.ndim != 1:
        raise ValueError("bounds must be one-dimensional (one lower and one upper per feature)")
    lower, upper = np.broadcast_arrays(lower, upper)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError("bounds must be finite")
    if np.any(lower > upper):
        raise ValueError("bounds must satisfy lower <= upper in every feature")
    return lower.copy(), upper.copy()


def check_box(bounds: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`check_bounds` for a clustering box: every feature must have lower < upper.

    A degenerate feature (lower == upper) carries no information and has no midpoint-centred
    scale worth the name; DP-Lloyd configurations reject it.

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.

    Returns
    -------
    lower, upper : ndarray
        As :func:`check_bounds` returns them.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_bounds`; also a ValueError naming the features with lower == upper.

    Examples
    --------
    >>> from dpkmeans.privacy.sensitivity import check_box
    >>> check_box(([0, 1], [1, 1]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: bounds must satisfy lower < upper in every feature; features [1] have ...
    """
    lower, upper = check_bounds(bounds)
    flat = np.flatnonzero(lower == upper)
    if flat.size:
        raise ValueError(f"bounds must satisfy lower < upper in every feature; features "
                         f"{flat.tolist()} have lower == upper (drop constant features first)")
    return lower, upper


def box_midpoint(bounds: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
    """The centre m = (l + u) / 2 of the public box (public: it depends on the bounds only).

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.

    Returns
    -------
    ndarray
        The midpoint of each feature.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_bounds`.

    Examples
    --------
    >>> from dpkmeans.privacy.sensitivity import box_midpoint
    >>> box_midpoint(([17, 0], [90, 1]))
    array([53.5,  0.5])
    """
    lower, upper = check_bounds(bounds)
    return (lower + upper) / 2.0


def coordinate_bounds(bounds: tuple[ArrayLike, ArrayLike], centred: bool = False) -> np.ndarray:
    """Per feature, the largest |x_i - c_i| of a record in the box: max(|l_i|, |u_i|) from the
    origin (c = 0), or (u_i - l_i) / 2 from the midpoint (``centred``).

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.
    centred : bool, default False
        Measure from the box's midpoint instead of the origin.

    Returns
    -------
    ndarray
        The largest distance of each feature.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_bounds`.

    Examples
    --------
    >>> from dpkmeans.privacy.sensitivity import coordinate_bounds
    >>> coordinate_bounds(([-1, 0], [3, 1])), coordinate_bounds(([-1, 0], [3, 1]), centred=True)
    (array([3., 1.]), array([2. , 0.5]))
    """
    lower, upper = check_bounds(bounds)
    if centred:
        return (upper - lower) / 2.0
    return np.maximum(np.abs(lower), np.abs(upper))


def lloyd_query_sensitivity(
    bounds: tuple[ArrayLike, ArrayLike], neighbour: str = "add/remove", *,
    centred: bool = False
) -> LloydSensitivity:
    """L1 sensitivity of (S_j, n_j)_j for records in the box ``bounds``
    (book Thm. 1.3).

    Let H = sum_i max(|l_i|, |u_i|) be the largest L1 norm of a record and
    W = sum_i (u_i - l_i) the largest L1 distance between two records. With
    ``centred`` the query is centred at the box's midpoint mid,
    (S_j - n_j mid, n_j), and H = W / 2.

    * add/remove: one record changes one cluster's sum by at most H and its count
      by 1, so per-cluster = joint = H + 1 (on [-r, r]^d: d r + 1).
    * replace: a record that stays in its cluster changes that sum by at most W;
      one that moves leaves cluster g and joins cluster g', changing both:
      joint = max(W, 2 (H + 1)) (on [-r, r]^d: 2 (d r + 1)),
      per-cluster = max(W, H + 1).

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The neighbour relation.
    centred : bool, default False
        The query is centred at the box's midpoint (the library's default release).

    Returns
    -------
    LloydSensitivity
        The per-cluster and joint L1 sensitivities.

    Raises
    ------
    ValueError
        If ``neighbour`` is not a relation of the book, or the bounds are invalid.

    Examples
    --------
    On [0, 1]^6, from the origin and centred (H + 1 = 7, then 6 / 2 + 1 = 4):

    >>> import numpy as np
    >>> from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
    >>> box = (np.zeros(6), np.ones(6))
    >>> lloyd_query_sensitivity(box).joint, lloyd_query_sensitivity(box, centred=True).joint
    (7.0, 4.0)
    >>> lloyd_query_sensitivity(box, "replace")
    LloydSensitivity(neighbour='replace', per_cluster=7.0, joint=14.0, clusters_touched=2)
    """
    max_norm, width = _norm_and_width(bounds, neighbour, centred)
    if neighbour == "add/remove":
        return LloydSensitivity(neighbour, max_norm + 1.0, max_norm + 1.0, 1)
    return LloydSensitivity(
        neighbour, max(width, max_norm + 1.0), max(width, 2.0 * (max_norm + 1.0)), 2
    )


def sum_sensitivity(bounds: tuple[ArrayLike, ArrayLike], neighbour: str = "add/remove", *,
                    centred: bool = False) -> float:
    """L1 sensitivity of the cluster sums (S_j)_j alone, the counts released exactly (as
    Shang et al. 2021 publish it): H under add/remove; under replace max(W, 2 H), a record
    that moves leaving one sum and joining another (H, W as in
    :func:`lloyd_query_sensitivity`).

    Parameters
    ----------
    bounds : (lower, upper)
        The public box: scalars or 1-D arrays (one value per feature), lower <= upper.
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The neighbour relation.
    centred : bool, default False
        Measure the sums from the box's midpoint.

    Returns
    -------
    float
        The L1 sensitivity of the sums.

    Raises
    ------
    ValueError
        If ``neighbour`` is not a relation of the book, or the bounds are invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.sensitivity import sum_sensitivity
    >>> box = (np.zeros(6), np.ones(6))
    >>> sum_sensitivity(box), sum_sensitivity(box, "replace"), sum_sensitivity(box, centred=True)
    (6.0, 12.0, 3.0)
    """
    max_norm, width = _norm_and_width(bounds, neighbour, centred)
    if neighbour == "add/remove":
        return max_norm
    return max(width, 2.0 * max_norm)


def _norm_and_width(bounds: tuple[ArrayLike, ArrayLike], neighbour: str,
                    centred: bool) -> tuple[float, float]:
    """(H, W): a record's largest L1 norm (from the origin, or the midpoint when ``centred``)
    and the largest L1 distance between two records of the box; checks the relation."""
    if neighbour not in NEIGHBOUR_RELATIONS:
        raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, got {neighbour!r}")
    lower, upper = check_bounds(bounds)
    return float(np.sum(coordinate_bounds((lower, upper), centred))), float(np.sum(upper - lower))
