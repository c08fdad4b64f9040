"""Auditing a whole fit in one run, with m canaries (Steinke, Nasr and Jagielski 2023).

Each of m canary records goes into the data independently with probability 1/2. After one run
the auditor scores every canary from the output, guesses "in" for the r highest scores and
"out" for the r' lowest, and counts its correct guesses. If the algorithm is epsilon-DP, the
number of correct guesses among the r + r' made is stochastically dominated by a
Binomial(r + r', e^eps / (1 + e^eps)) (their Theorem 3.1); with delta > 0 a term in delta
is added (their Theorem 5.2). The lower bound is the largest epsilon that the observed count
rejects at the chosen confidence. The numbers of guesses are fixed before the run (a few
candidates, with a Bonferroni correction over them). Book: chapter 6, "Auditing an algorithm".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from dpkmeans.validation import check_delta, check_positive_int

__all__ = ["OneRunBound", "one_run_p_value", "one_run_lower_bound", "guess_and_count"]


def one_run_p_value(m: int, guesses: int, correct: int, epsilon: float,
                    delta: float = 0.0) -> float:
    """P-value of ``correct`` right guesses out of ``guesses`` under an (epsilon, delta)-DP
    algorithm with m canaries: P[Binomial(guesses, q) >= correct], q = e^eps / (1 + e^eps),
    plus, for delta > 0, 2 m delta times the largest (P[Bin >= correct - i] - P[Bin >= correct])
    / i over i = 1, ..., correct (Steinke, Nasr and Jagielski 2023, Theorem 5.2)."""
    q = special.expit(epsilon)
    beta = float(stats.binom.sf(correct - 1, guesses, q))
    if delta == 0.0 or correct == 0:
        return beta
    i = np.arange(1, correct + 1)
    alpha = float(np.max((stats.binom.sf(correct - i - 1, guesses, q) - beta) / i))
    return min(beta + 2.0 * m * delta * alpha, 1.0)


def _largest_rejected(m: int, guesses: int, correct: int, delta: float, alpha: float) -> float:
    """The largest epsilon whose claim the count rejects at level alpha (0 if none)."""
    def excess(eps: float) -> float:  # > 0 while eps is rejected; decreasing in eps
        return alpha - one_run_p_value(m, guesses, correct, eps, delta)

    if guesses == 0 or excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e3:
            return float("inf")
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-9))


@dataclass(frozen=True)
class OneRunBound:
    """The outcome of a one-run audit."""

    lower_bound: float
    canaries: int
    guesses: int  # of the best candidate
    correct: int
    candidates: tuple[int, ...]  # the numbers of guesses tried (fixed in advance)


def guess_and_count(scores: ArrayLike, included: ArrayLike, guesses: int) -> int:
    """Correct guesses when "in" is guessed for the ``guesses // 2`` highest scores and "out"
    for the ``guesses - guesses // 2`` lowest (ties broken by position, which is fixed)."""
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included, dtype=bool)
    order = np.argsort(s, kind="stable")
    n_in = guesses // 2
    top, bottom = order[s.size - n_in:], order[:guesses - n_in]
    return int(inc[top].sum() + (~inc[bottom]).sum())


def one_run_lower_bound(scores: ArrayLike, included: ArrayLike, *,
                        candidates: tuple[int, ...], delta: float = 0.0,
                        confidence: float = 0.99) -> OneRunBound:
    """The one-run lower bound on epsilon: for each number of guesses in ``candidates``
    (fixed before the run), the largest epsilon rejected at level (1 - confidence) /
    len(candidates); the best of them."""
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included, dtype=bool)
    if s.ndim != 1 or s.shape != inc.shape:
        raise ValueError("scores and included must be 1-D arrays of the same length")
    m = s.size
    delta = check_delta(delta, allow_zero=True)
    if not candidates or any(check_positive_int(c, "guesses") > m for c in candidates):
        raise ValueError(f"candidates must be numbers of guesses between 1 and {m}")
    alpha = (1.0 - confidence) / len(candidates)
    best = (0.0, candidates[0], guess_and_count(s, inc, candidates[0]))
    for c in candidates:
        correct = guess_and_count(s, inc, c)
        bound = _largest_rejected(m, c, correct, delta, alpha)
        if bound > best[0]:
            best = (bound, c, correct)
    return OneRunBound(best[0], m, best[1], best[2], tuple(candidates))
