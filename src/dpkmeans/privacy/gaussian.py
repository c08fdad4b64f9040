"""Gaussian mechanism calibration: classic (Dwork and Roth 2014, Thm. A.1) and analytic
(Balle and Wang 2018, Thm. 8 and Alg. 1), the exact delta of Gaussian noise (book chapter 2),
and the zCDP conversion of the discrete Gaussian (Canonne, Kamath and Steinke 2020; chapter 6).

Pure arithmetic, no random draw: :mod:`dpkmeans.privacy.mechanisms` (which re-exports these names),
:mod:`dpkmeans.privacy.noise_types` and :mod:`dpkmeans.privacy.loss` calibrate with it.
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
    "zcdp_delta",
    "zcdp_rho_for",
]


def gaussian_sigma_classic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classic calibration sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon
    (Dwork-Roth Thm A.1).

    The theorem holds only for epsilon < 1, so larger epsilon raises a ValueError
    (book chapter 2 shows where the formula stops being private).

    Parameters
    ----------
    sensitivity : float
        The L2 sensitivity Delta_2 of the query (>= 0).
    epsilon : float
        The privacy budget, in (0, 1).
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        The standard deviation sigma of the Gaussian noise.

    Raises
    ------
    ValueError
        If ``epsilon >= 1`` (use :func:`gaussian_sigma_analytic`), or an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.gaussian import gaussian_sigma_classic
    >>> round(gaussian_sigma_classic(1.0, 0.5, 1e-5), 4)
    9.6896
    >>> gaussian_sigma_classic(1.0, 2.0, 1e-5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be < 1 for the classic Gaussian calibration, got 2.0; ...
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

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    sigma : float
        The noise's standard deviation (> 0).
    sensitivity : float, default 1.0
        The L2 sensitivity Delta of the query (>= 0).

    Returns
    -------
    float
        delta(epsilon), computed in log space (0.0 for a zero sensitivity).

    Raises
    ------
    ValueError
        If an input is out of range (through :func:`gaussian_tail_at`).

    Examples
    --------
    >>> from dpkmeans.privacy.gaussian import gaussian_delta, gaussian_sigma_analytic
    >>> round(gaussian_delta(1.0, sigma=1.0), 6)
    0.126937
    >>> f"{gaussian_delta(0.5, gaussian_sigma_analytic(1.0, 0.5, 1e-5)):.3g}"
    '1e-05'
    """
    return gaussian_tail_at(_log_gaussian_delta, epsilon, sigma, sensitivity)


def gaussian_tail_at(
    log_tail: Callable[[float, float], float], epsilon: float, sigma: float, sensitivity: float
) -> float:
    """Validate (epsilon, sigma, sensitivity) and evaluate ``exp(log_tail(eps, Delta / sigma))``.

    Shared by the DP profile (:func:`gaussian_delta`) and the PDP tail of the Gaussian mechanism.

    Parameters
    ----------
    log_tail : callable
        ``log_tail(epsilon, s)``: the log of a tail probability at the noise multiplier
        s = Delta / sigma.
    epsilon : float
        The privacy budget (> 0).
    sigma : float
        The noise's standard deviation (finite, > 0).
    sensitivity : float
        The L2 sensitivity Delta (>= 0).

    Returns
    -------
    float
        The tail probability (0.0 for a zero sensitivity, without calling ``log_tail``).

    Raises
    ------
    ValueError
        If ``sigma`` is not finite and positive, or ``epsilon`` or ``sensitivity`` is out of
        range.

    Examples
    --------
    >>> import math
    >>> from dpkmeans.privacy.gaussian import gaussian_tail_at
    >>> gaussian_tail_at(lambda eps, s: -eps * s, 1.0, sigma=2.0, sensitivity=4.0) == math.exp(-2)
    True
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

    Parameters
    ----------
    log_tail : callable
        ``log_tail(s)``: the log of the tail probability at s, increasing in s.
    delta : float
        The target tail probability, in (0, 1).

    Returns
    -------
    float
        The largest s in [e^-40, e^40] (found by bisection on log s) with
        ``log_tail(s) <= log(delta)``.

    Raises
    ------
    ValueError
        If no s in that bracket meets the target, or all do.

    Examples
    --------
    >>> import math
    >>> from dpkmeans.privacy.gaussian import calibrate_noise_multiplier
    >>> round(calibrate_noise_multiplier(lambda s: math.log(s / 100), 0.5), 6)
    50.0
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

    Parameters
    ----------
    sensitivity : float
        The L2 sensitivity Delta_2 of the query (>= 0).
    epsilon : float
        The privacy budget (> 0, any size).
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        The standard deviation sigma (0.0 for a zero sensitivity).

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.gaussian import gaussian_sigma_analytic
    >>> round(gaussian_sigma_analytic(1.0, 0.5, 1e-5), 4)  # the classic sigma is 9.6896
    7.0318
    >>> round(gaussian_sigma_analytic(1.0, 2.0, 1e-5), 4)
    1.9938
    """
    sens = check_sensitivity(sensitivity)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if sens == 0:
        return 0.0
    s = calibrate_noise_multiplier(lambda s: _log_gaussian_delta(eps, s), dlt)
    return sens / s


# --- zCDP of the discrete Gaussian (Canonne, Kamath and Steinke 2020, section 2.3) ---------
def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest delta such that rho-zCDP gives (epsilon, delta)-DP, by CKS20 Cor. 13:
    delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a.

    Any a > 1 gives a valid delta; the infimum is found by bisection on the derivative of the
    log, so a numerical miss can only make the returned delta larger (safe).

    Parameters
    ----------
    rho : float
        The zCDP parameter (<= 0 gives delta 0).
    epsilon : float
        The target epsilon.

    Returns
    -------
    float
        delta, at most 1.

    Examples
    --------
    >>> from dpkmeans.privacy.gaussian import zcdp_delta
    >>> round(zcdp_delta(0.1, 1.0), 6)
    0.008933
    """
    if rho <= 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, (epsilon + 1.0) / (2.0 * rho) + 2.0
    for _ in range(200):
        a = 0.5 * (lo + hi)
        if (2.0 * a - 1.0) * rho - epsilon + math.log1p(-1.0 / a) < 0:
            lo = a
        else:
            hi = a
    a = 0.5 * (lo + hi)
    log_delta = (a - 1.0) * (a * rho - epsilon) + a * math.log1p(-1.0 / a) - math.log(a - 1.0)
    return min(math.exp(log_delta), 1.0)


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho (to 1e-12 relative, rounded down) with zcdp_delta(rho, epsilon) <= delta.

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The target delta, in (0, 1).

    Returns
    -------
    float
        rho, found by bisection.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``delta`` is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.gaussian import zcdp_delta, zcdp_rho_for
    >>> rho = zcdp_rho_for(1.0, 1e-5)
    >>> round(rho, 6), zcdp_delta(rho, 1.0) <= 1e-5
    (0.030557, True)
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    lo, hi = 0.0, eps + 1.0
    while zcdp_delta(hi, eps) <= dlt:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(mid, eps) <= dlt:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo
