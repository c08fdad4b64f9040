"""The outside algorithms on their home ground (book: synthesis chapter, "Beyond the five
papers").

The benchmark that Google's differential-privacy library publishes for its LSH clustering
(Chang and Kamath 2021) compares it with Balcan et al. (2017) and with diffprivlib's DP-Lloyd
on a synthetic mixture of 64 Gaussians in 100 dimensions with 10^5 points, at epsilon 1 and
delta 1e-6, for k in {2, 4, 8, 16, 32, 64} (:data:`GOOGLE_KS`), 20 runs each, by the
normalised k-means loss (the mean squared distance of a record to its nearest centre) against
non-private k-means++. This module re-runs that setting, at the same k (:data:`KS`), with the
library's generator (:func:`dpkmeans.data.gaussian_mixture_dataset`) and the book's corrected
algorithms: ``lsh``, ``balcan`` and the leaderboard's ``dplloyd-impr``, each as
``DPKMeans(algorithm=...)`` runs it.

One difference is deliberate and stated in the chapter: every algorithm here gets the same
public information, the box of the generator's public bounds scaled to [0, 1]^100, so the LSH
tree's radius is the box's half-diagonal (5) rather than the data's exact radius, which the
library's own benchmark gave it.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, FitInputs
from dpkmeans.compute import metrics
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine.loop import run
from dpkmeans.study.shared import stable_seed, summarise, unit_box
from dpkmeans.validation import check_positive_int

__all__ = ["ALGORITHMS", "COMPONENTS", "DELTA", "DIMENSION", "EPSILON", "GOOGLE_KS", "KS",
           "N_RECORDS", "REFERENCE", "RUNS", "algorithm_row", "evaluate_cell", "mixture",
           "one_centre_loss", "reference_losses", "reference_row"]

#: The private algorithms compared (the book's corrected ones, by catalogue name).
ALGORITHMS: tuple[str, ...] = ("lsh", "balcan", "dplloyd-impr")
#: The non-private reference: scikit-learn's k-means++ with Lloyd's iterations.
REFERENCE = "k-means++ (not private)"
#: The k of the plots of Google's benchmark.
GOOGLE_KS = (2, 4, 8, 16, 32, 64)
#: The k this benchmark runs (``notebooks/sweeps/home_ground.yaml``): all of Google's.
KS = GOOGLE_KS
N_RECORDS, DIMENSION, COMPONENTS = 100_000, 100, 64
EPSILON, DELTA = 1.0, 1e-6
RUNS = 20


def mixture(base_seed: int) -> np.ndarray:
    """The 64-component mixture (10^5 records in 100 dimensions), scaled from the generator's
    public bounds to [0, 1]^100."""
    rng = np.random.default_rng(stable_seed(base_seed, {"study": "home_ground", "data": True}))
    data = gaussian_mixture_dataset(N_RECORDS, COMPONENTS, DIMENSION, rng=rng)
    return np.asarray(data.scaled((0.0, 1.0)).X, dtype=float)


def one_centre_loss(X: np.ndarray) -> float:
    """The loss of one centre at the data's mean (the records' mean squared distance to it):
    what any k centres must beat to explain more than the data's mean does."""
    X = np.asarray(X, dtype=float)
    return float(metrics.nicv(X, X.mean(axis=0)[None, :]))


def reference_losses(X: np.ndarray, k: int, base_seed: int, runs: int) -> np.ndarray:
    """Non-private k-means++ (scikit-learn, one start each, seeded): each run's loss."""
    from sklearn.cluster import KMeans

    out = np.empty(runs)
    for r in range(runs):
        seed = stable_seed(base_seed, {"study": "home_ground", "reference": k, "run": r})
        km = KMeans(k, n_init=1, random_state=seed % 2**31).fit(X)
        out[r] = float(metrics.nicv(X, km.cluster_centers_))
    return out


def reference_row(X: np.ndarray, k: int, base_seed: int, runs: int) -> dict[str, object]:
    """The non-private reference's row at ``k`` (its ratio to itself is 1)."""
    start = time.perf_counter()
    losses = reference_losses(X, k, base_seed, runs)
    return {"k": k, "algorithm": REFERENCE, "N": N_RECORDS, "d": DIMENSION,
            "components": COMPONENTS, "replicas": runs, **summarise(losses, 1, "loss"),
            "epsilon": float("inf"), "delta": 0.0, "is_private": False,
            "epsilon_spent_max": 0.0, "run_s": (time.perf_counter() - start) / runs}


def algorithm_row(X: np.ndarray, k: int, name: str, base_seed: int,
                  runs: int) -> dict[str, object]:
    """Algorithm ``name``'s row at ``k``: ``runs`` independent runs as ``DPKMeans`` builds it
    (the record count public), their normalised loss and what they spent."""
    choice = CATALOGUE[name]
    delta = DELTA if choice.needs_delta else None
    config = choice.build(FitInputs(k, EPSILON, unit_box(DIMENSION), max_iter=5,
                                    n_records=N_RECORDS, delta=delta))
    seed = stable_seed(base_seed, {"study": "home_ground", "algorithm": name, "k": k})
    start = time.perf_counter()
    result = run(X, config, seed, replicas=runs)
    seconds = (time.perf_counter() - start) / runs
    losses = np.asarray(metrics.nicv(X, result.centroids))
    return {"k": k, "algorithm": name, "N": N_RECORDS, "d": DIMENSION,
            "components": COMPONENTS, "replicas": runs, **summarise(losses, 1, "loss"),
            "epsilon": EPSILON, "delta": delta or 0.0, "is_private": result.ledger.is_private,
            "epsilon_spent_max": float(np.max(result.spent)), "run_s": seconds}


def evaluate_cell(k: int, *, base_seed: int, runs: int = RUNS,
                  algorithms: tuple[str, ...] = ALGORITHMS) -> pd.DataFrame:
    """Every algorithm (and the non-private reference) at one k: ``runs`` independent runs
    each, their normalised loss (mean squared distance to the nearest centre, on [0, 1]^100)
    and its ratio to the reference's mean."""
    runs = check_positive_int(runs, "runs")
    X = mixture(base_seed)
    rows = pd.DataFrame([reference_row(X, k, base_seed, runs),
                         *(algorithm_row(X, k, name, base_seed, runs) for name in algorithms)])
    rows["ratio_to_reference"] = rows["loss_mean"] / rows["loss_mean"].iloc[0]
    return rows
