"""The audits with power compute their statistic faster without moving a bit (book chapter 6,
"Auditing an algorithm"; docs/design.md, "Exact assignment and a fixed
order of additions"): the transcript's exact statistics are the engine's query for every
replica, and the event rates of the trials estimates are the means of the events' indicators.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.compute.backends import get_backend
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.privacy.sensitivity import box_midpoint
from dpkmeans.study.sweep import FLOAT_FORMAT
from dpkmeans.study.transcript import exact_statistics
from dpkmeans.study.uniform import event_counts, loss_thresholds
from dpkmeans.synthesis import tightness

ROOT = Path(__file__).resolve().parents[2]


def _engine_query(X: np.ndarray, config: DPLloydConfig, centroids: np.ndarray) -> np.ndarray:
    """The exact statistics through the backend's own query (its search for equal centroid
    sets included), centred as the loop centres them: the reference."""
    backend = get_backend("memory")
    data, _, _ = backend.prepare(X, config.bounds)
    sums, counts = backend.stats(data, centroids, scores=config.scores)
    centre = box_midpoint(config.bounds) if config.centred else np.zeros(config.bounds[0].size)
    centre[:config.numeric_offset] = 0.0
    if config.centred:
        sums = sums - counts[..., None] * centre
    return np.concatenate([sums, counts[..., None]], axis=2)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", ["dplloyd", "dp-kccm", "di", "colored", "DPKPrototypes"])
def test_exact_statistics_are_the_engines_query_at_every_iteration(name):
    config = tightness._config(name)
    X0, X1, _ = tightness._pair(config.neighbour, config.modes is not None)
    R = 200
    result = run(X1, config, 11, replicas=R, record_history=True,
                 initial_centroids=tightness._start(config, R))
    for t in range(len(result.release_history)):
        entering = result.initial_centroids if t == 0 else result.history[t - 1]
        for X in (X0, X1):
            assert _same_bits(exact_statistics(X, config, entering),
                              _engine_query(X, config, entering)), (name, t)


def test_exact_statistics_on_ties_shared_and_partly_shared_centroids():
    """Centroids on top of each other, records half-way between two centroids, replicas that
    share their centroids with some others (the engine computes those once) or with all."""
    config = tightness._config("dp-kccm")  # k = 6 on [-1, 1]
    X0, X1, _ = tightness._pair(config.neighbour, False)
    X = np.r_[X1, [[0.0], [0.5], [-0.25]]]
    rng = np.random.default_rng(3)
    grid = np.linspace(-1.0, 1.0, 9)  # records sit on it and half-way between its points
    C = rng.choice(grid, size=(300, config.n_clusters, 1))
    C[::3] = C[0]  # a third of the replicas share one set
    C[1::7, 1] = C[1::7, 0]  # a centroid equal to one of lower index
    for centroids in (C, np.broadcast_to(C[:1], C.shape).copy(), C[:1], C[5:6]):
        for data in (X0, X, X1):
            assert _same_bits(exact_statistics(data, config, centroids),
                              _engine_query(data, config, centroids))


def test_event_counts_are_the_sums_of_the_indicators():
    """Counts from one sort: the counts the indicators give, scores on the thresholds
    included."""
    thresholds = loss_thresholds(1.0)
    rng = np.random.default_rng(4)
    s0 = np.r_[rng.choice(thresholds, 500), -rng.choice(thresholds, 300),
               rng.laplace(0.0, 1.0, 2001)]
    above, below = event_counts(s0, thresholds)
    assert above.tolist() == (s0[:, None] >= thresholds).sum(axis=0).tolist()
    assert below.tolist() == (s0[:, None] <= -thresholds).sum(axis=0).tolist()


@pytest.mark.parametrize("name", tightness.ALGORITHMS[:-1])  # the DP-Lloyd ones
def test_fit_claim_is_the_claim_the_fit_is_audited_against(name):
    fit = tightness.algorithm_scores(name, "fit", 4)
    claimed, delta = tightness.fit_claim(name)
    assert (claimed, delta) == (fit.claimed_epsilon, fit.delta)
    assert type(claimed) is float and type(delta) is type(fit.delta)


def test_the_power_study_runs_no_audit_it_cannot_afford(monkeypatch):
    """The trials an overspend needs come from the exact loss distribution, without a fit; an
    audit runs only when they are finite and at most DETECT_MOST, as the committed rows say
    (silhouette's 1.1 times, whose noisy silhouettes are not scored, can never be exposed)."""
    committed = pd.read_csv(ROOT / "data" / "results" / "audit_power.csv")

    def no_fit(*args, **kwargs):
        raise AssertionError("a fit was simulated")

    monkeypatch.setattr(tightness, "algorithm_scores", no_fit)
    row = tightness.power_rows("silhouette", factors=(1.1,)).iloc[0]
    assert row["trials_needed"] == float("inf") and row["detect_trials"] == 0
    want = committed[(committed["algorithm"] == "silhouette")
                     & (committed["factor"] == 1.1)].iloc[0]
    for column in ("trials_needed", "detect_trials", "delta", "claimed_epsilon"):
        got = FLOAT_FORMAT % row[column] if isinstance(row[column], float) else str(row[column])
        stored = want[column]
        stored = FLOAT_FORMAT % stored if isinstance(stored, float) else str(stored)
        assert got == stored, column
    run = committed[committed["detect_trials"] > 0]
    assert (run["detect_trials"] == run["trials_needed"]).all()
    for name, part in committed.groupby("algorithm"):
        affordable = np.isfinite(part["trials_needed"]) & (
            part["trials_needed"] <= tightness.DETECT_MOST[name])
        assert ((part["detect_trials"] > 0) == affordable).all(), name


def _fit_rows(pair_epsilon: float) -> pd.DataFrame:
    return pd.DataFrame({
        "target": "dplloyd", "level": "fit", "dimension": [1, 1, 10, 1],
        "delta": [1e-2, 1e-3, 1e-3, 0.0], "claimed_epsilon": [0.5, 0.7, 0.3, 1.0],
        "pair_epsilon": [0.5, pair_epsilon, 0.2, 0.9], "ratio": [0.9, 0.8, 0.5, 0.7]})


def test_fit_at_reads_the_one_dimensional_fit_at_its_delta():
    point = tightness.fit_at("dplloyd", 1e-3, _fit_rows(0.7))
    assert point == {"claim": 0.7, "pair": 0.7, "ratio": 0.8}
    with pytest.raises(ValueError, match="off the accountant's"):
        tightness.fit_at("dplloyd", 1e-3, _fit_rows(0.6))
    with pytest.raises(ValueError, match="at delta = 1e-06"):
        tightness.fit_at("dplloyd", 1e-6, _fit_rows(0.7))
    with pytest.raises(ValueError, match="no committed audit of 'apdp'"):
        tightness.fit_at("apdp", 1e-3, _fit_rows(0.7))


def _release_rows(needed: float) -> pd.DataFrame:
    return pd.DataFrame({
        "target": "colored", "level": "release", "target_met": [True, False, "False"],
        "claimed_epsilon": 1.0, "pair_epsilon": 1.0, "trials_needed": [10.0, 3e5, needed],
        "trials": [1e5, 2e5, 1e5]})


def test_missed_releases_counts_the_misses_and_the_trials_they_need():
    missed = tightness.missed_releases("colored", _release_rows(4e5))
    assert missed == {"missed": 2, "audited": 3, "needed_lo": 3e5, "needed_hi": 4e5,
                      "trials": 2e5}
    with pytest.raises(ValueError, match="at any trial count"):
        tightness.missed_releases("colored", _release_rows(np.inf))
    with pytest.raises(ValueError, match="no release audit misses"):
        tightness.missed_releases("colored", _release_rows(4e5).assign(target_met=True))


def test_the_committed_curve_gives_every_chapters_fit_and_releases():
    for target in ("dplloyd", "dp-kccm", "apdp"):
        point = tightness.fit_at(target)
        assert 0 < point["pair"] <= point["claim"] * 1.01
    for target in ("dp-kccm", "colored"):
        assert tightness.missed_releases(target)["missed"] >= 1
