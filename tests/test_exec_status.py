"""The Execution status table (book/_ext/exec_status.py) in a real Sphinx build with myst-nb.

A small book of two notebook pages and a status page is built as ``make book
BOOK_OUTPUTS=stored`` builds the book (execution off): the table must have a row for every
notebook page with the time, run time and status its ``.ipynb`` records, say that the outputs
are the stored ones, and follow a notebook that changed in the next, incremental build. A build
that executes the notebooks shows that execution instead. tests/test_book_measures.py checks
:func:`exec_status.stored_run` on its own; tests/browser/test_pages.py checks the built book's
page.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[1] / "book" / "_ext"
sys.path.insert(0, str(EXT))
from exec_status import FROM_BUILD, FROM_STORED, HEADER  # noqa: E402

CONF = """\
import sys
sys.path.insert(0, {ext!r})
project = "status"
extensions = ["myst_nb", "exec_status"]
nb_execution_mode = {mode!r}
exclude_patterns = ["_build"]
"""

STATUS = "# Execution status\n\n```{execution-status}\n```\n"


def code_cell(source: str, count: int | None, start: str | None, end: str | None,
              outputs: list | None = None) -> dict:
    execution = ({"iopub.execute_input": start, "iopub.status.busy": start,
                  "shell.execute_reply": end, "iopub.status.idle": end} if start else {})
    return {"cell_type": "code", "execution_count": count, "id": f"c{count or 0}",
            "metadata": {"execution": execution} if execution else {},
            "outputs": outputs or [], "source": source}


def notebook(title: str, *cells: dict) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": [{"cell_type": "markdown", "id": "t", "metadata": {},
                       "source": f"# {title}"}, *cells]}


ERROR = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}


def write_book(root: Path, mode: str = "off") -> None:
    (root / "chapters").mkdir(parents=True, exist_ok=True)
    (root / "conf.py").write_text(CONF.format(ext=str(EXT), mode=mode))
    (root / "index.md").write_text(
        "# Book\n\n```{toctree}\nchapters/one\nchapters/two\nstatus\n```\n")
    (root / "status.md").write_text(STATUS)
    one = notebook("One",
                   code_cell("x = 1", 1, "2026-11-27T00:56:08.500Z", "2026-11-27T00:56:09.000Z"),
                   code_cell("", None, None, None),  # never run, and not counted
                   code_cell("y = 2", 2, "2026-11-27T00:56:10.000Z", "2026-11-27T00:56:19.500Z"))
    two = notebook("Two", code_cell("1 / 0", 1, "2026-11-28T10:00:00Z", "2026-11-28T10:00:02Z",
                                    [ERROR]))
    (root / "chapters" / "one.ipynb").write_text(json.dumps(one))
    (root / "chapters" / "two.ipynb").write_text(json.dumps(two))


def build(root: Path) -> str:
    """Build the book incrementally (as a second make book would) and return the status page."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(root),
                           str(root / "_build")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return (root / "_build" / "status.html").read_text(encoding="utf-8")


def table(page: str) -> list[list[str]]:
    """The status table's rows: the header, then one per page, each cell's text."""
    body = page[page.index("<table"):page.index("</table>")]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.DOTALL)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.DOTALL)]


def links(page: str) -> list[str]:
    body = page[page.index("<tbody"):page.index("</tbody>")]
    return re.findall(r'href="([^"#]+)', body)


@pytest.fixture(scope="module")
def stored_book(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("stored")
    write_book(root)
    return root, build(root)


def test_a_stored_outputs_build_lists_every_notebook_page_with_its_records(stored_book):
    _, page = stored_book
    rows = table(page)
    assert tuple(rows[0]) == HEADER
    # One row per notebook page, linked and titled; the status page itself is no notebook.
    assert links(page) == ["chapters/one.html", "chapters/two.html"]
    assert rows[1:] == [
        ["One", "2026-11-27 00:56", "11.0", "complete", FROM_STORED],
        ["Two", "2026-11-28 10:00", "2.0", "failed", FROM_STORED],
    ]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "This build executed no notebook" in text


def test_the_next_build_follows_a_notebook_that_changed(stored_book):
    """The status page is read again in every build: it never lags behind a notebook."""
    root, _ = stored_book
    two = json.loads((root / "chapters" / "two.ipynb").read_text())
    two["cells"][1] = code_cell("1 / 1", 1, "2026-12-01T08:00:00Z", "2026-12-01T08:00:04.25Z")
    (root / "chapters" / "two.ipynb").write_text(json.dumps(two))
    rows = table(build(root))
    assert rows[2][1:4] == ["2026-12-01 08:00", "4.2", "complete"]
    assert rows[1][1:4] == ["2026-11-27 00:56", "11.0", "complete"], "the other row stays"


def test_a_build_that_executes_shows_that_execution(tmp_path: Path):
    write_book(tmp_path, mode="force")
    two = notebook("Two", code_cell("1 + 1", None, None, None))
    (tmp_path / "chapters" / "two.ipynb").write_text(json.dumps(two))
    rows = table(build(tmp_path))
    assert [row[3:] for row in rows[1:]] == [["complete", FROM_BUILD["other"]]] * 2
    for row in rows[1:]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row[1]) and float(row[2]) >= 0
    assert rows[1][1] != "2026-11-27 00:56", "this build's time, not the stored one"
