"""Papermill reads every parameter of every parametrized notebook, and the exercise notebooks
document each one in `papermill --help-notebook`. Regression test: a comment with `=` hid the
exercise notebook's `paper`."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import nbformat
import pytest
from papermill.translators import PythonTranslator

ROOT = Path(__file__).resolve().parents[2]
#: The notebooks run through papermill: the sweeps' cells, the exercises and the chapters
#: (a reader may run a chapter with other parameters).
NOTEBOOKS = sorted([*(ROOT / "notebooks" / "sweeps").glob("*.ipynb"),
                    *(ROOT / "notebooks" / "exercises").glob("*.ipynb"),
                    *(ROOT / "notebooks").glob("*.ipynb")])


def assigned_names(cell) -> list[str]:
    """The names the cell assigns at its top level, in order."""
    names = []
    for node in ast.parse(cell.source).body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def parameters_cell(path: Path):
    nb = nbformat.read(str(path), as_version=4)
    return next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)


PARAMETRIZED = [p for p in NOTEBOOKS if parameters_cell(p) is not None]


@pytest.mark.parametrize("path", PARAMETRIZED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_papermill_reads_every_parameter(path, caplog):
    cell = parameters_cell(path)
    with caplog.at_level(logging.WARNING, logger="papermill"):
        inferred = PythonTranslator.inspect(cell)
    assert not [r for r in caplog.records if "Unable to parse" in r.getMessage()]
    assert [p.name for p in inferred] == assigned_names(cell)
    if path.parent.name == "exercises":  # for readers: `papermill --help-notebook`
        assert all(p.help for p in inferred), [p.name for p in inferred if not p.help]


def test_the_exercise_notebook_is_parametrized():
    assert any(p.parent.name == "exercises" for p in PARAMETRIZED)
