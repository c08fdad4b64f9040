"""A user with only the repository (no $DPKMEANS_DATA, downloads off, empty folders): every
command that needs data files says so before it starts, in one line that names the files and
how to get them. Regression tests: `reproduce --only silhouette` started and died with a
172-line traceback, `datasets fetch` ignored $DPKMEANS_OFFLINE, refused `iris` and took
`--timeout 0`, and the credit-card message named the .xls's sha256 as the one to check."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from dpkmeans.cli import main
from dpkmeans.data import fetch
from dpkmeans.data.errors import DataFileMissingError
from dpkmeans.data.fetch import Location, ensure_file
from dpkmeans.data.needs import book_datasets, require_datasets
from dpkmeans.data.registry import get_registry
from dpkmeans.study import environment

ROOT = Path(__file__).resolve().parents[2]
REG = get_registry()


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No $DPKMEANS_DATA, downloads off, an empty cache and no data/raw: nothing is found."""
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("cache", tmp_path / "cache"))
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: None)
    monkeypatch.setattr(environment, "cell_environment", lambda: {})
    return tmp_path


def one_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Exit status 2 and exactly one stderr line, ``error: ...``; returns it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_reproduce_checks_every_file_before_it_starts(capsys, bare: Path) -> None:
    book = bare / "book"
    (book / "notebooks" / "sweeps").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "sweeps" / "silhouette.yaml", book / "notebooks" / "sweeps")
    line = one_error(capsys, ["reproduce", "--root", str(book), "--only", "silhouette"])
    assert "`reproduce --only silhouette` needs data files that are not here" in line
    for name in ("covtype", "magic", "abalone", "blood"):
        assert name in line
    assert "python -m dpkmeans datasets fetch covtype magic abalone blood" in line
    assert "DPKMEANS_OFFLINE" in line
    assert not (book / "_build").exists()  # nothing started


def test_sweep_checks_its_files_and_names_one_without_a_download_address(capsys, bare) -> None:
    """marketing_campaign has no public address: the line says so, where it comes from, where
    to put it and what to use instead."""
    line = one_error(capsys, ["sweep", str(ROOT / "notebooks" / "sweeps" / "colored.yaml")])
    spec = REG.dataset("marketing_campaign")
    assert f"marketing_campaign has no public download address (it comes from {spec.page})" in line
    assert spec.file.sha256 in line and "cache/marketing_campaign/" in line
    assert f"Instead: {spec.instead}" in line and "datasets fetch" not in line


def test_the_book_check_names_the_chapters_and_their_files(capsys, bare: Path) -> None:
    """Every file the book's chapters read can be fetched: credit_card and covtype's sample are
    derived from their public originals (once they had no download address)."""
    line = one_error(capsys, ["datasets", "check", "--for-book"])
    assert line.startswith("error: the book (chapters 10, 11) needs data files")
    assert "heart (heart.dat)" in line and "covtype (SAMPLE_first10000rows_covtype.csv)" in line
    names = " ".join(dict.fromkeys(n for names in book_datasets().values() for n in names))
    assert f"`python -m dpkmeans datasets fetch {names}`" in line
    assert "credit_card" in names and "covtype" in names and "no public download" not in line
    one_error(capsys, ["datasets", "check"])  # nothing named


def test_the_check_names_the_extra_a_derivation_needs(capsys, bare: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "xlrd", None)  # as if it were not installed
    line = one_error(capsys, ["datasets", "check", "credit_card", "covtype"])
    assert "datasets fetch credit_card covtype`" in line
    assert 'Deriving credit_card needs xlrd: pip install "dpkmeans[xls]".' in line
    assert "Deriving covtype" not in line


def test_the_makefile_checks_the_books_data_before_any_chapter_runs() -> None:
    recipe = (ROOT / "Makefile").read_text().split("\nbook: ", 1)[1].split("\nbook-force:")[0]
    executed = recipe.split("\nelse\n", 1)[1]
    assert "-m dpkmeans datasets check --for-book" in executed
    assert executed.index("datasets check") < executed.index("jupyter-book build")


def test_book_datasets_cover_what_chapters_load() -> None:
    from dpkmeans.papers.apdp.study import CASES

    chapters = book_datasets()
    assert set(chapters["10_schedules"]) == {dataset for dataset, *_ in CASES.values()}
    for chapter, names in chapters.items():
        source = (ROOT / "notebooks" / f"{chapter}.py").read_text()
        literal = set(re.findall(r"\bload\(\"(\w+)\"", source))
        assert literal <= set(names), (chapter, literal - set(names))
        assert set(names) <= set(REG.names)


def test_list_says_what_is_missing_and_how_to_get_it(capsys, bare: Path, monkeypatch) -> None:
    assert main(["datasets", "list"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("missing: blood (transfusion.data)")
    assert "`python -m dpkmeans datasets fetch blood adult" in last
    assert " credit_card " in last and " covtype " in last
    assert REG.dataset("marketing_campaign").file.sha256 in last
    monkeypatch.setenv("DPKMEANS_DATA", str(bare / "nowhere"))
    assert main(["datasets", "list"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert f"$DPKMEANS_DATA is {bare / 'nowhere'}, which is not a folder" in last


def test_a_data_folder_that_does_not_exist_is_reported(bare: Path, monkeypatch) -> None:
    monkeypatch.setenv("DPKMEANS_DATA", str(bare / "nowhere"))
    with pytest.raises(DataFileMissingError, match=r"\$DPKMEANS_DATA is .*nowhere, which is not"):
        require_datasets(["heart"], "this test")
    spec = REG.dataset("heart")
    with pytest.raises(DataFileMissingError, match="which is not a folder"):
        ensure_file(spec, spec.file)


def test_the_credit_card_message_names_the_csvs_sha256(capsys, bare: Path) -> None:
    """Offline, `fetch credit_card` says the file is derived from the UCI .xls and how, with
    the CSV's sha256 as the one checked; so does ensure_file, which does not derive."""
    spec = REG.dataset("credit_card")
    line = one_error(capsys, ["datasets", "fetch", "credit_card"])
    assert "downloads are off" in line and spec.original.url in line
    assert f"derived from its public original {spec.original.name}" in line
    assert f"checks its sha256 {spec.file.sha256}" in line and "sha256 above" not in line
    with pytest.raises(DataFileMissingError, match=spec.file.sha256) as info:
        ensure_file(spec, spec.file, download=False)
    assert "not the .xls's" in str(info.value)


def test_fetch_of_a_bundled_set_says_it_is_bundled(capsys, bare: Path) -> None:
    assert main(["datasets", "fetch", "iris", "wine"]) == 0
    out = capsys.readouterr().out
    assert "iris: bundled with scikit-learn, nothing to fetch" in out and "wine: bundled" in out


@pytest.mark.parametrize("timeout", ["0", "-5", "nan", "inf"])
def test_fetch_refuses_a_timeout_that_is_not_positive(capsys, bare: Path, timeout: str) -> None:
    line = one_error(capsys, ["datasets", "fetch", "blood", "--timeout", timeout])
    assert "--timeout must be a positive number of seconds" in line


def test_fetch_offline_refuses_to_download(capsys, bare: Path) -> None:
    line = one_error(capsys, ["datasets", "fetch", "heart"])
    assert "downloads are off ($DPKMEANS_OFFLINE is set)" in line
    assert REG.dataset("heart").file.sha256 in line
    assert not (bare / "cache" / "heart").exists()
