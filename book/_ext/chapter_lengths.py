"""How long each chapter is, measured from its notebook when the book is built: the table of
the "How to use" page's Teaching section (the ``{chapter-lengths}`` directive).

For each numbered chapter (a notebook ``notebooks/NN_*.ipynb`` of the table of contents), it
counts the words of its text (markdown cells, without code blocks, directives' options, TeX
commands or link targets), the code cells a reader sees (cells without a ``remove-*`` or
``hide-*`` tag: folded code is not counted) and the lines of code shown (those cells' and the
library code its text includes), and its figures; and it
estimates a reading time: the words at :data:`WORDS_PER_MINUTE` (myst's own reading speed)
plus the visible code lines at :data:`CODE_LINES_PER_MINUTE`. A last column lists the
chapter's longest sections (its ``##`` headings), the candidates for assigned reading when a
chapter is taught in one :data:`SESSION_MINUTES` class.

    python book/_ext/chapter_lengths.py      # the table as text, from the repository
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
#: myst's reading speed (``words_per_minute``), for prose.
WORDS_PER_MINUTE = 200
#: Reading code closely enough to follow it: lines a minute (an assumption of this table).
CODE_LINES_PER_MINUTE = 10
#: One class session, in minutes.
SESSION_MINUTES = 75
#: The share of a session a chapter's reading may take for the session to cover it: the rest
#: is for running the checks live, the exercises and questions (an assumption of this table).
READING_SHARE = 0.5
#: Tags whose code a reader does not see unfolded.
UNSHOWN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
CHAPTER = re.compile(r"^notebooks/(\d\d)_[a-z0-9_]+\.ipynb$")


@dataclass
class Length:
    """One chapter's measurements.

    Attributes
    ----------
    number : int
        The chapter's number.
    title : str
        Its title (its first ``#`` heading).
    words : int
        Words of its text.
    code_cells, code_lines : int
        Code cells a reader sees unfolded, and the lines of code shown: those cells' and
        the library code the text includes (``literalinclude``).
    figures : int
        Pictures among its outputs.
    sections : dict
        Words (plus code lines' equivalent) of each ``##`` section, in reading minutes.
    """

    number: int
    title: str
    words: int = 0
    code_cells: int = 0
    code_lines: int = 0
    figures: int = 0
    sections: dict[str, float] = field(default_factory=dict)

    @property
    def minutes(self) -> float:
        """The estimated reading time, in minutes."""
        return self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE

    @property
    def sessions(self) -> int:
        """Class sessions it needs: one per :data:`READING_SHARE` of a session its reading
        takes (at least one)."""
        return max(1, math.ceil(self.minutes / (SESSION_MINUTES * READING_SHARE)))


_FENCE = re.compile(r"^(```|:::).*?^\1\s*$", re.M | re.S)
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"\]\([^)]*\)|\{[a-z:-]+\}`([^`<]*)(?:<[^>]*>)?`")


def words(markdown: str) -> int:
    """The words a reader reads in a markdown cell: code blocks and directives' bodies of
    code are dropped, a formula counts as one word, a link or role counts as its text."""
    text = _FENCE.sub(lambda m: m.group(0) if m.group(1) == ":::" else " ", markdown)
    text = re.sub(r"^\s*:[a-z-]+:.*$", " ", text, flags=re.M)  # directive options
    text = re.sub(r"^(```|:::)\{?[a-z-]*\}?.*$", " ", text, flags=re.M)
    text = _MATH.sub(" formula ", text)
    text = _LINK.sub(lambda m: " " + (m.group(1) or "") + " ", text)
    return len(re.findall(r"[A-Za-z0-9][\w'’.,;:-]*", text))


_INCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)\s*\n((?:\s*:[a-z-]+:.*\n)*)", re.M)


#: The options that choose which lines a ``literalinclude`` shows.
_READER_OPTIONS = {"pyobject", "lines", "start-after", "end-before", "start-at", "end-at",
                   "lineno-match"}


class _Config:
    source_encoding = "utf-8"


def included_lines(markdown: str, folder: Path) -> int:
    """Lines of library code a markdown cell shows (``literalinclude``, read as Sphinx reads
    it: ``pyobject``, ``lines`` and the other options applied)."""
    from sphinx.directives.code import LiteralIncludeReader

    total = 0
    for match in _INCLUDE.finditer(markdown):
        options = dict(re.findall(r":([a-z-]+):\s*(.*)", match.group(2)))
        options = {k: (int(v) if v.strip().isdigit() else v.strip() or True)
                   for k, v in options.items() if k in _READER_OPTIONS}
        text, _ = LiteralIncludeReader(str(folder / match.group(1)), options,
                                       _Config()).read()
        total += len([line for line in text.splitlines() if line.strip()])
    return total


def measure(path: Path, number: int, pages: tuple[Path, ...] = ()) -> Length:
    """A chapter's :class:`Length`, from its ``.ipynb`` and those of the pages the table of
    contents lists under it (``pages``; each page's text before its first ``##`` heading
    counts as a section named by its title)."""
    length = Length(number, "")
    for page in (path, *pages):
        _add_page(length, json.loads(page.read_text(encoding="utf-8")), page.parent)
    return length


def _add_page(length: Length, notebook: dict, folder: Path) -> None:
    """Add one notebook page's words, code and figures to ``length``."""
    section = ""
    for cell in notebook["cells"]:
        source = "".join(cell.get("source", ""))
        if cell["cell_type"] == "markdown":
            for line in source.splitlines():
                heading = re.match(r"^(#{1,2})\s+(.*)", line)
                if heading and heading.group(1) == "#" and not length.title:
                    length.title = heading.group(2).strip()
                elif heading and heading.group(1) == "#":
                    section = heading.group(2).strip()
                elif heading and heading.group(1) == "##":
                    section = heading.group(2).strip()
            count, included = words(source), included_lines(source, folder)
            length.words += count
            length.code_lines += included
            length.sections[section] = length.sections.get(section, 0.0) + (
                count / WORDS_PER_MINUTE + included / CODE_LINES_PER_MINUTE)
            continue
        if cell["cell_type"] != "code":
            continue
        length.figures += sum("image/png" in o.get("data", {}) or "image/svg+xml"
                              in o.get("data", {}) for o in cell.get("outputs", []))
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & UNSHOWN or not source.strip():
            continue
        lines = len([line for line in source.splitlines() if line.strip()])
        length.code_cells += 1
        length.code_lines += lines
        length.sections[section] = length.sections.get(section, 0.0) + (
            lines / CODE_LINES_PER_MINUTE)


def chapters(root: Path = ROOT) -> list[Length]:
    """Every numbered chapter of ``_toc.yml``, measured with the pages listed under it."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found = []
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            match = CHAPTER.match(chapter["file"] + ".ipynb")
            if part.get("numbered") and match:
                pages = tuple(root / (page["file"] + ".ipynb")
                              for page in chapter.get("sections", []))
                found.append(measure(root / (chapter["file"] + ".ipynb"), len(found) + 1,
                                     pages))
    return found


def longest(length: Length, count: int = 3) -> list[tuple[str, float]]:
    """The chapter's ``count`` longest sections and their reading minutes."""
    ranked = sorted(((name, minutes) for name, minutes in length.sections.items() if name),
                    key=lambda item: -item[1])
    return ranked[:count]


HEADER = ("Chapter", "Words", "Code cells shown (code lines shown)", "Figures",
          "Reading time (min)", f"{SESSION_MINUTES}-min sessions", "Longest sections (min)")


def rows(found: list[Length]) -> list[list[str]]:
    """The table's rows, as text."""
    return [[f"{c.number}. {c.title}", f"{c.words:,}", f"{c.code_cells} ({c.code_lines})",
             str(c.figures), f"{c.minutes:.0f}", str(c.sessions),
             "; ".join(f"{name} ({minutes:.0f})" for name, minutes in longest(c))]
            for c in found]


def summary(found: list[Length]) -> str:
    """The table's rule, and which chapters need more than one session."""
    over = [str(c.number) for c in found if c.sessions > 1]
    return (f"Reading time: words at {WORDS_PER_MINUTE} a minute plus code lines shown at "
            f"{CODE_LINES_PER_MINUTE} a minute. A chapter fits one {SESSION_MINUTES}-minute "
            f"session when reading it takes at most {READING_SHARE:.0%} of the session; "
            f"chapters that need more: {', '.join(over) or 'none'}.")


def _inline(text: str) -> list[nodes.Node]:
    """Text with its ``$...$`` formulas as math (a section title may hold one)."""
    parts = re.split(r"\$([^$]+)\$", text)
    return [nodes.math(part, part) if i % 2 else nodes.Text(part)
            for i, part in enumerate(parts) if part]


def _row(cells: list[str]) -> nodes.row:
    row = nodes.row()
    for text in cells:
        row += nodes.entry("", nodes.paragraph("", "", *_inline(text)))
    return row


class ChapterLengths(SphinxDirective):
    """``{chapter-lengths}``: the table of every chapter's length, measured at build time."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir)
        found = chapters(root)
        table = nodes.table(classes=["chapter-lengths", "reading-table"])
        group = nodes.tgroup(cols=len(HEADER))
        table += group
        group += [nodes.colspec(colwidth=1) for _ in HEADER]
        head, body = nodes.thead(), nodes.tbody()
        head += _row(list(HEADER))
        for cells in rows(found):
            body += _row(cells)
        group += [head, body]
        return [table, nodes.paragraph(text=summary(found))]


def always_outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """The page with the table is read again in every build (the notebooks may change)."""
    sources = ((doc, Path(env.doc2path(doc))) for doc in env.found_docs)
    return [doc for doc, path in sources
            if path.suffix == ".md" and "{chapter-lengths}" in path.read_text(encoding="utf-8")]


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("chapter-lengths", ChapterLengths)
    app.connect("env-get-outdated", always_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> int:
    found = chapters()
    print(" | ".join(HEADER))
    for cells in rows(found):
        print(" | ".join(cells))
    print(summary(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
