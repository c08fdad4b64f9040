"""The audits with power: the uniform bound, the one-run bound, the transcript's privacy-loss
statistic and the tightness table's pieces (book chapter 6, "Auditing an algorithm")."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from dpkmeans.api.catalogue import choice
from dpkmeans.engine.loop import run
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.study.one_run import guess_and_count, one_run_lower_bound, one_run_p_value
from dpkmeans.study.transcript import element_log_ratio, transcript_log_ratios
from dpkmeans.study.uniform import (
    loss_thresholds,
    trials_needed,
    uniform_bound_at,
    uniform_lower_bound,
)
from dpkmeans.synthesis import tightness


# --- the uniform bound -------------------------------------------------------------------------
def _laplace_loss(eps: float, n: int, rng: np.random.Generator, factor: float = 1.0):
    """The privacy-loss statistic of Laplace counts 0 and 1 (noise for eps * factor)."""
    b = 1.0 / (eps * factor)
    y0, y1 = rng.laplace(0.0, b, n), rng.laplace(1.0, b, n)
    return [element_log_ratio("laplace", y, 0.0, 1.0, np.full(n, 1.0 / eps)) for y in (y0, y1)]


@pytest.mark.statistical
def test_the_uniform_bound_rarely_exceeds_a_true_claim():
    """Every event's bound holds at once with probability >= 99%: false alarms <= 1%."""
    rng = np.random.default_rng(5)
    bounds = [uniform_lower_bound(*_laplace_loss(1.0, 3000, rng), loss_thresholds(1.0),
                                  confidence=0.99).lower_bound for _ in range(300)]
    assert np.mean(np.array(bounds) > 1.0) <= 0.01
    assert np.median(bounds) > 0.6  # and it is not vacuous


def test_the_uniform_bound_comes_close_to_the_claim_and_exposes_an_overspend():
    rng = np.random.default_rng(6)
    honest = uniform_lower_bound(*_laplace_loss(1.0, 200_000, rng), loss_thresholds(1.0))
    assert 0.9 < honest.lower_bound <= 1.0 and honest.favours in ("D", "D'")
    assert honest.events == 2 * loss_thresholds(1.0).size
    cheat = uniform_lower_bound(*_laplace_loss(1.0, 200_000, rng, factor=1.5),
                                loss_thresholds(1.0))
    assert cheat.lower_bound > 1.0  # 1.5 times the budget: exposed


def test_the_uniform_bound_refuses_bad_input():
    ok = np.zeros(10)
    with pytest.raises(ValueError, match="thresholds"):
        uniform_lower_bound(ok, ok, [])
    with pytest.raises(ValueError, match="NaN"):
        uniform_lower_bound(np.r_[ok, np.nan], ok, [1.0])
    with pytest.raises(ValueError, match="confidence"):
        uniform_lower_bound(ok, ok, [1.0], confidence=1.0)
    with pytest.raises(ValueError, match="claimed_epsilon"):
        loss_thresholds(0.0)


def test_a_delta_lowers_the_bound():
    rng = np.random.default_rng(7)
    s0, s1 = _laplace_loss(1.0, 50_000, rng)
    pure = uniform_lower_bound(s0, s1, loss_thresholds(1.0)).lower_bound
    approx = uniform_lower_bound(s0, s1, loss_thresholds(1.0), delta=0.05).lower_bound
    assert approx < pure


def test_trials_needed_agrees_with_the_bound_it_inverts():
    b, a = np.array([0.5]), np.array([0.5 * np.exp(-1.25)])
    n = trials_needed(b, a, 1.0, events=92, power=0.9)
    assert np.isfinite(n)
    assert uniform_bound_at(int(n), b, a, events=92, delta=0.0, confidence=0.99, power=0.9) > 1.0
    assert uniform_bound_at(int(n * 0.9), b, a, events=92, delta=0.0, confidence=0.99,
                            power=0.9) <= 1.0
    assert trials_needed(b, np.array([0.5 * np.exp(-2.0)]), 1.0, events=92) < n  # larger gap
    assert trials_needed(b, np.array([0.5 * np.exp(-0.9)]), 1.0, events=92) == np.inf


# --- the one-run bound -------------------------------------------------------------------------
def test_the_one_run_p_value_is_the_binomial_tail_without_delta():
    q = special.expit(1.0)
    assert one_run_p_value(100, 40, 30, 1.0) == pytest.approx(stats.binom.sf(29, 40, q))
    assert one_run_p_value(100, 40, 30, 1.0, delta=1e-4) > one_run_p_value(100, 40, 30, 1.0)


def test_guess_and_count():
    scores = np.array([0.9, 0.1, 0.5, 0.8, 0.2, 0.3])
    included = np.array([True, False, True, False, False, True])
    # "in" for 0.9 and 0.8 (one right), "out" for 0.1 and 0.2 (both right)
    assert guess_and_count(scores, included, 4) == 3


@pytest.mark.statistical
def test_the_one_run_bound_rarely_exceeds_a_true_claim():
    """Randomised response on m canaries is exactly eps-DP per canary: the bound exceeds eps
    in at most about 1% of runs, and it comes near eps when the guesses are many."""
    eps, m, rng = 2.0, 2000, np.random.default_rng(8)
    bounds = []
    for _ in range(200):
        included = rng.random(m) < 0.5
        truthful = rng.random(m) < special.expit(eps)
        scores = np.where(truthful == included, 1.0, -1.0) + rng.random(m) * 1e-3
        bounds.append(one_run_lower_bound(scores, included, candidates=(500, 1000, 2000),
                                          confidence=0.99).lower_bound)
    assert np.mean(np.array(bounds) > eps) <= 0.02
    assert np.median(bounds) > 0.6 * eps


def test_the_one_run_bound_refuses_bad_candidates():
    with pytest.raises(ValueError, match="candidates"):
        one_run_lower_bound(np.zeros(4), np.zeros(4, bool), candidates=(5,))
    with pytest.raises(ValueError, match="same length"):
        one_run_lower_bound(np.zeros(4), np.zeros(3, bool), candidates=(2,))


# --- the transcript's statistic ----------------------------------------------------------------
BOX = (np.array([-1.0]), np.array([1.0]))


def _fit_pair():
    X0 = np.r_[-np.ones(5), np.ones(5)][:, None]
    return X0, np.r_[X0, [[1.0]]]


def test_the_transcript_loss_never_exceeds_the_ledger_and_reaches_it():
    config = tightness._config("dplloyd")
    X0, X1 = _fit_pair()
    result = run(X0, config, 3, replicas=4000, record_history=True,
                 initial_centroids=tightness._start(config, 4000))
    loss = transcript_log_ratios(result, X0, X1)
    assert loss.shape == (4000, config.iterations)
    total = loss.sum(axis=1)
    eps = result.ledger.total().epsilon
    assert total.max() <= eps + 1e-9 and total.max() == pytest.approx(eps, abs=1e-6)
    assert transcript_log_ratios(result, X0, X0).max() == 0.0  # identical data: no loss


def test_the_transcript_loss_of_one_continuous_release_is_the_laplace_loss():
    """With numpy's float Laplace the first release's loss is the textbook one, computed here
    from the noisy statistics and the scale the configuration calibrates."""
    from dataclasses import replace
    config = replace(tightness.first_release(tightness._config("dplloyd")), sampler="continuous")
    X0, X1 = _fit_pair()
    result = run(X0, config, 4, replicas=50, record_history=True,
                 initial_centroids=tightness._start(config, 50))
    noisy, scale = result.release_history[0]
    # cluster 1 (at +1): sum 5 vs 6 and count 5 vs 6; nothing else differs
    y, b = noisy[:, 1], np.broadcast_to(scale, noisy.shape)[:, 1]
    expected = ((np.abs(y - 6.0) - np.abs(y - 5.0)) / b).sum(axis=1)
    np.testing.assert_allclose(transcript_log_ratios(result, X0, X1)[:, 0], expected)


def test_without_record_history_there_is_no_transcript():
    config = tightness._config("dplloyd")
    result = run(_fit_pair()[0], config, 1)
    assert result.release_history == []
    with pytest.raises(ValueError, match="record_history"):
        transcript_log_ratios(result, *_fit_pair())


def test_the_prototypes_transcript_counts_the_modes():
    """k-prototypes' loss includes its exponential-mechanism modes: bounded by the ledger,
    and above the numeric part alone can reach."""
    config = tightness.first_release(tightness._config("DPKPrototypes"))
    X0, X1, _ = tightness._pair(config.neighbour, True)
    result = run(X0, config, 5, replicas=3000, record_history=True,
                 initial_centroids=tightness._start(config, 3000))
    loss = transcript_log_ratios(result, X0, X1)[:, 0]
    eps = result.ledger.total().epsilon
    assert loss.max() <= eps + 1e-9
    assert loss.max() > config.schedule[0] + 1e-6  # the modes' share shows


# --- the table's pieces ------------------------------------------------------------------------
def test_planted_and_first_release():
    config = tightness._config("apdp")
    assert tightness.planted(config, 1.5).epsilon == pytest.approx(1.5 * config.epsilon)
    assert tightness.planted(config, 1.0) is config
    first = tightness.first_release(config)
    assert first.schedule.tolist() == config.schedule[:1].tolist()


def test_every_corrected_algorithm_and_mechanism_is_a_target():
    from dpkmeans.api.catalogue import choices, loop_choices
    outside = {n for n, c in choices().items() if int(c.chapter) == 12}  # chapter 12 audits
    assert outside == {"lsh", "balcan", "fastlloyd", "fastlloyd-laplace"}
    assert set(loop_choices()) | {"DPKPrototypes"} | outside <= set(tightness.targets())
    assert {t[:-len(tightness.TWIN)] for t in tightness.TWINS} | {"silhouette"} == {
        n for n in tightness.ALGORITHMS[:-1] if tightness._config(n).neighbour == "add/remove"
        and tightness._config(n).noise.norm == 1}
    assert set(choices()) - set(loop_choices()) == {"lsh", "balcan"}
    assert {"exponential", "DI Laplace", "colored Gaussian (box covariance)"} <= set(
        tightness.MECHANISMS)
    with pytest.raises(ValueError, match="unknown target"):
        tightness.tightness_rows("no such thing")
    with pytest.raises(ValueError, match="unknown algorithm"):
        tightness.power_rows("exponential")


def test_a_small_table_row_and_its_columns():
    rows = tightness.tightness_rows("Laplace (exact discrete sampler)", 20_000)
    assert {"target", "level", "dimension", "claimed_epsilon", "pair_epsilon", "delta",
            "lower_bound", "confidence", "trials", "trials_needed", "statistic",
            "pair"} <= set(rows.columns)
    assert rows["delta"].tolist() == [1e-2, 1e-3, 0.0]  # the curve's points
    assert (rows["level"] == "release").all() and (rows["trials"] == 20_000).all()
    assert ((0.0 < rows["lower_bound"]) & (rows["lower_bound"] <= rows["claimed_epsilon"])).all()
    # the Laplace release's pair is its worst case: the accountant's curve is the pair's
    np.testing.assert_allclose(rows["pair_epsilon"], rows["claimed_epsilon"], rtol=2e-3)
    assert rows["confidence"].eq(1 - 0.01 / 3).all()  # three points hold together at 99%
    again = tightness.tightness_rows("Laplace (exact discrete sampler)", 20_000)
    assert again["lower_bound"].tolist() == rows["lower_bound"].tolist()  # seeded


def test_the_one_run_audit_of_a_fit():
    out = tightness.one_run_audit(4.0, dimension=6, group=5, candidates=(16, 32))
    assert out["canaries"] == 64 and 0.0 <= out["lower_bound"] <= 4.0
    assert out == {**tightness.one_run_audit(4.0, dimension=6, group=5, candidates=(16, 32)),
                   "seconds": out["seconds"]}


def test_the_colored_mechanism_pair_is_worst_case():
    """Every corner of [0, 4] x [-1, 1] shifts the whitened (S - n m, n) by the same L2 norm,
    2: the pair audited is a worst case."""
    from dpkmeans.privacy.colored import box_deltas
    bounds = (np.array([0.0, -1.0]), np.array([4.0, 1.0]))
    white = 1.0 / np.sqrt(np.array([2.0, 1.0, 1.0]))
    norms = np.linalg.norm(box_deltas(bounds) * white, axis=1)
    np.testing.assert_allclose(norms, np.linalg.norm(tightness.COLORED_SHIFT))
    assert mech.exponential_probabilities(tightness.UTILITY[0], 1.0, 1.0).size == 101
    assert choice("colored").needs_delta


def test_the_sweeps_cover_every_target():
    """A new mechanism or corrected algorithm must join the sweeps that `make reproduce` runs."""
    from pathlib import Path

    from dpkmeans.api.catalogue import loop_choices
    from dpkmeans.study.sweep import load_spec
    sweeps = Path(__file__).resolve().parents[2] / "notebooks" / "sweeps"
    assert load_spec(sweeps / "audit_tightness.yaml").grid["target"] == tightness.targets()
    assert load_spec(sweeps / "audit_power.yaml").grid["target"] == list(tightness.ALGORITHMS)
    assert [n for n, c in loop_choices().items() if int(c.chapter) < 12] == list(
        tightness.ALGORITHMS[:-1])
