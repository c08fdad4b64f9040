"""The leaderboard (book: synthesis chapter): every corrected algorithm of the book
(:data:`dpkmeans.api.catalogue.CATALOGUE`) on every numeric dataset of the papers, on one epsilon
grid, with the same number of runs and the same non-private reference.

Each algorithm runs as ``DPKMeans(algorithm=...)`` runs it: its own initialisation (part of
the algorithm), its own rule for T, the public record count where its rule reads one. Every
point reports the relative squared NICV against non-private Lloyd from shared sphere-packing
starts, (NICV_dp - NICV_lloyd) / NICV_lloyd (book chapter 4), with a 95% interval over
its independent runs. Data are scaled from their public bounds to [0, 1]^d, as in the APDP
study whose cases (dataset, k) this reuses.

Equal privacy (book chapter 12, "Equal privacy"): every algorithm runs at every (case,
epsilon) at delta = 0 in its pure form (where it has one) and at delta = 1e-6 in each of
its forms (:func:`dpkmeans.api.catalogue.forms`): a DP-Lloyd algorithm's Gaussian twin and
PLD-calibrated Laplace form, an (epsilon, delta) algorithm under tight composition and as its
paper accounts it ("basic"), a pure standalone algorithm as it is. Every one of them runs under
add/remove adjacency (the comparison's relation, ``comparable``); differential identifiability
also runs under its own relation (replace) at delta = 0, off the comparison. A row's
``epsilon_at_delta`` is its run ledger's epsilon at the row's delta.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, FitInputs, build_at, forms
from dpkmeans.compute import metrics
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.apdp import study as apdp_study
from dpkmeans.study.parts import part_block
from dpkmeans.study.shared import Point, shared_initial_centroids, stable_seed, summarise, unit_box
from dpkmeans.validation import check_positive_int

__all__ = [
    "ALGORITHMS",
    "CASES",
    "COMPARED",
    "CONTENDERS",
    "DELTA",
    "DELTAS",
    "EPSILONS",
    "REFERENCE_STARTS",
    "RUNS",
    "TIGHT_FORMS",
    "BoardPoint",
    "Contender",
    "Point",
    "board_point",
    "contenders",
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
#: The delta of the (epsilon, delta) forms (the pure forms run at delta = 0).
DELTA = 1e-6
#: The two deltas of the equal-privacy comparison.
DELTAS = (0.0, DELTA)
#: The adjacency every algorithm of the comparison runs under.
COMPARED = "add/remove"
#: Accounted by tight composition (the run's ledger is calibrated to the target).
TIGHT_FORMS = ("gaussian", "laplace")
#: Independent runs per point.
RUNS = 50
#: Sphere-packing starts of the non-private reference (its best-of is not used: the mean).
REFERENCE_STARTS = 20
REFERENCE_ITERATIONS = apdp_study.REFERENCE_ITERATIONS


@dataclass(frozen=True)
class Contender:
    """One contender of the board: an algorithm in one form at one delta, under one relation.

    Parameters
    ----------
    algorithm : str
        A name of :data:`~dpkmeans.api.catalogue.CATALOGUE`.
    form : str
        One of ``forms(CATALOGUE[algorithm], delta)``.
    delta : float
        The target delta (0: pure).
    neighbour : str
        The adjacency it runs under.
    """

    algorithm: str
    form: str
    delta: float
    neighbour: str = COMPARED

    @property
    def name(self) -> str:
        """The display name, e.g. "dplloyd-impr (gaussian)" or "di (pure, replace)"."""
        off = "" if self.neighbour == COMPARED else f", {self.neighbour}"
        return f"{self.algorithm} ({self.form}{off})"

    @property
    def accounting(self) -> str:
        """"tight" for a form calibrated by tight composition, else "basic"."""
        return "tight" if self.form in TIGHT_FORMS else "basic"

    @property
    def comparable(self) -> bool:
        """Part of the equal-privacy comparison (it runs under :data:`COMPARED`)."""
        return self.neighbour == COMPARED


def contenders(deltas: tuple[float, ...] = DELTAS) -> tuple[Contender, ...]:
    """Every contender at ``deltas``: each algorithm of the catalogue in each of its forms
    under add/remove, and, at delta = 0, an algorithm proven under another relation also under
    its own (off the comparison).

    Parameters
    ----------
    deltas : tuple of float, default DELTAS
        The target deltas.

    Returns
    -------
    tuple of Contender
        By delta, then in the catalogue's order, then in the order of the forms.
    """
    out = []
    for delta in deltas:
        for name, entry in CATALOGUE.items():
            for form in forms(entry, delta, COMPARED):
                out.append(Contender(name, form, float(delta)))
                if delta == 0 and entry.neighbour != COMPARED:
                    out.append(Contender(name, form, 0.0, entry.neighbour))
    return tuple(out)


#: The board's contenders (:func:`contenders` at :data:`DELTAS`).
CONTENDERS: tuple[Contender, ...] = contenders()


@dataclass(frozen=True)
class BoardPoint:
    """One point of the board: a contender on a case at epsilon.

    Parameters
    ----------
    case : str
        A key of :data:`CASES`.
    algorithm : str
        A name of the catalogue.
    epsilon : float
        The target epsilon.
    form : str
        One of the algorithm's forms at ``delta``.
    delta : float
        The target delta.
    neighbour : str
        The adjacency it runs under.
    """

    case: str
    algorithm: str
    epsilon: float
    form: str
    delta: float
    neighbour: str

    @property
    def contender(self) -> Contender:
        """The point's contender."""
        return Contender(self.algorithm, self.form, self.delta, self.neighbour)


def _own(algorithm: str) -> tuple[str, float, str]:
    """(form, delta, relation) of an algorithm as it runs by itself (``choice.build``)."""
    entry = CATALOGUE[algorithm]
    if entry.needs_delta:
        return ("gaussian" if entry.tight_native else "basic"), DELTA, entry.neighbour
    return "pure", 0.0, entry.neighbour


def board_point(point: Point | BoardPoint) -> BoardPoint:
    """A :class:`Point` as the board runs it: the algorithm as it runs by itself (its own
    form, delta and relation); a :class:`BoardPoint` unchanged."""
    if isinstance(point, BoardPoint):
        return point
    if point.algorithm not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {point.algorithm!r}")
    return BoardPoint(point.case, point.algorithm, point.epsilon, *_own(point.algorithm))


def point_seed(base_seed: int, point: Point | BoardPoint) -> int:
    """The seed of a point: that of the algorithm on the case at epsilon when it runs as by
    itself (its own form and relation; a pure form at any delta), else one that also hashes
    the form, the delta and the relation."""
    p = board_point(point)
    key: dict[str, object] = {"study": "leaderboard", "case": p.case, "algorithm": p.algorithm,
                              "epsilon": p.epsilon}
    form, delta, neighbour = _own(p.algorithm)
    if (p.form, p.neighbour) != (form, neighbour) or (p.form != "pure" and p.delta != delta):
        key.update(form=p.form, delta=p.delta, neighbour=p.neighbour)
    return stable_seed(base_seed, key)


def config_of(point: Point | BoardPoint, d: int, n_records: int) -> object:
    """The point's configuration, as :func:`dpkmeans.api.catalogue.build_at` builds it (public
    N given)."""
    p = board_point(point)
    if p.case not in CASES:
        raise ValueError(f"case must be one of {sorted(CASES)}, got {p.case!r}")
    if p.algorithm not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {p.algorithm!r}")
    k = CASES[p.case][1]
    return build_at(CATALOGUE[p.algorithm],
                    FitInputs(k, p.epsilon, unit_box(d), max_iter=5, n_records=n_records),
                    p.delta, form=p.form, neighbour=p.neighbour)


def _noise(config: object, releases: object) -> str:
    """The noise: the loop's noise type, or a standalone algorithm's release kinds."""
    noise = getattr(config, "noise", None)
    if noise is not None:
        return str(noise)
    return "+".join(sorted({r.kind for r in releases}))  # type: ignore[attr-defined]


def reference_nicv(X: np.ndarray, case: str, base_seed: int,
                   starts: int = REFERENCE_STARTS) -> np.ndarray:
    """Non-private Lloyd's squared NICV from ``starts`` shared sphere-packing starts."""
    k, d = CASES[case][1], X.shape[1]
    config = DPLloydConfig(k, unit_box(d), [1.0], start=PublicStart(sphere_packing))
    seq = np.random.SeedSequence(stable_seed(base_seed, {"study": "leaderboard",
                                                          "reference": case}))
    first = shared_initial_centroids(config, starts, 1, seq)
    return np.asarray(metrics.nicv(X, lloyd_reference(X, first, REFERENCE_ITERATIONS)))


def run_point(X: np.ndarray, n_records: int, point: Point | BoardPoint, reference: float, *,
              base_seed: int, runs: int = RUNS, _done: dict | None = None) -> dict[str, object]:
    """One point's summary row: relative squared NICV against ``reference`` (the mean
    non-private NICV), its 95% interval over ``runs`` independent runs, what was spent (basic
    composition, ``epsilon_spent_max``) and the run ledger's epsilon at the point's delta
    (``epsilon_at_delta``). A :class:`Point` runs the algorithm as by itself."""
    runs = check_positive_int(runs, "runs")
    p = board_point(point)
    N, d = X.shape
    seed = point_seed(base_seed, p)
    key = (p.algorithm, p.form, p.neighbour, p.epsilon, seed, runs)
    if _done is not None and key in _done:  # a pure form at another delta: the same runs
        config, result, runtime = _done[key]
    else:
        config = config_of(p, d, n_records)
        start = time.perf_counter()
        result = run(X, config, seed, replicas=runs)
        runtime = time.perf_counter() - start
        if _done is not None and p.form == "pure":
            _done[key] = (config, result, runtime)
    relative = (np.asarray(metrics.nicv(X, result.centroids)) - reference) / reference
    spent = np.asarray(result.spent)
    contender = p.contender
    return {
        "case": p.case, "dataset": CASES[p.case][0], "k": CASES[p.case][1],
        "algorithm": p.algorithm, "contender": contender.name, "form": p.form,
        "accounting": contender.accounting, "noise": _noise(config, result.ledger.releases()),
        "epsilon": p.epsilon, "delta": p.delta, "neighbour": p.neighbour,
        "comparable": contender.comparable,
        "N": N, "d": d, "n_records": n_records, "replicas": runs, "point_seed": seed,
        "iterations": config.iterations, "nicv_reference": reference,  # type: ignore[attr-defined]
        **summarise(relative, 1, "rel_nicv"),
        "epsilon_spent_max": float(spent.max()),
        "epsilon_at_delta": float(result.ledger.epsilon_at(p.delta)),
        "is_private": result.ledger.is_private,
        "run_s": runtime / runs,
    }


def evaluate_cell(case: str, *, base_seed: int, runs: int = RUNS,
                  epsilons: tuple[float, ...] = EPSILONS,
                  algorithms: tuple[str, ...] = ALGORITHMS,
                  deltas: tuple[float, ...] = DELTAS, part: int = 0,
                  parts: int = 1) -> pd.DataFrame:
    """Every contender (:func:`contenders`) of ``algorithms`` at every epsilon on one case (one
    sweep cell), by contender then epsilon; with ``parts`` > 1, only the ``part``-th block of
    those points (:func:`dpkmeans.study.parts.part_block`).

    Parameters
    ----------
    case : str
        A key of :data:`CASES`.
    base_seed : int
        The study's base seed (every point derives its seed from it, :func:`point_seed`).
    runs : int, default RUNS
        Independent runs per point.
    epsilons : tuple of float, default EPSILONS
        The target epsilons.
    algorithms : tuple of str, default ALGORITHMS
        The algorithms whose contenders run.
    deltas : tuple of float, default DELTAS
        The target deltas.
    part : int, default 0
        The block of the points computed (from 0).
    parts : int, default 1
        How many blocks the cell's points are split into.

    Returns
    -------
    pandas.DataFrame
        One row per point (:func:`run_point`).
    """
    todo = part_block([BoardPoint(case, c.algorithm, float(e), c.form, c.delta, c.neighbour)
                       for c in contenders(deltas) if c.algorithm in algorithms
                       for e in epsilons], part, parts)
    public = apdp_study.load_public(case)
    X = np.asarray(public.X)
    n_records = public.public_n_records
    if n_records is None:
        raise ValueError(f"case {case!r} states no public record count")
    reference = float(reference_nicv(X, case, base_seed).mean())
    done: dict = {}
    return pd.DataFrame([run_point(X, n_records, p, reference, base_seed=base_seed, runs=runs,
                                   _done=done) for p in todo])
