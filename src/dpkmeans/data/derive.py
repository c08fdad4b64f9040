"""Make a dataset's file from its public original, by the rule in the registry.

Two of the registry's files are hosted nowhere, but are made from a public original by a fixed
rule (``[datasets.<name>.derive]`` in ``data/datasets.toml``):

- ``xls_to_csv`` (credit_card): the cells of one sheet of an ``.xls`` workbook, written as
  Excel's "CSV UTF-8" export writes them: a UTF-8 byte-order mark, the registry's line end,
  fields quoted only when they hold a comma, a double quote or a line end, and numbers in
  Excel's General format. The rule writes integers only (the credit-card sheet holds nothing
  else): a fraction, a date or a number longer than General's 11 characters is refused rather
  than guessed. Reading ``.xls`` needs xlrd, the ``xls`` extra (``pip install "dpkmeans[xls]"``).
- ``first_records`` (covtype): the first ``records`` records of the (decompressed) original,
  under one header line of the schema's column names.

:func:`derive_file` finds the original on disk (the usual search, :mod:`~dpkmeans.data.fetch`)
or downloads it into a temporary file, with :mod:`~dpkmeans.data.fetch`'s machinery: a size cap
(the registry's ``max_download_bytes``), the original's sha256 checked before it is read, and
downloads only when they are allowed (``$DPKMEANS_OFFLINE``). The rule then writes a temporary
file beside the destination and may write no more than the registered size of the file (so a
decompression bomb is cut off, and a gzip stream is never decompressed whole); the result must
have the registered sha256, else it is refused with both hashes and nothing is kept. Only the
derived file lands, in ``data_home`` or the user's cache; the downloaded original is deleted.
A corrupt or truncated original is a :class:`~dpkmeans.data.errors.DerivationError`.

:func:`obtain_file` is what the loader, ``datasets fetch`` and ``datasets check`` call: a
verified copy on disk, else a derivation where the registry has a rule, else a download.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from dpkmeans.data.errors import (
    ChecksumMismatchError,
    DataError,
    DataFileMissingError,
    DerivationError,
)
from dpkmeans.data.fetch import (
    DATA_ENV,
    OFFLINE_ENV,
    Location,
    download_target,
    download_verified,
    downloads_allowed,
    ensure_file,
    env_note,
    landing,
    not_found,
    sha256_file,
    verified_copy,
)
from dpkmeans.data.registry import DatasetSpec, DeriveSpec, FileSpec
from dpkmeans.extras import MissingExtraError, install_hint

__all__ = [
    "BOM",
    "XLS_EXTRA",
    "derivable",
    "derivation_text",
    "derive_file",
    "fetch_target",
    "missing_requirement",
    "obtain_file",
    "rule_text",
]

#: The UTF-8 byte-order mark that Excel's "CSV UTF-8" export writes first.
BOM = b"\xef\xbb\xbf"
#: The extra that installs xlrd, which reads ``.xls`` (rule ``xls_to_csv``).
XLS_EXTRA = "xls"
#: The widest number Excel's General format writes in full (wider ones become 1.2E+11).
_GENERAL_WIDTH = 11
_CSV_SPECIAL = (",", '"', "\r", "\n")


def derivable(spec: DatasetSpec, file: FileSpec | None = None) -> bool:
    """Whether the registry derives ``file`` (default: the dataset's file) from an original."""
    return spec.derive is not None and (file is None or file == spec.file)


def fetch_target(spec: DatasetSpec) -> FileSpec | None:
    """The file fetched when the dataset has none on disk: its file when that can be downloaded
    or derived (covtype: the 10,000-record sample, derived from the full file), else its full
    file when that has an address, else ``None`` (no public address: marketing_campaign)."""
    if spec.file.url or derivable(spec):
        return spec.file
    if spec.full_file is not None and spec.full_file.url:
        return spec.full_file
    return None


def _xlrd() -> ModuleType:
    """xlrd, or a :class:`~dpkmeans.extras.MissingExtraError` naming the extra."""
    try:
        return importlib.import_module("xlrd")
    except ModuleNotFoundError as err:
        raise MissingExtraError(
            f"reading an .xls original (rule xls_to_csv: credit_card's) needs xlrd, which "
            f"the {XLS_EXTRA!r} extra installs: {install_hint(XLS_EXTRA)}") from err


#: What each rule needs beyond the library, checked before anything is downloaded.
_REQUIREMENTS: dict[str, Callable[[], Any]] = {"xls_to_csv": _xlrd}


def missing_requirement(spec: DatasetSpec) -> str:
    """``""``, or one sentence saying which extra deriving ``spec``'s file needs and how to
    install it (rule ``xls_to_csv`` without xlrd)."""
    needs = _REQUIREMENTS.get(spec.derive.rule) if spec.derive is not None else None
    try:
        if needs is not None:
            needs()
    except MissingExtraError:
        return f"Deriving {spec.name} needs xlrd: {install_hint(XLS_EXTRA)}."
    return ""


def _line_end(params: Mapping[str, Any]) -> str:
    return "CRLF" if params["line_ending"] == "\r\n" else "LF"


def rule_text(spec: DatasetSpec) -> str:
    """What the registry's rule makes of the original, in words (``datasets info``, the
    Datasets page)."""
    derive = _derive_spec(spec)
    p = derive.params
    final = "a final line end" if p["final_newline"] else "no final line end"
    if derive.rule == "xls_to_csv":
        return (f"the cells of sheet {p['sheet'] + 1} of {derive.source.name}, written as "
                f"Excel's 'CSV UTF-8' export writes them ({'a UTF-8 byte-order mark, ' * p['bom']}"
                f"{_line_end(p)} line ends, {final}, integers in Excel's General format); "
                f"reading .xls needs xlrd ({install_hint(XLS_EXTRA)})")
    return (f"the first {p['records']} records of {derive.source.name}"
            f"{' (decompressed)' if derive.source.compression else ''}, under one header line of "
            f"the {len(spec.columns)} column names, {_line_end(p)} line ends, {final}")


def derivation_text(spec: DatasetSpec) -> str:
    """Where the file is derived from and how, in one sentence."""
    source = _derive_spec(spec).source
    return f"derived from {source.url} (sha256 {source.sha256}): {rule_text(spec)}"


def _derive_spec(spec: DatasetSpec) -> DeriveSpec:
    if spec.derive is None:
        raise DataError(f"{spec.name!r} has no derivation rule in the registry")
    return spec.derive


# ------------------------------------------------------------------------- the derivation


class _Capped:
    """A binary writer that refuses to write more than ``limit`` bytes."""

    def __init__(self, out: BinaryIO, limit: int, what: str) -> None:
        self.out, self.limit, self.what, self.written = out, limit, what, 0

    @property
    def remaining(self) -> int:
        return self.limit - self.written

    def write(self, data: bytes) -> None:
        self.written += len(data)
        if self.written > self.limit:
            raise DerivationError(
                f"{self.what} would be longer than the {self.limit} bytes of the registered "
                "file: stopped there and refused (the original is not what the rule expects, "
                "or a decompression bomb). Nothing was written.")
        self.out.write(data)


def _first_records(spec: DatasetSpec, original: Path, out: _Capped) -> None:
    derive = _derive_spec(spec)
    p = derive.params
    end = p["line_ending"].encode()
    out.write(",".join(spec.column_names).encode())
    opener = gzip.open if derive.source.compression == "gzip" else open
    kind = "a gzip file" if derive.source.compression == "gzip" else "a text file"
    try:
        with opener(original, "rb") as stream:  # type: ignore[operator]
            for count in range(p["records"]):
                # at most what may still be written (+ the line end): a longer line is cut,
                # and writing it stops the rule, so a line without end is never read whole
                line = stream.readline(out.remaining + 3)
                if not line:
                    raise DerivationError(
                        f"{derive.source.name} holds {count} records; the rule keeps the "
                        f"first {p['records']}: it is not the registered original")
                out.write(end + line.removesuffix(b"\n").removesuffix(b"\r"))
    except (OSError, EOFError, zlib.error) as exc:
        raise DerivationError(
            f"{derive.source.name} cannot be read as {kind} ({type(exc).__name__}: {exc}): it "
            "is truncated or corrupt, or not what the rule expects. Nothing was written."
        ) from exc
    if p["final_newline"]:
        out.write(end)


def _read_sheet(original: Path, index: int, name: str) -> Any:
    """Sheet ``index`` of the workbook, read by xlrd; any failure of xlrd on a hostile or broken
    file is one :class:`DerivationError`."""
    xlrd = _xlrd()
    try:
        book = xlrd.open_workbook(str(original), on_demand=True, logfile=io.StringIO())
        try:
            if index >= book.nsheets:
                raise DerivationError(f"{name} has {book.nsheets} sheet(s); the rule reads "
                                      f"sheet {index + 1}")
            return book.sheet_by_index(index)
        finally:
            book.release_resources()
    except DerivationError:
        raise
    except Exception as exc:  # xlrd raises many kinds of error on a broken file
        raise DerivationError(
            f"{name} cannot be read as an .xls workbook ({type(exc).__name__}: {exc}): it is "
            "truncated or corrupt, or not what the rule expects. Nothing was written.") from exc


def _cell_text(kind: int, value: Any, where: tuple[int, int], xlrd: ModuleType) -> str:
    """One cell (its xlrd type and value) as Excel's CSV export writes it, or a
    :class:`DerivationError` for what the rule does not reproduce."""
    if kind == xlrd.XL_CELL_NUMBER:
        number = float(value)
        text = str(int(number)) if number.is_integer() else ""
        if text and len(text) <= _GENERAL_WIDTH:
            return text
        raise DerivationError(
            f"cell {xlrd.cellname(*where)} holds {number!r}: the rule writes integers of at most "
            f"{_GENERAL_WIDTH} characters only (Excel's General format for other numbers is not "
            "reproduced)")
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    if kind == xlrd.XL_CELL_TEXT:
        text = str(value)
        if any(ch in text for ch in _CSV_SPECIAL):
            return '"' + text.replace('"', '""') + '"'
        return text
    if kind == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if value else "FALSE"
    what = {xlrd.XL_CELL_DATE: "a date", xlrd.XL_CELL_ERROR: "an error value"}.get(kind, "a cell")
    raise DerivationError(f"cell {xlrd.cellname(*where)} holds {what}, which the rule does not "
                          "write")


def _xls_to_csv(spec: DatasetSpec, original: Path, out: _Capped) -> None:
    derive = _derive_spec(spec)
    p = derive.params
    xlrd = _xlrd()
    sheet = _read_sheet(original, p["sheet"], derive.source.name)
    end = p["line_ending"].encode()
    if p["bom"]:
        out.write(BOM)
    for r in range(sheet.nrows):
        cells = zip(sheet.row_types(r), sheet.row_values(r), strict=True)
        fields = (_cell_text(kind, value, (r, c), xlrd) for c, (kind, value) in enumerate(cells))
        out.write((end if r else b"") + ",".join(fields).encode("utf-8"))
    if p["final_newline"]:
        out.write(end)


#: Each rule of :data:`dpkmeans.data.registry.DERIVE_RULES`: it writes the derived file from
#: the original (the caller checks the sha256).
_RULES: dict[str, Callable[[DatasetSpec, Path, _Capped], None]] = {
    "xls_to_csv": _xls_to_csv,
    "first_records": _first_records,
}


@contextlib.contextmanager
def _downloaded(spec: DatasetSpec, folder: Path, timeout: float) -> Iterator[Path]:
    """The original, downloaded into a temporary file in ``folder`` (size capped, sha256
    checked), deleted when the block ends."""
    source = _derive_spec(spec).source
    fd, name = tempfile.mkstemp(prefix=f".{source.name}.", suffix=".part", dir=folder)
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            download_verified(source.url, out, source.sha256, timeout=timeout,
                              label=f"{spec.name}'s original {source.name}",
                              max_bytes=_derive_spec(spec).max_download_bytes)
        yield path
    finally:
        path.unlink(missing_ok=True)


def _offline_message(spec: DatasetSpec, data_home: str | os.PathLike[str] | None) -> str:
    source = _derive_spec(spec).source
    return (
        f"{not_found(spec.name, spec.file, data_home)} and downloads are off (download=False or "
        f"${OFFLINE_ENV}). The file is derived from its public original {source.name} "
        f"({source.url}). Fix: run `python -m dpkmeans datasets fetch {spec.name}` with network "
        f"access (it downloads the original, checks its sha256, derives the file and checks "
        f"its sha256 {spec.file.sha256}), or set ${DATA_ENV} to a folder holding "
        f"{spec.name}/{spec.file.name}.{env_note()}")


def derive_file(
    spec: DatasetSpec,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool | None = None,
    timeout: float = 60.0,
) -> tuple[Location, Path]:
    """Derive the dataset's file from its public original, by the registry's rule.

    Parameters
    ----------
    spec : DatasetSpec
        A registry entry with a ``derive`` table (credit_card, covtype).
    data_home : path, optional
        Where the file lands (``data_home/<name>/``), else the user's cache. It is also
        searched first for the original, which is used in place when it is there.
    download : bool, optional
        Whether the original may be downloaded (default: unless ``$DPKMEANS_OFFLINE``).
    timeout : float
        Seconds of the download's network timeout.

    Returns
    -------
    (Location, Path)
        Where the derived file is, as :func:`dpkmeans.data.fetch.ensure_file` returns it.

    Raises
    ------
    MissingExtraError
        The rule needs an extra that is not installed (xlrd), before anything is downloaded.
    DataFileMissingError
        The original is not on disk and downloads are off; the message says how to derive it.
    DownloadError, ChecksumMismatchError
        The download of the original failed, or it is not the registered original.
    DerivationError
        The original is corrupt or truncated, or the rule would write more than the
        registered file.
    ChecksumMismatchError
        The derived file is not the registered one (both hashes named; nothing is kept).
    """
    derive = _derive_spec(spec)
    _REQUIREMENTS.get(derive.rule, lambda: None)()
    local = verified_copy(spec.name, derive.source, data_home)
    if local is None and not downloads_allowed(download):
        raise DataFileMissingError(_offline_message(spec, data_home))
    location, dest = download_target(spec.name, spec.file, data_home)
    assert spec.file.bytes is not None  # the registry requires it of a derived file
    with landing(dest, spec.name) as tmp:
        with contextlib.ExitStack() as stack:
            original = (local[1] if local is not None
                        else stack.enter_context(_downloaded(spec, dest.parent, timeout)))
            with open(tmp, "wb") as out:
                what = f"the {derive.rule} derivation of {spec.name}'s {spec.file.name}"
                _RULES[derive.rule](spec, original, _Capped(out, spec.file.bytes, what))
        actual = sha256_file(tmp)
        if actual != spec.file.sha256:
            raise ChecksumMismatchError(
                f"the file derived for {spec.name!r} from {derive.source.name} by the rule "
                f"{derive.rule} is not the registered one: expected sha256 {spec.file.sha256}, "
                f"got {actual}. Nothing was kept. The original passed its own sha256 check, so "
                "the rule does not reproduce the registered file from it: report it, or copy a "
                "verified file by hand.")
    return location, dest


def obtain_file(
    spec: DatasetSpec,
    file: FileSpec,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool | None = None,
    timeout: float = 60.0,
) -> tuple[Location, Path]:
    """A verified local copy of ``file``: found on disk, else derived from its public original
    (where the registry has a rule), else downloaded (:func:`~dpkmeans.data.fetch.ensure_file`).

    Parameters
    ----------
    spec : DatasetSpec
        The dataset's registry entry.
    file : FileSpec
        Its file, or its full file.
    data_home, download, timeout
        As :func:`derive_file`.

    Returns
    -------
    (Location, Path)
        Where the verified file is.
    """
    found = verified_copy(spec.name, file, data_home)
    if found is not None:
        return found
    if derivable(spec, file):
        return derive_file(spec, data_home=data_home, download=download, timeout=timeout)
    return ensure_file(spec, file, data_home=data_home, download=download, timeout=timeout)
