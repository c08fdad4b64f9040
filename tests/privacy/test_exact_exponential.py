"""The exponential mechanism and the k-prototypes modes sample exactly (book chapter 6).

A sampler reading float64 probabilities off a cumulative sum never returns a candidate whose
probability is below about 2**-53: at a count gap of 2465 (per-draw epsilon 0.02981) the
minority category was impossible, while at 2464, its neighbour's gap, it was not. The exact
sampler proposes candidates uniformly and accepts each with an exact Bernoulli(exp(-x)) coin,
so forcing every coin to heads must let the minority through half the time.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpkmeans.engine.prototypes import CategoricalModes, MixedLayout
from dpkmeans.privacy import discrete
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.accounting import PrivacyLedger

EPS = 0.02981
GAP = 2465


@pytest.fixture
def heads(monkeypatch):
    """Every Bernoulli(exp(-x)) coin comes up heads; the (num, den) pairs asked for are kept."""
    asked = []
    real = discrete.bernoulli_exp

    def forced(num, den, rngs):
        out = real(num, den, rngs)
        asked.append((np.broadcast_to(num, out.shape[1:]).copy(),
                      np.broadcast_to(den, out.shape[1:]).copy()))
        return np.ones_like(out)

    # the replicas' batched coins (exponential_choices, the k-prototypes modes) likewise
    real_rows = discrete._bernoulli_exp_rows

    def forced_rows(num, den, rep, gens):
        out = real_rows(num, den, rep, gens)
        asked.append((np.asarray(num).copy(), np.full(np.shape(num), den)))
        return np.ones_like(out)

    monkeypatch.setattr(discrete, "bernoulli_exp", forced)
    monkeypatch.setattr(discrete, "_bernoulli_exp_rows", forced_rows)
    return asked


def _float_minority_probability(gap: int, eps: float) -> float:
    """The old sampler's chance of the minority (last) category: u uniform on the 2**-53 grid
    of [0, 1), picked when the cumulative probability of the mode is below u."""
    logits = eps * np.array([gap, 0.0]) / 2.0
    p = np.exp(logits - logits.max())
    cdf0 = np.cumsum(p / p.sum())[0]
    return float(np.sum(np.arange(2**53 - 4, 2**53) / 2**53 > cdf0) * 2.0**-53)


def test_the_float_threshold_sits_at_this_gap():
    assert _float_minority_probability(GAP, EPS) == 0.0
    assert _float_minority_probability(GAP - 1, EPS) > 0.0


def test_minority_mode_is_possible_at_gap_2465(heads):
    layout = MixedLayout((2,), 1, 0.5)
    modes = CategoricalModes(layout, [1.0])
    counts = np.zeros((1, 400, 2))
    counts[..., 0] = GAP  # the mode; the minority has count 0
    out = modes.release(PrivacyLedger(), counts, EPS, [np.random.default_rng(1)],
                        clusters_touched=1)
    minority = int((out[0, :, 1] == layout.scale).sum())
    assert 100 < minority < 300  # coins all heads: the uniform proposal is returned
    # the minority's coin is exactly Bernoulli(exp(-x)), x = EPS * GAP / 2 with EPS rounded
    # down by less than 2**-39 of itself: x = whole (den 1) + fraction (den 2**p)
    whole = {int(n) for num, den in heads for n, d in zip(num, den) if d == 1 and n > 0}
    frac = {Fraction(int(n), int(d)) for num, den in heads for n, d in zip(num, den)
            if d > 1 and n > 0}
    assert len(whole) == 1 and len(frac) == 1
    x = whole.pop() + frac.pop()
    exact = Fraction(EPS) * GAP / 2
    assert 0 <= exact - x <= exact * 2**-39


def test_exponential_mechanism_minority_is_possible(heads):
    picks = mech.exponential_mechanism([float(GAP), 0.0], 1.0, EPS, np.random.default_rng(2),
                                       ledger=None, repeats=400)
    assert 100 < int(np.sum(picks == 1)) < 300


def test_coins_are_not_forced_without_the_patch():
    """Without the patch the same draws give the mode (the minority has probability 1e-16)."""
    picks = mech.exponential_mechanism([float(GAP), 0.0], 1.0, EPS, np.random.default_rng(2),
                                       ledger=None, repeats=400)
    assert np.all(picks == 0)


@pytest.mark.parametrize("integer_valued", [False, True])
def test_exact_sampler_matches_the_pmf(integer_valued):
    u = np.array([0.0, 1.0, 3.0, -2.0, 8.0])
    p = mech.exponential_probabilities(u, 1.0, 0.9)
    picks = mech.exponential_mechanism(u, 1.0, 0.9, np.random.default_rng(5), ledger=None,
                                       repeats=100_000, integer_valued=integer_valued)
    assert stats.chisquare(np.bincount(picks, minlength=u.size), p * picks.size).pvalue > 1e-3


def test_tail_category_frequency_on_modes():
    """A category of probability about 2e-3 comes out as often as it should."""
    layout = MixedLayout((3,), 1, 0.5)
    modes = CategoricalModes(layout, [1.0])
    counts = np.broadcast_to(np.array([0.0, 12.0, 2.0]), (1, 50_000, 3)).copy()
    out = modes.release(PrivacyLedger(), counts, 1.0, [np.random.default_rng(3)],
                        clusters_touched=1)
    p = np.exp(counts[0, 0] / 2.0)
    p /= p.sum()
    observed = (out[0] == layout.scale).sum(axis=0)
    assert stats.chisquare(observed, p * observed.sum()).pvalue > 1e-3


def test_ledger_charge_is_unchanged_and_records_the_exact_sampler():
    ledger = PrivacyLedger(budget=0.6)
    mech.exponential_mechanism([1.0, 2.0, 0.5], 2.0, 0.3, np.random.default_rng(0),
                               ledger=ledger, repeats=2)
    (entry,) = ledger.entries
    assert entry.epsilon == pytest.approx(0.6) and entry.sensitivity == 2.0
    assert entry.details["sampler"].startswith("exact")
    assert entry.details["sensitivity on grid"] >= 2.0


def test_replicas_draw_from_their_own_generator():
    layout = MixedLayout((3, 2), 1, 0.5)
    modes = CategoricalModes(layout, [1.0])
    counts = np.random.default_rng(0).integers(0, 9, (3, 4, 5)).astype(float)
    together = modes.release(PrivacyLedger(), counts, 0.7,
                             [np.random.default_rng(s) for s in range(3)], clusters_touched=1)
    alone = modes.release(PrivacyLedger(), counts[1:2], 0.7, [np.random.default_rng(1)],
                          clusters_touched=1)
    assert np.array_equal(together[1:2], alone)
