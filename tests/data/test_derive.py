"""The derivation of a dataset's file from its public original (``dpkmeans.data.derive``),
against a real HTTP server on 127.0.0.1 (``tests/data/conftest.py``) that serves the original.

The originals cannot be downloaded here (no network beyond the package registries), so the
tests build them: for credit_card an ``.xls`` (written with xlwt) holding exactly the cells of
our verified CSV, for covtype a ``.gz`` whose first 10000 lines are our verified sample's data
rows, and each test registry carries the sha256 of the original it built. That the real UCI
originals give the registered files is not tested here: the derivation checks it (the
derived file's sha256) on every reader's machine. The tests that need the verified files skip
without ``$DPKMEANS_DATA``; the synthetic ones run everywhere.
"""

from __future__ import annotations

import copy
import csv
import gzip
import hashlib
import io
import os
import sys
import tomllib
import zlib
from pathlib import Path
from typing import Any

import pytest
import xlwt

from dpkmeans.cli import main
from dpkmeans.data import commands, load
from dpkmeans.data.derive import _RULES, derivable, fetch_target, obtain_file
from dpkmeans.data.errors import (
    ChecksumMismatchError,
    DataFileMissingError,
    DerivationError,
    DownloadError,
)
from dpkmeans.data.registry import DERIVE_RULES, Registry, get_registry, registry_path
from dpkmeans.extras import MissingExtraError
from tests.data.helpers import GOOD

REG = get_registry()
Server = tuple[str, Path, list[str]]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def _verified(name: str) -> bytes:
    """Our verified file of dataset ``name`` from ``$DPKMEANS_DATA`` (read before the ``home``
    fixture unsets it), or a skip."""
    folder = os.environ.get("DPKMEANS_DATA")
    path = Path(folder or "-") / name / REG.dataset(name).file.name
    if not folder or not path.is_file():
        pytest.skip(f"needs the verified {name} file (set DPKMEANS_DATA)")
    return path.read_bytes()


@pytest.fixture(scope="module")
def credit_card_csv() -> bytes:
    return _verified("credit_card")


@pytest.fixture(scope="module")
def covtype_sample() -> bytes:
    return _verified("covtype")


def _real_registry(name: str, source: dict[str, Any], **derive: Any) -> Registry:
    """The registry with the real entry of ``name`` alone, its original (``original`` or
    ``full_file``) changed by ``source`` and its ``derive`` table by ``derive``."""
    raw = tomllib.loads(Path(registry_path()).read_text())
    entry = copy.deepcopy(raw["datasets"][name])
    entry[entry["derive"]["source"]].update(source)
    entry["derive"].update(derive)
    return Registry.from_dict({"schema_version": 1, "papers": raw["papers"],
                               "datasets": {name: entry}})


def _toy(derive: dict[str, Any], source: dict[str, Any], *, data: bytes = GOOD,
         rows: int = 2, table: str = "full_file", **file: Any) -> Registry:
    """A two-column toy dataset whose file (``data``: its sha256 and size) is derived from the
    original ``source`` (the entry's ``table``) by ``derive``."""
    entry = {
        "title": "Toy", "page": "https://example.org/toy", "licence": "CC0",
        "fidelity": "sample", "sample": True, "rows": rows, "cols": 2, "target": "y",
        "parse": {"sep": ",", "header": 0},
        "schema": {"columns": [
            {"name": "x", "kind": "numeric", "bounds": [0, 1], "why": "unit interval"},
            {"name": "y", "kind": "categorical", "levels": ["a", "b"]},
        ]},
        "file": {"name": "toy.csv", "sha256": _sha(data), "bytes": len(data),
                 "no_url_reason": "derived", **file},
        table: {"name": "toy.data.gz", "header": "none", **source},
        "derive": {"line_ending": "\n", "final_newline": True,
                   "max_download_bytes": 1 << 20, "source": table, **derive},
    }
    return Registry.from_dict({"schema_version": 1, "papers": {}, "datasets": {"toy": entry}})


def _first_records(base: str, original: bytes, *, rows: int = 3, url: str = "toy.data.gz",
                   **changes: Any) -> Registry:
    """The covtype arrangement in small: the toy's 2 records under its header (``GOOD``) are
    the first records of a gzipped, headerless full file of ``rows`` records."""
    return _toy({"rule": "first_records", "records": 2, "header": "columns"},
                {"sha256": _sha(original), "url": f"{base}/{url}", "rows": rows,
                 "compression": "gzip"}, **changes)


def _xls(rows: list[list[Any]]) -> bytes:
    """An .xls workbook (BIFF8, written by xlwt) whose first sheet holds ``rows`` (``None``:
    no cell)."""
    book = xlwt.Workbook(encoding="utf-8")
    sheet = book.add_sheet("Data")
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            if value is not None:
                sheet.write(r, c, value)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _xls_registry(base: str, original: bytes, data: bytes) -> Registry:
    return _toy({"rule": "xls_to_csv", "sheet": 0, "bom": True, "line_ending": "\r\n",
                  "final_newline": False},
                 {"name": "toy.xls", "sha256": _sha(original), "url": f"{base}/toy.xls"},
                 data=data, table="original")


# ------------------------------------------------------------------- the registry's datasets


def test_the_registry_derives_credit_card_and_covtype_and_says_marketing_has_no_address():
    assert set(_RULES) == set(DERIVE_RULES)
    card, cov, market = (REG.dataset(n) for n in ("credit_card", "covtype", "marketing_campaign"))
    assert card.derive.rule == "xls_to_csv" and card.derive.source == card.original
    assert card.original.sha256.startswith("30c6be3a")
    assert cov.derive.rule == "first_records" and cov.derive.source == cov.full_file
    assert cov.derive.params["records"] == cov.rows == 10000
    assert fetch_target(card) == card.file and fetch_target(cov) == cov.file
    assert derivable(cov) and not derivable(cov, cov.full_file)
    assert fetch_target(market) is None and not market.file.url
    assert "Kaggle" in market.file.no_url_reason and "mixture_d2" in market.instead
    assert [n for n, s in REG.datasets.items() if s.derive] == ["credit_card", "covtype"]


@pytest.mark.slow
def test_credit_card_is_derived_exactly_from_an_xls_of_its_cells(
    credit_card_csv: bytes, server: Server, home: Path
) -> None:
    """The real UCI .xls cannot be downloaded here: an .xls holding exactly the cells of our
    verified CSV (text as text, integers as numbers, the empty first cell left out) stands in
    for it, with its own sha256 in a test registry. The derivation gives exactly the
    registered CSV: sha256 848715ec..., the registry's."""
    base, root, hits = server
    cells = [[None if v == "" else int(v) if v.lstrip("-").isdigit() else v for v in row]
             for row in csv.reader(io.StringIO(credit_card_csv.decode("utf-8-sig")))]
    original = _xls(cells)
    (root / "uci.xls").write_bytes(original)
    reg = _real_registry("credit_card", {"sha256": _sha(original), "url": f"{base}/uci.xls"})
    spec = reg.dataset("credit_card")
    assert spec.file.sha256 == REG.dataset("credit_card").file.sha256.lower()
    ds = load("credit_card", paper="dpkccm", registry=reg, data_home=home)
    derived = home / "credit_card" / spec.file.name
    assert _sha(derived.read_bytes()).startswith("848715ec0c4b")
    assert derived.read_bytes() == credit_card_csv
    assert ds.n_samples == 30000 and ds.provenance.verified
    assert hits == ["/uci.xls"] and _leftovers(home) == ["credit_card", spec.file.name]


def test_covtype_is_derived_exactly_from_a_gz_whose_first_records_are_the_samples(
    covtype_sample: bytes, server: Server, home: Path, monkeypatch, capsys
) -> None:
    """The .gz's first 10000 lines are our sample's data rows, then further rows; `datasets
    fetch covtype` derives exactly the sample (sha256 ce19d1aa...), keeps neither the .gz nor
    a temporary file, and `load` then reads the sample without asking the server again."""
    base, root, hits = server
    rows = covtype_sample.split(b"\n")[1:]
    further = [b",".join([b"3000"] * 54 + [b"2"])] * 25
    original = gzip.compress(b"\n".join(rows + further) + b"\n", mtime=0)
    (root / "covtype.data.gz").write_bytes(original)
    reg = _real_registry("covtype", {"sha256": _sha(original), "url": f"{base}/covtype.data.gz"})
    monkeypatch.setattr(commands, "get_registry", lambda: reg)
    assert main(["datasets", "fetch", "covtype", "--data-home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "covtype: SAMPLE_first10000rows_covtype.csv derived from covtype.data.gz" in out
    derived = (home / "covtype" / "SAMPLE_first10000rows_covtype.csv").read_bytes()
    assert derived == covtype_sample and _sha(derived).startswith("ce19d1aaa1db")
    assert _leftovers(home) == ["SAMPLE_first10000rows_covtype.csv", "covtype"]
    ds = load("covtype", paper="silhouette", registry=reg, data_home=home)
    assert ds.provenance.sample and ds.n_samples == 10000 and hits == ["/covtype.data.gz"]


# ------------------------------------------------------------- synthetic: run everywhere


def test_first_records_from_a_local_server(server: Server, home: Path) -> None:
    base, root, hits = server
    original = gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)
    (root / "toy.data.gz").write_bytes(original)
    reg = _first_records(base, original)
    ds = load("toy", registry=reg, data_home=home)  # auto: the sample, derived
    assert (home / "toy" / "toy.csv").read_bytes() == GOOD
    assert ds.provenance.sample and ds.n_samples == 2 and hits == ["/toy.data.gz"]
    assert _leftovers(home) == ["toy", "toy.csv"]


def test_variant_full_still_downloads_the_full_file(
    server: Server, home: Path, monkeypatch, capsys
) -> None:
    """variant='full' (and `datasets fetch --full`) downloads the full file and keeps it; auto
    then reads it, and the sample is derived from it without a download."""
    base, root, hits = server
    original = gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)
    (root / "toy.data.gz").write_bytes(original)
    reg = _first_records(base, original)
    full = load("toy", registry=reg, data_home=home, variant="full")
    assert full.n_samples == 3 and full.metadata["variant"] == "full"
    assert (home / "toy" / "toy.data.gz").read_bytes() == original
    assert load("toy", registry=reg, data_home=home, download=False).n_samples == 3
    sample = load("toy", registry=reg, data_home=home, download=False, variant="sample")
    assert sample.n_samples == 2 and hits == ["/toy.data.gz"]
    (home / "toy" / "toy.data.gz").unlink()
    monkeypatch.setattr(commands, "get_registry", lambda: reg)
    assert main(["datasets", "fetch", "toy", "--full", "--data-home", str(home)]) == 0
    assert "toy: toy.data.gz downloaded and verified" in capsys.readouterr().out
    assert main(["datasets", "fetch", "toy", "--data-home", str(home)]) == 0
    assert "toy: toy.csv already present and verified" in capsys.readouterr().out
    assert hits == ["/toy.data.gz"] * 2


def test_xls_to_csv_writes_what_excel_writes(server: Server, home: Path) -> None:
    """Excel's "CSV UTF-8": a byte-order mark, CRLF between lines and none at the end, a field
    quoted only when it holds a comma, a quote or a line end (quotes doubled), integers in
    full, empty cells as nothing (every row as wide as the sheet)."""
    base, root, hits = server
    original = _xls([[None, "X1", "X2"], ["ID", "a, b", 'say "hi"'], [1, 2.0, -30000000],
                     ["é", "two\nlines", None], [True, 0, None]])
    expected = ('\ufeff,X1,X2\r\nID,"a, b","say ""hi"""\r\n1,2,-30000000\r\n'
                'é,"two\nlines",\r\nTRUE,0,').encode()
    (root / "toy.xls").write_bytes(original)
    reg = _xls_registry(base, original, expected)
    obtain_file(reg.dataset("toy"), reg.dataset("toy").file, data_home=home, download=True)
    assert (home / "toy" / "toy.csv").read_bytes() == expected
    assert hits == ["/toy.xls"] and _leftovers(home) == ["toy", "toy.csv"]


def test_without_xlrd_the_error_names_the_extra_before_any_download(
    server: Server, home: Path, monkeypatch, capsys
) -> None:
    base, root, hits = server
    original = _xls([["x", "y"], [1, 2]])
    (root / "toy.xls").write_bytes(original)
    reg = _xls_registry(base, original, b"\xef\xbb\xbfx,y\r\n1,2")
    monkeypatch.setitem(sys.modules, "xlrd", None)  # as if it were not installed
    with pytest.raises(MissingExtraError, match=r'pip install "dpkmeans\[xls\]"'):
        load("toy", registry=reg, data_home=home)
    monkeypatch.setattr(commands, "get_registry", lambda: reg)
    assert main(["datasets", "fetch", "toy", "--data-home", str(home)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'needs xlrd, which the \'xls\' extra installs' in err
    assert hits == [] and not home.exists()


# ------------------------------------------------------------------------------- refusals


def test_an_original_with_the_wrong_sha256_is_refused(server: Server, home: Path) -> None:
    base, root, _ = server
    original = gzip.compress(b"0.25,a\n0.75,b\n", mtime=0)
    (root / "toy.data.gz").write_bytes(original)
    reg = _first_records(base, gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0))
    with pytest.raises(ChecksumMismatchError) as info:
        load("toy", registry=reg, data_home=home)
    message = str(info.value)
    assert reg.dataset("toy").full_file.sha256 in message and _sha(original) in message
    assert "toy's original toy.data.gz" in message and not home.exists()


def test_a_derived_file_with_the_wrong_sha256_is_refused_and_nothing_is_kept(
    server: Server, home: Path
) -> None:
    base, root, _ = server
    original = gzip.compress(b"0.25,a\n0.75,a\n0.5,a\n", mtime=0)  # 0.75,a: not the sample
    (root / "toy.data.gz").write_bytes(original)
    reg = _first_records(base, original)
    with pytest.raises(ChecksumMismatchError) as info:
        load("toy", registry=reg, data_home=home)
    message = str(info.value)
    assert f"expected sha256 {_sha(GOOD)}" in message
    assert f"got {_sha(GOOD.replace(b'0.75,b', b'0.75,a'))}" in message
    assert "Nothing was kept" in message and not home.exists()
    (home / "toy").mkdir(parents=True)  # an existing folder stays, and stays empty
    with pytest.raises(ChecksumMismatchError):
        load("toy", registry=reg, data_home=home)
    assert _leftovers(home) == ["toy"]


def test_offline_the_error_says_how_to_derive_the_file(
    server: Server, home: Path, monkeypatch
) -> None:
    base, root, hits = server
    original = gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)
    (root / "toy.data.gz").write_bytes(original)
    reg = _first_records(base, original)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    with pytest.raises(DataFileMissingError) as info:
        load("toy", registry=reg, data_home=home, variant="sample")
    message = str(info.value)
    assert "downloads are off" in message and "derived from its public original" in message
    assert "`python -m dpkmeans datasets fetch toy`" in message and f"{base}/toy.data.gz" in message
    assert hits == [] and not home.exists()


def test_a_gzip_bomb_is_cut_off_at_the_size_of_the_file(server: Server, home: Path) -> None:
    """256 MiB of digits without a line end, gzipped to a few hundred kB: the rule reads no
    more than the derived file may hold, and stops."""
    base, root, _ = server
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    block = b"7" * (1 << 20)
    bomb = b"".join(packer.compress(block) for _ in range(256)) + packer.flush()
    assert len(bomb) < 1 << 20
    (root / "toy.data.gz").write_bytes(bomb)
    reg = _first_records(base, bomb, rows=1)
    with pytest.raises(DerivationError, match="longer than the 18 bytes.*decompression bomb"):
        load("toy", registry=reg, data_home=home)
    assert not home.exists()


def test_an_original_over_the_download_cap_is_refused(server: Server, home: Path) -> None:
    base, root, _ = server
    original = gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)
    (root / "toy.data.gz").write_bytes(original)
    reg = _toy({"rule": "first_records", "records": 2, "header": "columns",
                "max_download_bytes": len(original) - 1},
               {"sha256": _sha(original), "url": f"{base}/toy.data.gz", "rows": 3,
                "compression": "gzip"})
    with pytest.raises(DownloadError, match="over the cap"):
        load("toy", registry=reg, data_home=home)
    assert not home.exists()


@pytest.mark.parametrize("original, error", [
    (gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)[:14], "cannot be read as a gzip"),
    (b"this is not gzip data at all", "cannot be read as a gzip"),
    (gzip.compress(b"0.25,a\n", mtime=0), "holds 1 records; the rule keeps the first 2"),
], ids=["truncated", "not gzip", "too few records"])
def test_a_truncated_or_corrupt_gzip_is_a_clear_error(
    server: Server, home: Path, original: bytes, error: str
) -> None:
    base, root, _ = server
    (root / "toy.data.gz").write_bytes(original)
    with pytest.raises(DerivationError, match=error):
        load("toy", registry=_first_records(base, original), data_home=home)
    assert not home.exists()


@pytest.mark.parametrize("original, error", [
    (_xls([["x", "y"], [1, 2]])[:2000], "cannot be read as an .xls workbook"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "cannot be read as an .xls workbook"),
    (b"x,y\n1,2\n", "cannot be read as an .xls workbook"),
    (_xls([["x", "y"], [1, 0.5]]), "cell B2 holds 0.5: the rule writes integers"),
], ids=["truncated", "empty compound document", "not xls", "a fraction"])
def test_a_truncated_or_corrupt_xls_is_a_clear_error(
    server: Server, home: Path, original: bytes, error: str
) -> None:
    base, root, _ = server
    (root / "toy.xls").write_bytes(original)
    reg = _xls_registry(base, original, b"\xef\xbb\xbfx,y\r\n1,2")
    with pytest.raises(DerivationError, match=error):
        load("toy", registry=reg, data_home=home)
    assert not home.exists()
