"""Verdicts on a paper's claims, computed from sweep summaries (book: the claims ledgers).

A sweep summarises each point by a mean and a standard error (e.g. :mod:`dpkmeans.papers.dpkccm.study`).
Two points are compared with Welch's t test on the difference of means at the 5% level. A claim
judged over n points counts the points where the claimed direction is significant (s), where
the opposite direction is significant (o) and where neither is (z = n - s - o). Four verdicts,
checked in this order:

- **holds**: s >= required * n (``required`` is 1 for "in all cases", less for "nearly all");
- **refuted**: o > n / 2, the opposite of the claim is significant at most points;
- **inconclusive**: z > n / 2, no significant difference at most points;
- **mixed**: anything else: the points disagree (some support, some oppose or show nothing).

"No significant difference" is never read as "the opposite". Each of these is the verdict of
one test (a row of a claims ledger: one dataset, metric or reading). A claim judged by several
tests gets one of the four claim verdicts of :data:`CLAIM_VERDICTS` (:func:`combine`):

- **holds**: every test holds;
- **holds in part**: at least one test holds and at least one does not;
- **not supported**: no test holds and at least one is refuted;
- **inconclusive**: no test holds and none is refuted.

A test that is "mixed" counts as one that neither holds nor is refuted: its points disagree,
so it supports the claim no more than an inconclusive test does. A claim that no test
supports is therefore never "holds" nor "holds in part", whatever the other tests say. The
rule is fixed before looking at any result, and the counts stand beside every verdict
(:func:`tally`), so a reader can apply another rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpkmeans.study.reading import join_names

__all__ = ["Comparison", "compare_means", "agreement", "verdict", "combine", "tally",
           "verdict_with_counts", "VERDICTS", "CLAIM_VERDICTS", "LEVEL", "AGREEMENTS"]

#: Two-sided significance level of every comparison.
LEVEL = 0.05
#: The four verdicts of one test (module docstring).
VERDICTS = ("holds", "refuted", "inconclusive", "mixed")
#: The four verdicts of a claim over its tests (module docstring, :func:`combine`).
CLAIM_VERDICTS = ("holds", "holds in part", "not supported", "inconclusive")


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


#: Outcomes of :func:`agreement`.
AGREEMENTS = ("agree", "differ", "undecided")


def agreement(mean_a: float, se_a: float, df_a: int, mean_b: float, se_b: float, df_b: int,
              margin: float) -> str:
    """Whether two means agree to within ``margin``, for claims of the form "a is close to b".

    "agree": equivalence shown by two one-sided tests at the 5% level (the 90% interval of
    a - b lies inside (-margin, margin)); "differ": |a - b| exceeds the margin significantly
    (one-sided, 5%); "undecided" otherwise. Welch's degrees of freedom, as :func:`compare_means`.
    """
    if not margin > 0:
        raise ValueError(f"margin must be > 0, got {margin}")
    var = se_a**2 + se_b**2
    if not np.isfinite(var) or var <= 0:
        raise ValueError("standard errors must be finite and not both zero")
    se = float(np.sqrt(var))
    df = var**2 / (se_a**4 / df_a + se_b**4 / df_b)
    half = float(stats.t.ppf(1 - LEVEL, df)) * se
    diff = abs(mean_a - mean_b)
    if diff + half < margin:
        return "agree"
    if diff - half > margin:
        return "differ"
    return "undecided"


def verdict(supported: int, opposite: int, total: int, required: float = 1.0) -> str:
    """holds / refuted / inconclusive / mixed from the points' outcomes (module docstring)."""
    if total <= 0:
        raise ValueError("a claim needs at least one point")
    if min(supported, opposite) < 0 or supported + opposite > total:
        raise ValueError(f"need 0 <= supported + opposite <= total, got {supported}, "
                         f"{opposite}, {total}")
    if not 0.5 <= required <= 1.0:
        raise ValueError(f"required must be in [0.5, 1], got {required}")
    holds, refuted, inconclusive, mixed = VERDICTS
    if supported >= required * total:
        return holds
    if opposite > total / 2:
        return refuted
    if total - supported - opposite > total / 2:
        return inconclusive
    return mixed


def combine(verdicts: Iterable[str]) -> str:
    """A claim's verdict over its tests, one of :data:`CLAIM_VERDICTS` (module docstring).

    Parameters
    ----------
    verdicts : iterable of str
        The tests' verdicts, each one of :data:`VERDICTS`; at least one.

    Returns
    -------
    str
        "holds" if every test holds; "holds in part" if at least one holds and at least one
        does not; "not supported" if none holds and at least one is refuted; "inconclusive"
        if none holds and none is refuted (a "mixed" test counts as neither).

    Examples
    --------
    >>> combine(["refuted"] * 8 + ["inconclusive"] * 4)
    'not supported'
    >>> combine(["holds", "mixed"])
    'holds in part'
    """
    values = list(verdicts)
    if not values or any(v not in VERDICTS for v in values):
        raise ValueError(f"verdicts must be a non-empty list drawn from {VERDICTS}, got {values}")
    holds, refuted, _, _ = VERDICTS
    held = sum(v == holds for v in values)
    all_hold, in_part, not_supported, inconclusive = CLAIM_VERDICTS
    if held == len(values):
        return all_hold
    if held:
        return in_part
    return not_supported if refuted in values else inconclusive


def tally(verdicts: Iterable[str], unit: str = "test") -> str:
    """The tests' verdicts counted in words, in the order of :data:`VERDICTS` (any other
    value, such as "not tested", after them): ``"refuted in 8 and inconclusive in 4 of 12
    tests"``, ``"holds in 1 of 1 test"``.

    Parameters
    ----------
    verdicts : iterable of str
        One verdict per test; at least one.
    unit : str
        What a test is called in the sentence ("test", "dataset", ...); an "s" makes it plural.
    """
    values = list(verdicts)
    if not values:
        raise ValueError("a tally needs at least one verdict")
    order = list(VERDICTS) + sorted(set(values) - set(VERDICTS))
    parts = [f"{v} in {values.count(v)}" for v in order if v in values]
    return f"{join_names(parts)} of {len(values)} {unit}{'s' if len(values) != 1 else ''}"


def verdict_with_counts(verdicts: Iterable[str], unit: str = "test") -> str:
    """A claim's verdict (:func:`combine`) with its tests' counts (:func:`tally`) beside it:
    ``"not supported (refuted in 8 and inconclusive in 4 of 12 tests)"``."""
    values = list(verdicts)
    return f"{combine(values)} ({tally(values, unit)})"
