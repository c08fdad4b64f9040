"""Project-level checks: dependency pins, notebook pairing, book structure (issue 2)."""

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


def pyproject_requirements() -> dict[str, Requirement]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        reqs.extend(extra)
    return {Requirement(r).name.lower(): Requirement(r) for r in reqs}


def test_environment_yml_names_the_same_dependencies():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and dep not in ("pip",) and not dep.startswith("python"):
            req = Requirement(dep)
            conda[req.name.lower()] = req
    pyproject = pyproject_requirements()
    assert set(conda) == set(pyproject), set(conda) ^ set(pyproject)
    for name, req in pyproject.items():
        assert conda[name].specifier == req.specifier, name


def test_lock_file_satisfies_pyproject():
    lock = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if "==" in line:
            name, version = line.split("==")
            lock[name.strip().lower().replace("_", "-")] = Version(version.strip())
    for name, req in pyproject_requirements().items():
        key = name.replace("_", "-")
        assert key in lock, f"{name} is missing from requirements/lock.txt (run `make lock`)"
        assert req.specifier.contains(lock[key], prereleases=True), (name, lock[key])


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


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.name)
def test_chapter_shape(source: Path):
    """DESIGN.md section 5: objectives, theorems with proofs, literalinclude, figures with
    captions and names, a summary, and at least two exercises with solutions."""
    text = source.read_text()
    assert "Learning objectives" in text
    assert ":class: important" in text and "Summary" in text
    assert text.count("{prf:theorem}") >= 1 and text.count("{prf:proof}") >= 1
    assert "{literalinclude} ../src/dpkmeans/" in text
    assert 'tags=["parameters"]' in text
    exercises = re.findall(r"\{exercise\}\n# :label: (\S+)", text)
    solutions = re.findall(r"\{solution\} (\S+)", text)
    assert len(exercises) >= 2 and set(exercises) <= set(solutions)
    for line in text.splitlines():
        if "mystnb=" in line:
            assert '"caption"' in line and '"name": "fig-' in line
    assert "np.random.seed" not in text and "default_rng()" not in text, "unseeded randomness"


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
    bib = (ROOT / "book" / "references.bib").read_text()
    for key in ["ni_dpkccm", "zhang2018contour", "ravi2021colored", "apdpkmeans", "shang2021di",
                "dwork2014algorithmic", "balle2018improving", "su2016differentially",
                "su2017differentially", "lee2012differential", "mcsherry2007mechanism"]:
        assert f"{{{key}," in bib, key
