"""The published privacy flaws of Shang et al. (2021), as data
(:class:`dpkmeans.engine.flaws.Flaw`). The as-published configurations of
:mod:`dpkmeans.papers.di.variants` carry them; book chapter 11 shows and audits each. The ledger
records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import Flaw

__all__ = ["FLAWS", "EXACT_COUNTS", "REPLACE_SENSITIVITY_D", "CANOPY_INITIALISATION",
           "CATEGORICAL_FULL_BUDGET", "GAMMA_FROM_CLASSES"]

EXACT_COUNTS = Flaw(
    name="exact-counts",
    kind="leak",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    effects=frozenset({"exact-counts"}),
    text="cluster sizes are released without noise (Shang et al. 2021, as published)",
)

REPLACE_SENSITIVITY_D = Flaw(
    name="replace-sensitivity-d",
    kind="overspend",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    effects=frozenset({"replace-sensitivity-d"}),
    text=("the sensitivities Δf = d, and 1 per cluster for the counts, under replace "
          "adjacency (Shang et al. 2021): a replaced record can leave one cluster and join "
          "another, so two clusters' sums (and category counts) change; the noise buys half"
          " the stated budget, and the ledger charges the true cost"),
)

CANOPY_INITIALISATION = Flaw(
    name="canopy-initialisation",
    kind="leak",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    text=("the initial centres (and k) are chosen by Optimized Canopy on the raw private "
          "records (Shang et al. 2021), without budget"),
)

CATEGORICAL_FULL_BUDGET = Flaw(
    name="categorical-full-budget",
    kind="overspend",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    effects=frozenset({"categorical-full-budget"}),
    text=("every categorical attribute's mode is chosen with the iteration's whole "
          "categorical budget (Shang et al. 2021): the d_c selections compose sequentially,"
          " and the ledger charges d_c times the stated budget"),
)

GAMMA_FROM_CLASSES = Flaw(
    name="gamma-from-classes",
    kind="leak",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    text=("k-prototypes' categorical weight γ (the paper's 0.12) was chosen by the "
          "F-measure against the classes of the evaluation data (Shang et al. 2021, Fig. 4): "
          "the choice is a function of the private data, and no ε accounts for it"),
)

#: Every flaw of the paper, in the order the book lists them.
FLAWS = (EXACT_COUNTS, REPLACE_SENSITIVITY_D, CANOPY_INITIALISATION, CATEGORICAL_FULL_BUDGET,
         GAMMA_FROM_CLASSES)
