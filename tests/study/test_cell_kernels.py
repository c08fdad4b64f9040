"""A sweep's cells share a warm kernel per worker thread (dpkmeans.study.cell_kernels): a cell
sees none of the previous cell's variables, gives the rows a fresh kernel gives, and a kernel
is replaced after a failure, after CELLS_PER_KERNEL cells and for another folder."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans.study import cell_kernels
from dpkmeans.study.sweep import BOOKKEEPING, expand, load_spec, run_cell_notebook

ROOT = Path(__file__).resolve().parents[2]


def probe_notebook(folder: Path) -> Path:
    """A cell notebook that reports its kernel's process id, whether a variable of an earlier
    cell survived, and a seeded draw; it fails when asked to."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("seed = 0\nfail = False\noutput_csv = None")
    params.metadata["tags"] = ["parameters"]
    body = nbformat.v4.new_code_cell(
        "import os\nimport numpy as np\nimport pandas as pd\n"
        "leftover = 'earlier' in globals()\n"
        "earlier = seed\n"
        "if fail:\n    raise RuntimeError('planned failure')\n"
        "draw = float(np.random.default_rng(seed).normal())\n"
        "pd.DataFrame([{'pid': os.getpid(), 'leftover': leftover, 'draw': draw}])"
        ".to_csv(output_csv, index=False)")
    nb.cells = [params, body]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe_cell.ipynb"
    nbformat.write(nb, path)
    return path


def run_probe(notebook: Path, **params: object) -> dict:
    with tempfile.TemporaryDirectory() as work:
        return run_cell_notebook(notebook, {"seed": 0, **params}, Path(work)).iloc[0].to_dict()


@pytest.fixture
def fresh_kernels():
    cell_kernels.close_warm_kernels()
    yield
    cell_kernels.close_warm_kernels()


def test_a_warm_kernel_is_reused_and_keeps_no_variables(tmp_path, fresh_kernels):
    nb = probe_notebook(tmp_path / "a")
    first, second = run_probe(nb, seed=3), run_probe(nb, seed=3)
    assert first["pid"] == second["pid"]  # the same kernel
    assert not first["leftover"] and not second["leftover"]  # %reset -f ran before the cell
    assert first["draw"] == second["draw"]


def test_a_failed_cell_s_kernel_is_not_reused(tmp_path, fresh_kernels):
    nb = probe_notebook(tmp_path / "a")
    before = run_probe(nb)
    with pytest.raises(Exception, match="planned failure"):
        run_probe(nb, fail=True)
    assert run_probe(nb)["pid"] != before["pid"]


def test_a_kernel_is_replaced_after_its_cells_and_for_another_folder(tmp_path, fresh_kernels,
                                                                     monkeypatch):
    monkeypatch.setattr(cell_kernels, "CELLS_PER_KERNEL", 2)
    nb = probe_notebook(tmp_path / "a")
    pids = [run_probe(nb)["pid"] for _ in range(3)]
    assert pids[0] == pids[1] != pids[2]
    assert run_probe(probe_notebook(tmp_path / "b"))["pid"] != pids[2]


def test_closing_shuts_the_warm_kernels_down(tmp_path, fresh_kernels):
    nb = probe_notebook(tmp_path / "a")
    run_probe(nb)
    (warm,) = cell_kernels._WARM.values()
    process = warm.km.provisioner.process
    cell_kernels.close_warm_kernels()
    assert not cell_kernels._WARM
    assert process.wait(timeout=30) is not None


@pytest.mark.slow
def test_book_cells_on_one_warm_kernel_give_a_fresh_kernel_s_rows(fresh_kernels):
    """Two real cells of the book's DP-Lloyd sweep (smoke grid), run one after the other on one
    warm kernel, then each on a kernel of its own: the same rows, bit for bit."""
    spec = load_spec(ROOT / "notebooks" / "sweeps" / "dplloyd_baselines.yaml", smoke=True)
    cells = expand(spec)[:2]

    def rows(params: dict) -> pd.DataFrame:
        with tempfile.TemporaryDirectory() as work:
            return run_cell_notebook(spec.notebook, params, Path(work))

    warm = [rows(c) for c in cells]
    fresh = []
    for c in cells:
        cell_kernels.close_warm_kernels()
        fresh.append(rows(c))
    for a, b in zip(warm, fresh, strict=True):  # the timings aside
        assert set(BOOKKEEPING) & set(a.columns)
        pd.testing.assert_frame_equal(a.drop(columns=list(BOOKKEEPING), errors="ignore"),
                                      b.drop(columns=list(BOOKKEEPING), errors="ignore"),
                                      check_exact=True)
    assert json.dumps(cells[0], sort_keys=True, default=str) != json.dumps(cells[1],
                                                                          sort_keys=True,
                                                                          default=str)
