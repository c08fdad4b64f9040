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

    Parameters
    ----------
    y : array_like
        Outputs, shape (..., d) for vector centres.
    mu0, mu1 : array_like
        The centres (the query's values on D and D'), scalars or shape (d,).
    scale : float
        The Laplace scale b (> 0).

    Returns
    -------
    ndarray
        L(y), one value per output.

    Raises
    ------
    ValueError
        If ``scale`` is not positive.

    Examples
    --------
    >>> from dpkmeans.privacy.loss import laplace_privacy_loss
    >>> laplace_privacy_loss([-1.0, 0.5, 3.0], 0.0, 1.0, scale=1.0)
    array([ 1.,  0., -1.])
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

    Parameters
    ----------
    y : array_like
        Outputs, shape (..., d) for vector centres.
    mu0, mu1 : array_like
        The centres, scalars or shape (d,).
    sigma : float
        The noise's standard deviation (> 0).

    Returns
    -------
    ndarray
        L(y), one value per output.

    Raises
    ------
    ValueError
        If ``sigma`` is not positive.

    Examples
    --------
    >>> from dpkmeans.privacy.loss import gaussian_privacy_loss
    >>> gaussian_privacy_loss([0.0, 0.5, 1.0], 0.0, 1.0, sigma=1.0)
    array([ 0.5,  0. , -0.5])
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
    (epsilon, delta)-PDP.

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    sigma : float
        The noise's standard deviation (> 0).
    sensitivity : float, default 1.0
        The L2 sensitivity (>= 0).

    Returns
    -------
    float
        The PDP delta (0.0 for a zero sensitivity).

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    Larger than the DP delta of the same noise (0.126937):

    >>> from dpkmeans.privacy.loss import gaussian_pdp_delta
    >>> round(gaussian_pdp_delta(1.0, sigma=1.0), 6)
    0.375345
    """
    return gaussian_tail_at(_log_pdp_tail, epsilon, sigma, sensitivity)


def gaussian_pdp_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma with P[|L| > epsilon] <= delta: the exact PDP calibration (book ch. 2).

    Parameters
    ----------
    sensitivity : float
        The L2 sensitivity (>= 0).
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The tail probability, in (0, 1).

    Returns
    -------
    float
        sigma (0.0 for a zero sensitivity).

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    More noise than the analytic DP calibration (3.7306 here):

    >>> from dpkmeans.privacy.loss import gaussian_pdp_sigma
    >>> round(gaussian_pdp_sigma(1.0, 1.0, 1e-5), 4)
    4.4441
    """
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

    Parameters
    ----------
    centres : ndarray
        The centres of the bins kept.
    estimate : ndarray
        The point estimates of ln P0(bin) / P1(bin).
    lower, upper : ndarray
        Their simultaneous confidence bounds.
    confidence : float
        The confidence level of the bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.loss import estimate_log_ratios
    >>> est = estimate_log_ratios([0.0, 0.1, 1.2], [1.0, 1.1, 0.2], [0.0, 0.5, 1.5])
    >>> est.centres, est.estimate
    (array([0.25, 1.  ]), array([ 0.69314718, -0.69314718]))
    """

    centres: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    confidence: float

    def max_abs_estimate(self) -> float:
        """The largest |log ratio| point estimate (noisy: can exceed the true epsilon).

        Returns
        -------
        float
            max |estimate| over the bins (0.0 without bins).
        """
        return float(np.max(np.abs(self.estimate))) if self.estimate.size else 0.0

    def epsilon_lower_bound(self) -> float:
        """With the stated confidence, the true privacy loss exceeds this value somewhere.

        Returns
        -------
        float
            The largest |log ratio| that every confidence interval excludes below (>= 0).
        """
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

    Parameters
    ----------
    samples0, samples1 : array_like
        Outputs of the mechanism on D and on D' (flattened, non-empty).
    edges : array_like
        The histogram's bin edges.
    confidence : float, default 0.999
        The simultaneous confidence of the bounds, in (0, 1).
    min_count : int, default 1
        The fewest draws of each sample a bin needs to be kept.

    Returns
    -------
    LogRatioEstimate
        The estimates and their confidence bounds, bin by bin.

    Raises
    ------
    ValueError
        If a sample is empty or ``confidence`` is not in (0, 1).

    Examples
    --------
    Laplace releases of 0 and 1 at scale 1 (epsilon = 1):

    >>> import numpy as np
    >>> from dpkmeans.privacy.loss import estimate_log_ratios
    >>> rng = np.random.default_rng(0)
    >>> s0, s1 = rng.laplace(0.0, 1.0, 20_000), rng.laplace(1.0, 1.0, 20_000)
    >>> est = estimate_log_ratios(s0, s1, np.linspace(-3.0, 4.0, 8))
    >>> round(est.max_abs_estimate(), 3), round(est.epsilon_lower_bound(), 3)  # both near 1
    (1.034, 0.882)
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
    ``budget`` (loss values j * step, j = -J..J). Book chapter 6, "Auditing an algorithm".

    Parameters
    ----------
    budget : float
        The coordinate's epsilon: its loss lies in [-budget, budget].
    step : float
        The grid of the rounded loss.

    Returns
    -------
    under_d, under_d_prime : ndarray
        P[L = j step] under D and under D', j = -J..J with J = max(round(budget / step), 1).

    Examples
    --------
    >>> from dpkmeans.privacy.loss import laplace_loss_pmf
    >>> p, q = laplace_loss_pmf(1.0, 0.5)
    >>> p.round(4), float(p.sum())
    (array([0.2084, 0.0592, 0.076 , 0.0976, 0.5588]), 1.0)
    """
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
    rounded losses: the exact distribution of the optimal (likelihood-ratio) statistic.

    Parameters
    ----------
    budgets : iterable of float
        Each coordinate's epsilon.
    step : float
        The grid of the rounded losses (as :func:`laplace_loss_pmf`).

    Returns
    -------
    tau : ndarray
        The thresholds, j step.
    under_d, under_d_prime : ndarray
        P[L >= tau] under D and under D'.

    Examples
    --------
    >>> from dpkmeans.privacy.loss import laplace_loss_tails
    >>> tau, p, q = laplace_loss_tails([1.0, 1.0], 0.5)
    >>> float(tau[4]), round(float(p[4]), 4), round(float(q[4]), 4)
    (0.0, 0.847, 0.4033)
    """
    p, q = np.ones(1), np.ones(1)
    for budget in budgets:
        pj, qj = laplace_loss_pmf(budget, step)
        p, q = np.convolve(p, pj), np.convolve(q, qj)
    J = (p.size - 1) // 2
    tau = np.arange(-J, J + 1) * step
    return tau, np.cumsum(p[::-1])[::-1], np.cumsum(q[::-1])[::-1]
