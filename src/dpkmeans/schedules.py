"""Budget schedules: how a total epsilon is split over DP-Lloyd iterations (book ch. 3).

Each schedule returns the per-iteration budgets epsilon_1..epsilon_T; their sum never exceeds
the total (sequential composition). Later chapters add the papers' own schedules.
"""

from __future__ import annotations

import numpy as np

from .validation import check_epsilon, check_positive_int

__all__ = ["uniform", "halving", "series_sum"]


def uniform(epsilon: float, iterations: int) -> np.ndarray:
    """epsilon_t = epsilon / T: spends the whole budget, equally."""
    eps = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations")
    return np.full(T, eps / T)


def halving(epsilon: float, iterations: int) -> np.ndarray:
    """epsilon_t = epsilon / 2^t (Dwork 2011): sums to epsilon (1 - 2^-T) for any T.

    Useful when T is not fixed in advance; the first iteration gets half of everything.
    """
    eps = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations")
    return eps / 2.0 ** np.arange(1, T + 1)


def series_sum(epsilon: float, iterations: int) -> np.ndarray:
    """epsilon_t = epsilon / (t (t + 1)): a telescoping series summing to epsilon T / (T + 1).

    Decays polynomially rather than geometrically, so late iterations keep more budget.
    """
    eps = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations")
    t = np.arange(1, T + 1, dtype=float)
    return eps / (t * (t + 1.0))
