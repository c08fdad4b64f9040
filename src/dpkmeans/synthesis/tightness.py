"""How close the audits come to the claims: every mechanism, every corrected algorithm.

Each target is a release (one mechanism, or one iteration of an algorithm) or a whole fit, with
its worst-case (or best known) neighbouring pair and the privacy-loss statistic of its output:
the log-likelihood ratio of D against D' (:mod:`dpkmeans.study.transcript` for a fit). The
bound is the uniform one (:mod:`dpkmeans.study.uniform`) over thresholds fixed by the claim;
the split-sample bound of :mod:`dpkmeans.study.audit` on the same trials is kept beside it.
``data/results/audit_tightness.csv`` holds one row per target and level, and
``data/results/audit_power.csv`` the trials needed to expose planted overspends.
Book: chapter 6, "Auditing an algorithm".
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import FitInputs, choice, loop_choices
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import gaussian_twin
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_releases
from dpkmeans.engine.prototypes import MixedLayout, encode
from dpkmeans.papers.di.variants import kprototypes_corrected
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.identifiability import (
    di_laplace_mechanism,
    di_laplace_scale,
    epsilon_from_rho,
)
from dpkmeans.privacy.noise import calibrate
from dpkmeans.privacy.noise_types import GAUSSIAN
from dpkmeans.privacy.tight import Release, epsilon_at
from dpkmeans.study.audit import VERDICTS, epsilon_lower_bound
from dpkmeans.study.committed import committed_file
from dpkmeans.study.loss_distribution import LossDistribution, from_shifts, loss_distribution
from dpkmeans.study.one_run import one_run_lower_bound
from dpkmeans.study.parts import part_block
from dpkmeans.study.transcript import (
    element_log_ratio,
    exact_statistics,
    transcript_log_ratios,
    transcript_shifts,
)
from dpkmeans.study.uniform import loss_thresholds, trials_needed, uniform_lower_bound
from dpkmeans.synthesis import fastlloyd_audit, outside_audit

__all__ = ["Scores", "Mechanism", "MECHANISMS", "ALGORITHMS", "TWINS", "OUTSIDE", "BLACK_BOX",
           "TARGET_RATIO", "CURVE_DELTAS", "black_box_scores",
           "FACTORS", "mechanism_scores", "algorithm_scores", "first_release", "curve_points",
           "curve_rows", "tightness_rows", "power_rows", "planted", "targets", "one_run_audit",
           "strongest_audits", "scored_budget", "fit_claim", "target_ratio"]

BASE_SEED = 20261126
CONFIDENCE = 0.99  # every bound of one target's curve holds together with this probability
EPSILON = 1.0  # the budget every audited target is calibrated for
DELTA = 1e-3  # the delta of the Gaussian mechanisms audited alone
FIT_DELTA = 1e-5  # the delta of the colored algorithm's fit
#: The points of the privacy curve audited besides a target's own delta (0 for a pure one).
CURVE_DELTAS = (1e-2, 1e-3)
#: The targets set: lower bound >= ratio x the accountant's epsilon at the point. A release at
#: every point; a whole fit at delta 0 and, by its dimension, at delta 10^-3.
TARGET_RATIO = {"release": 0.9, "fit": 0.5}
FIT_CURVE_TARGET = {1: 0.8, 2: 0.8, 10: 0.6}
FACTORS = (1.1, 1.25, 1.5, 2.0)  # the planted overspends of the power study
POWER = 0.9  # the trials a target needs: those that reach it with this probability
#: The share of a held-out audit's trials that chooses its threshold event.
SELECTION = 0.25
#: Simulated runs whose shifts give a target's exact loss distribution.
PILOT = 200
DIMENSIONS = (1, 10)  # the whole fits are audited on a pair in 1 and in 10 dimensions


def _seed(*parts: object) -> np.random.SeedSequence:
    """A seed per target and purpose, stable across runs and processes."""
    return np.random.SeedSequence([BASE_SEED, *(zlib.crc32(str(p).encode()) for p in parts)])


@dataclass(frozen=True)
class Scores:
    """The privacy-loss statistic of one target on D (``scores0``) and D' (``scores1``), with
    what its claim and its power are computed from: the releases the accountant composes
    (``releases``) and the exact distribution of the statistic on the pair (``exact``)."""

    target: str
    level: str  # "release" or "fit"
    claimed_epsilon: float  # the budget the target is calibrated for
    delta: float  # the target's own delta (0: pure)
    statistic: str
    pair: str
    scores0: np.ndarray
    scores1: np.ndarray
    releases: tuple[Release, ...]
    exact: LossDistribution | None  # None: a black-box statistic (no transcript likelihood)
    seconds: float
    dimension: int = 1
    outputs0: np.ndarray | None = None  # what a user sees (the final centres), for a fit
    outputs1: np.ndarray | None = None


# --- single mechanisms -------------------------------------------------------------------------
@dataclass(frozen=True)
class Mechanism:
    """A mechanism audited alone: ``draw(n, rng)`` gives its statistic on D and on D';
    ``releases`` what the accountant composes for it, ``exact`` its loss distribution."""

    draw: Callable[[int, np.random.Generator], list[np.ndarray]]
    claimed_epsilon: float
    delta: float
    pair: str
    releases: tuple[Release, ...]
    exact: Callable[[], LossDistribution]


def _laplace(sampler: str) -> Callable[[int, np.random.Generator], list[np.ndarray]]:
    def draw(n, rng):
        b = calibrate("laplace", 1.0, EPSILON, sampler=sampler).scale
        out = [mech.laplace_mechanism(float(w), 1.0, EPSILON, rng, ledger=None, repeats=n,
                                      sampler=sampler) for w in (0, 1)]
        return [element_log_ratio("laplace", y, 0.0, 1.0, np.full(n, b)) for y in out]
    return draw


def _gaussian_sigma(sampler: str) -> float:
    return GAUSSIAN.with_sampler(sampler).calibrate(1.0, EPSILON, DELTA).scale


def _gaussian(sampler: str) -> Callable[[int, np.random.Generator], list[np.ndarray]]:
    def draw(n, rng):
        sigma = _gaussian_sigma(sampler)
        out = [mech.gaussian_mechanism(float(w), 1.0, EPSILON, DELTA, rng, ledger=None,
                                       repeats=n, sampler=sampler) for w in (0, 1)]
        return [element_log_ratio("gaussian", y, 0.0, 1.0, np.full(n, sigma)) for y in out]
    return draw


#: The colored Gaussian mechanism as the library applies it (book chapter 9): one cluster's
#: centred (S - n m, n) over the box [0, 4] x [-1, 1] (half-widths 2 and 1), whitened by
#: 1 / sqrt(r), then Gaussian noise for the whitened L2 sensitivity 2 (every corner is worst).
COLORED_SHIFT = np.array([np.sqrt(2.0), 1.0, 1.0])
COLORED_SENSITIVITY = float(np.linalg.norm(COLORED_SHIFT))


def _colored_sigma() -> float:
    return calibrate("gaussian", COLORED_SENSITIVITY, EPSILON, DELTA, sampler="discrete",
                     coordinates=3).scale


def _colored(n, rng):
    sigma = _colored_sigma()
    out = [mech.gaussian_mechanism(w * COLORED_SHIFT, COLORED_SENSITIVITY, EPSILON, DELTA, rng,
                                   ledger=None, repeats=n) for w in (0, 1)]
    return [element_log_ratio("gaussian", y, 0.0, COLORED_SHIFT, np.full(y.shape, sigma)
                              ).sum(axis=1) for y in out]


N_OPTIONS = 101
UTILITY = (np.zeros(N_OPTIONS), np.r_[1.0, -np.ones(N_OPTIONS - 1)])


def _exponential_probabilities() -> list[np.ndarray]:
    return [mech.exponential_probabilities(u, 1.0, EPSILON) for u in UTILITY]


def _exponential(n, rng):
    logp = [np.log(p) for p in _exponential_probabilities()]
    picks = [mech.exponential_mechanism(u, 1.0, EPSILON, rng, ledger=None, repeats=n)
             for u in UTILITY]
    ratio = logp[0] - logp[1]
    return [ratio[p] for p in picks]


DI_RHO, DI_M = 0.85, 2  # epsilon_from_rho(0.85, 2) = ln(0.85 / 0.15) = 1.73


def _di_laplace(n, rng):
    b = di_laplace_scale(1.0, DI_RHO, DI_M)
    out = [di_laplace_mechanism(np.full(n, float(w)), 1.0, DI_RHO, DI_M, rng, ledger=None)
           for w in (0, 1)]
    return [element_log_ratio("laplace", y, 0.0, 1.0, np.full(n, b)) for y in out]


def _laplace_mechanism(draw, eps: float, pair: str) -> Mechanism:
    return Mechanism(draw, eps, 0.0, pair, (Release("laplace", epsilon=eps),),
                     lambda: loss_distribution([eps]))


def _gaussian_mechanism(draw, sigma: Callable[[], float], shift: float, pair: str) -> Mechanism:
    mu = shift / sigma()
    return Mechanism(draw, EPSILON, DELTA, pair,
                     (Release("gaussian", epsilon=EPSILON, mu=mu, delta=DELTA),),
                     lambda: loss_distribution(gaussian_mu2=mu**2))


_EXP_PAIR = (f"utility 0 everywhere vs +1 on one option, -1 on the other {N_OPTIONS - 1}")

#: The mechanisms audited alone, by name.
MECHANISMS: dict[str, Mechanism] = {
    "Laplace (exact discrete sampler)": _laplace_mechanism(
        _laplace("discrete"), EPSILON, "value 0 vs 1, sensitivity 1"),
    "Laplace (float sampler)": _laplace_mechanism(
        _laplace("continuous"), EPSILON, "value 0 vs 1, sensitivity 1"),
    "Gaussian (discrete, zCDP calibration)": _gaussian_mechanism(
        _gaussian("discrete"), lambda: _gaussian_sigma("discrete"), 1.0,
        "value 0 vs 1, L2 sensitivity 1"),
    "Gaussian (float, analytic calibration)": _gaussian_mechanism(
        _gaussian("continuous"), lambda: _gaussian_sigma("continuous"), 1.0,
        "value 0 vs 1, L2 sensitivity 1"),
    "colored Gaussian (box covariance)": _gaussian_mechanism(
        _colored, _colored_sigma, COLORED_SENSITIVITY,
        "empty cluster vs one record at a corner of [0, 4] x [-1, 1]"),
    "exponential": Mechanism(
        _exponential, EPSILON, 0.0, _EXP_PAIR, (Release("pure", epsilon=EPSILON),),
        lambda: loss_distribution(modes=[tuple(_exponential_probabilities())])),
    "DI Laplace": _laplace_mechanism(_di_laplace, epsilon_from_rho(DI_RHO, DI_M),
                                     f"value 0 vs 1, rho = {DI_RHO}, m = {DI_M}"),
}


def mechanism_scores(name: str, trials: int) -> Scores:
    """The statistic of mechanism ``name`` (:data:`MECHANISMS`) on ``trials`` releases a side."""
    m = MECHANISMS[name]
    start = time.perf_counter()
    s0, s1 = m.draw(trials, np.random.default_rng(_seed("mechanism", name, trials)))
    return Scores(name, "release", m.claimed_epsilon, m.delta,
                  "log-likelihood ratio of the output", m.pair, np.asarray(s0, float),
                  np.asarray(s1, float), m.releases, m.exact(), time.perf_counter() - start)


# --- corrected algorithms ----------------------------------------------------------------------
GROUP = 10  # records at each end of the box
#: Every corrected algorithm the transcript audit scores: the DP-Lloyd configurations of the
#: catalogue from Su et al. and the five papers (the outside algorithms of chapter 12 are
#: audited on their own: lsh and balcan from their releases,
#: :mod:`dpkmeans.synthesis.outside_audit`, FastLloyd by its transcript,
#: :mod:`dpkmeans.synthesis.fastlloyd_audit`) and the k-prototypes estimator.
ALGORITHMS = (*(name for name, c in loop_choices().items() if int(c.chapter) < 12),
              "DPKPrototypes")
#: The (epsilon, delta) twins audited too: each add/remove Laplace algorithm with Gaussian
#: noise, calibrated by tight composition to (EPSILON, FIT_DELTA)
#: (:func:`dpkmeans.engine.equal_privacy.gaussian_twin`; book chapter 12, "Equal privacy").
TWIN = " (Gaussian twin)"
#: The silhouette rule's twin is not audited: its noise is calibrated per replica and cluster
#: (its weights come from released values), a discrete-Gaussian calibration each, so its
#: 200 000 fits a side take over an hour here.
TWINS = tuple(f"{name}{TWIN}" for name in ("dplloyd", "dplloyd-impr", "dp-kccm", "apdp"))
#: The outside algorithms of chapter 12: FastLloyd's two forms by their transcript, LSH and Balcan et al.'s
#: from their released centres only (no transcript likelihood;
#: :mod:`dpkmeans.synthesis.outside_audit` gives their pair and statistic).
OUTSIDE = ("fastlloyd", "fastlloyd-laplace")
BLACK_BOX = outside_audit.ALGORITHMS
BLACK_BOX_TRIALS = outside_audit.TRIALS
BLACK_BOX_REASON = ("a black-box audit of the released centres: the algorithm has no "
                    "transcript likelihood, so no exact loss distribution either")
LAYOUT = MixedLayout((2,), 1, 1.0)  # one numeric attribute in [-1, 1], one with 2 categories


def _box(dimension: int = 1) -> tuple[np.ndarray, np.ndarray]:
    return -np.ones(dimension), np.ones(dimension)


BOX = _box()


def _pair(neighbour: str, mixed: bool, dimension: int = 1) -> tuple[np.ndarray, np.ndarray, str]:
    """D and D' for a fit: ``GROUP`` records at the corner (-1, ..., -1) and at (+1, ..., +1)
    (category 0 and 1 when mixed); add/remove: D' adds one at +1; replace: the extra record
    moves from -1 to +1."""
    ends = np.r_[-np.ones((GROUP, dimension)), np.ones((GROUP, dimension))]
    low, high = -np.ones((1, dimension)), np.ones((1, dimension))
    where = "" if dimension == 1 else f" (corners of [-1, 1]^{dimension})"
    if neighbour == "replace":
        X0, X1 = np.r_[ends, low], np.r_[ends, high]
        text = f"{GROUP} records at -1 and {GROUP} at +1, plus one at -1 vs at +1{where}"
    else:
        X0, X1 = ends, np.r_[ends, high]
        text = f"{GROUP} records at -1 and {GROUP} at +1 vs the same plus one at +1{where}"
    if mixed:
        X0, X1 = (encode(X, (X[:, :1] > 0).astype(int), LAYOUT) for X in (X0, X1))
        text += " (category 0 at -1, 1 at +1)"
    return X0, X1, text


def _config(name: str, dimension: int = 1) -> DPLloydConfig:
    """The configuration ``DPKMeans(algorithm=name)`` (or ``DPKPrototypes``) fits for the pair:
    k = 2, epsilon 1, T = 5 where T is given, N = 2 GROUP public."""
    if name == "DPKPrototypes":
        if dimension != 1:
            raise ValueError("DPKPrototypes is audited on its one numeric attribute only")
        return kprototypes_corrected(LAYOUT, BOX, epsilon=EPSILON, n_clusters=2)
    if name.endswith(TWIN):
        return gaussian_twin(_config(name[:-len(TWIN)], dimension), EPSILON, FIT_DELTA)
    c = choice(name)
    return c.build(FitInputs(2, EPSILON, _box(dimension), max_iter=5, n_records=2 * GROUP,
                             delta=FIT_DELTA if c.needs_delta else None))


def _start(config: DPLloydConfig, replicas: int) -> np.ndarray:
    """Public fixed starts: the k' centroids spread over the box's diagonal (categories
    alternating)."""
    k = config.n_clusters
    d = config.bounds[0].size - config.numeric_offset
    numeric = np.linspace(-1.0, 1.0, k)[:, None] * np.ones(d)
    start = numeric if config.modes is None else encode(
        numeric, (np.arange(k) % 2)[:, None], LAYOUT)
    return np.broadcast_to(start, (replicas, *start.shape)).copy()


def planted(config: DPLloydConfig, factor: float) -> DPLloydConfig:
    """The configuration with every budget multiplied by ``factor`` (less noise everywhere)
    while the claim stays: a planted overspend of ``factor`` times."""
    if factor == 1.0:
        return config
    cat = config.modes
    return replace(config, schedule=config.schedule * factor,
                   budget=None if config.budget is None else config.budget * factor,
                   modes=None if cat is None
                   else replace(cat, schedule=cat.schedule * factor))


def first_release(config: DPLloydConfig) -> DPLloydConfig:
    """The configuration cut to its first iteration: its release is distributed exactly as the
    first release of the whole run (later iterations never act on it), at a fraction of the
    cost. A declared budget stays as the cap (the iteration spends part of it); a tight target
    (the whole run's, which the first release alone does not reach) is dropped."""
    cat = config.modes
    return replace(config, schedule=config.schedule[:1], target=None,
                   modes=None if cat is None else replace(cat, schedule=cat.schedule[:1]))


def _pair_of(name: str, config: DPLloydConfig,
             dimension: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The pair a target is audited on: :func:`_pair`, or for FastLloyd the pair of its own
    audit (a record at the distance r_1 from its start, :mod:`dpkmeans.synthesis.fastlloyd_audit`),
    in two dimensions."""
    if name in OUTSIDE:
        return outside_audit.pair()
    return _pair(config.neighbour, config.modes is not None, dimension)


def _start_of(name: str, config: DPLloydConfig, replicas: int) -> np.ndarray:
    """The public starts of a target's fits: :func:`_start`, or FastLloyd's own."""
    if name in OUTSIDE:
        return np.broadcast_to(fastlloyd_audit.START,
                               (replicas, *fastlloyd_audit.START.shape)).copy()
    return _start(config, replicas)


def _centres(result, config: DPLloydConfig) -> np.ndarray:
    """What a user sees of each fit, for the black-box audit: the mean coordinate of each
    final centre (numeric attributes), sorted, (R, k)."""
    numeric = np.asarray(result.centroids)[..., config.numeric_offset:]
    return np.sort(numeric.mean(axis=2), axis=1)


def _exact(config: DPLloydConfig, X0: np.ndarray, X1: np.ndarray,
           seq: np.random.SeedSequence, start: np.ndarray | None = None) -> LossDistribution:
    """The exact loss distribution of the configuration's transcript on (X0, X1), from the
    shifts of :data:`PILOT` runs on X0 from ``start`` (default :func:`_start`)
    (:func:`dpkmeans.study.loss_distribution.from_shifts`)."""
    result = run(X0, config, seq, replicas=PILOT, record_history=True,
                 initial_centroids=_start(config, PILOT) if start is None else start)
    return from_shifts(transcript_shifts(result, X0, X1))


def algorithm_scores(name: str, level: str, trials: int, *, factor: float = 1.0,
                     chunk: int = 50_000, purpose: str = "audit",
                     dimension: int = 1) -> Scores:
    """The statistic of algorithm ``name`` on its pair at ``level`` ("release": the first
    iteration's noisy statistics; "fit": the whole transcript), ``trials`` fits a side (batched,
    ``chunk`` at a time), with an overspend of ``factor`` planted (the claim stays factor 1's),
    on the pair in ``dimension`` dimensions; for a fit, the final centres too."""
    claimed = _config(name, dimension)
    if level == "release":
        claimed = first_release(claimed)
    elif level != "fit":
        raise ValueError(f"level must be 'release' or 'fit', got {level!r}")
    config = planted(claimed, factor)
    X0, X1, pair = _pair_of(name, config, dimension)
    extra = () if dimension == 1 else (dimension,)
    seq = _seed(purpose, name, level, factor, trials, *extra)  # a new size draws new trials
    start = time.perf_counter()
    scores, outputs = [], []
    for which, X in enumerate((X0, X1)):
        parts, seen, left = [], [], trials
        for child in seq.spawn(2)[which].spawn(-(-trials // chunk)):
            R = min(chunk, left)
            result = run(X, config, child, replicas=R, record_history=True,
                         initial_centroids=_start_of(name, config, R))
            parts.append(transcript_log_ratios(result, X0, X1).sum(axis=1))
            seen.append(_centres(result, config))
            left -= R
        scores.append(np.concatenate(parts))
        outputs.append(np.concatenate(seen))
    seconds = time.perf_counter() - start
    exact = _exact(config, X0, X1, _seed("pilot", name, level, factor, *extra),
                   _start_of(name, config, PILOT))
    T = len(claimed.schedule)
    what = ("iteration 1's noisy statistics" if level == "release"
            else f"the whole transcript ({T} iterations)")
    fit = level == "fit"
    return Scores(name, level, float(claimed.epsilon), claimed.delta * T,
                  f"log-likelihood ratio of {what}", pair, scores[0], scores[1],
                  tuple(plan_releases(claimed)), exact, seconds, dimension,
                  outputs[0] if fit else None, outputs[1] if fit else None)


def fit_claim(name: str) -> tuple[float, float]:
    """The (epsilon, delta) algorithm ``name``'s whole fit is calibrated for: its declared
    budget, and T times its delta."""
    config = _config(name)
    return float(config.epsilon), config.delta * len(config.schedule)


def scored_budget(name: str, level: str) -> float:
    """The part of algorithm ``name``'s claim at ``level`` that pays for the releases its
    statistic scores: the noisy statistics (and k-prototypes' modes) of the iterations, not the
    releases of a hook (silhouette's noisy silhouettes). The loss cannot exceed it."""
    config = _config(name)
    if level == "release":
        config = first_release(config)
    cat = config.modes
    return float(config.schedule.sum() + (0.0 if cat is None else cat.schedule.sum()))


# --- the curve's rows --------------------------------------------------------------------------
def curve_points(delta: float) -> tuple[float, ...]:
    """The deltas at which a target of its own ``delta`` is audited: its own, then
    :data:`CURVE_DELTAS` (largest first)."""
    return tuple(sorted({float(delta), *CURVE_DELTAS}, reverse=True))


def target_ratio(level: str, delta: float, dimension: int = 1) -> float:
    """The target at a point: :data:`TARGET_RATIO` for a release (every delta) and for a fit
    in one dimension at delta 0, :data:`FIT_CURVE_TARGET` for a fit at delta 10^-3; nan (no
    target) else."""
    if level == "release" or (delta == 0.0 and dimension == 1):
        return TARGET_RATIO[level]
    if level == "fit" and delta == 1e-3:
        return FIT_CURVE_TARGET.get(dimension, float("nan"))
    return float("nan")


def _bound(scores0: np.ndarray, scores1: np.ndarray, claim: float, delta: float,
           confidence: float, seed: np.random.SeedSequence, *, grid: bool):
    """(lower bound, estimate, event, method): at delta 0 of a loss statistic the uniform
    bound over the claim's loss grid (``grid``), else the held-out one (the event chosen on
    :data:`SELECTION` of the trials, its bound from the rest)."""
    if grid:
        best = uniform_lower_bound(scores0, scores1, loss_thresholds(claim), delta=delta,
                                   confidence=confidence)
        side = ">= " if best.favours == "D" else "<= -"
        return (best.lower_bound, best.estimate,
                f"loss {side}{best.threshold:.4g} (likelier under {best.favours})",
                "uniform over the loss grid")
    bound, estimate, event = epsilon_lower_bound(
        scores0, scores1, delta=delta, confidence=confidence,
        rng=np.random.default_rng(seed), selection=SELECTION)
    return bound, estimate, event, "held-out threshold"


def _trials_for(s: Scores, goal: float, delta: float, confidence: float) -> float:
    """The trials a side the point's audit needs to reach ``goal`` with probability
    :data:`POWER`, from the exact loss distribution (:attr:`Scores.exact`)."""
    if not np.isfinite(goal):
        return float("nan")
    if delta == 0.0:
        tau = loss_thresholds(s.claimed_epsilon)
        fav_d, other_d, fav_dp, other_dp = s.exact.tails(tau)
        return trials_needed(np.r_[fav_d, fav_dp], np.r_[other_d, other_dp], goal,
                             events=2 * tau.size, confidence=confidence, power=POWER)
    return s.exact.trials_needed(goal, delta=delta, confidence=confidence, power=POWER,
                                 evaluated=1.0 - SELECTION)


def curve_rows(s: Scores) -> list[dict[str, object]]:
    """The rows of one target's curve: at each of :func:`curve_points`, the lower bound on
    epsilon against the accountant's epsilon at that delta for the same releases
    (:func:`dpkmeans.privacy.tight.epsilon_at`), beside the pair's exact epsilon (the most any
    audit of this pair can show) and, for a fit, the black-box audit of its final centres.
    The points' bounds hold together with probability :data:`CONFIDENCE` (Bonferroni)."""
    points = curve_points(s.delta)
    each = 1.0 - (1.0 - CONFIDENCE) / len(points)
    rows = []
    for delta in points:
        claim = epsilon_at(s.releases, delta)[0]
        seed = _seed("curve", s.target, s.level, s.dimension, delta)
        white = s.exact is not None  # a transcript's loss, else the released centres
        bound, estimate, event, method = _bound(s.scores0, s.scores1, claim, delta, each,
                                                seed, grid=white and delta == 0.0)
        ratio_goal = target_ratio(s.level, delta, s.dimension)
        pair_epsilon = s.exact.epsilon_at(delta) if white else float("nan")
        need = _trials_for(s, ratio_goal * claim, delta, each) if white else float("nan")
        reason = None if white else BLACK_BOX_REASON  # None: nothing to explain
        if np.isfinite(ratio_goal) and pair_epsilon < ratio_goal * claim:
            reason = (f"the pair's exact epsilon at this delta, {pair_epsilon:.4g}, is below "
                      f"the target {ratio_goal * claim:.4g}: no audit of this pair reaches it")
        row = {"target": s.target, "level": s.level, "dimension": s.dimension,
               "delta": delta, "claimed_epsilon": claim,
               "calibrated_epsilon": s.claimed_epsilon, "pair_epsilon": pair_epsilon,
               "lower_bound": bound, "ratio": bound / claim,
               "verdict": VERDICTS[1] if bound > claim else VERDICTS[0],
               "ratio_to_pair": bound / pair_epsilon if pair_epsilon > 0 else float("nan"),
               "target_ratio": ratio_goal,
               "target_met": (bool(bound >= ratio_goal * claim) if np.isfinite(ratio_goal)
                              else None),
               "confidence": each, "method": method, "trials": len(s.scores0),
               "trials_needed": need, "reason": reason,
               "audit_minutes": need * s.seconds / len(s.scores0) / 60,
               "largest_loss_seen": (float(max(s.scores0.max(), -s.scores1.min())) if white
                                     else float("nan")),
               "estimate": estimate, "event": event, "statistic": s.statistic,
               "pair": s.pair, "seconds": s.seconds}
        if s.outputs0 is not None:
            box = _bound(s.outputs0, s.outputs1, claim, delta, each,
                         _seed("black box", s.target, s.dimension, delta), grid=False)[0]
            row.update(blackbox_lower_bound=box, blackbox_gap=bound - box)
        elif not white:
            row.update(blackbox_lower_bound=bound)
        rows.append(row)
    return rows


#: Trials per side of each target in the committed table (the Gaussian tails need the most).
MECHANISM_TRIALS = {"Laplace (exact discrete sampler)": 200_000,
                    "Laplace (float sampler)": 200_000,
                    "Gaussian (discrete, zCDP calibration)": 3_000_000,
                    "Gaussian (float, analytic calibration)": 4_000_000,
                    "colored Gaussian (box covariance)": 3_000_000,
                    "exponential": 4_000_000, "DI Laplace": 200_000}
#: (release, fit) trials per side of the algorithms; DPKPrototypes draws its modes one replica
#: at a time, about 30 times slower.
ALGORITHM_TRIALS = {"release": 2_000_000, "fit": 200_000}
PROTOTYPES_TRIALS = {"release": 100_000, "fit": 90_000}
#: Other sizes, by (target, level, dimension): where the exact loss distribution says a target
#: needs more trials (:func:`curve_rows`, ``trials_needed``) and they fit in about 10 minutes
#: here; a target that needs more says so in its row.
MORE_TRIALS: dict[tuple[str, str, int], int] = {
    ("dplloyd", "fit", 1): 500_000, ("dplloyd", "fit", 10): 250_000,
    ("dplloyd-impr", "fit", 10): 150_000, ("apdp", "fit", 10): 150_000,
    ("dp-kccm", "release", 1): 4_800_000, ("dp-kccm", "fit", 1): 700_000,
    ("dp-kccm", "fit", 10): 450_000, ("silhouette", "fit", 10): 500_000,
    ("di", "fit", 1): 300_000, ("colored", "fit", 1): 1_800_000,
    ("colored", "fit", 10): 350_000}
FIT_TRIALS_10D = 100_000  # otherwise, on a pair in more than one dimension (FastLloyd's too)


def _trials(target: str, level: str, dimension: int) -> int:
    plan = PROTOTYPES_TRIALS if target == "DPKPrototypes" else ALGORITHM_TRIALS
    default = FIT_TRIALS_10D if dimension != 1 else plan[level]
    return MORE_TRIALS.get((target, level, dimension), default)


def _levels(target: str) -> list[tuple[str, int]]:
    if target in OUTSIDE:  # on its own audit's pair, in two dimensions
        return [("release", 2), ("fit", 2)]
    dims = (1,) if target == "DPKPrototypes" else DIMENSIONS
    fits = [("fit", d) for d in dims]
    return fits if target in TWINS else [("release", 1), *fits]


def targets() -> list[str]:
    """Every target of the table: the mechanisms, the corrected algorithms, their Gaussian
    twins, then the outside algorithms."""
    return [*MECHANISMS, *ALGORITHMS, *TWINS, *OUTSIDE, *BLACK_BOX]


def black_box_scores(name: str, trials: int) -> Scores:
    """The released centres of outside algorithm ``name`` (:data:`BLACK_BOX`) on its pair
    (:func:`dpkmeans.synthesis.outside_audit.pair`), ``trials`` fits a side, with the releases
    its ledger composes."""
    X0, X1, pair = outside_audit.pair()
    config = outside_audit.config_at(name, 1.0)
    seq = _seed("black box audit", name, trials)
    start = time.perf_counter()
    outputs, ledger = [], None
    for which, X in enumerate((X0, X1)):
        result = run(X, config, seq.spawn(2)[which], replicas=trials)
        outputs.append(outside_audit.statistic(result))
        ledger = result.ledger
    return Scores(name, "fit", float(config.epsilon), float(config.delta),
                  "the released centres (black box)", pair, outputs[0], outputs[1],
                  tuple(ledger.releases()), None, time.perf_counter() - start)


def tightness_rows(target: str, trials: int = 0, *, part: int = 0,
                   parts: int = 1) -> pd.DataFrame:
    """The table's rows for one target: its curve (:func:`curve_rows`) as a mechanism, or at
    each level and dimension as an algorithm (a release, the whole fit in 1 and 10
    dimensions); ``trials`` per side (0: the committed table's). With ``parts`` > 1 only the
    ``part``-th block of an algorithm's levels (:func:`dpkmeans.study.parts.part_block`; each
    level draws from its own seeds); a mechanism's curve is one part."""
    if target in MECHANISMS:
        part_block([target], part, parts)
        scores = [mechanism_scores(target, trials or MECHANISM_TRIALS[target])]
    elif target in BLACK_BOX:
        part_block([target], part, parts)
        scores = [black_box_scores(target, trials or BLACK_BOX_TRIALS)]
    elif target in (*ALGORITHMS, *TWINS, *OUTSIDE):
        scores = [algorithm_scores(target, level, trials or _trials(target, level, d),
                                   dimension=d)
                  for level, d in part_block(_levels(target), part, parts)]
    else:
        raise ValueError(f"unknown target {target!r}; the targets are {targets()}")
    return pd.DataFrame([row for s in scores for row in curve_rows(s)])


# --- the power study ---------------------------------------------------------------------------
#: The most trials a side the power study runs an audit with: about 10 minutes here (from the
#: seconds per fit of the committed tightness table), 15 for the silhouette rule, whose 1.25
#: times overspend needs a little more.
DETECT_MOST = {"dplloyd": 3_000_000, "dplloyd-impr": 4_000_000, "dp-kccm": 1_200_000,
               "silhouette": 1_300_000, "apdp": 4_000_000, "di": 3_000_000,
               "colored": 2_500_000, "DPKPrototypes": 80_000}


def _need_column(delta: float) -> str:
    """The power table's column of the trials needed at one point of the curve: a point of
    :data:`CURVE_DELTAS`, or the algorithm's own delta (0 when pure)."""
    return f"trials_needed_at_{delta:g}" if delta in CURVE_DELTAS else "trials_needed_at_own"


def power_rows(name: str, *, factors: tuple[float, ...] = FACTORS,
               detect: bool = True, part: int = 0, parts: int = 1) -> pd.DataFrame:
    """The power study of corrected algorithm ``name``: for each planted overspend of
    ``factors``, the trials a side that the audit of the whole fit's curve (the points of
    :func:`curve_points`, their bounds Bonferroni-corrected) needs to expose it (a bound above
    the accountant's epsilon at some point) with probability :data:`POWER`, computed from the
    planted fit's exact loss distribution; then the audit itself at that many trials, with fresh
    seeds, when it is at most :data:`DETECT_MOST` (``detect``). Book: chapter 6, "Auditing the
    whole privacy curve". With ``parts`` > 1 only the ``part``-th block of ``factors``
    (:func:`dpkmeans.study.parts.part_block`; each factor draws from its own seeds)."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; the corrected ones are {ALGORITHMS}")
    factors = tuple(part_block(factors, part, parts))
    config = _config(name)
    X0, X1, _ = _pair(config.neighbour, config.modes is not None)
    points = curve_points(config.delta * len(config.schedule))
    each = 1.0 - (1.0 - CONFIDENCE) / len(points)
    releases = plan_releases(config)
    claims = {delta: epsilon_at(releases, delta)[0] for delta in points}
    rows = []
    for f in factors:
        exact = _exact(planted(config, f), X0, X1, _seed("power pilot", name, f))
        probe = Scores(name, "fit", float(config.epsilon), points[-1], "", "", np.zeros(2),
                       np.zeros(2), tuple(releases), exact, 0.0)
        need = {delta: _trials_for(probe, claims[delta], delta, each) for delta in points}
        best = min(points, key=lambda delta: need[delta])
        row = {"algorithm": name, "factor": f, "claimed_epsilon": claims[best],
               "calibrated_epsilon": float(config.epsilon), "delta": best,
               "planted_epsilon": exact.epsilon_at(best),
               "trials_needed": need[best], "confidence": each, "power": POWER,
               **{_need_column(delta): need[delta] for delta in points},
               "detect_trials": 0, "detect_bound": float("nan"), "detected": False,
               "detect_delta": float("nan"), "audit_minutes": float("nan")}
        if detect and need[best] <= DETECT_MOST[name]:
            n = int(need[best])
            audit = algorithm_scores(name, "fit", n, factor=f, purpose="detect")
            found = []
            for delta in points:
                bound = _bound(audit.scores0, audit.scores1, claims[delta], delta, each,
                               _seed("detect", name, f, delta), grid=delta == 0.0)[0]
                found.append((bound - claims[delta], delta, bound))
            margin, at, bound = max(found)
            row.update(detect_trials=n, detect_bound=bound, detected=bool(margin > 0),
                       detect_delta=at, audit_minutes=audit.seconds / 60)
        rows.append(row)
    return pd.DataFrame(rows)


# --- one run, many canaries --------------------------------------------------------------------
def one_run_audit(epsilon: float = EPSILON, *, dimension: int = 10, group: int = 20,
                  iterations: int = 5, candidates: tuple[int, ...] = (64, 128, 256),
                  seed: int = BASE_SEED) -> dict[str, object]:
    """A one-run audit (:mod:`dpkmeans.study.one_run`) of one DPLloyd fit
    (``DPKMeans(algorithm="dplloyd")``'s configuration) with m = 2^dimension canaries.

    The box is [-1, 1]^dimension; ``group`` records sit at every corner, and canary j, a
    record at corner j, is included with probability 1/2. The fit has k = m clusters started
    at the corners (public), so each canary changes its own cluster's statistics by the full
    sensitivity. Canary j's score is the log-likelihood ratio, "in" against "out", of its
    cluster's released statistics over the iterations, from the centroids released before
    each (the auditor's assignment of the canary)."""
    m = 2**dimension
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * dimension, indexing="ij")).reshape(
        dimension, m).T
    box = (-np.ones(dimension), np.ones(dimension))
    config = choice("dplloyd").build(FitInputs(m, epsilon, box, max_iter=iterations))
    rng = np.random.default_rng(_seed("one run", epsilon, dimension, seed))
    included = rng.random(m) < 0.5
    base = np.repeat(corners, group, axis=0)
    X = np.vstack([base, corners[included]])
    start = time.perf_counter()
    result = run(X, config, _seed("one run fit", epsilon, dimension, seed), replicas=1,
                 record_history=True, initial_centroids=corners[None])
    scores = np.zeros(m)
    for t, (noisy, scale) in enumerate(result.release_history):
        entering = result.initial_centroids if t == 0 else result.history[t - 1]
        out = exact_statistics(base, config, entering)[0]  # (k, d + 1) without any canary
        home = np.argmin(((corners[:, None, :] - entering[0][None]) ** 2).sum(axis=2), axis=1)
        inn = out[home] + np.append(corners, np.ones((m, 1)), axis=1)  # centred: m = 0
        y, b = noisy[0][home], np.broadcast_to(scale, noisy.shape)[0][home]
        scores += element_log_ratio(config.noise, y, inn, out[home], b).sum(axis=1)
    bound = one_run_lower_bound(scores, included, candidates=candidates,
                                confidence=CONFIDENCE)
    return {"claimed_epsilon": float(config.epsilon), "canaries": m,
            "included": int(included.sum()), "lower_bound": bound.lower_bound,
            "guesses": bound.guesses, "correct": bound.correct,
            "candidates": candidates, "confidence": CONFIDENCE,
            "seconds": time.perf_counter() - start}


# --- reading the committed table ---------------------------------------------------------------
TABLE = "data/results/audit_tightness.csv"
POWER_TABLE = "data/results/audit_power.csv"
READER_COLUMNS = {"target": "audited", "level": "level", "delta": "δ",
                  "claimed_epsilon": "accountant's ε at δ",
                  "lower_bound": "lower bound (99%)", "ratio": "bound / claim",
                  "trials": "trials a side", "target_met": "target met"}


def strongest_audits(targets: list[str], frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The committed tightness rows of ``targets`` (:data:`TABLE`), with the columns a reader
    reads (:data:`READER_COLUMNS`), on the pair in one dimension: what a paper chapter shows of
    its corrected algorithm's strongest audit, at every point of its privacy curve."""
    if frame is None:
        frame = pd.read_csv(committed_file(TABLE))
    missing = sorted(set(targets) - set(frame["target"]))
    if missing:
        raise ValueError(f"no committed audit of {missing}: run the audit_tightness sweep")
    chosen = frame["target"].isin(targets) & (frame["dimension"] == 1)
    rows = frame[chosen][list(READER_COLUMNS)]
    met = rows["target_met"].map({True: "yes", False: "no", "True": "yes", "False": "no"})
    rows = rows.assign(target_met=met.fillna("no target"))
    return rows.rename(columns=READER_COLUMNS).reset_index(drop=True)


def _committed(frame: pd.DataFrame | None, target: str) -> pd.DataFrame:
    """The committed tightness rows (:data:`TABLE`, or ``frame``) of ``target``."""
    if frame is None:
        frame = pd.read_csv(committed_file(TABLE))
    rows = frame[frame["target"] == target]
    if rows.empty:
        raise ValueError(f"no committed audit of {target!r}: run the audit_tightness sweep")
    return rows


def fit_at(target: str, delta: float = 1e-3,
           frame: pd.DataFrame | None = None) -> dict[str, float]:
    """The committed audit of ``target``'s whole fit on the pair in one dimension at ``delta``
    > 0: the accountant's epsilon there (``claim``), the pair's exact epsilon (``pair``) and
    the audit's bound as a fraction of the claim (``ratio``).

    Raises ``ValueError`` if at some delta > 0 the pair's exact epsilon is not the claim
    (within 1%): an algorithm accounted by its elements (book section
    ``thm-element-composition``), whose corner pair moves every element at once, must attain
    it."""
    rows = _committed(frame, target)
    curve = rows[(rows["level"] == "fit") & (rows["dimension"] == 1)
                 & (rows["delta"] > 0)].set_index("delta")
    if delta not in curve.index:
        raise ValueError(f"no committed fit audit of {target!r} at delta = {delta:g}")
    gap = (curve["pair_epsilon"] / curve["claimed_epsilon"] - 1).abs().max()
    if not gap < 0.01:
        raise ValueError(f"{target}: the pair's exact epsilon is {gap:.1%} off the "
                         "accountant's")
    point = curve.loc[delta]
    return {"claim": float(point["claimed_epsilon"]), "pair": float(point["pair_epsilon"]),
            "ratio": float(point["ratio"])}


def missed_releases(target: str, frame: pd.DataFrame | None = None) -> dict[str, float]:
    """The committed audits of ``target``'s single release that miss their target: how many
    (``missed``) of how many (``audited``), the fewest and most trials a side that would reach
    it with 90% power (``needed_lo``, ``needed_hi``), and the most trials a side that were run
    (``trials``).

    Raises ``ValueError`` unless some audit misses and every miss is one of trials: the
    pair's exact epsilon is the claim (within 1%) and a finite trial count reaches it."""
    rows = _committed(frame, target)
    release = rows[rows["level"] == "release"]
    missed = release[release["target_met"].astype(str) == "False"]
    if missed.empty:
        raise ValueError(f"{target}: no release audit misses its target")
    if not (missed["pair_epsilon"] / missed["claimed_epsilon"] > 0.99).all():
        raise ValueError(f"{target}: a missed release audit's pair cannot show the claim")
    if not np.isfinite(missed["trials_needed"]).all():
        raise ValueError(f"{target}: a missed release audit cannot reach its target at any "
                         "trial count")
    return {"missed": len(missed), "audited": len(release),
            "needed_lo": float(missed["trials_needed"].min()),
            "needed_hi": float(missed["trials_needed"].max()),
            "trials": float(missed["trials"].max())}
