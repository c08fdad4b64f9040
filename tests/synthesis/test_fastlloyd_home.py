"""FastLloyd on its home ground (``dpkmeans.synthesis.fastlloyd_home``, book chapter 12):
the functions on a small mixture, the sweep against the module, and one committed row of
``data/results/fastlloyd_home.csv`` computed again from its own columns."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import CATALOGUE, forms
from dpkmeans.study.sweep import BOOKKEEPING, load_spec
from dpkmeans.synthesis import fastlloyd_home as home_ground
from dpkmeans.synthesis.leaderboard import Contender

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results" / "fastlloyd_home.csv"
SWEEP = ROOT / "notebooks" / "sweeps" / "fastlloyd_home.yaml"

pytest.importorskip("dp_accounting")


def _small(**kwargs: object) -> pd.DataFrame:
    """A cell on 600 records, 2 runs a point, at epsilon 1 (each epsilon calibrates the LSH
    tree's tight form once, a few seconds)."""
    return home_ground.evaluate_cell(3, 4, base_seed=1, runs=2, n_records=600,
                                     **{"epsilons": (1.0,), **kwargs})


def test_the_mixture_is_in_the_box_and_seeded_by_k_and_d():
    X = home_ground.mixture(3, 4, base_seed=1, n_records=500)
    assert X.shape == (500, 4)
    assert X.min() >= -1.0 and X.max() <= 1.0
    np.testing.assert_array_equal(X, home_ground.mixture(3, 4, base_seed=1, n_records=500))
    assert not np.array_equal(X, home_ground.mixture(2, 4, base_seed=1, n_records=500))
    assert home_ground.data_seed(1, 3, 4) != home_ground.data_seed(1, 4, 3)


def test_every_contender_is_a_form_of_its_algorithm():
    for c in home_ground.CONTENDERS:
        assert c.form in forms(CATALOGUE[c.algorithm], c.delta)
        assert home_ground.contender_of(c.algorithm, c.form) is c
    assert [c.name for c in home_ground.CONTENDERS][:2] == ["fastlloyd (gaussian)",
                                                             "fastlloyd-laplace (pure)"]
    with pytest.raises(ValueError, match="no contender"):
        home_ground.contender_of("fastlloyd", "laplace")


def test_a_form_the_algorithm_lacks_is_refused():
    with pytest.raises(ValueError, match="form must be one of"):
        home_ground.config_of(Contender("fastlloyd", "basic", 1e-6), 4, 1.0,
                              8, 10_000)


def test_the_cell_on_a_small_mixture():
    rows = _small()
    names = [c.name for c in home_ground.CONTENDERS]
    assert list(rows["contender"]) == [home_ground.REFERENCE, *names]
    assert rows["ratio_mean"].iloc[0] == pytest.approx(1.0)
    assert not rows["is_private"].iloc[0] and rows["is_private"].iloc[1:].all()
    private = rows.iloc[1:]
    assert (private["epsilon_at_delta"] <= private["epsilon"] * (1 + 1e-6)).all()
    assert (private["replicas"] == 2).all() and (rows["N"] == 600).all()
    assert (rows["nicv_mean"] > 0).all()
    np.testing.assert_allclose(rows["ratio_mean"], rows["nicv_mean"] / rows["nicv_reference"])
    assert (rows["ratio_ci_low"] <= rows["ratio_mean"]).all()
    again = _small()
    pd.testing.assert_frame_equal(rows.drop(columns="run_s"), again.drop(columns="run_s"))


def test_a_point_does_not_depend_on_its_cell():
    """A point computed alone equals the same point in a cell with other epsilons and
    contenders: its seeds derive from the point alone."""
    fastlloyd = home_ground.CONTENDERS[0]
    cell = _small(contenders=(fastlloyd,))
    X = home_ground.mixture(3, 4, base_seed=1, n_records=600)
    reference = float(home_ground.reference_nicv(X, 3, base_seed=1).mean())
    alone = home_ground.run_point(X, 3, 1.0, fastlloyd, reference, base_seed=1, runs=2)
    full = _small().set_index(["contender", "epsilon"])
    for key in ("nicv_mean", "ratio_mean", "point_seed", "epsilon_at_delta"):
        assert alone[key] == cell[key].iloc[1] == full.loc[(fastlloyd.name, 1.0), key]


def test_the_sweep_runs_the_modules_grid():
    spec = load_spec(SWEEP)
    assert spec.experiment == SWEEP.stem
    assert sorted(spec.grid["k"]) == sorted(home_ground.KS)
    assert sorted(spec.grid["d"]) == sorted(home_ground.DIMENSIONS)
    assert spec.fixed["runs"] == home_ground.RUNS


def _committed() -> pd.DataFrame:
    if not RESULTS.exists():
        pytest.skip(f"{RESULTS.name} is not committed")
    return pd.read_csv(RESULTS)


def test_the_committed_results_are_complete():
    table = _committed()
    expected = {(k, d, c.name, e) for k in home_ground.KS for d in home_ground.DIMENSIONS
                for c in home_ground.CONTENDERS for e in home_ground.EPSILONS}
    expected |= {(k, d, home_ground.REFERENCE, math.inf) for k in home_ground.KS
                 for d in home_ground.DIMENSIONS}
    got = list(zip(table["k"], table["d"], table["contender"], table["epsilon"]))
    assert len(got) == len(set(got)) and set(got) == expected
    private = table[table["is_private"].astype(bool)]
    assert (private["epsilon_at_delta"] <= private["epsilon"] * (1 + 1e-6)).all()
    assert (table["N"] == home_ground.N_RECORDS).all()


def _sampled_row() -> pd.Series:
    """A row at k = 2, d = 2 (cheap), drawn by a generator seeded with the file's bytes."""
    table = _committed()
    cheap = np.flatnonzero(((table["k"] == 2) & (table["d"] == 2)).to_numpy())
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(RESULTS.read_bytes()).digest()[:8],
                                               "big"))
    return table.iloc[int(rng.choice(cheap))]


@pytest.mark.slow
def test_a_sampled_committed_row_is_rebuilt_exactly():
    stored = _sampled_row()
    fresh = home_ground.rebuild_row(stored)
    compared = 0
    for column, value in fresh.items():
        if column in BOOKKEEPING:
            continue
        want = stored[column]
        if isinstance(value, str):
            assert value == want, column
        elif isinstance(value, (bool, np.bool_)):
            assert bool(value) == bool(want), column
        elif isinstance(value, (int, np.integer)):
            assert int(value) == int(want), column
        elif value is None:
            assert pd.isna(want), column
        else:
            assert float(value) == pytest.approx(float(want), rel=1e-9, abs=1e-12), column
        compared += 1
    assert compared >= 20
