"""The published privacy flaws of APDPk-means, as data (:class:`dpkmeans.engine.flaws.Flaw`). The
as-published configurations of :mod:`dpkmeans.papers.apdp.variants` carry them; book chapter 10
shows and audits each. The ledger records a leak's text, or charges an overspend at its true
cost and notes it.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import Flaw

__all__ = ["FLAWS", "PARTITION_STOP", "PRIVATE_EPSILON_M", "RECORD_ORDER_SPLIT",
           "RECORD_INITIALISATION"]

PARTITION_STOP = Flaw(
    name="partition-stop",
    kind="leak",
    chapter="book chapter 10",
    effects=frozenset({"partition-stop"}),
    text=("a run stops when the partition no longer changes (APDPk-means): the test reads "
          "the exact partition of the private data, so when a run stops (and how much of "
          "the budget it spends) is released without noise"),
)

PRIVATE_EPSILON_M = Flaw(
    name="private-epsilon-m",
    kind="leak",
    chapter="book chapter 10",
    text=("APDPk-means' minimum per-iteration budget ε_m (its eq. 4), which picks the "
          "branch and every iteration's budget, reads the exact number of private records: "
          "one record more can change the schedule"),
)

RECORD_ORDER_SPLIT = Flaw(
    name="record-order-split",
    kind="leak",
    chapter="book chapter 10",
    text=("the k splits that the initial records are drawn from follow record order (APDPk-"
          "means): adding a record moves every later record to another split, so no per-"
          "split sensitivity holds"),
)

RECORD_INITIALISATION = Flaw(
    name="record-initialisation",
    kind="overspend",
    chapter="book chapter 10",
    text=("the initial centres are k private records with Laplace noise of undefined budget"
          " (APDPk-means): the ledger charges the most favourable reading, ε₀ = d / b per "
          "record (b the noise scale) in parallel over the k splits, on top of the declared"
          " total"),
)

#: Every flaw of the paper, in the order the book lists them.
FLAWS = (PARTITION_STOP, PRIVATE_EPSILON_M, RECORD_ORDER_SPLIT, RECORD_INITIALISATION)
