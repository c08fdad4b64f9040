"""Gaussian mechanism calibration: classic (Dwork and Roth 2014, Thm. A.1) and analytic
(Balle and Wang 2018, Thm. 8 and Alg. 1), and the exact delta of Gaussian noise (book chapter 2).

Pure arithmetic, no random draw: :mod:`dpkmeans.privacy.mechanisms` (which re-exports these names),
:mod:`dpkmeans.privacy.noise` and :mod:`dpkmeans.privacy.loss` calibrate with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.special import log_ndtr

from dpkmeans.validation import check_delta, check_epsilon, check_sensitivity

__all__ = [
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_delta",
    "gaussian_tail_at",
    "calibrate_noise_multiplier",
]


def gaussian_sigma_classic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classic calibration sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon
    (Dwork-Roth Thm A.1).

    The theorem holds only for epsilon < 1, so larger epsilon raises a ValueError
    (book chapter 2 shows where the formula stops being private).
    """
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if eps >= 1:
        raise ValueError(
            f"epsilon must be < 1 for the classic Gaussian calibration, got {eps}; "
            "use calibration='analytic' (Balle & Wang 2018), which is exact for any "
            "epsilon"
        )
    return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def _log_gaussian_delta(epsilon: float, s: float) -> float:
    """log of the exact delta(epsilon) of a Gaussian mechanism with Delta_2 / sigma = s."""
    a = s / 2.0 - epsilon / s
    b = -s / 2.0 - epsilon / s
    log_pa = float(log_ndtr(a))
    log_ratio = epsilon + float(log_ndtr(b)) - log_pa
    if log_ratio >= 0.0:  # rounding: delta is below what doubles can resolve
        return -math.inf
    return log_pa + math.log1p(-math.exp(log_ratio))


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Exact smallest delta for which N(0, sigma^2) noise is (epsilon, delta)-DP.

    delta = Phi(Delta/(2 sigma) - eps sigma/Delta)
            - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)
    (Balle & Wang 2018, Thm. 8; book chapter 2). Equals P[L > eps] - e^eps P[L < -eps]
    for the privacy loss L ~ N(s^2/2, s^2), s = Delta/sigma.
    """
    return gaussian_tail_at(_log_gaussian_delta, epsilon, sigma, sensitivity)


def gaussian_tail_at(
    log_tail: Callable[[float, float], float], epsilon: float, sigma: float, sensitivity: float
) -> float:
    """Validate (epsilon, sigma, sensitivity) and evaluate ``exp(log_tail(eps, Delta / sigma))``.

    Shared by the DP profile (:func:`gaussian_delta`) and the PDP tail of the Gaussian mechanism.
    """
    eps = check_epsilon(epsilon)
    sens = check_sensitivity(sensitivity)
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be finite and > 0, got {sigma}")
    if sens == 0:
        return 0.0
    return math.exp(log_tail(eps, sens / sigma))


def _bisect_increasing(fn: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """Largest x in [lo, hi] (up to float resolution) with fn(x) <= target, fn increasing."""
    if fn(lo) > target or fn(hi) <= target:
        raise ValueError("calibration target is outside the bracketing interval")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if fn(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def calibrate_noise_multiplier(log_tail: Callable[[float], float], delta: float) -> float:
    """Largest s = Delta/sigma whose log-tail ``log_tail(s)`` stays <= log(delta).

    Shared by the analytic Gaussian (DP) and the probabilistic-DP calibrations.
    """
    log_s = _bisect_increasing(lambda u: log_tail(math.exp(u)), math.log(delta), -40.0, 40.0)
    return math.exp(log_s)


def gaussian_sigma_analytic(sensitivity: float, epsilon: float,
                            delta: float) -> float:
    """Smallest sigma that makes the Gaussian mechanism (epsilon, delta)-DP, for any
    epsilon.

    Analytic Gaussian mechanism of Balle & Wang (2018): solve
    gaussian_delta(eps, sigma) = delta numerically (book chapter 2). Always <= the
    classic sigma where that one applies.
    """
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if sens == 0:
        return 0.0
    s = calibrate_noise_multiplier(lambda s: _log_gaussian_delta(eps, s), dlt)
    return sens / s
