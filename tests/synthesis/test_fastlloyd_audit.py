"""FastLloyd's audit (``dpkmeans.synthesis.fastlloyd_audit``, book chapter 12): the transcript
statistic scores FastLloyd's released vector (the exact offsets and counts, the whitening, the
noise scale), the shared-seed combination is exact as published and noisy when corrected, the
audit on a few trials, and the invariants of the committed ``data/results/fastlloyd_audit.csv``
(one committed row, the cheapest, computed again from its own columns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.engine.relative import radius_statistics
from dpkmeans.study.sweep import BOOKKEEPING, load_spec
from dpkmeans.study.transcript import exact_statistics
from dpkmeans.synthesis import fastlloyd_audit as audit

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results" / "fastlloyd_audit.csv"
SWEEP = ROOT / "notebooks" / "sweeps" / "fastlloyd_audit.yaml"


def _run(variant: str, trials: int, factor: float = 1.0, seed: int = 3):
    X0, X1, _ = audit.pair()
    config = audit.config_of(variant, factor)
    return X0, X1, config, audit.fits(X0, config, np.random.SeedSequence(seed), trials)


def test_the_record_has_the_full_sensitivity_in_the_first_release():
    X0, X1, _ = audit.pair()
    config = audit.config_of("fastlloyd")
    r = config.assign.radius(0, config)
    (s0, n0, _), (s1, n1, _) = (radius_statistics(X, audit.START, r) for X in (X0, X1))
    white = config.step.whitening(config, 0)
    shift = (np.c_[s1[0], n1[0]] - np.c_[s0[0], n0[0]]) * white
    assert n1[0].tolist() == [n0[0, 0] + 1, n0[0, 1]]  # the record joins the midpoint's cluster
    assert np.linalg.norm(shift) == pytest.approx(1.0, rel=1e-12)  # the release's sensitivity


@pytest.mark.parametrize("variant", ["fastlloyd", "fastlloyd-laplace"])
def test_the_transcript_is_scored_on_the_released_vector(variant):
    """On D, (released - exact) / scale of every element and iteration has the noise's mean 0
    and sd (1 for the Gaussian, sqrt 2 for the Laplace scale): the exact statistics are the
    engine's offsets and counts, whitened as the release whitens them."""
    X0, _, config, result = _run(variant, 4000)
    sd = 1.0 if variant == "fastlloyd" else np.sqrt(2.0)
    for t, (noisy, scale) in enumerate(result.release_history):
        entering = result.initial_centroids if t == 0 else result.history[t - 1]
        white = config.step.whitening(config, t)
        exact = exact_statistics(X0, config, entering, t) * white
        z = (noisy * white - exact) / scale
        assert np.abs(z.mean(axis=0)).max() < 0.1, t
        np.testing.assert_allclose(z.std(axis=0), sd, rtol=0.06)


def test_the_pure_form_s_transcript_loss_stays_within_its_epsilon():
    X0, X1, config, result = _run("fastlloyd-laplace", 2000)
    loss = audit.transcript_statistic(result, X0, X1)
    assert np.abs(loss).max() <= config.epsilon * (1 + 1e-9)
    assert loss.max() > 0.4 * config.epsilon  # the first release reaches its own budget


def test_the_shared_seed_makes_the_combination_exact():
    X0, _, config, result = _run("as-published", 500)
    white = config.step.whitening(config, 0)
    exact = exact_statistics(X0, config, result.initial_centroids, 0) * white
    value = audit.shared_seed_statistic(result)
    np.testing.assert_allclose(value, exact[:, 0, -1] - exact[:, 0, 0], rtol=0, atol=1e-9)
    _, _, _, corrected = _run("fastlloyd", 500)
    assert audit.shared_seed_statistic(corrected).std() > 1.0  # two independent noises


def test_a_planted_overspend_scales_the_schedule_and_keeps_the_claim():
    base, planted = audit.config_of("fastlloyd"), audit.config_of("fastlloyd", 10.0)
    np.testing.assert_allclose(planted.schedule, 10.0 * base.schedule)
    assert base.target is not None and planted.target is None
    with pytest.raises(ValueError, match="variant"):
        audit.config_of("fastlloyd-gaussian")


def test_the_audit_catches_the_published_code_on_a_few_trials():
    rows = audit.audit_rows("as-published", trials=200)
    assert not rows["ledger_is_private"].any()
    flaw = rows.set_index("statistic").loc[audit.COMBINATION]
    assert flaw["lower_bound"] > audit.EPSILON and flaw["verdict"] == "violation detected"
    corrected = audit.audit_rows("fastlloyd", trials=200, factors=(1.0, 1000.0))
    assert corrected["ledger_is_private"].all()
    at_1 = corrected[corrected["factor"] == 1.0]
    assert set(at_1["statistic"]) == {audit.TRANSCRIPT, audit.COMBINATION}
    assert (at_1["verdict"] == "consistent").all()
    planted = corrected[corrected["factor"] == 1000.0].iloc[0]
    assert planted["verdict"] == "violation detected"


def test_the_sweep_runs_every_variant_at_the_module_trials():
    spec = load_spec(SWEEP)
    assert spec.grid == {"variant": list(audit.VARIANTS)}
    assert spec.fixed == {"base_seed": audit.BASE_SEED, "trials": audit.TRIALS}


# --- the committed results ------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    if not RESULTS.exists():
        pytest.skip(f"{RESULTS.name} is not committed")
    return pd.read_csv(RESULTS)


def test_the_committed_file_has_every_row(committed):
    gaussian = [("fastlloyd", f) for f in audit.FACTORS]
    laplace = [("fastlloyd-laplace", f) for f in audit.FACTORS]
    transcript = committed[committed["statistic"] == audit.TRANSCRIPT]
    assert sorted(zip(transcript["variant"], transcript["factor"])) == sorted(
        [*gaussian, *laplace, ("as-published", 1.0)])
    flaw = committed[committed["statistic"] == audit.COMBINATION]
    assert sorted(flaw["variant"]) == ["as-published", "fastlloyd"]
    assert (committed["trials"] == audit.TRIALS).all()


def test_the_committed_verdicts(committed):
    claim = committed["claimed_epsilon"]
    violated = committed["verdict"] == "violation detected"
    assert (violated == (committed["lower_bound"] > claim)).all()
    assert (committed["ledger_is_private"] == (committed["variant"] != "as-published")).all()
    corrected = committed[committed["variant"] != "as-published"]
    # a corrected form as built: nothing found; its planted loss of 1000 times: caught
    assert not violated[corrected.index[corrected["factor"] == 1.0]].any()
    assert violated[corrected.index[corrected["factor"] == 1000.0]].all()
    # the published code: its shared seed caught, far above the claim; the corrected
    # algorithm's same statistic below it
    flaw = committed[committed["statistic"] == audit.COMBINATION].set_index("variant")
    assert flaw.loc["as-published", "lower_bound"] > 5 * audit.EPSILON
    assert flaw.loc["fastlloyd", "lower_bound"] < audit.EPSILON
    # a bound never exceeds the ledger's epsilon of a private run (the audit is sound)
    private = committed[committed["ledger_is_private"]]
    assert (private["lower_bound"] <= private["true_epsilon"]).all()


@pytest.mark.slow
def test_the_committed_as_published_rows_are_computed_again(committed):
    """The cheapest cell (one run a side): both of its rows, from their own columns."""
    stored = committed[committed["variant"] == "as-published"].reset_index(drop=True)
    first = stored.iloc[0]
    fresh = audit.audit_rows("as-published", int(first["trials"]),
                             base_seed=int(first["base_seed"]))
    assert len(fresh) == len(stored)
    for column in fresh.columns:
        if column in BOOKKEEPING or column == "seconds":
            continue
        if pd.api.types.is_float_dtype(fresh[column]):
            np.testing.assert_allclose(fresh[column], stored[column], rtol=1e-9, atol=1e-12)
        else:
            assert fresh[column].astype(str).tolist() == stored[column].astype(str).tolist()
