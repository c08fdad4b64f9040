"""Every corrected algorithm of the book, by the name ``DPKMeans(algorithm=...)`` takes.

Each :class:`Choice` builds the engine configuration of one algorithm from the public inputs
of a fit and says what its guarantee needs: the adjacency it is proven under, whether it reads
the number of records (public, or a noisy count the estimator pays for), whether it is
(epsilon, delta)-DP. The as-published variants are deliberately absent: they are reachable
only through their paper modules (``dpkmeans.papers.<paper>.variants``), where the book audits
them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from numpy.typing import ArrayLike

from .engine import DPLloydConfig

__all__ = ["CATALOGUE", "Choice", "FitInputs", "choice"]


@dataclass(frozen=True)
class FitInputs:
    """The public inputs of one fit that a configuration may read."""

    n_clusters: int
    epsilon: float
    bounds: tuple[ArrayLike, ArrayLike]
    max_iter: int
    n_records: int | None = None
    delta: float | None = None


@dataclass(frozen=True)
class Choice:
    """One corrected algorithm: how to build it, and what its guarantee needs."""

    name: str
    build: Callable[[FitInputs], DPLloydConfig]
    summary: str
    chapter: str
    neighbour: str = "add/remove"
    needs_n_records: bool = False
    needs_delta: bool = False
    uses_max_iter: bool = False


def _dplloyd(f: FitInputs) -> DPLloydConfig:
    from .algorithms import dplloyd

    return dplloyd(f.n_clusters, f.epsilon, f.bounds, iterations=f.max_iter)


def _dplloyd_impr(f: FitInputs) -> DPLloydConfig:
    from .algorithms import dplloyd_impr

    return dplloyd_impr(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)


def _dpkccm(f: FitInputs) -> DPLloydConfig:
    from .papers.dpkccm.variants import allocation_nk

    return allocation_nk(f.n_clusters, f.epsilon, f.bounds)


def _silhouette(f: FitInputs) -> DPLloydConfig:
    from .papers.silhouette.variants import corrected

    return corrected(f.n_clusters, f.epsilon, f.bounds)


def _apdp(f: FitInputs) -> DPLloydConfig:
    from .papers.apdp.variants import corrected

    return corrected(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)


def _di(f: FitInputs) -> DPLloydConfig:
    from .papers.di.variants import kmeans_corrected

    return kmeans_corrected(f.bounds, epsilon=f.epsilon, n_clusters=f.n_clusters)


def _colored(f: FitInputs) -> DPLloydConfig:
    from .papers.colored.variants import corrected

    return corrected(f.n_clusters, f.epsilon, f.delta, f.bounds, iterations=f.max_iter)


CATALOGUE: dict[str, Choice] = {c.name: c for c in (
    Choice("dplloyd", _dplloyd, "Su et al.'s baseline: epsilon / T every iteration from random "
           "starts in the box.", "5", uses_max_iter=True),
    Choice("dplloyd-impr", _dplloyd_impr, "Su et al.'s improved DPLloyd: sphere-packing starts, "
           "the count/sum split and T chosen from N epsilon / k and d.", "5",
           needs_n_records=True),
    Choice("dp-kccm", _dpkccm, "DP-KCCM (Ni et al. 2021): n k clusters, a decreasing budget "
           "and a noisy-count merge down to k.", "7"),
    Choice("silhouette", _silhouette, "Silhouette-weighted budgets (Zhang, Liu and Wang "
           "2018), corrected: the cluster weights come from noisy silhouettes, public bounds, "
           "a normalised schedule.", "8"),
    Choice("apdp", _apdp, "APDPk-means, corrected: budgets in a decreasing arithmetic "
           "progression floored at Su's minimum.", "10", needs_n_records=True),
    Choice("di", _di, "DI k-means (Shang et al. 2021), corrected: one epsilon (or rho over m "
           "worlds), the normalised halving schedule, under replace adjacency.", "11",
           neighbour="replace"),
    Choice("colored", _colored, "DP-Lloyd with colored Gaussian noise (Ravi, Scaglione and "
           "Peisert 2021), corrected: the box-optimal covariance on each cluster's centred "
           "statistics; (epsilon, delta).", "9", needs_delta=True, uses_max_iter=True),
)}


def choice(name: str) -> Choice:
    """The corrected algorithm called ``name`` (a ValueError lists the names)."""
    if name not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {sorted(CATALOGUE)}, got {name!r}; "
                         "the as-published variants are in dpkmeans.papers.<paper>.variants")
    return CATALOGUE[name]
