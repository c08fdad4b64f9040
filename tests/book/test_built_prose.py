"""The built HTML book keeps its TeX's backslashes: no page shows a math command without its
backslash (``frac``, ``times``) or what an eaten escape leaves of one (``arepsilon`` from
``\\varepsilon``, ``heta`` from ``\\theta``), and no page carries a control character.

The lint itself is ``built_page_hits`` in ``tests/test_book_prose.py``, which checks the
sources the pages come from. Run after the book is built (``make book``), not by ``make
test-unit``; ``$DPKMEANS_BOOK_HTML`` points it at another build (the default: ``_build/html``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_book_prose import built_page_hits  # noqa: E402

HTML = Path(os.environ.get("DPKMEANS_BOOK_HTML") or ROOT / "_build" / "html")


def test_built_pages_keep_their_backslashes():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `make book` first")
    hits = built_page_hits(HTML)
    assert not hits, "TeX without its backslash in the built book:\n" + "\n".join(
        str(hit) for hit in hits)
