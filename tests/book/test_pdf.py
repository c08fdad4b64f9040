"""The whole book as one PDF (``make pdf``): read back with poppler's tools, as a reader's
printer would get it.

Run by ``make pdf`` (part of ``make test``, through ``make test-browser``) after the PDF is
printed; not collected by ``make test-unit``, which runs before any book exists.
``$DPKMEANS_BOOK_PDF`` points the tests at another PDF, ``$DPKMEANS_BOOK_SINGLEHTML`` at the
single-page build it was printed from.

* Enough pages (more than 50), a title page, a table of contents with every part and numbered
  chapter, and an outline (the PDF viewer's bookmarks).
* Math typeset: no raw TeX (``\\frac``, ``\\begin{``, ``$$``...) in the text, and the symbols
  MathJax draws (ε, δ) in it.
* Every numbered theorem, definition and figure of the single page, with its number.
* Every figure printed: the PDF holds at least as many pictures as the page has images, and no
  missing-image marker.
* A page with formulas renders (pdftoppm) to a picture that is not blank.
* The contents give every entry's page, and each numbered chapter starts on the page the
  contents give it.
* No blank page, and no figure cut from its caption (``book/_ext/pdf_layout.py`` measures
  both, from a rendering of every page).
* The text is printed at print.css's size: Chromium shrinks every page of a book in which
  something is wider than the page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from pdf_layout import (  # noqa: E402
    captions,
    chapters,
    contents,
    measure,
    misplaced_chapters,
)
from print_pdf import PRINTED_PAGE, PROBE  # noqa: E402

PDF = Path(os.environ.get("DPKMEANS_BOOK_PDF")
           or ROOT / "_build" / "pdf" / "private-kmeans-reproduced.pdf")
SINGLE = Path(os.environ.get("DPKMEANS_BOOK_SINGLEHTML") or ROOT / "_build" / "singlehtml")

#: TeX that MathJax should have typeset: a command it knows, or display dollars.
RAW_TEX = re.compile(
    r"\\(?:frac|begin|end|mathbb|mathcal|mathrm|varepsilon|epsilon|delta|sigma|sum|prod|sqrt|"
    r"leq?|geq?|cdot|ldots|dots|operatorname|text|left|right|hat|tilde|bar|Lap|argmin|"
    r"lVert|rVert|mid|infty)(?![A-Za-z])|\$\$")
#: What a browser prints where an image did not load.
MISSING_IMAGE = re.compile(r"image not found|failed to load|broken image|\[image\]", re.I)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} is needed (poppler-utils; make pdf installs it)")
    return path


def _run(*args: str) -> str:
    return subprocess.run([_tool(args[0]), *args[1:]], capture_output=True, text=True,
                          check=True, timeout=300).stdout


@lru_cache(maxsize=None)
def _pdf() -> Path:
    if not PDF.is_file():
        pytest.fail(f"no PDF at {PDF}: run make pdf")
    return PDF


@lru_cache(maxsize=None)
def _pages() -> list[str]:
    """The text of every page (pdftotext separates pages with a form feed)."""
    return _run("pdftotext", "-enc", "UTF-8", str(_pdf()), "-").split("\f")


@lru_cache(maxsize=None)
def _single_page() -> str:
    page = SINGLE / PRINTED_PAGE
    if not page.is_file():
        pytest.fail(f"no single-page build at {page}: run make pdf")
    return page.read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_enough_pages_a_title_a_table_of_contents_and_an_outline():
    info = _run("pdfinfo", str(_pdf()))
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    assert pages > 50, f"only {pages} pages"
    assert "Private k-Means, Reproduced" in _flat(_pages()[0])
    front = _flat(" ".join(_pages()[:8]))
    assert "Contents" in front
    for part in ("Part I: Foundations", "Part IV: The papers, reproduced", "Reference"):
        assert part in front, f"the table of contents lacks {part!r}"
    numbers = set(re.findall(r"(?<![\d.])(\d{1,2})\. (?=\S)", front))
    assert {str(n) for n in range(1, 13)} <= numbers, f"chapters in the contents: {numbers}"
    assert b"/Outlines" in _pdf().read_bytes(), "the PDF has no outline (bookmarks)"


def test_no_raw_tex_and_the_math_is_typeset():
    text = "\n".join(_pages())
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(text)})
    assert not raw, f"raw TeX in the PDF's text: {raw}"
    assert text.count("ε") > 100 and "δ" in text, "the typeset math is missing"


def test_every_numbered_box_and_figure_keeps_its_number():
    numbered = set(re.findall(
        r'<span class="caption-number">((?:Theorem|Definition|Lemma|Fig\.) \d+(?:\.\d+)*)',
        _single_page()))
    assert {"Theorem 1.1", "Definition 1.1", "Fig. 1.1"} <= numbered, sorted(numbered)[:20]
    text = _flat("\n".join(_pages()))
    missing = sorted(n for n in numbered if not re.search(re.escape(n) + r"(?!\d)", text))
    assert not missing, f"numbered in the book but not in the PDF: {missing}"


def test_every_figure_is_printed():
    shown = len(re.findall(r'<img[^>]+src="_images/', _single_page()))
    listed = _run("pdfimages", "-list", str(_pdf())).splitlines()[2:]
    pictures = [line for line in listed if line.split()[2:3] == ["image"]]
    assert shown >= 20, f"only {shown} images in the single page"
    assert len(pictures) >= shown, f"{len(pictures)} pictures in the PDF, {shown} in the book"
    marker = MISSING_IMAGE.search("\n".join(_pages()))
    assert not marker, f"a missing image: {marker.group(0)!r}"


def test_a_page_with_formulas_renders(tmp_path: Path):
    from PIL import Image

    pages = _pages()
    # the first page after the table of contents that states a numbered theorem
    number = next(i for i, text in enumerate(pages) if i > 5 and "Theorem 1.1" in text) + 1
    stem = tmp_path / "page"
    _run("pdftoppm", "-f", str(number), "-l", str(number), "-r", "60", "-png", "-singlefile",
         str(_pdf()), str(stem))
    image = Image.open(f"{stem}.png").convert("L")
    width, height = image.size
    assert width > 400 and height > 600
    ink = sum(image.histogram()[:128]) / (width * height)
    assert ink > 0.01, f"page {number} is nearly blank ({ink:.2%} ink)"
    assert "ε" in pages[number - 1]


def _contents() -> list[tuple[str, int]]:
    return contents(_pages())


def _chapters() -> list[tuple[str, int]]:
    return chapters(_pages())


def test_the_contents_give_the_page_each_chapter_starts_on():
    entries, pages = _contents(), _pages()
    assert {int(t.split(".")[0]) for t, _ in _chapters()} >= set(range(1, 13)), _chapters()
    assert [p for _, p in entries] == sorted(p for _, p in entries), "pages out of order"
    wrong = misplaced_chapters(pages)
    assert not wrong, f"chapters not on the page the contents give: {wrong}"
    assert not PROBE.search("\n".join(pages)), "a page probe of the first printing was left"


def test_no_blank_page_and_no_figure_cut_from_its_caption():
    starts = {page for _, page in _chapters()}
    layout = measure(_pdf(), starts, captions(_single_page()), body=min(starts))
    assert not layout.blank, f"blank pages: {layout.blank}"
    assert not layout.split_figures, f"figures cut from their captions: {layout.split_figures}"


def test_the_text_is_printed_at_its_size_not_shrunk_to_fit_something_wide():
    """The words' median height (pdftotext's boxes, in points: the font's ascent to descent,
    1.16 em in the printed text's DejaVu Sans) is that of the text's size in print.css (the
    root's px, at 0.75 pt a px): Chromium shrinks the whole book when one element is wider
    than the page (print_pdf.py's FIT sets tables and formulas smaller so that none is)."""
    css = (ROOT / "book" / "_ext" / "print.css").read_text(encoding="utf-8")
    size = float(re.search(r"html \{\s*font-size: ([\d.]+)px", css).group(1)) * 0.75
    boxes = _run("pdftotext", "-bbox", str(_pdf()), "-")
    heights = sorted(float(y1) - float(y0) for y0, y1 in re.findall(
        r'<word xMin="[^"]+" yMin="([^"]+)" xMax="[^"]+" yMax="([^"]+)">', boxes))
    median = heights[len(heights) // 2]
    assert 1.08 * size < median < 1.25 * size, \
        f"words {median:.1f} pt high for text of {size:.1f} pt: the pages were scaled"


def test_the_status_page_lists_every_chapter_in_the_pdf_too():
    """The Execution status page, printed near the end, has a dated row for every chapter
    (a build from stored outputs executes nothing, and myst-nb's own table was empty)."""
    text = "\n".join(_pages())
    status = text[text.rindex("Execution status"):]
    dates = re.findall(r"\b20\d\d-\d\d-\d\d\b", status)
    assert len(dates) >= len(_chapters()), f"{len(dates)} dated rows on the status page"
