"""A lower bound on epsilon valid for every threshold of a statistic at once.

The split-sample audit (:func:`dpkmeans.study.audit.epsilon_lower_bound`) spends half of its
trials choosing one event. Here the events are fixed before any trial is drawn: thresholds
``s >= tau`` (likelier under D) and ``s <= -tau`` (likelier under D') on a statistic ``s``, for
``tau`` on a grid that depends only on public inputs (for a privacy-loss statistic, multiples of
the claimed epsilon: :func:`loss_thresholds`). Every trial is used to evaluate every event, and
the Clopper-Pearson bounds are taken at level alpha / (4 m) for m events (Bonferroni: two
binomial bounds per event), so with probability at least 1 - alpha *all* the events' bounds
hold together, and the largest of them is a valid lower bound. This is the "all thresholds"
bound of jax-privacy's ``CanaryScoreAuditor``, made rigorous by fixing the grid in advance.
Book: chapter 6, "Auditing an algorithm".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpkmeans.study.audit import log_ratio_bound
from dpkmeans.validation import check_delta, check_epsilon

__all__ = ["UniformBound", "loss_thresholds", "event_counts", "uniform_lower_bound",
           "uniform_bound_at", "trials_needed", "LOSS_FRACTIONS"]

#: Thresholds of a privacy-loss statistic, as fractions of the claimed epsilon: fine up to the
#: claim (where a pure-DP loss has its atom), then a few beyond it (an overspend, or the
#: unbounded loss of Gaussian noise).
LOSS_FRACTIONS = np.r_[np.arange(1, 41) / 40 * (1 - 1e-9), 1.05, 1.1, 1.25, 1.5, 2.0, 3.0]


def loss_thresholds(claimed_epsilon: float) -> np.ndarray:
    """The public threshold grid for a log-likelihood-ratio statistic: ``LOSS_FRACTIONS``
    times the claimed epsilon (depends on the claim only, never on the trials)."""
    return check_epsilon(claimed_epsilon, "claimed_epsilon") * LOSS_FRACTIONS


@dataclass(frozen=True)
class UniformBound:
    """The best event's bound among all the grid's events (each valid simultaneously)."""

    lower_bound: float  # with probability >= confidence, the true epsilon is at least this
    estimate: float  # ln (h0 / n0 - delta) / (h1 / n1) of the best event, on the same trials
    threshold: float
    favours: str  # "D" (the event s >= tau) or "D'" (the event s <= -tau)
    count_favoured: int
    count_other: int
    events: int  # the number of events the confidence is shared over


def event_counts(scores: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each tau: #(s >= tau) and #(s <= -tau), from one sort of the (NaN-free) scores."""
    s = np.sort(scores)
    above = s.size - np.searchsorted(s, thresholds, side="left")
    below = np.searchsorted(s, -thresholds, side="right")
    return above, below


def _as_scores(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 scores")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} contains NaN")
    return arr


def uniform_lower_bound(scores0: ArrayLike, scores1: ArrayLike, thresholds: ArrayLike, *,
                        delta: float = 0.0, confidence: float = 0.99) -> UniformBound:
    """Lower bound on epsilon from a statistic's values on D (``scores0``) and D'
    (``scores1``), valid for every event of the fixed grid at once (module docstring).

    ``thresholds`` must be chosen without looking at these scores (for example
    :func:`loss_thresholds`). For delta > 0 the bound is on the epsilon at which the
    hockey-stick divergence exceeds delta (book theorem "A sound audit").
    """
    s0, s1 = _as_scores(scores0, "scores0"), _as_scores(scores1, "scores1")
    tau = np.asarray(thresholds, dtype=float)
    if tau.ndim != 1 or tau.size == 0 or not np.all(np.isfinite(tau)):
        raise ValueError("thresholds must be a non-empty 1-D array of finite values")
    delta = check_delta(delta, allow_zero=True)
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must lie in [0.5, 1), got {confidence}")
    events = 2 * tau.size
    alpha = (1.0 - confidence) / events  # log_ratio_bound halves it between its two bounds
    above0, below0 = event_counts(s0, tau)
    above1, below1 = event_counts(s1, tau)
    favour_d = log_ratio_bound(above0, s0.size, above1, s1.size, delta, alpha)
    favour_d_prime = log_ratio_bound(below1, s1.size, below0, s0.size, delta, alpha)
    i, j = int(np.argmax(favour_d)), int(np.argmax(favour_d_prime))
    if favour_d[i] >= favour_d_prime[j]:
        bound, favours, h_fav, n_fav, h_other, n_other = (favour_d[i], "D", above0[i], s0.size,
                                                          above1[i], s1.size)
    else:
        i = j
        bound, favours, h_fav, n_fav, h_other, n_other = (favour_d_prime[j], "D'", below1[j],
                                                          s1.size, below0[j], s0.size)
    with np.errstate(divide="ignore"):
        estimate = float(np.log(max(h_fav / n_fav - delta, 0.0) / max(h_other / n_other,
                                                                    1.0 / n_other)))
    return UniformBound(max(float(bound), 0.0), estimate, float(tau[i]), favours, int(h_fav),
                        int(h_other), events)


def uniform_bound_at(n: int, p_favoured: np.ndarray, p_other: np.ndarray, *, events: int,
                     delta: float, confidence: float, power: float) -> float:
    """The uniform bound an audit of n trials per dataset reaches with probability at least
    ``power``, for events of the given probabilities: each event at the (1 - power)
    quantile of its favoured count and the power quantile of the other (the bound rises with
    the first and falls with the second), the best event kept."""
    alpha = (1.0 - confidence) / events
    k_fav = stats.binom.ppf(1.0 - power, n, p_favoured)
    k_other = stats.binom.ppf(power, n, p_other)
    return float(np.max(log_ratio_bound(k_fav, n, k_other, n, delta, alpha), initial=0.0))


def trials_needed(p_favoured: ArrayLike, p_other: ArrayLike, target: float, *, events: int,
                  delta: float = 0.0, confidence: float = 0.99, power: float = 0.9,
                  most: float = 1e10, estimated_from: int | None = None,
                  min_count: int = 30) -> float:
    """Smallest n per dataset (to 1%) at which the uniform bound over ``events`` events exceeds
    ``target`` with probability at least ``power`` (each event's power counted alone, so a
    slight overestimate), for events of probabilities ``p_favoured`` (under the dataset it
    favours) and ``p_other``; ``inf`` if not even ``most`` trials suffice.

    When the probabilities are frequencies in ``estimated_from`` simulated trials a side, only
    events seen at least ``min_count`` times on both sides are used: the ratio of a rarer
    event is too noisy, and the best-looking of many noisy ratios is optimistic."""
    b, a = np.asarray(p_favoured, dtype=float), np.asarray(p_other, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        useful = (b - delta > 0) & (np.log(np.maximum(b - delta, 1e-300) / np.maximum(a, 1e-300))
                                    > target)
    if estimated_from is not None:
        useful &= (b * estimated_from >= min_count) & (a * estimated_from >= min_count)
    b, a = b[useful], a[useful]

    def reaches(log_n: float) -> bool:
        return uniform_bound_at(int(round(10**log_n)), b, a, events=events, delta=delta,
                                confidence=confidence, power=power) > target

    lo, hi = 1.0, float(np.log10(most))
    if b.size == 0 or not reaches(hi):
        return float("inf")
    while hi - lo > 0.004:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if not reaches(mid) else (lo, mid)
    return float(np.ceil(10**hi))
