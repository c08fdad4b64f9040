"""The one list of the book's papers: a record per paper, kept in the paper's own folder.

A paper is a folder ``dpkmeans/papers/<key>/`` whose ``__init__.py`` defines ``RECORD``, a
:class:`PaperRecord`: how the book names the paper (authors, year, title, method, chapter,
bibliography key), the corrected algorithms it adds to the catalogue (``DPKMeans(algorithm=
...)``), its sweeps (``notebooks/sweeps/<name>.yaml``), what rebuilds its claims ledger and audit
from its results (the finisher), and its as-published configuration (the book-wide privacy
ledger). The registry finds every such folder; a paper kept outside the package is added with
:func:`register`, or by naming its module in ``$DPKMEANS_PAPERS`` (comma-separated; the sweeps'
kernels inherit it). Everything that lists papers reads this registry: the catalogue
(:mod:`dpkmeans.api.catalogue`), ``python -m dpkmeans reproduce`` (its experiments and finishers),
the synthesis ledger (:mod:`dpkmeans.synthesis.ledger`), the Makefile's list of the sweep
notebooks that read data files (``python -m dpkmeans reproduce --data-notebooks``) and the
reproduction benchmark (``python -m benchmarks.reproduction <key>``); ``docs/design.md`` says
how to add a paper.

A record is plain data holding real functions (a configuration builder, a finisher, the
as-published example), imported by the paper's ``__init__.py`` from its own modules: reading
the registry imports the papers' code (``import dpkmeans`` alone still imports none of it).

Prose, tables, claims ledgers and warnings name a paper by its authors and year and its method
(``Ni et al. (2021), DP-KCCM``); the book's "The papers" page gives the full references
(``book/references.bib``, keys :attr:`PaperRecord.bibkey`). ``load(name, paper=key)`` takes the
same key (``data/datasets.toml``).
"""

from __future__ import annotations

import os
import pkgutil
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import Any

from numpy.typing import ArrayLike

from dpkmeans.data import get_registry

__all__ = [
    "PAPERS_ENV",
    "PAPER_RECORDS",
    "CatalogueEntry",
    "FitInputs",
    "PaperRecord",
    "Sweep",
    "current_key",
    "paper",
    "paper_of_data_key",
    "records",
    "register",
    "unregister",
]

#: The environment variable naming extra paper modules (comma-separated), each with a RECORD.
PAPERS_ENV = "DPKMEANS_PAPERS"


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
    >>> from dpkmeans.papers.registry import FitInputs, paper
    >>> dplloyd = paper("su").algorithms[0]
    >>> config = dplloyd.build(FitInputs(3, 1.0, ([0.0, 0.0], [1.0, 1.0]), max_iter=5))
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
class CatalogueEntry:
    """One corrected algorithm a paper offers as ``DPKMeans(algorithm=name)``: how to build it,
    and what its guarantee needs (the catalogue, :mod:`dpkmeans.api.catalogue`, lists them).

    Parameters
    ----------
    name : str
        The name ``DPKMeans(algorithm=...)`` takes.
    build : callable
        ``build(inputs)``: the engine configuration (a DP-Lloyd configuration, or a
        :class:`~dpkmeans.engine.standalone.StandaloneConfig`) of a fit with these
        :class:`FitInputs`.
    summary : str
        One sentence on the algorithm.
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
    chapter : str, default ""
        The number of the book chapter that presents it: its paper's record fills it in.
    build_tight : callable or None, default None
        ``build_tight(inputs)``: a standalone algorithm's configuration calibrated to
        (``inputs.epsilon``, ``inputs.delta``) under tight composition, by the algorithm's own
        accounting (:func:`dpkmeans.api.catalogue.build_at`); None when it has none.
    tight_native : bool, default False
        An (epsilon, delta) algorithm whose own analysis is tight composition (FastLloyd's
        Gaussian DP): ``build`` is already calibrated to the target, its one form.

    Examples
    --------
    >>> from dpkmeans.papers.registry import paper
    >>> di = paper("di").algorithms[0]
    >>> di.name, di.chapter, di.neighbour, di.needs_delta
    ('di', '11', 'replace', False)
    """

    name: str
    build: Callable[[FitInputs], Any]
    summary: str
    neighbour: str = "add/remove"
    needs_n_records: bool = False
    needs_delta: bool = False
    uses_max_iter: bool = False
    standalone: bool = False
    chapter: str = ""
    build_tight: Callable[[FitInputs], Any] | None = None
    tight_native: bool = False


@dataclass(frozen=True)
class Sweep:
    """One sweep of a paper, ``notebooks/sweeps/<name>.yaml``, and how its timing is reported.

    ``needs_data``: the cell notebook's default parameters read a data file (``make
    test-notebooks`` then compares its stored outputs only when the files are present).
    ``target_s``: the time the whole sweep should take on two cores (the reproduction
    benchmark). ``cell_keys`` identify a cell in the results; ``cell_label`` names one in the
    benchmark's timings, ``str.format``-ed with the cell's values, each first replaced by its
    name in ``label_values`` where that has one. ``data_aliases``: a cell reads the dataset its
    ``dataset`` (else ``case``) parameter names; where that value is not a registry name, the
    registry datasets the cell reads (``()``: none), so that a sweep checks its files before it
    starts (:func:`dpkmeans.study.sweep.sweep_datasets`).
    """

    name: str
    needs_data: bool = True
    target_s: float | None = None
    cell_keys: tuple[str, ...] = ("case",)
    cell_label: str = "case {case}"
    label_values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    data_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def label(self, cell: Mapping[str, Any]) -> str:
        """The benchmark's name of one cell (its ``cell_keys`` values)."""
        named = {k: self.label_values.get(k, {}).get(v, v) for k, v in cell.items()}
        return self.cell_label.format(**named)


@dataclass(frozen=True)
class PaperRecord:
    """One paper: how the book names it, where it treats it, and what the library runs for it."""

    key: str  #: the paper's one key: ``dpkmeans.papers.<key>``, ``load(name, paper=key)``
    authors: str  #: the authors in short, as cited ("Ni et al."); "" if unknown
    year: str  #: the year of publication; "" if unknown
    title: str  #: the full title
    method: str  #: the method's name in the book ("DP-KCCM")
    chapter: str  #: the chapter's document name ("07_dpkccm")
    bibkey: str  #: its key in book/references.bib
    #: the corrected algorithms it adds to the catalogue, in the order the catalogue lists them
    algorithms: tuple[CatalogueEntry, ...] = ()
    #: its sweeps (``python -m dpkmeans reproduce`` runs each)
    sweeps: tuple[Sweep, ...] = ()
    #: ``finisher(root)`` rebuilds its ledgers (claims, audit) under ``root/data/results``
    finisher: Callable[[Any], None] | None = None
    #: ``published()``: a small as-published configuration, whose recorded flaws the book-wide
    #: privacy ledger reads; a paper without one is not in the book-wide ledger
    published: Callable[[], Any] | None = None
    #: the label of the book's privacy theorem for its corrected algorithm
    theorem: str = ""
    #: keys it went by before (accepted with a DeprecationWarning)
    former_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.key.isidentifier():
            raise ValueError(f"a paper's key is a Python identifier, got {self.key!r}")
        if not self.chapter[:2].isdigit():
            raise ValueError(f"paper {self.key!r}: chapter {self.chapter!r} must start with "
                             "its two-digit number ('07_dpkccm')")
        object.__setattr__(self, "algorithms", tuple(  # each entry knows its chapter
            replace(entry, chapter=self.number) for entry in self.algorithms))

    @property
    def number(self) -> str:
        """The chapter's number: ``"7"`` for ``07_dpkccm``."""
        return str(int(self.chapter.split("_", 1)[0]))

    @property
    def cite(self) -> str:
        """Authors and year, as prose cites the paper: ``Ni et al. (2021)``."""
        if not self.authors:
            return f"the {self.method} paper (authors unknown)"
        return f"{self.authors} ({self.year})"

    @property
    def name(self) -> str:
        """The method with its paper: ``DP-KCCM (Ni et al., 2021)``."""
        if not self.authors:
            return f"{self.method} (authors unknown)"
        return f"{self.method} ({self.authors}, {self.year})"

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets it clusters, as ``data/datasets.toml`` records them (in its order)."""
        registry = get_registry()
        return tuple(name for name, spec in registry.datasets.items() if self.key in spec.papers)

    @property
    def data_key(self) -> str:
        """Deprecated: the dataset registry uses the paper's key (:attr:`key`)."""
        warnings.warn("PaperRecord.data_key is deprecated: data/datasets.toml uses the paper's "
                      "key, PaperRecord.key", DeprecationWarning, stacklevel=2)
        return self.key


# ----------------------------------------------------------------------------- discovery

_registered: dict[str, PaperRecord] = {}
_version = 0  # counts the changes to _registered
_cache: tuple[tuple[object, int], tuple[PaperRecord, ...]] | None = None


def _record_of(module_name: str) -> PaperRecord:
    record = getattr(import_module(module_name), "RECORD", None)
    if not isinstance(record, PaperRecord):
        raise TypeError(f"{module_name} defines no RECORD (a dpkmeans.papers.registry."
                        "PaperRecord): every paper's package does")
    return record


_discovered: dict[tuple[tuple[str, ...], str], tuple[PaperRecord, ...]] = {}


def _discover(path: tuple[str, ...], extra: str) -> tuple[PaperRecord, ...]:
    """The records of the papers' folders on ``path`` and of the modules named in ``extra``."""
    if (path, extra) not in _discovered:
        found = []
        for info in pkgutil.iter_modules(list(path)):
            if info.ispkg and not info.name.startswith("_"):
                record = _record_of(f"{__package__}.{info.name}")
                if record.key != info.name:
                    raise ValueError(f"papers/{info.name}/ holds the record of {record.key!r}: "
                                     "a paper's folder is named by its key")
                found.append(record)
        found += [_record_of(name.strip()) for name in extra.split(",") if name.strip()]
        _discovered[(path, extra)] = tuple(found)
    return _discovered[(path, extra)]


def records() -> tuple[PaperRecord, ...]:
    """Every paper, in the book's order (by chapter): the package's folders, the modules named
    in ``$DPKMEANS_PAPERS``, and the records passed to :func:`register`."""
    global _cache
    found = _discover(tuple(sys.modules[__package__].__path__), os.environ.get(PAPERS_ENV, ""))
    state = (found, _version)
    if _cache is not None and _cache[0][0] is found and _cache[0][1] == _version:
        return _cache[1]
    every = [*found, *_registered.values()]
    keys = [r.key for r in every]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"two papers share the key(s) {twice}")
    names = [n for r in every for n in (r.key, *r.former_keys)]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"a former key is another paper's key: {clash}")
    ordered = tuple(sorted(every, key=lambda r: (int(r.number), r.chapter, r.key)))
    _cache = (state, ordered)
    return ordered


def register(record: PaperRecord) -> PaperRecord:
    """Add a paper kept outside ``dpkmeans/papers/`` (until :func:`unregister`); returns it."""
    global _version
    if not isinstance(record, PaperRecord):
        raise TypeError(f"register takes a PaperRecord, got {type(record).__name__}")
    if record.key in {r.key for r in records()}:
        raise ValueError(f"a paper {record.key!r} is already registered")
    _registered[record.key] = record
    _version += 1
    try:
        records()  # refuse it now if its former keys clash
    except ValueError:
        unregister(record.key)
        raise
    return record


def unregister(key: str) -> None:
    """Remove a paper added by :func:`register`."""
    global _version
    if key not in _registered:
        raise ValueError(f"no paper {key!r} was added by register()")
    del _registered[key]
    _version += 1


class _Papers(Mapping[str, PaperRecord]):
    """The papers by key, in the book's order, as the registry holds them now."""

    def _now(self) -> dict[str, PaperRecord]:
        return {r.key: r for r in records()}

    def __getitem__(self, key: str) -> PaperRecord:
        return self._now()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(records())

    def __repr__(self) -> str:
        return f"PAPER_RECORDS({list(self)})"


#: The papers by key, in the book's order (a live view of :func:`records`).
PAPER_RECORDS: Mapping[str, PaperRecord] = _Papers()


def current_key(key: str) -> str:
    """``key`` itself, or the paper's key if ``key`` is a former one (with a
    DeprecationWarning); a key no paper has is returned as it is."""
    for record in records():
        if key in record.former_keys:
            warnings.warn(f"the paper key {key!r} is deprecated: use {record.key!r}",
                          DeprecationWarning, stacklevel=3)
            return record.key
    return key


def paper(key: str) -> PaperRecord:
    """The record of paper ``key`` (a former key warns); a ``ValueError`` naming the known keys
    otherwise."""
    known = {r.key: r for r in records()}
    record = known.get(current_key(key))
    if record is None:
        raise ValueError(f"no paper {key!r}; the papers are {', '.join(known)}")
    return record


def paper_of_data_key(data_key: str) -> PaperRecord:
    """Deprecated: :func:`paper` (the dataset registry uses the papers' keys)."""
    warnings.warn("paper_of_data_key is deprecated: data/datasets.toml uses the papers' keys; "
                  "call paper(key)", DeprecationWarning, stacklevel=2)
    return paper(data_key)
