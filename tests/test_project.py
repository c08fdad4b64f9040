"""Project-level checks: dependency pins, notebook pairing, book structure."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def pyproject_requirements(extras: tuple[str, ...] | None = None) -> dict[str, Requirement]:
    """The requirements of the library and the given extras (default: the book's environment,
    every extra but ``compare``, which has an environment of its own); an extra that names
    other extras (``dpkmeans[...]``) adds nothing of its own."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = meta["optional-dependencies"]
    if extras is None:
        extras = tuple(name for name in optional if name != "compare")
    reqs = [Requirement(r) for r in meta["dependencies"]]
    for extra in extras:
        reqs.extend(Requirement(r) for r in optional[extra])
    out: dict[str, Requirement] = {}
    for req in reqs:
        if req.name == "dpkmeans":
            continue
        name = req.name.lower()
        if name in out:  # the same package in two places: both ranges hold
            req = Requirement(f"{name}{out[name].specifier & req.specifier}")
        out[name] = req
    return out


def _lock(path: Path) -> dict[str, Version]:
    lock = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            lock[name.strip().lower().replace("_", "-")] = Version(version.strip())
    return lock


def test_environment_yml_names_the_same_dependencies():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {}
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    deps += [d for d in env["dependencies"] if isinstance(d, dict) for d in d.get("pip", [])
             if not d.startswith("-")]  # pip's own entries, but its options
    for dep in deps:
        if dep not in ("pip",) and not dep.startswith("python"):
            req = Requirement(dep)
            conda[req.name.lower()] = req
    pyproject = pyproject_requirements()
    assert set(conda) == set(pyproject), set(conda) ^ set(pyproject)
    for name, req in pyproject.items():
        assert conda[name].specifier == req.specifier, name


@pytest.mark.parametrize("lock_file, extras", [
    ("lock.txt", None),
    ("compare-lock.txt", ("fast", "compare")),
])
def test_lock_file_satisfies_pyproject(lock_file, extras):
    lock = _lock(ROOT / "requirements" / lock_file)
    for name, req in pyproject_requirements(extras).items():
        key = name.replace("_", "-")
        assert key in lock, f"{name} is missing from requirements/{lock_file} (run `make lock`)"
        assert req.specifier.contains(lock[key], prereleases=True), (name, lock[key])


def test_the_comparison_lock_differs_from_the_books_only_where_its_header_says():
    """diffprivlib's environment holds scikit-learn back (and adds diffprivlib); every other
    package it shares with the book's environment has the same version."""
    book, compare = (_lock(ROOT / "requirements" / f) for f in ("lock.txt", "compare-lock.txt"))
    differ = {name for name in set(book) & set(compare) if book[name] != compare[name]}
    assert differ == {"scikit-learn"}
    assert set(compare) - set(book) == {"diffprivlib"}
    assert compare["scikit-learn"] < Version("1.9") <= book["scikit-learn"]


def test_every_chapter_is_paired():
    assert NOTEBOOK_SOURCES, "no notebooks found"
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        assert nb.with_suffix(".py").exists(), f"{nb.name} has no paired .py"


@pytest.mark.parametrize("source", NOTEBOOK_SOURCES, ids=lambda p: p.name)
def test_pair_is_in_sync_and_uses_python3(source: Path):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"{source.name} has no paired .ipynb: run `make sync`"
    from_py = jupytext.read(source)
    stored = nbformat.read(paired, as_version=4)
    assert stored.metadata["kernelspec"]["name"] == "python3"
    assert from_py.metadata["kernelspec"]["name"] == "python3"
    assert len(from_py.cells) == len(stored.cells), f"{source.name}: run `make sync`"
    for a, b in zip(from_py.cells, stored.cells):
        assert a.cell_type == b.cell_type
        assert a.source.strip() == b.source.strip(), f"{source.name} differs: run `make sync`"
        assert a.metadata.get("tags", []) == b.metadata.get("tags", [])


@pytest.mark.parametrize("source", NOTEBOOK_SOURCES, ids=lambda p: p.name)
def test_stored_outputs_are_from_a_complete_run(source: Path):
    """The .ipynb carries the outputs of its canonical run: every code cell was executed."""
    stored = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    counts = [c.execution_count for c in stored.cells if c.cell_type == "code"]
    assert all(c is not None for c in counts), f"{source.name}: run `make notebooks`"
    assert counts == sorted(counts), f"{source.name}: cells were run out of order"
    errors = [o for c in stored.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors


CHAPTERS = [p for p in NOTEBOOK_SOURCES if int(p.name[:2]) < 90]
#: Every notebook the book shows: chapters, the datasets page, the exercise pages.
BOOK_NOTEBOOKS = NOTEBOOK_SOURCES + sorted((ROOT / "notebooks" / "exercises").glob("*.py"))
#: The longest code line that fits the book's column at its code font (book/_ext/static).
CODE_LINE_LIMIT = 86


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.name)
def test_chapter_shape(source: Path):
    """One skeleton for every chapter: learning objectives with prerequisites, theorems with
    proofs, the library code that matters, figures with captions and names, a summary, then
    at least two exercises with solutions, one of them pen-and-paper."""
    text = source.read_text()
    objectives = re.search(r":::\{admonition\} Learning objectives\n(.*?)\n# :::", text, re.S)
    assert objectives, "no learning objectives"
    assert "**Prerequisites" in objectives.group(1), "the objectives name no prerequisites"
    assert ":class: important" in text and "Summary" in text
    summary, exercises = text.find("# ## Summary"), text.find("# ## Exercises")
    assert 0 < summary < exercises, "the summary comes before the exercises"
    assert text.count("{prf:theorem}") >= 1 and text.count("{prf:proof}") >= 1
    assert "{literalinclude} ../src/dpkmeans/" in text
    assert re.search(r'tags=\[[^\]]*"parameters"', text), "no parameters cell"
    found = re.findall(r"\{exercise\}[^\n]*\n((?:# :\w[^\n]*\n)+)", text)
    labels = [re.search(r":label: (\S+)", opts).group(1) for opts in found]
    solutions = re.findall(r"\{solution\} (\S+)", text)
    assert len(labels) >= 2 and set(labels) <= set(solutions)
    assert any(":class: pen-and-paper" in opts for opts in found), "no pen-and-paper exercise"
    for line in text.splitlines():
        if "mystnb=" in line:
            assert '"caption"' in line and '"name": "fig-' in line
    assert "np.random.seed" not in text and "default_rng()" not in text, "unseeded randomness"


def _cells(source: Path):
    return jupytext.read(source).cells


def _shown(cell) -> bool:
    """A code cell whose source the page shows (collapsed or not)."""
    tags = set(cell.metadata.get("tags", []))
    return not tags & {"remove-cell", "remove-input"}


def _open(cell) -> bool:
    """A code cell whose source the page shows open, not collapsed."""
    tags = set(cell.metadata.get("tags", []))
    return _shown(cell) and not tags & {"hide-input", "hide-cell"}


@pytest.mark.parametrize("source", BOOK_NOTEBOOKS, ids=lambda p: p.name)
def test_code_fits_the_column_and_plumbing_is_hidden(source: Path):
    """Shown code fits the column without sideways scrolling; glue calls and the parameters
    cell are not left open on the page (they are removed, or collapsed)."""
    for cell in _cells(source):
        if cell.cell_type != "code":
            continue
        if _shown(cell):
            long = [line for line in cell.source.splitlines() if len(line) > CODE_LINE_LIMIT]
            assert not long, f"{source.name}: code lines over {CODE_LINE_LIMIT} characters: {long}"
        if _open(cell):
            assert "glue(" not in cell.source, f"{source.name}: glue shown: {cell.source[:200]}"
            assert "parameters" not in cell.metadata.get("tags", []), (
                f"{source.name}: the parameters cell is shown open (tag it hide-input)")


#: A line of markdown that MyST would read as a list item or a definition.
_LIST_MARKER = re.compile(r"^\s*(?:[-+*:]|\d+[.)])\s")


def _open_inline_math(line: str, open_: bool) -> bool:
    """Whether an inline $...$ span is open after ``line`` (display $$ spans ignored)."""
    for token in re.findall(r"\\\$|\$\$|\$", line):
        if token == "$":
            open_ = not open_
    return open_


@pytest.mark.parametrize("source", BOOK_NOTEBOOKS, ids=lambda p: p.name)
def test_no_wrapped_math_line_reads_as_a_list(source: Path):
    """A wrapped inline formula must not continue on a line that starts like a list item or a
    definition (``+ ``, ``- ``, ``: ``, ``1. ``): MyST would cut the formula there and show raw
    TeX. Display math ($$...$$) on its own lines is safe."""
    for cell in _cells(source):
        if cell.cell_type != "markdown":
            continue
        open_, display, fence = False, False, False
        for line in cell.source.splitlines():
            stripped = line.strip()
            if stripped.startswith("```") or stripped.startswith(":::"):
                fence = not fence if stripped in ("```", ":::") else fence
                continue
            if stripped.count("$$") % 2 == 1:
                display = not display
                continue
            if display:
                continue
            assert not (open_ and _LIST_MARKER.match(line)), (
                f"{source.name}: a formula continues on a line MyST reads as a list: {line!r}")
            if not stripped:
                open_ = False  # a blank line ends a paragraph, and any span in it
            open_ = _open_inline_math(line, open_)


def test_toc_lists_existing_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [c["file"] for c in part["chapters"]]
        files += [s["file"] for c in part["chapters"] for s in c.get("sections", [])]
    for f in files:
        assert any((ROOT / f).with_suffix(ext).exists() for ext in (".md", ".ipynb")), f
    for source in NOTEBOOK_SOURCES:
        assert f"notebooks/{source.stem}" in files, f"{source.name} is not in _toc.yml"


def test_bibliography_has_the_required_works():
    from dpkmeans.papers.registry import records

    bib = (ROOT / "book" / "references.bib").read_text()
    papers = [r.bibkey for r in records()]  # each paper's record names its entry
    for key in [*papers, "dwork2014algorithmic", "balle2018improving", "su2017differentially",
                "lee2012differential", "mcsherry2007mechanism"]:
        assert f"{{{key}," in bib, key


def _makefile_packages() -> set[str]:
    """The Debian packages the Makefile installs when they are missing (its ``*_PACKAGES``)."""
    text = (ROOT / "Makefile").read_text()
    return {name for line in re.findall(r"^[A-Z_]+_PACKAGES\s*:=\s*(.+)$", text, flags=re.M)
            for name in line.split()}


def test_the_readme_says_what_the_two_commands_need():
    """The README's first section names everything the two commands install besides Python
    packages: each Debian package the Makefile installs (with root or sudo), so that a new user
    is not told that Python and make are all they need."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    packages = _makefile_packages()
    assert {"bubblewrap", "chromium", "poppler-utils"} <= packages
    missing = sorted(name for name in packages if f"`{name}`" not in section)
    assert not missing, f"README's 'The two commands' does not name {missing}"
    assert "nothing else" not in section
    assert re.search(r"first run", section), "the first-run times of make book and make test"
