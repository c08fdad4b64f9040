"""How many iterations corrected DI k-prototypes runs, and how it splits its budget between the
numeric and the categorical part (book chapter 11, "How many iterations the estimator runs").

Su et al. (2016) choose DPLloyd-Impr's T from the smallest per-iteration budget epsilon_m at
which a noisy centroid is still meaningful: their first-order estimate of the total squared
error of the k noisy centroids, in units of the box's half-widths, may not exceed 2/500
(:func:`dpkmeans.engine.schedules.su_epsilon_m`). More iterations bring Lloyd's algorithm
closer to convergence but spread the budget thinner; they run T = floor(clip(epsilon /
epsilon_m, 2, 7)) iterations, so that no iteration gets less than epsilon_m.

The same criterion, applied to what corrected DI k-prototypes releases in one iteration:

* the numeric part: one Laplace release of every cluster's centred (S_j, n_j) with the joint
  sensitivity Delta_r of replace adjacency
  (:func:`~dpkmeans.privacy.sensitivity.lloyd_query_sensitivity`), so every element gets noise
  of scale Delta_r / eps_r; with clusters
  of N / k records and a centroid coordinate typically 2 rho half-widths from the midpoint
  (rho = :data:`~dpkmeans.engine.schedules.SU_RHO`), the error is
  2 k^3 Delta_r^2 (sum_i r_i^-2 + 4 d_r rho^2) / (N^2 eps_r^2), r_i the half-widths;
* the categorical part: every cluster's mode of every attribute by the exponential mechanism,
  each draw at eps_c / (2 d_c) (the budget split over the d_c attributes and halved for the two
  clusters a replaced record touches). The mode's error is the mismatch rate it adds in its
  cluster, measured like a coordinate of [0, 1] in half-widths; its mean square is at most
  64 d_c^2 k^3 sum_l q_l / (N^2 eps_c^2) with q_l = (ln(L_l - 1) + 1)^2 + 1 for an attribute
  of L_l >= 2 categories, whatever the counts.

Each part's minimum is its budget at which this error reaches 2/500. Under the normalised
halving schedule the last iteration gets the least, eps / (2^T - 1), so T is the largest
number of iterations whose last one still gets each part's minimum; the default split gives
each part its minimum's share, so both reach it at the same T.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.engine.schedules import SU_RHO, su_rule
from dpkmeans.privacy.sensitivity import coordinate_bounds, lloyd_query_sensitivity
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = ["SU_ERROR", "IterationPlan", "prototypes_epsilon_m", "prototypes_iterations"]

#: Su et al.'s (2016) largest acceptable first-order squared error of the k noisy centroids of
#: one iteration, in squared half-widths of the box: 2/500.
SU_ERROR = 2.0 / 500.0


@dataclass(frozen=True)
class IterationPlan:
    """T and the budget split that :func:`prototypes_iterations` chose, with what it read.

    ``epsilon_m`` holds the smallest per-iteration budget of the numeric and of the
    categorical part (0 without categorical attributes); ``categorical_share`` is the share of
    the budget the modes get (None without categorical attributes or with a fixed pair of
    budgets); ``rule_iterations`` is the rule's T before the caller's upper bound ``max_iter``.
    """

    iterations: int
    rule_iterations: int
    categorical_share: float | None
    epsilon_m: tuple[float, float]
    n_records: int


def prototypes_epsilon_m(n_records: int, n_clusters: int,
                         numeric_bounds: tuple[ArrayLike, ArrayLike],
                         n_levels: Sequence[int] = (),
                         rho: float = SU_RHO["[-1,1]"]) -> tuple[float, float]:
    """The smallest per-iteration budgets (numeric, categorical) of corrected DI k-prototypes.

    Su et al.'s (2016) criterion (the module docstring; book chapter 11): the first-order
    squared error of one iteration's k noisy prototypes, in half-widths, at most 2/500, for
    each part:

        eps_r,m = k^(3/2) Delta_r sqrt(500 (sum_i r_i^-2 + 4 d_r rho^2)) / N,
        eps_c,m = k^(3/2) d_c sqrt(16000 sum_l ((ln(L_l - 1) + 1)^2 + 1)) / N,

    with Delta_r the replace-adjacency sensitivity of the centred numeric (S_j, n_j), r_i the
    half-widths of the public box and L_l the categories of attribute l (an attribute of one
    category adds nothing: its mode is certain).

    Parameters
    ----------
    n_records : int
        N, public: under replace adjacency every neighbour has as many records.
    n_clusters : int
        k.
    numeric_bounds : (lower, upper)
        The public box of the numeric columns (scalars or one value per column).
    n_levels : sequence of int
        The number of categories of each categorical attribute (empty for none).
    rho : float
        Su et al.'s (2016) constant: a centroid coordinate lies typically 2 rho half-widths
        from the box's midpoint (an assumption no public input gives, as in DPLloyd-Impr).

    Returns
    -------
    (float, float)
        eps_r,m and eps_c,m (0.0 without categorical attributes).

    Raises
    ------
    ValueError
        If a count is not a positive integer or the box is empty.
    """
    N = check_positive_int(n_records, "n_records")
    k = check_positive_int(n_clusters, "n_clusters")
    levels = [check_positive_int(n, "number of categories") for n in n_levels]
    lower, upper = (np.asarray(b, dtype=float).reshape(-1) for b in numeric_bounds)
    lower, upper = np.broadcast_arrays(lower, upper)
    if lower.size == 0 or not np.all(upper > lower):
        raise ValueError("numeric_bounds must give lower < upper for at least one column")
    half = coordinate_bounds((lower, upper), centred=True)
    delta_r = lloyd_query_sensitivity((lower, upper), "replace", centred=True).joint
    spread = float(np.sum(half**-2.0) + 4.0 * half.size * rho**2)
    scale = k**1.5 / N
    eps_r = scale * delta_r * math.sqrt(2.0 * spread / SU_ERROR)
    q = sum((math.log(n - 1) + 1.0) ** 2 + 1.0 for n in levels if n > 1)
    eps_c = scale * len(levels) * math.sqrt(64.0 * q / SU_ERROR)
    return eps_r, eps_c


def prototypes_iterations(n_records: int, n_clusters: int,
                          numeric_bounds: tuple[ArrayLike, ArrayLike],
                          n_levels: Sequence[int] = (), *, epsilon: float | None = None,
                          categorical_share: float | None = None,
                          budgets: tuple[float, float] | None = None,
                          max_iter: int | None = None) -> IterationPlan:
    """T and the numeric/categorical split of corrected DI k-prototypes (book chapter 11).

    Under the normalised halving schedule iteration t of T gets eps 2^(T-t) / (2^T - 1) of
    each part's budget, the last one eps / (2^T - 1). T is the largest number of iterations
    whose last one still gets each part's minimum (:func:`prototypes_epsilon_m`),

        T = floor(clip(log2(1 + min(eps_r / eps_r,m, eps_c / eps_c,m)), 2, 7)),

    clipped as Su et al. (2016) clip theirs (:func:`~dpkmeans.engine.schedules.su_rule`), then
    at most ``max_iter``. By default the modes get the share eps_c,m / (eps_r,m + eps_c,m) of
    ``epsilon``, which gives both parts their minimum at the same T.

    Parameters
    ----------
    n_records, n_clusters, numeric_bounds, n_levels
        As :func:`prototypes_epsilon_m`.
    epsilon : float or None
        The total budget, split by ``categorical_share``.
    categorical_share : float in (0, 1) or None
        The modes' share of ``epsilon``; None: the rule's.
    budgets : (eps_r, eps_c) or None
        Fixed budgets of the two parts instead of ``epsilon`` (the pairs of rho).
    max_iter : int or None
        An upper bound on T.

    Returns
    -------
    IterationPlan
        T, the rule's T before ``max_iter``, the split and the two minima.

    Raises
    ------
    ValueError
        If not exactly one of ``epsilon`` and ``budgets`` is given, or an input is invalid.

    Examples
    --------
    >>> from dpkmeans.papers.di.iterations import prototypes_iterations
    >>> plan = prototypes_iterations(1000, 2, (0.0, 1.0), [2], epsilon=4.0)
    >>> plan.iterations, round(plan.categorical_share, 3)
    (2, 0.565)
    >>> prototypes_iterations(10_000, 2, (0.0, 1.0), [2], epsilon=4.0).iterations
    5
    """
    eps_rm, eps_cm = prototypes_epsilon_m(n_records, n_clusters, numeric_bounds, n_levels)
    if (epsilon is None) == (budgets is None):
        raise ValueError("give exactly one of epsilon and budgets=(eps_r, eps_c)")
    share = None
    if budgets is not None:
        eps_r, eps_c = (check_epsilon(e, "budgets") for e in budgets)
    else:
        total = check_epsilon(epsilon)
        if categorical_share is not None:
            share = float(categorical_share)
            if not 0.0 < share < 1.0:
                raise ValueError(f"categorical_share must lie in (0, 1), got {share}")
        elif eps_cm > 0:
            share = eps_cm / (eps_rm + eps_cm)
        eps_r, eps_c = total * (1.0 - (share or 0.0)), total * (share or 0.0)
    ratios = [eps_r / eps_rm] + ([eps_c / eps_cm] if eps_cm > 0 else [])
    rule = su_rule(math.log2(1.0 + min(ratios)))
    cap = rule if max_iter is None else check_positive_int(max_iter, "max_iter")
    return IterationPlan(min(rule, cap), rule, share, (eps_rm, eps_cm), int(n_records))
