"""Named DP-Lloyd configurations: the baselines of Su et al. (2016, 2017).

Each function returns a :class:`~dpkmeans.engine.config.DPLloydConfig`; run it with
:func:`dpkmeans.engine.loop.run` or through :class:`dpkmeans.api.estimators.DPKMeans`.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing, uniform_box
from dpkmeans.engine.schedules import SU_RHO
from dpkmeans.engine.strategies import JointRelease, PublicStart, SuSplit
from dpkmeans.papers.registry import FitInputs
from dpkmeans.privacy.counting import noisy_record_count
from dpkmeans.privacy.sensitivity import check_box
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = ["dplloyd", "dplloyd_impr", "noisy_record_count", "ALGORITHMS"]


def dplloyd(
    n_clusters: int,
    epsilon: float,
    bounds: tuple[ArrayLike, ArrayLike],
    *,
    iterations: int = 5,
) -> DPLloydConfig:
    """DPLloyd (Blum et al. 2005; McSherry 2009): uniform budget over a fixed T, one Laplace
    release of each cluster's (S_j, n_j) with Delta_1 = d r + 1, random initial centroids in
    the box. T = 5 follows PINQ (as we recall Su et al.'s setting)."""
    T = check_positive_int(iterations, "iterations")
    return DPLloydConfig(
        n_clusters=n_clusters,
        bounds=bounds,
        schedule=schedules.uniform(check_epsilon(epsilon), T),
        start=PublicStart(uniform_box),
        step=JointRelease(),
        name="DPLloyd",
    )


def dplloyd_impr(
    n_clusters: int,
    epsilon: float,
    bounds: tuple[ArrayLike, ArrayLike],
    *,
    n_records: int,
    rho: float = SU_RHO["[-1,1]"],
) -> DPLloydConfig:
    """DPLloyd-Impr (Su et al. 2016): sphere-packing initialisation, T from Su's rule
    (2 <= T <= 7, from epsilon_m), and the count : per-dimension split cbrt(4 d rho^2) : 1.

    ``n_records`` enters epsilon_m and so T, the noise scale and the ledger's length. It must
    be **public**: a number the user states (e.g. from the dataset's documentation), or a noisy
    count paid for with :func:`noisy_record_count`. Never pass ``len(X)`` of private data: under
    add/remove adjacency N is private, and one record can change T (book chapter 5).
    """
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    lower = check_box(bounds)[0]
    T = schedules.su_iterations(eps, n_records, k, lower.size, rho)
    return DPLloydConfig(
        n_clusters=k,
        bounds=bounds,
        schedule=schedules.uniform(eps, T),
        start=PublicStart(sphere_packing),
        step=SuSplit(rho),
        name="DPLloyd-Impr",
    )


#: Algorithm names accepted by the estimator and the sweeps.
ALGORITHMS = {"dplloyd": dplloyd, "dplloyd-impr": dplloyd_impr}


# -- the functions the paper's record names (its __init__.py) ------------------------------

def dplloyd_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dplloyd")``: epsilon / T over ``max_iter`` iterations."""
    return dplloyd(f.n_clusters, f.epsilon, f.bounds, iterations=f.max_iter)


def dplloyd_impr_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="dplloyd-impr")``: Su's rule for T from the public record count."""
    return dplloyd_impr(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)
