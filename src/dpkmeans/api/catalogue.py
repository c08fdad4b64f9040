"""Every corrected algorithm of the book, by the name ``DPKMeans(algorithm=...)`` takes.

Each paper's record (:mod:`dpkmeans.papers.registry`) lists the corrected algorithms it adds;
the catalogue gathers them, the pure epsilon-DP ones first in the book's order, then the
(epsilon, delta) ones. Each :class:`Choice` builds the engine configuration of one algorithm
from the public inputs of a fit and says what its guarantee needs: the adjacency it is proven
under, whether it reads the number of records (public, or a noisy count the estimator pays
for), whether it is (epsilon, delta)-DP. The as-published variants are deliberately absent:
they are reachable only through their paper modules (``dpkmeans.papers.<paper>.variants``),
where the book audits them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from numpy.typing import ArrayLike

from dpkmeans.engine.loop import DPLloydConfig
from dpkmeans.engine.standalone import StandaloneConfig
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, records

__all__ = ["CATALOGUE", "Choice", "FitInputs", "choice", "choices", "loop_choices"]


@dataclass(frozen=True)
class FitInputs:
    """The public inputs of one fit that a configuration may read.

    Parameters
    ----------
    n_clusters : int
        k.
    epsilon : float
        The budget of the run (the noisy count's share already taken off).
    bounds : (lower, upper)
        The public box.
    max_iter : int
        The iterations of the algorithms that take T as given.
    n_records : int or None, default None
        The public (or noisily counted) number of records, for the rules that read it.
    delta : float or None, default None
        The delta of an (epsilon, delta)-DP algorithm.

    Examples
    --------
    >>> from dpkmeans.api.catalogue import FitInputs, choice
    >>> config = choice("dplloyd").build(FitInputs(3, 1.0, ([0.0, 0.0], [1.0, 1.0]), max_iter=5))
    >>> config.n_clusters, config.epsilon, config.neighbour
    (3, 1.0, 'add/remove')
    """

    n_clusters: int
    epsilon: float
    bounds: tuple[ArrayLike, ArrayLike]
    max_iter: int
    n_records: int | None = None
    delta: float | None = None


@dataclass(frozen=True)
class Choice:
    """One corrected algorithm: how to build it, and what its guarantee needs.

    Parameters
    ----------
    name : str
        The name ``DPKMeans(algorithm=...)`` takes.
    build : callable
        ``build(inputs)``: the engine configuration (:class:`~dpkmeans.engine.loop.DPLloydConfig`,
        or a :class:`~dpkmeans.engine.standalone.StandaloneConfig`) of a fit with these
        :class:`FitInputs`.
    summary : str
        One sentence on the algorithm.
    chapter : str
        The number of the book chapter that presents it.
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The adjacency its guarantee is proven under.
    needs_n_records : bool, default False
        Its rule reads the number of records (public, or a noisy count).
    needs_delta : bool, default False
        It is (epsilon, delta)-DP.
    uses_max_iter : bool, default False
        It runs ``max_iter`` iterations (the others choose T by their own rule).
    standalone : bool, default False
        It is not a configuration of the DP-Lloyd loop: ``build`` returns a
        :class:`~dpkmeans.engine.standalone.StandaloneConfig`, which runs itself through the
        same privacy machinery (book chapter 12, "Beyond the five papers").

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choice
    >>> di = choice("di")
    >>> di.chapter, di.neighbour, di.needs_delta
    ('11', 'replace', False)
    """

    name: str
    build: Callable[[FitInputs], DPLloydConfig | StandaloneConfig]
    summary: str
    chapter: str
    neighbour: str = "add/remove"
    needs_n_records: bool = False
    needs_delta: bool = False
    uses_max_iter: bool = False
    standalone: bool = False


def _choice(record: PaperRecord, entry: CatalogueEntry) -> Choice:
    return Choice(entry.name, entry.build, entry.summary, record.number, entry.neighbour,
                  entry.needs_n_records, entry.needs_delta, entry.uses_max_iter,
                  entry.standalone)


def loop_choices() -> dict[str, Choice]:
    """The corrected algorithms that are configurations of the DP-Lloyd loop (the transcript
    audit of chapter 6, "Auditing an algorithm", scores their every noisy statistic), in the
    catalogue's order.

    Returns
    -------
    dict of str to Choice
        :func:`choices` without the standalone algorithms.

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choices, loop_choices
    >>> sorted(set(choices()) - set(loop_choices()))
    ['balcan', 'lsh']
    """
    return {name: c for name, c in choices().items() if not c.standalone}


_built: tuple[tuple[PaperRecord, ...], dict[str, Choice]] | None = None


def choices() -> dict[str, Choice]:
    """Every corrected algorithm by name, as the papers' records list them: the pure
    epsilon-DP ones first, in the book's order, then the (epsilon, delta) ones.

    Returns
    -------
    dict of str to Choice
        Built once per set of records (:func:`dpkmeans.papers.registry.records`).

    Raises
    ------
    ValueError
        If two papers offer an algorithm of the same name.

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choices
    >>> list(choices())[:2]
    ['dplloyd', 'dplloyd-impr']
    >>> choices()["colored"].needs_delta
    True
    """
    global _built
    papers = records()
    if _built is None or _built[0] is not papers:
        every = sorted((_choice(r, e) for r in papers for e in r.algorithms),
                       key=lambda c: c.needs_delta)  # stable: the book's order within each
        names = [c.name for c in every]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two papers offer the algorithm(s) {twice}")
        _built = (papers, {c.name: c for c in every})
    return _built[1]


class _Catalogue(Mapping[str, Choice]):
    """The catalogue as the registry holds it now (a read-only mapping)."""

    def __getitem__(self, name: str) -> Choice:
        return choices()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(choices())

    def __len__(self) -> int:
        return len(choices())

    def __repr__(self) -> str:
        return f"CATALOGUE({list(self)})"


#: Every corrected algorithm by name (a live view of :func:`choices`).
CATALOGUE: Mapping[str, Choice] = _Catalogue()


def choice(name: str) -> Choice:
    """The corrected algorithm called ``name`` (a ValueError lists the names).

    Parameters
    ----------
    name : str
        A name of :data:`CATALOGUE`.

    Returns
    -------
    Choice
        The algorithm.

    Raises
    ------
    ValueError
        If no corrected algorithm has that name (an as-published variant included).

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choice
    >>> choice("dplloyd-impr").needs_n_records
    True
    >>> choice("dplloyd-paper")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of [...], got 'dplloyd-paper'; the as-published variants ...
    """
    if name not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {sorted(CATALOGUE)}, got {name!r}; "
                         "the as-published variants are in dpkmeans.papers.<paper>.variants")
    return CATALOGUE[name]
