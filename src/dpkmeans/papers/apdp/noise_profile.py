"""How much noise a schedule puts on a centroid, iteration by iteration (book chapter 10).

A cluster of n records gets, in iteration t, noisy statistics S'_j = S_j + eta_S and
n'_j = n_j + eta_n, and the centroid S'_j / n'_j. To first order in the noise (delta method),

    c'_i - c_i ~ (eta_S,i - c_i eta_n) / n,   sd(c'_i) ~ sqrt(sd(eta_S,i)^2 + c_i^2 sd(eta_n)^2) / n,

with c_i the centroid's coordinate as the release measures it (from the box's midpoint when
the configuration is centred). Everything here reads the public configuration only: it is the
noise a schedule *plans*, not a measurement.
"""

from __future__ import annotations

import numpy as np

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.privacy.noise_types import NoiseType, noise_type, noise_type_of

__all__ = ["noise_sd", "centroid_noise_sd"]


def noise_sd(kind: NoiseType | str, scale: float) -> float:
    """Standard deviation of one noise coordinate: sqrt(2) b for Laplace, sigma for Gaussian
    (:meth:`~dpkmeans.privacy.noise_types.NoiseType.sd` of the noise type or its name)."""
    return noise_type(kind).sd(scale)


def centroid_noise_sd(config: DPLloydConfig, cluster_size: float, *, offset: float = 0.0,
                      weight: float = 1.0) -> np.ndarray:
    """First-order sd of one centroid coordinate after each iteration, shape (T,) (module
    docstring), averaged over the coordinates: sqrt(mean_i sd(eta_S,i)^2 + offset^2 sd(eta_n)^2)
    / n.

    ``cluster_size`` is n (e.g. N / k); ``offset`` the centroid's coordinate as released (0:
    the sum's noise only, a lower bound); ``weight`` the cluster's share of each iteration's
    budget (an allocation rule's w_j in (0, 1]; the rule itself depends on the data).
    """
    n = float(cluster_size)
    if not n > 0:
        raise ValueError(f"cluster_size must be > 0, got {cluster_size}")
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"weight must lie in (0, 1], got {weight}")
    d = config.bounds[0].size
    white = noise_type_of(config).whitening(config.bounds)
    out = []
    for eps_t in config.schedule:
        sd = np.zeros(d + 1)
        for release in iteration_releases(config, float(eps_t) * weight):
            if release.cluster not in (None, 0):
                continue
            cal = release.calibration
            sd[release.columns] = cal.noise.sd(cal.scale)
        sd = sd / white  # colored noise is white on the whitened vector
        out.append(np.sqrt(np.mean(sd[:d] ** 2) + offset**2 * sd[d] ** 2) / n)
    return np.array(out)
