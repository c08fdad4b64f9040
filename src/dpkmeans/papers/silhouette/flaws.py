"""The published privacy flaws of Zhang, Liu and Wang (2018), as data
(:class:`dpkmeans.engine.flaws.Flaw`). The as-published configurations of
:mod:`dpkmeans.papers.silhouette.variants` carry them; book chapter 8 shows and audits each. The
ledger records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import Flaw

__all__ = ["FLAWS", "SHARED_NOISE", "EXACT_SILHOUETTES", "MIN_NORMALISED_WEIGHTS",
           "UNDEFINED_INITIAL_BUDGET", "POSITION_SPLIT"]

SHARED_NOISE = Flaw(
    name="shared-noise",
    kind="leak",
    chapter="book chapter 8",
    effects=frozenset({"shared-noise"}),
    text=("one Laplace draw is added to a cluster's sum and to its count (the Noise_k^t of "
          "Zhang, Liu and Wang 2018, read literally): the cluster's sum minus its count is "
          "released exactly"),
)

EXACT_SILHOUETTES = Flaw(
    name="exact-silhouettes",
    kind="leak",
    chapter="book chapter 8",
    text=("the per-cluster silhouettes that set the noise scales are computed on the "
          "private data without noise (Zhang, Liu and Wang 2018, as published)"),
)

MIN_NORMALISED_WEIGHTS = Flaw(
    name="min-normalised-weights",
    kind="overspend",
    chapter="book chapter 8",
    text=("weights (1 + S_j) / (1 + min_l S_l) ≥ 1 (Zhang, Liu and Wang 2018): its claim "
          "ε_j^t ≤ ε/2^t is false; the ledger charges the true cost, ε_t max_j w_j"),
)

UNDEFINED_INITIAL_BUDGET = Flaw(
    name="undefined-initial-budget",
    kind="leak",
    chapter="book chapter 8",
    text=("the budget of the initial centres is undefined (Zhang, Liu and Wang 2018); "
          "charged as ε/2⁰ = ε, outside the declared total"),
)

POSITION_SPLIT = Flaw(
    name="position-split",
    kind="leak",
    chapter="book chapter 8",
    text=("equal split by record order (Zhang, Liu and Wang 2018): adding a record moves "
          "every later record to another subset, so d + 1 does not bound a subset's change"),
)

#: Every flaw of the paper, in the order the book lists them.
FLAWS = (SHARED_NOISE, EXACT_SILHOUETTES, MIN_NORMALISED_WEIGHTS, UNDEFINED_INITIAL_BUDGET,
         POSITION_SPLIT)
