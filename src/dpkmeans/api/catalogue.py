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

from collections.abc import Iterator, Mapping

from dpkmeans.papers.registry import CatalogueEntry, FitInputs, PaperRecord, records

__all__ = ["CATALOGUE", "Choice", "FitInputs", "choice", "choices", "loop_choices"]

#: One corrected algorithm: its paper's catalogue entry itself
#: (:class:`dpkmeans.papers.registry.CatalogueEntry`), under the catalogue's name for it.
Choice = CatalogueEntry


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
        every = sorted((e for r in papers for e in r.algorithms),
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
