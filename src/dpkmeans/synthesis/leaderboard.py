"""The leaderboard (book: synthesis chapter): every corrected algorithm of the book
(:data:`dpkmeans.api.catalogue.CATALOGUE`) on every numeric dataset of the papers, on one epsilon
grid, with the same number of runs and the same non-private reference.

Each algorithm runs as ``DPKMeans(algorithm=...)`` runs it: its own initialisation (part of
the algorithm), its own rule for T, the public record count where its rule reads one. Every
point reports the relative squared NICV against non-private Lloyd from shared sphere-packing
starts, (NICV_dp - NICV_lloyd) / NICV_lloyd (book chapter 4), with a 95% interval over
its independent runs. Data are scaled from their public bounds to [0, 1]^d, as in the APDP
study whose cases (dataset, k) this reuses.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, FitInputs
from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.apdp import study as apdp_study
from dpkmeans.study.shared import Point, shared_initial_centroids, stable_seed, summarise, unit_box
from dpkmeans.validation import check_positive_int

__all__ = [
    "ALGORITHMS",
    "CASES",
    "DELTA",
    "EPSILONS",
    "REFERENCE_STARTS",
    "RUNS",
    "Point",
    "evaluate_cell",
    "point_seed",
    "reference_nicv",
    "run_point",
]

#: Every corrected algorithm, in the catalogue's order.
ALGORITHMS: tuple[str, ...] = tuple(CATALOGUE)
#: The numeric datasets of the papers with the k the papers used (one k per dataset).
CASES: dict[str, tuple[str, int, str]] = {
    case: spec for case, spec in apdp_study.CASES.items() if case != "blood_k2"}
#: One grid for everyone, from the papers' smallest epsilon to the largest.
EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
#: The delta of the one (epsilon, delta) algorithm, "colored" (the others are pure).
DELTA = 1e-6
#: Independent runs per point.
RUNS = 50
#: Sphere-packing starts of the non-private reference (its best-of is not used: the mean).
REFERENCE_STARTS = 20
REFERENCE_ITERATIONS = apdp_study.REFERENCE_ITERATIONS


def point_seed(base_seed: int, point: Point) -> int:
    return stable_seed(base_seed, {"study": "leaderboard", **asdict(point)})


def config_of(point: Point, d: int, n_records: int) -> DPLloydConfig:
    """The algorithm's configuration as the estimator builds it (public N given)."""
    if point.case not in CASES:
        raise ValueError(f"case must be one of {sorted(CASES)}, got {point.case!r}")
    if point.algorithm not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {point.algorithm!r}")
    choice = CATALOGUE[point.algorithm]
    k = CASES[point.case][1]
    return choice.build(FitInputs(k, point.epsilon, unit_box(d), max_iter=5, n_records=n_records,
                                  delta=DELTA if choice.needs_delta else None))


def reference_nicv(X: np.ndarray, case: str, base_seed: int,
                   starts: int = REFERENCE_STARTS) -> np.ndarray:
    """Non-private Lloyd's squared NICV from ``starts`` shared sphere-packing starts."""
    k, d = CASES[case][1], X.shape[1]
    config = DPLloydConfig(k, unit_box(d), [1.0], start=PublicStart(sphere_packing))
    seq = np.random.SeedSequence(stable_seed(base_seed, {"study": "leaderboard",
                                                          "reference": case}))
    first = shared_initial_centroids(config, starts, 1, seq)
    return np.asarray(metrics.nicv(X, lloyd_reference(X, first, REFERENCE_ITERATIONS)))


def run_point(X: np.ndarray, n_records: int, point: Point, reference: float, *,
              base_seed: int, runs: int = RUNS) -> dict[str, object]:
    """One point's summary row: relative squared NICV against ``reference`` (the mean
    non-private NICV), its 95% interval over ``runs`` independent runs, and what was spent."""
    runs = check_positive_int(runs, "runs")
    N, d = X.shape
    config = config_of(point, d, n_records)
    seed = point_seed(base_seed, point)
    start = time.perf_counter()
    result = run(X, config, seed, replicas=runs)
    runtime = time.perf_counter() - start
    relative = (np.asarray(metrics.nicv(X, result.centroids)) - reference) / reference
    spent = np.asarray(result.spent)
    choice = CATALOGUE[point.algorithm]
    return {
        "case": point.case, "dataset": CASES[point.case][0], "k": CASES[point.case][1],
        "algorithm": point.algorithm, "epsilon": point.epsilon,
        "delta": DELTA if choice.needs_delta else 0.0, "neighbour": choice.neighbour,
        "N": N, "d": d, "n_records": n_records, "replicas": runs, "point_seed": seed,
        "iterations": config.iterations, "nicv_reference": reference,
        **summarise(relative, 1, "rel_nicv"),
        "epsilon_spent_max": float(spent.max()), "is_private": result.ledger.is_private,
        "run_s": runtime / runs,
    }


def evaluate_cell(case: str, *, base_seed: int, runs: int = RUNS,
                  epsilons: tuple[float, ...] = EPSILONS,
                  algorithms: tuple[str, ...] = ALGORITHMS) -> pd.DataFrame:
    """Every algorithm at every epsilon on one case (one sweep cell)."""
    public = apdp_study.load_public(case)
    X = np.asarray(public.X)
    n_records = public.public_n_records
    if n_records is None:
        raise ValueError(f"case {case!r} states no public record count")
    reference = float(reference_nicv(X, case, base_seed).mean())
    return pd.DataFrame([run_point(X, n_records, Point(case, a, float(e)), reference,
                                   base_seed=base_seed, runs=runs)
                         for a in algorithms for e in epsilons])
