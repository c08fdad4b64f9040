"""Auditing FastLloyd (Diaa, Humphries and Kerschbaum 2025; book chapter 12, "FastLloyd"), by
the method of chapter 6, "Auditing an algorithm", and the flaw of the authors' code caught.

FastLloyd is a DP-Lloyd loop, so the transcript audit applies: every iteration releases each
cluster's whitened (offset sum, count), and the centres entering an iteration are public, so an
auditor who knows both datasets of a pair recomputes the exact statistics of each
(:func:`dpkmeans.study.transcript.exact_statistics`, the engine's own radius assignment) and
scores the log-likelihood ratio of the whole transcript
(:func:`dpkmeans.study.transcript.transcript_log_ratios`). The bound is the uniform one over the
loss thresholds that the claim fixes (:func:`dpkmeans.study.uniform.uniform_lower_bound`).

The pair is the one the outside algorithms are audited on
(:func:`dpkmeans.synthesis.outside_audit.pair`): k = 2, N = 20 public, the box [-1, 1]^2, D'
adding a record at the corner (1, -1). The starts are public and fixed: the box's midpoint,
whose distance to that corner is the first radius r_1 (half the diagonal), so the record's
offset has the full sensitivity in the first iteration, and the opposite corner (-1, -1).

Power is shown, as for the outside algorithms, by planted overspends: the same configuration
with its schedule multiplied by ``factor`` (less noise) while the claim stays. The flaw of the
authors' code (:data:`~dpkmeans.papers.fastlloyd.flaws.SHARED_SEED`) is caught by a statistic
that targets it: in the first iteration's released vector the noise of cluster 0's count is
the noise of its first offset coordinate, so ``count_0 - sum_{0,0}`` is exact; it takes one
value on D and another on D', and the split-sample audit
(:func:`dpkmeans.study.audit.audit_samples`) bounds epsilon by the trials alone. The corrected
algorithm's same statistic carries two independent noises and stays far below the claim.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import choice
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult, run
from dpkmeans.papers.fastlloyd.variants import as_published
from dpkmeans.papers.registry import FitInputs
from dpkmeans.study.audit import VERDICTS, audit_samples
from dpkmeans.study.shared import stable_seed
from dpkmeans.study.transcript import transcript_log_ratios
from dpkmeans.study.uniform import loss_thresholds, uniform_lower_bound
from dpkmeans.synthesis.outside_audit import BOX, GROUP, pair
from dpkmeans.validation import check_positive_int

__all__ = ["BASE_SEED", "CHUNK", "COMBINATION", "CONFIDENCE", "DELTA", "EPSILON", "FACTORS",
           "START", "TRANSCRIPT", "TRIALS", "VARIANTS", "audit_rows", "config_of", "fits",
           "shared_seed_statistic", "transcript_statistic"]

EPSILON = 1.0  # the claim
DELTA = 1e-6  # the Gaussian form's delta
CONFIDENCE = 0.99
#: 1: as built; more: a planted overspend (1000: the noise left out, in effect)
FACTORS = (1.0, 2.0, 10.0, 1000.0)
#: The audited forms: the corrected Gaussian one, the corrected pure one, and the Gaussian one
#: as in the authors' code (its count and sum noise from one seed; audited at factor 1 only).
VARIANTS = ("fastlloyd", "fastlloyd-laplace", "as-published")
TRIALS = 50_000  # fits per side and factor (the whole sweep: about 3.5 minutes on one core)
CHUNK = 25_000  # fits per engine call (bounds the memory)
BASE_SEED = 20261129
#: The public starts: the box's midpoint (the record at (1, -1) is r_1 from it) and (-1, -1).
START = np.array([[0.0, 0.0], [-1.0, -1.0]])
STUDY = "fastlloyd_audit"
TRANSCRIPT = "log-likelihood ratio of the whole transcript"
COMBINATION = "count_0 - sum_{0,0} of iteration 1's released (whitened) vector"


def config_of(variant: str, factor: float = 1.0) -> DPLloydConfig:
    """The configuration of ``variant`` (:data:`VARIANTS`) on the pair (k = 2, N = 2 GROUP
    public, epsilon 1, delta 1e-6 for the Gaussian forms), with an overspend of ``factor``
    planted: the schedule times ``factor``, the target dropped, the claim unchanged."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    gaussian = variant != "fastlloyd-laplace"
    inputs = FitInputs(2, EPSILON, BOX, max_iter=5, n_records=2 * GROUP,
                       delta=DELTA if gaussian else None)
    config = (as_published(inputs) if variant == "as-published"
              else choice(variant).build(inputs))
    if factor == 1.0:
        return config
    return replace(config, schedule=config.schedule * float(factor), target=None)


def fits(X: np.ndarray, config: DPLloydConfig, seed: np.random.SeedSequence,
         trials: int) -> DPLloydResult:
    """``trials`` fits of ``config`` on X from the public starts :data:`START`, with the
    transcript kept (``record_history``)."""
    start = np.broadcast_to(START, (trials, *START.shape)).copy()
    return run(X, config, seed, replicas=trials, initial_centroids=start, record_history=True)


def _side(X: np.ndarray, pair_: tuple[np.ndarray, np.ndarray], config: DPLloydConfig,
          seed: np.random.SeedSequence, trials: int,
          combination: bool) -> tuple[list[np.ndarray], DPLloydResult]:
    """The statistics of ``trials`` fits on X, ``CHUNK`` at a time (each chunk its own child
    of ``seed``): the transcript statistic, and the shared-seed combination when asked; with
    the last chunk's result (its ledger)."""
    parts: list[list[np.ndarray]] = [[], []]
    left = trials
    for child in seed.spawn(-(-trials // CHUNK)):
        result = fits(X, config, child, min(CHUNK, left))
        parts[0].append(transcript_statistic(result, *pair_))
        if combination:
            parts[1].append(shared_seed_statistic(result))
        left -= CHUNK
    return [np.concatenate(p) for p in parts if p], result


def transcript_statistic(result: DPLloydResult, X0: np.ndarray, X1: np.ndarray) -> np.ndarray:
    """Per fit, the log-likelihood ratio of D = X0 against D' = X1 of its whole transcript."""
    return transcript_log_ratios(result, X0, X1).sum(axis=1)


def shared_seed_statistic(result: DPLloydResult) -> np.ndarray:
    """Per fit, ``count_0 - sum_{0,0}`` of the first iteration's released vector: the noisy
    statistics of ``result.release_history[0]`` (data units) whitened by the release's
    :meth:`~dpkmeans.engine.relative.RelativeRelease.whitening`. Under the authors' shared
    seed its two noises are equal and cancel: the value is exact."""
    config = result.config
    noisy = result.release_history[0][0] * config.step.whitening(config, 0)
    return noisy[:, 0, -1] - noisy[:, 0, 0]


def _claim(variant: str) -> float:
    return 0.0 if variant == "fastlloyd-laplace" else DELTA


def _ledger(result: DPLloydResult, delta: float) -> tuple[bool, float]:
    """(the ledger's verdict, the epsilon it proves at delta (0: pure); inf when it records a
    leak)."""
    ledger = result.ledger
    if not ledger.is_private:
        return False, float("inf")
    return True, float(ledger.epsilon_at(delta) if delta > 0 else ledger.total().epsilon)


def audit_rows(variant: str, trials: int = TRIALS, factors: tuple[float, ...] = FACTORS, *,
               base_seed: int = BASE_SEED) -> pd.DataFrame:
    """One sweep cell: the audit rows of ``variant`` (:data:`VARIANTS`; the as-published form at
    factor 1 only), ``trials`` fits per side and factor.

    Every run is scored by the transcript statistic (uniform bound over the loss grid); the
    Gaussian runs at factor 1 also by the shared-seed combination (split-sample bound).

    Parameters
    ----------
    variant : str
        One of :data:`VARIANTS`.
    trials : int, default TRIALS
        Fits per side and factor.
    factors : tuple of float, default FACTORS
        The planted overspends.
    base_seed : int, default BASE_SEED
        The study's base seed (each run derives its own from it and the point).

    Returns
    -------
    pandas.DataFrame
        One row per (factor, statistic).
    """
    trials = check_positive_int(trials, "trials", minimum=4)
    X0, X1, text = pair()
    delta = _claim(variant)
    rows = []
    for factor in (1.0,) if variant == "as-published" else tuple(map(float, factors)):
        config = config_of(variant, factor)
        seed = stable_seed(base_seed, {"study": STUDY, "variant": variant, "factor": factor,
                                       "trials": trials})
        g0, g1, g_split = np.random.SeedSequence(seed).spawn(3)
        combination = delta > 0 and factor == 1.0
        start = time.perf_counter()
        sides = [_side(X, (X0, X1), config, g, trials, combination)
                 for X, g in ((X0, g0), (X1, g1))]
        seconds = time.perf_counter() - start
        private, proved = _ledger(sides[0][1], delta)
        common = {"variant": variant, "noise": config.noise.family, "factor": factor,
                  "claimed_epsilon": EPSILON, "delta": delta, "ledger_is_private": private,
                  "true_epsilon": proved, "iterations": config.iterations, "trials": trials,
                  "confidence": CONFIDENCE, "pair": text,
                  "start": "public, fixed: (0, 0) and (-1, -1)", "seconds": seconds}
        (scores0, combination0), (scores1, combination1) = (
            (side[0][0], side[0][-1]) for side in sides)
        bound = uniform_lower_bound(scores0, scores1, loss_thresholds(EPSILON), delta=delta,
                                    confidence=CONFIDENCE)
        sign = ">= " if bound.favours == "D" else "<= -"
        rows.append({**common, "statistic": TRANSCRIPT, "method": "uniform over the loss grid",
                     "lower_bound": bound.lower_bound, "estimate": bound.estimate,
                     "event": f"loss {sign}{bound.threshold:.4g} (likelier under "
                              f"{bound.favours})",
                     "verdict": VERDICTS[int(bound.lower_bound > EPSILON)]})
        if combination:
            report = audit_samples(variant, combination0, combination1, EPSILON, delta=delta,
                                   confidence=CONFIDENCE,
                                   seed=int(g_split.generate_state(1, np.uint64)[0] >> 1),
                                   names=("count_0 - sum_00",))
            rows.append({**common, "statistic": COMBINATION, "method": "split sample",
                         "lower_bound": report.lower_bound, "estimate": report.estimate,
                         "event": report.event, "verdict": report.verdict})
    return pd.DataFrame(rows)
