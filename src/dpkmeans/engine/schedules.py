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
    """epsilon_t = epsilon / T (DPLloyd's baseline schedule)."""
    T = check_positive_int(iterations, "iterations")
    return _shaped(epsilon, np.ones(T), True)


def halving(epsilon: float, iterations: int, *, normalise: bool = True) -> np.ndarray:
    """epsilon_t proportional to 2^-t (Dwork 2011).

    Open-ended (``normalise=False``) it is epsilon / 2^t and sums to epsilon (1 - 2^-T);
    normalised it is epsilon 2^-t / (1 - 2^-T), which spends epsilon exactly.
    """
    T = check_positive_int(iterations, "iterations")
    return _shaped(epsilon, 2.0 ** -np.arange(1, T + 1), normalise)


def series_sum(epsilon: float, iterations: int, *, normalise: bool = True) -> np.ndarray:
    """epsilon_t proportional to 1 / (t (t + 1)), a telescoping series.

    Open-ended it sums to epsilon T / (T + 1); normalised it is scaled by (T + 1) / T.
    Decays polynomially, so late iterations keep more budget than under halving.
    """
    T = check_positive_int(iterations, "iterations")
    t = np.arange(1, T + 1, dtype=float)
    return _shaped(epsilon, 1.0 / (t * (t + 1.0)), normalise)


def dpkccm_stepped(epsilon: float, iterations: int = 12) -> np.ndarray:
    """DP-KCCM's increasing schedule (Ni et al. 2021): three equal blocks of iterations
    that receive 1/6, 1/3 and 1/2 of epsilon; with T = 12, epsilon/24, /12, /8 each."""
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
    """APDP's per-iteration budgets and the branch that produced them."""

    schedule: np.ndarray
    branch: str
    epsilon_m: float

    @property
    def iterations(self) -> int:
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
    epsilon_m = sqrt(500 k^3 / N^2 (d + cbrt(4 d rho^2))^3)."""
    N = check_positive_int(n_records, "n_records")
    k = check_positive_int(n_clusters, "n_clusters")
    d = check_positive_int(d, "d")
    c = (4.0 * d * rho**2) ** (1.0 / 3.0)
    return math.sqrt(500.0 * k**3 / N**2 * (d + c) ** 3)


def su_rule(ratio: float) -> int:
    """Su's iteration count from epsilon / epsilon_m: T = floor(clip(ratio, 2, 7))."""
    return int(math.floor(min(max(ratio, 2.0), 7.0)))


def su_iterations(epsilon: float, n_records: int, n_clusters: int, d: int,
                  rho: float = SU_RHO["[-1,1]"]) -> int:
    """T = floor(clip(epsilon / epsilon_m, 2, 7)) (Su et al.; diffprivlib ``_calc_iters``).

    N enters epsilon_m, so under add/remove adjacency the record count must be public (or
    noisy); the book treats it as public and says so.
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
    """
    eps = check_epsilon(epsilon_t, "epsilon_t")
    d = check_positive_int(d, "d")
    c = (4.0 * d * rho**2) ** (1.0 / 3.0)
    per_dimension = eps / (d + c)
    return eps - d * per_dimension, per_dimension
