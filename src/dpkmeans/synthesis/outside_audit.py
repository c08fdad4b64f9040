"""Auditing the outside algorithms (book: synthesis chapter, "Beyond the five papers"), by the
method of chapter 6, "Auditing an algorithm": many fits on two neighbouring datasets, an event
chosen on half of them, a Clopper-Pearson lower bound on epsilon from the other half
(:func:`dpkmeans.study.audit.audit_configuration`).

Neither ``lsh`` nor ``balcan`` is a DP-Lloyd loop, so the transcript audit of that chapter
(the exact log-likelihood ratio of every noisy statistic) does not apply to them: the audit
here sees only what a user sees, the released centroids. Its power is measured the way the
chapter measures it, with planted overspends: the same algorithm run at ``factor`` times its
budget while the claim stays, a run that the audit should expose as the factor grows. The
smallest factor it exposes says how strong the audit is; a factor-1 row that is "consistent"
says only that the audit found nothing, which is all an audit can say.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE, FitInputs
from dpkmeans.engine.standalone import StandaloneConfig
from dpkmeans.study.audit import audit_configuration, corner_pair
from dpkmeans.study.parts import part_block
from dpkmeans.study.shared import stable_seed
from dpkmeans.validation import check_positive_int

__all__ = ["ALGORITHMS", "BOX", "CONFIDENCE", "EPSILON", "FACTORS", "TRIALS", "audit_rows", "config_at",
           "pair", "statistic"]

ALGORITHMS = ("lsh", "balcan")
EPSILON = 1.0  # the claim
DELTA = 1e-6  # lsh's delta
#: 1: the algorithm as shipped; more: a planted overspend (1000: the noise left out, in effect)
FACTORS = (1.0, 2.0, 10.0, 1000.0)
CONFIDENCE = 0.99
TRIALS = 2000  # fits per side and factor
BOX = (np.array([-1.0, -1.0]), np.array([1.0, 1.0]))
GROUP = 10  # records at each of two opposite corners
BASE_SEED = 20261126


def pair() -> tuple[np.ndarray, np.ndarray, str]:
    """D: ``GROUP`` records at (-1, -1) and ``GROUP`` at (1, 0.5) in [-1, 1]^2; D' adds one at
    the corner (1, -1), nearer the second group, whose centre it moves by 1.5 / (GROUP + 1)
    (add/remove adjacency; a record added where a group already sits would move nothing, and
    one as near to both groups would leave the cluster it joins to chance)."""
    groups = np.r_[np.full((GROUP, 2), -1.0), np.tile([1.0, 0.5], (GROUP, 1))]
    X0, X1 = corner_pair(groups, BOX, corner=np.array([1.0, -1.0]))
    return X0, X1, (f"{GROUP} records at (-1, -1) and {GROUP} at (1, 0.5) vs the same plus "
                    "one at (1, -1)")


def statistic(result) -> np.ndarray:
    """The released centroids of each fit, sorted by their first coordinate and flattened:
    (trials, 2 k); the audit picks its event on one of these columns."""
    C = np.asarray(result.centroids)
    order = np.argsort(C[:, :, 0], axis=1, kind="stable")
    return np.take_along_axis(C, order[:, :, None], axis=1).reshape(C.shape[0], -1)


def config_at(name: str, factor: float) -> StandaloneConfig:
    """The algorithm's configuration on the pair (k = 2, N = 2 GROUP public), at ``factor``
    times the claimed budget."""
    c = CATALOGUE[name]
    config = c.build(FitInputs(2, EPSILON, BOX, max_iter=5, n_records=2 * GROUP,
                               delta=DELTA if c.needs_delta else None))
    if not isinstance(config, StandaloneConfig):
        raise ValueError(f"{name!r} is a DP-Lloyd configuration: the transcript audit of "
                         "chapter 6, 'Auditing an algorithm', is stronger for it")
    return config if factor == 1.0 else replace(config, epsilon=config.epsilon * factor)


def audit_rows(name: str, trials: int = TRIALS, factors: tuple[float, ...] = FACTORS, *,
               base_seed: int = BASE_SEED, part: int = 0, parts: int = 1) -> pd.DataFrame:
    """One row per factor: the audit's lower bound on epsilon against the claim, for
    algorithm ``name`` (``trials`` fits per side); with ``parts`` > 1, only the ``part``-th
    block of ``factors`` (:func:`dpkmeans.study.parts.part_block`; each factor's audit draws
    from its own seed)."""
    trials = check_positive_int(trials, "trials")
    X0, X1, text = pair()
    rows = []
    for factor in part_block(factors, part, parts):
        config = config_at(name, float(factor))
        seed = stable_seed(base_seed, {"study": "outside_audit", "algorithm": name,
                                       "factor": float(factor), "trials": trials})
        report = audit_configuration(f"{name} x{factor:g}", config, X0, X1, statistic,
                                     trials=trials, confidence=CONFIDENCE, seed=seed,
                                     claimed_epsilon=EPSILON, delta=config.delta)
        rows.append({"algorithm": name, "factor": float(factor), "claimed_epsilon": EPSILON,
                     "true_epsilon": EPSILON * factor, "delta": config.delta,
                     "trials": trials, "lower_bound": report.lower_bound,
                     "estimate": report.estimate, "confidence": CONFIDENCE,
                     "event": report.event, "verdict": report.verdict, "pair": text,
                     "seconds": report.seconds})
    return pd.DataFrame(rows)
