"""The dataset registry ``data/datasets.toml``: find it, read it, validate it.

Where the file is found: ``<repo>/data/datasets.toml``, the repository being located relative to
this module (a source checkout or an editable install); otherwise the path in the environment
variable ``DPKMEANS_REGISTRY``; otherwise the copy the wheel carries,
``dpkmeans/data/datasets.toml`` (in the source tree a link to the repository's file, which the
wheel holds as a file). The registry is validated when read, so a typo in it fails loudly
instead of producing a wrong dataset.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from dpkmeans.data.errors import PaperColumnError, RegistryError, UnknownDatasetError

__all__ = [
    "REGISTRY_ENV",
    "BundledSpec",
    "ColumnSpec",
    "DatasetSpec",
    "DeriveSpec",
    "FileSpec",
    "GeneratedSpec",
    "PaperSpec",
    "PaperUse",
    "ParseSpec",
    "Registry",
    "RowFilter",
    "UnavailableSpec",
    "get_registry",
    "registry_path",
    "repo_root",
]

REGISTRY_ENV = "DPKMEANS_REGISTRY"
COLUMN_KINDS = ("numeric", "categorical", "date", "id", "empty")
FEATURE_KINDS = ("numeric", "categorical", "date")
FILTER_OPS = ("missing", "<", "<=", ">", ">=", "==", "!=")
MATCH_VALUES = ("exact", "interpreted", "mismatch", "unknown")
#: The rules that make a dataset's file from its public original (:mod:`dpkmeans.data.derive`),
#: each with its own parameters (beyond ``line_ending`` and ``final_newline``) and their types.
DERIVE_RULES: dict[str, dict[str, type]] = {
    "xls_to_csv": {"sheet": int, "bom": bool},
    "first_records": {"records": int, "header": str},
}
#: The tables of a dataset entry that can hold the original a file is derived from.
DERIVE_SOURCES = ("original", "full_file")
LINE_ENDINGS = ("\n", "\r\n")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_TEMPLATE = re.compile(r"\{i\}")
_FIELD = re.compile(r"\{(\w+)\}")

Level = str | int | float


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a file: its kind, public bounds (numeric/date) or levels (categorical)."""

    name: str
    kind: str
    why: str = ""
    bounds: tuple[float, float] | None = None
    levels: tuple[Level, ...] | None = None
    labels: tuple[str, ...] | None = None
    date_format: str | None = None

    @property
    def is_feature(self) -> bool:
        """Whether the column may be clustered on (ids and empty columns never are)."""
        return self.kind in FEATURE_KINDS


@dataclass(frozen=True)
class FileSpec:
    """A file of a dataset: name, checksum and where to download it."""

    name: str
    sha256: str
    url: str = ""
    no_url_reason: str = ""
    bytes: int | None = None
    provenance: str = ""
    rows: int | None = None
    header: int | Literal["inherit"] | None = "inherit"
    compression: str | None = None


@dataclass(frozen=True)
class DeriveSpec:
    """How a dataset's file is made from a public original (``[datasets.<name>.derive]``).

    ``source`` is the original (the entry's ``original`` or ``full_file`` table, named by
    ``source_table``); ``rule`` and ``params`` say how :mod:`dpkmeans.data.derive` converts or
    samples it; ``max_download_bytes`` caps the download of the original (a limit, not its
    size). The derived file must then have the entry's ``file.sha256``.
    """

    source: FileSpec
    source_table: str
    rule: str
    params: Mapping[str, Any]
    max_download_bytes: int


@dataclass(frozen=True)
class ParseSpec:
    """How pandas reads the file."""

    sep: str
    header: int | None
    encoding: str = "utf-8"
    na_values: tuple[str, ...] = ()
    skipinitialspace: bool = False


@dataclass(frozen=True)
class RowFilter:
    """A row a paper dropped (e.g. the colored-noise paper's cleaning of marketing_campaign)."""

    column: str
    op: str
    reason: str
    value: float | None = None


@dataclass(frozen=True)
class PaperUse:
    """Which columns one paper used from one dataset, and how its stated size was matched."""

    paper: str
    columns: tuple[str, ...]
    include_target: bool
    encode_categorical: Literal["none", "ordinal"]
    row_filters: tuple[RowFilter, ...]
    rows: int
    dims: int
    stated_rows: int | None
    stated_dims: int | None
    match: str
    how: str


@dataclass(frozen=True)
class PaperSpec:
    """A paper, by its key in :mod:`dpkmeans.papers.registry` (``dpkccm``, ``silhouette``,
    ``colored``, ``apdp``, ``di``). ``seed`` is optional and unused ("" when absent)."""

    key: str
    seed: str
    citation: str
    chapter: str
    dims_source: str
    datasets_unknown: bool = False
    note: str = ""


@dataclass(frozen=True)
class DatasetSpec:
    """One registry entry (``[datasets.<name>]``)."""

    name: str
    title: str
    page: str
    uci_id: int
    doi: str
    licence: str
    licence_note: str
    fidelity: str
    checksum_evidence: str
    rows: int
    cols: int
    target: str | None
    sample: bool
    on_malformed: Literal["raise", "drop"]
    quirks: tuple[str, ...]
    file: FileSpec
    full_file: FileSpec | None
    original: FileSpec | None
    parse: ParseSpec
    columns: tuple[ColumnSpec, ...]
    papers: Mapping[str, PaperUse]
    derive: DeriveSpec | None = None
    instead: str = ""

    @property
    def column_names(self) -> tuple[str, ...]:
        """All column names in file order."""
        return tuple(c.name for c in self.columns)

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Columns that are features: neither id, empty, nor the target."""
        return tuple(c.name for c in self.columns if c.is_feature and c.name != self.target)

    def column(self, name: str) -> ColumnSpec:
        """The column called ``name``; a ``PaperColumnError`` lists the valid names otherwise."""
        for col in self.columns:
            if col.name == name:
                return col
        raise PaperColumnError(
            f"dataset {self.name!r} has no column {name!r}; its columns are: "
            + ", ".join(repr(c) for c in self.column_names)
        )

    def paper_use(self, paper: str) -> PaperUse:
        """The columns ``paper`` used; a ``PaperColumnError`` says which papers used it."""
        try:
            return self.papers[paper]
        except KeyError:
            used = ", ".join(self.papers) or "none"
            raise PaperColumnError(
                f"paper {paper!r} did not use dataset {self.name!r} (papers that did: {used}). "
                f"Call load({self.name!r}) without paper=, or with one of those papers."
            ) from None


@dataclass(frozen=True)
class BundledSpec:
    """A small dataset shipped by scikit-learn (``[bundled.<name>]``)."""

    name: str
    title: str
    loader: str
    licence: str
    columns: tuple[ColumnSpec, ...]


@dataclass(frozen=True)
class GeneratedSpec:
    """One synthetic set that our code draws from a published definition
    (``[generated.<family>]``: one spec per point of the family's grid, named by its template).

    ``params`` are the family's fixed parameters and the point of its grid; ``seed`` is the
    family's seed and :attr:`entropy` the set's own stream (the seed and the set's name), so a set
    never depends on which other sets exist. :mod:`dpkmeans.data.generated` draws it.
    """

    name: str
    family: str
    title: str
    generator: str
    params: Mapping[str, int | float]
    seed: int
    source: str
    note: str

    @property
    def entropy(self) -> tuple[int, int]:
        """The set's ``numpy.random.SeedSequence`` entropy: the family seed and the first 64
        bits of the SHA-256 of the set's name."""
        digest = hashlib.sha256(self.name.encode()).digest()
        return self.seed, int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class UnavailableSpec:
    """Datasets a paper used that the registry cannot provide (``[unavailable.<key>]``):
    ``names`` is the paper's name pattern (``{field}`` matches one name part), ``why`` says what
    was looked for and why it cannot be obtained."""

    key: str
    title: str
    names: str
    why: str

    def matches(self, name: str) -> bool:
        """Whether ``name`` is one of these datasets."""
        parts = _FIELD.split(self.names)
        literal = [re.escape(p) if i % 2 == 0 else r"[^_]+" for i, p in enumerate(parts)]
        return re.fullmatch("".join(literal), name) is not None


@dataclass(frozen=True)
class Registry:
    """The parsed and validated registry."""

    path: Path | None
    papers: Mapping[str, PaperSpec]
    datasets: Mapping[str, DatasetSpec]
    bundled: Mapping[str, BundledSpec]
    generated: Mapping[str, GeneratedSpec] = field(default_factory=lambda: MappingProxyType({}))
    unavailable: Mapping[str, UnavailableSpec] = field(
        default_factory=lambda: MappingProxyType({}))

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the file-backed datasets, in registry order."""
        return tuple(self.datasets)

    def dataset(self, name: str) -> DatasetSpec:
        """The entry for ``name``; an ``UnknownDatasetError`` lists the known names otherwise,
        or says why a dataset recorded as unavailable cannot be obtained."""
        if not isinstance(name, str):
            raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
        try:
            return self.datasets[name]
        except KeyError:
            for gone in self.unavailable.values():
                if gone.matches(name):
                    raise UnknownDatasetError(
                        f"{name!r} ({gone.title}) cannot be obtained: {gone.why}"
                    ) from None
            families = sorted({g.family for g in self.generated.values()})
            generated = (f"; generated from published definitions: {', '.join(families)} "
                         "(e.g. " + next(iter(self.generated)) + ")") if families else ""
            raise UnknownDatasetError(
                f"unknown dataset {name!r}. Known datasets: {', '.join(self.datasets)}; "
                f"bundled with scikit-learn (no files): {', '.join(self.bundled)}{generated}."
            ) from None

    def paper(self, key: str) -> PaperSpec:
        """The paper ``key``; a ``PaperColumnError`` lists the known keys otherwise."""
        try:
            return self.papers[key]
        except KeyError:
            raise PaperColumnError(
                f"unknown paper {key!r}. Known paper keys: {', '.join(self.papers)}."
            ) from None

    def papers_using(self, name: str) -> tuple[str, ...]:
        """Paper keys that used dataset ``name``."""
        return tuple(self.dataset(name).papers)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Registry:
        """Read and validate a registry file."""
        p = Path(path)
        try:
            with p.open("rb") as fh:
                raw = tomllib.load(fh)
        except FileNotFoundError:
            raise RegistryError(
                f"registry file {p} does not exist; set {REGISTRY_ENV} to the path of "
                "data/datasets.toml or run from a source checkout"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise RegistryError(f"registry file {p} is not valid TOML: {exc}") from exc
        return cls.from_dict(raw, path=p)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, path: Path | None = None) -> Registry:
        """Validate an already-parsed registry (used by tests with a registry of their own)."""
        if raw.get("schema_version") != 1:
            raise RegistryError(
                f"registry schema_version must be 1, got {raw.get('schema_version')!r}"
            )
        papers = {
            key: _parse_paper(key, _table(value, f"papers.{key}"))
            for key, value in _table(raw.get("papers", {}), "papers").items()
        }
        datasets = {
            name: _parse_dataset(name, _table(value, f"datasets.{name}"), papers)
            for name, value in _table(raw.get("datasets", {}), "datasets").items()
        }
        bundled = {
            name: _parse_bundled(name, _table(value, f"bundled.{name}"))
            for name, value in _table(raw.get("bundled", {}), "bundled").items()
        }
        clash = set(datasets) & set(bundled)
        if clash:
            raise RegistryError(f"names used both as datasets and bundled: {sorted(clash)}")
        generated: dict[str, GeneratedSpec] = {}
        for family, value in _table(raw.get("generated", {}), "generated").items():
            for spec in _parse_generated(family, _table(value, f"generated.{family}")):
                if spec.name in generated or spec.name in datasets or spec.name in bundled:
                    raise RegistryError(
                        f"registry: generated.{family} names {spec.name!r}, a name already used"
                    )
                generated[spec.name] = spec
        unavailable = {
            key: _parse_unavailable(key, _table(value, f"unavailable.{key}"))
            for key, value in _table(raw.get("unavailable", {}), "unavailable").items()
        }
        return cls(
            path=path,
            papers=MappingProxyType(papers),
            datasets=MappingProxyType(datasets),
            bundled=MappingProxyType(bundled),
            generated=MappingProxyType(generated),
            unavailable=MappingProxyType(unavailable),
        )


# ----------------------------------------------------------------------------------- location


def repo_root() -> Path | None:
    """The source checkout containing this package, if there is one."""
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file() and (root / "data" / "datasets.toml").is_file():
        return root
    return None


#: The copy of the registry inside the installed package.
PACKAGED = Path(__file__).resolve().parent / "datasets.toml"


def registry_path() -> Path:
    """``<repo>/data/datasets.toml``, else ``$DPKMEANS_REGISTRY``, else the installed package's
    copy (:data:`PACKAGED`); a ``RegistryError`` otherwise."""
    root = repo_root()
    if root is not None:
        return root / "data" / "datasets.toml"
    env = os.environ.get(REGISTRY_ENV)
    if env:
        return Path(env)
    if PACKAGED.is_file():
        return PACKAGED
    raise RegistryError(
        "cannot find data/datasets.toml: dpkmeans is not running from a source checkout. "
        f"Set {REGISTRY_ENV} to the path of a copy of data/datasets.toml."
    )


def get_registry(path: str | os.PathLike[str] | None = None) -> Registry:
    """The registry at ``path`` (default :func:`registry_path`), cached until the file changes."""
    p = Path(path) if path is not None else registry_path()
    try:
        mtime = p.stat().st_mtime_ns
    except FileNotFoundError:
        mtime = -1
    return _cached_registry(str(p.resolve()), mtime)


@cache
def _cached_registry(path: str, mtime: int) -> Registry:  # mtime: part of the cache key
    return Registry.from_toml(path)


# ------------------------------------------------------------------------------------ parsing


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RegistryError(f"registry: {where} must be a table, got {type(value).__name__}")
    return value


def _get(
    t: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...
) -> Any:
    if key not in t:
        if default is ...:
            raise RegistryError(f"registry: {where} needs the key {key!r}")
        return default
    value = t[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise RegistryError(f"registry: {where}.{key} has the wrong type {type(value).__name__}")
    return value


def _header(value: Any, where: str) -> int | None:
    if value == "none":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise RegistryError(
        f'registry: {where}.header must be a row number >= 0 or "none", got {value!r}'
    )


def _parse_paper(key: str, t: Mapping[str, Any]) -> PaperSpec:
    w = f"papers.{key}"
    return PaperSpec(
        key=key,
        seed=_get(t, "seed", str, w, ""),
        citation=_get(t, "citation", str, w),
        chapter=_get(t, "chapter", str, w),
        dims_source=_get(t, "dims_source", str, w),
        datasets_unknown=_get(t, "datasets_unknown", bool, w, False),
        note=_get(t, "note", str, w, ""),
    )


def _parse_file(t: Mapping[str, Any], where: str) -> FileSpec:
    sha = _get(t, "sha256", str, where).lower()
    if not _SHA256.match(sha):
        raise RegistryError(f"registry: {where}.sha256 must be 64 hex digits, got {sha!r}")
    url = _get(t, "url", str, where, "")
    reason = _get(t, "no_url_reason", str, where, "")
    if not url and not reason:
        raise RegistryError(
            f"registry: {where} has no url; give no_url_reason (what to do instead)"
        )
    compression = _get(t, "compression", str, where, "") or None
    if compression not in (None, "gzip"):
        raise RegistryError(f'registry: {where}.compression must be "gzip" if given')
    return FileSpec(
        name=_get(t, "name", str, where),
        sha256=sha,
        url=url,
        no_url_reason=reason,
        bytes=_get(t, "bytes", int, where, None),
        provenance=_get(t, "provenance", str, where, ""),
        rows=_get(t, "rows", int, where, None),
        header=_header(t["header"], where) if "header" in t else "inherit",
        compression=compression,
    )


def _expand_names(name: str, rng: Any, where: str) -> list[str]:
    if not _TEMPLATE.search(name):
        if rng is not None:
            raise RegistryError(f"registry: {where}: 'i' given but {name!r} has no {{i}}")
        return [name]
    if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(v, int) for v in rng)):
        raise RegistryError(f"registry: {where}: {name!r} needs i = [first, last]")
    return [name.replace("{i}", str(i)) for i in range(rng[0], rng[1] + 1)]


def _parse_column_entries(entries: Any, where: str) -> tuple[ColumnSpec, ...]:
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"registry: {where}.schema.columns must be a non-empty list")
    out: list[ColumnSpec] = []
    for pos, entry in enumerate(entries):
        w = f"{where}.schema.columns[{pos}]"
        t = _table(entry, w)
        kind = _get(t, "kind", str, w)
        if kind not in COLUMN_KINDS:
            raise RegistryError(f"registry: {w}.kind must be one of {COLUMN_KINDS}, got {kind!r}")
        bounds = levels = labels = None
        why = _get(t, "why", str, w, "")
        if kind in ("numeric", "date"):
            b = _get(t, "bounds", list, w)
            if len(b) != 2 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in b
            ):
                raise RegistryError(f"registry: {w}.bounds must be [lower, upper] numbers")
            if not float(b[0]) < float(b[1]):
                raise RegistryError(f"registry: {w}.bounds needs lower < upper, got {b}")
            if not why:
                raise RegistryError(f"registry: {w} needs a one-line 'why' for its public bounds")
            bounds = (float(b[0]), float(b[1]))
        if kind == "categorical":
            lv = _get(t, "levels", list, w)
            if not lv or len(set(map(str, lv))) != len(lv):
                raise RegistryError(
                    f"registry: {w}.levels must be a non-empty list without repeats"
                )
            levels = tuple(lv)
            if "labels" in t:
                lab = _get(t, "labels", list, w)
                if len(lab) != len(lv):
                    raise RegistryError(f"registry: {w}.labels must have one label per level")
                labels = tuple(str(x) for x in lab)
        fmt = _get(t, "format", str, w, None) if kind == "date" else None
        if kind == "date" and not fmt:
            raise RegistryError(f"registry: {w} (a date) needs a strptime 'format'")
        for name in _expand_names(_get(t, "name", str, w), t.get("i"), w):
            out.append(ColumnSpec(name, kind, why, bounds, levels, labels, fmt))
    names = [c.name for c in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RegistryError(f"registry: {where} repeats the columns {dupes}")
    return tuple(out)


def _resolve_columns(
    spec_cols: Sequence[ColumnSpec], target: str | None, value: Any, where: str
) -> tuple[str, ...]:
    by_name = {c.name: c for c in spec_cols}
    if value == "features":
        return tuple(c.name for c in spec_cols if c.is_feature and c.name != target)
    if not isinstance(value, list) or not value:
        raise RegistryError(f'registry: {where}.columns must be "features" or a list of names')
    names: list[str] = []
    for entry in value:
        if not isinstance(entry, str):
            raise RegistryError(f"registry: {where}.columns entries must be strings")
        if _TEMPLATE.search(entry):
            pattern = re.compile("^" + re.escape(entry).replace(r"\{i\}", r"\d+") + "$")
            matched = [c.name for c in spec_cols if pattern.match(c.name)]
            if not matched:
                raise RegistryError(f"registry: {where}.columns: {entry!r} matches no column")
            names.extend(matched)
        else:
            names.append(entry)
    for n in names:
        if n not in by_name:
            raise RegistryError(f"registry: {where}.columns names the unknown column {n!r}")
        if not by_name[n].is_feature:
            raise RegistryError(f"registry: {where}.columns: {n!r} is an {by_name[n].kind} column")
    return tuple(names)


def _parse_paper_use(
    paper: str,
    t: Mapping[str, Any],
    spec_cols: Sequence[ColumnSpec],
    target: str | None,
    where: str,
) -> PaperUse:
    columns = _resolve_columns(spec_cols, target, t.get("columns"), where)
    include_target = _get(t, "include_target", bool, where, False)
    if include_target and not target:
        raise RegistryError(f"registry: {where}.include_target but the dataset has no target")
    encode = _get(t, "encode_categorical", str, where, "none")
    if encode not in ("none", "ordinal"):
        raise RegistryError(f'registry: {where}.encode_categorical must be "none" or "ordinal"')
    filters = []
    for pos, ft in enumerate(_get(t, "row_filters", list, where, [])):
        fw = f"{where}.row_filters[{pos}]"
        ft = _table(ft, fw)
        op = _get(ft, "op", str, fw)
        if op not in FILTER_OPS:
            raise RegistryError(f"registry: {fw}.op must be one of {FILTER_OPS}")
        col = _get(ft, "column", str, fw)
        if col not in {c.name for c in spec_cols}:
            raise RegistryError(f"registry: {fw}.column {col!r} is not a column")
        value = None if op == "missing" else float(_get(ft, "value", (int, float), fw))
        filters.append(RowFilter(col, op, _get(ft, "reason", str, fw), value))
    dims = _get(t, "dims", int, where)
    counted = len(columns) + (1 if include_target and target not in columns else 0)
    if dims != counted:
        raise RegistryError(
            f"registry: {where}.dims = {dims} but the listed columns give {counted}; "
            "fix one of them"
        )
    match = _get(t, "match", str, where)
    if match not in MATCH_VALUES:
        raise RegistryError(f"registry: {where}.match must be one of {MATCH_VALUES}")
    return PaperUse(
        paper=paper,
        columns=columns,
        include_target=include_target,
        encode_categorical=encode,  # type: ignore[arg-type]
        row_filters=tuple(filters),
        rows=_get(t, "rows", int, where),
        dims=dims,
        stated_rows=_get(t, "stated_rows", int, where, None),
        stated_dims=_get(t, "stated_dims", int, where, None),
        match=match,
        how=_get(t, "how", str, where),
    )


def _parse_dataset(name: str, t: Mapping[str, Any], papers: Mapping[str, PaperSpec]) -> DatasetSpec:
    w = f"datasets.{name}"
    pt = _table(_get(t, "parse", Mapping, w), f"{w}.parse")
    parse = ParseSpec(
        sep=_get(pt, "sep", str, f"{w}.parse"),
        header=_header(pt.get("header"), f"{w}.parse"),
        encoding=_get(pt, "encoding", str, f"{w}.parse", "utf-8"),
        na_values=tuple(_get(pt, "na_values", list, f"{w}.parse", [])),
        skipinitialspace=_get(pt, "skipinitialspace", bool, f"{w}.parse", False),
    )
    columns = _parse_column_entries(
        _table(_get(t, "schema", Mapping, w), f"{w}.schema").get("columns"), w
    )
    target = _get(t, "target", str, w, "") or None
    if target is not None and target not in {c.name for c in columns}:
        raise RegistryError(f"registry: {w}.target {target!r} is not one of its columns")
    cols = _get(t, "cols", int, w)
    if cols != len(columns):
        raise RegistryError(f"registry: {w}.cols = {cols} but {len(columns)} columns are described")
    uses = {}
    for paper, ut in _table(t.get("papers", {}), f"{w}.papers").items():
        if paper not in papers:
            raise RegistryError(
                f"registry: {w}.papers.{paper}: unknown paper (known: {', '.join(papers)})"
            )
        uses[paper] = _parse_paper_use(
            paper, _table(ut, f"{w}.papers.{paper}"), columns, target, f"{w}.papers.{paper}"
        )
    on_malformed = _get(t, "on_malformed", str, w, "raise")
    if on_malformed not in ("raise", "drop"):
        raise RegistryError(f'registry: {w}.on_malformed must be "raise" or "drop"')
    optional = {
        k: _parse_file(_table(t[k], f"{w}.{k}"), f"{w}.{k}") if k in t else None
        for k in DERIVE_SOURCES
    }
    file = _parse_file(_table(_get(t, "file", Mapping, w), f"{w}.file"), f"{w}.file")
    derive = (_parse_derive(_table(t["derive"], f"{w}.derive"), f"{w}.derive", file, optional,
                            rows=_get(t, "rows", int, w)) if "derive" in t else None)
    return DatasetSpec(
        name=name,
        title=_get(t, "title", str, w),
        page=_get(t, "page", str, w),
        uci_id=_get(t, "uci_id", int, w, 0),
        doi=_get(t, "doi", str, w, ""),
        licence=_get(t, "licence", str, w),
        licence_note=_get(t, "licence_note", str, w, ""),
        fidelity=_get(t, "fidelity", str, w),
        checksum_evidence=_get(t, "checksum_evidence", str, w, ""),
        rows=_get(t, "rows", int, w),
        cols=cols,
        target=target,
        sample=_get(t, "sample", bool, w, False),
        on_malformed=on_malformed,  # type: ignore[arg-type]
        quirks=tuple(_get(t, "quirks", list, w, [])),
        file=file,
        full_file=optional["full_file"],
        original=optional["original"],
        parse=parse,
        columns=columns,
        papers=MappingProxyType(uses),
        derive=derive,
        instead=_get(t, "instead", str, w, ""),
    )


def _parse_derive(t: Mapping[str, Any], where: str, file: FileSpec,
                  sources: Mapping[str, FileSpec | None], *, rows: int) -> DeriveSpec:
    """A ``derive`` table: its source table must exist and have an address, the rule must be
    known, and its parameters complete and of the right types (no other key is accepted)."""
    table_name = _get(t, "source", str, where)
    source = sources.get(table_name)
    if source is None:
        raise RegistryError(f"registry: {where}.source must name a table of the entry "
                            f"({' or '.join(DERIVE_SOURCES)}), got {table_name!r}")
    if not source.url:
        raise RegistryError(f"registry: {where}: the original ({table_name}) has no url")
    if file.bytes is None:
        raise RegistryError(f"registry: {where}: a derived file needs file.bytes (the limit of "
                            "what the rule may write)")
    rule = _get(t, "rule", str, where)
    if rule not in DERIVE_RULES:
        raise RegistryError(f"registry: {where}.rule must be one of {tuple(DERIVE_RULES)}, "
                            f"got {rule!r}")
    kinds = {"line_ending": str, "final_newline": bool, **DERIVE_RULES[rule]}
    extra = sorted(set(t) - set(kinds) - {"source", "rule", "max_download_bytes"})
    if extra:
        raise RegistryError(f"registry: {where}: unknown keys {extra} for the rule {rule!r}")
    params = {key: _get(t, key, kind, where) for key, kind in kinds.items()}
    if params["line_ending"] not in LINE_ENDINGS:
        raise RegistryError(f'registry: {where}.line_ending must be "\\n" or "\\r\\n"')
    if rule == "xls_to_csv" and params["sheet"] < 0:
        raise RegistryError(f"registry: {where}.sheet must be >= 0 (0 is the first sheet)")
    if rule == "first_records":
        if params["records"] != rows:
            raise RegistryError(f"registry: {where}.records = {params['records']} but the "
                                f"dataset has {rows} rows")
        if params["header"] != "columns":
            raise RegistryError(f'registry: {where}.header must be "columns" (the schema\'s '
                                "column names)")
    limit = _get(t, "max_download_bytes", int, where)
    if limit <= 0:
        raise RegistryError(f"registry: {where}.max_download_bytes must be > 0")
    return DeriveSpec(source=source, source_table=table_name, rule=rule,
                      params=MappingProxyType(params), max_download_bytes=limit)


def _parse_bundled(name: str, t: Mapping[str, Any]) -> BundledSpec:
    w = f"bundled.{name}"
    columns = _parse_column_entries(
        _table(_get(t, "schema", Mapping, w), f"{w}.schema").get("columns"), w
    )
    if any(c.kind != "numeric" for c in columns):
        raise RegistryError(f"registry: {w}: bundled datasets describe numeric columns only")
    return BundledSpec(
        name=name,
        title=_get(t, "title", str, w),
        loader=_get(t, "loader", str, w),
        licence=_get(t, "licence", str, w),
        columns=columns,
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_generated(family: str, t: Mapping[str, Any]) -> list[GeneratedSpec]:
    """The sets of one ``[generated.<family>]`` table: ``fixed`` parameters, a ``grid`` of
    parameter lists and a ``name`` template with one ``{field}`` per grid key."""
    w = f"generated.{family}"
    seed = _get(t, "seed", int, w)
    if seed < 0:
        raise RegistryError(f"registry: {w}.seed must be >= 0, got {seed}")
    fixed = dict(_table(_get(t, "fixed", Mapping, w, {}), f"{w}.fixed"))
    grid = dict(_table(_get(t, "grid", Mapping, w, {}), f"{w}.grid"))
    for key, value in fixed.items():
        if not _number(value):
            raise RegistryError(f"registry: {w}.fixed.{key} must be a number, got {value!r}")
    for key, values in grid.items():
        if not (isinstance(values, list) and values and all(_number(v) for v in values)):
            raise RegistryError(f"registry: {w}.grid.{key} must be a non-empty list of numbers")
        if len(set(values)) != len(values):
            raise RegistryError(f"registry: {w}.grid.{key} repeats a value")
    both = sorted(set(fixed) & set(grid))
    if both:
        raise RegistryError(f"registry: {w}: {both} both fixed and in the grid")
    template = _get(t, "name", str, w)
    fields = _FIELD.findall(template)
    if sorted(fields) != sorted(grid) or len(set(fields)) != len(fields):
        raise RegistryError(
            f"registry: {w}.name {template!r} must name each grid key once: {sorted(grid)}"
        )
    common = {
        "family": family,
        "title": _get(t, "title", str, w),
        "generator": _get(t, "generator", str, w),
        "seed": seed,
        "source": _get(t, "source", str, w),
        "note": _get(t, "note", str, w, ""),
    }
    out = []
    for point in itertools.product(*grid.values()):
        values = dict(zip(grid, point, strict=True))
        out.append(GeneratedSpec(name=template.format(**values),
                                 params=MappingProxyType({**fixed, **values}), **common))
    return out


def _parse_unavailable(key: str, t: Mapping[str, Any]) -> UnavailableSpec:
    w = f"unavailable.{key}"
    why = _get(t, "why", str, w)
    if not why.strip():
        raise RegistryError(f"registry: {w}.why must say why the data cannot be obtained")
    return UnavailableSpec(key=key, title=_get(t, "title", str, w), names=_get(t, "names", str, w),
                           why=why)
