"""Budget schedules: how a total epsilon is split over DP-Lloyd iterations (book ch. 3).

Each schedule returns the per-iteration budgets epsilon_1..epsilon_T and, by default, sums
exactly to epsilon (sequential composition then spends the whole budget). The classic
open-ended forms of halving and series-sum, which leave budget unspent, are available with
``normalise=False``. Su et al.'s rule (2016) also fixes T and the count/sum split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = [
    "uniform",
    "halving",
    "series_sum",
    "dpkccm_stepped",
    "arithmetic_progression",
    "apdp_plan",
    "ApdpPlan",
    "APDP_BRANCHES",
    "su_epsilon_m",
    "su_rule",
    "su_iterations",
    "su_split",
    "SU_RHO",
]

#: Su et al.'s typical |centroid coordinate| factor rho: 0.225 on [-1, 1]^d (Su et al. 2016),
#: 0.45 on [0, 1]^d (the APDP note's). An assumption about the private centroids that no public
#: input gives (book chapter 5); with each sum centred on the box's midpoint and measured in
#: half-widths (the engine's default) every box is [-1, 1]^d, so DPLloyd-Impr uses 0.225.
SU_RHO = {"[-1,1]": 0.225, "[0,1]": 0.45}


def _shaped(epsilon: float, weights: np.ndarray, normalise: bool) -> np.ndarray:
    eps = check_epsilon(epsilon)
    return eps * weights / weights.sum() if normalise else eps * weights


def uniform(epsilon: float, iterations: int) -> np.ndarray:
    """epsilon_t = epsilon / T (DPLloyd's baseline schedule).

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    iterations : int
        T.

    Returns
    -------
    numpy.ndarray
        The T budgets.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import uniform
    >>> uniform(1.0, 4)
    array([0.25, 0.25, 0.25, 0.25])
    """
    T = check_positive_int(iterations, "iterations")
    return _shaped(epsilon, np.ones(T), True)


def halving(epsilon: float, iterations: int, *, normalise: bool = True) -> np.ndarray:
    """epsilon_t proportional to 2^-t (Dwork 2011).

    Open-ended (``normalise=False``) it is epsilon / 2^t and sums to epsilon (1 - 2^-T);
    normalised it is epsilon 2^-t / (1 - 2^-T), which spends epsilon exactly.

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    iterations : int
        T.
    normalise : bool, default True
        Whether the budgets sum to epsilon.

    Returns
    -------
    numpy.ndarray
        The T budgets.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import halving
    >>> halving(1.0, 3, normalise=False)
    array([0.5  , 0.25 , 0.125])
    >>> halving(1.0, 3).round(4)
    array([0.5714, 0.2857, 0.1429])
    """
    T = check_positive_int(iterations, "iterations")
    return _shaped(epsilon, 2.0 ** -np.arange(1, T + 1), normalise)


def series_sum(epsilon: float, iterations: int, *, normalise: bool = True) -> np.ndarray:
    """epsilon_t proportional to 1 / (t (t + 1)), a telescoping series.

    Open-ended it sums to epsilon T / (T + 1); normalised it is scaled by (T + 1) / T.
    Decays polynomially, so late iterations keep more budget than under halving.

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    iterations : int
        T.
    normalise : bool, default True
        Whether the budgets sum to epsilon.

    Returns
    -------
    numpy.ndarray
        The T budgets.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import series_sum
    >>> series_sum(1.0, 3, normalise=False).round(4)
    array([0.5   , 0.1667, 0.0833])
    >>> series_sum(1.0, 3).round(4)
    array([0.6667, 0.2222, 0.1111])
    """
    T = check_positive_int(iterations, "iterations")
    t = np.arange(1, T + 1, dtype=float)
    return _shaped(epsilon, 1.0 / (t * (t + 1.0)), normalise)


def dpkccm_stepped(epsilon: float, iterations: int = 12) -> np.ndarray:
    """DP-KCCM's increasing schedule (Ni et al. 2021): three equal blocks of iterations
    that receive 1/6, 1/3 and 1/2 of epsilon; with T = 12, epsilon/24, /12, /8 each.

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    iterations : int, default 12
        T, a multiple of 3.

    Returns
    -------
    numpy.ndarray
        The T budgets.

    Raises
    ------
    ValueError
        If T is not a multiple of 3.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import dpkccm_stepped
    >>> dpkccm_stepped(2.4, 6).round(4)
    array([0.2, 0.2, 0.4, 0.4, 0.6, 0.6])
    """
    T = check_positive_int(iterations, "iterations")
    if T % 3:
        raise ValueError(f"iterations must be a multiple of 3 for the stepped schedule, got {T}")
    block = T // 3
    weights = np.repeat([1.0 / 6.0, 1.0 / 3.0, 1.0 / 2.0], block) / block
    return _shaped(epsilon, weights, True)


def arithmetic_progression(epsilon: float, iterations: int,
                           epsilon_m: float) -> np.ndarray:
    """APDP's reversed arithmetic progression (the APDPk-means paper's eq. 5-7).

    T = ``iterations`` terms from 2 epsilon / T - epsilon_m down to epsilon_m in equal
    steps d_AP = 2 (epsilon - T epsilon_m) / (T (T - 1)); they sum to epsilon
    exactly. Defined only when every term is at least epsilon_m, i.e. epsilon >=
    T epsilon_m (d_AP >= 0); T = 1 is the single term epsilon. Raises ValueError
    otherwise (the published branch condition, :func:`apdp_plan`, decides which
    schedule runs instead).

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    iterations : int
        T.
    epsilon_m : float
        The least budget of an iteration (> 0).

    Returns
    -------
    numpy.ndarray
        The T budgets, decreasing.

    Raises
    ------
    ValueError
        If epsilon < T epsilon_m.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import arithmetic_progression
    >>> arithmetic_progression(1.0, 4, 0.1).round(4)
    array([0.4, 0.3, 0.2, 0.1])
    """
    eps = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations")
    floor = check_epsilon(epsilon_m, "epsilon_m")
    if eps < T * floor * (1 - 1e-12):
        raise ValueError(f"the arithmetic progression needs epsilon >= iterations "
                         f"* epsilon_m (every term at least epsilon_m): {eps:g} < "
                         f"{T} * {floor:g}")
    if T == 1:
        return np.array([eps])
    step = 2.0 * (eps - T * floor) / (T * (T - 1))
    terms = floor + step * np.arange(T - 1, -1, -1, dtype=float)
    return terms * (eps / terms.sum())  # rescaled: the sum is exactly eps


#: Which schedule APDP runs (reported per result row): "ap" = the progression over t_m terms;
#: "fallback" = as published below the minimum, eps / t_m per iteration; "su-ap" and
#: "su-uniform" = corrected below the minimum, Su's T with the progression (T >= 3) or not.
APDP_BRANCHES = ("ap", "fallback", "su-ap", "su-uniform")


@dataclass(frozen=True)
class ApdpPlan:
    """APDP's per-iteration budgets and the branch that produced them.

    Parameters
    ----------
    schedule : numpy.ndarray
        The per-iteration budgets.
    branch : str
        One of :data:`APDP_BRANCHES`.
    epsilon_m : float
        The minimum per-iteration budget the branch was decided with.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import apdp_plan
    >>> apdp_plan(0.3, 4, 0.1, corrected=True)
    ApdpPlan(schedule=array([0.15, 0.15]), branch='su-uniform', epsilon_m=0.1)
    """

    schedule: np.ndarray
    branch: str
    epsilon_m: float

    @property
    def iterations(self) -> int:
        """T, the number of iterations."""
        return int(self.schedule.size)


def apdp_plan(epsilon: float, max_iterations: int, epsilon_m: float, *,
              corrected: bool) -> ApdpPlan:
    """APDP's schedule and its branch (the paper's step 3, or the book's correction).

    If epsilon / epsilon_m > t_m the progression runs over t_m iterations (both
    versions). Otherwise, as published, every one of the t_m iterations gets
    epsilon / t_m (below epsilon_m, the minimum the method is built on); corrected,
    Su's rule gives T = floor(clip(epsilon / epsilon_m, 2, 7)) iterations, with the
    progression when T >= 3 and equal shares when T = 2. epsilon_m must come from
    public inputs (a public N): it decides the schedule. T is the floor of a
    floating-point ratio, as in :func:`su_iterations` (and diffprivlib): at an exact
    multiple such as 0.3 / 0.1 = 2.9999999999999996 it may land one below.

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    max_iterations : int
        t_m.
    epsilon_m : float
        The minimum per-iteration budget (> 0), from public inputs.
    corrected : bool
        The book's correction below the minimum (True) or the paper's fallback.

    Returns
    -------
    ApdpPlan
        The schedule and its branch.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import apdp_plan
    >>> plan = apdp_plan(1.0, 4, 0.1, corrected=True)
    >>> plan.branch, plan.schedule.round(4)
    ('ap', array([0.4, 0.3, 0.2, 0.1]))
    >>> plan = apdp_plan(0.3, 4, 0.1, corrected=False)
    >>> plan.branch, plan.schedule
    ('fallback', array([0.075, 0.075, 0.075, 0.075]))
    """
    eps = check_epsilon(epsilon)
    t_max = check_positive_int(max_iterations, "max_iterations")
    floor = check_epsilon(epsilon_m, "epsilon_m")
    ratio = eps / floor
    if ratio > t_max:
        return ApdpPlan(arithmetic_progression(eps, t_max, floor), "ap", floor)
    if not corrected:
        return ApdpPlan(uniform(eps, t_max), "fallback", floor)
    T = min(su_rule(ratio), t_max)
    if T >= 3:
        return ApdpPlan(arithmetic_progression(eps, T, floor), "su-ap", floor)
    return ApdpPlan(uniform(eps, T), "su-uniform", floor)


def su_epsilon_m(n_records: int, n_clusters: int, d: int, rho: float = SU_RHO["[-1,1]"]) -> float:
    """Su et al.'s minimum per-iteration budget:
    epsilon_m = sqrt(500 k^3 / N^2 (d + cbrt(4 d rho^2))^3).

    Parameters
    ----------
    n_records : int
        N (public).
    n_clusters : int
        k.
    d : int
        The dimension.
    rho : float, default ``SU_RHO["[-1,1]"]``
        The typical |centroid coordinate| factor (:data:`SU_RHO`).

    Returns
    -------
    float
        epsilon_m.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import su_epsilon_m
    >>> round(su_epsilon_m(1000, 3, 2), 4)
    0.5269
    """
    N = check_positive_int(n_records, "n_records")
    k = check_positive_int(n_clusters, "n_clusters")
    d = check_positive_int(d, "d")
    c = (4.0 * d * rho**2) ** (1.0 / 3.0)
    return math.sqrt(500.0 * k**3 / N**2 * (d + c) ** 3)


def su_rule(ratio: float) -> int:
    """Su's iteration count from epsilon / epsilon_m: T = floor(clip(ratio, 2, 7)).

    Parameters
    ----------
    ratio : float
        epsilon / epsilon_m.

    Returns
    -------
    int
        T.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import su_rule
    >>> su_rule(0.5), su_rule(4.7), su_rule(20.0)
    (2, 4, 7)
    """
    return int(math.floor(min(max(ratio, 2.0), 7.0)))


def su_iterations(epsilon: float, n_records: int, n_clusters: int, d: int,
                  rho: float = SU_RHO["[-1,1]"]) -> int:
    """T = floor(clip(epsilon / epsilon_m, 2, 7)) (Su et al.; diffprivlib ``_calc_iters``).

    N enters epsilon_m, so under add/remove adjacency the record count must be public (or
    noisy); the book treats it as public and says so.

    Parameters
    ----------
    epsilon : float
        The total budget (> 0).
    n_records : int
        N (public).
    n_clusters : int
        k.
    d : int
        The dimension.
    rho : float, default ``SU_RHO["[-1,1]"]``
        The typical |centroid coordinate| factor (:data:`SU_RHO`).

    Returns
    -------
    int
        T.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import su_iterations
    >>> su_iterations(1.0, 1000, 3, 2)
    2
    """
    eps = check_epsilon(epsilon)
    return su_rule(eps / su_epsilon_m(n_records, n_clusters, d, rho))


def su_split(epsilon_t: float, d: int, rho: float = SU_RHO["[-1,1]"]) -> tuple[float, float]:
    """Split one iteration's budget between the count and each sum dimension.

    Returns ``(epsilon_count, epsilon_per_dimension)`` with
    epsilon_count : epsilon_per_dimension = cbrt(4 d rho^2) : 1 and
    epsilon_count + d * epsilon_per_dimension = epsilon_t (the split that minimises the
    first-order error of a centroid). diffprivlib returns these two the other way round,
    which overspends for d >= 5.

    Parameters
    ----------
    epsilon_t : float
        The iteration's budget (> 0).
    d : int
        The dimension.
    rho : float, default ``SU_RHO["[-1,1]"]``
        The typical |centroid coordinate| factor (:data:`SU_RHO`).

    Returns
    -------
    tuple of float
        ``(epsilon_count, epsilon_per_dimension)``.

    Examples
    --------
    >>> from dpkmeans.engine.schedules import su_split
    >>> count, per_dimension = su_split(1.0, 2)
    >>> round(count, 4), round(per_dimension, 4), round(count + 2 * per_dimension, 12)
    (0.27, 0.365, 1.0)
    """
    eps = check_epsilon(epsilon_t, "epsilon_t")
    d = check_positive_int(d, "d")
    c = (4.0 * d * rho**2) ** (1.0 / 3.0)
    per_dimension = eps / (d + c)
    return eps - d * per_dimension, per_dimension
