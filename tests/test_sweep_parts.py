"""Sweep cells run in parts: the parts' rows, merged in part order, are the cell's rows (same
id, seed and values; the runtime the sum of the parts'), resumable part by part, in
``run_sweep`` and in ``run_reproduce`` alike, and a real cell notebook split in two gives the
rows of the whole cell."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans.reproduce import Experiment, run_reproduce
from dpkmeans.study.parts import PartError, is_last_part, part_block
from dpkmeans.study.sweep import (
    BOOKKEEPING,
    SweepError,
    cell_id,
    cell_parts,
    cell_seed,
    cell_tasks,
    check_spec,
    completed_cells,
    completed_parts,
    expand,
    load_spec,
    merge_parts,
    read_results,
    run_cell,
    run_sweep,
)

ROOT = Path(__file__).resolve().parents[1]

#: A cell's points: five per cell, each one row whose value depends on the cell and the point.
POINTS = 5


def fake_runner(calls: list | None = None, fail: set | None = None):
    """A cell runner that computes the ``part``-th block of five points (as a cell notebook
    that supports parts does); it records each call, and raises for the (alpha, part) pairs
    in ``fail``."""
    def runner(notebook, params, workdir):
        part, parts = params.get("part", 0), params.get("parts", 1)
        if calls is not None:
            calls.append((params["alpha"], part, parts))
        if fail and (params["alpha"], part) in fail:
            raise RuntimeError(f"part {part} failed")
        block = part_block(range(POINTS), part, parts)
        return pd.DataFrame({"point": block,
                             "value": [params["alpha"] * 10 + p + params["seed"] % 7
                                       for p in block]})
    return runner


def write_spec(folder: Path, parts: str = "", smoke: str = "",
               name: str = "toy.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("experiment: toy\nnotebook: toy_cell.ipynb\nseed: 5\n"
                    "grid:\n  alpha: [1, 2, 3]\n" + parts + smoke)
    return path


def values(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns that are results (no timings, versions or part bookkeeping)."""
    return frame[[c for c in frame.columns if c not in BOOKKEEPING]].reset_index(drop=True)


def test_part_block_splits_in_order():
    items = list(range(7))
    blocks = [part_block(items, k, 3) for k in range(3)]
    assert blocks == [[0, 1, 2], [3, 4], [5, 6]]
    assert sum(blocks, []) == items
    assert part_block(items) == items
    assert [is_last_part(k, 3) for k in range(3)] == [False, False, True]
    with pytest.raises(PartError, match="part must be from 0 to 2"):
        part_block(items, 3, 3)
    with pytest.raises(PartError, match="a part would be empty"):
        part_block(items, 0, 8)
    with pytest.raises(PartError, match="at least 1"):
        part_block(items, 0, 0)


def test_part_parameters_leave_the_cell_id_and_seed_alone(tmp_path):
    spec = load_spec(write_spec(tmp_path, "parts: {alpha: {2: 3}}\n"))
    cells = expand(spec)
    assert [cell_parts(spec, c) for c in cells] == [1, 3, 1]
    tasks = cell_tasks(spec, cells[1])
    assert [(t["part"], t["parts"]) for t in tasks] == [(0, 3), (1, 3), (2, 3)]
    assert {cell_id(t) for t in tasks} == {cell_id(cells[1])}
    assert {t["seed"] for t in tasks} == {cells[1]["seed"]}
    assert cell_seed(5, {**{"alpha": 2}, "part": 1, "parts": 3}) == cell_seed(5, {"alpha": 2})
    assert cell_tasks(spec, cells[0]) == [cells[0]]  # a whole cell has no part parameters
    whole = load_spec(write_spec(tmp_path / "whole"))
    assert [cell_id(c) for c in expand(whole)] == [cell_id(c) for c in cells]


@pytest.mark.parametrize("parts, message", [
    ("parts: 0\n", "at least 1"),
    ("parts: two\n", "whole number of parts"),
    ("parts: true\n", "whole number of parts"),
    ("parts: {beta: {1: 2}}\n", "'beta' is not a grid parameter"),
    ("parts: {alpha: 2}\n", "must map values of alpha"),
    ("parts: {alpha: {4: 2}}\n", "4 is not a value of alpha"),
    ("parts: {alpha: {1: 1.5}}\n", "whole number of parts"),
])
def test_bad_parts_are_refused(tmp_path, parts, message):
    with pytest.raises(SweepError, match=message):
        load_spec(write_spec(tmp_path, parts))


def test_bad_smoke_parts_are_refused_and_good_ones_override(tmp_path):
    path = write_spec(tmp_path, "parts: 2\n", "smoke:\n  parts: -1\n")
    assert load_spec(path).parts == 2
    with pytest.raises(SweepError, match="smoke.parts must be a whole number"):
        load_spec(path, smoke=True)
    path = write_spec(tmp_path, "parts: {alpha: {3: 2}}\n",
                      "smoke:\n  grid: {alpha: [1]}\n  parts: 3\n")
    assert load_spec(path).parts == {"alpha": {3: 2}}  # a value of the full grid only
    assert [cell_parts(load_spec(path, smoke=True), c)
            for c in expand(load_spec(path, smoke=True))] == [3]


def _notebook(folder: Path, parameters: str) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nbformat.write(nb, str(folder / "toy_cell.ipynb"))


def test_check_spec_wants_a_notebook_that_runs_in_parts(tmp_path):
    spec = load_spec(write_spec(tmp_path, "parts: 2\n"))
    _notebook(tmp_path, "alpha = 1\nseed = 0\noutput_csv = None")
    with pytest.raises(SweepError, match="cannot run in parts"):
        check_spec(spec)
    _notebook(tmp_path, "alpha = 1\nseed = 0\noutput_csv = None\npart = 0\nparts = 1")
    check_spec(spec)
    reserved = load_spec(write_spec(tmp_path, "fixed: {part: 1}\n"))
    with pytest.raises(SweepError, match="set by the sweep"):
        check_spec(reserved)


def test_parts_merge_into_the_whole_cell_in_grid_order(tmp_path):
    whole = load_spec(write_spec(tmp_path / "a"))
    split = load_spec(write_spec(tmp_path / "b", "parts: {alpha: {1: 2, 3: 5}}\n"))
    calls: list = []
    one = run_sweep(whole, results_path=tmp_path / "whole.csv", runner=fake_runner(),
                    progress=False)
    new = run_sweep(split, results_path=tmp_path / "split.csv", runner=fake_runner(calls),
                    jobs=2, progress=False)
    assert sorted(calls) == sorted([(1, 0, 2), (1, 1, 2), (2, 0, 1), *((3, k, 5)
                                                                         for k in range(5))])
    table = read_results(tmp_path / "split.csv")
    assert values(table).equals(values(read_results(tmp_path / "whole.csv")))
    assert values(new).astype(str).equals(values(one).astype(str))  # the same rows returned
    assert not {"cell_part", "cell_parts", "part", "parts"} & set(table.columns)
    assert list(table.columns) == list(read_results(tmp_path / "whole.csv").columns)
    assert completed_cells(tmp_path / "split.csv") == {cell_id(c) for c in expand(split)}
    assert not split.parts_path(tmp_path / "split.csv").exists()  # emptied once merged


def test_merge_sums_the_parts_runtimes_and_sorts_by_grid_then_part():
    rows = pd.DataFrame({
        "cell": ["b", "a", "b", "a", "c"], "value": [3, 1, 2, 0, 9],
        "cell_runtime_s": [2.0, 5.0, 1.5, 5.0, 7.0],
        "cell_part": [1, None, 0, None, 0], "cell_parts": [2, None, 2, None, 2]})
    merged = merge_parts(rows, {"a": 0, "b": 1, "c": 2})
    assert merged["value"].tolist() == [1, 0, 2, 3]  # c lacks a part: left out
    assert merged["cell_runtime_s"].tolist() == [5.0, 5.0, 3.5, 3.5]
    assert list(merged.columns) == ["cell", "value", "cell_runtime_s"]


def test_a_half_done_cell_resumes_with_its_missing_parts(tmp_path):
    spec = load_spec(write_spec(tmp_path, "parts: 4\n"))
    out = tmp_path / "results.csv"
    with pytest.raises(RuntimeError, match="part 2 failed"):
        run_sweep(spec, results_path=out, runner=fake_runner(fail={(1, 2)}), progress=False)
    staged = spec.parts_path(out)
    assert completed_parts(staged) == {(cell_id(expand(spec)[0]), 0, 4),
                                       (cell_id(expand(spec)[0]), 1, 4)}
    assert completed_cells(staged) == set() and not completed_cells(out)
    calls: list = []
    run_sweep(spec, results_path=out, runner=fake_runner(calls), progress=False)
    assert calls == [(1, 2, 4), (1, 3, 4), *((a, k, 4) for a in (2, 3) for k in range(4))]
    whole = load_spec(write_spec(tmp_path / "whole"))
    run_sweep(whole, results_path=tmp_path / "whole.csv", runner=fake_runner(),
              progress=False)
    assert values(read_results(out)).equals(values(read_results(tmp_path / "whole.csv")))
    assert not staged.exists()


def test_parts_of_a_cell_already_in_the_results_are_dropped(tmp_path):
    """A run stopped after writing a merged cell and before emptying the parts file."""
    spec = load_spec(write_spec(tmp_path, "parts: 2\n"))
    out = tmp_path / "results.csv"
    calls: list = []
    run_sweep(spec, results_path=out, runner=fake_runner(calls), progress=False)
    before = out.read_text()
    staged = spec.parts_path(out)
    first = dict(expand(spec)[0], part=0, parts=2)
    rows = run_cell_rows(spec, first)
    rows.to_csv(staged, index=False)
    assert run_sweep(spec, results_path=out, runner=fake_runner(calls), progress=False).empty
    assert out.read_text() == before and not staged.exists() and len(calls) == 6


def run_cell_rows(spec, params) -> pd.DataFrame:
    """One task's rows as the sweep records them."""
    return run_cell(spec, params, fake_runner())


def _book(root: Path, parts: str) -> Experiment:
    write_spec(root / "notebooks" / "sweeps", parts, name="toy.yaml")
    return Experiment("toy", "1", needs_data=False)


def test_reproduce_merges_parts_and_resumes_them(tmp_path):
    quiet = {"say": lambda _: None, "progress": False}
    whole = _book(tmp_path / "whole", "")
    run_reproduce(tmp_path / "whole", experiments=[whole], runner=fake_runner(), **quiet)
    expected = read_results(tmp_path / "whole" / "data" / "results" / "toy.csv")

    root = tmp_path / "split"
    split = _book(root, "parts: {alpha: {1: 3, 2: 2}}\n")
    with pytest.raises(RuntimeError, match="part 1 failed"):
        run_reproduce(root, experiments=[split], jobs=1, runner=fake_runner(fail={(2, 1)}),
                      **quiet)
    partial = root / "_build" / "reproduce" / "toy.csv"
    assert (cell_id(expand(load_spec(split.sweep(root)))[1]), 1, 2) not in completed_parts(
        partial)
    calls: list = []
    state = run_reproduce(root, experiments=[split], runner=fake_runner(calls), **quiet)
    assert (2, 1, 2) in calls and len(calls) < 6  # only what the stopped run left
    table = read_results(root / "data" / "results" / "toy.csv")
    assert values(table).equals(values(expected))
    assert list(table.columns) == list(expected.columns)
    assert state["experiments"]["toy"]["cells"] == 3


def test_reproduce_orders_parts_by_their_share_of_the_cell(tmp_path):
    root = tmp_path / "book"
    split = _book(root, "parts: {alpha: {1: 4}}\n")
    cells = expand(load_spec(split.sweep(root)))
    results = root / "data" / "results"
    results.mkdir(parents=True)
    pd.DataFrame({"cell": [cell_id(c) for c in cells],  # alpha 1 was the longest cell
                  "cell_runtime_s": [40.0, 30.0, 5.0]}).to_csv(results / "toy.csv")
    calls: list = []
    run_reproduce(root, experiments=[split], jobs=1, runner=fake_runner(calls),
                  say=lambda _: None, progress=False)
    assert calls == [(2, 0, 1), *((1, k, 4) for k in range(4)), (3, 0, 1)]


@pytest.mark.slow
def test_a_real_cell_notebook_in_two_parts_gives_the_whole_cells_rows(tmp_path):
    """The colored-noise cell on its synthetic smoke dataset (no data file), one draw a point:
    whole, and as two papermill runs of its notebook."""
    path = ROOT / "notebooks" / "sweeps" / "colored.yaml"
    spec = load_spec(path, smoke=True)
    small = {**spec.fixed, "draws": 1}
    whole = type(spec)(spec.experiment, spec.notebook, spec.seed, spec.grid, small,
                       spec.cases, spec.source, 1)
    split = type(spec)(spec.experiment, spec.notebook, spec.seed, spec.grid, small,
                       spec.cases, spec.source, 2)
    one = run_sweep(whole, results_path=tmp_path / "whole.csv", progress=False)
    two = run_sweep(split, results_path=tmp_path / "split.csv", progress=False)
    assert len(one) == len(two) > 2
    pd.testing.assert_frame_equal(values(read_results(tmp_path / "split.csv")),
                                  values(read_results(tmp_path / "whole.csv")))
    assert (tmp_path / "split.csv").read_text().count("\n") == len(one) + 1
