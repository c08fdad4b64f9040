"""FastLloyd on its home ground (book: synthesis chapter, "FastLloyd").

Diaa, Humphries and Kerschbaum (2025) say their radius and relative updates help most at higher
dimension and larger k; their ablation grid is k, d in {2, 4, 8, 16} at epsilon 0.1 on
synthetic sets of 10^4 records whose generator is not public. This module builds that setting
from public definitions: a Gaussian mixture of k components from the library's generator
(:func:`dpkmeans.data.gaussian_mixture_dataset`), N = 10^4 records, scaled from the
generator's public bounds to [-1, 1]^d (FastLloyd's domain), for k in :data:`KS` and d in
:data:`DIMENSIONS`, at each epsilon of :data:`EPSILONS` and delta = 1e-6.

The contenders (:data:`CONTENDERS`): ``fastlloyd`` (Gaussian, (epsilon, delta)), its pure form
``fastlloyd-laplace``, Su et al.'s ``dplloyd-impr`` (pure) and its Gaussian twin at (epsilon,
delta), and ``lsh`` calibrated by tight composition; each is built as
:func:`dpkmeans.api.catalogue.build_at` builds it, with the public record count
(:func:`config_of`). The reference is non-private Lloyd from shared sphere-packing starts, as
on the book's leaderboard (synthesis chapter). The metric is NICV (the mean squared distance of a
record to its nearest released centre) and its ratio to the reference's mean, each with a 95%
interval over independent runs.

Every draw derives its seed from the base seed and the point alone (:func:`data_seed`,
:func:`reference_seed`, :func:`point_seed`), so one point can be recomputed without its cell.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, FitInputs, build_at
from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.apdp.study import REFERENCE_ITERATIONS
from dpkmeans.study.shared import shared_initial_centroids, stable_seed, summarise
from dpkmeans.synthesis.leaderboard import Contender
from dpkmeans.validation import check_positive_int

__all__ = ["CONTENDERS", "DELTA", "DIMENSIONS", "EPSILONS", "KS", "N_RECORDS", "REFERENCE",
           "REFERENCE_ITERATIONS", "REFERENCE_STARTS", "RUNS", "STUDY", "box",
           "config_of", "contender_of", "data_seed", "evaluate_cell", "mixture", "point_seed",
           "rebuild_row", "reference_nicv", "reference_row", "reference_seed", "run_point"]

#: The study's name in every seed key.
STUDY = "fastlloyd_home"
#: The numbers of clusters (the paper's ablation grid), each also the mixture's components.
KS = (2, 4, 8, 16)
#: The dimensions: the ablation grid's and one above it.
DIMENSIONS = (2, 4, 8, 16, 32)
#: The budgets: the ablation's 0.1 and 1.
EPSILONS = (0.1, 1.0)
#: The delta of the (epsilon, delta) contenders (the pure ones run at delta = 0).
DELTA = 1e-6
#: The number of records (public).
N_RECORDS = 10_000
#: Independent runs per point.
RUNS = 20
#: The non-private reference's name in the results.
REFERENCE = "lloyd (not private)"
#: The reference's sphere-packing starts (its mean is the reference; the leaderboard's number).
REFERENCE_STARTS = 20


#: The contenders, FastLloyd's two forms first.
CONTENDERS: tuple[Contender, ...] = (
    Contender("fastlloyd", "gaussian", DELTA),
    Contender("fastlloyd-laplace", "pure", 0.0),
    Contender("dplloyd-impr", "pure", 0.0),
    Contender("dplloyd-impr", "gaussian", DELTA),
    Contender("lsh", "gaussian", DELTA),
)


def contender_of(algorithm: str, form: str) -> Contender:
    """The contender of :data:`CONTENDERS` that runs ``algorithm`` in ``form``."""
    for contender in CONTENDERS:
        if (contender.algorithm, contender.form) == (algorithm, form):
            return contender
    raise ValueError(f"no contender runs {algorithm!r} in form {form!r}; the contenders are "
                     f"{[c.name for c in CONTENDERS]}")


def config_of(contender: Contender, k: int, epsilon: float, d: int,
              n_records: int) -> object:
    """The contender's configuration at (epsilon, its delta) on [-1, 1]^d with ``n_records``
    public records, as :func:`dpkmeans.api.catalogue.build_at` builds it."""
    inputs = FitInputs(k, float(epsilon), box(d), max_iter=5, n_records=n_records)
    return build_at(CATALOGUE[contender.algorithm], inputs, contender.delta,
                    form=contender.form)


def box(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public box [-1, 1]^d (FastLloyd's domain)."""
    d = check_positive_int(d, "d")
    return -np.ones(d), np.ones(d)


def data_seed(base_seed: int, k: int, d: int) -> int:
    """The seed of the mixture at (k, d)."""
    return stable_seed(base_seed, {"study": STUDY, "data": True, "k": k, "d": d})


def reference_seed(base_seed: int, k: int, d: int) -> int:
    """The seed of the reference's sphere-packing starts at (k, d)."""
    return stable_seed(base_seed, {"study": STUDY, "reference": True, "k": k, "d": d})


def point_seed(base_seed: int, k: int, d: int, epsilon: float,
               contender: Contender) -> int:
    """The seed of one point: a contender at (k, d, epsilon)."""
    return stable_seed(base_seed, {"study": STUDY, "k": k, "d": d, "epsilon": float(epsilon),
                                   "algorithm": contender.algorithm, "form": contender.form,
                                   "delta": float(contender.delta)})


def mixture(k: int, d: int, base_seed: int, n_records: int = N_RECORDS) -> np.ndarray:
    """A mixture of ``k`` Gaussians in ``d`` dimensions (the library's generator), ``n_records``
    records scaled from the generator's public bounds to [-1, 1]^d."""
    rng = np.random.default_rng(data_seed(base_seed, k, d))
    data = gaussian_mixture_dataset(check_positive_int(n_records, "n_records"), k, d, rng=rng)
    return np.asarray(data.scaled((-1.0, 1.0)).X, dtype=float)


def reference_nicv(X: np.ndarray, k: int, base_seed: int,
                   starts: int = REFERENCE_STARTS) -> np.ndarray:
    """Non-private Lloyd's NICV from ``starts`` shared sphere-packing starts in the box (one
    value per start; the leaderboard's reference)."""
    d = X.shape[1]
    config = DPLloydConfig(k, box(d), [1.0], start=PublicStart(sphere_packing))
    seq = np.random.SeedSequence(reference_seed(base_seed, k, d))
    first = shared_initial_centroids(config, check_positive_int(starts, "starts"), 1, seq)
    return np.asarray(metrics.nicv(X, lloyd_reference(X, first, REFERENCE_ITERATIONS)))


def _row(X: np.ndarray, k: int, name: str, nicv: np.ndarray,
         reference: float) -> dict[str, object]:
    """The columns every row has: the point, its NICV and its ratio to ``reference``."""
    return {"k": k, "d": X.shape[1], "N": X.shape[0], "contender": name, "replicas": nicv.size,
            **summarise(nicv, 1, "nicv"), "nicv_reference": reference,
            **summarise(nicv / reference, 1, "ratio")}


def reference_row(X: np.ndarray, k: int, base_seed: int,
                  starts: int = REFERENCE_STARTS) -> dict[str, object]:
    """The reference's row at (k, d): its NICV over the starts (its ratio is about 1)."""
    start = time.perf_counter()
    nicv = reference_nicv(X, k, base_seed, starts)
    seconds = (time.perf_counter() - start) / nicv.size
    return {**_row(X, k, REFERENCE, nicv, float(nicv.mean())), "algorithm": "lloyd",
            "form": "none", "epsilon": float("inf"), "delta": 0.0, "point_seed": 0,
            "iterations": REFERENCE_ITERATIONS, "is_private": False,
            "epsilon_spent_max": 0.0, "epsilon_at_delta": 0.0, "run_s": seconds}


def run_point(X: np.ndarray, k: int, epsilon: float, contender: Contender,
              reference: float, *, base_seed: int, runs: int = RUNS) -> dict[str, object]:
    """One contender's row at (k, d = ``X.shape[1]``, ``epsilon``): ``runs`` independent runs
    built by :func:`config_of` (the record count public), their NICV
    and its ratio to ``reference`` (the reference's mean NICV), what they spent (basic
    composition, ``epsilon_spent_max``) and the run ledger's epsilon at the contender's delta.
    """
    runs = check_positive_int(runs, "runs")
    n, d = X.shape
    config = config_of(contender, k, epsilon, d, n)
    seed = point_seed(base_seed, k, d, epsilon, contender)
    start = time.perf_counter()
    result = run(X, config, seed, replicas=runs)
    seconds = (time.perf_counter() - start) / runs
    nicv = np.asarray(metrics.nicv(X, result.centroids))
    return {**_row(X, k, contender.name, nicv, reference), "algorithm": contender.algorithm,
            "form": contender.form, "epsilon": float(epsilon), "delta": contender.delta,
            "point_seed": seed, "iterations": getattr(config, "iterations", None),
            "is_private": result.ledger.is_private,
            "epsilon_spent_max": float(np.max(result.spent)),
            "epsilon_at_delta": float(result.ledger.epsilon_at(contender.delta)),
            "run_s": seconds}


def evaluate_cell(k: int, d: int, *, base_seed: int, runs: int = RUNS,
                  epsilons: tuple[float, ...] = EPSILONS,
                  contenders: tuple[Contender, ...] = CONTENDERS,
                  n_records: int = N_RECORDS) -> pd.DataFrame:
    """The reference and every contender at every epsilon on the mixture at (k, d) (one sweep
    cell): the reference first, then by epsilon, then in the order of ``contenders``.

    Parameters
    ----------
    k : int
        The number of clusters (and of the mixture's components).
    d : int
        The dimension.
    base_seed : int
        The study's base seed (every point derives its seed from it).
    runs : int, default RUNS
        Independent runs per point.
    epsilons : tuple of float, default EPSILONS
        The target epsilons.
    contenders : tuple of Contender, default CONTENDERS
        The contenders.
    n_records : int, default N_RECORDS
        The records of the mixture (a smaller one for a quick check).

    Returns
    -------
    pandas.DataFrame
        One row per point.
    """
    k, d = check_positive_int(k, "k"), check_positive_int(d, "d")
    X = mixture(k, d, base_seed, n_records)
    first = reference_row(X, k, base_seed)
    reference = float(first["nicv_mean"])  # type: ignore[arg-type]
    rows = [first, *(run_point(X, k, e, c, reference, base_seed=base_seed, runs=runs)
                     for e in epsilons for c in contenders)]
    return pd.DataFrame(rows)


def rebuild_row(row: Mapping[str, Any]) -> dict[str, object]:
    """One stored row of ``data/results/fastlloyd_home.csv`` computed again from its own
    columns (``k``, ``d``, ``N``, ``base_seed``, ``replicas``, ``algorithm``, ``form``,
    ``epsilon``), without the rest of its cell: every seed derives from the point alone."""
    k, d, base = int(row["k"]), int(row["d"]), int(row["base_seed"])
    X = mixture(k, d, base, int(row["N"]))
    if row["contender"] == REFERENCE:
        return reference_row(X, k, base, int(row["replicas"]))
    reference = float(reference_nicv(X, k, base).mean())
    return run_point(X, k, float(row["epsilon"]), contender_of(row["algorithm"], row["form"]),
                     reference, base_seed=base, runs=int(row["replicas"]))
