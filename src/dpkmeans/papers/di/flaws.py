"""The published privacy flaws of Shang et al. (2021), as data
(:class:`dpkmeans.engine.flaws.Flaw`), and the releases that reproduce those of the loop: the
numeric release (:class:`PublishedRelease`) and the categorical modes (:class:`PublishedModes`).
The as-published configurations of
:mod:`dpkmeans.papers.di.variants` carry them; book chapter 11 shows and audits each. The ledger
records a leak's text, or charges an overspend at its true cost and notes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.prototypes import CategoricalModes
from dpkmeans.engine.strategies import JointRelease, ReleaseSpec
from dpkmeans.privacy.sensitivity import sum_sensitivity

if TYPE_CHECKING:
    from dpkmeans.engine.config import DPLloydConfig

__all__ = ["FLAWS", "ExactCounts", "PublishedRelease", "FullBudgetModes", "PublishedModes", "EXACT_COUNTS", "REPLACE_SENSITIVITY_D", "CANOPY_INITIALISATION",
           "CATEGORICAL_FULL_BUDGET", "GAMMA_FROM_CLASSES"]

EXACT_COUNTS = Flaw(
    name="exact-counts",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
    text="cluster sizes are released without noise (Shang et al. 2021, as published)",
)

REPLACE_SENSITIVITY_D = Flaw(
    name="replace-sensitivity-d",
    changes_loop=True,
    kind="overspend",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
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
    changes_loop=True,
    kind="overspend",
    chapter="book chapter 11",
    neighbours=("add/remove", "replace"),
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


@dataclass(frozen=True)
class ExactCounts(JointRelease):
    """The joint release with only the sums noised: the counts are released exactly (flaw
    ``exact-counts``)."""

    flaws: ClassVar[tuple[Flaw, ...]] = (EXACT_COUNTS,)
    name: str = "sums only, exact counts"

    def laplace_specs(self, config: DPLloydConfig, eps_t: float) -> list[ReleaseSpec]:
        box, d, c = config.numeric_bounds, config.bounds[0].size, config.numeric_offset
        true = sum_sensitivity(box, config.neighbour, centred=config.centred)
        stated = sum_sensitivity(box, "add/remove", centred=config.centred)
        return [ReleaseSpec("S_j", slice(c, d), true, self.cost(eps_t, true, stated))]

    def cost(self, eps_t: float, true: float, stated: float) -> float:
        """The epsilon the release really spends."""
        return eps_t


@dataclass(frozen=True)
class PublishedRelease(ExactCounts):
    """The paper's numeric release: exact counts (flaw ``exact-counts``), and the sums' noise
    calibrated to one cluster's sensitivity under replace adjacency (flaw
    ``replace-sensitivity-d``): the release is charged its true cost, eps_t times the true
    sensitivity over the stated one."""

    flaws: ClassVar[tuple[Flaw, ...]] = (EXACT_COUNTS, REPLACE_SENSITIVITY_D)
    name: str = "sums only, one cluster's sensitivity (as published)"

    def cost(self, eps_t: float, true: float, stated: float) -> float:
        return eps_t * true / stated


@dataclass(frozen=True, eq=False)
class FullBudgetModes(CategoricalModes):
    """Categorical modes with every attribute's mode chosen with the iteration's whole
    categorical budget (flaw ``categorical-full-budget``): the d_c selections compose
    sequentially, and the ledger charges d_c times the stated budget."""

    flaws: ClassVar[tuple[Flaw, ...]] = (CATEGORICAL_FULL_BUDGET,)
    name: str = "every attribute at the whole budget"

    def attribute_budget(self, eps_t: float) -> float:
        return eps_t


@dataclass(frozen=True, eq=False)
class PublishedModes(FullBudgetModes):
    """The paper's categorical modes: every attribute at the whole budget (flaw
    ``categorical-full-budget``), and each cluster's draw at Delta sf = 1 as if the clusters
    composed in parallel under replace (flaw ``replace-sensitivity-d``); the ledger charges
    the true cost of both."""

    flaws: ClassVar[tuple[Flaw, ...]] = (CATEGORICAL_FULL_BUDGET, REPLACE_SENSITIVITY_D)
    name: str = "every attribute at the whole budget, one cluster's sensitivity (as published)"

    def draw_budget(self, attribute: float, clusters_touched: int) -> float:
        return attribute
