"""A chapter's notebook downloaded on its own runs wherever the library is installed: it finds
the committed results it reads through the library (dpkmeans.study.committed) and says where."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_synthesis_chapter_runs_outside_the_source_tree(tmp_path, monkeypatch):
    monkeypatch.delenv("DPKMEANS_SOURCE", raising=False)
    alone = tmp_path / "downloads" / "12_synthesis.ipynb"
    alone.parent.mkdir()
    shutil.copy(ROOT / "notebooks" / "12_synthesis.ipynb", alone)
    notebook = nbformat.read(alone, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(alone.parent)}}).execute()
    said = "".join(output.get("text", "") for cell in notebook.cells
                   for output in cell.get("outputs", []) if output.get("name") == "stderr")
    assert "read data/results/leaderboard.csv from the library's source tree" in said
    errors = [o for c in notebook.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
