"""Published privacy flaws as data (docs/design.md, "Flaws as data").

An as-published configuration reproduces a paper's flaw on purpose, so that the book can audit
it; it is never private. Each flaw is a :class:`Flaw` record owned by the paper that
published it (``dpkmeans.papers.<key>.flaws``): its kind (a *leak*, after which no epsilon
describes the release, or an *overspend*, which the ledger charges at its true cost), the
text the ledger records, the book chapter that shows it, and the neighbour relations it is
defined under.

Most flaws change nothing in the loop: what they read or spend happens in a hook their
paper supplies (an initial release, an allocation rule, an output release) or before the run
(how the box or the number of iterations was chosen), and the record only puts the flaw in
the ledger. A few change a step of the loop itself; a record names those steps in
``effects``, drawn from :data:`LOOP_EFFECTS`, which describe the loop's mechanics and name no
paper.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS, PrivacyCost, PrivacyLedger

__all__ = ["Flaw", "FLAW_KINDS", "LOOP_EFFECTS", "DATA_DERIVED_BOUNDS", "check_flaws",
           "open_run_ledger"]

#: A leak (no epsilon describes the release) or an overspend (the ledger charges the true cost).
FLAW_KINDS = ("leak", "overspend")

#: The steps of the loop a flaw may change, and how (book chapter 6 and the paper chapters).
LOOP_EFFECTS = {
    "skip-empty-clusters": ("a cluster with no record gets no noise and keeps its centroid "
                            "(its exact statistics, zero, are restored after the release)"),
    "exact-counts": "only the sums are noised; the counts are released exactly",
    "swapped-split": "the count's and each dimension's shares of Su's split are exchanged",
    "shared-noise": "one draw is added to a cluster's sum (every coordinate) and to its count",
    "exact-iterations": "the iterations run without noise; only the output release adds noise",
    "partition-stop": "the run stops when the exact partition no longer changes",
    "replace-sensitivity-d": ("under replace adjacency the releases are calibrated to the "
                              "sensitivity of one cluster, not two"),
    "categorical-full-budget": ("every categorical attribute's mode is chosen with the "
                                "iteration's whole categorical budget"),
}


@dataclass(frozen=True)
class Flaw:
    """One published privacy flaw, reproduced by an as-published configuration.

    ``name`` is its key in the book's tables; ``kind`` one of :data:`FLAW_KINDS`; ``text``
    what the ledger records (a leak's description, or an overspend's note); ``chapter`` the
    book chapter that shows and audits it; ``neighbours`` the neighbour relations under which
    the configuration may carry it; ``effects`` the steps of the loop it changes
    (:data:`LOOP_EFFECTS`; empty when a hook or the set-up does the flawed step).
    """

    name: str
    kind: str
    text: str
    chapter: str
    neighbours: tuple[str, ...] = ("add/remove",)
    effects: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a flaw needs a name, got {self.name!r}")
        if self.kind not in FLAW_KINDS:
            raise ValueError(f"flaw {self.name!r}: kind must be one of {FLAW_KINDS}, "
                             f"got {self.kind!r}")
        object.__setattr__(self, "neighbours", tuple(self.neighbours))
        unknown = [n for n in self.neighbours if n not in NEIGHBOUR_RELATIONS]
        if unknown or not self.neighbours:
            raise ValueError(f"flaw {self.name!r}: neighbours must be among "
                             f"{NEIGHBOUR_RELATIONS}, got {self.neighbours!r}")
        object.__setattr__(self, "effects", frozenset(self.effects))
        unknown = sorted(self.effects - set(LOOP_EFFECTS))
        if unknown:
            raise ValueError(f"flaw {self.name!r}: effects must be among "
                             f"{sorted(LOOP_EFFECTS)}, got {unknown}")

    @property
    def overspends(self) -> bool:
        """True for an overspend (charged at its true cost), False for a leak."""
        return self.kind == "overspend"


#: The box read off the private data instead of given by the user: the library's own
#: fallback (``DPKMeans(bounds=None)``) and what several papers did.
DATA_DERIVED_BOUNDS = Flaw(
    name="data-derived-bounds", kind="leak", chapter="book chapter 5",
    neighbours=("add/remove", "replace"),
    text=("the box was read off the private data (min-max scaling of the data, as the papers "
          "did): a neighbour can move the box, so no sensitivity holds"))


def check_flaws(flaws: Iterable[Flaw], neighbour: str) -> tuple[Flaw, ...]:
    """The flaws of a configuration as a tuple, each a :class:`Flaw` defined under
    ``neighbour``, no name twice; a TypeError or ValueError names the problem."""
    out = tuple(flaws)
    for flaw in out:
        if not isinstance(flaw, Flaw):
            raise TypeError(f"flaws must be Flaw records (each paper's are in "
                            f"dpkmeans.papers.<key>.flaws), got {flaw!r}")
    names = [f.name for f in out]
    if len(set(names)) != len(names):
        raise ValueError(f"a flaw is listed twice: {names}")
    wrong = [f.name for f in out if neighbour not in f.neighbours]
    if wrong:
        raise ValueError(f"under {neighbour} adjacency these as-published flaws are not "
                         f"defined: {wrong}")
    return out


def open_run_ledger(ledger: PrivacyLedger | None, budget: PrivacyCost | float | tuple,
                    neighbour: str, flaws: Iterable[Flaw]) -> PrivacyLedger:
    """A run's ledger with its configuration's flaws recorded: the caller's ``ledger`` (under the
    same neighbour relation), or a new one with ``budget`` (none when a flaw is carried: the
    total is then the true spend). A leak is recorded as a leak, an overspend as a note."""
    flaws = tuple(flaws)
    if ledger is None:
        ledger = PrivacyLedger(budget=None if flaws else budget, neighbour=neighbour)
    elif ledger.neighbour != neighbour:
        raise ValueError(f"the ledger's neighbour relation ({ledger.neighbour!r}) differs from "
                         f"the configuration's ({neighbour!r})")
    for flaw in flaws:
        if flaw.overspends:
            ledger.post_process(f"as published, {flaw.text}: the total below is the true spend")
        else:
            ledger.leak(flaw.text)
    return ledger
