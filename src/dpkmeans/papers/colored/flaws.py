"""The published privacy flaws of Ravi, Scaglione and Peisert (2021) and the authors' code, as data
(:class:`dpkmeans.engine.flaws.Flaw`), and the per-iteration "release" of the exact loop
(:class:`NoiseFreeIterations`). The as-published configurations of
:mod:`dpkmeans.papers.colored.variants` carry them; book chapter 9 shows and audits each. The
ledger records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.strategies import IterationRelease, ReleaseSpec

__all__ = ["FLAWS", "NoiseFreeIterations", "EXACT_ITERATIONS", "DATA_INITIALISATION", "LOCAL_SENSITIVITY",
           "EPSILON_TIMES_KD", "ELBOW_K"]

EXACT_ITERATIONS = Flaw(
    name="exact-iterations",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 9",
    text=("the Lloyd iterations run without noise on the private data (Ravi, Scaglione and "
          "Peisert 2021: one-shot output perturbation of the converged centroids)"),
)

DATA_INITIALISATION = Flaw(
    name="data-initialisation",
    kind="leak",
    chapter="book chapter 9",
    text=("the initial centres are chosen from the private records (k-means++, the scikit-"
          "learn default the authors' code uses)"),
)

LOCAL_SENSITIVITY = Flaw(
    name="local-sensitivity",
    kind="leak",
    chapter="book chapter 9",
    text=("the noise covariance is fitted to this dataset's leave-one-out centroid shifts "
          "with the labels frozen (Ravi et al. 2021, Lemma 5): a neighbour changes the "
          "covariance itself, and added records and label changes are not covered, so no "
          "(ε, δ) holds"),
)

EPSILON_TIMES_KD = Flaw(
    name="epsilon-times-Kd",
    kind="overspend",
    chapter="book chapter 9",
    text=("the authors' code (CEDS) computes γ from ε K d instead of ε: the ledger charges "
          "ε K d, the budget its γ buys"),
)

ELBOW_K = Flaw(
    name="elbow-k",
    kind="leak",
    chapter="book chapter 9",
    text=("the number of clusters K was chosen by the elbow method on the private records "
          "(Ravi, Scaglione and Peisert 2021: \"four clusters ... using the elbow method\"): "
          "K is a function of the data, released without budget"),
)

#: Every flaw of the paper, in the order the book lists them.
FLAWS = (EXACT_ITERATIONS, DATA_INITIALISATION, LOCAL_SENSITIVITY, EPSILON_TIMES_KD, ELBOW_K)


@dataclass(frozen=True)
class NoiseFreeIterations(IterationRelease):
    """The Lloyd iterations run on the exact statistics, without noise; only the output release
    adds noise (Ravi, Scaglione and Peisert 2021: one-shot output perturbation; flaw
    ``exact-iterations``)."""

    noised: ClassVar[bool] = False
    flaws: ClassVar[tuple[Flaw, ...]] = (EXACT_ITERATIONS,)
    name: str = "no noise in the iterations"

    def specs(self, config: object, eps_t: float) -> list[ReleaseSpec]:
        return []
