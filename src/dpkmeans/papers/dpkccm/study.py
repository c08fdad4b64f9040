"""Ni et al.'s (2021) experiments at the paper's scale (book chapter 7, "DP-KCCM").

Every point of a figure is 20 sets of initial centroids x 50 runs = 1000 runs (as in the paper).
The 20 sphere-packing draws use only the public box; each is shared by 50 replicas that differ
in their noise only. A point is summarised by its mean NICV and a 95% interval that respects
that structure: the t interval over the 20 per-initialisation means (the 1000 runs are not
independent; runs sharing a start are correlated).

A point's numbers depend only on the study's base seed and the point itself
(:func:`point_seed`), never on which sweep cell computed it or on what ran beside it, so any
committed point can be recomputed on its own.

Axes of a sweep cell (:func:`evaluate_cell`):

- ``"epsilon"``: figures 3-8, every algorithm at the dataset's k for eps in EPSILONS;
- ``"k"``: figures 9-14, every algorithm at the dataset's fixed eps for k in KS (the paper's
  k is the ``"epsilon"`` cell's point at that eps, and is not repeated);
- ``"ablations"``: at the paper's (k, eps), DP-KCCM's merge factor n in {2, 4, 5} (n = 1 is
  ``allocation_k``, n = 3 the main point), the decreasing (reversed) schedule with and
  without merging, and all four variants with the paper's data-derived min-max scaling
  (not private; evaluated in the public-bounds space so the NICV values are comparable).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.data import Dataset, load
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.dpkccm.variants import VARIANTS, dpkccm_config
from dpkmeans.papers.su.study import BOX  # the paper scales to [-r, r], r = 1
from dpkmeans.papers.su.variants import dplloyd_impr
from dpkmeans.study.parts import is_last_part, part_block
from dpkmeans.study.shared import shared_initial_centroids, stable_seed, summarise, to_public_space
from dpkmeans.validation import check_positive_int

__all__ = [
    "PAPER_SETTINGS",
    "EPSILONS",
    "KS",
    "ALGORITHMS",
    "PAPER_INITS",
    "PAPER_RUNS",
    "Point",
    "point_seed",
    "study_config",
    "shared_initial_centroids",
    "summarise",
    "run_point",
    "reference_point",
    "points",
    "evaluate_points",
    "evaluate_cell",
]

#: Per dataset: (k of Table 2, the fixed epsilon of figures 9-14).
PAPER_SETTINGS: dict[str, tuple[int, float]] = {
    "blood": (4, 0.6),
    "tripadvisor": (4, 0.6),
    "review_ratings": (4, 0.2),
    "adult": (5, 0.2),
    "electrical": (5, 0.2),
    "credit_card": (5, 0.2),
}
#: The paper's epsilon grid was lost with its figures; the book uses this one.
EPSILONS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
#: The k range of figures 9-14 is not in the text; the book uses 2..8.
KS = tuple(range(2, 9))
#: The paper's four variants and the true DPLloyd-Impr of Su et al.
ALGORITHMS = (*VARIANTS, "dplloyd-impr")
#: 20 initial-centroid sets x 50 runs (as in the paper).
PAPER_INITS, PAPER_RUNS = 20, 50
#: Non-private Lloyd from the same k-centroid starts, for reference lines.
REFERENCE = "lloyd (non-private)"


@dataclass(frozen=True)
class Point:
    """One point of a figure: an algorithm at (k, epsilon) with its options."""

    algorithm: str
    k: int
    epsilon: float
    n: int = 1  # merge factor (clusters run = n k); 1 for the *_k variants and DPLloyd-Impr
    schedule: str = "paper"  # "paper" = the variant's own; or a dpkccm.SCHEDULES name
    bounds: str = "public"  # "public" (private) or "paper" (data min/max; leaks)


def point_seed(base_seed: int, dataset: str, point: Point) -> int:
    """A 63-bit seed from the study's base seed, the dataset and the point."""
    return stable_seed(base_seed, {"dataset": dataset, **asdict(point)})


def study_config(point: Point, bounds: tuple[np.ndarray, np.ndarray],
                 n_records: int) -> DPLloydConfig:
    """The engine configuration of a point; assignment scores in single precision (speed
    only: the assignment is exact either way, :mod:`dpkmeans.compute.lloyd`).

    ``n_records`` is the public record count (the dataset's documented size) that Su's rule
    reads for DPLloyd-Impr. Paper-mode points (``bounds="paper"``) carry the
    ``"data-derived-bounds"`` flaw: their ledgers record the leak, so they are not private.
    """
    if point.algorithm == "dplloyd-impr":
        if point.n != 1 or point.schedule != "paper":
            raise ValueError("DPLloyd-Impr has no merge factor or schedule option")
        config = dplloyd_impr(point.k, point.epsilon, bounds, n_records=n_records)
    elif point.algorithm in VARIANTS:
        merges = point.algorithm.endswith("_nk")
        config = dpkccm_config(point.algorithm, point.k, point.epsilon, bounds,
                               n=point.n if merges else None,
                               schedule=None if point.schedule == "paper" else point.schedule)
        if not merges and point.n != 1:
            raise ValueError(f"{point.algorithm} does not merge; n must be 1")
    else:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {point.algorithm!r}")
    if point.bounds not in ("public", "paper"):
        raise ValueError(f"bounds must be 'public' or 'paper', got {point.bounds!r}")
    flaws = (DATA_DERIVED_BOUNDS,) if point.bounds == "paper" else ()
    return replace(config, scores="single", flaws=flaws)


def _box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(d, BOX[0]), np.full(d, BOX[1])


def run_point(data: dict[str, Dataset], point: Point, *, base_seed: int, dataset: str,
              inits: int = PAPER_INITS, runs: int = PAPER_RUNS) -> dict[str, object]:
    """Run one point (inits x runs replicas) and return its summary row.

    ``data`` holds the public-bounds scaled dataset under ``"public"`` and, for paper-mode
    points, the min-max scaled one under ``"paper"``. NICV is always measured on the
    public-bounds data; paper-mode centroids are mapped there first (they live in another
    coordinate system).
    """
    inits, runs = check_positive_int(inits, "inits"), check_positive_int(runs, "runs")
    public = data["public"]
    source = data[point.bounds]
    X = np.asarray(source.X)
    n_public = public.public_n_records
    if n_public is None:
        raise ValueError(f"dataset {dataset!r} states no public record count (Su's rule)")
    config = study_config(point, _box(X.shape[1]), n_public)
    seed = point_seed(base_seed, dataset, point)
    init_seq, noise_seq = np.random.SeedSequence(seed).spawn(2)
    initial = shared_initial_centroids(config, inits, runs, init_seq)
    start = time.perf_counter()
    result = run(X, config, noise_seq, replicas=inits * runs, initial_centroids=initial)
    runtime = time.perf_counter() - start
    centroids = result.centroids
    if point.bounds == "paper":  # back to the original units, then into the public box
        centroids = to_public_space(centroids, source, public)
    Xp = np.asarray(public.X)
    squared, plain = metrics.nicv_pair(Xp, centroids)
    spent = result.ledger.total().epsilon
    return {
        "dataset": dataset, **asdict(point), "clusters_run": config.n_clusters,
        "iterations": config.iterations, "N": Xp.shape[0], "d": Xp.shape[1],
        "inits": inits, "runs": runs, "point_seed": seed,
        **summarise(squared, inits, "nicv"), **summarise(plain, inits, "nicv_unsquared"),
        "epsilon_spent": spent, "ledger_equals_epsilon": bool(np.isclose(spent, point.epsilon)),
        "is_private": result.ledger.is_private, "run_s": runtime,
    }


def reference_point(data: dict[str, Dataset], k: int, *, base_seed: int, dataset: str,
                    inits: int = PAPER_INITS, iterations: int = 12) -> dict[str, object]:
    """Non-private Lloyd (``iterations`` steps) from ``inits`` sphere-packing starts of k
    centroids: the reference line of a figure (not private; it reads the data freely). Each
    start is run once (the run is deterministic), so the row says ``runs = 1``, whatever the
    private points' ``runs``."""
    X = np.asarray(data["public"].X)
    point = Point(REFERENCE, k, float("nan"))
    seed = point_seed(base_seed, dataset, point)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(inits)]
    starts = np.stack([sphere_packing(_box(X.shape[1]), k, g) for g in rngs])
    final = lloyd_reference(X, starts, iterations)
    squared, plain = metrics.nicv_pair(X, final)
    return {"dataset": dataset, **asdict(point), "clusters_run": k, "iterations": iterations,
            "N": X.shape[0], "d": X.shape[1], "inits": inits, "runs": 1, "point_seed": seed,
            **summarise(squared, 1, "nicv"), **summarise(plain, 1, "nicv_unsquared"),
            "is_private": False}


def points(dataset: str, axis: str) -> list[Point]:
    """The points of a sweep cell (see the module docstring)."""
    if dataset not in PAPER_SETTINGS:
        raise ValueError(f"dataset must be one of {sorted(PAPER_SETTINGS)}, got {dataset!r}")
    k0, eps0 = PAPER_SETTINGS[dataset]
    if axis == "epsilon":
        return [Point(a, k0, e, n=3 if a.endswith("_nk") else 1)
                for a in ALGORITHMS for e in EPSILONS]
    if axis == "k":
        return [Point(a, k, eps0, n=3 if a.endswith("_nk") else 1)
                for a in ALGORITHMS for k in KS if k != k0]
    if axis == "ablations":
        out = [Point("allocation_nk", k0, eps0, n=n) for n in (2, 4, 5)]
        out += [Point("allocation_k", k0, eps0, schedule="decreasing"),
                Point("allocation_nk", k0, eps0, n=3, schedule="decreasing")]
        out += [Point(a, k0, eps0, n=3 if a.endswith("_nk") else 1, bounds="paper")
                for a in VARIANTS]
        return out
    raise ValueError(f"axis must be 'epsilon', 'k' or 'ablations', got {axis!r}")


def _datasets(dataset: str, need_paper: bool) -> dict[str, Dataset]:
    raw = load(dataset, paper="dpkccm")
    out = {"public": raw.scaled(BOX)}
    if need_paper:
        with warnings.catch_warnings():  # deliberate: the paper-mode ablation measures the leak
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            out["paper"] = raw.with_paper_bounds().scaled(BOX)
    return out


def evaluate_points(data: dict[str, Dataset], todo: list[Point], *, dataset: str,
                    base_seed: int, inits: int = PAPER_INITS, runs: int = PAPER_RUNS,
                    reference_ks: list[int] | tuple[int, ...] = ()) -> pd.DataFrame:
    """Run ``todo`` on ``data`` (see :func:`run_point`) and add non-private reference rows for
    ``reference_ks``; one row per point. Works for any dataset, not only the paper's."""
    rows = [run_point(data, p, base_seed=base_seed, dataset=dataset, inits=inits, runs=runs)
            for p in todo]
    rows += [reference_point(data, k, base_seed=base_seed, dataset=dataset, inits=inits)
             for k in reference_ks]
    return pd.DataFrame(rows)


def evaluate_cell(dataset: str, axis: str, *, base_seed: int, inits: int = PAPER_INITS,
                  runs: int = PAPER_RUNS, part: int = 0, parts: int = 1) -> pd.DataFrame:
    """All points of one (dataset, axis) sweep cell of the paper's datasets, plus the
    non-private reference rows of the figures; one row per point. With ``parts`` > 1 only the
    ``part``-th block of the points (:func:`dpkmeans.study.parts.part_block`), the last part
    with the reference rows."""
    every = points(dataset, axis)
    todo = part_block(every, part, parts)
    data = _datasets(dataset, any(p.bounds == "paper" for p in todo))
    ks = (sorted({p.k for p in every})
          if axis in ("epsilon", "k") and is_last_part(part, parts) else [])
    frame = evaluate_points(data, todo, dataset=dataset, base_seed=base_seed, inits=inits,
                            runs=runs, reference_ks=ks)
    frame.insert(1, "axis", axis)
    return frame
