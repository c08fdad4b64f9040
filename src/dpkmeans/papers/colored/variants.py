"""The colored-noise paper (Ravi, Scaglione and Peisert 2021) as engine configurations
(book chapter 9).

=====================  ==========================================  ================================
                       as published (CEDSKMeans)                   corrected
=====================  ==========================================  ================================
initial centres        k-means++ on the private records (a leak)   sphere packing (public)
iterations             Lloyd without noise to convergence (a        T DP-Lloyd iterations, eps / T
                       leak), at most 300, as scikit-learn          and delta / T each
noise                  once, on the converged centroids:            every iteration, on each
                       N(0, Sigma), Sigma from the leave-one-out    cluster's centred (S_j, n_j):
                       Delta's of this dataset (Lemma 5, CEDS's     the box optimum
                       closed form), gamma_c(eps K d, delta)        diag(r, 1) (sum r + 1) / gamma
privacy                none: local sensitivity, labels frozen,     (eps, delta)-DP
                       the closed form violates its constraints
=====================  ==========================================  ================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.lloyd import assign
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.strategies import InitialRelease, OutputRelease, ShiftBelow
from dpkmeans.papers.colored.flaws import FLAWS, NoiseFreeIterations
from dpkmeans.papers.registry import FitInputs
from dpkmeans.privacy import colored
from dpkmeans.privacy.noise import CovarianceNoise
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int

__all__ = ["as_published", "corrected", "white", "local_deltas", "CEDSOutputRelease",
           "KMeansPlusPlusOnData",
           "MAX_ITER", "CEDS_EPSILON", "CEDS_DELTA"]

#: CEDSKMeans's defaults (scikit-learn's KMeans: max_iter 300; dp_epsilon 0.1, dp_delta 0.1).
MAX_ITER = 300
CEDS_EPSILON = 0.1
CEDS_DELTA = 0.1
#: Convergence of the exact loop: no centroid moves by this much (scikit-learn's tol is
#: relative to the data's variance; the book stops on the absolute shift).
CONVERGED = 1e-8


def local_deltas(X: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paper's "possible Delta's" of a clustering (as CEDS builds them): the labels of the
    nearest of ``centroids`` (K, d), and the leave-one-out shifts of the cluster means with
    the labels frozen, shape (N, K d). An empty cluster keeps its centroid."""
    k = centroids.shape[0]
    labels = assign(X, centroids)
    counts = np.bincount(labels, minlength=k)
    sums = np.stack([X[labels == j].sum(axis=0) for j in range(k)])
    means = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centroids)
    return labels, colored.leave_one_out_deltas(X, labels, means)


def _records(ctx: HookContext) -> np.ndarray:
    """The (clipped) private records, gathered from the backend (as published only)."""
    return ctx.backend.map_concat(ctx.data, np.transpose).T


@dataclass(frozen=True)
class KMeansPlusPlusOnData(InitialRelease):
    """CEDS's initial centres: scikit-learn's k-means++ on the private records, one draw per
    replica from its generator (recorded by the ``data-initialisation`` flaw)."""

    name: str = "k-means++ on the private records"

    def __call__(self, ctx: HookContext) -> np.ndarray:
        from sklearn.cluster import kmeans_plusplus

        X = _records(ctx)
        k = ctx.config.n_clusters
        return np.stack([kmeans_plusplus(X, k, random_state=int(g.integers(2**31 - 1)))[0]
                         for g in ctx.public_rngs])


@dataclass(frozen=True)
class CEDSOutputRelease(OutputRelease):
    """The one-shot release as published: per replica, the leave-one-out Delta's of its
    converged clustering, CEDS's closed-form covariance at gamma_c(eps K d, delta), one draw.

    The ledger charges eps K d (the budget gamma_c buys) and records, as computed numbers, how
    the covariance meets its own constraints and the claimed (eps, delta)-PDP constraints on
    the same Delta's (:func:`dpkmeans.privacy.colored.constraint_check`)."""

    epsilon: float
    delta: float
    name: str = "one-shot colored noise (CEDS closed form)"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)

    def __call__(self, ctx: HookContext) -> np.ndarray:
        X = _records(ctx)
        C = ctx.centroids
        k, d = C.shape[1], C.shape[2]
        nominal = self.epsilon * k * d
        gamma_c = colored.gamma_ceds(nominal, self.delta)
        gamma_claim = colored.gamma_pdp(self.epsilon, self.delta)
        covariances, own, claimed = [], [], []
        for c in C:
            _, D = local_deltas(X, c)
            S = colored.ceds_covariance(D, gamma_c)
            covariances.append(S)
            own.append(colored.constraint_check(D, S, gamma_c))
            claimed.append(colored.constraint_check(D, S, gamma_claim))
        noise = CovarianceNoise(
            np.stack(covariances), "colored Gaussian (CEDS closed form)",
            sensitivity=float(np.sqrt(gamma_c)), epsilon=nominal, delta=self.delta,
            scale=float(np.sqrt(max(np.trace(covariances[0]), 0))))
        return ctx.release(  # charged, the float sampler recorded as a leak, then drawn
            noise, C, label="stacked centroids + N(0, Sigma), Sigma from the leave-one-out Delta's",
            details={"replicas": ctx.replicas, "gamma_c": gamma_c,
                     "own constraints violated": f"{max(o.fraction for o in own):.1%} (worst "
                                                 f"s2/gamma {max(o.worst for o in own):.3g})",
                     f"(eps={self.epsilon:g}, delta={self.delta:g})-PDP constraints violated":
                         f"{max(c.fraction for c in claimed):.1%} (worst s2/gamma "
                         f"{max(c.worst for c in claimed):.3g})"})


def as_published(n_clusters: int, epsilon: float, delta: float,
                 bounds: tuple[ArrayLike, ArrayLike], *, max_iter: int = MAX_ITER) -> DPLloydConfig:
    """CEDSKMeans: exact Lloyd from k-means++ on the data, then one colored draw on the
    centroids (CEDS's own defaults: ``CEDS_EPSILON``, ``CEDS_DELTA``). Not private; the
    ledger says why (its flaws, :data:`~dpkmeans.papers.colored.flaws.FLAWS`, and the
    check's numbers)."""
    check_positive_int(max_iter, "max_iter")
    eps = check_epsilon(epsilon)
    return DPLloydConfig(
        n_clusters, bounds, schedules.uniform(eps, max_iter), name="ceds-as-published",
        flaws=FLAWS, start=KMeansPlusPlusOnData(), step=NoiseFreeIterations(),
        stop=ShiftBelow(CONVERGED), output=CEDSOutputRelease(eps, delta))


def corrected(n_clusters: int, epsilon: float, delta: float,
              bounds: tuple[ArrayLike, ArrayLike], *, iterations: int = 5,
              sampler: str = "discrete") -> DPLloydConfig:
    """DP-Lloyd with colored Gaussian noise on each cluster's centred (S_j, n_j): the box
    optimum (data-independent Delta set), eps / T and delta / T per iteration."""
    T = check_positive_int(iterations, "iterations")
    dlt = check_delta(delta)
    return DPLloydConfig(n_clusters, bounds, schedules.uniform(epsilon, T), noise="colored",
                         delta=dlt / T, name="colored-dplloyd", sampler=sampler)


def white(n_clusters: int, epsilon: float, delta: float, bounds: tuple[ArrayLike, ArrayLike],
          *, iterations: int = 5, sampler: str = "discrete") -> DPLloydConfig:
    """The same loop with white Gaussian noise (the L2 sensitivity of (S_j, n_j)): the
    comparison at the same (eps, delta)."""
    T = check_positive_int(iterations, "iterations")
    dlt = check_delta(delta)
    return DPLloydConfig(n_clusters, bounds, schedules.uniform(epsilon, T), noise="gaussian",
                         delta=dlt / T, name="white-dplloyd", sampler=sampler)


# -- the functions the paper's record names (its __init__.py) ------------------------------

def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="colored")``: DP-Lloyd with the box-optimal colored noise."""
    return corrected(f.n_clusters, f.epsilon, f.delta, f.bounds, iterations=f.max_iter)


def published_example() -> DPLloydConfig:
    """CEDS as published, k = 3 on the unit square, (1, 1e-5)."""
    return as_published(3, 1.0, 1e-5, (np.zeros(2), np.ones(2)))
