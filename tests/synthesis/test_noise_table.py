"""The noise-per-coordinate table (book chapters 3 and 12): shape, and that the tight
accountings need less noise than basic composition at the same (epsilon, delta)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import FitInputs, build_at, choice
from dpkmeans.engine.equal_privacy import tight_epsilon
from dpkmeans.synthesis.noise_table import COLUMNS, noise_per_coordinate, sum_coordinate_sd

SD_COLUMNS = [column for column, _ in COLUMNS]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return noise_per_coordinate()


def test_shape_and_columns(table: pd.DataFrame) -> None:
    assert table.shape == (6, 3 + 3 + 2)
    assert list(table.columns) == ["algorithm", "d", "T", *SD_COLUMNS,
                                   "Laplace PLD / pure", "Gaussian / pure"]
    assert table[["algorithm", "d"]].values.tolist() == [
        [a, d] for a in ("dplloyd", "dplloyd-impr") for d in (2, 10, 50)]
    assert (table.loc[table["algorithm"] == "dplloyd", "T"] == 7).all()
    assert (table[SD_COLUMNS] > 0).all().all()


def test_ratios_are_the_columns_divided(table: pd.DataFrame) -> None:
    pure = table[SD_COLUMNS[0]]
    np.testing.assert_allclose(table["Laplace PLD / pure"], table[SD_COLUMNS[1]] / pure)
    np.testing.assert_allclose(table["Gaussian / pure"], table[SD_COLUMNS[2]] / pure)


def test_tight_accountings_need_less_noise(table: pd.DataFrame) -> None:
    # PLD composition of the same Laplace releases never needs more noise than basic
    # composition; the Gaussian twin needs less, and less the larger d.
    assert (table["Laplace PLD / pure"] <= 1.0).all()
    assert (table["Gaussian / pure"] < 1.0).all()
    for _, rows in table.groupby("algorithm"):
        assert rows.sort_values("d")["Gaussian / pure"].is_monotonic_decreasing


def test_gaussian_is_about_a_third_at_d10(table: pd.DataFrame) -> None:
    row = table[(table["algorithm"] == "dplloyd") & (table["d"] == 10)].iloc[0]
    assert row["T"] == 7
    assert row["Gaussian / pure"] < 0.4


def test_forms_meet_the_target_and_keep_t() -> None:
    entry = choice("dplloyd")
    inputs = FitInputs(5, 1.0, (np.zeros(10), np.ones(10)), max_iter=7, n_records=10**5)
    pure = entry.build(inputs)
    for form in ("laplace", "gaussian"):
        config = build_at(entry, inputs, 1e-6, form=form)
        assert config.iterations == pure.iterations
        assert tight_epsilon(config, 1e-6) <= 1.0 * (1 + 1e-9)


def test_pure_laplace_sd_is_sqrt2_times_the_scale() -> None:
    # [0, 1]^2 centred: Delta_1 = d r + 1 = 2; seven iterations at 1/7: b = 14.
    inputs = FitInputs(5, 1.0, (np.zeros(2), np.ones(2)), max_iter=7)
    sd = sum_coordinate_sd(choice("dplloyd").build(inputs))
    assert sd == pytest.approx(14 * np.sqrt(2), rel=1e-6)
