"""The experiment of Ravi, Scaglione and Peisert (2021; their Fig. 2), at ``DRAWS``
independent draws a point, and the corrected mechanism beside it (book chapter 9).

A point is an algorithm on a dataset at (epsilon, delta), K = 4. Two families:

**One-shot** (the paper's setting: "the proposed method is not iterative"). The dataset is
clustered once without privacy (scikit-learn's KMeans, as CEDS), and noise is added to those
K centroids ``DRAWS`` times. The covariances come from the leave-one-out Delta's of this
clustering (:func:`.variants.local_deltas`), the paper's local sensitivity, so *none* of these
is private, whatever its constraints say (a local sensitivity); the ledger of the engine's
as-published configuration says so, and the rows carry ``is_private = False``.

- ``ceds``: the published closed form (Lemma 5 as CEDS codes it) at gamma_c(eps K d, delta);
- ``ceds_exact_gamma``: the same closed form at gamma*(eps, delta): its own error at the
  privacy level the others meet;
- ``sdp_local``: the optimal covariance on the same Delta's at gamma*(eps, delta) (the paper's
  problem, solved: cvxpy + Clarabel, every constraint post-checked);
- ``white_local``: white noise on the same Delta's, sigma^2 = max ||Delta||^2 / gamma*;
- ``analytic_local``: white noise with the analytic-Gaussian sigma (Balle and Wang 2018) for
  the same L2 sensitivity (an (eps, delta)-DP calibration, weaker than PDP).

**DP-Lloyd** (the corrected mechanism, (eps, delta)-DP): ``ITERATIONS`` iterations from the
public sphere-packing start, eps / T and delta / T each, noise on every cluster's centred
(S_j, n_j):

- ``colored_dplloyd``: the box optimum (:func:`dpkmeans.privacy.colored.box_covariance`), discrete
  sampler;
- ``white_dplloyd``: white Gaussian noise, discrete sampler (the same zCDP calibration);
- ``white_analytic_dplloyd``: white Gaussian noise with the analytic calibration, numpy's
  sampler (the papers' floating-point leak, recorded).

Metrics per draw, summarised per point: the centroid MSE against the non-private centroids
(``mse``; one-shot: the clustering the noise is added to; DP-Lloyd: non-private Lloyd from the
same start for the same T, matched by index), the adjusted Rand index of the labels against
that reference's (``ari``), squared NICV in the [-1, 1] scaling (``nicv``) and, on the
synthetic mixtures, the MSE against the true centres after the best matching (``mse_true``).
All of them are measured in the dataset's space (``marketing_units``: the common-factor one).
One-shot rows also carry the constraint check of their covariance on the local Delta's
against gamma*(eps, delta) (fraction violated, worst s^2 / gamma*, worst Pr(|L| > eps)) and,
generously, against gamma*(eps K d, delta).

A point's numbers depend only on the base seed and the point (:func:`point_seed`); a dataset's
clustering and covariances on the base seed and the dataset.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import assign, lloyd_reference
from dpkmeans.data import load
from dpkmeans.data.scaling import scale_to_interval
from dpkmeans.data.synthetic import gaussian_mixture_dataset
from dpkmeans.engine.loop import run
from dpkmeans.papers.balcan.algorithm import BalcanClustering
from dpkmeans.papers.colored.variants import corrected, local_deltas, white
from dpkmeans.privacy import colored
from dpkmeans.privacy.mechanisms import gaussian_sigma_analytic
from dpkmeans.study.parts import part_block
from dpkmeans.study.shared import stable_seed, summarise
from dpkmeans.validation import check_positive_int

__all__ = [
    "DATASETS",
    "K",
    "EPSILONS",
    "DELTAS",
    "DRAWS",
    "ITERATIONS",
    "ONE_SHOT",
    "DP_LLOYD",
    "OUTSIDE",
    "OUTSIDE_DATASETS",
    "OUTSIDE_DRAWS",
    "ALGORITHMS",
    "Point",
    "Prepared",
    "point_seed",
    "prepare",
    "run_point",
    "points",
    "evaluate_cell",
]

#: The paper's dataset, twice, and two Gaussian mixtures whose true centres are known:
#: name -> (registry name, or None for a mixture; rows, dimension of a mixture).
#: ``marketing`` maps every attribute's public range onto [-1, 1] (the box is a cube);
#: ``marketing_units`` keeps the attributes' relative units (one common factor maps the widest
#: range onto [-1, 1]), so the box is very uneven: where colored noise can gain (chapter 9).
DATASETS: dict[str, tuple[str | None, int, int]] = {
    "marketing": ("marketing_campaign", 0, 0),
    "marketing_units": ("marketing_campaign", 0, 0),
    "mixture_d2": (None, 2000, 2),
    "mixture_d8": (None, 2000, 8),
}
#: The paper's K ("four clusters ... using the elbow method").
K = 4
#: The paper's (eps, delta) pairs are lost; this grid spans CEDS's default (0.1, 0.1), its
#: README's (0.1, 1e-5) and the range where gamma_c stops being conservative.
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
DELTAS = (1e-5, 1e-3, 0.1)
#: Independent draws per point (the issue: at least 1000).
DRAWS = 1000
#: DP-Lloyd iterations of the corrected family.
ITERATIONS = 5
ONE_SHOT = ("ceds", "ceds_exact_gamma", "sdp_local", "white_local", "analytic_local")
DP_LLOYD = ("colored_dplloyd", "white_dplloyd", "white_analytic_dplloyd")
#: The comparator of the paper's claim 2, Balcan et al. (2017) (book chapter 12): pure
#: epsilon-DP, so it runs at each point's epsilon and its delta goes unused; only on the
#: paper's dataset, and with fewer draws (each fit builds and searches its own candidates).
OUTSIDE = ("balcan",)
OUTSIDE_DATASETS = ("marketing", "marketing_units")
OUTSIDE_DRAWS = 200
ALGORITHMS = ONE_SHOT + DP_LLOYD + OUTSIDE
#: Mixtures: K components 4 std apart, 4 std of public margin (their generator's parameters).
MIXTURE_SEPARATION = 4.0


@dataclass(frozen=True)
class Point:
    """One point: an algorithm at (epsilon, delta)."""

    algorithm: str
    epsilon: float
    delta: float


@dataclass(frozen=True, eq=False)
class Prepared:
    """A dataset in [-1, 1]^d with its non-private clustering and the one-shot covariances
    at gamma = 1 (every one of them scales as 1 / gamma: solve once, scale per point)."""

    name: str
    X: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray]  # the public box of X
    true_centres: np.ndarray | None
    centroids: np.ndarray  # (K, d): the clustering the one-shot noise is added to
    labels: np.ndarray
    deltas: np.ndarray  # (N, K d): its leave-one-out Delta's
    unit: dict[str, np.ndarray]  # covariance at gamma = 1 of "ceds", "sdp", "white"
    sdp: colored.CovarianceSolution

    @property
    def max_delta(self) -> float:
        return float(np.sqrt(np.einsum("ij,ij->i", self.deltas, self.deltas).max()))


def point_seed(base_seed: int, dataset: str, point: Point) -> int:
    """A 63-bit seed from the study's base seed, the dataset and the point."""
    return stable_seed(base_seed, {"paper": "colored", "dataset": dataset, **asdict(point)})


def _load(dataset: str, base_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The records, the half-widths of their public box centred on 0, and the true centres
    (mixtures): every attribute's public range on [-1, 1], except ``marketing_units``."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {tuple(DATASETS)}, got {dataset!r}")
    registry_name, n, d = DATASETS[dataset]
    if registry_name is not None:
        raw = load(registry_name, paper="colored")
        X = np.asarray(raw.scaled().X, dtype=float)
        half = np.ones(X.shape[1])
        if dataset == "marketing_units":
            widths = raw.bounds[:, 1] - raw.bounds[:, 0]
            half = widths / widths.max()
        return X * half, half, None
    rng = np.random.default_rng(stable_seed(base_seed, {"paper": "colored", "mixture": dataset}))
    raw = gaussian_mixture_dataset(n, K, d, rng=rng, separation=MIXTURE_SEPARATION)
    centres, _ = scale_to_interval(np.asarray(raw.metadata["true_centers"]), raw.bounds,
                                   (-1.0, 1.0))
    return np.asarray(raw.scaled().X, dtype=float), np.ones(d), np.asarray(centres)


def prepare(dataset: str, *, base_seed: int) -> Prepared:
    """Load, cluster without privacy (KMeans, 10 starts, seeded), build the Delta's and solve
    the one-shot covariances once at gamma = 1."""
    from sklearn.cluster import KMeans

    X, half, true_centres = _load(dataset, base_seed)
    seed = stable_seed(base_seed, {"paper": "colored", "clustering": dataset})
    km = KMeans(K, n_init=10, random_state=seed % 2**31).fit(X)
    labels, D = local_deltas(X, km.cluster_centers_)
    centroids = np.stack([X[labels == j].mean(axis=0) for j in range(K)])
    sdp = colored.optimal_covariance(D, 1.0, blocks=K)
    unit = {"ceds": colored.ceds_covariance(D, 1.0), "sdp": sdp.covariance,
            "white": colored.white_covariance(D, 1.0)}
    return Prepared(dataset, X, (-half, half), true_centres, centroids, labels, D, unit, sdp)


# --- metrics ---------------------------------------------------------------------------------
_PERMUTATIONS = np.array(list(itertools.permutations(range(K))))


def _matched_mse(C: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per replica, the MSE of C (R, K, d) against ``truth`` (K, d) under the best matching."""
    cost = ((C[:, :, None, :] - truth[None, None, :, :]) ** 2).sum(axis=3)  # (R, K, K)
    totals = cost[:, np.arange(K)[None, :], _PERMUTATIONS].sum(axis=2)  # (R, K!)
    return totals.min(axis=1) / truth.size


def _scores(prep: Prepared, C: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    """mse / ari / nicv (and mse_true) summaries of the released centroids C (R, K, d)
    against the non-private ``reference``, one (K, d) or one per replica (R, K, d)."""
    X = prep.X
    mse = ((C - reference) ** 2).mean(axis=(1, 2))
    ari = metrics.adjusted_rand_indices(assign(X, reference), assign(X, C))
    out = {**summarise(mse, 1, "mse"), **summarise(ari, 1, "ari"),
           **summarise(np.asarray(metrics.nicv(X, C)), 1, "nicv"),
           "nicv_reference": float(np.mean(metrics.nicv(X, reference)))}
    if prep.true_centres is not None:
        out.update(summarise(_matched_mse(C, prep.true_centres), 1, "mse_true"))
    return out


# --- the two families ------------------------------------------------------------------------
def _one_shot_covariance(prep: Prepared, point: Point) -> tuple[np.ndarray, float, float]:
    """(covariance, the gamma it was calibrated to, the epsilon it nominally spends)."""
    eps, delta, algorithm = point.epsilon, point.delta, point.algorithm
    gamma = colored.gamma_pdp(eps, delta)
    if algorithm == "ceds":
        nominal = eps * prep.deltas.shape[1]  # CEDS: eps K d
        g = colored.gamma_ceds(nominal, delta)
        return prep.unit["ceds"] / g, g, nominal
    if algorithm == "ceds_exact_gamma":
        return prep.unit["ceds"] / gamma, gamma, eps
    if algorithm == "sdp_local":
        return prep.unit["sdp"] / gamma, gamma, eps
    if algorithm == "white_local":
        return prep.unit["white"] / gamma, gamma, eps
    if algorithm == "analytic_local":
        sigma = gaussian_sigma_analytic(prep.max_delta, eps, delta)
        m = prep.deltas.shape[1]
        return np.eye(m) * sigma**2, prep.max_delta**2 / sigma**2, eps
    raise ValueError(f"one-shot algorithm must be one of {ONE_SHOT}, got {algorithm!r}")


def _check_columns(prep: Prepared, cov: np.ndarray, point: Point) -> dict[str, object]:
    """The constraint check on the local Delta's, at the claimed (eps, delta) and generously
    at (eps K d, delta)."""
    eps, delta = point.epsilon, point.delta
    m = prep.deltas.shape[1]
    claimed = colored.constraint_check(prep.deltas, cov, colored.gamma_pdp(eps, delta))
    generous = colored.constraint_check(prep.deltas, cov, colored.gamma_pdp(eps * m, delta))
    return {"violated_fraction": claimed.fraction, "worst_ratio": claimed.worst,
            "worst_tail": claimed.worst_tail(eps),
            "pdp_on_local_deltas": claimed.violated == 0,  # s^2 <= gamma* to the tolerance
            "violated_fraction_eps_kd": generous.fraction,
            "worst_tail_eps_kd": generous.worst_tail(eps * m)}


def _run_one_shot(prep: Prepared, point: Point, seed: int, draws: int) -> dict[str, object]:
    cov, gamma, nominal = _one_shot_covariance(prep, point)
    rng = np.random.default_rng(seed)
    noise = colored.draw_colored(cov, rng, size=draws).reshape(draws, *prep.centroids.shape)
    C = prep.centroids[None] + noise
    return {"family": "one-shot", "gamma": gamma, "trace": float(np.trace(cov)),
            "epsilon_spent": nominal, "is_private": False,
            **_scores(prep, C, prep.centroids), **_check_columns(prep, cov, point)}


def _dp_lloyd_config(prep: Prepared, point: Point):
    if point.algorithm == "colored_dplloyd":
        return corrected(K, point.epsilon, point.delta, prep.bounds, iterations=ITERATIONS)
    if point.algorithm == "white_dplloyd":
        return white(K, point.epsilon, point.delta, prep.bounds, iterations=ITERATIONS)
    if point.algorithm == "white_analytic_dplloyd":
        return white(K, point.epsilon, point.delta, prep.bounds, iterations=ITERATIONS,
                     sampler="continuous")
    raise ValueError(f"DP-Lloyd algorithm must be one of {DP_LLOYD}, got {point.algorithm!r}")


def _run_dp_lloyd(prep: Prepared, point: Point, seed: int, draws: int) -> dict[str, object]:
    result = run(prep.X, _dp_lloyd_config(prep, point), seed, replicas=draws)
    # each replica's own (public, random) start: non-private Lloyd from it, T steps
    reference = lloyd_reference(prep.X, result.initial_centroids, ITERATIONS)
    spent = np.asarray(result.spent)
    return {"family": "dp-lloyd", "gamma": float("nan"), "trace": float("nan"),
            "epsilon_spent": float(spent.max()), "is_private": result.ledger.is_private,
            **_scores(prep, result.centroids, np.asarray(reference))}


def _run_outside(prep: Prepared, point: Point, seed: int, draws: int) -> dict[str, object]:
    """Balcan et al. (2017) as ``DPKMeans(algorithm="balcan")`` builds it, at the point's epsilon
    (pure DP), with the dataset's record count as public (the registry states it; a mixture's
    is a generator parameter). Its centroids come in no particular order, so its MSE is
    against the non-private centroids under the best matching; its NICV needs none."""
    config = BalcanClustering(K, prep.bounds, point.epsilon, n_records=prep.X.shape[0])
    result = run(prep.X, config, seed, replicas=draws)
    scores = _scores(prep, result.centroids, prep.centroids)
    scores.update(summarise(_matched_mse(result.centroids, prep.centroids), 1, "mse"))
    return {"family": "outside", "gamma": float("nan"), "trace": float("nan"),
            "epsilon_spent": float(np.max(result.spent)), "is_private": result.ledger.is_private,
            **scores}


def run_point(prep: Prepared, point: Point, *, base_seed: int,
              draws: int = DRAWS) -> dict[str, object]:
    """One point's summary row (``draws`` independent draws or runs; at most
    :data:`OUTSIDE_DRAWS` for the outside comparator)."""
    draws = check_positive_int(draws, "draws")
    seed = point_seed(base_seed, prep.name, point)
    start = time.perf_counter()
    if point.algorithm in ONE_SHOT:
        row = _run_one_shot(prep, point, seed, draws)
    elif point.algorithm in DP_LLOYD:
        row = _run_dp_lloyd(prep, point, seed, draws)
    elif point.algorithm in OUTSIDE:
        draws = min(draws, OUTSIDE_DRAWS)
        row = _run_outside(prep, point, seed, draws)
    else:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {point.algorithm!r}")
    N, d = prep.X.shape
    return {"dataset": prep.name, **asdict(point), "k": K, "N": N, "d": d, "draws": draws,
            "point_seed": seed, **row, "run_s": (time.perf_counter() - start) / draws}


def points(epsilons: tuple[float, ...] = EPSILONS, deltas: tuple[float, ...] = DELTAS,
           algorithms: tuple[str, ...] = ALGORITHMS) -> list[Point]:
    """Every algorithm at every (epsilon, delta) of the grid."""
    unknown = set(algorithms) - set(ALGORITHMS)
    if unknown:
        raise ValueError(f"unknown algorithms {sorted(unknown)}; choose from {ALGORITHMS}")
    return [Point(a, float(e), float(dl)) for a in algorithms for e in epsilons for dl in deltas]


def evaluate_cell(dataset: str, *, base_seed: int, draws: int = DRAWS,
                  epsilons: tuple[float, ...] = EPSILONS, deltas: tuple[float, ...] = DELTAS,
                  algorithms: tuple[str, ...] = ALGORITHMS, part: int = 0,
                  parts: int = 1) -> pd.DataFrame:
    """Every point of one dataset (one sweep cell), one row per point; the SDP's solve is
    recorded in every row (status, rounds, rescale, seconds). With ``parts`` > 1 only the
    ``part``-th block of the points (:func:`dpkmeans.study.parts.part_block`); each part
    solves the SDP again (deterministic: the same solution)."""
    todo = part_block([p for p in points(tuple(epsilons), tuple(deltas), tuple(algorithms))
                       if p.algorithm not in OUTSIDE or dataset in OUTSIDE_DATASETS],
                      part, parts)
    prep = prepare(dataset, base_seed=base_seed)
    sdp = {"sdp_status": prep.sdp.status, "sdp_rounds": prep.sdp.rounds,
           "sdp_rescaled": prep.sdp.rescaled, "sdp_seconds": prep.sdp.seconds}
    return pd.DataFrame([{**run_point(prep, p, base_seed=base_seed, draws=draws), **sdp}
                         for p in todo])
