"""``python -m dpkmeans datasets list|info|verify|fetch``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpkmeans.cli import build_parser, main
from dpkmeans.data import fetch
from dpkmeans.data.fetch import Location
from dpkmeans.data.registry import get_registry

REG = get_registry()
_DATA_ROOT = os.environ.get("DPKMEANS_DATA")


def _shared_data() -> Path:
    """$DPKMEANS_DATA if it holds every registered file, else skip."""
    if not _DATA_ROOT:
        pytest.skip("$DPKMEANS_DATA is not set (point it at ../shared/data)")
    root = Path(_DATA_ROOT)
    absent = [s.name for s in REG.datasets.values() if not (root / s.name / s.file.name).is_file()]
    if absent:
        pytest.skip(f"$DPKMEANS_DATA lacks {absent}")
    return root


@pytest.fixture
def empty(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No $DPKMEANS_DATA, an empty default folder: nothing is found."""
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("data/raw", tmp_path / "raw"))
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: None)
    return tmp_path


def test_verify_reports_eleven_entries_ten_verified_and_the_covtype_sample(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = _shared_data()
    monkeypatch.setenv("DPKMEANS_DATA", str(root))
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("data/raw", tmp_path / "raw"))
    assert main(["datasets", "verify"]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith(
        "11 entries: 10 verified, 1 sample (verified), 0 missing, 0 checksum mismatch"
    )
    assert "covtype              SAMPLE, VERIFIED" in out
    assert "sample of 10000 of 581012 rows" in out
    assert str(root) not in out  # locations are labels, not absolute paths


def test_list_shows_availability_and_checksum_status(
    capsys: pytest.CaptureFixture[str], empty: Path
) -> None:
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["dataset", "file", "rows"]
    for name in REG.names:
        assert any(line.startswith(name + " ") and "missing" in line for line in lines), name
    assert "iris, wine" in out


def test_verify_with_nothing_present(capsys: pytest.CaptureFixture[str], empty: Path) -> None:
    assert main(["datasets", "verify"]) == 0
    assert (
        "11 entries: 0 verified, 0 sample (verified), 11 missing, 0 checksum mismatch"
        in capsys.readouterr().out
    )
    assert main(["datasets", "verify", "--strict"]) == 1


def test_verify_flags_a_corrupt_file(capsys: pytest.CaptureFixture[str], empty: Path) -> None:
    home = empty / "home"
    (home / "heart").mkdir(parents=True)
    (home / "heart" / "heart.dat").write_text("70.0 1.0\n", encoding="utf-8")
    assert main(["datasets", "verify", "--data-home", str(home)]) == 1
    out = capsys.readouterr().out
    assert "heart                CHECKSUM MISMATCH" in out
    assert REG.dataset("heart").file.sha256 in out
    assert "1 checksum mismatch" in out


def test_info_prints_the_registry_entry(capsys: pytest.CaptureFixture[str], empty: Path) -> None:
    assert main(["datasets", "info", "adult"]) == 0
    out = capsys.readouterr().out
    assert REG.dataset("adult").file.sha256 in out
    assert "hours-per-week" in out and "[1, 168]" in out
    assert "dpkccm: rows 32561 (paper 32561), dims 6 (paper 6), exact" in out
    assert "missing markers=['?']" in out


def test_info_says_how_a_file_is_derived_and_what_to_use_instead(
    capsys: pytest.CaptureFixture[str], empty: Path
) -> None:
    assert main(["datasets", "info", "credit_card"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    card = REG.dataset("credit_card")
    assert f"origin derived from {card.original.url} (sha256 {card.original.sha256})" in out
    assert 'pip install "dpkmeans[xls]"' in out
    assert main(["datasets", "info", "marketing_campaign"]) == 0
    raw = capsys.readouterr().out
    assert "instead " + REG.dataset("marketing_campaign").instead in " ".join(raw.split())
    assert "\n  origin " not in raw


def test_info_of_an_unknown_dataset_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "info", "gamma"]) == 2
    assert "Known datasets: blood" in capsys.readouterr().err


def test_fetch_of_a_present_file_only_verifies(
    capsys: pytest.CaptureFixture[str], empty: Path
) -> None:
    src = _shared_data() / "blood" / "transfusion.data"
    home = empty / "home"
    (home / "blood").mkdir(parents=True)
    shutil.copyfile(src, home / "blood" / "transfusion.data")
    assert main(["datasets", "fetch", "blood", "--data-home", str(home)]) == 0
    assert "blood: transfusion.data already present and verified" in capsys.readouterr().out


def test_fetch_without_a_download_address_says_what_to_do(
    capsys: pytest.CaptureFixture[str], empty: Path
) -> None:
    assert (
        main(["datasets", "fetch", "marketing_campaign", "--data-home", str(empty / "home")]) == 2
    )
    err = capsys.readouterr().err
    assert "kaggle datasets download" in err and "no public download address" in err
    assert f"What to use instead: {REG.dataset('marketing_campaign').instead}" in err
    assert not (empty / "home" / "marketing_campaign" / "marketing_campaign.csv").exists()


def test_parser_has_subcommand_groups() -> None:
    parser = build_parser()
    args = parser.parse_args(["datasets", "fetch", "blood", "adult"])
    assert args.group == "datasets" and args.names == ["blood", "adult"]
    with pytest.raises(SystemExit):
        parser.parse_args(["datasets"])


def test_python_dash_m_entry_point(empty: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DPKMEANS_DATA"}
    result = subprocess.run(
        [sys.executable, "-m", "dpkmeans", "datasets", "info", "heart"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Statlog (Heart)" in result.stdout
