"""The published privacy flaws of APDPk-means, as data (:class:`dpkmeans.engine.flaws.Flaw`). The
as-published configurations of :mod:`dpkmeans.papers.apdp.variants` carry them; book chapter 10
shows and audits each. The ledger records a leak's text, or charges an overspend at its true
cost and notes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.strategies import StopMonitor, StopRule

__all__ = ["FLAWS", "PartitionRepeats", "PARTITION_STOP", "PRIVATE_EPSILON_M", "RECORD_ORDER_SPLIT",
           "RECORD_INITIALISATION"]

PARTITION_STOP = Flaw(
    name="partition-stop",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 10",
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


@dataclass(frozen=True)
class PartitionRepeats(StopRule):
    """Stop a replica where the exact partition no longer changes (the note's stopping rule,
    read on the private data: flaw ``partition-stop``)."""

    flaws: ClassVar[tuple[Flaw, ...]] = (PARTITION_STOP,)
    name: str = "stop where the exact partition repeats"

    def monitor(self, replicas: int, n_clusters: int, width: int) -> StopMonitor:
        return _PartitionMonitor(np.zeros((replicas, n_clusters, width)))


class _PartitionMonitor(StopMonitor):
    """The last iteration's exact statistics of every replica."""

    def __init__(self, last: np.ndarray) -> None:
        self.last = last

    def before_release(self, t: int, idx: np.ndarray, sums: np.ndarray,
                       counts: np.ndarray) -> np.ndarray:
        same = (_same_partition(sums, counts, self.last[idx]) if t
                else np.zeros(idx.size, bool))
        self.last[idx, ..., :-1], self.last[idx, ..., -1] = sums, counts
        return same

    def note(self, iterations_run: np.ndarray) -> str:
        return (f"stopped where the partition repeated (a leak, recorded above); iterations "
                f"run: {iterations_run.min()} to {iterations_run.max()}")


def _same_partition(sums: np.ndarray, counts: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per replica: whether the exact statistics equal the last iteration's. An unchanged
    partition gives equal statistics; a changed one gives equal statistics only if the records
    moved in and out of every cluster have exactly equal counts and sums (possible on
    grid-valued data, and then the run stops one iteration early)."""
    return (np.all(counts == last[..., -1], axis=1)
            & np.all(sums == last[..., :-1], axis=(1, 2)))
