"""One grid cell of an experiment: load a dataset, run R replicas, measure (book Part II).

A sweep (:mod:`dpkmeans.study.sweep`) calls :func:`evaluate` once per cell through a papermill
notebook; the rows it returns are tidy, one per replica, with every parameter and metric.
Replica r depends only on the r-th child of the cell's seed, so any replica of a committed
result can be recomputed on its own (the spot-check tests do exactly that).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import assign, batched_stats, lloyd_reference
from dpkmeans.data import Dataset, gaussian_mixture_dataset, load
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.engine.schedules import su_split
from dpkmeans.papers.registry import current_key
from dpkmeans.papers.su.diffprivlib_env import diffprivlib_centroids
from dpkmeans.papers.su.flaws import FLAWS, DiffprivlibRelease
from dpkmeans.papers.su.variants import ALGORITHMS, dplloyd_impr
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

__all__ = [
    "prepare_dataset",
    "evaluate",
    "diffprivlib_config",
    "diffprivlib_epsilon_factor",
    "centring_comparison",
]

#: Every dataset is scaled to this box by its public bounds; the algorithms see [-1, 1]^d.
BOX = (-1.0, 1.0)


def prepare_dataset(dataset: str, *, paper: str | None = None, n: int | None = None,
                    d: int | None = None, k: int | None = None, data_seed: int = 0,
                    separation: float = 4.0) -> Dataset:
    """The dataset of a cell, clipped and scaled to [-1, 1]^d by its public bounds.

    ``"synthetic"`` draws a Gaussian mixture (n rows, d dims, k components) from ``data_seed``;
    any other name goes through :func:`dpkmeans.data.load` with the paper's columns.
    """
    if dataset == "synthetic":
        if n is None or d is None or k is None:
            raise ValueError("a synthetic dataset needs n, d and k")
        ds = gaussian_mixture_dataset(n, k, d, rng=np.random.default_rng(data_seed),
                                      separation=separation)
    else:
        ds = load(dataset, paper=paper if paper is None else current_key(paper))
    return ds.scaled(BOX)


def diffprivlib_config(k: int, epsilon: float, bounds: tuple[np.ndarray, np.ndarray],
                       n_records: int) -> DPLloydConfig:
    """diffprivlib 0.6.6's ``KMeans`` as an engine configuration with its published flaws
    (chapter 5): DPLloyd-Impr with the swapped split, empty clusters skipped
    (:class:`~dpkmeans.papers.su.flaws.DiffprivlibRelease`), T from the exact record count and
    float64 noise. Its planned ledger (:func:`dpkmeans.engine.planning.plan_ledger`) computes
    what diffprivlib really spends and that it is not private; the book runs diffprivlib
    itself for the centroids."""
    config = dplloyd_impr(k, epsilon, bounds, n_records=n_records)
    return replace(config, name="diffprivlib KMeans (as published)", sampler="continuous",
                   centred=False, step=DiffprivlibRelease(config.step.rho), flaws=FLAWS)


def diffprivlib_epsilon_factor(d: int, rho: float = 0.225) -> float:
    """What diffprivlib's KMeans really spends per declared epsilon:
    (1 + d c) / (d + c).

    diffprivlib 0.6.6 gives the count the per-dimension share and each dimension the
    count's share; with c = cbrt(4 d rho^2) the true spend per iteration is
    eps_count' + d eps_dim' where eps_count' = eps_t / (d + c) and
    eps_dim' = c eps_t / (d + c).
    """
    eps_count, eps_dim = su_split(1.0, d, rho)
    return eps_dim + d * eps_count


def _diffprivlib_centroids(X: np.ndarray, k: int, epsilon: float, seeds: list[int]) -> np.ndarray:
    """diffprivlib KMeans' centroids for each seed, in the comparison environment when
    diffprivlib cannot be imported here (:mod:`dpkmeans.papers.su.diffprivlib_env`)."""
    return diffprivlib_centroids(X, k, epsilon, seeds, BOX)


def evaluate(*, dataset: str, algorithm: str, epsilon: float, k: int, replicas: int, seed: int,
             paper: str | None = None, n: int | None = None, d: int | None = None,
             data_seed: int = 0, separation: float = 4.0, iterations: int = 5,
             first_replica: int = 0) -> pd.DataFrame:
    """Run ``replicas`` replicas of one configuration and return one row per replica.

    Metrics: squared NICV (primary) and Ni et al.'s unsquared variant; the NICV of non-private
    Lloyd from the same initial centroids and the relative NICV against it; F-measure
    (Hungarian and Larsen-Aone, weighted by the reference) and ARI of the private labels
    against that reference's labels. ``first_replica`` skips the first replicas (their
    numbers do not change; used to recompute a few replicas of a committed result).
    """
    ds = prepare_dataset(dataset, paper=paper, n=n, d=d, k=k, data_seed=data_seed,
                         separation=separation)
    X = np.asarray(ds.X)
    bounds = (np.full(X.shape[1], BOX[0]), np.full(X.shape[1], BOX[1]))
    n_public = ds.public_n_records
    start = time.perf_counter()
    if algorithm == "diffprivlib":
        children = np.random.SeedSequence(seed).spawn(first_replica + replicas)[first_replica:]
        seeds = [int(c.generate_state(1)[0]) for c in children]
        centroids = _diffprivlib_centroids(X, k, epsilon, seeds)
        initial, T = None, np.nan
        ledger = plan_ledger(diffprivlib_config(k, epsilon, bounds, X.shape[0]))
    else:
        if algorithm == "dplloyd":
            config = ALGORITHMS[algorithm](k, epsilon, bounds, iterations=iterations)
        elif algorithm == "dplloyd-impr":
            if n_public is None:
                raise ValueError(f"dataset {dataset!r} states no public record count for Su's rule")
            config = ALGORITHMS[algorithm](k, epsilon, bounds, n_records=n_public)
        else:
            raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS) + ['diffprivlib']}, "
                             f"got {algorithm!r}")
        result = run(X, config, seed, replicas=first_replica + replicas)
        centroids = result.centroids[first_replica:]
        initial, T = result.initial_centroids[first_replica:], config.iterations
        ledger = result.ledger
    runtime = time.perf_counter() - start

    rows = {"replica": np.arange(first_replica, first_replica + replicas),
            "n": X.shape[0], "n_public": n_public, "d": X.shape[1], "iterations": T,
            "epsilon_spent": ledger.total().epsilon, "is_private": ledger.is_private,
            **dict(zip(("nicv", "nicv_unsquared"), metrics.nicv_pair(X, centroids)))}
    if initial is not None:
        reference = lloyd_reference(X, initial, T)
        labels_ref, labels_dp = assign(X, reference), assign(X, centroids)
        rows["nicv_nonprivate_same_init"] = metrics.nicv(X, reference)
        rows["relative_nicv"] = metrics.relative_nicv(X, centroids, reference)
        for name, matching in (("f_hungarian", "hungarian"), ("f_larsen_aone", "larsen-aone")):
            rows[name] = [metrics.f_measure(labels_ref[r], labels_dp[r], matching=matching)
                          for r in range(replicas)]
        rows["ari"] = [metrics.adjusted_rand_index(labels_ref[r], labels_dp[r])
                       for r in range(replicas)]
    frame = pd.DataFrame(rows)
    frame["runtime_s"] = runtime / replicas
    return frame


def centring_comparison(dataset: str, *, paper: str, k: int, epsilons: tuple[float, ...],
                        replicas: int, seed: int, interval: tuple[float, float] = (0.0, 1.0),
                        algorithms: tuple[str, ...] = ("dplloyd", "dplloyd-impr")) -> pd.DataFrame:
    """Centred against uncentred sensitivity on the same data, seeds and starts (chapter 5).

    The dataset is scaled by its public bounds to ``interval`` ([0, 1]^d by default, the
    convention of three of the papers), where the origin is a corner of the box: uncentred,
    Delta = d + 1; centred on the midpoint, d / 2 + 1. Both variants of a configuration run
    from the same seed, so they share their initial centroids and their noise *draws* (at
    different scales). One row per (algorithm, epsilon, centred) with the mean squared NICV
    over ``replicas``, its standard error, the L1 sensitivity of (S_j, n_j), T, and the mean
    number of released centroids that no record is nearest to (empty clusters).
    """
    ds = load(dataset, paper=paper).scaled(interval)
    X = np.asarray(ds.X)
    d = X.shape[1]
    bounds = (np.full(d, interval[0]), np.full(d, interval[1]))
    rows = []
    for algorithm in algorithms:
        for eps in epsilons:
            if algorithm == "dplloyd-impr":
                base = ALGORITHMS[algorithm](k, eps, bounds, n_records=ds.public_n_records)
            else:
                base = ALGORITHMS[algorithm](k, eps, bounds)
            for centred in (False, True):
                config = replace(base, centred=centred)
                result = run(X, config, seed, replicas=replicas)
                values = metrics.nicv(X, result.centroids)
                _, counts = batched_stats(X, result.centroids)
                rows.append({"dataset": dataset, "algorithm": algorithm, "epsilon": eps,
                             "centred": centred, "iterations": config.iterations,
                             "delta_1": lloyd_query_sensitivity(bounds, centred=centred).joint,
                             "nicv_mean": float(np.mean(values)),
                             "nicv_se": float(np.std(values, ddof=1) / np.sqrt(replicas)),
                             "empty_clusters": float((counts == 0).sum(axis=1).mean())})
    return pd.DataFrame(rows)
