"""The published privacy flaws of DP-KCCM (Ni et al. 2021), as data
(:class:`dpkmeans.engine.flaws.Flaw`). The paper's accounting of its loop is sound (book
chapter 7 proves the loop private on a public box); what leaks is how the published method
sets up the loop: the box is read off the data (the library's
:data:`~dpkmeans.engine.flaws.DATA_DERIVED_BOUNDS`), and the hyper-parameters were tuned on the
datasets the paper reports. The as-published configuration of :mod:`.entries` carries both;
the ledger records each leak's text.
"""

from __future__ import annotations

from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, Flaw

__all__ = ["FLAWS", "PUBLISHED", "TUNED_ON_EVALUATION_DATA"]

TUNED_ON_EVALUATION_DATA = Flaw(
    name="tuned-on-evaluation-data",
    kind="leak",
    chapter="book chapter 7",
    text=("the merge factor n = 3, the T = 12 iterations and the stepped shares were tuned "
          "\"through a lot of experiments\" on the datasets the paper reports (Ni et al. "
          "2021): the choice is a function of the private data, and no ε accounts "
          "for it"),
)

#: Every flaw of the paper's own, in the order the book lists them.
FLAWS = (TUNED_ON_EVALUATION_DATA,)
#: What the published method carries: its min-max scaling and its tuning.
PUBLISHED = (DATA_DERIVED_BOUNDS, *FLAWS)
