"""The book's measured pages, from their sources (no build): the Execution status table
(book/_ext/exec_status.py), the chapters' lengths on the How to use page
(book/_ext/chapter_lengths.py) and the printed book's contents numbers (book/_ext/print_pdf.py).
The built pages are checked by tests/browser/test_pages.py and tests/book/test_pdf.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import chapter_lengths  # noqa: E402
from exec_status import FROM_STORED, stored_run  # noqa: E402
from print_pdf import probe_pages  # noqa: E402


def _cell(source: str, start: str | None, end: str | None, count: int | None,
          outputs: list | None = None) -> dict:
    execution = {}
    if start:
        execution["iopub.execute_input"] = start
    if end:
        execution["shell.execute_reply"] = end
    return {"cell_type": "code", "source": source, "execution_count": count,
            "metadata": {"execution": execution} if execution else {},
            "outputs": outputs or []}


def test_a_stored_run_is_timed_from_its_cells_records():
    notebook = {"cells": [
        {"cell_type": "markdown", "source": "# Title"},
        _cell("x = 1", "2026-11-27T00:56:08.5Z", "2026-11-27T00:56:09.0Z", 1),
        _cell("", None, None, None),  # an empty cell is never run
        _cell("y = 2", "2026-11-27T00:56:10.0Z", "2026-11-27T00:56:19.5Z", 2),
    ]}
    run = stored_run(notebook)
    assert run.status == "complete"
    assert run.seconds == 11.0
    assert run.when.isoformat() == "2026-11-27T00:56:19.500000+00:00"
    assert run.origin == FROM_STORED


def test_a_stored_run_with_an_error_or_a_cell_not_run_says_so():
    error = {"output_type": "error", "ename": "ValueError", "evalue": "", "traceback": []}
    failed = {"cells": [_cell("x", "2026-11-27T00:00:00Z", "2026-11-27T00:00:01Z", 1,
                              [error])]}
    assert stored_run(failed).status == "failed"
    unrun = {"cells": [_cell("x", "2026-11-27T00:00:00Z", "2026-11-27T00:00:01Z", 1),
                       _cell("y", None, None, None)]}
    assert stored_run(unrun).status == "incomplete"
    out_of_order = {"cells": [_cell("x", "2026-11-27T00:00:00Z", "2026-11-27T00:00:01Z", 2),
                              _cell("y", "2026-11-27T00:00:01Z", "2026-11-27T00:00:02Z", 1)]}
    assert stored_run(out_of_order).status == "incomplete"


def test_every_notebook_of_the_book_records_its_execution():
    """The status table of a build from stored outputs reads these records: every chapter's
    notebook holds them (a notebook saved without executing it would show 'incomplete')."""
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        run = stored_run(json.loads(path.read_text(encoding="utf-8")))
        assert run.when is not None and run.seconds is not None, path.name


def test_the_status_page_uses_the_table_that_lists_every_page():
    """myst-nb's nb-exec-table lists only what the build executed: a header row alone in a
    build from stored outputs."""
    status = (ROOT / "book" / "status.md").read_text(encoding="utf-8")
    assert "{execution-status}" in status and "nb-exec-table" not in status


def test_contents_entries_take_the_first_page_their_probe_is_on():
    texts = ["title", "contents", "PKTOC1X 1. Chapter PKTOC2X 1.1 Section", "text",
             "PKTOC3X2. Next", "PKTOC3X repeated"]
    assert probe_pages(texts) == {"1": 3, "2": 3, "3": 5}


def test_words_count_prose_not_code_and_a_formula_as_one_word():
    markdown = ("The mechanism $M(D) = f(D) + Y$ adds {doc}`noise <03_composition>`.\n\n"
                "```python\nx = 1\ny = 2\n```\n")
    assert chapter_lengths.words(markdown) == 5


def test_the_how_to_page_claims_one_session_a_chapter_only_if_each_fits_one():
    """How to use measures every chapter ({chapter-lengths}) and, while a chapter needs more
    than one session by that measure, does not say that each chapter fits one."""
    found = chapter_lengths.chapters(ROOT)
    assert [c.number for c in found] == list(range(1, len(found) + 1)) and len(found) >= 12
    assert all(c.words > 300 and c.title for c in found)
    how_to = (ROOT / "book" / "how_to_use.md").read_text(encoding="utf-8")
    assert "{chapter-lengths}" in how_to
    blanket = re.search(r"one class session each|each chapter fits one", how_to, re.I)
    assert not (blanket and any(c.sessions > 1 for c in found)), blanket.group(0)


def test_a_chapter_is_measured_with_the_pages_listed_under_it():
    """Chapter 6's other pages ("Auditing an algorithm" and "A gallery of real bugs",
    sections of the table of contents) count in chapter 6's length, each page's text as a
    section named by its title."""
    found = {c.number: c for c in chapter_lengths.chapters(ROOT)}
    first_page = chapter_lengths.measure(ROOT / "notebooks" / "06_auditing.ipynb", 6)
    others = [chapter_lengths.measure(ROOT / "notebooks" / f"{stem}.ipynb", 6)
              for stem in ("06_auditing_algorithms", "06_auditing_gallery")]
    assert found[6].words == first_page.words + sum(page.words for page in others)
    assert found[6].code_lines == first_page.code_lines + sum(p.code_lines for p in others)
    assert all(page.title in found[6].sections for page in others)
