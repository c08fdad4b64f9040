"""The Makefile's link check (``make test-browser``) works on a build inside a private folder.

LinkChecker started as root switches to the user nobody, who cannot read a book built in a
folder only root can enter (a clone under /root; pytest's own tmp_path under
/tmp/pytest-of-root is one), and the check failed there. Regression test: the Makefile's exact
command, read with ``make -n``, run on a two-page book in a 0700 folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"


def _link_check_command() -> str:
    """The link-check lines of the test-browser recipe, as make would hand them to the shell."""
    if shutil.which("make") is None or not (BIN / "linkchecker").is_file():
        pytest.skip("needs make and .venv/bin/linkchecker")
    out = subprocess.run(
        ["make", "-s", "-n", "-o", "book", "test-browser"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    ).stdout.splitlines()
    start = next(i for i, line in enumerate(out) if "tests/browser" in line) + 1
    end = next(i for i, line in enumerate(out) if "Screenshots" in line)
    command = "\n".join(out[start:end])
    assert "linkchecker" in command, command
    return command


def _book(folder: Path, target: str) -> Path:
    html = folder / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text(f'<html><body><a href="{target}">next</a></body></html>\n')
    (html / "page.html").write_text('<html><body><a href="index.html">back</a></body></html>\n')
    folder.chmod(0o700)
    return folder


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_link_check_passes_on_a_book_in_a_private_folder(tmp_path: Path) -> None:
    command = _link_check_command()
    run = _run(command, _book(tmp_path / "clone", "page.html"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "0 errors found" in run.stdout
    if os.geteuid() == 0:
        assert "Permission denied" not in run.stdout


def test_the_link_check_still_fails_on_a_broken_link(tmp_path: Path) -> None:
    run = _run(_link_check_command(), _book(tmp_path / "clone", "missing.html"))
    assert run.returncode != 0 and "1 error found" in run.stdout, run.stdout[-2000:]
