"""The first code cell of every notebook of the book: where ``dpkmeans`` is missing, as on Colab,
it installs the library from the repository and branch ``_config.yml`` names (docs/launch.md).

    python binder/launch_cell.py [--check] [NOTEBOOK.py ...]

writes the cell into each notebook pair (the jupytext ``.py`` and its ``.ipynb``) right after
the title's Markdown cell, or rewrites it in place when ``repository.url`` or
``repository.branch`` changed. With ``--check`` it changes nothing and lists the notebooks
whose cell is missing or out of date (exit status 1). Without notebooks it takes every
notebook the book shows: ``notebooks/*.py`` and ``notebooks/exercises/*.py``.

Where the library is installed (``make install``, Binder, the notebook test) the cell does
nothing and prints nothing. So the stored ``.ipynb`` keeps its outputs: the new cell has none,
it is the first executed, and the execution counts after it move up by one, as a run of the
notebook would number them. Tagged ``remove-cell``, it is not on the book's pages.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
#: The tag that marks the cell (``remove-cell`` keeps it off the pages).
TAG = "launch"
TAGS = ["remove-cell", TAG]
#: The folder the cell clones the repository into: the name of the book's source archive.
CLONE = "private-kmeans-reproduced"

_TEMPLATE = '''\
# Colab, or any Jupyter without the library: this cell installs `dpkmeans` from
# the book's repository (a few minutes). Where the library is installed already
# (`make install`, Binder), it does nothing. A chapter downloads the papers'
# datasets it reads from UCI the first time. How it works: docs/launch.md.
import importlib.util
import runpy
import subprocess
from pathlib import Path

if importlib.util.find_spec("dpkmeans") is None:
    repository, branch = {repository}, {branch}
    if not repository:
        raise ModuleNotFoundError(
            "dpkmeans is not installed, and this notebook names no repository to "
            "install it from: download the book's source (linked under the chapter's "
            "title), run `make install` in it and open the notebook there")
    source = Path({clone}).resolve()
    if not source.is_dir():
        subprocess.run(["git", "clone", "--quiet", "--depth=1", f"--branch={{branch}}",
                        repository, str(source)], check=True)
    runpy.run_path(str(source / "binder" / "install_library.py"))'''


def configured(config: Path = CONFIG) -> tuple[str, str]:
    """The repository's URL ("" when none) and branch that ``config`` names."""
    repository = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("repository")
    repository = repository or {}
    return str(repository.get("url") or "").strip(), str(repository.get("branch") or "main")


def render(repository: str, branch: str) -> str:
    """The cell's source for ``repository`` and ``branch``."""
    return _TEMPLATE.format(repository=json.dumps(repository), branch=json.dumps(branch),
                            clone=json.dumps(CLONE))


def book_notebooks(root: Path = ROOT) -> list[Path]:
    """The ``.py`` side of every notebook the book shows."""
    return sorted([*(root / "notebooks").glob("*.py"),
                   *(root / "notebooks" / "exercises").glob("*.py")])


def _tagged(cell) -> bool:
    return TAG in cell.get("metadata", {}).get("tags", [])


def _place(cells) -> int:
    """Where a missing cell goes: after the title's Markdown cell."""
    return 1 if cells and cells[0].cell_type == "markdown" else 0


def _launch_index(cells) -> int | None:
    return next((i for i, cell in enumerate(cells) if _tagged(cell)), None)


def problem(path: Path, source: str) -> str | None:
    """What is wrong with the cell of the notebook pair ``path`` (its ``.py``), or None."""
    for side in (path, path.with_suffix(".ipynb")):
        name = side.relative_to(ROOT) if side.is_relative_to(ROOT) else side
        if not side.is_file():
            return f"{name}: missing"
        nb = jupytext.read(side) if side.suffix == ".py" else nbformat.read(side, as_version=4)
        index = _launch_index(nb.cells)
        if index is None:
            return f"{name}: no cell tagged {TAG!r}"
        if index != _place(nb.cells[:index]) or nb.cells[index].cell_type != "code":
            return f"{name}: the {TAG!r} cell is not the first code cell, after the title"
        if nb.cells[index].source != source:
            return f"{name}: the {TAG!r} cell is out of date (python binder/launch_cell.py)"
        if nb.cells[index].metadata.get("tags") != TAGS:
            return f"{name}: the {TAG!r} cell's tags are not {TAGS}"
    return None


def _write_py(path: Path, source: str) -> bool:
    nb = jupytext.read(path)
    index = _launch_index(nb.cells)
    if index is None:
        nb.cells.insert(_place(nb.cells), nbformat.v4.new_code_cell(source, metadata={"tags": TAGS}))
    elif nb.cells[index].source == source:
        return False
    else:
        nb.cells[index].source = source
    path.write_text(jupytext.writes(nb, fmt="py:percent"), encoding="utf-8")
    return True


def _shift_counts(cells, by: int) -> None:
    """Move every execution count (cells' and results') up by ``by``."""
    for cell in cells:
        if cell.cell_type != "code":
            continue
        if cell.execution_count is not None:
            cell.execution_count += by
        for output in cell.get("outputs", []):
            if output.get("execution_count") is not None:
                output["execution_count"] += by


def _write_ipynb(path: Path, source: str) -> bool:
    nb = nbformat.read(path, as_version=4)
    index = _launch_index(nb.cells)
    if index is None:
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        first = min((c for c in counts if c is not None), default=1)
        _shift_counts(nb.cells, 1)
        cell = nbformat.v4.new_code_cell(source, metadata={"tags": TAGS}, execution_count=first)
        cell.id = TAG
        nb.cells.insert(_place(nb.cells), cell)
    elif nb.cells[index].source == source:
        return False
    else:
        nb.cells[index].source = source
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return True


def write(path: Path, source: str) -> bool:
    """Put the cell into the notebook pair ``path`` (its ``.py``); whether a file changed."""
    changed = _write_py(path, source)
    return _write_ipynb(path.with_suffix(".ipynb"), source) or changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks' .py files (default: every notebook of the book)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; list the notebooks whose cell is wrong")
    args = parser.parse_args(argv)
    source = render(*configured())
    paths = [p.with_suffix(".py") for p in args.notebooks] or book_notebooks()
    if args.check:
        problems = [found for found in (problem(p, source) for p in paths) if found]
        print("\n".join(problems) or f"{len(paths)} notebooks carry the launch cell")
        return 1 if problems else 0
    for path in paths:
        if write(path, source):
            print(f"{path}: launch cell written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
