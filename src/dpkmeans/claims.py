"""Verdicts on a paper's claims, computed from sweep summaries (book: the claims ledgers).

A sweep summarises each point by a mean and a standard error (e.g. :mod:`dpkmeans.papers.dpkccm.study`).
Two points are compared with Welch's t test on the difference of means at the 5% level; a
claim over many points is then judged by the share of points where the claimed direction is
significant:

- **holds**: at least ``required`` of the points (1.0 for "in all cases", less for "nearly");
- **mixed**: at least half of them, but fewer than required;
- **fails**: fewer than half.

The rule is fixed before looking at any result, and the evidence string always says how many
points went each way, so a reader can apply a different rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["Comparison", "compare_means", "verdict", "VERDICTS", "LEVEL"]

#: Two-sided significance level of every comparison.
LEVEL = 0.05
#: The three verdicts, best first.
VERDICTS = ("holds", "mixed", "fails")


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing mean a with mean b (lower is better)."""

    difference: float  # a - b
    p_value: float

    @property
    def a_better(self) -> bool:
        return self.difference < 0 and self.p_value < LEVEL

    @property
    def b_better(self) -> bool:
        return self.difference > 0 and self.p_value < LEVEL


def compare_means(mean_a: float, se_a: float, df_a: int, mean_b: float, se_b: float,
                  df_b: int) -> Comparison:
    """Welch's two-sided t test of mean_a = mean_b from means, standard errors and their
    degrees of freedom (e.g. initialisations - 1)."""
    var = se_a**2 + se_b**2
    if not np.isfinite(var) or var <= 0:
        raise ValueError("standard errors must be finite and not both zero")
    t = (mean_a - mean_b) / np.sqrt(var)
    df = var**2 / (se_a**4 / df_a + se_b**4 / df_b)
    return Comparison(float(mean_a - mean_b), float(2 * stats.t.sf(abs(t), df)))


def verdict(successes: int, total: int, required: float = 1.0) -> str:
    """holds / mixed / fails from the number of points where the claim held (see module)."""
    if total <= 0:
        raise ValueError("a claim needs at least one point")
    if not 0.5 <= required <= 1.0:
        raise ValueError(f"required must be in [0.5, 1], got {required}")
    share = successes / total
    holds, mixed, fails = VERDICTS
    if share >= required:
        return holds
    return mixed if share >= 0.5 else fails
