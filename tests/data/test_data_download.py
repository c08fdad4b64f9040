"""Downloads against a real HTTP server on 127.0.0.1: good, corrupted, truncated, 404, offline,
too large.

The server (the ``server`` fixture of ``tests/data/conftest.py``) runs in a thread and serves a
temporary folder; nothing leaves the machine and nothing is written outside tmp_path.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from dpkmeans.data import fetch, load
from dpkmeans.data.errors import ChecksumMismatchError, DataFileMissingError, DownloadError
from dpkmeans.data.fetch import Location, download_file
from dpkmeans.data.registry import Registry
from tests.data.helpers import BAD, GOOD


def _toy_entry(**overrides: object) -> dict:
    """The registry entry of a two-column toy dataset; ``overrides`` replace top-level keys."""
    entry = {
        "title": "Toy",
        "page": "https://example.org/toy",
        "licence": "CC0",
        "fidelity": "original",
        "rows": 2,
        "cols": 2,
        "target": "y",
        "parse": {"sep": ",", "header": 0},
        "schema": {
            "columns": [
                {"name": "x", "kind": "numeric", "bounds": [0, 1], "why": "unit interval"},
                {"name": "y", "kind": "categorical", "levels": ["a", "b"]},
            ]
        },
    }
    entry.update(overrides)
    return entry


def _toy_registry(**overrides: object) -> Registry:
    return Registry.from_dict(
        {"schema_version": 1, "papers": {}, "datasets": {"toy": _toy_entry(**overrides)}}
    )


def _registry(url: str, sha256: str = hashlib.sha256(GOOD).hexdigest()) -> Registry:
    return _toy_registry(
        file={"name": "toy.csv", "sha256": sha256, "url": url, "no_url_reason": "test"}
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_good_download_is_verified_placed_and_reused(
    server: tuple[str, Path, list[str]], home: Path
) -> None:
    base, _, hits = server
    reg = _registry(f"{base}/good.csv")
    ds = load("toy", registry=reg, data_home=home)
    assert (home / "toy" / "toy.csv").read_bytes() == GOOD
    assert ds.provenance.verified and ds.provenance.location == "data_home"
    np.testing.assert_allclose(ds.X[:, 0], [0.25, 0.75])
    assert ds.target.tolist() == [0, 1] and ds.target_levels == ("a", "b")
    assert hits == ["/good.csv"]
    load("toy", registry=reg, data_home=home)  # found on disk: no second request
    assert hits == ["/good.csv"]
    assert _leftovers(home) == ["toy", "toy.csv"]


def test_corrupted_download_is_refused_and_nothing_is_written(
    server: tuple[str, Path, list[str]], home: Path
) -> None:
    base, _, _ = server
    with pytest.raises(ChecksumMismatchError) as info:
        load("toy", registry=_registry(f"{base}/bad.csv"), data_home=home)
    message = str(info.value)
    assert (
        hashlib.sha256(GOOD).hexdigest() in message and hashlib.sha256(BAD).hexdigest() in message
    )
    assert "Nothing was written" in message
    assert _leftovers(home) == [] and not home.exists()  # no file, no .part, no folder


def test_a_good_file_is_never_replaced_by_a_bad_one(
    server: tuple[str, Path, list[str]], tmp_path: Path
) -> None:
    base, _, _ = server
    dest = tmp_path / "keep" / "toy.csv"
    dest.parent.mkdir()
    dest.write_bytes(GOOD)
    with pytest.raises(ChecksumMismatchError):
        download_file(f"{base}/bad.csv", dest, hashlib.sha256(GOOD).hexdigest())
    assert dest.read_bytes() == GOOD
    assert _leftovers(dest.parent) == ["toy.csv"]


def test_truncated_response_is_an_error(server: tuple[str, Path, list[str]], home: Path) -> None:
    base, _, _ = server
    with pytest.raises(DownloadError, match=r"truncated: received \d+ of \d+ bytes"):
        load("toy", registry=_registry(f"{base}/truncated/good.csv"), data_home=home)
    assert not home.exists()


@pytest.mark.parametrize("path", ["good.csv", "nolength/good.csv"])
def test_a_body_over_the_cap_is_refused_and_nothing_is_written(
    server: tuple[str, Path, list[str]], tmp_path: Path, path: str
) -> None:
    """Announced (Content-Length) or not, a body longer than the cap is refused as it arrives:
    ``load`` caps a download at the file's registered ``bytes``."""
    base, _, _ = server
    dest = tmp_path / "capped" / "toy.csv"
    with pytest.raises(DownloadError, match=f"over the cap of {len(GOOD) - 1} bytes"):
        download_file(f"{base}/{path}", dest, hashlib.sha256(GOOD).hexdigest(),
                      max_bytes=len(GOOD) - 1)
    assert not dest.parent.exists()
    assert download_file(f"{base}/{path}", dest, hashlib.sha256(GOOD).hexdigest(),
                         max_bytes=len(GOOD)).read_bytes() == GOOD


def test_load_caps_a_download_at_the_registered_size(
    server: tuple[str, Path, list[str]], home: Path
) -> None:
    base, _, _ = server
    reg = _toy_registry(file={"name": "toy.csv", "sha256": hashlib.sha256(GOOD).hexdigest(),
                              "bytes": 5, "url": f"{base}/nolength/good.csv"})
    with pytest.raises(DownloadError, match="over the cap of 5 bytes"):
        load("toy", registry=reg, data_home=home)
    assert not home.exists()


def test_http_404_is_an_error_that_says_what_to_do(
    server: tuple[str, Path, list[str]], home: Path
) -> None:
    base, _, _ = server
    with pytest.raises(DownloadError, match="HTTP 404.*copy it by hand"):
        load("toy", registry=_registry(f"{base}/absent.csv"), data_home=home)
    assert not home.exists()


def test_unreachable_server_is_an_error(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with pytest.raises(DownloadError, match="failed"):
        load("toy", registry=_registry("http://127.0.0.1:9/toy.csv"), data_home=home)
    assert not home.exists()


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("error/good.csv", DownloadError),
        ("drop/good.csv", DownloadError),
        ("truncated/good.csv", DownloadError),
        ("absent.csv", DownloadError),
        ("bad.csv", ChecksumMismatchError),
    ],
)
def test_a_failed_download_into_the_user_cache_leaves_no_folder(
    server: tuple[str, Path, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    error: type[Exception],
) -> None:
    """Without data_home a download goes to the default folder (the user's cache): a failure
    removes the partial file, ``<cache>/toy/`` and the cache folders it created."""
    base, _, hits = server
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.delenv("DPKMEANS_OFFLINE", raising=False)
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: None, raising=False)
    (tmp_path / "user").mkdir()
    cache = tmp_path / "user" / "cache" / "dpkmeans"
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("$DPKMEANS_CACHE", cache))
    with pytest.raises(error):
        load("toy", registry=_registry(f"{base}/{path}"))
    assert hits == [f"/{path}"]
    assert _leftovers(tmp_path / "user") == []  # neither cache/ nor cache/dpkmeans/toy/
    ds = load("toy", registry=_registry(f"{base}/good.csv"))
    assert ds.provenance.location == "$DPKMEANS_CACHE"
    assert _leftovers(tmp_path / "user") == ["cache", "dpkmeans", "toy", "toy.csv"]


def test_a_download_without_data_home_goes_to_the_users_cache_not_the_checkout(
    server: tuple[str, Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is shared by every clone and installed copy; a checkout's data/raw is only
    searched (before: downloads went to data/raw in a checkout)."""
    base, _, _ = server
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.delenv("DPKMEANS_OFFLINE", raising=False)
    monkeypatch.setenv("DPKMEANS_CACHE", str(tmp_path / "cache"))
    reg = _toy_registry(
        file={"name": "toy_cache_test.csv", "sha256": hashlib.sha256(GOOD).hexdigest(),
              "url": f"{base}/good.csv", "no_url_reason": "test"}
    )
    raw = fetch.repo_root() / "data" / "raw" / "toy" if fetch.repo_root() else None
    try:
        ds = load("toy", registry=reg)
        assert ds.provenance.location == "$DPKMEANS_CACHE"
        assert (tmp_path / "cache" / "toy" / "toy_cache_test.csv").read_bytes() == GOOD
    finally:
        if raw is not None and (raw / "toy_cache_test.csv").exists():  # the old behaviour
            (raw / "toy_cache_test.csv").unlink()
            raw.rmdir()


def test_an_unwritable_destination_is_a_one_line_error(
    server: tuple[str, Path, list[str]], tmp_path: Path, home: Path
) -> None:
    base, _, hits = server
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DownloadError, match="cannot write the download of 'toy'") as info:
        load("toy", registry=_registry(f"{base}/good.csv"), data_home=blocker / "sub")
    assert "\n" not in str(info.value) and hits == []
    assert blocker.read_text() == "not a folder"


def test_offline_never_contacts_the_server(
    server: tuple[str, Path, list[str]], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _, hits = server
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    with pytest.raises(DataFileMissingError, match="downloads are off"):
        load("toy", registry=_registry(f"{base}/good.csv"), data_home=home)
    with pytest.raises(DataFileMissingError, match="downloads are off"):
        load("toy", registry=_registry(f"{base}/good.csv"), data_home=home, download=False)
    assert hits == []
    ds = load("toy", registry=_registry(f"{base}/good.csv"), data_home=home, download=True)
    assert ds.n_samples == 2 and hits == ["/good.csv"]


def test_mismatching_local_file_is_reported_not_redownloaded(
    server: tuple[str, Path, list[str]], home: Path
) -> None:
    base, _, hits = server
    (home / "toy").mkdir(parents=True)
    (home / "toy" / "toy.csv").write_bytes(BAD)
    with pytest.raises(ChecksumMismatchError, match="delete it"):
        load("toy", registry=_registry(f"{base}/good.csv"), data_home=home)
    assert hits == [] and (home / "toy" / "toy.csv").read_bytes() == BAD


def test_full_file_replaces_a_sample_when_present(home: Path) -> None:
    """The covtype arrangement: a headed CSV sample, and a gzipped headerless full file."""
    sample = b"x,y\n0.25,a\n"
    full = gzip.compress(b"0.25,a\n0.75,b\n0.5,a\n", mtime=0)
    reg = _toy_registry(
        fidelity="sample",
        sample=True,
        rows=1,
        file={"name": "toy_sample.csv", "sha256": hashlib.sha256(sample).hexdigest(),
              "no_url_reason": "not hosted"},
        full_file={"name": "toy.data.gz", "sha256": hashlib.sha256(full).hexdigest(),
                   "url": "http://127.0.0.1:9/toy.data.gz", "rows": 3, "header": "none",
                   "compression": "gzip"},
    )
    (home / "toy").mkdir(parents=True)
    (home / "toy" / "toy_sample.csv").write_bytes(sample)
    ds = load("toy", registry=reg, data_home=home, download=False)
    assert ds.provenance.sample and ds.n_samples == 1
    (home / "toy" / "toy.data.gz").write_bytes(full)
    ds = load("toy", registry=reg, data_home=home, download=False)
    assert not ds.provenance.sample and ds.metadata["variant"] == "full"
    np.testing.assert_allclose(ds.X[:, 0], [0.25, 0.75, 0.5])
    assert load("toy", registry=reg, data_home=home, variant="sample").n_samples == 1


def test_fetch_honours_offline_and_the_pre_run_check_downloads_when_allowed(
    server: tuple[str, Path, list[str]],
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`datasets fetch` with $DPKMEANS_OFFLINE=1 asks the server nothing and says downloads are
    off (it used to download regardless); the check run before a sweep fetches a missing file
    when downloads are allowed, and names the fetch command when they are not."""
    from dpkmeans.cli import main
    from dpkmeans.data import commands
    from dpkmeans.data.needs import require_datasets

    base, _, hits = server
    reg = _registry(f"{base}/good.csv")
    monkeypatch.setattr(commands, "get_registry", lambda: reg)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    assert main(["datasets", "fetch", "toy", "--data-home", str(home)]) == 2
    assert "downloads are off" in capsys.readouterr().err
    with pytest.raises(DataFileMissingError, match="datasets fetch toy`"):
        require_datasets(["toy"], "this run", data_home=home, registry=reg)
    assert hits == [] and _leftovers(home) == []
    monkeypatch.delenv("DPKMEANS_OFFLINE")
    require_datasets(["toy"], "this run", data_home=home, registry=reg)
    assert hits == ["/good.csv"] and (home / "toy" / "toy.csv").read_bytes() == GOOD
