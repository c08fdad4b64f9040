"""How a printed book's pages are filled, measured with poppler's tools as a reader's printer
gets them: blank pages, figures cut from their captions, pages left mostly empty.

    python book/_ext/pdf_layout.py _build/pdf/private-kmeans-reproduced.pdf \
        _build/singlehtml/print.html

``print_pdf`` prints this report after printing the book; ``tests/book/test_pdf.py`` checks
it. A page's fill is the share of the text area (the page less ``print.css``'s margins, the
footer excluded) from its top down to its lowest ink, read from a low-resolution rendering
(``pdftoppm``), so that pictures count like text.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: A4 and the margins of ``print.css``'s ``@page``, in millimetres: (top, bottom).
PAGE_HEIGHT_MM = 297.0
MARGINS_MM = (16.0, 18.0)
#: A page that is not the last of a chapter and is filled less than this is "sparse".
SPARSE = 0.55
#: A figure's caption in the printed HTML page: its number and its text.
CAPTION = re.compile(r'<span class="caption-number">(Fig\. [\d.]+)\s*</span>'
                     r'\s*<span class="caption-text">(.*?)</span>', re.S)


def captions(page_html: str) -> set[str]:
    """The start of every figure caption of the page that was printed (its number and first
    words, flattened and lower-cased as :func:`_flat` does), to tell a caption from a sentence
    of the text that starts with a figure's number."""
    return {_flat(number + " " + re.sub(r"<[^>]+>", "", text))[:20]
            for number, text in CAPTION.findall(page_html)}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise RuntimeError(f"{name} is needed (Debian's poppler-utils; make pdf installs it)")
    return path


def page_texts(pdf: Path) -> list[str]:
    """The text of every page (pdftotext), the footer included."""
    out = subprocess.run([_tool("pdftotext"), "-enc", "UTF-8", str(pdf), "-"],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    pages = out.split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


def page_inks(pdf: Path, dpi: int = 20) -> list[tuple[float, float] | None]:
    """Each page's ink: the top and bottom of its inked part, as shares of its text area
    from the top (None when blank)."""
    from PIL import Image

    inks: list[tuple[float, float] | None] = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([_tool("pdftoppm"), "-r", str(dpi), "-gray", str(pdf),
                        str(Path(tmp) / "p")], check=True, timeout=1200)
        for image_path in sorted(Path(tmp).glob("p-*.pgm"),
                                 key=lambda p: int(p.stem.rsplit("-", 1)[1])):
            image = Image.open(image_path)
            scale = image.height / PAGE_HEIGHT_MM
            top = int(MARGINS_MM[0] * scale)
            bottom = int((PAGE_HEIGHT_MM - MARGINS_MM[1]) * scale)
            area = image.crop((0, top, image.width, bottom)).point(lambda v: 255 if v < 200
                                                                    else 0)
            box = area.getbbox()
            inks.append(None if box is None else (box[1] / (bottom - top),
                                                  box[3] / (bottom - top)))
    return inks


def _caption_top(pdf: Path, page: int) -> float:
    """Where the first word of a page (from 1) starts, as a share of its text area."""
    out = subprocess.run([_tool("pdftotext"), "-bbox", "-f", str(page), "-l", str(page),
                          str(pdf), "-"], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    page_box = re.search(r'<page width="[\d.]+" height="([\d.]+)"', out)
    word = re.search(r'<word xMin="[\d.]+" yMin="([\d.]+)"', out)
    if not (page_box and word):
        return 1.0
    height = float(page_box.group(1))
    top, bottom = (m / PAGE_HEIGHT_MM * height for m in (MARGINS_MM[0],
                                                         PAGE_HEIGHT_MM - MARGINS_MM[1]))
    return (float(word.group(1)) - top) / (bottom - top)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class Layout:
    """What :func:`measure` found (page numbers count from 1).

    Attributes
    ----------
    pages : int
        The number of pages.
    blank : list of int
        Pages without ink in their text area.
    split_figures : list of int
        Pages that start with a figure's caption, nothing above it (its picture is on the page
        before).
    sparse : list of int
        Pages filled less than :data:`SPARSE` that are neither the last page of a chapter (the
        next page starts one) nor the book's last page.
    """

    pages: int
    blank: list[int]
    split_figures: list[int]
    sparse: list[int]

    def summary(self) -> str:
        """One line: the counts and the pages."""
        return (f"{self.pages} pages; blank: {len(self.blank)} {self.blank}; figures cut from "
                f"their captions: {len(self.split_figures)} {self.split_figures}; pages less "
                f"than {SPARSE:.0%} full within a chapter: {len(self.sparse)} {self.sparse}")


def measure(pdf: Path, chapter_starts: set[int], figure_captions: set[str],
            body: int = 1) -> Layout:
    """Blank pages, figures cut from their captions, sparse pages of the PDF.

    Parameters
    ----------
    pdf : Path
        The printed book.
    chapter_starts : set of int
        The pages (from 1) on which a chapter, or a part's title, starts.
    figure_captions : set of str
        The figures' captions (:func:`captions`).
    body : int
        The first page of the text (after the title page and the contents): sparse pages are
        counted from there.
    """
    texts, inks = page_texts(pdf), page_inks(pdf)
    count = len(inks)
    blank = [i + 1 for i, ink in enumerate(inks) if ink is None]
    split = [i + 1 for i, (text, ink) in enumerate(zip(texts, inks))
             if ink is not None and _flat(text)[:20] in figure_captions
             and _caption_top(pdf, i + 1) - ink[0] < 0.02]
    sparse = [i + 1 for i, ink in enumerate(inks)
              if ink is not None and ink[1] < SPARSE and body <= i + 1 < count
              and i + 2 not in chapter_starts]
    return Layout(count, blank, split, sparse)


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


def chapter_starts_from_contents(texts: list[str], contents: range) -> set[int]:
    """Pages whose first line is an entry of the contents without a section number (a
    chapter, an unnumbered page or a part), for a PDF printed without page numbers in its
    contents."""
    titles = set()
    for page in contents:
        for line in texts[page].splitlines():
            if line.strip() and not re.match(r"^\s*\d+\.\d+", line):
                titles.add(_flat(line)[:25])
    return {i + 1 for i, text in enumerate(texts)
            if i not in contents and _flat(_first_line(text))[:25] in titles}


#: Lines of the contents that are a heading of the contents itself, not an entry.
_NOT_ENTRIES = re.compile(r"^(?:Contents|Front matter|Reference|Part [IVX]+: .*)$")
#: A numbered chapter's entry (the end of a title that wrapped may come before it).
_CHAPTER = re.compile(r"(?:^| )(\d{1,2}\. \D.*)$")


#: A line that starts a numbered contents entry ("6.", "6.8.10. ").
_ENTRY_START = re.compile(r"\d+(?:\.\d+)*\. ")


def contents(texts: list[str]) -> list[tuple[str, int]]:
    """The printed contents' entries, in order: each title and the page number printed after
    it (pdftotext puts the number on a line of its own after the title's lines; when two
    entries' titles come before their two numbers, as for a section followed by the next
    chapter, the numbers go to the titles in order)."""
    start = next(i for i, text in enumerate(texts) if text.lstrip().startswith("Contents"))
    entries: list[tuple[str, int]] = []
    pending: list[list[str]] = []  # titles still waiting for their numbers, oldest first
    for page in texts[start:]:
        if entries and not re.search(r"^\d+$", page, re.M):
            break  # the first page after the contents
        for line in (line.strip() for line in page.splitlines()):
            if not line or _NOT_ENTRIES.match(line) or re.fullmatch(r".*\d+ / \d+", line):
                continue
            if re.fullmatch(r"\d+", line):
                if pending:
                    entries.append((" ".join(pending.pop(0)), int(line)))
            elif line != "Private k-Means, Reproduced":
                marked = pending and not any(c.isalnum() for c in " ".join(pending[-1]))
                if not pending or (_ENTRY_START.match(line) and not marked):
                    pending.append([line])
                else:  # the title's next line, or the title after a mark such as "∗"
                    pending[-1].append(line)
    return entries


def chapters(texts: list[str]) -> list[tuple[str, int]]:
    """The numbered chapters of the printed contents: each title and its first page."""
    return [(m.group(1), page) for title, page in contents(texts)
            if (m := _CHAPTER.search(title))]


def _squeeze(text: str) -> str:
    """Text to compare a title by: pdftotext drops some hyphens of a heading (the places
    Chromium could break it), so no hyphen is compared, nor any space."""
    return re.sub(r"[\s\-\u00ad\u2010]", "", text)


def misplaced_chapters(texts: list[str]) -> list[tuple[str, int]]:
    """The numbered chapters whose title is not at the top of the page the printed contents
    give (none, when the contents are right)."""
    return [(title, page) for title, page in chapters(texts)
            if _squeeze(title)[:30] not in _squeeze(texts[page - 1])[:300]]


def chapter_lengths(texts: list[str]) -> list[tuple[str, int]]:
    """Each numbered chapter's title and its number of pages: up to the next entry of the
    contents that is neither one of its sections nor a part of it (the next chapter, or the
    next unnumbered page)."""
    entries = contents(texts)
    lengths = []
    for i, (title, page) in enumerate(entries):
        chapter = _CHAPTER.search(title)
        if not chapter:
            continue
        number = chapter.group(1).split(".")[0]
        later = [p for t, p in entries[i + 1:]
                 if not re.search(rf"(?:^| ){number}\.\d+\. ", t) and p > page]
        end = later[0] if later else len(texts) + 1
        lengths.append((chapter.group(1), end - page))
    return lengths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf", type=Path)
    parser.add_argument("page", type=Path, help="the HTML page it was printed from "
                        "(_build/singlehtml/print.html): the figures' captions")
    parser.add_argument("--contents", default="2-5",
                        help="the contents' pages, FIRST-LAST (from 1; default 2-5)")
    parser.add_argument("--chapters", action="store_true",
                        help="also each chapter's pages, from the contents' page numbers")
    args = parser.parse_args(argv)
    first, last = (int(n) for n in args.contents.split("-"))
    texts = page_texts(args.pdf)
    starts = chapter_starts_from_contents(texts, range(first - 1, last))
    found = captions(args.page.read_text(encoding="utf-8"))
    print(measure(args.pdf, starts, found, body=last + 1).summary())
    if args.chapters:
        for title, pages in chapter_lengths(texts):
            print(f"{pages:4d} pages  {title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
