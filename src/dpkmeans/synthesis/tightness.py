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
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.engine.prototypes import MixedLayout, encode
from dpkmeans.papers.di.variants import kprototypes_corrected
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.gaussian import gaussian_delta
from dpkmeans.privacy.identifiability import (
    di_laplace_mechanism,
    di_laplace_scale,
    epsilon_from_rho,
)
from dpkmeans.privacy.noise import calibrate
from dpkmeans.privacy.noise_types import GAUSSIAN
from dpkmeans.study.audit import epsilon_lower_bound
from dpkmeans.study.committed import committed_file
from dpkmeans.study.one_run import one_run_lower_bound
from dpkmeans.study.transcript import element_log_ratio, exact_statistics, transcript_log_ratios
from dpkmeans.study.uniform import event_counts, loss_thresholds, trials_needed, uniform_lower_bound

__all__ = ["Scores", "MECHANISMS", "ALGORITHMS", "TARGET_RATIO", "FACTORS", "mechanism_scores",
           "algorithm_scores", "first_release", "tightness_row", "tightness_rows", "power_rows",
           "planted", "targets", "one_run_audit", "strongest_audits", "scored_budget",
           "fit_claim", "largest_planted_loss", "EVENT_FLOOR", "EVENT_COLUMNS"]

BASE_SEED = 20261126
CONFIDENCE = 0.99
EPSILON = 1.0  # the claim of every audited target
DELTA = 1e-3  # the delta of the Gaussian mechanisms audited alone
FIT_DELTA = 1e-5  # the delta of the colored algorithm's fit
TARGET_RATIO = {"release": 0.9, "fit": 0.5}  # the targets set: bound >= ratio x claim
FACTORS = (1.1, 1.25, 1.5, 2.0)  # the planted overspends of the power study
POWER = 0.9
#: The fewest times an event must occur, under each dataset, among the simulated fits it is
#: chosen or measured on, for the power study to estimate from it (rarer rates are too noisy).
EVENT_FLOOR = 30


def _seed(*parts: object) -> np.random.SeedSequence:
    """A seed per target and purpose, stable across runs and processes."""
    return np.random.SeedSequence([BASE_SEED, *(zlib.crc32(str(p).encode()) for p in parts)])


@dataclass(frozen=True)
class Scores:
    """The privacy-loss statistic of one target on D (``scores0``) and D' (``scores1``)."""

    target: str
    level: str  # "release" or "fit"
    claimed_epsilon: float
    delta: float
    statistic: str
    pair: str
    scores0: np.ndarray
    scores1: np.ndarray
    tight_epsilon: float  # the largest loss the audited output can show (nan: not computed)
    seconds: float


# --- single mechanisms -------------------------------------------------------------------------
def _laplace(sampler: str) -> Callable[[int, np.random.Generator], tuple]:
    def draw(n, rng):
        b = calibrate("laplace", 1.0, EPSILON, sampler=sampler).scale
        out = [mech.laplace_mechanism(float(w), 1.0, EPSILON, rng, ledger=None, repeats=n,
                                      sampler=sampler) for w in (0, 1)]
        return [element_log_ratio("laplace", y, 0.0, 1.0, np.full(n, b)) for y in out], EPSILON
    return draw


def _gaussian(sampler: str) -> Callable[[int, np.random.Generator], tuple]:
    def draw(n, rng):
        sigma = GAUSSIAN.with_sampler(sampler).calibrate(1.0, EPSILON, DELTA).scale
        out = [mech.gaussian_mechanism(float(w), 1.0, EPSILON, DELTA, rng, ledger=None,
                                       repeats=n, sampler=sampler) for w in (0, 1)]
        tight = _gaussian_epsilon(1.0 / sigma, DELTA)
        return [element_log_ratio("gaussian", y, 0.0, 1.0, np.full(n, sigma)) for y in out], tight
    return draw


#: The colored Gaussian mechanism as the library applies it (book chapter 9): one cluster's
#: centred (S - n m, n) over the box [0, 4] x [-1, 1] (half-widths 2 and 1), whitened by
#: 1 / sqrt(r), then Gaussian noise for the whitened L2 sensitivity 2 (every corner is worst).
COLORED_SHIFT = np.array([np.sqrt(2.0), 1.0, 1.0])


def _colored(n, rng):
    sens = float(np.linalg.norm(COLORED_SHIFT))
    sigma = calibrate("gaussian", sens, EPSILON, DELTA, sampler="discrete", coordinates=3).scale
    out = [mech.gaussian_mechanism(w * COLORED_SHIFT, sens, EPSILON, DELTA, rng, ledger=None,
                                   repeats=n) for w in (0, 1)]
    scores = [element_log_ratio("gaussian", y, 0.0, COLORED_SHIFT, np.full(y.shape, sigma)
                                ).sum(axis=1) for y in out]
    return scores, _gaussian_epsilon(sens / sigma, DELTA)


N_OPTIONS = 101
UTILITY = (np.zeros(N_OPTIONS), np.r_[1.0, -np.ones(N_OPTIONS - 1)])


def _exponential(n, rng):
    logp = [np.log(mech.exponential_probabilities(u, 1.0, EPSILON)) for u in UTILITY]
    picks = [mech.exponential_mechanism(u, 1.0, EPSILON, rng, ledger=None, repeats=n)
             for u in UTILITY]
    ratio = logp[0] - logp[1]
    return [ratio[p] for p in picks], float(np.max(np.abs(ratio)))


DI_RHO, DI_M = 0.85, 2  # epsilon_from_rho(0.85, 2) = ln(0.85 / 0.15) = 1.73


def _di_laplace(n, rng):
    b = di_laplace_scale(1.0, DI_RHO, DI_M)
    out = [di_laplace_mechanism(np.full(n, float(w)), 1.0, DI_RHO, DI_M, rng, ledger=None)
           for w in (0, 1)]
    return ([element_log_ratio("laplace", y, 0.0, 1.0, np.full(n, b)) for y in out],
            epsilon_from_rho(DI_RHO, DI_M))


#: name: (draw(n, rng) -> ([scores on D, on D'], tight epsilon), claimed epsilon, delta, pair).
MECHANISMS: dict[str, tuple[Callable, float, float, str]] = {
    "Laplace (exact discrete sampler)": (_laplace("discrete"), EPSILON, 0.0,
                                         "value 0 vs 1, sensitivity 1"),
    "Laplace (float sampler)": (_laplace("continuous"), EPSILON, 0.0,
                                "value 0 vs 1, sensitivity 1"),
    "Gaussian (discrete, zCDP calibration)": (_gaussian("discrete"), EPSILON, DELTA,
                                              "value 0 vs 1, L2 sensitivity 1"),
    "Gaussian (float, analytic calibration)": (_gaussian("continuous"), EPSILON, DELTA,
                                               "value 0 vs 1, L2 sensitivity 1"),
    "colored Gaussian (box covariance)": (_colored, EPSILON, DELTA,
                                          "empty cluster vs one record at a corner of "
                                          "[0, 4] x [-1, 1]"),
    "exponential": (_exponential, EPSILON, 0.0,
                    f"utility 0 everywhere vs +1 on one option, -1 on the other "
                    f"{N_OPTIONS - 1}"),
    "DI Laplace": (_di_laplace, epsilon_from_rho(DI_RHO, DI_M), 0.0,
                   f"value 0 vs 1, rho = {DI_RHO}, m = {DI_M}"),
}


def _gaussian_epsilon(s: float, delta: float) -> float:
    """The exact epsilon at delta of a Gaussian release with Delta / sigma = s (bisection on
    :func:`dpkmeans.privacy.gaussian.gaussian_delta`); for the discrete Gaussian a close
    approximation (its loss is the continuous one's, sampled on the grid)."""
    lo, hi = 0.0, 50.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_delta(mid, 1.0, s) > delta else (lo, mid)
    return hi


def mechanism_scores(name: str, trials: int) -> Scores:
    """The statistic of mechanism ``name`` (:data:`MECHANISMS`) on ``trials`` releases a side."""
    draw, claimed, delta, pair = MECHANISMS[name]
    start = time.perf_counter()
    (s0, s1), tight = draw(trials, np.random.default_rng(_seed("mechanism", name, trials)))
    return Scores(name, "release", claimed, delta, "log-likelihood ratio of the output", pair,
                  np.asarray(s0, float), np.asarray(s1, float), float(tight),
                  time.perf_counter() - start)


# --- corrected algorithms ----------------------------------------------------------------------
BOX = (np.array([-1.0]), np.array([1.0]))
GROUP = 10  # records at each end of the box
#: Every corrected algorithm the transcript audit scores: the DP-Lloyd configurations of the
#: catalogue from Su et al. and the five papers (the outside algorithms of chapter 12 are
#: audited on their own: lsh and balcan from their releases,
#: :mod:`dpkmeans.synthesis.outside_audit`, FastLloyd by its transcript,
#: :mod:`dpkmeans.synthesis.fastlloyd_audit`) and the k-prototypes estimator.
ALGORITHMS = (*(name for name, c in loop_choices().items() if int(c.chapter) < 12),
              "DPKPrototypes")
LAYOUT = MixedLayout((2,), 1, 1.0)  # one numeric attribute in [-1, 1], one with 2 categories


def _pair(neighbour: str, mixed: bool) -> tuple[np.ndarray, np.ndarray, str]:
    """D and D' for a fit: ``GROUP`` records at -1 and at +1 (category 0 and 1 when mixed);
    add/remove: D' adds one at +1; replace: the extra record moves from -1 to +1."""
    ends = np.r_[-np.ones(GROUP), np.ones(GROUP)][:, None]
    if neighbour == "replace":
        X0, X1 = np.r_[ends, [[-1.0]]], np.r_[ends, [[1.0]]]
        text = f"{GROUP} records at -1 and {GROUP} at +1, plus one at -1 vs at +1"
    else:
        X0, X1 = ends, np.r_[ends, [[1.0]]]
        text = f"{GROUP} records at -1 and {GROUP} at +1 vs the same plus one at +1"
    if mixed:
        X0, X1 = (encode(X, (X > 0).astype(int), LAYOUT) for X in (X0, X1))
        text += " (category 0 at -1, 1 at +1)"
    return X0, X1, text


def _config(name: str) -> DPLloydConfig:
    """The configuration ``DPKMeans(algorithm=name)`` (or ``DPKPrototypes``) fits for the pair:
    k = 2, epsilon 1, T = 5 where T is given, N = 2 GROUP public."""
    if name == "DPKPrototypes":
        return kprototypes_corrected(LAYOUT, BOX, epsilon=EPSILON, n_clusters=2)
    c = choice(name)
    return c.build(FitInputs(2, EPSILON, BOX, max_iter=5, n_records=2 * GROUP,
                             delta=FIT_DELTA if c.needs_delta else None))


def _start(config: DPLloydConfig, replicas: int) -> np.ndarray:
    """Public fixed starts: the k' centroids spread over [-1, 1] (categories alternating)."""
    k = config.n_clusters
    numeric = np.linspace(-1.0, 1.0, k)[:, None]
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
    cost. A declared budget stays as the cap (the iteration spends part of it)."""
    cat = config.modes
    return replace(config, schedule=config.schedule[:1],
                   modes=None if cat is None else replace(cat, schedule=cat.schedule[:1]))


def algorithm_scores(name: str, level: str, trials: int, *, factor: float = 1.0,
                     chunk: int = 50_000, purpose: str = "audit") -> Scores:
    """The statistic of algorithm ``name`` on its pair at ``level`` ("release": the first
    iteration's noisy statistics; "fit": the whole transcript), ``trials`` fits a side (batched,
    ``chunk`` at a time), with an overspend of ``factor`` planted (the claim stays factor 1's)."""
    claimed = _config(name)
    if level == "release":
        claimed = first_release(claimed)
    elif level != "fit":
        raise ValueError(f"level must be 'release' or 'fit', got {level!r}")
    config = planted(claimed, factor)
    X0, X1, pair = _pair(config.neighbour, config.modes is not None)
    seq = _seed(purpose, name, level, factor, trials)  # a new size draws new trials
    start = time.perf_counter()
    scores, spent = [], 0.0
    for which, X in enumerate((X0, X1)):
        parts, left = [], trials
        for child in seq.spawn(2)[which].spawn(-(-trials // chunk)):
            R = min(chunk, left)
            result = run(X, config, child, replicas=R, record_history=True,
                         initial_centroids=_start(config, R))
            parts.append(transcript_log_ratios(result, X0, X1).sum(axis=1))
            spent = max(spent, result.ledger.total().epsilon)
            left -= R
        scores.append(np.concatenate(parts))
    T = len(claimed.schedule)
    if level == "release":  # the claim: what the ledger charged for the first iteration
        what, claim = "iteration 1's noisy statistics", spent / factor
    else:  # the claim: the run's declared budget
        what, claim = f"the whole transcript ({T} iterations)", float(claimed.epsilon)
    return Scores(name, level, claim, claimed.delta * T, f"log-likelihood ratio of {what}",
                  pair, scores[0], scores[1], _gaussian_fit_epsilon(claimed),
                  time.perf_counter() - start)


def fit_claim(name: str) -> tuple[float, float]:
    """The claim (epsilon, delta) that :func:`algorithm_scores` audits the whole fit of
    algorithm ``name`` against, without a fit: its declared budget, and T times its delta."""
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


def _gaussian_fit_epsilon(config: DPLloydConfig) -> float:
    """For Gaussian (or colored) noise, the exact epsilon at the claimed delta of the whole
    transcript for a worst-case record (the composition of Gaussian releases is one Gaussian,
    s^2 = sum_t s_t^2); nan for Laplace noise."""
    if config.noise.norm != 2:
        return float("nan")
    s2 = 0.0
    for eps_t in config.schedule:
        cal = iteration_releases(config, float(eps_t))[0].calibration
        s2 += (cal.sensitivity / cal.scale) ** 2
    return _gaussian_epsilon(float(np.sqrt(s2)), config.delta * len(config.schedule))


# --- rows --------------------------------------------------------------------------------------
def tightness_row(s: Scores) -> dict[str, object]:
    """One row of the tightness table from a target's statistic."""
    thresholds = loss_thresholds(s.claimed_epsilon)
    best = uniform_lower_bound(s.scores0, s.scores1, thresholds, delta=s.delta,
                               confidence=CONFIDENCE)
    split = epsilon_lower_bound(s.scores0, s.scores1, delta=s.delta, confidence=CONFIDENCE,
                                rng=np.random.default_rng(_seed("split", s.target, s.level)))[0]
    goal = TARGET_RATIO[s.level] * s.claimed_epsilon
    need = float("nan")
    if best.lower_bound < goal:  # the trials it would take, from these trials' event rates
        # (inf when the events it needs are rarer than these trials resolve)
        favoured, other = _event_rates(s.scores0, s.scores1, thresholds)
        need = trials_needed(favoured, other, goal,
                             events=best.events, delta=s.delta, confidence=CONFIDENCE,
                             power=0.5, estimated_from=min(s.scores0.size, s.scores1.size))
    return {"target": s.target, "level": s.level, "claimed_epsilon": s.claimed_epsilon,
            "delta": s.delta, "lower_bound": best.lower_bound, "confidence": CONFIDENCE,
            "trials": int(s.scores0.size), "statistic": s.statistic, "pair": s.pair,
            "ratio": best.lower_bound / s.claimed_epsilon, "target_ratio": TARGET_RATIO[s.level],
            "target_met": bool(best.lower_bound >= goal), "tight_epsilon": s.tight_epsilon,
            "largest_loss_seen": float(max(s.scores0.max(), -s.scores1.min())),
            "estimate": best.estimate, "event": f"loss {'>= ' if best.favours == 'D' else '<= -'}"
                                                 f"{best.threshold:.4g} (likelier under "
                                                 f"{best.favours})",
            "events": best.events, "split_sample_bound": split,
            "trials_for_target": need, "seconds": s.seconds}


#: Trials per side of each target in the committed table (the Gaussian tails need the most).
MECHANISM_TRIALS = {"Laplace (exact discrete sampler)": 200_000,
                    "Laplace (float sampler)": 200_000,
                    "Gaussian (discrete, zCDP calibration)": 2_000_000,
                    "Gaussian (float, analytic calibration)": 4_000_000,
                    "colored Gaussian (box covariance)": 2_000_000,
                    "exponential": 1_000_000, "DI Laplace": 200_000}
#: (release, fit) trials per side of the algorithms; DPKPrototypes draws its modes one replica
#: at a time, about 30 times slower.
ALGORITHM_TRIALS = {"release": 2_000_000, "fit": 200_000}
PROTOTYPES_TRIALS = {"release": 100_000, "fit": 90_000}
#: Larger audits where a pilot of the default size (other seeds: the seed depends on the size)
#: estimated that the target needs more trials and that they fit in about 10 minutes here.
MORE_TRIALS = {("dp-kccm", "release"): 4_800_000, ("dp-kccm", "fit"): 500_000,
               ("di", "fit"): 300_000}


def targets() -> list[str]:
    """Every target of the table: the mechanisms, then the algorithms."""
    return [*MECHANISMS, *ALGORITHMS]


def tightness_rows(target: str, trials: int = 0) -> pd.DataFrame:
    """The table's rows for one target: one for a mechanism, two (release and fit) for an
    algorithm; ``trials`` per side (0: the committed table's)."""
    if target in MECHANISMS:
        scores = [mechanism_scores(target, trials or MECHANISM_TRIALS[target])]
    elif target in ALGORITHMS:
        plan = PROTOTYPES_TRIALS if target == "DPKPrototypes" else ALGORITHM_TRIALS
        scores = [algorithm_scores(target, level,
                                   trials or MORE_TRIALS.get((target, level), plan[level]))
                  for level in ("release", "fit")]
    else:
        raise ValueError(f"unknown target {target!r}; the targets are {targets()}")
    return pd.DataFrame([tightness_row(s) for s in scores])


#: The longest a power-study audit may run (seconds, both datasets, at the simulation's speed).
DETECT_SECONDS = 600.0


def largest_planted_loss(name: str, factor: float) -> float:
    """The largest privacy loss the whole-fit statistic can show when ``factor`` is planted in
    algorithm ``name``: ``factor`` times the budget it scores for Laplace noise
    (:func:`scored_budget`), the exact epsilon of the planted transcript at the claimed delta
    for Gaussian noise. An overspend whose loss stays at or below the claim is no violation."""
    config = planted(_config(name), factor)
    exact = _gaussian_fit_epsilon(config)
    return exact if np.isfinite(exact) else factor * scored_budget(name, "fit")


def _event_rates(s0: np.ndarray, s1: np.ndarray,
                 thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each grid event's frequency under the dataset it favours and under the other: its
    count (one sort of each sample, :func:`dpkmeans.study.uniform.event_counts`) over the
    trials, the same float64 as the mean of the event's indicator (NaN-free scores)."""
    above0, below0 = event_counts(s0, thresholds)
    above1, below1 = event_counts(s1, thresholds)
    favoured = np.r_[above0 / s0.size, below1 / s1.size]
    other = np.r_[above1 / s1.size, below0 / s0.size]
    return favoured, other


#: The columns of a power-study row that describe the event its estimate rests on (NaN when
#: no fit is simulated or no event qualifies).
EVENT_COLUMNS = ("event", "chosen_log_ratio", "measured_log_ratio", "measured_favoured",
                 "measured_other")


def _event_name(i: int, thresholds: np.ndarray) -> str:
    """Grid event ``i`` of :func:`_event_rates` in words: the first half are ``loss >= tau``
    (likelier under D), the second ``loss <= -tau`` (likelier under D')."""
    m = thresholds.size
    if i < m:
        return f"loss >= {thresholds[i]:.4g} (likelier under D)"
    return f"loss <= -{thresholds[i - m]:.4g} (likelier under D')"


def _log_ratio(favoured: float, other: float, delta: float) -> float:
    """``ln (favoured - delta) / other`` of two event frequencies (inf when other is 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.maximum(favoured - delta, 0.0) / other))


def _split_estimate(fit: Scores, thresholds: np.ndarray) -> dict[str, object]:
    """Trials a side for :data:`POWER` at the claim: the event is chosen on the first half of
    the simulated fits (the one needing the fewest trials there) and its rates are measured on
    the second half. Choosing and measuring on the same fits picks the event whose rates were
    luckiest, and underestimates the trials.

    Returns ``trials_needed`` and the event it rests on (:data:`EVENT_COLUMNS`): its log ratio
    on the choosing half and on the measuring half, and its counts there under the dataset it
    favours and under the other. The trials grow like the inverse square of the measured log
    ratio's margin over the claim, so two entries are only as different as their margins."""
    half = min(fit.scores0.size, fit.scores1.size) // 2
    rest = fit.scores0.size - half
    options = dict(events=2 * thresholds.size, delta=fit.delta, confidence=CONFIDENCE,
                   power=POWER, min_count=EVENT_FLOOR)
    chosen_f, chosen_o = _event_rates(fit.scores0[:half], fit.scores1[:half], thresholds)
    each = [trials_needed(chosen_f[i:i + 1], chosen_o[i:i + 1], fit.claimed_epsilon,
                          estimated_from=half, **options) for i in range(chosen_f.size)]
    i = int(np.argmin(each))
    if not np.isfinite(each[i]):
        return {"trials_needed": float("inf"), **dict.fromkeys(EVENT_COLUMNS, float("nan"))}
    measured_f, measured_o = _event_rates(fit.scores0[half:], fit.scores1[half:], thresholds)
    need = trials_needed(measured_f[i:i + 1], measured_o[i:i + 1], fit.claimed_epsilon,
                         estimated_from=rest, **options)
    return {"trials_needed": need, "event": _event_name(i, thresholds),
            "chosen_log_ratio": _log_ratio(chosen_f[i], chosen_o[i], fit.delta),
            "measured_log_ratio": _log_ratio(measured_f[i], measured_o[i], fit.delta),
            "measured_favoured": int(round(measured_f[i] * rest)),
            "measured_other": int(round(measured_o[i] * rest))}


def power_rows(name: str, *, simulate: int = 100_000, detect_factor: float = 1.25,
               factors: tuple[float, ...] = FACTORS) -> pd.DataFrame:
    """The power study of corrected algorithm ``name``: for each planted overspend of ``factors``,
    the trials a side that the whole-fit audit needs to expose it (bound > claim) with
    probability :data:`POWER`, estimated from ``simulate`` fits a side of the planted
    configuration (:func:`_split_estimate`; ``inf``, with nothing simulated, when the planted
    loss cannot exceed the claim, :func:`largest_planted_loss`); then, for ``detect_factor``,
    the audit itself at that many trials, with fresh seeds, when it takes at most
    :data:`DETECT_SECONDS`. Book: chapter 6, "Auditing an algorithm"."""
    if name not in loop_choices():
        raise ValueError(f"unknown algorithm {name!r}; the corrected DP-Lloyd ones are "
                         f"{list(loop_choices())}")
    rows = []
    claimed, delta = fit_claim(name)
    thresholds = loss_thresholds(claimed)
    for f in factors:
        largest = largest_planted_loss(name, f)
        need = seconds = float("inf")
        event: dict[str, object] = dict.fromkeys(EVENT_COLUMNS, float("nan"))
        if largest > claimed:  # else no audit can expose it: the fits are not simulated
            fit = algorithm_scores(name, "fit", simulate, factor=f, purpose="power")
            event = _split_estimate(fit, thresholds)
            need = float(event.pop("trials_needed"))
            seconds = need * fit.seconds / simulate  # the audit's time at the simulation's speed
        row = {"algorithm": name, "factor": f, "claimed_epsilon": claimed,
               "true_epsilon": f * claimed, "largest_loss": largest,
               "delta": delta, "simulated": simulate, "trials_needed": need,
               "audit_minutes": seconds / 60, "confidence": CONFIDENCE, "power": POWER,
               "detect_trials": 0, "detect_bound": float("nan"), "detected": False, **event}
        if f == detect_factor and np.isfinite(need) and seconds <= DETECT_SECONDS:
            n = int(need)
            audit = algorithm_scores(name, "fit", n, factor=f, purpose="detect")
            bound = uniform_lower_bound(audit.scores0, audit.scores1, thresholds,
                                        delta=audit.delta, confidence=CONFIDENCE).lower_bound
            row.update(detect_trials=n, detect_bound=bound, detected=bool(bound > claimed))
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
READER_COLUMNS = {"target": "audited", "level": "level", "claimed_epsilon": "claimed ε",
                  "lower_bound": "lower bound (99%)", "ratio": "bound / claim",
                  "trials": "trials a side", "target_met": "target met"}


def strongest_audits(targets: list[str], frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The committed tightness rows of ``targets`` (:data:`TABLE`), with the columns a reader
    reads (:data:`READER_COLUMNS`): what a paper chapter shows of its corrected algorithm's
    strongest audit."""
    if frame is None:
        frame = pd.read_csv(committed_file(TABLE))
    missing = sorted(set(targets) - set(frame["target"]))
    if missing:
        raise ValueError(f"no committed audit of {missing}: run the audit_tightness sweep")
    rows = frame[frame["target"].isin(targets)][list(READER_COLUMNS)]
    rows = rows.assign(target_met=rows["target_met"].map({True: "yes", False: "no"}))
    return rows.rename(columns=READER_COLUMNS).reset_index(drop=True)
