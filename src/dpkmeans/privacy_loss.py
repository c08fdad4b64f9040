"""Privacy-loss random variables and probabilistic DP (book chapters 1 and 2).

The privacy loss of an output y between neighbouring inputs D, D' is
L(y) = ln p_D(y) / p_D'(y). Pure epsilon-DP bounds |L| by epsilon everywhere; probabilistic
DP (PDP) asks only that P[|L| > epsilon] <= delta.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

from .mechanisms import calibrate_noise_multiplier
from .validation import check_delta, check_epsilon, check_positive_int, check_sensitivity

__all__ = [
    "laplace_privacy_loss",
    "gaussian_privacy_loss",
    "gaussian_pdp_delta",
    "gaussian_pdp_sigma",
    "empirical_log_ratios",
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


def gaussian_pdp_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """P[|L| > epsilon] for the Gaussian mechanism: the delta of (epsilon, delta)-PDP."""
    eps = check_epsilon(epsilon)
    sens = check_sensitivity(sensitivity)
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be finite and > 0, got {sigma}")
    if sens == 0:
        return 0.0
    return math.exp(_log_pdp_tail(eps, sens / sigma))


def gaussian_pdp_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma with P[|L| > epsilon] <= delta: the exact PDP calibration (book ch. 2)."""
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if sens == 0:
        return 0.0
    return sens / calibrate_noise_multiplier(lambda s: _log_pdp_tail(eps, s), dlt)


def empirical_log_ratios(
    samples0: ArrayLike, samples1: ArrayLike, bins: ArrayLike | int, min_count: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram two samples of a scalar output; return bin centres and ln(p0/p1) per bin.

    Bins where either histogram has fewer than ``min_count`` samples are dropped, since their
    ratio is dominated by sampling noise. Used in book chapter 1 to compare the observed
    privacy loss of a mechanism with its epsilon.
    """
    s0 = np.asarray(samples0, dtype=float).ravel()
    s1 = np.asarray(samples1, dtype=float).ravel()
    if s0.size == 0 or s1.size == 0:
        raise ValueError("samples0 and samples1 must not be empty")
    min_count = check_positive_int(min_count, "min_count")
    c0, edges = np.histogram(s0, bins=bins)
    c1, _ = np.histogram(s1, bins=edges)
    keep = (c0 >= min_count) & (c1 >= min_count)
    centres = 0.5 * (edges[:-1] + edges[1:])
    ratio = np.log((c0[keep] / s0.size) / (c1[keep] / s1.size))
    return centres[keep], ratio
