"""DP-KCCM's non-private reference rows say how many runs they made: each sphere-packing start
is run once, so ``runs = 1``, while the private points of the same sweep cell run ``runs = 50``
per start. The committed file says so, and so does a fresh sweep cell. Regression test: the
reference rows used to say ``runs = 50``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpkmeans.papers.dpkccm import study
from dpkmeans.study.sweep import expand, load_spec, run_cell

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_reference_rows_say_one_run_per_start():
    results = pd.read_csv(ROOT / "data" / "results" / "dpkccm.csv")
    reference = results[results["algorithm"] == study.REFERENCE]
    points = results[results["algorithm"] != study.REFERENCE]
    assert len(reference) == 42  # 6 datasets x (1 k on the epsilon axis + 6 on the k axis)
    assert (reference["runs"] == 1).all() and (reference["inits"] == 20).all()
    assert (points["runs"] == 50).all()


def test_the_study_labels_a_reference_row_with_one_run(data_available):
    data = study._datasets("blood", False)
    row = study.reference_point(data, 2, base_seed=1, dataset="blood", inits=3)
    assert row["runs"] == 1 and row["inits"] == 3


def test_a_sweep_cell_keeps_the_reference_rows_own_runs(data_available):
    spec = load_spec(ROOT / "notebooks" / "sweeps" / "dpkccm.yaml", smoke=True)
    params = next(p for p in expand(spec) if p["axis"] == "epsilon")

    def runner(_notebook, cell, _workdir):  # the cell notebook's work, without papermill
        data = study._datasets(cell["dataset"], False)
        return study.evaluate_points(data, [], dataset=cell["dataset"],
                                     base_seed=cell["base_seed"], inits=cell["inits"],
                                     runs=cell["runs"], reference_ks=[2])

    rows = run_cell(spec, params, runner)
    assert params["runs"] != 1
    assert rows["runs"].tolist() == [1]
