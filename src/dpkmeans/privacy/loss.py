"""Privacy-loss random variables and probabilistic DP (book chapters 1 and 2).

The privacy loss of an output y between neighbouring inputs D, D' is
L(y) = ln p_D(y) / p_D'(y). Pure epsilon-DP bounds |L| by epsilon everywhere; probabilistic
DP (PDP) asks only that P[|L| > epsilon] <= delta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import log_ndtr

from dpkmeans.privacy.gaussian import calibrate_noise_multiplier, gaussian_tail_at
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_sensitivity

__all__ = [
    "laplace_privacy_loss",
    "gaussian_privacy_loss",
    "gaussian_pdp_delta",
    "gaussian_pdp_sigma",
    "laplace_loss_pmf",
    "laplace_loss_tails",
    "LogRatioEstimate",
    "estimate_log_ratios",
]


def laplace_privacy_loss(y: ArrayLike, mu0: ArrayLike, mu1: ArrayLike, scale: float) -> np.ndarray:
    """L(y) = (||y - mu1||_1 - ||y - mu0||_1) / b for Laplace outputs centred at mu0 vs mu1.

    With vector centres of shape (d,), ``y`` has shape (..., d) and the last axis is summed;
    with scalar centres the loss is taken elementwise. Bounded by ||mu0 - mu1||_1 / b.
    """
    y = np.asarray(y, dtype=float)
    mu0 = np.asarray(mu0, dtype=float)
    mu1 = np.asarray(mu1, dtype=float)
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    return _sum_coordinates(np.abs(y - mu1) - np.abs(y - mu0), mu0) / scale


def gaussian_privacy_loss(y: ArrayLike, mu0: ArrayLike, mu1: ArrayLike, sigma: float) -> np.ndarray:
    """L(y) = (||y - mu1||^2 - ||y - mu0||^2) / (2 sigma^2) for Gaussian outputs (shapes as above).

    Under y ~ N(mu0, sigma^2 I) it is distributed N(s^2/2, s^2) with s = ||mu0 - mu1||_2 / sigma.
    """
    y = np.asarray(y, dtype=float)
    mu0 = np.asarray(mu0, dtype=float)
    mu1 = np.asarray(mu1, dtype=float)
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    return _sum_coordinates((y - mu1) ** 2 - (y - mu0) ** 2, mu0) / (2.0 * sigma**2)


def _sum_coordinates(per_coordinate: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Sum over the output's coordinates (last axis) when the centre is a vector."""
    return per_coordinate.sum(axis=-1) if centre.ndim >= 1 else per_coordinate


def _log_pdp_tail(epsilon: float, s: float) -> float:
    """log P[|L| > epsilon] for L ~ N(s^2/2, s^2)."""
    upper = float(log_ndtr(s / 2.0 - epsilon / s))    # P[L > eps]
    lower = float(log_ndtr(-s / 2.0 - epsilon / s))   # P[L < -eps]
    return float(np.logaddexp(upper, lower))


def gaussian_pdp_delta(epsilon: float, sigma: float,
                       sensitivity: float = 1.0) -> float:
    """P[|L| > epsilon] for the Gaussian mechanism: the delta of
    (epsilon, delta)-PDP."""
    return gaussian_tail_at(_log_pdp_tail, epsilon, sigma, sensitivity)


def gaussian_pdp_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma with P[|L| > epsilon] <= delta: the exact PDP calibration (book ch. 2)."""
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if sens == 0:
        return 0.0
    return sens / calibrate_noise_multiplier(lambda s: _log_pdp_tail(eps, s), dlt)


@dataclass(frozen=True)
class LogRatioEstimate:
    """Bin-by-bin estimate of the privacy loss ln P0(bin) / P1(bin) from two samples.

    ``lower`` and ``upper`` are simultaneous Clopper-Pearson confidence bounds (Bonferroni over
    bins and both samples), so :meth:`epsilon_lower_bound` is a statistically sound lower
    bound on the epsilon that the mechanism can satisfy: a value above the claimed epsilon is
    evidence of a violation, not sampling noise.
    """

    centres: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    confidence: float

    def max_abs_estimate(self) -> float:
        """The largest |log ratio| point estimate (noisy: can exceed the true epsilon)."""
        return float(np.max(np.abs(self.estimate))) if self.estimate.size else 0.0

    def epsilon_lower_bound(self) -> float:
        """With the stated confidence, the true privacy loss exceeds this value somewhere."""
        if not self.estimate.size:
            return 0.0
        return float(max(np.max(self.lower), np.max(-self.upper), 0.0))


def estimate_log_ratios(
    samples0: ArrayLike,
    samples1: ArrayLike,
    edges: ArrayLike,
    *,
    confidence: float = 0.999,
    min_count: int = 1,
) -> LogRatioEstimate:
    """Histogram two samples of a scalar output on ``edges`` and estimate ln(p0/p1) per bin.

    Bins where either histogram has fewer than ``min_count`` draws are dropped. Used in
    book chapters 1 to 3 to compare the observed privacy loss of a mechanism with its epsilon.
    """
    s0 = np.asarray(samples0, dtype=float).ravel()
    s1 = np.asarray(samples1, dtype=float).ravel()
    if s0.size == 0 or s1.size == 0:
        raise ValueError("samples0 and samples1 must not be empty")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    min_count = check_positive_int(min_count, "min_count")
    edges = np.asarray(edges, dtype=float)
    c0, _ = np.histogram(s0, bins=edges)
    c1, _ = np.histogram(s1, bins=edges)
    keep = (c0 >= min_count) & (c1 >= min_count)
    c0, c1 = c0[keep], c1[keep]
    alpha = (1.0 - confidence) / (4.0 * max(int(keep.sum()), 1))
    lo0, hi0 = _clopper_pearson(c0, s0.size, alpha)
    lo1, hi1 = _clopper_pearson(c1, s1.size, alpha)
    centres = 0.5 * (edges[:-1] + edges[1:])[keep]
    estimate = np.log((c0 / s0.size) / (c1 / s1.size))
    return LogRatioEstimate(centres, estimate, np.log(lo0 / hi1), np.log(hi0 / lo1), confidence)


def _clopper_pearson(count: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial confidence bounds on count / n, each one-sided at level alpha."""
    lower = stats.beta.ppf(alpha, count, n - count + 1)
    upper = stats.beta.ppf(1.0 - alpha, count + 1, n - count)
    return lower, upper


def laplace_loss_pmf(budget: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact probabilities of one Laplace coordinate's privacy loss, rounded to a grid of the
    given step, under D (mean 0) and D' (mean 1) when that coordinate is released with budget
    ``budget`` (loss values j * step, j = -J..J). Book chapter "Auditing privacy"."""
    J = max(int(round(budget / step)), 1)
    edges = np.clip((np.arange(-J, J + 2) - 0.5) * step, -budget, budget)
    under_d = 0.5 * (np.exp(-(budget - edges[1:]) / 2) - np.exp(-(budget - edges[:-1]) / 2))
    under_d_prime = 0.5 * (np.exp(-(budget + edges[:-1]) / 2) - np.exp(-(budget + edges[1:]) / 2))
    under_d[-1] += 0.5
    under_d[0] += 0.5 * np.exp(-budget)
    under_d_prime[0] += 0.5
    under_d_prime[-1] += 0.5 * np.exp(-budget)
    return under_d, under_d_prime


def laplace_loss_tails(budgets, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tau, P[L >= tau] under D, under D') for the sum L of independent Laplace coordinates'
    rounded losses: the exact distribution of the optimal (likelihood-ratio) statistic."""
    p, q = np.ones(1), np.ones(1)
    for budget in budgets:
        pj, qj = laplace_loss_pmf(budget, step)
        p, q = np.convolve(p, pj), np.convolve(q, qj)
    J = (p.size - 1) // 2
    tau = np.arange(-J, J + 1) * step
    return tau, np.cumsum(p[::-1])[::-1], np.cumsum(q[::-1])[::-1]
