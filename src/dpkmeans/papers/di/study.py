"""The experiments of Shang et al. (2021), sections 6.2 and 7.2 (book chapter 11).

Four sweep cells (``CELLS``):

- ``magic`` (19,020 x 10, k = 2): DI k-means at the rho grid ``RHOS`` (m = 10001) and DP
  k-means at eps(rho) of every grid rho, so that each DI point has its DP twin (claim 1): as
  published (the intended reading eps / 2^i, and the printed rule capped at rho: one
  iteration) and corrected. A twin is given by its grid rho (:class:`Point`): its row records
  that rho, and its epsilon and seed are derived from it (:func:`point_epsilon`,
  :func:`point_seed`), so the row alone gives both exactly;
- ``heart`` (270 rows, 6 numeric + 7 categorical, k = 2): DI k-prototypes at the grid
  ``RHOS_R`` x ``RHOS_C`` (m_r = 10001, m_c = 2) and DP k-prototypes at ``EPSILONS_HEART``, as
  published and corrected (claim 2);
- ``gamma``: non-private k-prototypes on Heart against the classes for gamma in ``GAMMAS``
  (claim 3), from Optimized Canopy (the paper's start) and from ``GAMMA_STARTS`` random records;
- ``iterations``: every algorithm at the paper's setting (rho = 0.05 and its eps on MAGIC;
  (0.05, 0.7) and eps = 6.2 on Heart) for T in ``ITERATION_GRID``: the paper gives no T.

Any other registry dataset with categorical columns (e.g. ``adult``) is a case too, for
readers: DI k-prototypes at the paper's (0.05, 0.7) and DP k-prototypes at 6.2, as published
and corrected, with k = 2 and rows with missing values dropped (:func:`points`).

The metric is the paper's F-measure (eq. 17, weighted over the predicted clusters, Hungarian
matching) of each run's clustering against the non-private clustering of the same algorithm
from Optimized Canopy (run to convergence) in the scaling the run saw; the F-measure against
the classes is kept beside it, and so is the F-measure of the non-private algorithm run from
each replica's own start for the same T (``f_nonprivate``): what the starts and T allow, so
that the difference is the cost of privacy. T = 10 with the halving schedule in the main grids
(the book's choice, fixed before any run; the paper gives no T): on MAGIC, non-private Lloyd
from the canopy needs about 30 iterations to converge, and the open-ended eps / 2^i leaves the
last of 10 iterations 1/1024 of the budget. As-published runs use the min-max scaling (a leak, measured on purpose) and all start
from the canopy, so their replicas differ by noise only; corrected ones use the public bounds
and an independent sphere-packing start per replica. Every run's replicas are independent, so
the standard errors use replicas - 1 degrees of freedom.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import assign, lloyd_reference
from dpkmeans.data import Dataset, load
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.prototypes import MixedLayout, encode, kprototypes_reference
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.canopy import optimized_canopy
from dpkmeans.privacy.identifiability import epsilon_from_rho
from dpkmeans.study.parts import part_block
from dpkmeans.study.shared import stable_seed, summarise
from dpkmeans.study.sweep import results_frame
from dpkmeans.validation import check_positive_int

__all__ = ["CELLS", "RHOS", "RHOS_R", "RHOS_C", "EPSILONS_HEART", "GAMMAS", "GAMMA_STARTS",
           "KMEANS_ALGORITHMS", "KPROTOTYPES_ALGORITHMS", "RUNS", "REFERENCE_ITERATIONS",
           "ITERATION_GRID", "OTHER_RUNS", "K", "Point", "points", "iteration_points",
           "paper_points", "at_paper_setting", "point_epsilon", "point_seed", "row_point",
           "study_config", "load_case", "run_point", "gamma_rows", "evaluate_cell"]

CELLS = ("magic", "heart", "gamma", "iterations")
#: T of the ``iterations`` cell.
ITERATION_GRID = (3, 5, 7, 10)
#: DI k-means' rho grid around the paper's 0.05 (m = 10001: eps from 2.30 to 11.4).
RHOS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9)
#: DI k-prototypes' grids around the paper's rho_r = 0.05 and rho_c = 0.7 (rho_c > 1/m_c = 0.5).
RHOS_R = (0.005, 0.01, 0.05, 0.1, 0.5)
RHOS_C = (0.6, 0.7, 0.8, 0.9)
#: DP k-prototypes' epsilons: Fig. 5's range, with the paper's 6.2.
EPSILONS_HEART = (0.5, 1.0, 2.0, 4.0, 6.2, 8.0, 10.0, 12.0)
GAMMAS = tuple(round(g, 2) for g in np.arange(0.02, 1.001, 0.02))
GAMMA_STARTS = 200
KMEANS_ALGORITHMS = ("di_published", "di_printed", "dp_published", "di_corrected",
                     "dp_corrected")
KPROTOTYPES_ALGORITHMS = ("di_published", "dp_published", "di_corrected", "dp_corrected")
#: Runs per point (the issue asks for at least 200); other mixed datasets get ``OTHER_RUNS``.
RUNS = {"magic": 500, "heart": 1000}
OTHER_RUNS = 200
#: k of every case: the paper's two classes on MAGIC and Heart.
K = 2
#: Steps of the non-private references (both converge well within it on these data).
REFERENCE_ITERATIONS = 100


@dataclass(frozen=True)
class Point:
    """One point: an algorithm on a case at rho (DI: rho, and rho_c for k-prototypes) or at
    epsilon (DP); the unused parameters are None.

    A DP point given ``rho`` instead of ``epsilon`` is the DP twin of the DI k-means point at
    that rho: it runs at eps(rho) with m = 10001 worlds (:func:`point_epsilon`), and its seed
    hashes the rho as given (:func:`point_seed`), not a float computed from it.
    """

    case: str
    algorithm: str
    rho: float | None = None
    rho_c: float | None = None
    epsilon: float | None = None
    iterations: int = variants.ITERATIONS

    def __post_init__(self) -> None:
        if self.algorithm.startswith("dp_"):
            if (self.rho is None) == (self.epsilon is None) or self.rho_c is not None:
                raise ValueError(f"a DP point takes exactly one budget: epsilon, or the rho "
                                 f"of its DI k-means twin: {self}")
        elif self.epsilon is not None:
            raise ValueError(f"a DI point takes rho (and rho_c), not epsilon: {self}")


def point_epsilon(point: Point) -> float | None:
    """The epsilon a DP point runs at: its own, or eps(rho) with m = 10001 worlds for the twin
    of a DI k-means point (Shang et al. 2021, eq. 5); None for a DI point.

    Examples
    --------
    >>> from dpkmeans.papers.di.study import Point, point_epsilon
    >>> round(point_epsilon(Point("magic", "dp_corrected", rho=0.05)), 4)
    6.2659
    """
    if not point.algorithm.startswith("dp_"):
        return None
    if point.rho is None:
        return point.epsilon
    return epsilon_from_rho(point.rho, variants.M_NUMERIC)


def point_seed(base_seed: int, point: Point) -> int:
    """A 63-bit seed from the study's base seed and the point's parameters as given (a DP
    twin's rho, never the epsilon derived from it)."""
    return stable_seed(base_seed, {"paper": "di", **asdict(point)})


def paper_points(iterations: int) -> list[Point]:
    """Every algorithm at the paper's setting with T = ``iterations``: rho = 0.05 (and DP at
    its eps) on MAGIC, (0.05, 0.7) (and DP at 6.2) on Heart. The printed rule, which runs one
    iteration whatever T, only at the main grids' T."""
    printed = ("di_printed",) if iterations == variants.ITERATIONS else ()
    paper = [Point("magic", a, rho=0.05)
             for a in ("di_published", *printed, "di_corrected")]
    paper += [Point("magic", a, rho=0.05) for a in ("dp_published", "dp_corrected")]
    paper += [Point("heart", a, rho=0.05, rho_c=0.7) for a in ("di_published", "di_corrected")]
    paper += [Point("heart", a, epsilon=6.2) for a in ("dp_published", "dp_corrected")]
    return [replace(p, iterations=iterations) for p in paper]


def iteration_points() -> list[Point]:
    """The ``iterations`` cell: :func:`paper_points` for every T of ``ITERATION_GRID`` but the
    main grids' T (those points are in the main grids)."""
    return [p for T in ITERATION_GRID if T != variants.ITERATIONS for p in paper_points(T)]


def at_paper_setting(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`paper_points` for every T of ``ITERATION_GRID`` (main grids and the
    ``iterations`` cell), from a results frame."""
    ran = results[results["case"] != "gamma"]
    wanted = {p for T in ITERATION_GRID for p in paper_points(T)}
    keep = [row_point(r) in wanted for r in ran.to_dict("records")]
    return ran[keep]


def row_point(row: Mapping[str, Any]) -> Point:
    """The exact point a results row (of :func:`evaluate_cell`) was run at, from its columns.

    The row records the parameters the point was given (a DP twin its grid rho, which prints
    as given), so its epsilon (:func:`point_epsilon`) and its seed (:func:`point_seed`) are
    recomputed exactly. A DP row with a rho is a twin: its epsilon column is derived.
    """
    if row["algorithm"] == "kprototypes_nonprivate":
        raise ValueError("a gamma row is not a point: gamma_rows makes it from its gamma")

    def value(name: str) -> float | None:
        v = row[name]
        return None if pd.isna(v) else float(v)

    rho = value("rho")
    return Point(str(row["dataset"]), str(row["algorithm"]), rho, value("rho_c"),
                 value("epsilon") if rho is None else None, int(row["T"]))


def points(case: str) -> list[Point]:
    """Every point of a case: ``magic``, ``heart``, or another mixed dataset (the paper's
    setting only: DI at (0.05, 0.7), DP at 6.2, as published and corrected)."""
    if case in ("gamma", "iterations"):
        raise ValueError(f"case must be a dataset, not the sweep cell {case!r}")
    if case == "magic":
        di = [Point(case, a, rho=r) for a in ("di_published", "di_printed", "di_corrected")
              for r in RHOS]
        dp = [Point(case, a, rho=r) for a in ("dp_published", "dp_corrected") for r in RHOS]
        return di + dp
    if case == "heart":
        di = [Point(case, a, rho=r, rho_c=c) for a in ("di_published", "di_corrected")
              for r in RHOS_R for c in RHOS_C]
        dp = [Point(case, a, epsilon=e) for a in ("dp_published", "dp_corrected")
              for e in EPSILONS_HEART]
        return di + dp
    return ([Point(case, a, rho=0.05, rho_c=0.7) for a in ("di_published", "di_corrected")]
            + [Point(case, a, epsilon=6.2) for a in ("dp_published", "dp_corrected")])


def study_config(point: Point, layout: MixedLayout | None, d: int) -> DPLloydConfig:
    """The engine configuration of a point on [0, 1]^d (numeric part)."""
    box = (np.zeros(d), np.ones(d))
    a = point.algorithm
    eps = point_epsilon(point)
    rho = None if eps is not None else point.rho  # a DP twin runs at eps(rho)
    twin = eps is not None and point.rho is not None
    if point.case == "magic":
        if a in ("di_published", "dp_published", "di_printed"):
            reading = "printed" if a == "di_printed" else "intended"
            return variants.kmeans_as_published(box, rho=rho, epsilon=eps,
                                                reading=reading, iterations=point.iterations)
        if a in ("di_corrected", "dp_corrected"):
            return variants.kmeans_corrected(box, rho=rho, epsilon=eps,
                                             iterations=point.iterations)
    elif layout is not None and not twin:  # a twin given by rho is a k-means point
        if a in ("di_published", "dp_published"):
            return variants.kprototypes_as_published(layout, box, rho_r=rho,
                                                     rho_c=point.rho_c, epsilon=eps,
                                                     iterations=point.iterations)
        if a in ("di_corrected", "dp_corrected"):
            return variants.kprototypes_corrected(layout, box, rho_r=rho,
                                                  rho_c=point.rho_c, epsilon=eps,
                                                  iterations=point.iterations)
    raise ValueError(f"no configuration for {point}")


@dataclass(frozen=True)
class Case:
    """A case's data: the records the runs see under the public bounds and under the paper's
    min-max scaling, the mixed layout (Heart), the reference clustering in each scaling and
    the classes."""

    name: str
    public: np.ndarray
    paper: np.ndarray
    layout: MixedLayout | None
    reference_public: np.ndarray
    reference_paper: np.ndarray
    classes: np.ndarray | None


def _scalings(dataset: Dataset) -> tuple[Dataset, Dataset]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return dataset.scaled((0.0, 1.0)), dataset.with_paper_bounds().scaled((0.0, 1.0))


def load_case(case: str, gamma: float = variants.GAMMA) -> Case:
    """The case's data and its non-private reference clustering: Lloyd (magic) or
    k-prototypes with ``gamma`` (heart) from Optimized Canopy, in each scaling."""
    raw = load(case, paper="di") if case in ("magic", "heart") else load(case, on_missing="drop")
    if case != "magic" and raw.categorical.shape[1] == 0:
        raise ValueError(f"dataset {case!r} has no categorical column: DI k-prototypes needs "
                         f"one (DI k-means runs on 'magic')")
    public, paper = _scalings(raw)
    layout = None
    X_public, X_paper = np.asarray(public.X), np.asarray(paper.X)
    if case != "magic":
        layout = MixedLayout(tuple(len(lv) for lv in raw.levels), raw.n_numeric, gamma)
        X_public = encode(X_public, raw.categorical, layout)
        X_paper = encode(X_paper, raw.categorical, layout)
    classes = None if raw.target_levels is None else np.asarray(raw.target)
    return Case(case, X_public, X_paper, layout,
                assign(X_public, _reference(X_public, layout, K)),
                assign(X_paper, _reference(X_paper, layout, K)), classes)


def _reference(X: np.ndarray, layout: MixedLayout | None, k: int) -> np.ndarray:
    """Non-private clustering from Optimized Canopy's k centres (the paper's start)."""
    return _nonprivate(X, layout, optimized_canopy(X, n_clusters=k).centres,
                       REFERENCE_ITERATIONS)


def _nonprivate(X: np.ndarray, layout: MixedLayout | None, starts: np.ndarray,
                iterations: int) -> np.ndarray:
    """Non-private Lloyd (numeric) or k-prototypes (mixed) from the given starts."""
    if layout is None:
        return lloyd_reference(X, starts, iterations)
    return kprototypes_reference(X, layout, starts, iterations)


def _f_measures(X: np.ndarray, centroids: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each replica's F-measure (eq. 17: predicted weights, Hungarian) against ``labels``
    (:func:`dpkmeans.compute.metrics.f_measures`: :func:`~dpkmeans.compute.metrics.f_measure`
    of every replica, batched)."""
    return metrics.f_measures(labels, assign(X, centroids), weights="predicted")


def run_point(case: Case, point: Point, *, base_seed: int, runs: int) -> dict[str, object]:
    """Run one point ``runs`` times and return its summary row: the F-measure against the
    non-private clustering in the scaling the run saw (min-max as published, public bounds
    corrected) and against the classes."""
    runs = check_positive_int(runs, "runs")
    published = point.algorithm.endswith(("published", "printed"))
    X = case.paper if published else case.public
    config = study_config(point, case.layout, X.shape[1] - (case.layout.n_onehot
                                                            if case.layout else 0))
    seed = point_seed(base_seed, point)
    eps = point_epsilon(point)
    start = time.perf_counter()
    result = run(X, config, seed, replicas=runs)
    runtime = time.perf_counter() - start
    reference = case.reference_paper if published else case.reference_public
    f_ref = _f_measures(X, result.centroids, reference)
    f_class = (np.full(runs, np.nan) if case.classes is None
               else _f_measures(X, result.centroids, case.classes))
    starts, which = np.unique(result.initial_centroids, axis=0, return_inverse=True)
    f_nonprivate = _f_measures(X, _nonprivate(X, case.layout, starts, config.iterations),
                               reference)[which.reshape(-1)]
    spent = np.asarray(result.spent)
    return {
        "dataset": case.name, "algorithm": point.algorithm, "T": point.iterations,
        "family": "published" if published else "corrected",
        "notion": point.algorithm[:2], "rho": point.rho, "rho_c": point.rho_c,
        "epsilon": config.epsilon if eps is None else eps,
        "epsilon_stated": _stated(point), "iterations": config.iterations,
        "replicas": runs, "point_seed": seed, "bounds": "paper" if published else "public",
        **summarise(f_ref, 1, "f"), **summarise(f_class, 1, "f_class"),
        **summarise(f_nonprivate, 1, "f_nonprivate"),
        **summarise(result.iterations_run.astype(float), 1, "iterations_run"),
        "epsilon_spent_mean": float(spent.mean()), "epsilon_spent_max": float(spent.max()),
        "is_private": result.ledger.is_private, "run_s": runtime / runs,
    }


def _stated(point: Point) -> float:
    """The paper's guarantee in epsilon: eps(rho) for DI k-means, max(eps_r, eps_c) for DI
    k-prototypes (its parallel reading), the epsilon of a DP point (:func:`point_epsilon`)."""
    eps = point_epsilon(point)
    if eps is not None:
        return float(eps)
    if point.rho_c is None:
        return epsilon_from_rho(point.rho, variants.M_NUMERIC)
    return variants.claimed_epsilon(point.rho, point.rho_c)["claimed (parallel, max)"]


def gamma_rows(*, base_seed: int, gammas: tuple[float, ...] = GAMMAS,
               starts: int = GAMMA_STARTS) -> pd.DataFrame:
    """Non-private k-prototypes on Heart (min-max scaling, as the paper) against the classes at
    every gamma: from Optimized Canopy (one deterministic run) and from ``starts`` random
    records (the same rows for every gamma)."""
    raw = load("heart", paper="di")
    _, paper = _scalings(raw)
    classes = np.asarray(raw.target)
    rng = np.random.default_rng(stable_seed(base_seed, {"paper": "di", "gamma": "starts"}))
    picks = np.stack([rng.choice(raw.n_samples, 2, replace=False) for _ in range(starts)])
    rows = []
    for g in gammas:
        layout = MixedLayout(tuple(len(lv) for lv in raw.levels), raw.n_numeric, float(g))
        Z = encode(np.asarray(paper.X), raw.categorical, layout)
        canopy = _reference(Z, layout, K)
        random = kprototypes_reference(Z, layout, Z[picks], REFERENCE_ITERATIONS)
        f_random = _f_measures(Z, random, classes)
        rows.append({"dataset": "heart", "algorithm": "kprototypes_nonprivate", "gamma": float(g),
                     "f_canopy": float(_f_measures(Z, canopy[None], classes)[0]),
                     **summarise(f_random, 1, "f_class"), "replicas": starts,
                     "is_private": False})
    return pd.DataFrame(rows)


def evaluate_cell(case: str, *, base_seed: int, runs: int | None = None, part: int = 0,
                  parts: int = 1) -> pd.DataFrame:
    """Every point of one sweep cell (``CELLS``); ``runs`` overrides ``RUNS[case]``. Rows
    name the cell in ``case`` (as the sweep does) and the data in ``dataset``. With ``parts``
    > 1 only the ``part``-th block of the points (:func:`dpkmeans.study.parts.part_block`;
    the gamma cell's rows are one computation and run whole)."""
    if case == "gamma":
        if parts != 1:
            raise ValueError("the gamma cell runs whole (parts=1): its rows share their starts")
        frame = gamma_rows(base_seed=base_seed, starts=runs or GAMMA_STARTS)
    else:
        todo = part_block(iteration_points() if case == "iterations" else points(case),
                          part, parts)
        data = {c: load_case(c) for c in sorted({p.case for p in todo})}
        frame = results_frame([run_point(data[p.case], p, base_seed=base_seed,
                                         runs=RUNS.get(p.case, OTHER_RUNS) if runs is None
                                         else runs)
                               for p in todo])
    frame.insert(0, "case", case)
    return frame
