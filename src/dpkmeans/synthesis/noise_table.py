"""How much noise each accounting puts on one coordinate of a cluster sum, at one (epsilon,
delta): the pure Laplace fit (basic composition), its Laplace form calibrated by privacy-loss
distributions, and its Gaussian twin calibrated by Gaussian DP. Book chapter 3, "Tight
composition", and chapter 12, "Equal privacy".

Everything is read from planned calibrations (public: computed from the configurations
alone, without data); no noise is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import FitInputs, build_at, choice
from dpkmeans.api.plan import element_sd
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import iteration_releases

__all__ = ["COLUMNS", "noise_per_coordinate", "sum_coordinate_sd", "sum_sd"]

#: The three columns of standard deviations, in order: (column name, form of ``build_at``).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("pure Laplace, basic composition", "pure"),
    ("Laplace, PLD composition", "laplace"),
    ("Gaussian, tight composition (GDP)", "gaussian"),
)

#: Number of clusters of the configurations the table compares.
N_CLUSTERS = 5


def sum_sd(config: DPLloydConfig) -> np.ndarray:
    """Each iteration's planned per-coordinate standard deviation of the noise on the centred
    sums S_j, the largest over the clusters. Colored noise is drawn white on the whitened
    vector: coordinate i's standard deviation is the whitened one divided by whitening[i].

    Parameters
    ----------
    config : DPLloydConfig
        A DP-Lloyd configuration.

    Returns
    -------
    numpy.ndarray
        (T, d) standard deviations, in the units of the sums.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.synthesis.noise_table import sum_sd
    >>> sum_sd(DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.25])).round(3)
    array([[ 5.657,  5.657],
           [11.314, 11.314]])
    """
    d = config.bounds[0].size
    per_iteration = [sd[:, :d].max(axis=0) for sd in element_sd(config)]
    return np.array(per_iteration).reshape(config.iterations, d)


def sum_coordinate_sd(config: DPLloydConfig) -> float:
    """The standard deviation of the noise on sum coordinate 0 of cluster 0 in the first
    iteration of ``config``, from its planned calibration.

    Colored (whitened) noise is drawn on the whitened vector; its standard deviation there is
    divided by the whitening factor of that coordinate to give it in the data's units.

    Parameters
    ----------
    config : DPLloydConfig
        A DP-Lloyd configuration under add/remove adjacency.

    Returns
    -------
    float
        The standard deviation, in the units of the sum.

    Raises
    ------
    ValueError
        If no release of cluster 0 covers sum coordinate 0.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.synthesis.noise_table import sum_coordinate_sd
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> round(sum_coordinate_sd(config), 3)  # Laplace b = 2 / 0.5 = 4, sd = 4 sqrt(2)
    5.657
    """
    releases = iteration_releases(config, float(config.schedule[0]))
    covering = [r for r in releases
                if r.cluster == 0 and r.columns.start <= 0 < r.columns.stop]
    if not covering:
        raise ValueError("no release of cluster 0 covers sum coordinate 0")
    whitening = float(config.noise.whitening(config.bounds)[0])
    return float(config.noise.sd(covering[0].calibration.scale)) / whitening


def noise_per_coordinate(
    dims: Sequence[int] = (2, 10, 50),
    epsilon: float = 1.0,
    delta: float = 1e-6,
    iterations: int = 7,
    algorithms: Sequence[str] = ("dplloyd", "dplloyd-impr"),
    n_records: int = 10**5,
) -> pd.DataFrame:
    """The noise per sum coordinate of each algorithm at (``epsilon``, ``delta``) under three
    accountings, for data in the unit box [0, 1]^d.

    For each algorithm and d, the pure configuration is the catalogue's
    (``choice(name).build(FitInputs(5, epsilon, [0, 1]^d, max_iter=iterations,
    n_records=n_records))``), spending ``epsilon`` by basic composition; the Laplace form
    scales its schedule until the privacy-loss distribution of its releases reaches
    (``epsilon``, ``delta``); the Gaussian twin releases each cluster's (S_j, n_j) with
    colored Gaussian noise calibrated by Gaussian DP to the same target
    (:func:`dpkmeans.api.catalogue.build_at`).

    Parameters
    ----------
    dims : sequence of int, default (2, 10, 50)
        The dimensions d.
    epsilon : float, default 1.0
        The target epsilon of every form.
    delta : float, default 1e-6
        The target delta of the Laplace and Gaussian forms (> 0).
    iterations : int, default 7
        The iterations T of the algorithms that take T as given (an algorithm that chooses T
        itself, as DPLloyd-Impr does, may run fewer: column ``T``).
    algorithms : sequence of str, default ("dplloyd", "dplloyd-impr")
        Names of :data:`dpkmeans.api.catalogue.CATALOGUE` with a Laplace and a Gaussian form.
    n_records : int, default 100000
        The public number of records (DPLloyd-Impr's split reads it).

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, d): columns ``algorithm``, ``d``, ``T``, the three standard
        deviations of :data:`COLUMNS` and ``Laplace PLD / pure`` and ``Gaussian / pure``,
        their ratios to the pure one.

    Examples
    --------
    >>> from dpkmeans.synthesis.noise_table import noise_per_coordinate
    >>> table = noise_per_coordinate(dims=(10,), algorithms=("dplloyd",))
    >>> table[["algorithm", "d", "T"]].values.tolist()
    [['dplloyd', 10, 7]]
    >>> round(float(table["Gaussian / pure"].iloc[0]), 2)
    0.33
    """
    rows = []
    for name in algorithms:
        entry = choice(name)
        for d in dims:
            inputs = FitInputs(N_CLUSTERS, epsilon, (np.zeros(d), np.ones(d)),
                               max_iter=iterations, n_records=n_records)
            configs = {form: entry.build(inputs) if form == "pure"
                       else build_at(entry, inputs, delta, form=form)
                       for _, form in COLUMNS}
            row: dict[str, object] = {"algorithm": name, "d": int(d),
                                      "T": int(configs["pure"].iterations)}
            for column, form in COLUMNS:
                row[column] = sum_coordinate_sd(configs[form])
            pure = row[COLUMNS[0][0]]
            row["Laplace PLD / pure"] = row[COLUMNS[1][0]] / pure
            row["Gaussian / pure"] = row[COLUMNS[2][0]] / pure
            rows.append(row)
    return pd.DataFrame(rows)
