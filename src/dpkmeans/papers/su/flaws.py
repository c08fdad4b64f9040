"""The published privacy flaws of diffprivlib 0.6.6's k-means, the comparator of Su et al.'s
DPLloyd-Impr, as data (:class:`dpkmeans.engine.flaws.Flaw`), and the per-iteration release that
reproduces them (:class:`DiffprivlibRelease`). The as-published configurations of
:mod:`dpkmeans.papers.su.study` carry them; book chapter 5 shows and audits each. The ledger
records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.strategies import JointRelease, SuSplit

__all__ = ["FLAWS", "SKIP_EMPTY_CLUSTERS", "SWAPPED_SPLIT", "PRIVATE_RECORD_COUNT",
           "SkipEmptyClusters", "SwappedSplit", "DiffprivlibRelease"]

SKIP_EMPTY_CLUSTERS = Flaw(
    name="skip-empty-clusters",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 5",
    text="empty clusters get no noise and keep their centroid (diffprivlib 0.6.6)",
)

SWAPPED_SPLIT = Flaw(
    name="swapped-split",
    changes_loop=True,
    kind="overspend",
    chapter="book chapter 5",
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


def _restore_empty(stats: np.ndarray, noisy: np.ndarray) -> np.ndarray:
    """The exact statistics of the clusters with no record put back after the release: they
    get no noise and (count zero) keep their centroid."""
    empty = stats[..., -1] == 0
    noisy[empty] = stats[empty]
    return noisy


@dataclass(frozen=True)
class SkipEmptyClusters(JointRelease):
    """The joint release of (S_j, n_j), but a cluster with no record gets no noise and keeps its
    centroid (diffprivlib 0.6.6; flaw ``skip-empty-clusters``)."""

    name: str = "joint, empty clusters skipped"
    flaws: ClassVar[tuple[Flaw, ...]] = (SKIP_EMPTY_CLUSTERS,)

    def after_release(self, stats: np.ndarray, noisy: np.ndarray) -> np.ndarray:
        return _restore_empty(stats, noisy)


@dataclass(frozen=True)
class SwappedSplit(SuSplit):
    """Su's split with the count's and each dimension's shares exchanged (diffprivlib 0.6.6;
    flaw ``swapped-split``): the ledger charges each release at its true budget."""

    flaws: ClassVar[tuple[Flaw, ...]] = (SWAPPED_SPLIT,)
    name: str = "Su's split, shares exchanged"

    def shares(self, eps_t: float, d: int) -> tuple[float, float]:
        eps_count, eps_dim = super().shares(eps_t, d)
        return eps_dim, eps_count


@dataclass(frozen=True)
class DiffprivlibRelease(SwappedSplit):
    """diffprivlib 0.6.6's release in its ``KMeans``: Su's split with the shares exchanged
    (flaw ``swapped-split``), and no noise for empty clusters (flaw ``skip-empty-clusters``)."""

    flaws: ClassVar[tuple[Flaw, ...]] = (SKIP_EMPTY_CLUSTERS, SWAPPED_SPLIT)
    name: str = "Su's split, shares exchanged, empty clusters skipped"

    def after_release(self, stats: np.ndarray, noisy: np.ndarray) -> np.ndarray:
        return _restore_empty(stats, noisy)
