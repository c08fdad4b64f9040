"""The power study records the event each of its estimates rests on (book chapter 6, "Auditing
an algorithm", section "How large an overspend an audit exposes"), so that the table's order
can be explained from its own columns: where a larger overspend needs more trials than a
smaller one, its event's measured margin over the claim is smaller, or its event is rarer than
the study's floor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.study.uniform import loss_thresholds, trials_needed
from dpkmeans.synthesis import tightness

ROOT = Path(__file__).resolve().parents[2]
POWER = ROOT / "data" / "results" / "audit_power.csv"


def _scores(n: int, budget: float, seed: int) -> tightness.Scores:
    """The privacy loss of a Laplace release of budget ``budget`` on its worst-case pair,
    ``n`` trials a side, audited against a claim of 1."""
    rng = np.random.default_rng(seed)
    y0, y1 = rng.laplace(0.0, 1.0 / budget, n), rng.laplace(1.0, 1.0 / budget, n)

    def loss(y: np.ndarray) -> np.ndarray:
        return budget * (np.abs(y - 1.0) - np.abs(y))

    return tightness.Scores("toy", "fit", 1.0, 0.0, "loss", "0 vs 1", loss(y0), loss(y1),
                            float("nan"), 1.0)


def test_the_estimate_names_its_event_and_is_the_trials_of_its_measured_rates():
    fit = _scores(40_000, 1.5, seed=1)
    thresholds = loss_thresholds(1.0)
    found = tightness._split_estimate(fit, thresholds)
    assert set(found) == {"trials_needed", *tightness.EVENT_COLUMNS}
    half = fit.scores0.size // 2
    # the event's counts on the measuring half, recounted from its name
    side, shown = found["event"].split()[1], abs(float(found["event"].split()[2]))
    tau = thresholds[np.argmin(np.abs(thresholds - shown))]  # the grid value it names
    if side == ">=":
        favoured, other = fit.scores0[half:] >= tau, fit.scores1[half:] >= tau
    else:
        favoured, other = fit.scores1[half:] <= -tau, fit.scores0[half:] <= -tau
    assert (found["measured_favoured"], found["measured_other"]) == (favoured.sum(),
                                                                     other.sum())
    b, a = favoured.mean(), other.mean()
    assert found["measured_log_ratio"] == pytest.approx(np.log(b / a), rel=1e-12)
    again = trials_needed([b], [a], 1.0, events=2 * thresholds.size, confidence=0.99,
                          power=tightness.POWER, estimated_from=half,
                          min_count=tightness.EVENT_FLOOR)
    assert found["trials_needed"] == again
    assert found["measured_log_ratio"] > 1.0 and np.isfinite(found["trials_needed"])


def test_a_release_within_its_claim_names_no_event():
    found = tightness._split_estimate(_scores(20_000, 0.9, seed=2), loss_thresholds(1.0))
    assert found["trials_needed"] == float("inf")
    assert all(pd.isna(found[c]) for c in tightness.EVENT_COLUMNS)


def test_the_committed_table_explains_its_own_order():
    """Every reversal of the committed table (a larger overspend needing more trials than the
    smaller one before it) comes with its reason in the same row: a smaller measured margin
    over the claim, or an event rarer than the floor on the measuring half."""
    power = pd.read_csv(POWER)
    assert set(tightness.EVENT_COLUMNS) <= set(power.columns)
    simulated = power["largest_loss"] > power["claimed_epsilon"]
    finite = np.isfinite(power["trials_needed"])
    assert power.loc[finite, "measured_log_ratio"].gt(power.loc[finite, "claimed_epsilon"]).all()
    assert power.loc[~simulated, list(tightness.EVENT_COLUMNS)].isna().all().all()
    reversals = 0
    for _, part in power.groupby("algorithm", sort=False):
        part = part.sort_values("factor")
        for (_, before), (_, after) in zip(part.iloc[:-1].iterrows(), part.iloc[1:].iterrows()):
            if not after["trials_needed"] > before["trials_needed"]:
                continue
            reversals += 1
            if np.isfinite(after["trials_needed"]):
                margin = after["measured_log_ratio"] - after["claimed_epsilon"]
                assert margin < before["measured_log_ratio"] - before["claimed_epsilon"]
            elif pd.notna(after["measured_other"]):
                assert (min(after["measured_favoured"], after["measured_other"])
                        < tightness.EVENT_FLOOR
                        or after["measured_log_ratio"] <= after["claimed_epsilon"])
    assert reversals > 0  # the table the book explains has them
