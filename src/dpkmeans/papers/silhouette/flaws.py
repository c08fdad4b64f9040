"""The published privacy flaws of Zhang, Liu and Wang (2018), as data
(:class:`dpkmeans.engine.flaws.Flaw`), and the per-iteration release that reproduces the shared
draw (:class:`SharedNoise`). The as-published configurations of
:mod:`dpkmeans.papers.silhouette.variants` carry them; book chapter 8 shows and audits each. The
ledger records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.strategies import JointRelease

__all__ = ["FLAWS", "SharedNoise", "SHARED_NOISE", "EXACT_SILHOUETTES", "MIN_NORMALISED_WEIGHTS",
           "UNDEFINED_INITIAL_BUDGET", "POSITION_SPLIT"]

SHARED_NOISE = Flaw(
    name="shared-noise",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 8",
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


@dataclass(frozen=True)
class SharedNoise(JointRelease):
    """The joint release of (S_j, n_j) with one draw per cluster added to its sum (every
    coordinate) and to its count: the Noise_k^t of Zhang, Liu and Wang (2018) read literally
    (flaw ``shared-noise``)."""

    shared: ClassVar[bool] = True
    flaws: ClassVar[tuple[Flaw, ...]] = (SHARED_NOISE,)
    name: str = "joint, one draw shared by sum and count"
