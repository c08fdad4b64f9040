"""Published privacy flaws as data (docs/design.md, "Flaws as data").

An as-published configuration reproduces a paper's flaw on purpose, so that the book can audit
it; it is never private. Each flaw is a :class:`Flaw` record owned by the paper that
published it (``dpkmeans.papers.<key>.flaws``): its kind (a *leak*, after which no epsilon
describes the release, or an *overspend*, which the ledger charges at its true cost), the
text the ledger records, the book chapter that shows it, and the neighbour relations it is
defined under.

Most flaws change nothing in the loop: what they read or spend happens in a strategy their
paper supplies (an initial release, an allocation rule, an output release) or before the run
(how the box or the number of iterations was chosen), and the record only puts the flaw in
the ledger. A flaw that changes a step of the loop itself (exact counts, noise-free
iterations, a stop on the exact partition, ...) is a strategy its paper supplies
(:mod:`dpkmeans.engine.strategies`), which lists the record in its ``flaws``: the
configuration refuses the strategy unless it carries the record too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS, PrivacyCost, PrivacyLedger

__all__ = ["Flaw", "FLAW_KINDS", "DATA_DERIVED_BOUNDS", "check_flaws",
           "open_run_ledger"]

#: A leak (no epsilon describes the release) or an overspend (the ledger charges the true cost).
FLAW_KINDS = ("leak", "overspend")

@dataclass(frozen=True)
class Flaw:
    """One published privacy flaw, reproduced by an as-published configuration.

    ``name`` is its key in the book's tables; ``kind`` one of :data:`FLAW_KINDS`; ``text``
    what the ledger records (a leak's description, or an overspend's note); ``chapter`` the
    book chapter that shows and audits it; ``neighbours`` the neighbour relations under which
    the configuration may carry it; ``changes_loop`` whether it changes a step of the loop:
    then it is reproduced by a strategy its paper supplies (:mod:`dpkmeans.engine.strategies`),
    which lists the record in its ``flaws``, and a configuration carries the record only with
    that strategy.

    Parameters
    ----------
    name : str
        The key in the book's tables (non-empty).
    kind : str
        One of :data:`FLAW_KINDS`.
    text : str
        What the ledger records.
    chapter : str
        The book chapter that shows and audits it.
    neighbours : tuple of str, default ("add/remove",)
        The neighbour relations it is defined under (among
        :data:`~dpkmeans.privacy.accounting.NEIGHBOUR_RELATIONS`).
    changes_loop : bool, default False
        Whether it changes a step of the loop.

    Raises
    ------
    ValueError
        If the name is empty, the kind unknown, or a neighbour relation unknown (or none).

    Examples
    --------
    >>> from dpkmeans.engine.flaws import Flaw
    >>> flaw = Flaw("toy-leak", "leak", "a toy: the counts released exactly", "book chapter 6")
    >>> flaw.overspends, flaw.neighbours
    (False, ('add/remove',))
    """

    name: str
    kind: str
    text: str
    chapter: str
    neighbours: tuple[str, ...] = ("add/remove",)
    changes_loop: bool = False

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
    ``neighbour``, no name twice; a TypeError or ValueError names the problem.

    Parameters
    ----------
    flaws : iterable of Flaw
        The configuration's flaws.
    neighbour : str
        The configuration's neighbour relation.

    Returns
    -------
    tuple of Flaw
        ``flaws``, checked.

    Raises
    ------
    TypeError
        If an item is not a :class:`Flaw`.
    ValueError
        If a flaw is listed twice or is not defined under ``neighbour``.

    Examples
    --------
    >>> from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, check_flaws
    >>> [f.name for f in check_flaws([DATA_DERIVED_BOUNDS], "replace")]
    ['data-derived-bounds']
    >>> check_flaws([DATA_DERIVED_BOUNDS] * 2, "replace")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: a flaw is listed twice: ...
    """
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
                    neighbour: str, flaws: Iterable[Flaw], *,
                    accounting: str = "basic") -> PrivacyLedger:
    """A run's ledger with its configuration's flaws recorded: the caller's ``ledger`` (under the
    same neighbour relation), or a new one with ``budget`` (none when a flaw is carried: the
    total is then the true spend). A leak is recorded as a leak, an overspend as a note.

    Parameters
    ----------
    ledger : PrivacyLedger or None
        The caller's ledger, or None for a new one.
    budget : PrivacyCost, float or tuple
        The new ledger's budget (when no flaw is carried).
    neighbour : str
        The configuration's neighbour relation.
    flaws : iterable of Flaw
        The configuration's flaws, recorded in the ledger.
    accounting : {"basic", "tight"}, default "basic"
        How the new ledger composes (:class:`~dpkmeans.privacy.accounting.PrivacyLedger`).

    Returns
    -------
    PrivacyLedger
        The run's ledger.

    Raises
    ------
    ValueError
        If the caller's ledger has another neighbour relation.

    Examples
    --------
    >>> from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, open_run_ledger
    >>> open_run_ledger(None, 1.0, "add/remove", []).budget
    PrivacyCost(epsilon=1.0, delta=0.0)
    >>> ledger = open_run_ledger(None, 1.0, "add/remove", [DATA_DERIVED_BOUNDS])
    >>> ledger.budget is None, ledger.is_private
    (True, False)
    """
    flaws = tuple(flaws)
    if ledger is None:
        ledger = PrivacyLedger(budget=None if flaws else budget, neighbour=neighbour,
                               accounting=accounting)
    elif ledger.neighbour != neighbour:
        raise ValueError(f"the ledger's neighbour relation ({ledger.neighbour!r}) differs from "
                         f"the configuration's ({neighbour!r})")
    for flaw in flaws:
        if flaw.overspends:
            ledger.post_process(f"as published, {flaw.text}: the total below is the true spend")
        else:
            ledger.leak(flaw.text)
    return ledger
