"""Seeds are written as exact integers: a results file whose rows do not all have a seed (a
reference or gamma row) used to read the column as floats and write it to 12 significant
digits, so a row's seed could not be read back from the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from dpkmeans.study import sweep
from dpkmeans.study.shared import Point
from dpkmeans.study.sweep import FLOAT_FORMAT, append_rows, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
SEED = 2**62 + 12345  # a float64 cannot hold it: 2**62 + 12344 and + 12346 share its double
INTEGER = re.compile(r"[0-9]+")


#: A cell notebook's parameters cell (the sweep checks a cell's parameters against it).
CELL = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [],
                   "execution_count": None,
                   "source": "case = 'one'\nbase_seed = 0\nseed = None\noutput_csv = None\n"}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _sweep(folder: Path, cases: list[str]) -> Path:
    """A sweep file of one grid parameter, ``case``, and its cell notebook (whose execution
    the tests replace: :func:`_cells_write`)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "exact.yaml"
    (sweep.sweep_base(spec) / "cell.ipynb").write_text(json.dumps(CELL))
    spec.write_text("experiment: exact\nnotebook: cell.ipynb\nseed: 1\nfixed: {base_seed: 7}\n"
                    f"grid:\n  case: {cases}\ncases:\n"
                    + "".join(f"  {c}: {{}}\n" for c in cases))
    return spec


def _cells_write(monkeypatch, evaluate) -> None:
    """Each cell runs as its notebook would, without papermill: ``evaluate(params)`` is the
    study's frame, written as the cell notebook writes it (``rows.to_csv(output_csv,
    index=False)``); the sweep then reads that file back as it does for any cell."""
    def execute(notebook, executed, params):
        evaluate(params).to_csv(params["output_csv"], index=False)
    monkeypatch.setattr(sweep, "execute_cell_notebook", execute)


def test_a_seed_column_with_missing_values_keeps_every_digit(tmp_path):
    frame = sweep.results_frame([{"algorithm": "a", "point_seed": SEED, "f": 0.25},
                           {"algorithm": "reference", "f": 1.0}])
    assert frame["point_seed"].iloc[0] == SEED
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    back = sweep.read_results(path)
    assert back["point_seed"].iloc[0] == SEED and pd.isna(back["point_seed"].iloc[1])
    assert back["f"].tolist() == [0.25, 1.0]  # floats stay floats


def test_appending_rows_with_a_new_seed_column_writes_integers(tmp_path):
    """A results file that starts with rows that have no seed (DI's gamma cell) and then gets
    seeded rows is rewritten with the wider header: every seed is still exact, and the other
    columns are written as before."""
    path = tmp_path / "results.csv"
    append_rows(path, pd.DataFrame({"cell": ["g"], "f": [0.1 + 0.2], "n": [3.0]}))
    append_rows(path, pd.DataFrame({"cell": ["s", "s"], "f": [0.5, 2.0], "n": [4.0, 5.0],
                                    "point_seed": [SEED, SEED - 1]}))
    append_rows(path, pd.DataFrame({"cell": ["t"], "f": [1.5], "n": [6.0],
                                    "point_seed": [SEED + 1]}))
    text = pd.read_csv(path, dtype=str)
    assert text["point_seed"].tolist()[1:] == [str(SEED), str(SEED - 1), str(SEED + 1)]
    assert text["f"].tolist() == [FLOAT_FORMAT % (0.1 + 0.2), "0.5", "2", "1.5"]
    assert text["n"].tolist() == ["3", "4", "5", "6"]


@pytest.mark.parametrize("driver", ["sweep", "reproduce"])
def test_a_cell_with_a_reference_row_writes_exact_seeds(tmp_path, monkeypatch, driver):
    """Through the sweep (append_rows) and through make reproduce (partial file, then the
    results file): the seeds of a cell whose reference row has none are written whole, and
    so are those of a cell joined after a cell with no seed column at all."""
    seeds = {"one": SEED, "two": SEED + 2}

    def evaluate(params):
        if params["case"] == "none":
            return pd.DataFrame([{"algorithm": "gamma", "f": 0.25}])
        return sweep.results_frame([
            {"algorithm": "x", "point_seed": seeds[params["case"]], "f": 0.5},
            {"algorithm": "reference", "f": 1.0}])

    _cells_write(monkeypatch, evaluate)
    cases = ["none", "one", "two"]
    if driver == "sweep":
        out = tmp_path / "results.csv"
        run_sweep(load_spec(_sweep(tmp_path, cases)), results_path=out, progress=False)
    else:
        from dpkmeans.reproduce import Experiment, run_reproduce

        _sweep(tmp_path / "notebooks" / "sweeps", cases)
        run_reproduce(tmp_path, experiments=(Experiment("exact", "1", needs_data=False),),
                      jobs=1, say=lambda s: None, progress=False)
        out = tmp_path / "data" / "results" / "exact.csv"
    text = pd.read_csv(out, dtype=str)
    assert text["point_seed"].dropna().tolist() == [str(SEED), str(SEED + 2)]


def test_an_apdp_cell_writes_the_seed_its_study_derives(tmp_path, monkeypatch):
    """APDP's cell (its points and the reference row, which has no seed), through the CSV the
    cell notebook writes and the sweep's results file: each row's seed, read back, is the
    seed of its point."""
    from dpkmeans.data import DataError
    from dpkmeans.papers.apdp import study

    try:
        study.load_case("blood")
    except DataError:
        pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
    _cells_write(monkeypatch, lambda params: study.evaluate_cell(
        params["case"], base_seed=params["base_seed"], inits=2, runs=2, epsilons=(0.5, 1.0),
        algorithms=("apdp",)))
    out = tmp_path / "results.csv"
    run_sweep(load_spec(_sweep(tmp_path, ["blood"])), results_path=out, progress=False)
    text = pd.read_csv(out, dtype=str)
    seeded = text[text["point_seed"].notna()]
    assert len(seeded) == 2 and text["point_seed"].isna().sum() == 1
    for _, row in seeded.iterrows():
        point = Point(row["case"], row["algorithm"], float(row["epsilon"]))
        assert int(row["point_seed"]) == study.point_seed(7, point)


def test_every_committed_point_seed_is_an_integer():
    """Every results file that records point seeds writes them as integers (no exponent, no
    rounding), so any row's seed can be compared with the one its study derives."""
    files = [p for p in sorted(RESULTS.glob("*.csv"))
             if "point_seed" in pd.read_csv(p, nrows=0).columns]
    assert {p.stem for p in files} >= {"apdp", "di"}
    for path in files:
        seeds = pd.read_csv(path, usecols=["point_seed"], dtype=str)["point_seed"].dropna()
        bad = [s for s in seeds if not INTEGER.fullmatch(s) or int(s) >= 2**63]
        assert not bad, f"{path.name}: {len(bad)} of {len(seeds)} seeds, e.g. {bad[:3]}"


def test_every_committed_apdp_seed_is_its_points_seed():
    """apdp.csv's seeds, read as integers, are the seeds of the rows' points."""
    from dpkmeans.papers.apdp import study

    table = pd.read_csv(RESULTS / "apdp.csv", dtype=str)
    table = table[table["point_seed"].notna()]
    wrong = [i for i, row in table.iterrows()
             if int(row["point_seed"]) != study.point_seed(
                 int(row["base_seed"]), Point(row["case"], row["algorithm"],
                                              float(row["epsilon"])))]
    assert len(table) and not wrong, f"{len(wrong)} of {len(table)} rows: {wrong[:5]}"
