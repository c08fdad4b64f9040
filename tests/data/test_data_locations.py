"""Where the data files are looked for: the same documented order for the library, the CLI and
any interpreter (``.venv/bin/python`` without ``make``): data_home, ``$DPKMEANS_DATA``, the
user's cache (``$DPKMEANS_CACHE``, else ``~/.cache/dpkmeans``), then the checkout's data/raw.
Regression test: a README command run outside ``make`` found no dataset."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpkmeans.data import fetch, load
from dpkmeans.data.errors import DataFileMissingError
from dpkmeans.data.fetch import Location, search_locations
from dpkmeans.data.registry import Registry, get_registry, repo_root

GOOD = b"x,y\n0.25,a\n0.75,b\n"
_DATA_ROOT = os.environ.get("DPKMEANS_DATA")  # read before any test changes it


def _registry() -> Registry:
    entry = {
        "title": "Toy",
        "page": "https://example.org/toy",
        "licence": "CC0",
        "fidelity": "original",
        "rows": 2,
        "cols": 2,
        "target": "y",
        "parse": {"sep": ",", "header": 0},
        "file": {"name": "toy.csv", "sha256": hashlib.sha256(GOOD).hexdigest(),
                 "no_url_reason": "test"},
        "schema": {
            "columns": [
                {"name": "x", "kind": "numeric", "bounds": [0, 1], "why": "unit interval"},
                {"name": "y", "kind": "categorical", "levels": ["a", "b"]},
            ]
        },
    }
    return Registry.from_dict({"schema_version": 1, "papers": {}, "datasets": {"toy": entry}})


def _put(folder: Path) -> Path:
    (folder / "toy").mkdir(parents=True)
    (folder / "toy" / "toy.csv").write_bytes(GOOD)
    return folder


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh user: HOME in tmp_path, no $DPKMEANS_DATA, no $DPKMEANS_CACHE, no downloads."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.delenv("DPKMEANS_CACHE", raising=False)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    return tmp_path / "home"


def test_the_search_order_is_data_home_variable_cache_then_checkout(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = [loc.label for loc in search_locations("toy")]
    assert labels[0] == "~/.cache/dpkmeans"
    assert search_locations("toy")[0].directory == user / ".cache" / "dpkmeans" / "toy"
    monkeypatch.setenv("DPKMEANS_DATA", str(tmp_path / "shared"))
    monkeypatch.setenv("DPKMEANS_CACHE", str(tmp_path / "cache"))
    locations = search_locations("toy", data_home=tmp_path / "home_arg")
    expected = ["data_home", "$DPKMEANS_DATA", "$DPKMEANS_CACHE"]
    expected += ["data/raw"] if repo_root() is not None else []
    assert [loc.label for loc in locations] == expected
    assert locations[2].directory == tmp_path / "cache" / "toy"
    assert all(not loc.label.startswith("/") for loc in locations)  # labels, not paths


def test_a_checkout_finds_a_file_in_the_users_cache(user: Path) -> None:
    """Before: a source checkout searched only $DPKMEANS_DATA and data/raw."""
    _put(user / ".cache" / "dpkmeans")
    ds = load("toy", registry=_registry())
    assert ds.provenance.verified and ds.provenance.location == "~/.cache/dpkmeans"
    assert ds.n_samples == 2


def test_the_variable_wins_over_the_cache_and_the_cache_over_data_raw(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: Location("data/raw", tmp_path / "raw"))
    _put(tmp_path / "raw")
    assert load("toy", registry=_registry()).provenance.location == "data/raw"
    _put(user / ".cache" / "dpkmeans")
    assert load("toy", registry=_registry()).provenance.location == "~/.cache/dpkmeans"
    monkeypatch.setenv("DPKMEANS_DATA", str(_put(tmp_path / "shared")))
    assert load("toy", registry=_registry()).provenance.location == "$DPKMEANS_DATA"


def test_missing_everywhere_names_every_folder_searched(user: Path) -> None:
    with pytest.raises(DataFileMissingError) as info:
        load("toy", registry=_registry())
    assert str(user / ".cache" / "dpkmeans" / "toy" / "toy.csv") in str(info.value)


def test_the_datasets_command_outside_make_finds_the_users_cache(
    user: Path, tmp_path: Path
) -> None:
    """``python -m dpkmeans datasets list`` run by hand (no make, no $DPKMEANS_DATA) in another
    folder reports a verified file kept in ~/.cache/dpkmeans."""
    spec = get_registry().dataset("blood")
    source = Path(_DATA_ROOT or "") / "blood" / spec.file.name
    if not _DATA_ROOT or not source.is_file():
        pytest.skip("the verified blood file is not under $DPKMEANS_DATA (set it to copy it)")
    target = user / ".cache" / "dpkmeans" / "blood"
    target.mkdir(parents=True)
    shutil.copyfile(source, target / spec.file.name)
    env = {k: v for k, v in os.environ.items() if k not in ("DPKMEANS_DATA", "DPKMEANS_CACHE")}
    run = subprocess.run(
        [sys.executable, "-m", "dpkmeans", "datasets", "list"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=True,
    )
    blood = next(line for line in run.stdout.splitlines() if line.startswith("blood "))
    assert "verified" in blood and blood.rstrip().endswith("~/.cache/dpkmeans"), blood
    adult = next(line for line in run.stdout.splitlines() if line.startswith("adult "))
    assert "missing" in adult
