"""The APDPk-means study and the schedules comparison (book chapter 10).

The study notes name no dataset, so the study runs the six datasets of DP-KCCM (Ni et al.
2021) and the four of the silhouette paper (Zhang, Liu and Wang 2018) at the k those papers
used (``CASES``; blood twice, k = 4 and k = 2). A point is an algorithm at (case, epsilon),
run 1000 times: 20 sets of initial centroids x 50 runs, as DP-KCCM.

Algorithms (``ALGORITHMS``), in three families:

- ``published``: the note's base DPk-means with its four schedules (AP, uniform, dichotomy,
  series-sum) as published (:func:`.variants.as_published`): min-max scaling, noisy records as
  initial centres, stop when the partition repeats. Not private; the ledger computes why. Their
  starts come from the data, so their 1000 runs are independent;
- ``corrected``: the same four schedules, corrected (:func:`.variants.corrected`), all over the
  corrected APDP's T, so that only the shape differs;
- ``other``: the schedules of the other papers: DPLloyd's uniform eps / 5, DPLloyd-Impr (Su's T
  and count/sum split, with rho = 0.225: Su's value for a release centred on the box, where a
  typical |c - m| / (2 r) is 0.225 whatever the box, as in chapters 5 and 8; APDP's eps_m keeps
  the note's 0.45), DP-KCCM's stepped 1/24, 1/12, 1/8 (T = 12, k clusters) and Zhang et al.'s
  silhouette allocation (corrected).

Every private algorithm starts from the **same** 20 sphere-packing draws of a case (they
depend on the public box and k only), so differences between schedules are not differences
between starts. Squared NICV on the public [0, 1] scaling is the primary metric; the note's
SSE, written without the square (sum of unsquared distances), is reported beside it. Each
row also holds the NICV after every iteration (``curve_*``, from the exact SSE that the engine
records at no extra pass) and, for the APDP family, the branch of the schedule that ran.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict

import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.data import Dataset, load
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.apdp import variants
from dpkmeans.papers.dpkccm.variants import dpkccm_config
from dpkmeans.papers.silhouette import variants as silhouette
from dpkmeans.papers.su.variants import dplloyd, dplloyd_impr
from dpkmeans.study.parts import is_last_part, part_block
from dpkmeans.study.shared import (
    Point,
    shared_initial_centroids,
    stable_seed,
    summarise,
    to_public_space,
    unit_box,
)
from dpkmeans.study.sweep import results_frame
from dpkmeans.validation import check_positive_int

__all__ = [
    "CASES",
    "EPSILONS",
    "PUBLISHED",
    "CORRECTED",
    "OTHERS",
    "ALGORITHMS",
    "FAMILIES",
    "PAPER_INITS",
    "PAPER_RUNS",
    "REFERENCE_ITERATIONS",
    "INTERVAL",
    "Point",
    "point_seed",
    "study_config",
    "shared_starts",
    "run_point",
    "reference_row",
    "points",
    "load_case",
    "load_public",
    "evaluate_cell",
]

#: case -> (registry dataset, k, the registry's paper key for its columns).
CASES: dict[str, tuple[str, int, str]] = {
    "blood": ("blood", 4, "dpkccm"),
    "tripadvisor": ("tripadvisor", 4, "dpkccm"),
    "review_ratings": ("review_ratings", 4, "dpkccm"),
    "adult": ("adult", 5, "dpkccm"),
    "electrical": ("electrical", 5, "dpkccm"),
    "credit_card": ("credit_card", 5, "dpkccm"),
    "blood_k2": ("blood", 2, "silhouette"),
    "abalone": ("abalone", 3, "silhouette"),
    "magic": ("magic", 2, "silhouette"),
    "covtype": ("covtype", 7, "silhouette"),
}
#: The note gives no epsilon; the book's range, 0.05 to 5.
EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
#: The note's four schedules, as published and corrected (variants.SCHEDULE_NAMES order).
PUBLISHED = ("ap_published", "uniform_published", "dichotomy_published", "series_published")
CORRECTED = ("apdp", "uniform", "dichotomy", "series_sum")
#: The other papers' schedules.
OTHERS = ("dplloyd", "dplloyd_impr", "dpkccm_stepped", "silhouette")
ALGORITHMS = PUBLISHED + CORRECTED + OTHERS
FAMILIES = {**dict.fromkeys(PUBLISHED, "published"), **dict.fromkeys(CORRECTED, "corrected"),
            **dict.fromkeys(OTHERS, "other")}
#: 20 initial-centroid sets x 50 runs (as Ni et al. 2021).
PAPER_INITS, PAPER_RUNS = 20, 50
#: Steps of the non-private reference Lloyd from the shared starts.
REFERENCE_ITERATIONS = 20
#: The note scales every attribute to [0, 1].
INTERVAL = (0.0, 1.0)
_SCHEDULE_OF = dict(zip(PUBLISHED + CORRECTED, variants.SCHEDULE_NAMES * 2))


def point_seed(base_seed: int, point: Point) -> int:
    """A 63-bit seed from the study's base seed and the point."""
    return stable_seed(base_seed, {"paper": "apdp", **asdict(point)})


def study_config(point: Point, d: int, n_records: int) -> DPLloydConfig:
    """The engine configuration of a point on [0, 1]^d; ``n_records`` is the record count that
    epsilon_m reads (public for the private algorithms; the exact one as published, a leak the
    configuration records)."""
    if point.case not in CASES:
        raise ValueError(f"case must be one of {sorted(CASES)}, got {point.case!r}")
    k, eps, box = CASES[point.case][1], point.epsilon, unit_box(d)
    algorithm = point.algorithm
    if algorithm in PUBLISHED:
        return variants.as_published(k, eps, box, n_records=n_records,
                                     schedule=_SCHEDULE_OF[algorithm])
    if algorithm in CORRECTED:
        return variants.corrected(k, eps, box, n_records=n_records,
                                  schedule=_SCHEDULE_OF[algorithm])
    if algorithm == "dplloyd":
        return dplloyd(k, eps, box)
    if algorithm == "dplloyd_impr":
        return dplloyd_impr(k, eps, box, n_records=n_records)  # rho for a centred release
    if algorithm == "dpkccm_stepped":
        return dpkccm_config("allocation_k", k, eps, box, centred=True)
    if algorithm == "silhouette":
        return silhouette.corrected(k, eps, box)
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def shared_starts(case: str, d: int, base_seed: int, inits: int, runs: int) -> np.ndarray:
    """The case's ``inits`` sphere-packing draws (public box and k only), each repeated for
    ``runs`` consecutive replicas: (inits * runs, k, d). Every private algorithm at every
    epsilon of the case starts from these."""
    config = DPLloydConfig(CASES[case][1], unit_box(d), [1.0], start=PublicStart(sphere_packing))
    seq = np.random.SeedSequence(stable_seed(base_seed, {"paper": "apdp", "starts": case}))
    return shared_initial_centroids(config, inits, runs, seq)


def _curve(sse_history: np.ndarray, final: np.ndarray, n: int, groups: int) -> dict[str, str]:
    """The mean NICV after 0..T iterations and its standard error (over the groups' means),
    as JSON lists; ``final`` (R,) is the released centroids' NICV in the same scaling."""
    nicv = np.column_stack([sse_history / n, final])
    stats = [summarise(nicv[:, t], groups, "c") for t in range(nicv.shape[1])]
    return {"curve_nicv_mean": json.dumps([float(f"{s['c_mean']:.8g}") for s in stats]),
            "curve_nicv_se": json.dumps([float(f"{s['c_se']:.4g}") for s in stats])}


def run_point(data: dict[str, Dataset], point: Point, *, base_seed: int,
              starts: np.ndarray | None, inits: int = PAPER_INITS,
              runs: int = PAPER_RUNS) -> dict[str, object]:
    """Run one point and return its summary row (``replicas`` = inits x runs: the sweep adds
    its cell parameters ``inits`` and ``runs`` as columns beside it).

    ``data`` holds the public-bounds scaling under ``"public"`` and the note's min-max one
    under ``"paper"`` (the published family runs there; its centroids are mapped back to the
    public scaling before any metric). ``starts`` are :func:`shared_starts` (ignored by the
    published family, which draws its starts from the data).
    """
    inits, runs = check_positive_int(inits, "inits"), check_positive_int(runs, "runs")
    family = FAMILIES.get(point.algorithm)
    public = data["public"]
    source = data["paper"] if family == "published" else public
    X = np.asarray(source.X)
    N, d = X.shape
    n_records = N if family == "published" else public.public_n_records
    if n_records is None:
        raise ValueError(f"case {point.case!r} states no public record count (eq. 4)")
    config = study_config(point, d, n_records)
    seed = point_seed(base_seed, point)
    shared = family != "published"
    start = time.perf_counter()
    result = run(X, config, seed, replicas=inits * runs,
                 initial_centroids=starts if shared else None, record_history=True)
    runtime = time.perf_counter() - start
    centroids = result.centroids
    groups = inits if shared else 1
    # the curve in the scaling the run saw (the published family's min-max one: its schedules
    # compare with each other), the final metrics in the public scaling (all comparable)
    if source is public:
        squared, plain = metrics.nicv_pair(X, centroids)
        own = squared
    else:
        own = metrics.nicv(X, centroids)
        squared, plain = metrics.nicv_pair(np.asarray(public.X),
                                           to_public_space(centroids, source, public))
    curve = _curve(result.sse_history, own, N, groups)
    spent = np.asarray(result.spent)
    apdp = variants.plan(point.epsilon, n_records, CASES[point.case][1], d,
                         corrected=family != "published")
    return {
        "case": point.case, "dataset": CASES[point.case][0], "k": CASES[point.case][1],
        "algorithm": point.algorithm, "family": family, "epsilon": point.epsilon,
        "branch": apdp.branch if point.algorithm in PUBLISHED + CORRECTED else "-",
        "epsilon_m": apdp.epsilon_m, "n_records": n_records,
        "iterations": config.iterations, "N": N, "d": d,
        "replicas": inits * runs, "groups": groups, "point_seed": seed,
        "bounds": "paper" if family == "published" else "public",
        **summarise(squared, groups, "nicv"), **summarise(plain * N, groups, "sse_note"),
        **summarise(result.iterations_run.astype(float), groups, "iterations_run"),
        **curve, "curve_scaling": "paper" if family == "published" else "public",
        "epsilon_spent_mean": float(spent.mean()), "epsilon_spent_max": float(spent.max()),
        "overspend_max": float(spent.max() / point.epsilon),
        "is_private": result.ledger.is_private, "run_s": runtime / (inits * runs),
    }


def reference_row(data: dict[str, Dataset], case: str, starts: np.ndarray,
                  inits: int = PAPER_INITS) -> dict[str, object]:
    """Non-private Lloyd (REFERENCE_ITERATIONS steps) from the case's shared starts."""
    X = np.asarray(data["public"].X)
    first = starts[::starts.shape[0] // inits][:inits]
    nicv = metrics.nicv(X, lloyd_reference(X, first, REFERENCE_ITERATIONS))
    return {"case": case, "dataset": CASES[case][0], "k": CASES[case][1],
            "algorithm": "lloyd", "family": "reference", "branch": "-",
            "iterations": REFERENCE_ITERATIONS, "N": X.shape[0], "d": X.shape[1],
            "replicas": inits, "groups": 1, "bounds": "public", **summarise(nicv, 1, "nicv"),
            "is_private": False}


def points(case: str, epsilons: tuple[float, ...] = EPSILONS,
           algorithms: tuple[str, ...] = ALGORITHMS) -> list[Point]:
    """Every algorithm at every epsilon of a case."""
    if case not in CASES:
        raise ValueError(f"case must be one of {sorted(CASES)}, got {case!r}")
    return [Point(case, a, float(e)) for a in algorithms for e in epsilons]


def load_public(case: str) -> Dataset:
    """The case's data scaled from its public bounds to [0, 1]^d (the private algorithms')."""
    dataset, _, paper = CASES[case]
    return load(dataset, paper=paper).scaled(INTERVAL)


def load_case(case: str) -> dict[str, Dataset]:
    """The case's data on [0, 1]^d: public bounds, and the note's min-max scaling (a leak,
    measured on purpose for the published family)."""
    dataset, _, paper = CASES[case]
    raw = load(dataset, paper=paper)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        minmax = raw.with_paper_bounds().scaled(INTERVAL)
    return {"public": raw.scaled(INTERVAL), "paper": minmax}


def evaluate_cell(case: str, *, base_seed: int, inits: int = PAPER_INITS,
                  runs: int = PAPER_RUNS, epsilons: tuple[float, ...] = EPSILONS,
                  algorithms: tuple[str, ...] = ALGORITHMS, part: int = 0,
                  parts: int = 1) -> pd.DataFrame:
    """Every point of one case (one sweep cell), plus the non-private reference row; with
    ``parts`` > 1 only the ``part``-th block of the points
    (:func:`dpkmeans.study.parts.part_block`), the last part with the reference row."""
    todo = part_block(points(case, epsilons, algorithms), part, parts)
    data = load_case(case)
    d = np.asarray(data["public"].X).shape[1]
    starts = shared_starts(case, d, base_seed, inits, runs)
    rows = [run_point(data, p, base_seed=base_seed, starts=starts, inits=inits, runs=runs)
            for p in todo]
    if is_last_part(part, parts):
        rows.append(reference_row(data, case, starts, inits))
    return results_frame(rows)  # the reference row has no seed: the others' stay exact
