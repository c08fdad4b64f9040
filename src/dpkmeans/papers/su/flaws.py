"""The published privacy flaws of diffprivlib 0.6.6's k-means, the comparator of Su et al.'s
DPLloyd-Impr, as data (:class:`dpkmeans.engine.flaws.Flaw`). The as-published configurations of
:mod:`dpkmeans.papers.su.study` carry them; book chapter 5 shows and audits each. The ledger
records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import Flaw

__all__ = ["FLAWS", "SKIP_EMPTY_CLUSTERS", "SWAPPED_SPLIT", "PRIVATE_RECORD_COUNT"]

SKIP_EMPTY_CLUSTERS = Flaw(
    name="skip-empty-clusters",
    kind="leak",
    chapter="book chapter 5",
    effects=frozenset({"skip-empty-clusters"}),
    text="empty clusters get no noise and keep their centroid (diffprivlib 0.6.6)",
)

SWAPPED_SPLIT = Flaw(
    name="swapped-split",
    kind="overspend",
    chapter="book chapter 5",
    effects=frozenset({"swapped-split"}),
    text="Su's count and per-dimension shares exchanged (diffprivlib 0.6.6)",
)

PRIVATE_RECORD_COUNT = Flaw(
    name="private-record-count",
    kind="leak",
    chapter="book chapter 5",
    text=("T was chosen from the exact number of private records (Su's rule in diffprivlib "
          "0.6.6): one record more can change T"),
)

#: Every flaw of the paper, in the order the book lists them.
FLAWS = (SKIP_EMPTY_CLUSTERS, SWAPPED_SPLIT, PRIVATE_RECORD_COUNT)
