"""Which algorithm at your (epsilon, delta), and how close to Lloyd it comes (book: synthesis
chapter, "Choosing an algorithm"), from public quantities only and from the committed results
alone: :func:`recommend`, its held-out validation (:func:`validation_rows`) and the model as a
small JSON for a calculator that runs without Python (:func:`export_model`).

The evidence
------------
Every row of the committed tables that measures a private algorithm's *relative objective*:
its NICV over non-private Lloyd's, minus one, ``NICV_dp / NICV_lloyd - 1`` (0: as good as
Lloyd; 1: twice Lloyd's NICV), with its 95% interval over independent runs
(:func:`evidence`):

- the leaderboard (``leaderboard.csv``): ``rel_nicv_*``, against Lloyd's mean over shared
  sphere-packing starts; every corrected algorithm in each of its forms, on the papers' nine
  numeric datasets, at seven epsilons, at delta = 0 and 1e-6;
- FastLloyd's home ground (``fastlloyd_home.csv``): ``ratio_* - 1``, the same reference, on
  twenty generated mixtures of 10^4 records (k, d up to 16 and 32), at epsilon 0.1 and 1;
- FastLloyd's protocol (``fastlloyd_protocol.csv``): ``nicv_* / nicv_lloyd - 1`` (Lloyd from
  sphere-packing starts as well), on iris, wine, breast cancer, adult and the G2 sets (d up to
  256). Only its pure rows (delta = 0) are used: its (epsilon, delta) rows run at
  delta = 1 / (N ln N), which depends on the dataset's size, so they share no delta with the
  other tables (only the G2 sets, all of 2,048 records, share one among themselves) and
  cannot be compared with them at equal privacy;
- the outside algorithms' home ground (``home_ground.csv``): ``loss / reference - 1`` on a
  mixture of 10^5 records in 100 dimensions, k up to 64, at epsilon 1. Its reference is
  non-private k-means++ (scikit-learn), not Lloyd from sphere-packing starts: another
  yardstick, and k-means++ seeding usually reaches the better optimum, so these relative
  objectives are, if anything, pessimistic.

A row's ``algorithm`` is its contender (an algorithm in one form, ``dplloyd-impr (gaussian)``),
as the leaderboard ranks them. A row takes part in the comparison at its own delta, and a pure
algorithm whose only form at delta > 0 is its pure one (``balcan``) also in the comparison at
delta > 0, as on the leaderboard (:func:`dpkmeans.api.catalogue.forms`).

Equal privacy
-------------
The rows fall into *privacy classes*, one per measured (delta, neighbour relation): delta = 0
and 1e-6 under add/remove adjacency, and delta = 0 under replace adjacency (``di``, the only
algorithm the book ran under it). A request is answered from one class only, so that every
algorithm it compares gives the same guarantee: the class of its relation with the largest
measured delta not above the requested one. A request at delta = 0 reads only pure rows; one
at delta >= 1e-6 only the rows at 1e-6, whose algorithms meet the requested (epsilon, delta)
too, so a request at a larger delta gets a conservative answer; and a request with
0 < delta < 1e-6 reads the pure rows, the only measured algorithms that meet it (the reason
says so). Under replace adjacency the only measured algorithm is ``di``.

The model
---------
A request is placed by three public quantities, in log10: the signal ``N epsilon / k`` (a
cluster's sum holds about N / k records and its noise has a scale of about 1 / epsilon, so the
signal is their ratio; book chapter 12), the dimension ``d`` and ``k``. Each coordinate is standardised by the class's
evaluated regimes (a *regime* is one dataset at one k and epsilon), and the request's
:data:`NEIGHBOURS` nearest regimes, by Euclidean distance, are its evidence:

- an algorithm's prediction is the mean of its log10(1 + relative objective) over the
  neighbours it was measured at, weighted by 1 / distance^2 (at a regime the book measured,
  the measurement itself);
- its interval is that mean plus and minus the neighbours' spread (their standard deviation)
  widened by the class's held-out residuals: the widening is the :data:`LEVEL` quantile, over
  every (regime, algorithm) of the class predicted with its dataset left out, of how far the
  result fell outside the spread (split-conformal, so the intervals are calibrated on held-out
  datasets, not on the data they predict);
- the favoured algorithm is the lowest prediction among the *candidates*: at a regime the book
  evaluated, the algorithms measured there (so the answer is that regime's best), elsewhere
  those measured at the most of the neighbours (at every one of them, wherever such algorithms
  exist), so that the algorithms compared rest on the same evidence. The others are listed
  beside them, with how many neighbours they rest on.

Why this model: the relative objective is far from linear in these quantities (it falls
steeply with the signal and then flattens at Lloyd's level), and the datasets differ by more
than their public quantities explain, so a nearest-regime average says what was measured
where, names the regimes it rests on, and needs no fitted shape; the widening makes the
interval as wide as held-out data showed it must be. It is small enough for a browser: a few
hundred regimes and a handful of numbers per class (:func:`export_model`). Its two settings,
:data:`NEIGHBOURS` and the candidates' rule, were set by reasoning, not tuned on the
validation.

Outside
-------
A request lies *outside* everything the book measured at its privacy when one of its three
coordinates lies beyond the smallest or largest of the class's regimes, or when its nearest
regime is farther from it than any evaluated regime is from the nearest regime of another
dataset (the class's *reach*: the largest distance at which the evidence was ever asked to
predict a dataset it did not hold). The answer is still given, and the reason says plainly
that it extrapolates.

The validation
--------------
:func:`validation_rows` leaves one dataset out at a time: the model is fitted to the other
datasets of the class (its standardisation, reach and widening too) and predicts every regime of
the left-out dataset, choosing among the algorithms measured there. A regime's interval
*covers* when it holds the measured mean; the recommendation is a *hit* when it names the
measured best or an algorithm whose mean lies within the best's 95% interval.
:func:`validation_summary` aggregates them; ``data/results/recommend_validation.csv`` is
written by :func:`write_validation` (``make reproduce``).

The JSON (:func:`export_model`)
-------------------------------
``{"format": "dpkmeans-recommend", "version": 1, "measure", "level", "neighbours", "exact",
"slack", "features", "classes": [...]}``: ``exact`` is :data:`EXACT`, ``slack`` how far beyond a
coordinate's range still counts as inside; each class is ``{"delta", "neighbour",
"algorithms": [names], "mean": [3], "scale": [3], "low": [3], "high": [3], "reach", "widen",
"regimes": [{"label", "x": [3], "y": [one per algorithm, null where not measured]}]}``, with
``x`` the regime's (log10(N epsilon / k), log10 d, log10 k), ``low`` and ``high`` their
smallest and largest, and ``y`` log10(1 + relative objective). Nothing else is needed: a
calculator reproduces :func:`recommend` from it (the reason's words aside). The book's does,
in about thirty lines of JavaScript (``recommend`` in ``book/_ext/static/plan_calculator.js``):
it picks the class, standardises the request, takes the :data:`NEIGHBOURS` nearest regimes,
and for each algorithm the weighted mean, the spread widened by ``widen``, and the support;
then the candidates, the favoured algorithm and the outside test, as above.

Both sides standardise a regime as ``(x - mean) / scale`` and add in the same order (the
neighbours by distance, ties by their order in the file), so they agree to the last bit or
so (``Math.log10`` and ``**`` may differ from C's in the last bit).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, forms
from dpkmeans.data import get_registry
from dpkmeans.files import write_csv, write_text
from dpkmeans.study.committed import committed_file
from dpkmeans.study.reading import number
from dpkmeans.study.sweep import FLOAT_FORMAT
from dpkmeans.synthesis.leaderboard import COMPARED, DELTA
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int

__all__ = [
    "COLUMNS",
    "EXACT",
    "LEVEL",
    "NEIGHBOURS",
    "RELATIONS",
    "SOURCES",
    "VALIDATION",
    "Recommendation",
    "evidence",
    "export_model",
    "model_json",
    "recommend",
    "validation_rows",
    "validation_summary",
    "write_validation",
]

#: The intervals' target coverage (of a held-out dataset's result).
LEVEL = 0.9
#: The evaluated regimes a prediction rests on.
NEIGHBOURS = 5
#: A regime closer than this to the request (standardised units) is the request itself.
EXACT = 1e-9
#: The neighbour relations the book measured.
RELATIONS = (COMPARED, "replace")
#: The committed tables the evidence is read from (their stem in ``data/results``).
SOURCES = ("leaderboard", "fastlloyd_home", "fastlloyd_protocol", "home_ground")
#: The validation's results file.
VALIDATION = "data/results/recommend_validation.csv"
#: The evidence's columns (:func:`evidence`).
COLUMNS = ("source", "dataset", "generated", "label", "N", "d", "k", "epsilon", "delta",
           "neighbour", "algorithm", "rel", "rel_lo", "rel_hi")
#: Decimals kept of log10(1 + relative objective): far below the runs' own error, and the
#: JSON stays small.
_DECIMALS = 6
#: How far outside a coordinate's range still counts as inside (log10 units).
_SLACK = 1e-9
_FEATURES = ("log10(N epsilon / k)", "log10(d)", "log10(k)")
#: The tables whose every dataset is generated (a mixture drawn for the study).
_GENERATED = ("fastlloyd_home", "home_ground")


# --- the evidence --------------------------------------------------------------------------

def _rows(source: str, t: pd.DataFrame, dataset: object, label: object, algorithm: object,
          rel: object, lo: object, hi: object, neighbour: object = COMPARED) -> pd.DataFrame:
    out = pd.DataFrame({
        "source": source, "dataset": dataset, "label": label, "N": t["N"].astype(int),
        "d": t["d"].astype(int), "k": t["k"].astype(int),
        "epsilon": t["epsilon"].astype(float), "delta": t["delta"].astype(float),
        "neighbour": neighbour, "algorithm": algorithm, "rel": rel, "rel_lo": lo,
        "rel_hi": hi}).reset_index(drop=True)
    out["generated"] = (source in _GENERATED) | out["dataset"].isin(
        list(get_registry().generated))
    return out[list(COLUMNS)]


def _leaderboard(t: pd.DataFrame) -> pd.DataFrame:
    return _rows("leaderboard", t, t["dataset"], t["dataset"], t["contender"],
                 t["rel_nicv_mean"], t["rel_nicv_ci_low"], t["rel_nicv_ci_high"],
                 t["neighbour"])


def _fastlloyd_home(t: pd.DataFrame) -> pd.DataFrame:
    t = t[t["is_private"].astype(bool)]
    names = [f"fastlloyd_home_k{k}_d{d}" for k, d in zip(t["k"], t["d"])]
    labels = [f"mixture (N={n:,}, d={d})" for n, d in zip(t["N"], t["d"])]
    return _rows("fastlloyd_home", t, names, labels, t["contender"], t["ratio_mean"] - 1,
                 t["ratio_ci_low"] - 1, t["ratio_ci_high"] - 1)


def _fastlloyd_protocol(t: pd.DataFrame) -> pd.DataFrame:
    t = t[t["form"] == "pure"]  # its (epsilon, delta) rows: a delta of each dataset's own
    lloyd = t["nicv_lloyd"]
    return _rows("fastlloyd_protocol", t, t["dataset"], t["dataset"],
                 [f"{a} (pure)" for a in t["algorithm"]], t["nicv_mean"] / lloyd - 1,
                 t["nicv_ci_low"] / lloyd - 1, t["nicv_ci_high"] / lloyd - 1)


def _home_ground(t: pd.DataFrame) -> pd.DataFrame:
    private = t["is_private"].astype(bool)
    reference = t[~private].set_index("k")["loss_mean"]
    t = t[private]
    ref = t["k"].map(reference).to_numpy(float)
    contender = [_own_contender(a, float(delta)) for a, delta in zip(t["algorithm"], t["delta"])]
    labels = [f"mixture (N={n:,}, d={d})" for n, d in zip(t["N"], t["d"])]
    return _rows("home_ground", t, "home_ground", labels, contender, t["loss_mean"] / ref - 1,
                 t["loss_ci_low"] / ref - 1, t["loss_ci_high"] / ref - 1)


def _own_contender(algorithm: str, delta: float) -> str:
    """The contender an algorithm is when it runs as by itself at ``delta`` (its default form)."""
    if algorithm not in CATALOGUE:
        raise ValueError(f"the home ground names an algorithm the catalogue does not hold: "
                         f"{algorithm!r}")
    own = forms(CATALOGUE[algorithm], delta, COMPARED)
    if not own:
        raise ValueError(f"{algorithm!r} has no form at delta = {delta:g}")
    return f"{algorithm} ({own[0]})"


_READERS = {"leaderboard": _leaderboard, "fastlloyd_home": _fastlloyd_home,
            "fastlloyd_protocol": _fastlloyd_protocol, "home_ground": _home_ground}


def _pure_at_delta(rows: pd.DataFrame) -> pd.DataFrame:
    """The pure rows of algorithms whose form at delta > 0 is their pure one (they meet every
    delta as they are), copied into the comparison at :data:`DELTA`, as the leaderboard runs
    them; a copy the table already holds is dropped."""
    base = rows["algorithm"].str.split(" (", n=1, regex=False).str[0]
    meets = [a.endswith("(pure)") and b in CATALOGUE and "pure" in forms(CATALOGUE[b], DELTA,
                                                                         COMPARED)
             for a, b in zip(rows["algorithm"], base)]
    copies = rows[np.asarray(meets) & (rows["delta"] == 0)
                  & (rows["neighbour"] == COMPARED)].assign(delta=DELTA)
    both = pd.concat([rows, copies], ignore_index=True)
    key = ["source", "dataset", "k", "epsilon", "delta", "neighbour", "algorithm"]
    return both.drop_duplicates(key, keep="first").reset_index(drop=True)


def evidence(folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The rows the model rests on, from the committed tables (module docstring).

    Parameters
    ----------
    folder : path-like or None, default None
        The folder holding the tables of :data:`SOURCES` (``<stem>.csv``); None reads the
        book's committed ones (:func:`dpkmeans.study.committed.committed_file`).

    Returns
    -------
    pandas.DataFrame
        One row per (source, dataset, k, epsilon, delta, relation, contender), with the
        columns of :data:`COLUMNS`: ``dataset`` names the data (two tables that ran the same
        file share it), ``generated`` says whether they were drawn for a study (a mixture, a
        G2 set) rather than collected, ``label`` is how a regime is named to a reader,
        ``delta`` the delta of the comparison the row takes part in, ``rel`` the relative
        objective and ``rel_lo``, ``rel_hi`` its 95% interval.

    Raises
    ------
    ValueError
        If a table lacks a column the evidence reads.
    """
    frames = []
    for source in SOURCES:
        name = f"{source}.csv"
        path = (committed_file(f"data/results/{name}") if folder is None
                else Path(folder) / name)
        table = pd.read_csv(path)
        try:
            frames.append(_READERS[source](table))
        except KeyError as missing:
            raise ValueError(f"{path} has no column {missing}: not the book's {name}") from None
    return _pure_at_delta(pd.concat(frames, ignore_index=True))


def _checked(frame: pd.DataFrame) -> pd.DataFrame:
    """The evidence, refused (ValueError) where it cannot be read as such."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame of evidence rows, got "
                         f"{type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the evidence columns {missing} (see recommend.evidence)")
    if frame.empty:
        raise ValueError("frame holds no evidence row")
    numbers = frame[["N", "d", "k", "epsilon", "delta", "rel"]].apply(
        pd.to_numeric, errors="coerce").to_numpy(float)
    if not np.isfinite(numbers).all():
        raise ValueError("frame has a missing or non-finite N, d, k, epsilon, delta or rel")
    N, d, k, eps, delta, rel = numbers.T
    if (N < 1).any() or (d < 1).any() or (k < 1).any() or (eps <= 0).any():
        raise ValueError("frame has a row with N, d or k below 1 or epsilon not above 0")
    if ((delta < 0) | (delta >= 1)).any() or (rel <= -1).any():
        raise ValueError("frame has a delta outside [0, 1) or a relative objective <= -1")
    if not set(frame["neighbour"]) <= set(RELATIONS):
        raise ValueError(f"frame has a neighbour relation outside {RELATIONS}")
    if frame.duplicated(["source", "dataset", "k", "epsilon", "delta", "neighbour",
                         "algorithm"]).any():
        raise ValueError("frame holds an algorithm twice at one regime")
    return frame


# --- the model -----------------------------------------------------------------------------

def _features(N: object, epsilon: object, k: object, d: object) -> np.ndarray:
    """(log10(N epsilon / k), log10 d, log10 k) of each regime, one row each."""
    rows = [(math.log10(n * e / c), math.log10(m), math.log10(c))
            for n, e, c, m in zip(np.asarray(N, float), np.asarray(epsilon, float),
                                  np.asarray(k, float), np.asarray(d, float))]
    return np.asarray(rows, float).reshape(-1, 3)


@dataclass(frozen=True, eq=False)
class _Class:
    """One privacy class: its regimes (features ``x``, results ``y`` per algorithm, NaN where
    not measured, with their 95% interval ``lo``, ``hi``; the dataset each regime is of and
    whether it is generated), the standardisation and, once calibrated, the reach and the
    widening."""

    delta: float
    neighbour: str
    algorithms: tuple[str, ...]
    labels: tuple[str, ...]
    groups: np.ndarray
    generated: np.ndarray
    x: np.ndarray
    y: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    reach: float = math.nan
    widen: float = math.nan

    @property
    def z(self) -> np.ndarray:
        return (self.x - self.mean) / self.scale


def _standardised(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 0, scale, 1.0)


def _class_of(rows: pd.DataFrame, delta: float, neighbour: str) -> _Class:
    """The class's regimes, in a fixed order (source, dataset, k, epsilon), uncalibrated."""
    key = ["source", "dataset", "k", "epsilon"]
    order = {s: i for i, s in enumerate(SOURCES)}
    regimes = rows.drop_duplicates(key).assign(_s=lambda r: r["source"].map(order).fillna(
        len(SOURCES))).sort_values(["_s", "dataset", "k", "epsilon"]).reset_index(drop=True)
    algorithms = tuple(_in_catalogue_order(rows["algorithm"].unique()))
    where = {tuple(r): i for i, r in enumerate(regimes[key].itertuples(index=False))}
    column = {a: j for j, a in enumerate(algorithms)}
    shape = (len(regimes), len(algorithms))
    y, lo, hi = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    i = [where[tuple(r)] for r in rows[key].itertuples(index=False)]
    j = [column[a] for a in rows["algorithm"]]
    y[i, j] = np.round(np.log10(1.0 + rows["rel"].to_numpy(float)), _DECIMALS)
    lo[i, j], hi[i, j] = rows["rel_lo"].to_numpy(float), rows["rel_hi"].to_numpy(float)
    x = _features(regimes["N"], regimes["epsilon"], regimes["k"], regimes["d"])
    labels = tuple(f"{lab}, k={k}, ε={e:g}" for lab, k, e in zip(
        regimes["label"], regimes["k"], regimes["epsilon"]))
    return _Class(float(delta), neighbour, algorithms, labels,
                  regimes["dataset"].to_numpy(str), regimes["generated"].to_numpy(bool), x, y,
                  lo, hi, *_standardised(x))


def _in_catalogue_order(names: Sequence[str]) -> list[str]:
    order = list(CATALOGUE)

    def key(name: str) -> tuple[int, str]:
        base = name.split(" (", 1)[0]
        return (order.index(base) if base in order else len(order), name)

    return sorted(names, key=key)


def _subset(c: _Class, keep: np.ndarray) -> _Class:
    """The class restricted to the regimes ``keep``, standardised on them, uncalibrated."""
    x = c.x[keep]
    return _Class(c.delta, c.neighbour, c.algorithms, tuple(np.asarray(c.labels)[keep]),
                  c.groups[keep], c.generated[keep], x, c.y[keep], c.lo[keep], c.hi[keep],
                  *_standardised(x))


@dataclass(frozen=True)
class _Prediction:
    """Predictions for n requests of one class: per algorithm (columns) the mean ``m`` and
    spread ``s`` in log10(1 + relative objective), the ``support`` (neighbours it was
    measured at) and whether it was measured at the request itself (``exact``); the
    neighbours (``near``, regime indices by distance) and their distances."""

    m: np.ndarray
    s: np.ndarray
    support: np.ndarray
    exact: np.ndarray
    near: np.ndarray
    distance: np.ndarray


def _predict(c: _Class, x: np.ndarray, among: np.ndarray | None = None) -> _Prediction:
    """Module docstring, "The model"; ``among`` (n x algorithms) limits each request to some
    algorithms (the validation: those measured at the held-out regime)."""
    z = (x - c.mean) / c.scale
    dist = np.sqrt(((z[:, None, :] - c.z[None, :, :]) ** 2).sum(axis=2))
    K = min(NEIGHBOURS, len(c.x))
    near = np.argsort(dist, axis=1, kind="stable")[:, :K]
    d = np.take_along_axis(dist, near, axis=1)
    y = c.y[near]  # (n, K, algorithms)
    measured = ~np.isnan(y)
    if among is not None:
        measured &= among[:, None, :]
    at = d < EXACT
    exact = at[:, :, None] & measured
    inverse = 1.0 / np.where(at, 1.0, d) ** 2
    here = exact.any(axis=1)
    w = np.where(here[:, None, :], exact, measured * inverse[:, :, None])
    y0 = np.where(measured, y, 0.0)
    support = measured.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (w * y0).sum(axis=1) / w.sum(axis=1)
        u = y0.sum(axis=1) / support
        s = np.sqrt((np.where(measured, y0 - u[:, None, :], 0.0) ** 2).sum(axis=1) / support)
    return _Prediction(m, s, support, here, near, d)


def _scores(c: _Class) -> np.ndarray:
    """How far each (regime, algorithm) result of the class fell outside its neighbours' spread
    when predicted with its dataset left out: |y - m| - s."""
    out = []
    for group in np.unique(c.groups):
        held = c.groups == group
        if held.all():
            continue
        p = _predict(_subset(c, ~held), c.x[held])
        score = np.abs(c.y[held] - p.m) - p.s
        out.append(score[np.isfinite(score)])
    return np.concatenate(out) if out else np.empty(0)


def _quantile(scores: np.ndarray, level: float = LEVEL) -> float:
    """The split-conformal quantile: the ceil((n + 1) level)-th smallest score (0 when none;
    the largest when n is too small for the level)."""
    if not len(scores):
        return 0.0
    ordered = np.sort(scores)
    rank = min(math.ceil((len(ordered) + 1) * level), len(ordered))
    return float(ordered[rank - 1])


def _reach(c: _Class) -> float:
    """The largest distance from a regime to the nearest regime of another dataset."""
    z = c.z
    dist = np.sqrt(((z[:, None, :] - z[None, :, :]) ** 2).sum(axis=2))
    other = c.groups[:, None] != c.groups[None, :]
    if not other.any():
        return 0.0
    return float(np.where(other, dist, np.inf).min(axis=1)[other.any(axis=1)].max())


def _calibrated(c: _Class) -> _Class:
    return replace(c, reach=_reach(c), widen=_quantile(_scores(c)))


def _fit(frame: pd.DataFrame) -> dict[tuple[float, str], _Class]:
    """Every privacy class of the evidence, calibrated."""
    frame = _checked(frame)
    return {(float(delta), str(rel)): _calibrated(_class_of(rows, float(delta), str(rel)))
            for (delta, rel), rows in frame.groupby(["delta", "neighbour"], sort=True)}


@functools.lru_cache(maxsize=1)
def _book_model() -> dict[tuple[float, str], _Class]:
    return _fit(evidence())


def _model(frame: pd.DataFrame | None) -> dict[tuple[float, str], _Class]:
    return _book_model() if frame is None else _fit(frame)


def _class_for(model: dict[tuple[float, str], _Class], delta: float,
               neighbour: str) -> _Class:
    """The class of ``neighbour`` with the largest measured delta not above ``delta``."""
    fits = [c for (d, rel), c in model.items() if rel == neighbour and d <= delta]
    if not fits:
        measured = sorted({rel for _, rel in model})
        raise ValueError(f"the evidence holds no row under {neighbour} adjacency at a delta of "
                         f"at most {delta:g}; it measured {measured}")
    return max(fits, key=lambda c: c.delta)


def _outside(c: _Class, x: np.ndarray, nearest: float) -> list[str]:
    """Why the request lies outside the class's evidence (empty: inside)."""
    why = []
    names = ("N·ε/k", "d", "k")
    for i, name in enumerate(names):
        value = 10 ** x[i]
        if x[i] < _low(c)[i] - _SLACK:
            why.append(f"{name} = {number(value)} is below the smallest measured, "
                       f"{number(10 ** _low(c)[i])}")
        elif x[i] > _high(c)[i] + _SLACK:
            why.append(f"{name} = {number(value)} is above the largest measured, "
                       f"{number(10 ** _high(c)[i])}")
    if nearest > c.reach + _SLACK:
        why.append(f"its nearest evaluated regime is farther from it ({number(nearest)} in "
                   f"standardised units) than any evaluated regime is from another dataset's "
                   f"(at most {number(c.reach)})")
    return why


def _low(c: _Class) -> np.ndarray:
    return c.x.min(axis=0)


def _high(c: _Class) -> np.ndarray:
    return c.x.max(axis=0)


# --- recommend -----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Recommendation:
    """What the evidence favours for a request (:func:`recommend`).

    Parameters
    ----------
    algorithm : str
        The contender the evidence favours (an algorithm in one form, as the leaderboard
        names it: ``"dplloyd-impr (gaussian)"``).
    predicted : float
        Its predicted relative objective, NICV / NICV of non-private Lloyd - 1 (0: as good
        as Lloyd).
    interval : tuple of float
        (lo, hi): where the result on a dataset of these public quantities is expected with
        probability :data:`LEVEL`, calibrated on held-out datasets.
    alternatives : pandas.DataFrame
        One row per contender measured at one of the nearest regimes at least, the favoured
        one first: ``algorithm``, ``predicted``, ``lo``, ``hi``, ``support`` (the nearest
        regimes it was measured at) and ``candidate`` (measured at the most of them: the
        contenders the favoured one is chosen from).
    nearest : tuple of str
        The evaluated regimes the prediction rests on, nearest first
        (``"adult, k=5, ε=1"``).
    outside : bool
        The request lies outside everything the book measured at its privacy (module
        docstring, "Outside").
    reason : str
        In plain words: at which privacy the contenders were compared, what is favoured on
        what evidence, and, when ``outside``, why.
    evidence_delta : float
        The delta of the rows the answer comes from (module docstring, "Equal privacy").
    """

    algorithm: str
    predicted: float
    interval: tuple[float, float]
    alternatives: pd.DataFrame
    nearest: tuple[str, ...]
    outside: bool
    reason: str
    evidence_delta: float


def _check_request(n_records: object, n_features: object, n_clusters: object,
                   epsilon: object, delta: object, neighbour: object) -> tuple:
    N = check_positive_int(n_records, "n_records")
    d = check_positive_int(n_features, "n_features")
    k = check_positive_int(n_clusters, "n_clusters")
    if k > N:
        raise ValueError(f"n_clusters must be at most n_records, got k = {k} > N = {N}")
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=True)
    if neighbour not in RELATIONS:
        raise ValueError(f"neighbour must be one of {RELATIONS}, got {neighbour!r}")
    return N, d, k, eps, dlt, str(neighbour)


def _alternatives(c: _Class, p: _Prediction, row: int = 0) -> pd.DataFrame:
    """One request's contenders (module docstring): candidates first, each group by
    prediction, then in the class's order. The candidates are the contenders measured at the
    request itself where it is an evaluated regime, else those measured at the most of its
    neighbours."""
    m, s, support, here = p.m[row], p.s[row], p.support[row], p.exact[row]
    has = support > 0
    candidate = here if here.any() else support == support.max()
    if not has.any():
        return pd.DataFrame(columns=["algorithm", "predicted", "lo", "hi", "support",
                                     "candidate"])
    half = np.maximum(s + c.widen, 0.0)
    table = pd.DataFrame({
        "algorithm": np.asarray(c.algorithms)[has], "predicted": 10 ** m[has] - 1,
        "lo": 10 ** (m[has] - half[has]) - 1, "hi": 10 ** (m[has] + half[has]) - 1,
        "support": support[has].astype(int), "candidate": candidate[has],
        "_m": m[has], "_order": np.arange(len(c.algorithms))[has]})
    table = table.sort_values(["candidate", "_m", "_order"], ascending=[False, True, True],
                              kind="stable")
    return table.drop(columns=["_m", "_order"]).reset_index(drop=True)


def _privacy_note(c: _Class, delta: float) -> str:
    where = f"δ = {number(c.delta)}, {c.neighbour} adjacency"
    if delta == c.delta:
        text = f"Compared at equal privacy ({where})."
    elif c.delta > 0:
        text = (f"Compared at equal privacy on the rows measured at {where}: their algorithms "
                f"also meet the requested δ = {number(delta)}, so the answer is conservative.")
    else:
        text = (f"The book measured no (ε, δ) algorithm under {c.neighbour} adjacency at a δ of "
                f"at most {number(delta)}: compared on the pure ε-DP ones, which meet any δ "
                f"({where}).")
    if len(c.algorithms) == 1:
        text += " It is the only algorithm the book measured there."
    return text


def _reason(c: _Class, request: tuple, table: pd.DataFrame, nearest: tuple[str, ...],
            why: list[str]) -> str:
    N, d, k, eps, delta, _ = request
    best = table.iloc[0]
    shown = "; ".join(nearest[:3]) + ("; …" if len(nearest) > 3 else "")
    text = [_privacy_note(c, delta),
            f"For N·ε/k = {number(N * eps / k)}, d = {d} and k = {k}, the {len(nearest)} "
            f"nearest evaluated regimes ({shown}) favour {best['algorithm']}: predicted "
            f"relative objective {number(best['predicted'])} (0 is as good as non-private "
            f"Lloyd), {_percent(LEVEL)} interval {number(best['lo'])} to "
            f"{number(best['hi'])}."]
    rivals = table[table["candidate"]].iloc[1:]
    if len(rivals):
        rival = rivals.iloc[0]
        close = best["lo"] <= rival["predicted"] <= best["hi"]
        text.append(f"Next is {rival['algorithm']} at {number(rival['predicted'])}"
                    + (", inside that interval: the evidence does not separate the two."
                       if close else "."))
    fewer = table[~table["candidate"] & (table["predicted"] < best["predicted"])]
    if len(fewer):
        other = fewer.sort_values("predicted", kind="stable").iloc[0]
        text.append(f"{other['algorithm']} is predicted lower, at "
                    f"{number(other['predicted'])}, but from only {other['support']} of those "
                    f"{len(nearest)} regimes.")
    if why:
        text.append("The request lies outside everything the book measured at this privacy: "
                    + "; ".join(why) + ". The numbers extrapolate from the nearest regimes "
                    "and may be far off.")
    return " ".join(text)


def _percent(level: float) -> str:
    return f"{100 * level:g}%"


def recommend(n_records: int, n_features: int, n_clusters: int, epsilon: float,
              delta: float = 0.0, neighbour: str = "add/remove",
              frame: pd.DataFrame | None = None) -> Recommendation:
    """The algorithm the book's evidence favours for public (N, d, k, epsilon, delta), with
    its predicted relative objective, an interval and the regimes it rests on; no data is read
    but the committed results (module docstring).

    Parameters
    ----------
    n_records : int
        N, the (public) number of records.
    n_features : int
        d, the number of features.
    n_clusters : int
        k, at most N.
    epsilon : float
        The privacy budget, > 0.
    delta : float, default 0.0
        The delta of the guarantee, in [0, 1) (0: pure epsilon-DP).
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The neighbour relation of the guarantee.
    frame : pandas.DataFrame or None, default None
        Evidence rows (:func:`evidence`'s columns) to fit the model to; None: the book's
        committed results.

    Returns
    -------
    Recommendation

    Raises
    ------
    ValueError
        If an input is out of its range (a non-integer or non-positive count, k > N, epsilon
        not above 0, delta outside [0, 1), an unknown relation), or ``frame`` is not evidence.

    Examples
    --------
    >>> from dpkmeans.synthesis.recommend import recommend
    >>> answer = recommend(10_000, 10, 5, 1.0)
    >>> answer.algorithm in set(answer.alternatives["algorithm"]), answer.outside
    (True, False)
    """
    request = _check_request(n_records, n_features, n_clusters, epsilon, delta, neighbour)
    N, d, k, eps, dlt, rel = request
    c = _class_for(_model(frame), dlt, rel)
    x = _features([N], [eps], [k], [d])
    p = _predict(c, x)
    table = _alternatives(c, p)
    nearest = tuple(c.labels[j] for j in p.near[0])
    why = _outside(c, x[0], float(p.distance[0, 0]))
    best = table.iloc[0]
    return Recommendation(
        algorithm=str(best["algorithm"]), predicted=float(best["predicted"]),
        interval=(float(best["lo"]), float(best["hi"])), alternatives=table, nearest=nearest,
        outside=bool(why), reason=_reason(c, request, table, nearest, why),
        evidence_delta=c.delta)


# --- the validation ------------------------------------------------------------------------

def _validate_class(c: _Class) -> list[dict[str, object]]:
    """Every regime of the class predicted with its dataset left out (module docstring)."""
    out = []
    for group in np.unique(c.groups):
        held = np.flatnonzero(c.groups == group)
        if len(held) == len(c.groups):
            continue
        train = _calibrated(_subset(c, c.groups != group))
        measured = ~np.isnan(c.y[held])
        p = _predict(train, c.x[held], among=measured)
        overall = _overall(train)
        out += [_regime_row(c, i, train, p, row, overall) for row, i in enumerate(held)]
    return out


def _overall(c: _Class) -> np.ndarray:
    """Each algorithm's median log10(1 + relative objective) over the class's regimes: the
    fixed choice the validation compares the model with."""
    with np.errstate(all="ignore"):
        return np.array([np.nanmedian(col) if (~np.isnan(col)).any() else np.inf
                         for col in c.y.T])


def _is_hit(rel: np.ndarray, hi: np.ndarray, best: int, pick: int) -> bool:
    """``pick`` is the ``best`` or its mean lies within the best's 95% interval."""
    return bool(pick == best or rel[pick] <= hi[best])


def _regime_row(c: _Class, i: int, train: _Class, p: _Prediction, row: int,
                overall: np.ndarray) -> dict[str, object]:
    """One held-out regime ``i`` of ``c``, predicted as row ``row`` of ``p``."""
    measured = np.flatnonzero(~np.isnan(c.y[i]))
    rel, hi = 10 ** c.y[i] - 1, c.hi[i]
    best = int(measured[np.argmin(rel[measured])])
    fixed = int(measured[np.argmin(overall[measured])])
    table = _alternatives(train, p, row)
    if table.empty:
        raise ValueError(f"no algorithm measured at {c.labels[i]} was measured at one of its "
                         f"{NEIGHBOURS} nearest regimes of the other datasets: nothing to "
                         "validate it with")
    result = rel[[c.algorithms.index(a) for a in table["algorithm"]]]
    covered = (table["lo"].to_numpy() <= result) & (result <= table["hi"].to_numpy())
    chosen = c.algorithms.index(table["algorithm"].iloc[0])
    why = _outside(train, c.x[i], float(p.distance[row, 0]))
    return {
        "dataset": c.groups[i], "generated": bool(c.generated[i]), "regime": c.labels[i],
        "delta": c.delta, "neighbour": c.neighbour, "signal": float(10 ** c.x[i, 0]),
        "d": int(round(10 ** c.x[i, 1])), "k": int(round(10 ** c.x[i, 2])),
        "outside": bool(why), "widen": train.widen, "reach": train.reach,
        "recommended": c.algorithms[chosen], "support": int(table["support"].iloc[0]),
        "predicted": float(table["predicted"].iloc[0]), "lo": float(table["lo"].iloc[0]),
        "hi": float(table["hi"].iloc[0]), "result": float(rel[chosen]),
        "result_lo": float(c.lo[i, chosen]), "result_hi": float(hi[chosen]),
        "covered": bool(covered[0]), "best": c.algorithms[best], "best_result": float(rel[best]),
        "best_hi": float(hi[best]), "hit": _is_hit(rel, hi, best, chosen),
        "fixed": c.algorithms[fixed], "fixed_hit": _is_hit(rel, hi, best, fixed),
        "chance": float(np.mean([_is_hit(rel, hi, best, j) for j in measured])),
        "algorithms": len(measured), "predicted_algorithms": len(table),
        "covered_algorithms": int(covered.sum())}


def validation_rows(frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The held-out validation: each dataset left out in turn, every regime of it predicted by
    the model fitted to the other datasets of its privacy class (module docstring).

    Only the add/remove classes are validated: the book ranks algorithms under that relation,
    and under replace adjacency it measured one algorithm, so there is nothing to choose.

    Parameters
    ----------
    frame : pandas.DataFrame or None, default None
        Evidence rows (:func:`evidence`); None: the book's committed results.

    Returns
    -------
    pandas.DataFrame
        One row per held-out regime: ``dataset``, ``generated``, ``regime``, ``delta``,
        ``neighbour``, ``signal`` (N epsilon / k), ``d``, ``k``; whether it lay ``outside``
        the other datasets' evidence; the fold's ``widen`` and ``reach``; the ``recommended``
        algorithm (chosen among the ``algorithms`` measured there), its ``support``,
        ``predicted``, interval ``lo``, ``hi``, its measured ``result`` with ``result_lo``,
        ``result_hi``, and ``covered`` (lo <= result <= hi); the measured ``best`` with
        ``best_result`` and the upper end of its 95% interval ``best_hi``; ``hit`` (the
        recommended one is the best or its result lies within the best's interval); the fixed
        choice ``fixed`` (the algorithm with the best median over the other datasets) and
        ``fixed_hit``; ``chance`` (the share of the regime's algorithms that would be hits);
        ``predicted_algorithms`` (those a neighbour measured) and ``covered_algorithms`` (of
        those, the ones whose interval holds their result).
    """
    rows = []
    for (_, relation), c in _model(frame).items():
        if relation == COMPARED:
            rows += _validate_class(c)
    return pd.DataFrame(rows)


def validation_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Coverage and hit rate of :func:`validation_rows`, overall and at each delta, on every
    dataset and on the real and the generated ones apart.

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`validation_rows` (or the committed ``recommend_validation.csv``).

    Returns
    -------
    pandas.DataFrame
        One row per (delta, data): ``delta`` (NaN: every delta), ``data`` ("all", "real",
        "generated"), ``regimes``, ``datasets``, ``coverage`` (the share of regimes whose
        recommended algorithm's interval holds its result), ``coverage_all`` (the same over
        every algorithm predicted at every regime), ``hit_rate``, ``fixed_hit_rate`` (of the
        fixed choice), ``chance`` (the mean hit rate of a choice at random among a regime's
        algorithms),
        ``outside`` (regimes outside the other datasets' evidence) and ``coverage_inside``
        (coverage over the others).
    """
    rows = rows.assign(delta=rows["delta"].astype(float))
    parts = [(math.nan, "all", rows)]
    for delta, group in rows.groupby("delta", sort=True):
        parts.append((float(delta), "all", group))
        generated = group["generated"].astype(bool)
        parts += [(float(delta), "real", group[~generated]),
                  (float(delta), "generated", group[generated])]
    return pd.DataFrame([_summary(delta, data, group) for delta, data, group in parts
                         if len(group)])


def _summary(delta: float, data: str, group: pd.DataFrame) -> dict[str, object]:
    inside = group[~group["outside"].astype(bool)]
    return {"delta": delta, "data": data, "regimes": len(group),
            "datasets": group["dataset"].nunique(),
            "coverage": float(group["covered"].astype(bool).mean()),
            "coverage_all": float(group["covered_algorithms"].sum()
                                  / group["predicted_algorithms"].sum()),
            "hit_rate": float(group["hit"].astype(bool).mean()),
            "fixed_hit_rate": float(group["fixed_hit"].astype(bool).mean()),
            "chance": float(group["chance"].mean()),
            "outside": int(group["outside"].astype(bool).sum()),
            "coverage_inside": float(inside["covered"].astype(bool).mean())}


def write_validation(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """:func:`validation_rows` of the tables in ``folder``, written there as
    ``recommend_validation.csv`` (``make reproduce`` calls it on ``data/results``).

    Parameters
    ----------
    folder : path-like
        The folder of the tables of :data:`SOURCES`.

    Returns
    -------
    pandas.DataFrame
        The rows written.
    """
    rows = validation_rows(evidence(folder))
    write_csv(rows, Path(folder) / Path(VALIDATION).name, float_format=FLOAT_FORMAT)
    return rows


# --- the JSON ------------------------------------------------------------------------------

def _finite(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in values]


def model_json(frame: pd.DataFrame | None = None) -> dict[str, object]:
    """The model as plain data (module docstring, "The JSON").

    Parameters
    ----------
    frame : pandas.DataFrame or None, default None
        Evidence rows; None: the book's committed results.

    Returns
    -------
    dict
    """
    classes = []
    for c in _model(frame).values():
        classes.append({
            "delta": c.delta, "neighbour": c.neighbour, "algorithms": list(c.algorithms),
            "mean": c.mean.tolist(), "scale": c.scale.tolist(), "low": _low(c).tolist(),
            "high": _high(c).tolist(), "reach": c.reach, "widen": c.widen,
            "regimes": [{"label": label, "x": c.x[i].tolist(), "y": _finite(c.y[i])}
                        for i, label in enumerate(c.labels)]})
    return {"format": "dpkmeans-recommend", "version": 1,
            "measure": "log10(NICV / NICV of non-private Lloyd)", "level": LEVEL,
            "neighbours": NEIGHBOURS, "exact": EXACT, "slack": _SLACK,
            "features": list(_FEATURES),
            "classes": classes}


def export_model(path: str | os.PathLike[str], frame: pd.DataFrame | None = None) -> Path:
    """Write :func:`model_json` to ``path`` (compact JSON, UTF-8), for the book's calculator.

    Parameters
    ----------
    path : path-like
        The file to write.
    frame : pandas.DataFrame or None, default None
        Evidence rows; None: the book's committed results.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    text = json.dumps(model_json(frame), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)
    write_text(path, text + "\n")
    return Path(path)
