"""Fixtures of the data tests: a real HTTP server on 127.0.0.1 and an isolated download folder.

The server runs in a thread and serves a temporary folder (``helpers.GOOD`` as ``good.csv``,
``helpers.BAD`` as ``bad.csv``, and whatever a test writes there); nothing leaves the machine.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dpkmeans.data import fetch
from dpkmeans.data.fetch import Location
from tests.data.helpers import BAD, GOOD


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder; ``/truncated/<file>`` promises more bytes than it sends, then closes;
    ``/nolength/<file>`` sends the file without a Content-Length, then closes; ``/error/...``
    answers HTTP 500; ``/drop/...`` closes the connection without an answer."""

    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.path.startswith("/truncated/"):
            body = (Path(self.directory) / self.path.removeprefix("/truncated/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 100))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/nolength/"):
            body = (Path(self.directory) / self.path.removeprefix("/nolength/")).read_bytes()
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/error/"):
            self.send_error(500, "Internal Server Error")
            return
        if self.path.startswith("/drop/"):
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Path, list[str]]]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    root = tmp_path / "www"
    root.mkdir()
    (root / "good.csv").write_bytes(GOOD)
    (root / "bad.csv").write_bytes(BAD)
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"hits": hits})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root, hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Downloads land in tmp_path/home; $DPKMEANS_DATA, the user's cache and the repo's data/raw
    are bypassed."""
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.delenv("DPKMEANS_OFFLINE", raising=False)
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("cache", tmp_path / "cache"))
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: None, raising=False)
    return tmp_path / "home"
