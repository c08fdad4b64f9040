"""Chapter 6 reads as two pages a student can follow: "Auditing a mechanism"
(``notebooks/06_auditing.py``) and "Auditing an algorithm"
(``notebooks/06_auditing_algorithms.py``, a section of chapter 6 in ``_toc.yml``).

* Every term of the list is defined where it is first used on a page: its first occurrence in
  the page's markdown lies in a bold definition (``**term**``) or in a ``{prf:definition}``
  block, and a page that relies on a term defines it itself.
* Shorthand the reader was never given stays out: "CI", "a hook's own releases", "pmf",
  "Monte-Carlo" (in the prose and in the text the notebooks generate).
* Each page shows at most :data:`VISIBLE_CODE_CEILING` lines of code open; the rest is folded
  (``hide-input``), removed, or in the library.
* The one-run audit cites Steinke, Nasr and Jagielski (2023) with a key of
  ``book/references.bib``.
* The generated sentence comparing the two samplers' reproduction times reads right when the
  two round to the same second.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MECHANISM = ROOT / "notebooks" / "06_auditing.py"
ALGORITHM = ROOT / "notebooks" / "06_auditing_algorithms.py"
GALLERY = ROOT / "notebooks" / "06_auditing_gallery.py"
PAGES = (MECHANISM, ALGORITHM, GALLERY)

#: The most lines of code (non-blank) a page of chapter 6 shows open.
VISIBLE_CODE_CEILING = 150

#: Terms a reader needs defined, as a pattern that finds each use.
TERMS = {
    "zCDP": r"\bzCDP\b|zero-concentrated",
    "hockey-stick divergence": r"hockey-stick",
    "Bonferroni correction": r"\bBonferroni\b",
    "transcript": r"\btranscripts?\b",
    "canary": r"\bcanar(?:y|ies)\b",
    "black-box": r"\bblack-box\b",
    "white-box": r"\bwhite-box\b",
}
#: The terms each page must define (it uses them).
DEFINES = {
    MECHANISM: ("zCDP", "transcript", "black-box", "white-box"),
    ALGORITHM: ("zCDP", "hockey-stick divergence", "Bonferroni correction", "transcript",
                "canary"),
    GALLERY: (),
}
#: Shorthand that neither page may use, in its prose or in the text it generates.
UNDEFINED = {
    "CI": r"\bCIs?\b",
    "a hook's own releases": r"\bhook'?s?\b",
    "pmf": r"\bpmf\b",
    "Monte-Carlo": r"\bMonte[- ]Carlo\b",
}
_DEFINITION_BLOCK = re.compile(r"```\{prf:definition\}.*?```", re.S)
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)


def markdown(source: Path, text: str | None = None) -> str:
    """The markdown cells of a jupytext notebook, joined in order."""
    notebook = jupytext.reads(source.read_text() if text is None else text, fmt="py:percent")
    return "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")


def definition_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` defines: its bold spans and its ``{prf:definition}`` blocks."""
    return [m.span() for m in (*_BOLD.finditer(text), *_DEFINITION_BLOCK.finditer(text))]


def undefined_first_uses(text: str) -> list[str]:
    """The terms of :data:`TERMS` whose first occurrence in ``text`` is not in a
    definition."""
    spans = definition_spans(text)
    bad = []
    for term, pattern in TERMS.items():
        first = re.search(pattern, text, re.I if term != "zCDP" else 0)
        if first and not any(a <= first.start() < b for a, b in spans):
            bad.append(f"{term}: {text[max(0, first.start() - 60):first.end() + 20]!r}")
    return bad


def defined_terms(text: str) -> set[str]:
    """The terms of :data:`TERMS` that ``text`` defines somewhere."""
    inside = " ".join(text[a:b] for a, b in definition_spans(text))
    return {term for term, pattern in TERMS.items() if re.search(pattern, inside, re.I)}


def visible_code_lines(source: Path, text: str | None = None) -> int:
    """Non-blank lines of the code cells a page shows open (not folded, not removed)."""
    notebook = jupytext.reads(source.read_text() if text is None else text, fmt="py:percent")
    hidden = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
    return sum(sum(1 for line in c.source.splitlines() if line.strip())
               for c in notebook.cells
               if c.cell_type == "code" and not hidden & set(c.metadata.get("tags", [])))


def generated_text(source: Path) -> str:
    """The text a notebook generates: its stored outputs (tables, glued text, prints)."""
    stored = json.loads(source.with_suffix(".ipynb").read_text())
    parts = []
    for cell in stored["cells"]:
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            for mime in ("text/plain", "text/html", "text/markdown"):
                value = output.get("data", {}).get(mime, "")
                parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


def glued(source: Path) -> dict[str, str]:
    """The glued values of a stored notebook, by name (their text/plain form)."""
    stored = json.loads(source.with_suffix(".ipynb").read_text())
    values = {}
    for cell in stored["cells"]:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook", {})
            if record.get("name"):
                text = output["data"][record.get("mime_prefix", "") + "text/plain"]
                values[record["name"]] = "".join(text).strip("'\"")
    return values


# --- the tests ---------------------------------------------------------------------------------
def test_the_second_page_is_a_section_of_chapter_6():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [c for part in toc["parts"] for c in part["chapters"]]
    sixth = next(c for c in chapters if c["file"] == "notebooks/06_auditing")
    assert [s["file"] for s in sixth.get("sections", [])] == [
        "notebooks/06_auditing_algorithms", "notebooks/06_auditing_gallery"]
    # each page opens with its label (the chapters cite it with {numref}), then its title
    assert markdown(MECHANISM).startswith("(ch-auditing)=\n# Auditing a mechanism")
    assert markdown(ALGORITHM).startswith("(ch-auditing-algorithms)=\n# Auditing an algorithm")
    assert markdown(GALLERY).startswith("(sec-audit-gallery)=\n# A gallery of real bugs")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_term_is_defined_at_its_first_use(page: Path):
    text = markdown(page)
    assert not undefined_first_uses(text)
    assert set(DEFINES[page]) <= defined_terms(text), "a page must define what it uses"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_undefined_shorthand_in_prose_or_generated_text(page: Path):
    for where, text in (("prose", markdown(page)), ("outputs", generated_text(page))):
        for term, pattern in UNDEFINED.items():
            found = re.search(pattern, text)
            assert not found, f"{page.name} {where}: {term!r} in " \
                              f"{text[max(0, found.start() - 60):found.end() + 20]!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_shows_at_most_the_code_a_student_reads(page: Path):
    assert visible_code_lines(page) <= VISIBLE_CODE_CEILING


def test_the_checks_catch_what_they_exist_for():
    """An undefined first use, a definition after the use, and a page of open code fail."""
    used = "The discrete Gaussian uses zCDP.\n\nLater: **zero-concentrated DP (zCDP)** is..."
    assert undefined_first_uses(used) and "zCDP" in undefined_first_uses(used)[0]
    defined = "A **transcript** is the sequence of releases. The transcript..."
    assert not undefined_first_uses(defined) and defined_terms(defined) == {"transcript"}
    block = "```{prf:definition} Canary\nA canary is a planted record.\n```\nCanaries..."
    assert not undefined_first_uses(block) and defined_terms(block) == {"canary"}
    page = "# %% [markdown]\n# # T\n\n# %%\n" + "x = 1\n" * (VISIBLE_CODE_CEILING + 1)
    assert visible_code_lines(ALGORITHM, page) == VISIBLE_CODE_CEILING + 1
    assert visible_code_lines(ALGORITHM, page.replace("# %%\n", '# %% tags=["hide-input"]\n'
                                                      )) == 0


def test_the_canary_audit_cites_a_bibliography_entry():
    text = markdown(ALGORITHM)
    paragraph = next(p for p in text.split("\n\n") if re.search(TERMS["canary"], p, re.I))
    keys = re.findall(r"\{cite\}`([^`]+)`", paragraph)
    assert keys, "the one-run audit's paragraph cites nothing"
    bib = (ROOT / "book" / "references.bib").read_text()
    entries = dict(re.findall(r"@\w+\{([^,]+),(.*?)\n\}", bib, re.S))
    for key in keys:
        assert key in entries, key
    entry = entries[keys[0]]
    assert "Steinke" in entry and "Nasr" in entry and "Jagielski" in entry
    assert "2023" in entry and "One (1) Training Run" in entry


def test_the_reproduction_times_read_right_when_they_are_equal():
    values = glued(MECHANISM)
    exact, floating = int(values["ch6_repro_s"]), int(values["ch6_repro_float_s"])
    sentence = values["ch6_repro_compared"]
    if exact == floating:
        assert sentence == "the same time, to the second"
    else:
        assert "times as long" in sentence and not sentence.startswith("1 times")
    assert "ch6_repro_ratio" not in MECHANISM.read_text()
