"""The published privacy flaws of Ravi, Scaglione and Peisert (2021) and the authors' code, as data
(:class:`dpkmeans.engine.flaws.Flaw`). The as-published configurations of
:mod:`dpkmeans.papers.colored.variants` carry them; book chapter 9 shows and audits each. The
ledger records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import Flaw

__all__ = ["FLAWS", "EXACT_ITERATIONS", "DATA_INITIALISATION", "LOCAL_SENSITIVITY",
           "EPSILON_TIMES_KD", "ELBOW_K"]

EXACT_ITERATIONS = Flaw(
    name="exact-iterations",
    kind="leak",
    chapter="book chapter 9",
    effects=frozenset({"exact-iterations"}),
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
