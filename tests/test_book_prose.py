"""Lints of the book's prose: it states what is true, in the reader's terms, and its TeX keeps
its backslashes.

* **No project history.** The prose of every page (the markdown cells of the notebooks, the
  pages in ``book/`` and the README) says what the library does and what the results are, not
  what changed in the project ("until an independent review found it", "the book's earlier
  leaderboard", "now measure", "targets met"), and it names no library constant (a
  backticked ``ALL_CAPS`` name such as ``MC_DELTA``) where the reader needs a value or a
  concept. History belongs in ``CHANGELOG.md``. The text the notebooks generate (their stored
  markdown and glued text outputs) is read the same way.
* **No TeX that lost its backslash.** A TeX command written inside a Python string that is not
  raw loses its backslash to an escape: ``"\\varepsilon"`` becomes a vertical tab and
  ``arepsilon``, ``"\\frac"`` a form feed and ``rac``, ``"\\theta"`` a tab and ``heta``. The
  lint finds such string literals in the notebooks and the library, control characters in the
  sources and the stored outputs, and, inside math, command names without their backslash
  (``varepsilon``, ``frac``, ``times``...) or their escaped remains (``arepsilon``,
  ``rac``...). :func:`built_page_hits` applies the same reading to a built HTML book.

Every check is a function returning :class:`Hit` (file, line, phrase), so that a report lists
every place at once; the tests below apply them and test them on the failures they exist for.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The notebooks the book shows (chapters, the datasets page, the exercise pages).
NOTEBOOK_SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")) + sorted(
    (ROOT / "notebooks" / "exercises").glob("*.py"))
#: The markdown pages: the book's front matter and the README.
MARKDOWN_SOURCES = sorted((ROOT / "book").glob("*.md")) + [ROOT / "README.md"]
PROSE_SOURCES = NOTEBOOK_SOURCES + MARKDOWN_SOURCES
#: The library, whose docstrings and strings the book shows (literalinclude) or prints.
LIBRARY_SOURCES = sorted((ROOT / "src" / "dpkmeans").rglob("*.py"))
#: The book's Sphinx extensions, which write text into the pages.
EXTENSION_SOURCES = sorted((ROOT / "book" / "_ext").glob("*.py"))


@dataclass(frozen=True)
class Hit:
    """One finding of a lint: where it is and what was found."""

    where: str
    line: int
    phrase: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.phrase!r}"


def _name(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------------------------
# Reading the prose of a page
# --------------------------------------------------------------------------------------------

#: A fence that holds code, not prose: ```python, ```bash, ```{code-cell}, ```{literalinclude}...
_CODE_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\{(code-cell|code-block|code|literalinclude|"
                         r"glue:figure|figure|image|bibliography)\}|[A-Za-z])")
_ANY_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def notebook_markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """The markdown lines of a jupytext percent-format notebook, as (line number, text): the
    lines of every ``# %% [markdown]`` cell without their leading ``# ``."""
    in_markdown = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            in_markdown = line.startswith("# %% [markdown]") or line.startswith("# %% [md]")
            continue
        if in_markdown and (line == "#" or line.startswith("# ")):
            yield number, line[2:]


def prose_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines outside code fences (a fence opening a directive such as ``{prf:theorem}``
    or ``{admonition}`` holds prose and is read)."""
    fence: str | None = None
    for number, line in lines:
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        opening = _CODE_FENCE.match(line)
        if opening:
            fence = opening.group(1)
            continue
        if not _ANY_FENCE.match(line):
            yield number, line


def page_prose(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """The prose lines of a page: a notebook's markdown cells, or a markdown file, without
    its code fences. ``text`` replaces the file's content (a version from git, a test)."""
    text = path.read_text() if text is None else text
    if path.suffix == ".py":
        return list(prose_lines(notebook_markdown_lines(text)))
    return list(prose_lines(enumerate(text.splitlines(), start=1)))


# --------------------------------------------------------------------------------------------
# History
# --------------------------------------------------------------------------------------------

#: Phrases that tell the project's history instead of what is true. Each is precise enough
#: that the book's legitimate prose never matches: "now" as a transition ("now compare"),
#: "earlier releases" (adaptive composition) and "no longer bounded" (mathematics) pass.
HISTORY_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.I) for p in (
    r"\buntil (an?|the|its) (independent |external |outside )?(review|audit|reader|report)\w* "
    r"(found|showed|caught|noticed)",
    r"\buntil (its|the) [\w -]{1,40} became the default",
    r"\bthe book's (earlier|previous|former|old)\b",
    r"\b(earlier|previous|former|older) (leaderboard|version|edition|draft) of\b",
    r"\ban (earlier|older|previous|old) (version|edition|release|draft)\b",
    r"\bthe (earlier|previous|old|former) (leaderboard|version|code|library|rule|table|bias|"
    r"result|sampler|implementation|edition)s?\b",
    r"\b(now|no longer) (measures?|runs?|records?|uses?|reads?|draws?|refuses?|passes?|"
    r"gives?|spends?|stores?|computes?|checks?|has|have) (a |an |the |each |every |its |their "
    r"|no |it |them )",
    r"\bthe (book|library|code) (can|could) now\b",
    r"\b(was|were|has been|have been) (changed|rewritten|replaced|removed|renamed)\b",
    r"\bpreviously\b",
    r"\bformerly\b",
    r"\b(it|this library|the library|the book|the code|we) used to\b",
    r"\btargets? (were |was )?(met|missed)\b",
    r"\b(met|missed) (every|the|its|all|some) targets?\b",
    # a performance target of the project ("the target of 5 minutes was met"), glued or typed;
    # an audit's target ("a bound of at least 0.9 of the claim") is the reader's and passes
    r"\btarget of (at most |at least )?(\{glue:text\}|\d)",
    r"\(targets?:",
    r"\b(was|were|targets?[^.]{0,80}\() ?\**\{glue:text\}`\w*_(met|missed)`",
    r"\b(after|before) the (fix|correction|review|rewrite|change)\b",
    r"\bthe code (from )?before (these|this|the)\b",
    r"\bmoved when the\b",
    r"\bwhen (this|the) (chapter|page|book|section) was (written|first)\b",
    r"\bthe old (bias|code|rule|sampler|leaderboard|version)\b",
    r"\b(earlier|later) the same day\b",
))

#: A backticked ALL_CAPS name (a library or notebook constant): the prose gives its value or
#: its meaning instead.
_CONSTANT = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,}[0-9]*)`")
#: An ALL_CAPS name in a string literal: an environment variable the library reads, a file it
#: writes, or a public name it exports (``__all__``), all of which a reader may type.
_QUOTED_NAME = re.compile(r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)["']""")


def _reader_names() -> frozenset[str]:
    """The ALL_CAPS names a reader legitimately types: those the library, the book's
    extensions and the Makefile quote (environment variables, file names, public exports),
    and the repository's top files (``LICENSE``)."""
    names: set[str] = {p.name for p in ROOT.iterdir()}
    sources = LIBRARY_SOURCES + EXTENSION_SOURCES + [ROOT / "Makefile"]
    for path in sources:
        names.update(_QUOTED_NAME.findall(path.read_text(errors="replace")))
    return frozenset(names)


def history_hits(where: str, lines: Iterable[tuple[int, str]],
                 reader_names: frozenset[str] = frozenset()) -> list[Hit]:
    """The project-history phrases and the backticked constants in ``lines``.

    Parameters
    ----------
    where
        The file the lines come from, for the report.
    lines
        ``(line number, text)`` pairs, as :func:`page_prose` gives them.
    reader_names
        ALL_CAPS names that are not constants (environment variables, file names).
    """
    hits: list[Hit] = []
    lines = list(lines)
    # A phrase may wrap: each line is read with the start of the next one.
    for index, (number, line) in enumerate(lines):
        following = lines[index + 1][1] if index + 1 < len(lines) else ""
        joined = f"{line} {following}"
        for pattern in HISTORY_PATTERNS:
            for match in pattern.finditer(joined):
                hit = Hit(where, number, match.group(0))
                if match.start() < len(line) and hit not in hits:
                    hits.append(hit)
        for match in _CONSTANT.finditer(line):
            if match.group(1) not in reader_names:
                hits.append(Hit(where, number, match.group(0)))
    return hits


# --------------------------------------------------------------------------------------------
# TeX that lost its backslash
# --------------------------------------------------------------------------------------------

#: TeX command names that are never meant as bare letters inside math.
MATH_WORDS = (
    "varepsilon epsilon frac dfrac tfrac text times theta vartheta sigma Sigma lambda Lambda "
    "Delta delta mathbb mathcal mathrm mathbf sqrt sum prod cdot cdots ldots dots ln log exp "
    "alpha beta gamma Gamma mu rho tau phi varphi psi Psi omega Omega infty leq geq neq approx "
    "sim lVert rVert lvert rvert langle rangle tilde widehat overline operatorname mathsf "
    "partial nabla forall exists cdot le ge argmin argmax quad qquad lfloor rfloor lceil "
    "rceil binom left right").split()
#: What remains of a command whose first letter went into an escape (\v, \f, \t, \b, \a,
#: \n, \r): "\varepsilon" -> "arepsilon", "\frac" -> "rac", "\theta" -> "heta"...
ESCAPED_REMAINS = (
    "arepsilon arphi artheta arrho rac orall heta imes ext extbf extrm extit ilde riangle "
    "ightarrow ight ho abla eq lpha pprox inom igl igr oldsymbol ewline otin mid au").split()
#: Remains that can be read outside math too: no English word, no identifier of the book.
STRONG_REMAINS = ("arepsilon", "arphi", "artheta", "heta", "imes", "ightarrow", "lpha",
                  "pprox", "abla", "orall")
_STRONG = re.compile(r"(?<![\\A-Za-z])(" + "|".join(STRONG_REMAINS) + r"|rac(?=\{)|ext(?=\{)"
                     r"|ilde(?=\{))(?![A-Za-z])")
_BARE = re.compile(r"(?<![\\A-Za-z])(" + "|".join(sorted(set(MATH_WORDS + ESCAPED_REMAINS),
                                                         key=len, reverse=True))
                   + r")(?![A-Za-z])")
#: Commands whose argument is text, not math: their content is not read.
_TEXT_ARGUMENT = re.compile(r"\\(?:text\w*|mathrm|mathsf|mathtt|mathit|operatorname\*?|mbox|"
                            r"label|tag|ref|eqref|href|url)\s*\{[^{}]*\}")
#: Control characters that no page means: every one below 32 but newline, and DEL.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
#: Math in markdown: display $$...$$, inline $...$ (not across a blank line), {math} blocks.
_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?!\$)(?P<inline>(?:(?!\n\s*\n)"
                   r"[^$])+?)(?<!\\)\$|```\{math\}(?P<block>.+?)```", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def math_hits(where: str, text: str, first_line: int = 1) -> list[Hit]:
    """Command names without their backslash inside the math of ``text`` (markdown), and
    their escaped remains ("arepsilon"); ``first_line`` is the line number of its first line."""
    text = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)
    hits = []
    for span in _MATH.finditer(text):
        body = span.group("display") or span.group("inline") or span.group("block") or ""
        start = span.start("display") if span.group("display") else (
            span.start("inline") if span.group("inline") else span.start("block"))
        body = _TEXT_ARGUMENT.sub(lambda m: " " * len(m.group(0)), body)
        for bare in _BARE.finditer(body):
            line = first_line + text.count("\n", 0, start + bare.start())
            hits.append(Hit(where, line, f"${body.strip()}$ has {bare.group(1)!r}"))
    return hits


def remains_hits(where: str, text: str, first_line: int = 1) -> list[Hit]:
    """Escaped remains that are wrong anywhere (``arepsilon``, ``heta``, ``rac{``) and control
    characters, in any text."""
    hits = []
    for pattern in (_STRONG, _CONTROL):
        for match in pattern.finditer(text):
            line = first_line + text.count("\n", 0, match.start())
            context = text[max(0, match.start() - 20):match.end() + 10]
            hits.append(Hit(where, line, context))
    return hits


def prose_tex_hits(where: str, lines: Iterable[tuple[int, str]]) -> list[Hit]:
    """:func:`math_hits` and :func:`remains_hits` over prose lines, read paragraph by
    paragraph (an inline formula may wrap)."""
    hits: list[Hit] = []
    block: list[tuple[int, str]] = []
    for number, line in list(lines) + [(0, "")]:
        if block and (not line.strip() or number != block[-1][0] + 1):
            text = "\n".join(text for _, text in block)
            hits += math_hits(where, text, block[0][0]) + remains_hits(where, text, block[0][0])
            block = []
        if line.strip():
            block.append((number, line))
    return hits


#: Python escapes that eat the backslash of a TeX command: \a \b \f \n \r \t \v.
_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\([abfnrtv])([A-Za-z]*)")
TEX_COMMANDS = frozenset(MATH_WORDS) | frozenset(
    "varrho bar binom big bigl bigr boldsymbol bmod bot backslash frac forall flat nu neq ne "
    "nabla not notin nmid newline rho right rangle rVert rvert rfloor rceil theta tau text "
    "textbf textrm textit tilde times to top triangle vec varepsilon varphi vartheta vee "
    "alpha approx ast".split())


#: Commands that a newline or a tab followed by a short word also spells ("\\ne" in
#: "...\\ne.g."): read only in a string with math (a ``$``).
_SHORT_COMMANDS = frozenset({"ne", "nu", "not", "to", "top"})


def string_literal_hits(where: str, source: str) -> list[Hit]:
    """Python string literals (not raw) in which an escape ate a TeX command's backslash:
    ``"$\\varepsilon$"`` is a vertical tab and ``arepsilon``, ``"\\theta"`` a tab and
    ``heta``; the shortest commands count only in a string with math."""
    hits = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return [Hit(where, 1, "not tokenizable Python")]
    for token in tokens:
        if token.type != tokenize.STRING:
            continue
        prefix = re.match(r"[A-Za-z]*", token.string).group(0).lower()
        if "r" in prefix or "b" in prefix:
            continue
        for match in _ESCAPE.finditer(token.string):
            letter, rest = match.group(2), match.group(3)
            if letter + rest not in TEX_COMMANDS:
                continue
            if letter + rest in _SHORT_COMMANDS and "$" not in token.string:
                continue
            line = token.start[0] + token.string.count("\n", 0, match.start())
            hits.append(Hit(where, line, token.string[match.start():match.end() + 12]))
    return hits


# --------------------------------------------------------------------------------------------
# Stored outputs and built pages
# --------------------------------------------------------------------------------------------


def _joined(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


#: The prefix of the MIME types under which myst-nb's ``glue`` stores a value.
GLUE_PREFIX = "application/papermill.record/"


def stored_output_texts(notebook: dict) -> Iterator[tuple[str, str, str]]:
    """The text a notebook shows from its stored outputs and cells, as (cell, kind, text):
    markdown cells' sources, stream outputs, and the text/markdown and text/plain of rich
    outputs (glued values among them)."""
    for index, cell in enumerate(notebook.get("cells", [])):
        label = f"cell {index}"
        if cell.get("cell_type") == "markdown":
            yield label, "markdown", _joined(cell.get("source", ""))
        for output in cell.get("outputs", []):
            if "text" in output:
                yield label, "stream", _joined(output["text"])
            for mime, value in output.get("data", {}).items():
                # glued values are stored as application/papermill.record/text/plain...
                kind = mime.removeprefix(GLUE_PREFIX)
                if kind in ("text/markdown", "text/plain", "text/latex"):
                    yield label, kind, _joined(value)


#: A glued verdict on a performance target: "'met'", "'missed'", "'speed: met; memory: met'".
_TARGET_VERDICT = re.compile(r"^'(met|missed)'$|\b\w+: (met|missed)\b")


def stored_output_hits(where: str, notebook_json: str, *, history: bool = True) -> list[Hit]:
    """Control characters and escaped remains in a stored notebook (its cells and outputs),
    the math of its markdown, and (``history``) history phrases in its generated prose:
    glued strings and markdown outputs. The line is the line inside the cell's text."""
    notebook = json.loads(notebook_json)
    hits: list[Hit] = []
    for label, kind, text in stored_output_texts(notebook):
        tag = f"{where} ({label}, {kind})"
        hits += remains_hits(tag, text)
        if kind in ("markdown", "text/markdown"):
            hits += math_hits(tag, text)
        if history and kind in ("text/markdown", "text/plain"):
            lines = list(enumerate(text.splitlines(), start=1))
            hits += history_hits(tag, lines)
            hits += [Hit(tag, 1, text) for _ in _TARGET_VERDICT.finditer(text)][:1]
    return hits


class _PageText(HTMLParser):
    """The visible text of a built page, split into math (MathJax's source) and the rest;
    code, scripts and styles are left out."""

    _SKIP = {"script", "style", "pre", "code", "kbd", "samp"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.math: list[tuple[int, str]] = []
        self.text: list[tuple[int, str]] = []
        self._stack: list[tuple[str, bool, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col"}:
            return
        classes = (dict(attrs).get("class") or "").split()
        skip = tag in self._SKIP or (bool(self._stack) and self._stack[-1][1])
        math = "math" in classes or (bool(self._stack) and self._stack[-1][2])
        self._stack.append((tag, skip, math))

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        skip, math = (self._stack[-1][1], self._stack[-1][2]) if self._stack else (False, False)
        if skip or not data.strip():
            return
        (self.math if math else self.text).append((self.getpos()[0], data))


def built_page_hits(folder: Path) -> list[Hit]:
    """The lost-backslash lint over a built HTML book (``_build/html``): in every page's math
    (MathJax's TeX source), command names without their backslash and escaped remains; in its
    other visible text (code left out), escaped remains and control characters.

    Parameters
    ----------
    folder
        The built book's root, e.g. ``Path("_build/html")``.
    """
    hits: list[Hit] = []
    for page in sorted(Path(folder).rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        parser = _PageText()
        parser.feed(page.read_text(errors="replace"))
        where = _name(page)
        for line, tex in parser.math:
            tex = re.sub(r"^\s*\\[(\[]|\\[)\]]\s*$", "", tex.strip())
            hits += math_hits(where, f"$${tex}$$", line)
        for line, text in parser.text:
            hits += remains_hits(where, text, line)
    return hits


# --------------------------------------------------------------------------------------------
# Chapter numbers typed by hand
# --------------------------------------------------------------------------------------------

#: The pages of the book (the README is read on its own, where a role does not render).
BOOK_PAGES = NOTEBOOK_SOURCES + sorted((ROOT / "book").glob("*.md"))
#: A chapter or section of the book cited by its number: "chapter 6", "Chapters 7 to 11",
#: "section 6.8". A chapter is cited by its label, ``{numref}`chapter %s <ch-auditing>```,
#: and Sphinx writes the number, so that adding a chapter renumbers every citation.
_TYPED_NUMBER = re.compile(r"\b(?:[Cc]hapters?\s+\d+|[Ss]ections?\s+\d+(?:\.\d+)+)\b")
#: A citation of a paper: a ``{cite}`` role or an author-year ("Su et al. (2016)").
_CITATION = r"(?:\{cite(?::\w+)?\}`[^`]*`|\(\d{4}[a-z]?\))"
#: A paper's own section, which the book cannot number: right after a citation
#: ("{cite:t}`su2016differentially`, section 3.3", "Su et al. (2016), section 3.3", "...'s
#: section 2"), or a paper's section or a book's chapter followed by its citation ("section
#: 3.3 of {cite:t}`su2016differentially`", "chapter 3 of {cite:t}`dwork2014algorithmic`").
#: The papers have sections, the book chapters: "({cite:t}`ni_dpkccm`, chapter 7)" is the
#: book's chapter 7 and a hit.
_PAPER_BEFORE = re.compile(_CITATION + r"(?:,|'s)?\s*$")
_PAPER_AFTER = re.compile(r"^\s+(?:of|in)\s+(?:the paper\s+)?" + _CITATION)
#: A role (its text is prose: ``{doc}`chapter 6 <...>``` types a number) or inline code
#: (``--chapter 5``, blanked).
_ROLE_OR_LITERAL = re.compile(r"(\{[\w:.-]+\}`[^`]*`)|``[^`\n]+``|`[^`\n]+`")


def typed_number_hits(where: str, lines: Iterable[tuple[int, str]]) -> list[Hit]:
    """Chapters and sections of the book cited by a hand-typed number in prose ``lines``.

    A hit is "chapter <n>", "chapters <n>" (either case) or "section <n>.<m>" in the prose,
    a role's text included ({doc}`chapter 6 <06_auditing>` types its number too), outside
    inline code and code fences; a paper's own section (right after the paper's citation,
    or followed by "of" and the citation) and a cited book's chapter ("chapter 3 of" and the
    citation) are not.

    Parameters
    ----------
    where
        The file the lines come from, for the report.
    lines
        ``(line number, text)`` pairs, as :func:`page_prose` gives them.
    """
    hits = []
    lines = list(lines)
    # A citation may wrap: each line is read after the end of the previous one.
    for index, (number, line) in enumerate(lines):
        before = lines[index - 1][1] + " " if index else ""
        text = _ROLE_OR_LITERAL.sub(lambda m: m.group(1) or " " * len(m.group(0)),
                                    before + line)
        for match in _TYPED_NUMBER.finditer(text, len(before)):
            paper_section = match.group(0)[0] in "Ss" and _PAPER_BEFORE.search(
                text[:match.start()])
            if paper_section or _PAPER_AFTER.match(text[match.end():]):
                continue
            hits.append(Hit(where, number, match.group(0)))
    return hits


def generated_typed_number_hits(where: str, notebook_json: str) -> list[Hit]:
    """:func:`typed_number_hits` over the text a notebook's code writes into the page: its
    glued values and markdown outputs (a string built in Python types numbers too)."""
    hits = []
    for index, cell in enumerate(json.loads(notebook_json).get("cells", [])):
        for output in cell.get("outputs", []):
            for mime, value in output.get("data", {}).items():
                if mime.startswith(GLUE_PREFIX) or mime == "text/markdown":
                    text = _joined(value)
                    hits += typed_number_hits(f"{where} (cell {index}, {mime})",
                                              enumerate(text.splitlines(), start=1))
    return hits


# --------------------------------------------------------------------------------------------
# Library internals
# --------------------------------------------------------------------------------------------

#: A listing of library code: ```{literalinclude} ../src/dpkmeans/... and its option lines.
_LISTING = re.compile(r"^# ```\{literalinclude\} \.\./(src/\S+\.py)\n((?:# :.*\n)+)", re.M)
#: The engine's plumbing, which no argument of the book needs to show.
PLUMBING = ("HookContext",)
#: A private attribute of an object (its state or bookkeeping): ``self._append``.
_PRIVATE_STATE = re.compile(r"\bself\._\w+")
#: A private library name in the prose: ``dpkmeans.engine.loop._update`` or ``_pack``.
_PRIVATE_NAME = re.compile(r"`((?:dpkmeans\.[\w.]*\.)?_[A-Za-z]\w*)(?:\(\))?`")
#: A table-formatting helper, which belongs in a hidden cell or in the library.
_TABLE_HELPER = re.compile(r"^def \w*table\w*\(", re.M)


def listing_text(source: str, options: dict[str, str]) -> str:
    """The lines a ``literalinclude`` shows (Sphinx's own reader of its options)."""
    from sphinx.config import Config
    from sphinx.directives.code import LiteralIncludeReader

    known = {k: (int(v) if k == "dedent" else v) for k, v in options.items()
             if k in {"pyobject", "lines", "start-at", "start-after", "end-at", "end-before",
                      "dedent"}}
    return LiteralIncludeReader(str(ROOT / source), known, Config({}, {})).read()[0]


def internals_hits(where: str, text: str) -> list[Hit]:
    """Library internals a notebook shows where its argument needs the call a reader writes
    and the mathematics: listings of a private class's methods or of code that works on an
    object's private state (``self._...``), the engine's plumbing (``HookContext``) in a
    listing or in shown code, private library names in the prose, and table-formatting
    helpers defined in shown code cells. Private module-level functions that hold an
    algorithm's mathematics (a calibration, a solver's formulation) may be listed."""
    hits = []
    for match in _LISTING.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        options = dict(re.match(r"# :([\w-]+):\s*(.*)", option).groups()
                       for option in match.group(2).splitlines())
        name = options.get("pyobject", "")
        if any(part.startswith("_") for part in name.split(".")[:-1]):
            hits.append(Hit(where, line, f"a private class's method: {name}"))
        shown = listing_text(match.group(1), options)
        for found in _PRIVATE_STATE.findall(shown) + [p for p in PLUMBING if p in shown]:
            hits.append(Hit(where, line, f"{name or match.group(1)} shows {found}"))
    path = Path(where)
    for number, line in page_prose(path, text):
        hits += [Hit(where, number, m.group(0)) for m in _PRIVATE_NAME.finditer(line)]
    for number, cell in _shown_code_cells(text):
        hits += [Hit(where, number, p) for p in PLUMBING if p in cell]
        hits += [Hit(where, number, m.group(0)) for m in _TABLE_HELPER.finditer(cell)]
    return hits


def _shown_code_cells(text: str) -> Iterator[tuple[int, str]]:
    """The code cells of a percent-format notebook whose source the page shows open, as
    (first line number, source)."""
    cells: list[tuple[int, str, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            cells.append((number, line, []))
        elif cells:
            cells[-1][2].append(line)
    hidden = ("remove-cell", "remove-input", "hide-input", "hide-cell")
    for number, header, lines in cells:
        if "[markdown]" in header or "[md]" in header or any(tag in header for tag in hidden):
            continue
        yield number, "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------

READER_NAMES = _reader_names()


def _report(hits: list[Hit]) -> str:
    return "\n".join(str(hit) for hit in hits)


@pytest.mark.parametrize("source", PROSE_SOURCES, ids=_name)
def test_the_prose_tells_no_project_history(source: Path):
    """No phrase of the project's history and no library constant in a page's prose."""
    hits = history_hits(_name(source), page_prose(source), READER_NAMES)
    assert not hits, "history or a constant in the prose (say what is true):\n" + _report(hits)


@pytest.mark.parametrize("source", PROSE_SOURCES, ids=_name)
def test_the_prose_math_keeps_its_backslashes(source: Path):
    hits = prose_tex_hits(_name(source), page_prose(source))
    assert not hits, "TeX without its backslash:\n" + _report(hits)


@pytest.mark.parametrize("source", NOTEBOOK_SOURCES + LIBRARY_SOURCES + EXTENSION_SOURCES,
                         ids=_name)
def test_no_string_eats_a_tex_backslash(source: Path):
    text = source.read_text()
    hits = string_literal_hits(_name(source), text) + remains_hits(_name(source), text)
    assert not hits, "a TeX command lost its backslash to an escape:\n" + _report(hits)


@pytest.mark.parametrize("source", NOTEBOOK_SOURCES, ids=_name)
def test_stored_outputs_keep_their_backslashes_and_tell_no_history(source: Path):
    """The stored notebook (what the book shows from stored outputs): no control character,
    no escaped TeX remains, no history in the generated text."""
    notebook = source.with_suffix(".ipynb")
    hits = stored_output_hits(_name(notebook), notebook.read_text())
    assert not hits, _report(hits)


@pytest.mark.parametrize("source", NOTEBOOK_SOURCES, ids=_name)
def test_the_chapters_show_no_library_internals(source: Path):
    """What a chapter shows of the library is the call a reader writes and the code of its
    mathematics, not the library's bookkeeping."""
    hits = internals_hits(_name(source), source.read_text())
    assert not hits, "library internals shown:\n" + _report(hits)


# The lints on the failures they exist for (lines of the book as they were).

def test_history_lint_finds_the_known_phrases():
    lines = [
        "diffprivlib does this, and so did this library until an independent review found it.",
        "`dp-kccm` and `di` now measure each record from the midpoint of the box, as the other",
        "algorithms do; the book's earlier leaderboard measured them from the",
        "Targets missed in the committed run: one Lloyd iteration.",
        "tail $\\Pr[|\\mathcal L| > \\varepsilon]$ is `MC_DELTA`; with half-widths",
        "`BOX_HALF_WIDTHS` ({glue:text}`ch9_demo_box`):",
        "Until its exact sampler became the default, the library added exactly that; it",
        "here, and the colored-noise paper's claim against Balcan et al. now has a verdict.",
        "written, with the audit's seed. (When this chapter was written, with twice the trials",
        "much. The code before these changes, with numpy's float noise, took",
        "claim ({doc}`../notebooks/09_colored`), which the book can now test.",
        "five runs (target 1.0x; 0.91x to 1.11x earlier the same day, before the last kernel",
        "the target of at most {glue:text}`ch8_overhead_target` was",
        "targets are each pass at half the disk's speed (**{glue:text}`ch8_ooc_met`**).",
        "took {glue:text}`ch5_bench_lloyd` times scikit-learn's time (target:",
    ]
    hits = history_hits("page", list(enumerate(lines, start=1)))
    assert {hit.line for hit in hits} == set(range(1, len(lines) + 1)), _report(hits)


def test_history_lint_passes_legitimate_prose():
    lines = [
        "Now compare the two releases, each possibly depending on the earlier",
        "ones: the change in $f$ is no longer bounded by $H + 1$. The output is now discrete,",
        "so we compare frequencies. When the partition no longer changes, the loop stops.",
        "A fit may depend on earlier *releases* (adaptive composition).",
        "Set `DPKMEANS_DATA` to the folder of the verified files.",
        "The targets are a bound of at least $0.9$ of the claim for a release and",
        "$0.5$ for a fit; chapter 6 says why a row that misses its target misses it.",
        "{glue:text}`ch6_tight_met` of the {glue:text}`ch6_tight_rows` rows meet their target:",
        "The ledger is charged before any noise is drawn; the rule was fixed in advance.",
    ]
    hits = history_hits("page", list(enumerate(lines, start=1)),
                        frozenset({"DPKMEANS_DATA"}))
    assert not hits, _report(hits)


def test_tex_lint_finds_escaped_and_bare_commands():
    # Chapter 9 as it was: "\v" of "\varepsilon" was eaten and broke the line.
    lines = ["algorithm (`DPKMeans(algorithm=\"balcan\")`, pure $",
             "arepsilon$-DP, presented and proven", "colored release at the same $(",
             "arepsilon, \\delta)$, on Marketing"]
    assert len(prose_tex_hits("ch9", list(enumerate(lines, start=1)))) >= 2
    assert math_hits("p", "the noise $\\sigma = frac{1}{\\varepsilon}$ and $x times y$")
    assert math_hits("p", "$\\Pr[L > \x0barepsilon]$")
    assert remains_hits("p", "loss above \theta")  # a tab and "heta"
    assert not math_hits("p", "$\\text{times}$, $\\operatorname{sum}_j$, $\\log n$, $e^{x}$")
    assert not prose_tex_hits("p", [(1, "costs $5 and $6 in total"), (2, "times were short")])


def test_string_lint_finds_eaten_backslashes():
    source = ('label = "$\\varepsilon$"\ncaption = f"$\\frac{1}{2}$ at \\theta = $1$"\n'
              'doc = """The angle \\theta."""\n'
              'ok = r"$\\varepsilon$" + "$\\\\varepsilon$" + "line\\nusing" + "a\\ne.g."\n')
    hits = string_literal_hits("s", source)
    assert [hit.line for hit in hits] == [1, 2, 2, 3], _report(hits)


def test_stored_output_lint_reads_glued_text():
    notebook = {"cells": [{"cell_type": "code", "source": "", "outputs": [
        {"output_type": "display_data", "data": {
            GLUE_PREFIX + "text/plain": "'Targets missed in the committed run: one Lloyd iteration.'"}},
        {"output_type": "display_data", "data": {"text/markdown": "pure $\x0barepsilon$-DP"}},
        {"output_type": "display_data", "data": {GLUE_PREFIX + "text/plain": "'missed'"}},
        {"output_type": "display_data", "data": {GLUE_PREFIX + "text/plain": "'12 of 14'"}}]}]}
    hits = stored_output_hits("nb", json.dumps(notebook))
    assert len(hits) >= 4 and not any("12 of 14" in hit.phrase for hit in hits), _report(hits)


def test_built_page_lint(tmp_path: Path):
    (tmp_path / "page.html").write_text(
        '<p>pure <span class="math notranslate nohighlight">\\(\x0barepsilon\\)</span>-DP'
        ' and <span class="math">\\(\\sigma = frac{1}{2}\\)</span></p>'
        '<pre>eta = 1  # code is not read</pre><p>fine \\(x\\)</p>')
    hits = built_page_hits(tmp_path)
    assert len(hits) >= 2 and all(hit.where.endswith("page.html") for hit in hits), _report(hits)
    (tmp_path / "page.html").write_text(
        '<p><span class="math">\\(\\varepsilon \\times \\frac{1}{2}\\)</span> times</p>')
    assert not built_page_hits(tmp_path)


def test_internals_lint_finds_what_chapters_3_5_and_8_showed():
    chapter = """# %% [markdown]
# The composition itself:
#
# ```{literalinclude} ../src/dpkmeans/privacy/accounting.py
# :language: python
# :pyobject: _Sequential.refresh
# :dedent: 4
# ```
#
# ```{literalinclude} ../src/dpkmeans/privacy/accounting.py
# :language: python
# :pyobject: PrivacyLedger.charge
# :start-at: eps = check_epsilon(epsilon)
# :dedent: 8
# ```
#
# The noise step (`dpkmeans.engine.loop._noisy_iteration`) and `_pack`.

# %%
def ledger_table(frame, columns, name):
    return table(frame[columns].rename(columns={"epsilon": "ε"}), name=name)

# %% tags=["hide-input"]
def cells_table(frame, name):
    return table(frame, name=name)
"""
    found = [hit.phrase for hit in internals_hits("notebooks/03_x.py", chapter)]
    assert {"a private class's method: _Sequential.refresh",
            "PrivacyLedger.charge shows self._current_sequential",
            "PrivacyLedger.charge shows self._append",
            "`dpkmeans.engine.loop._noisy_iteration`", "`_pack`",
            "def ledger_table("} <= set(found), found
    assert not any("cells_table" in phrase for phrase in found), found


def test_internals_lint_allows_public_listings_and_mathematics():
    chapter = """# %% [markdown]
# ```{literalinclude} ../src/dpkmeans/privacy/accounting.py
# :language: python
# :pyobject: PrivacyCost.then
# :start-at: return
# :dedent: 8
# ```
#
# ```{literalinclude} ../src/dpkmeans/privacy/noise_types.py
# :language: python
# :pyobject: _laplace_grid
# ```
#
# Set `MALLOC_TRIM_THRESHOLD_` in the environment.

# %%
model = DPKMeans(4, epsilon=1.0, bounds=(-1, 1)).fit(X)
"""
    assert not internals_hits("notebooks/03_x.py", chapter)


@pytest.mark.parametrize("source", BOOK_PAGES, ids=_name)
def test_chapters_are_cited_by_label(source: Path):
    """No page types a chapter's or a section's number: it cites the chapter's label with
    ``{numref}`` (the book's toc is numbered), which follows the table of contents."""
    hits = typed_number_hits(_name(source), page_prose(source))
    if source.suffix == ".py":
        notebook = source.with_suffix(".ipynb")
        hits += generated_typed_number_hits(_name(notebook), notebook.read_text())
    assert not hits, ("a chapter cited by a typed number (write {numref}`chapter %s "
                      "<ch-label>`):\n" + _report(hits))


def test_typed_number_lint_finds_typed_numbers_and_passes_papers():
    lines = [
        "{doc}`Chapter 6 <06_auditing>` shows why textbook floating-point Laplace noise leaks",
        "the claim rule of chapter 7; chapters 7 to 11 each reproduce one paper",
        "Chapter 6 ({doc}`06_auditing_algorithms`) audits every mechanism, and section 6.8",
        "({cite:t}`ni_dpkccm`, chapter 7) and the four of the silhouette paper",
        "({doc}`chapter 9",
    ]
    hits = typed_number_hits("page", list(enumerate(lines, start=1)))
    assert [hit.line for hit in hits] == [1, 2, 2, 3, 3, 4, 5], _report(hits)
    passing = [
        "{numref}`Chapter %s <ch-auditing>` shows why, as {numref}`section %s <claims-verdicts>`",
        "Su et al. (2016), section 3.3, and {cite:t}`su2016differentially`, section 4.1;",
        "section 2.2 of {cite:t}`ravi2021colored`, and {cite:t}`ni_dpkccm`'s section 3.1,",
        "chapter 3 of {cite:t}`dwork2014algorithmic`",
        "{cite:t}`dwork2014algorithmic`,",
        "section 3.5, and `make assignments --chapter 5` writes chapter five's",
        "the chapter's longest sections; a dataset of 1 million rows",
    ]
    hits = typed_number_hits("page", list(enumerate(passing, start=1)))
    assert not hits, _report(hits)
    notebook = {"cells": [{"cell_type": "code", "source": "", "outputs": [
        {"output_type": "display_data",
         "data": {GLUE_PREFIX + "text/plain": "'chapters 7 to 11'"}}]}]}
    assert len(generated_typed_number_hits("nb", json.dumps(notebook))) == 1
