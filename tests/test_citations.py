"""The repository cites only what is in it (``docs/design.md``, introduction).

Comments, docstrings, tests, benchmarks, the book's sources, the chapters, the README and the
Makefile cite ``docs/design.md`` by section, a book chapter, or a paper by its authors and year.
They never cite the team's working notes (``DESIGN.md``, the reference notes' files or
"reference §x"), a paper by an internal number ("seed 00N") or an issue number: a reader has
none of these. The test lists every offending file:line.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: What a reader of the repository cannot look up. Case-insensitive, except where marked.
CITATION = re.compile(
    r"(?-i:\bDESIGN\.md)"  # the team's design notes (docs/design.md is the repository's)
    r"|\b(?:algorithms|book-conventions)\.md\b|\bdp-libraries\b"  # the reference notes
    r"|\breference ?§|\breference/|\bshared/(?:reference|papers)\b"
    r"|\breference(?:'s)? (?:section|appendix|table) ?(?-i:[0-9A-Z])"
    r"|\bseed (?:paper )?0\d\d\b"  # a paper by its file number
    r"|\bissues? #?\d+"  # an issue number
    r"|\bS\d/S\d\b",  # the notes' shorthand for papers
    re.IGNORECASE)

#: Where the rule applies: tracked files under these folders (not notebooks' JSON twins, not
#: the bibliography), the chapters' sources and sweeps, the READMEs, the pyprojects and the
#: Makefile.
FOLDERS = ("src/", "tests/", "benchmarks/", "book/")
FILES = ("README.md", "Makefile", "data/README.md", "pyproject.toml",
         "classroom/pyproject.toml")
SKIPPED_SUFFIXES = (".ipynb", ".bib")

#: The browser test's own list of shorthand to catch on the built pages.
PATTERN_LINES = {"tests/browser/test_pages.py": "SHORTHAND = re.compile("}

#: Files that other pieces of work are still cleaning, and that cite outside the repository
#: until they are done. Empty it file by file: a file listed here is not checked at all.
ALLOWED: frozenset[str] = frozenset()


def _in_scope(path: str) -> bool:
    if path == THIS or path.endswith(SKIPPED_SUFFIXES):
        return False
    return (path.startswith(FOLDERS) or path in FILES
            or (path.startswith("notebooks/") and path.endswith((".py", ".yaml"))))


def _tracked() -> list[str]:
    """The repository's tracked files (every file under the scope, outside a git checkout)."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             check=True, timeout=60).stdout.decode()
        return [p for p in out.split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        skip = {"__pycache__", ".venv", "_build", ".git", ".pytest_cache", ".hypothesis"}
        return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]


def _pattern_lines(text: str, start: str) -> set[int]:
    """The line numbers of the statement that begins with ``start`` (a regex of shorthand
    written on purpose), up to the line that closes its parenthesis."""
    lines, inside, depth = set(), False, 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not inside and line.lstrip().startswith(start):
            inside = True
        if inside:
            lines.add(number)
            depth += line.count("(") - line.count(")")
            if depth <= 0:
                return lines
    return lines


def citations(path: str, text: str) -> list[str]:
    """Every ``path:line: text`` of ``text`` that cites outside the repository."""
    exempt = _pattern_lines(text, PATTERN_LINES[path]) if path in PATTERN_LINES else set()
    return [f"{path}:{number}: {line.strip()}"
            for number, line in enumerate(text.splitlines(), start=1)
            if number not in exempt and CITATION.search(line)]


def test_nothing_cites_outside_the_repository():
    found = []
    for path in sorted(p for p in _tracked() if _in_scope(p) and p not in ALLOWED):
        file = ROOT / path
        if not file.is_file():  # deleted in the working tree
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # an image or another binary file
            continue
        found += citations(path, text)
    assert not found, ("cite docs/design.md (a section), a book chapter or a paper by authors "
                       "and year instead of:\n" + "\n".join(found))


@pytest.mark.parametrize("line", [
    "(DESIGN.md section 3)", "see ../shared/DESIGN.md", "(reference/algorithms.md section 2)",
    "(reference §1.2)", "Reference §6.6 steps 1-6", "(reference section 8, audit table 8.6)",
    "the reference's Appendix A.3 setting", "(algorithms.md §2.5)",
    "(reference/dp-libraries.md §3.1)", "DP-KCCM (seed 000, issue 6)", "Seed 004 eq. 6",
    "(issue 33, item 4)", "Older notes (issues 4 and 10)", "fixed in issue #12", "S0/S1",
])
def test_the_pattern_catches_each_kind_of_citation(line):
    assert CITATION.search(line), line


@pytest.mark.parametrize("line", [
    '(``docs/design.md``, "Privacy rules")', "Su et al. (2016), section 3.3",
    "book chapter 6", "export DPKMEANS_DATA=../shared/data", "a non-private reference only",
    "the reference clustering", "a random seed 0 and seed 42", "design.md",
    "test_su_quantities_match_values_worked_by_hand", "the papers' own reference rows",
])
def test_the_pattern_leaves_the_repositorys_own_citations_alone(line):
    assert not CITATION.search(line), line


def test_a_file_lists_every_offending_line():
    text = "ok\n# DESIGN.md section 3\nok\n# seed 002 and issue 12\n"
    assert citations("src/x.py", text) == ["src/x.py:2: # DESIGN.md section 3",
                                           "src/x.py:4: # seed 002 and issue 12"]


def test_the_browser_tests_own_pattern_is_exempt_and_nothing_else_there():
    text = ('X = 1  # issue 3\nSHORTHAND = re.compile(\n    r"(?:seed 001)|DESIGN.md|"\n'
            '    r"issue 4|reference §", re.IGNORECASE)\n# DESIGN.md\n')
    assert citations("tests/browser/test_pages.py", text) == [
        "tests/browser/test_pages.py:1: X = 1  # issue 3",
        "tests/browser/test_pages.py:5: # DESIGN.md"]
