"""Committed files found wherever a chapter runs (dpkmeans.study.committed): inside the source, from
the library's source tree, from $DPKMEANS_SOURCE as a folder, an archive, or a URL (served
here on 127.0.0.1)."""

from __future__ import annotations

import http.server
import io
import tarfile
import threading
from functools import partial
from pathlib import Path

import pytest

from dpkmeans.study import committed
from dpkmeans.study.committed import CommittedFileError, committed_file

ROOT = Path(__file__).resolve().parents[2]
NAME = "data/results/leaderboard.csv"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory outside any source tree, and a private cache."""
    outside = tmp_path / "somewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.delenv(committed.SOURCE_ENV, raising=False)
    monkeypatch.setenv(committed.CACHE_ENV, str(tmp_path / "cache"))
    return outside


def _archive(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"private-kmeans-reproduced/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_notebook_inside_the_source_reads_its_own_copy_quietly(monkeypatch, capsys):
    monkeypatch.delenv(committed.SOURCE_ENV, raising=False)
    monkeypatch.chdir(ROOT / "notebooks")
    assert committed_file(NAME) == ROOT / NAME
    assert capsys.readouterr().err == ""


def test_elsewhere_the_library_source_tree_is_used_and_said(elsewhere, capsys):
    assert committed_file(NAME) == ROOT / NAME
    assert "library's source tree" in capsys.readouterr().err


def test_a_folder_an_archive_and_a_url(elsewhere, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "unpacked"
    (folder / "data/results").mkdir(parents=True)
    (folder / NAME).write_text("a,b\n1,2\n")
    monkeypatch.setenv(committed.SOURCE_ENV, str(folder))
    assert committed_file(NAME).read_text() == "a,b\n1,2\n"
    assert f"{committed.SOURCE_ENV}=" in capsys.readouterr().err

    www = tmp_path / "www"
    www.mkdir()
    archive = _archive(www / "source.tar.gz", {NAME: b"x\n3\n", "Makefile": b"all:\n"})
    monkeypatch.setenv(committed.SOURCE_ENV, str(archive))
    assert committed_file(NAME).read_bytes() == b"x\n3\n"

    hits: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            super().do_GET()

        def log_message(self, *args) -> None:
            pass

    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("DPKMEANS_OFFLINE", raising=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            partial(Handler, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/source.tar.gz"
        monkeypatch.setenv(committed.SOURCE_ENV, url)
        assert committed_file(NAME).read_bytes() == b"x\n3\n"
        assert committed_file("Makefile").read_bytes() == b"all:\n"
        assert hits == ["/source.tar.gz"]  # downloaded once, then read from the cache
        assert "downloading the book's source" in capsys.readouterr().err
        monkeypatch.setenv(committed.SOURCE_ENV, url.replace("source", "missing"))
        with pytest.raises(CommittedFileError, match="cannot download"):
            committed_file(NAME)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_offline_means_no_download(elsewhere, monkeypatch):
    monkeypatch.setenv(committed.SOURCE_ENV, "http://127.0.0.1:9/source.tar.gz")
    with pytest.raises(CommittedFileError, match="downloads are off"):
        committed_file(NAME)


def test_what_is_missing_or_malformed_is_named(elsewhere, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="path in the repository"):
        committed_file("../etc/passwd")
    with pytest.raises(ValueError, match="path in the repository"):
        committed_file("/etc/passwd")
    with pytest.raises(CommittedFileError, match="cannot find data/results/nothing.csv"):
        committed_file("data/results/nothing.csv")
    monkeypatch.setenv(committed.SOURCE_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(CommittedFileError, match="neither a folder"):
        committed_file(NAME)
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar")
    monkeypatch.setenv(committed.SOURCE_ENV, str(junk))
    with pytest.raises(CommittedFileError, match="source archive"):
        committed_file(NAME)
    other = _archive(tmp_path / "other.tar.gz", {"README.md": b"hi"})
    monkeypatch.setenv(committed.SOURCE_ENV, str(other))
    with pytest.raises(CommittedFileError, match="does not hold"):
        committed_file(NAME)
