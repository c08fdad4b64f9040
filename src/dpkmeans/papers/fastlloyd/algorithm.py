"""FastLloyd's central algorithm (Diaa, Humphries and Kerschbaum 2025; book chapter 12,
"FastLloyd"): the DP-Lloyd loop with the radius assignment and relative updates of
:mod:`dpkmeans.engine.relative`, Su et al.'s sphere-packing start, and T from the paper's rule.

Its Gaussian form releases, every iteration, each cluster's whitened (S_j / (r_t a), n_j / b)
with white Gaussian noise, so the run is mu-GDP (book chapter 3); the configuration is
calibrated to the target (epsilon, delta) by that exact composition
(:func:`dpkmeans.engine.equal_privacy.scale_to`), which is the paper's own analysis. Its pure
form draws Laplace noise with Su et al.'s count/sum split and T from Su's rule, as the
authors' code does for its Laplace runs.
"""

from __future__ import annotations

import math

from numpy.typing import ArrayLike

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import scale_to
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.relative import ALPHA, RadiusAssignment, RelativeRelease
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.registry import FitInputs
from dpkmeans.privacy.gaussian import gaussian_sigma_analytic
from dpkmeans.privacy.sensitivity import check_box
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int

__all__ = ["ALPHA", "T_MAX", "T_MIN", "catalogue_config", "catalogue_config_laplace",
           "fastlloyd_config", "fastlloyd_iterations"]

#: The paper's range of T (Su et al.'s).
T_MIN, T_MAX = 2, 7


def fastlloyd_iterations(n_records: int, n_clusters: int, d: int, epsilon: float,
                         delta: float, alpha: float = ALPHA) -> int:
    """T of the Gaussian form, the paper's rule: 0.016 N^2 / (k^3 eta^2 (1 + sqrt(4d))^2 s^2)
    clipped to [2, 7], with eta = alpha sqrt(d) / k^(1/d) (the radius in units of the half
    side of the box) and s the analytic Gaussian sigma of a sensitivity-1 query at
    (epsilon, delta) (Balle and Wang 2018). Public: N is a public input.

    Parameters
    ----------
    n_records : int
        N (public).
    n_clusters : int
        k.
    d : int
        The dimension.
    epsilon : float
        The run's epsilon.
    delta : float
        The run's delta, in (0, 1).
    alpha : float, default ALPHA
        The radius factor.

    Returns
    -------
    int
        T.

    Examples
    --------
    >>> from dpkmeans.papers.fastlloyd.algorithm import fastlloyd_iterations
    >>> fastlloyd_iterations(150, 3, 4, 1.0, 1e-3), fastlloyd_iterations(10**6, 3, 4, 1.0, 1e-7)
    (2, 7)
    """
    n = check_positive_int(n_records, "n_records")
    k = check_positive_int(n_clusters, "n_clusters")
    d = check_positive_int(d, "d")
    s = gaussian_sigma_analytic(1.0, check_epsilon(epsilon), check_delta(delta))
    eta = alpha * math.sqrt(d) / k ** (1.0 / d)
    ratio = 0.016 * n**2 / (k**3 * eta**2 * (1.0 + math.sqrt(4.0 * d)) ** 2 * s**2)
    return int(max(min(ratio, T_MAX), T_MIN))


def fastlloyd_config(n_clusters: int, epsilon: float, bounds: tuple[ArrayLike, ArrayLike], *,
                     n_records: int, delta: float | None = None, alpha: float = ALPHA,
                     noise: str = "gaussian") -> DPLloydConfig:
    """FastLloyd (Diaa, Humphries and Kerschbaum 2025) at (epsilon, delta): Gaussian noise
    calibrated by exact (Gaussian DP) composition to the target, or (``noise="laplace"``,
    ``delta`` None) its pure epsilon-DP form.

    ``n_records`` enters T: it must be public (book chapter 5).

    Parameters
    ----------
    n_clusters : int
        k.
    epsilon : float
        The run's epsilon.
    bounds : (array_like, array_like)
        The public box.
    n_records : int
        N (public).
    delta : float or None, default None
        The run's delta (the Gaussian form); None for the Laplace form.
    alpha : float, default ALPHA
        The radius factor.
    noise : {"gaussian", "laplace"}, default "gaussian"
        The form.

    Returns
    -------
    DPLloydConfig
        The Gaussian form with ``target = (epsilon, delta)``, or the Laplace form.

    Raises
    ------
    ValueError
        If the noise is unknown, or the Gaussian form has no delta (or the Laplace form one).

    Examples
    --------
    >>> from dpkmeans.engine.equal_privacy import tight_epsilon
    >>> from dpkmeans.papers.fastlloyd.algorithm import fastlloyd_config
    >>> config = fastlloyd_config(3, 1.0, ([-1.0] * 4, [1.0] * 4), n_records=10**4, delta=1e-6)
    >>> config.iterations, config.target, round(tight_epsilon(config, 1e-6), 3)
    (7, PrivacyCost(epsilon=1.0, delta=1e-06), 1.0)
    >>> fastlloyd_config(3, 1.0, ([-1.0] * 4, [1.0] * 4), n_records=10**4, noise="laplace").noise
    noise_type('laplace', sampler='discrete')
    """
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    lower = check_box(bounds)[0]
    d = lower.size
    common = {"start": PublicStart(sphere_packing), "assign": RadiusAssignment(alpha),
              "step": RelativeRelease()}
    if noise == "laplace":
        if delta is not None:
            raise ValueError("FastLloyd's Laplace form is pure epsilon-DP: give no delta")
        T = schedules.su_iterations(eps, n_records, k, d)
        return DPLloydConfig(k, bounds, schedules.uniform(eps, T), noise="laplace",
                             name="FastLloyd (Laplace)", **common)
    if noise != "gaussian":
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    if delta is None:
        raise ValueError("FastLloyd's Gaussian form is (epsilon, delta)-DP: give delta")
    dlt = check_delta(delta)
    T = fastlloyd_iterations(n_records, k, d, eps, dlt, alpha)
    config = DPLloydConfig(k, bounds, schedules.uniform(eps, T), noise="gaussian",
                           delta=dlt / T, name="FastLloyd", **common)
    return scale_to(config, eps, dlt)


def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="fastlloyd")``: the Gaussian form at (epsilon, delta)."""
    return fastlloyd_config(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records,
                            delta=f.delta)


def catalogue_config_laplace(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="fastlloyd-laplace")``: the pure epsilon-DP form."""
    return fastlloyd_config(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records,
                            noise="laplace")
