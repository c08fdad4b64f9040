"""The student edition (``make student``) holds every exercise and no solution.

Run by ``make student`` after both builds; not collected by ``make test-unit``, which runs
before any book exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FULL = ROOT / "_build" / "html"
STUDENT = ROOT / "_build" / "student" / "_build" / "html"
SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def _pages(root: Path) -> dict[str, str]:
    if not (root / "index.html").exists():
        pytest.fail(f"no book at {root}: run make student (it builds both editions)")
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in root.rglob("*.html") if "_static" not in p.parts}


def _solution_sentences() -> list[str]:
    """The first words of every solution in the chapters' sources (plain text only)."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"#\s*`{3,4}\{solution\}[^\n]*\n(.*?)#\s*`{3,4}\s*\n", text, re.S):
            lines = [ln.lstrip("#").strip() for ln in block.splitlines()]
            prose = [ln for ln in lines if ln and not ln.startswith((":", "`", "$", "|", "-"))
                     and re.fullmatch(r"[A-Za-z ,.;'()]{25,}.*", ln)]
            if prose:
                words = re.match(r"([A-Za-z ,;]{35,}?)[\s,.;]", prose[0] + " ")
                if words:
                    found.append(words.group(1).strip())
    return found


def test_every_exercise_is_there_and_no_solution():
    full, student = _pages(FULL), _pages(STUDENT)
    assert set(full) == set(student)
    solution = re.compile(r'class="[^"]*\bsolution\b')
    exercise = re.compile(r'class="[^"]*\bexercise\b')
    assert any(solution.search(html) for html in full.values())
    assert sum(len(exercise.findall(h)) for h in student.values()) == \
        sum(len(exercise.findall(h)) for h in full.values()) > 0
    leaked = [page for page, html in student.items() if solution.search(html)]
    assert not leaked, f"solutions in the student edition: {leaked}"


def test_no_solution_text_reaches_the_student_edition():
    sentences = _solution_sentences()
    assert len(sentences) >= 10, sentences
    full = " ".join(_pages(FULL).values())
    student = " ".join(_pages(STUDENT).values())
    in_full = [s for s in sentences if s in full]
    assert len(in_full) >= len(sentences) // 2, "the probe sentences should be in the full book"
    leaked = [s for s in in_full if s in student]
    assert not leaked, f"solution text in the student edition: {leaked}"


def test_the_student_edition_carries_no_source():
    """The notebooks and the source archive hold the solutions: the student edition links and
    ships neither (the full edition ships both)."""
    _pages(STUDENT)
    assert (FULL / "_downloads" / "private-kmeans-reproduced-source.tar.gz").is_file()
    assert not list(STUDENT.rglob("*.tar.gz"))
    assert not list((STUDENT / "_sources").rglob("*.ipynb"))
    pages = " ".join(_pages(STUDENT).values())
    assert "_downloads/private-kmeans-reproduced-source" not in pages
    assert "_sources/notebooks/" not in pages


def test_the_full_edition_links_the_pdf_and_the_student_edition_does_not():
    """Every chapter of the full edition links the whole book as one PDF (``make pdf``), which
    holds the solutions: the student edition links it nowhere."""
    full, student = _pages(FULL), _pages(STUDENT)
    chapters = [page for page in full if page.startswith("notebooks/")]
    assert chapters
    unlinked = [page for page in chapters if "_downloads/private-kmeans-reproduced.pdf" not in
                full[page]]
    assert not unlinked, f"chapters that do not link the PDF: {unlinked}"
    assert "_downloads/private-kmeans-reproduced.pdf" in full["book/how_to_use.html"]
    leaked = [page for page, html in student.items()
              if "private-kmeans-reproduced.pdf" in html]
    assert not leaked, f"the student edition links the PDF: {leaked}"
