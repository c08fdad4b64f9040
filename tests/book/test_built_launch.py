"""The built book's pages carry no thebe configuration and no placeholder repository, and
their launch buttons, if any, open the repository the page names (docs/launch.md).

The same rules on a one-page build, with and without a repository, are in
``tests/test_launch.py``. Run after the book is built (``make book``);
``$DPKMEANS_BOOK_HTML`` points it at another build (the default: ``_build/html``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("DPKMEANS_BOOK_HTML") or ROOT / "_build" / "html")
#: What sphinx-thebe writes into a page, and the placeholder repository it names.
FORBIDDEN = ("binder-examples", "text/x-thebe-config", "THEBE_JS_URL", "sphinx-thebe")
BINDER = re.compile(r'href="https://mybinder\.org/v2/gh/([^/"]+/[^/"]+)/([^?"]+)\?urlpath=')
COLAB = re.compile(r'href="https://colab\.research\.google\.com/github/([^/"]+/[^/"]+)/blob/')
REPOSITORY = re.compile(r'href="https://github\.com/([^/"]+/[^/"]+)"\s+target="_blank"\s+'
                        r'class="[^"]*btn-source-repository-button')


def _pages() -> list[Path]:
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `make book` first")
    return sorted(HTML.rglob("*.html"))


def test_no_page_carries_thebe_or_a_placeholder_repository():
    found = [(page.relative_to(HTML).as_posix(), word) for page in _pages()
             for word in FORBIDDEN if word in page.read_text(encoding="utf-8")]
    assert not found, found


def test_launch_buttons_open_the_repository_the_page_names():
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        launched = {repo for repo, _ in BINDER.findall(text)} | set(COLAB.findall(text))
        if launched:
            assert launched == set(REPOSITORY.findall(text)), page
            assert all(re.fullmatch(r"[0-9a-f]{40}|[\w.-]+", rev)
                       for _, rev in BINDER.findall(text)), page
