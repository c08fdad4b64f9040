"""Shang, Zhao, Ren and Liu (2021): DI k-means and DI k-prototypes, as published and
corrected (book chapter 11).

As published (Alg. 1-5):

* the per-iteration rule rho_1 = eps/2, rho_i = min(eps/2^i, rho / (m^(i-1) rho_1 ... rho_(i-1)))
  with eps = ln((m-1) rho / (1-rho)) mixes a log-odds with a probability
  (:func:`printed_rule`): it cannot be run as printed. The runs use the reading the text
  states for its comparator and calls rho_1's origin, eps_i = eps / 2^i (``"intended"``), or
  the printed rule with rho_1 capped at rho, which spends everything in iteration 1 and then
  asks for infinite noise (``"printed"``: the run stops after that one iteration);
* the reducers divide by the exact cluster sizes (flaw ``exact-counts``), with Delta f = d and
  Delta sf = 1 under replace adjacency (``replace-sensitivity-d``);
* Optimized Canopy on the raw records picks the initial centres (``canopy-initialisation``),
  on min-max scaled data (``data-derived-bounds``);
* k-prototypes gives every categorical attribute the whole categorical budget
  (``categorical-full-budget``) and claims parallel composition of the numeric and
  categorical parts: min(rho_r, rho_c), i.e. max(eps_r, eps_c) ("eps = 6.26").

Corrected: eps from rho once, the halving schedule normalised to spend it, noisy counts with
Delta = 2 (sum_i (u_i - l_i) / 2 + 1) under replace, each record measured from the box's
midpoint (book chapter 5; d + 2 on [0, 1]^d, where measuring from the origin gives 2 (d + 1)),
sphere packing and a fixed k, public bounds; k-prototypes
composes its parts sequentially (eps_r + eps_c) and splits the categorical budget over the d_c
attributes. The ledger computes the true spend of every variant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, Flaw
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.prototypes import CategoricalModes, MixedInitializer, MixedLayout
from dpkmeans.engine.strategies import PublicStart, ShiftBelow
from dpkmeans.papers.di.canopy import CanopyInitialRelease
from dpkmeans.papers.di.flaws import (
    CANOPY_INITIALISATION,
    CATEGORICAL_FULL_BUDGET,
    EXACT_COUNTS,
    GAMMA_FROM_CLASSES,
    REPLACE_SENSITIVITY_D,
    PublishedModes,
    PublishedRelease,
)
from dpkmeans.papers.registry import FitInputs
from dpkmeans.privacy.identifiability import check_m, check_rho, epsilon_from_rho
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = ["PrintedRule", "printed_rule", "READINGS", "ITERATIONS", "STOP_THRESHOLD",
           "M_NUMERIC", "M_CATEGORICAL", "GAMMA", "kmeans_as_published", "kmeans_corrected",
           "kprototypes_as_published", "kprototypes_corrected", "claimed_epsilon"]

#: Readings of the published schedule that can be run (module docstring).
READINGS = ("intended", "printed")
#: T and the stopping distance: the paper gives neither a value (the book's choice).
ITERATIONS = 10
STOP_THRESHOLD = 1e-3
#: The paper's possible worlds: 4-decimal values in [0, 1] (numeric), binary (categorical).
M_NUMERIC, M_CATEGORICAL = 10001, 2
#: The paper's k-prototypes weight on Heart (Fig. 4).
GAMMA = 0.12


@dataclass(frozen=True)
class PrintedRule:
    """The paper's per-iteration rho_i (its section 6.2), computed exactly as printed and as
    capped.

    ``literal``: rho_1 = eps / 2 (a log-odds, usually > 1), rho_i = min(eps / 2^i,
    rho / (m^(i-1) prod rho_j)). ``capped``: the same with rho_1 = min(eps / 2, rho). For each,
    ``epsilon`` is ln((m-1) rho_i / (1 - rho_i)), NaN where rho_i is not in (0, 1) (no noise
    scale exists), 0 where rho_i = 1/m (infinite noise) and negative below the prior.
    """

    literal: np.ndarray
    capped: np.ndarray
    literal_epsilon: np.ndarray
    capped_epsilon: np.ndarray


def _log_odds(rho: Fraction, m: int) -> float:
    if not 0 < rho < 1:
        return math.nan
    return math.log((m - 1) * rho / (1 - rho))  # exact rational argument, one rounding


def printed_rule(rho: float, m: int, iterations: int) -> PrintedRule:
    """The paper's printed rho_i for T iterations, in exact rational arithmetic (so that
    rho / (m rho) is exactly 1/m and its epsilon exactly 0)."""
    mm = check_m(m)
    r = Fraction(check_rho(rho, mm))
    T = check_positive_int(iterations, "iterations")
    eps = epsilon_from_rho(float(r), mm)

    def rule(first: Fraction) -> list[Fraction]:
        out = [first]
        for i in range(2, T + 1):
            bound = r / (Fraction(mm) ** (i - 1) * math.prod(out))
            out.append(min(Fraction(eps / 2**i), bound))
        return out

    literal = rule(Fraction(eps / 2))
    capped = rule(min(Fraction(eps / 2), r))
    return PrintedRule(np.array([float(x) for x in literal]), np.array([float(x) for x in capped]),
                       np.array([_log_odds(x, mm) for x in literal]),
                       np.array([_log_odds(x, mm) for x in capped]))


def _schedule(epsilon: float, reading: str, rho: float | None, m: int | None,
              iterations: int) -> np.ndarray:
    """The per-iteration budgets of a published variant (module docstring)."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    if reading == "printed" and rho is None:
        raise ValueError("the printed rule is a rule for rho: give rho (with m), or use the "
                         "DP comparator's reading='intended'")
    if reading == "intended":
        return schedules.halving(epsilon, iterations, normalise=False)
    eps = printed_rule(rho, m, iterations).capped_epsilon
    runnable = np.isfinite(eps) & (eps > 0)
    n = int(np.argmin(runnable)) if not runnable.all() else eps.size  # up to infinite noise
    if n == 0:
        raise ValueError(f"the printed rule gives no iteration with finite noise at rho={rho}, "
                         f"m={m} (rho_1 = eps / 2 lies at or below the prior 1/m)")
    return eps[:n]


def _published_flaws(data_derived_bounds: bool) -> tuple[Flaw, ...]:
    flaws = (EXACT_COUNTS, REPLACE_SENSITIVITY_D, CANOPY_INITIALISATION)
    return flaws + ((DATA_DERIVED_BOUNDS,) if data_derived_bounds else ())


def kmeans_as_published(bounds: tuple[ArrayLike, ArrayLike], *, rho: float | None = None,
                        m: int = M_NUMERIC, epsilon: float | None = None,
                        n_clusters: int = 2, reading: str = "intended",
                        iterations: int = ITERATIONS,
                        data_derived_bounds: bool = True) -> DPLloydConfig:
    """DI k-means (Alg. 1-2) at ``rho`` with ``m`` worlds, or the paper's DP k-means comparator
    at ``epsilon`` (the same reducer with eps_i = eps / 2^i). Exactly one of the two."""
    eps = _one_budget(rho, m, epsilon)
    return DPLloydConfig(
        n_clusters=n_clusters, bounds=bounds,
        schedule=_schedule(eps, reading, rho, m, iterations),
        neighbour="replace", centred=False, start=CanopyInitialRelease(),
        step=PublishedRelease(), stop=ShiftBelow(STOP_THRESHOLD),
        flaws=_published_flaws(data_derived_bounds),
        name=f"{'DI' if rho is not None else 'DP'} k-means (as published, {reading})")


def kmeans_corrected(bounds: tuple[ArrayLike, ArrayLike], *, rho: float | None = None,
                     m: int = M_NUMERIC, epsilon: float | None = None, n_clusters: int = 2,
                     iterations: int = ITERATIONS) -> DPLloydConfig:
    """DI k-means corrected: eps = ln((m-1) rho / (1-rho)) once (or ``epsilon`` given), the
    normalised halving schedule, noisy counts under replace with each record measured from the
    box's midpoint (Delta = d + 2 on [0, 1]^d, not 2 (d + 1)), sphere packing and a fixed k.
    At rho it is the same configuration as at eps(rho, m)."""
    eps = _one_budget(rho, m, epsilon)
    return DPLloydConfig(
        n_clusters=n_clusters, bounds=bounds, schedule=schedules.halving(eps, iterations),
        neighbour="replace", centred=True, start=PublicStart(sphere_packing),
        stop=ShiftBelow(STOP_THRESHOLD), budget=eps, name="DI k-means (corrected)")


def _one_budget(rho: float | None, m: int, epsilon: float | None) -> float:
    if (rho is None) == (epsilon is None):
        raise ValueError("give exactly one of rho (with m) and epsilon")
    return check_epsilon(epsilon) if rho is None else epsilon_from_rho(rho, m)


def _mixed_budgets(rho_r: float | None, rho_c: float | None, m_r: int, m_c: int,
                   epsilon: float | None) -> tuple[float, float]:
    """(eps_r, eps_c): from (rho_r, m_r) and (rho_c, m_c), or both ``epsilon`` (the paper's DP
    k-prototypes comparator, read with its parallel composition)."""
    if epsilon is not None:
        if rho_r is not None or rho_c is not None:
            raise ValueError("give either rho_r and rho_c or epsilon")
        e = check_epsilon(epsilon)
        return e, e
    if rho_r is None or rho_c is None:
        raise ValueError("give rho_r and rho_c (or epsilon)")
    return epsilon_from_rho(rho_r, m_r), epsilon_from_rho(rho_c, m_c)


def kprototypes_as_published(layout: MixedLayout, numeric_bounds: tuple[ArrayLike, ArrayLike],
                             *, rho_r: float | None = None, rho_c: float | None = None,
                             m_r: int = M_NUMERIC, m_c: int = M_CATEGORICAL,
                             epsilon: float | None = None, n_clusters: int = 2,
                             iterations: int = ITERATIONS,
                             data_derived_bounds: bool = True) -> DPLloydConfig:
    """DI k-prototypes (Alg. 3-5) at (rho_r, rho_c), or the DP comparator at ``epsilon``, with
    the intended halving reading (the printed rule has no usable iteration at m_c = 2,
    rho_c = 0.7: :func:`printed_rule`)."""
    eps_r, eps_c = _mixed_budgets(rho_r, rho_c, m_r, m_c, epsilon)
    T = check_positive_int(iterations, "iterations")
    return DPLloydConfig(
        n_clusters=n_clusters, bounds=layout.bounds(numeric_bounds),
        schedule=schedules.halving(eps_r, T, normalise=False),
        modes=PublishedModes(layout, schedules.halving(eps_c, T, normalise=False)),
        neighbour="replace", centred=False, start=CanopyInitialRelease(),
        step=PublishedRelease(), stop=ShiftBelow(STOP_THRESHOLD),
        flaws=_published_flaws(data_derived_bounds) + (CATEGORICAL_FULL_BUDGET,
                                                        GAMMA_FROM_CLASSES),
        name=f"{'DP' if epsilon is not None else 'DI'} k-prototypes (as published)")


def kprototypes_corrected(layout: MixedLayout, numeric_bounds: tuple[ArrayLike, ArrayLike],
                          *, rho_r: float | None = None, rho_c: float | None = None,
                          m_r: int = M_NUMERIC, m_c: int = M_CATEGORICAL,
                          epsilon: float | None = None, categorical_share: float | None = None,
                          n_clusters: int = 2, iterations: int = ITERATIONS) -> DPLloydConfig:
    """DI k-prototypes corrected: eps_r + eps_c composed sequentially, each over the normalised
    halving schedule, the categorical budget split over the d_c attributes, noisy counts,
    replace sensitivities with the numeric part measured from its box's midpoint, sphere
    packing and random public modes to start.

    With ``epsilon`` (a DP budget), ``categorical_share`` of it goes to the modes (default:
    the share eps_c / (eps_r + eps_c) of the paper's rho_r = 0.05, rho_c = 0.7)."""
    T = check_positive_int(iterations, "iterations")
    if epsilon is not None:
        if rho_r is not None or rho_c is not None:
            raise ValueError("give either rho_r and rho_c or epsilon")
        total = check_epsilon(epsilon)
        default_r, default_c = (epsilon_from_rho(0.05, M_NUMERIC),
                                epsilon_from_rho(0.7, M_CATEGORICAL))
        share = default_c / (default_r + default_c) if categorical_share is None \
            else float(categorical_share)
        if not 0.0 < share < 1.0:
            raise ValueError(f"categorical_share must lie in (0, 1), got {share}")
        eps_r, eps_c = total * (1.0 - share), total * share
    else:
        eps_r, eps_c = _mixed_budgets(rho_r, rho_c, m_r, m_c, None)
    return DPLloydConfig(
        n_clusters=n_clusters, bounds=layout.bounds(numeric_bounds),
        schedule=schedules.halving(eps_r, T),
        modes=CategoricalModes(layout, schedules.halving(eps_c, T)),
        neighbour="replace", centred=True, start=PublicStart(MixedInitializer(layout)),
        stop=ShiftBelow(STOP_THRESHOLD), budget=eps_r + eps_c,
        name="DI k-prototypes (corrected)")


def claimed_epsilon(rho_r: float, rho_c: float, m_r: int = M_NUMERIC,
                    m_c: int = M_CATEGORICAL) -> dict[str, float]:
    """The paper's guarantee for DI k-prototypes (parallel: max(eps_r, eps_c)) beside the
    sequential sum that holds before its other flaws: the numeric and categorical parts of
    a record are the same records, not disjoint subsets)."""
    eps_r, eps_c = epsilon_from_rho(rho_r, m_r), epsilon_from_rho(rho_c, m_c)
    return {"epsilon_numeric": eps_r, "epsilon_categorical": eps_c,
            "claimed (parallel, max)": max(eps_r, eps_c), "sequential (sum)": eps_r + eps_c}


# -- the functions the paper's record names (its __init__.py) ------------------------------

def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="di")``: DI k-means, corrected, from one epsilon."""
    return kmeans_corrected(f.bounds, epsilon=f.epsilon, n_clusters=f.n_clusters)


def published_example() -> DPLloydConfig:
    """DI k-means as published on the unit square, rho = 0.05 over m = 10001 worlds."""
    return kmeans_as_published((np.zeros(2), np.ones(2)), rho=0.05, m=10001)
