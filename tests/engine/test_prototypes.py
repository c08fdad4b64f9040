"""Mixed data for k-prototypes (Shang et al. 2021, section 7; book chapter 11): the scaled one-hot
layout (eq. 6 as a squared Euclidean distance), its validation, the initializer, the
exponential mechanism's modes and their accounting, and the engine's ``categorical`` hook."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.engine.prototypes import (
    CategoricalModes,
    MixedInitializer,
    MixedLayout,
    decode,
    encode,
    mode_scores,
)
from dpkmeans.engine.strategies import FixedShares, PublicStart, SuSplit
from dpkmeans.papers.colored.flaws import EXACT_ITERATIONS, NoiseFreeIterations
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.flaws import CATEGORICAL_FULL_BUDGET, FullBudgetModes, PublishedModes
from dpkmeans.privacy.accounting import PrivacyLedger

LEVELS = (3, 2, 4)


def mixed(n: int, layout: MixedLayout, seed: int = 0,
          low: float = 0.0, high: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Random numeric columns in [low, high] and random category codes."""
    gen = np.random.default_rng(seed)
    X = gen.uniform(low, high, (n, layout.n_numeric))
    C = np.column_stack([gen.integers(0, k, n) for k in layout.n_levels])
    return X, C


def eq6(X: np.ndarray, C: np.ndarray, U: np.ndarray, M: np.ndarray, gamma: float) -> np.ndarray:
    """Shang et al.'s (2021) eq. 6, directly: sum (x^r - u^r)^2 + gamma * #(x^c != u^c), (N, k)."""
    numeric = ((X[:, None, :] - U[None, :, :]) ** 2).sum(axis=2)
    mismatches = (C[:, None, :] != M[None, :, :]).sum(axis=2)
    return numeric + gamma * mismatches


def assert_one_hot(P: np.ndarray, layout: MixedLayout) -> None:
    """Every block of every prototype holds exactly one nonzero entry, equal to the scale."""
    for cols in layout.blocks:
        block = P[..., cols]
        assert np.all((block == 0.0) | (block == layout.scale))
        assert np.all((block == layout.scale).sum(axis=-1) == 1)


# --- encode / decode --------------------------------------------------------------------------

def test_encode_decode_round_trip():
    layout = MixedLayout(LEVELS, 3, 0.12)
    X, C = mixed(200, layout, seed=1, low=-2.0, high=5.0)
    Z = encode(X, C, layout)
    assert Z.shape == (200, layout.width) and layout.width == sum(LEVELS) + 3
    assert layout.n_onehot == sum(LEVELS) and layout.n_categorical == 3
    assert np.array_equal(Z[:, layout.n_onehot:], X)  # numeric columns last, untouched
    assert_one_hot(Z, layout)
    numeric, codes = decode(Z, layout)
    assert np.array_equal(numeric, X) and np.array_equal(codes, C)
    # decode works on prototypes of any leading shape (R, k, width)
    numeric, codes = decode(Z.reshape(4, 50, -1), layout)
    assert numeric.shape == (4, 50, 3) and codes.shape == (4, 50, 3)
    assert np.array_equal(codes.reshape(200, 3), C)
    # the counts behind the modes: sums of the scaled one-hot columns divided by s
    counts = mode_scores(Z.sum(axis=0), layout)
    for l, cols in enumerate(layout.blocks):
        assert np.array_equal(counts[cols], np.bincount(C[:, l], minlength=LEVELS[l]))


@pytest.mark.parametrize("gamma", [0.01, 0.12, 1.0, 2.0, 7.5])
def test_squared_euclidean_on_the_encoding_is_eq_6(gamma):
    layout = MixedLayout(LEVELS, 4, gamma)
    assert layout.scale == pytest.approx(math.sqrt(gamma / 2.0), rel=1e-15)
    X, C = mixed(300, layout, seed=2)
    U, M = mixed(7, layout, seed=3)
    Z, P = encode(X, C, layout), encode(U, M, layout)
    euclid = ((Z[:, None, :] - P[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(euclid, eq6(X, C, U, M, gamma), rtol=1e-12, atol=1e-12)
    # two records that differ in one category only are gamma apart
    a = encode(np.zeros((1, 4)), np.zeros((1, 3), dtype=int), layout)
    b = encode(np.zeros((1, 4)), np.array([[0, 1, 0]]), layout)
    assert ((a - b) ** 2).sum() == pytest.approx(gamma, rel=1e-14)


@pytest.mark.parametrize("bad, attribute", [(-1, 0), (3, 0), (2, 1), (-1, 2), (4, 2), (99, 1)])
def test_encode_rejects_codes_outside_the_public_list(bad, attribute):
    layout = MixedLayout(LEVELS, 2, 0.5)
    X, C = mixed(20, layout, seed=4)
    C[5, attribute] = bad
    with pytest.raises(ValueError, match=rf"categorical attribute {attribute}\b.*outside "
                                         rf"0\.\.{LEVELS[attribute] - 1}"):
        encode(X, C, layout)


def test_encode_rejects_wrong_shapes_and_non_integer_codes():
    layout = MixedLayout(LEVELS, 2, 0.5)
    X, C = mixed(10, layout, seed=5)
    with pytest.raises(ValueError, match="numeric must have shape"):
        encode(X[:, :1], C, layout)
    with pytest.raises(ValueError, match="numeric must have shape"):
        encode(X[:, 0], C, layout)
    with pytest.raises(ValueError, match="codes must have shape"):
        encode(X, C[:, :2], layout)
    with pytest.raises(ValueError, match="codes must have shape"):
        encode(X, C[:9], layout)
    with pytest.raises(ValueError, match="codes must have shape"):
        encode(X, C.ravel(), layout)
    with pytest.raises(TypeError, match="integer category codes"):
        encode(X, C.astype(float), layout)
    with pytest.raises(TypeError, match="integer category codes"):
        encode(X, C.astype(str), layout)
    with pytest.raises(TypeError, match="integer category codes"):
        encode(X, C > 0, layout)  # booleans are not codes


# --- the layout -------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [0.0, -1.0, math.nan, math.inf])
def test_layout_rejects_a_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma"):
        MixedLayout(LEVELS, 2, gamma)


def test_layout_validation():
    with pytest.raises(ValueError, match="n_numeric"):
        MixedLayout(LEVELS, 0, 0.5)
    with pytest.raises(ValueError, match="number of categories"):
        MixedLayout((3, 0), 2, 0.5)
    with pytest.raises(TypeError):
        MixedLayout((3, 2.5), 2, 0.5)
    with pytest.raises(TypeError, match="gamma"):
        MixedLayout(LEVELS, 2, "0.5")
    layout = MixedLayout((np.int64(3), 2), np.int64(2), np.float32(0.5))
    assert layout.n_levels == (3, 2) and type(layout.n_levels[0]) is int
    assert layout.gamma == 0.5 and type(layout.gamma) is float
    assert layout.blocks == (slice(0, 3), slice(3, 5))


def test_bounds_shape_and_values():
    layout = MixedLayout(LEVELS, 3, 0.12)
    s = math.sqrt(0.06)
    lower, upper = layout.bounds((np.array([-1.0, 0.0, 2.0]), np.array([1.0, 5.0, 3.0])))
    assert lower.shape == upper.shape == (layout.width,) == (12,)
    assert np.array_equal(lower, np.r_[np.zeros(9), -1.0, 0.0, 2.0])
    assert np.array_equal(upper, np.r_[np.full(9, s), 1.0, 5.0, 3.0])
    # scalar numeric bounds broadcast over the numeric columns
    lower, upper = layout.bounds((0.0, 1.0))
    assert np.array_equal(lower, np.zeros(12))
    assert np.array_equal(upper, np.r_[np.full(9, s), np.ones(3)])
    with pytest.raises(ValueError, match="numeric bounds have 2 features, the layout 3"):
        layout.bounds((np.zeros(2), np.ones(2)))
    # encoded records lie in the augmented box
    X, C = mixed(50, layout, seed=6)
    Z = encode(X, C, layout)
    lower, upper = layout.bounds((0.0, 1.0))
    assert np.all(Z >= lower) and np.all(Z <= upper)


# --- the initializer --------------------------------------------------------------------------

def test_mixed_initializer():
    layout = MixedLayout(LEVELS, 3, 0.3)
    numeric_box = (np.array([-2.0, 0.0, 10.0]), np.array([3.0, 0.5, 11.0]))
    bounds = layout.bounds(numeric_box)
    init = MixedInitializer(layout)
    centres = init(bounds, 6, np.random.default_rng(3))
    assert centres.shape == (6, layout.width)
    assert_one_hot(centres, layout)
    numeric = centres[:, layout.n_onehot:]
    assert np.all(numeric >= numeric_box[0]) and np.all(numeric <= numeric_box[1])
    assert np.array_equal(centres, init(bounds, 6, np.random.default_rng(3)))  # per seed
    assert not np.array_equal(centres, init(bounds, 6, np.random.default_rng(4)))
    # every category can be drawn (uniform over the public list)
    many = init(bounds, 400, np.random.default_rng(5))
    _, modes = decode(many, layout)
    for l, n in enumerate(LEVELS):
        assert set(np.unique(modes[:, l])) == set(range(n))


# --- the modes: exponential mechanism ---------------------------------------------------------

def test_modes_validation():
    layout = MixedLayout((3,), 1, 0.5)
    for bad in ([], [1.0, 0.0], [1.0, -1.0], [math.nan], [[1.0], [1.0]]):
        with pytest.raises(ValueError, match="categorical schedule"):
            CategoricalModes(layout, np.asarray(bad, dtype=float))
    with pytest.raises(ValueError, match="at least one categorical attribute"):
        CategoricalModes(MixedLayout((), 2, 0.5), [1.0])


def test_a_large_epsilon_picks_the_largest_count():
    layout = MixedLayout((4, 3), 1, 0.5)
    modes = FullBudgetModes(layout, [1.0])  # each draw at 1e3
    gen = np.random.default_rng(8)
    counts = np.zeros((3, 5, layout.n_onehot))
    for r in range(3):
        for j in range(5):
            counts[r, j, :4] = gen.permutation([0.0, 3.0, 7.0, 12.0])
            counts[r, j, 4:7] = gen.permutation([5.0, 6.0, 40.0])
    rngs = [np.random.default_rng(r) for r in range(3)]
    out = modes.release(PrivacyLedger(), counts, 1e3, rngs, clusters_touched=1)
    assert out.shape == counts.shape
    assert_one_hot(out, layout)
    _, picked = decode(np.concatenate([out, np.zeros((3, 5, 1))], axis=2), layout)
    assert np.array_equal(picked[..., 0], counts[..., :4].argmax(axis=2))
    assert np.array_equal(picked[..., 1], counts[..., 4:7].argmax(axis=2))


@pytest.mark.statistical
@pytest.mark.parametrize("eps", [0.4, 1.0, 2.5])
def test_pick_frequencies_are_the_exponential_mechanism(eps):
    """20,000 draws per attribute: each category within 5 binomial sigmas of
    exp(eps count / 2) / Z."""
    layout = MixedLayout((4, 3), 1, 0.5)
    modes = FullBudgetModes(layout, [1.0])  # each draw at eps
    n = 20_000
    block_counts = [np.array([0.0, 1.0, 2.0, 4.0]), np.array([3.0, 3.0, 0.0])]
    counts = np.broadcast_to(np.concatenate(block_counts), (1, n, layout.n_onehot)).copy()
    out = modes.release(PrivacyLedger(), counts, eps, [np.random.default_rng(20000)],
                        clusters_touched=1)
    for cols, c in zip(layout.blocks, block_counts):
        p = np.exp(eps * c / 2.0)
        p /= p.sum()
        picked = (out[0, :, cols] == layout.scale).sum(axis=0)
        assert picked.sum() == n  # one category per draw
        freq = picked / n
        assert np.all(np.abs(freq - p) <= 5.0 * np.sqrt(p * (1.0 - p) / n)), (freq, p)


def test_release_accepts_integer_counts():
    layout = MixedLayout((3,), 1, 0.5)
    modes = CategoricalModes(layout, [1.0])
    out = modes.release(PrivacyLedger(), np.array([[[0, 5, 1]]]), 100.0,
                        [np.random.default_rng(0)], clusters_touched=1)
    assert np.array_equal(out, [[[0.0, layout.scale, 0.0]]])


@pytest.mark.parametrize("kind", [CategoricalModes, FullBudgetModes, PublishedModes])
@pytest.mark.parametrize("clusters_touched", [1, 2])
def test_charge_records_one_entry_per_attribute(kind, clusters_touched):
    """The corrected modes, and the paper's two as-published ones: every attribute at the
    whole budget, and that with each draw at Delta sf = 1 (understated under replace)."""
    layout = MixedLayout(LEVELS, 2, 0.5)
    modes = kind(layout, [0.9])
    understated = kind is PublishedModes
    ledger = PrivacyLedger(neighbour="replace" if clusters_touched == 2 else "add/remove")
    eps_t = 0.9
    attribute = eps_t / 3 if kind is CategoricalModes else eps_t
    assert modes.attribute_budget(eps_t) == attribute
    draw = modes.charge(ledger, eps_t, 4, clusters_touched=clusters_touched)
    expected_draw = attribute if understated else attribute / clusters_touched
    assert draw == pytest.approx(expected_draw, rel=1e-15)
    entries = ledger.entries
    assert len(entries) == layout.n_categorical
    for l, e in enumerate(entries):
        assert e.mechanism == "exponential"
        assert e.epsilon == pytest.approx(clusters_touched * draw, rel=1e-15)
        assert e.sensitivity == 1.0 and e.scale == pytest.approx(2.0 / draw, rel=1e-15)
        assert f"attribute {l}" in e.label
        assert e.details["replicas"] == 4
        assert e.details["epsilon per cluster draw"] == draw
    total = ledger.total().epsilon
    if understated:  # the true cost: clusters_touched times the stated budget
        assert total == pytest.approx(clusters_touched * 3 * attribute, rel=1e-12)
    else:
        assert total == pytest.approx(3 * attribute, rel=1e-12)


# --- the engine's categorical hook ------------------------------------------------------------

@pytest.fixture(scope="module")
def heartlike():
    """270 mixed records like Heart (6 numeric in [0, 1], 7 binary-ish categorical)."""
    layout = MixedLayout((2, 4, 2, 3, 2, 3, 3), 6, 0.12)
    gen = np.random.default_rng(42)
    group = gen.integers(0, 2, 270)
    X = np.clip(np.where(group[:, None] == 1, 0.7, 0.3) + gen.normal(0, 0.1, (270, 6)), 0, 1)
    C = np.column_stack([np.where(gen.random(270) < 0.8, group % n, gen.integers(0, n, 270))
                         for n in layout.n_levels])
    return layout, encode(X, C, layout)


def test_corrected_kprototypes_spends_eps_r_plus_eps_c(heartlike):
    layout, Z = heartlike
    config = variants.kprototypes_corrected(layout, (np.zeros(6), np.ones(6)), rho_r=0.05,
                                            rho_c=0.7)
    claimed = variants.claimed_epsilon(0.05, 0.7)
    eps_r, eps_c = claimed["epsilon_numeric"], claimed["epsilon_categorical"]
    assert config.epsilon == pytest.approx(eps_r + eps_c, rel=1e-12)
    planned = plan_ledger(config, replicas=3)
    assert planned.total().epsilon == pytest.approx(eps_r + eps_c, rel=1e-12)
    result = run(Z, config, 11, replicas=3)
    assert result.ledger.is_private and result.ledger.is_fully_spent()
    assert result.ledger.total().epsilon == pytest.approx(eps_r + eps_c, rel=1e-12)
    assert result.ledger.total().epsilon == pytest.approx(planned.total().epsilon, rel=1e-14)
    draws = [(e.mechanism, e.epsilon, e.sensitivity, e.scale) for e in result.ledger.entries
             if e.mechanism != "post-processing"]
    assert draws == [(e.mechanism, e.epsilon, e.sensitivity, e.scale) for e in planned.entries]
    np.testing.assert_allclose(result.spent, eps_r + eps_c, rtol=1e-12)
    exponential = [e for e in result.ledger.entries if e.mechanism == "exponential"]
    assert len(exponential) == config.iterations * layout.n_categorical
    assert sum(e.epsilon for e in exponential) == pytest.approx(eps_c, rel=1e-12)
    # corrected: each cluster's draw gets eps_c_t / d_c / 2 (two clusters' counts change)
    first = exponential[0]
    assert first.details["epsilon per cluster draw"] == pytest.approx(
        config.modes.schedule[0] / layout.n_categorical / 2, rel=1e-14)
    assert result.centroids.shape == (3, 2, layout.width)
    assert_one_hot(result.centroids, layout)
    assert_one_hot(result.initial_centroids, layout)
    numeric = result.centroids[..., layout.n_onehot:]
    assert np.all((numeric >= 0.0) & (numeric <= 1.0))


@pytest.mark.parametrize("neighbour", ["add/remove", "replace"])
@pytest.mark.parametrize("per_attribute", ["split", "full"])
def test_plan_ledger_is_a_real_run_s_ledger(heartlike, neighbour, per_attribute):
    layout, Z = heartlike
    numeric_schedule = schedules.uniform(2.0, 4)
    categorical_schedule = schedules.halving(0.8, 4)
    flaws = (CATEGORICAL_FULL_BUDGET,) if per_attribute == "full" else ()
    kind = FullBudgetModes if per_attribute == "full" else CategoricalModes
    config = DPLloydConfig(n_clusters=3, bounds=layout.bounds((0.0, 1.0)),
                           schedule=numeric_schedule, neighbour=neighbour,
                           start=PublicStart(MixedInitializer(layout)), flaws=flaws,
                           modes=kind(layout, categorical_schedule))
    result = run(Z, config, 5, replicas=2)
    planned = plan_ledger(config, replicas=2)
    assert result.ledger.total().epsilon == pytest.approx(planned.total().epsilon, rel=1e-14)
    d_c = layout.n_categorical
    expected = numeric_schedule.sum() + categorical_schedule.sum() * (d_c if flaws else 1)
    assert result.ledger.total().epsilon == pytest.approx(expected, rel=1e-12)
    assert result.ledger.is_private
    assert_one_hot(result.centroids, layout)


def _config(layout: MixedLayout, **kw) -> DPLloydConfig:
    args = dict(n_clusters=2, bounds=layout.bounds((0.0, 1.0)), schedule=[0.5, 0.5],
                modes=CategoricalModes(layout, [0.2, 0.2]))
    args.update(kw)
    return DPLloydConfig(**args)


def test_categorical_config_validation():
    layout = MixedLayout(LEVELS, 2, 0.5)
    _config(layout)  # valid
    narrow = (np.zeros(layout.width - 1), np.ones(layout.width - 1))
    with pytest.raises(ValueError, match="the mixed layout 11"):
        _config(layout, bounds=narrow)
    with pytest.raises(ValueError, match="mixed layout"):
        _config(layout, bounds=(np.zeros(2), np.ones(2)))
    with pytest.raises(ValueError, match="one budget per iteration"):
        _config(layout, modes=CategoricalModes(layout, [0.2, 0.2, 0.2]))
    with pytest.raises(ValueError, match="one budget per iteration"):
        _config(layout, schedule=[1.0])
    full = FullBudgetModes(layout, [0.2, 0.2])
    with pytest.raises(ValueError, match="categorical-full-budget"):
        _config(layout, modes=full)  # the flawed modes without the flaw
    _config(layout, modes=full, flaws=(CATEGORICAL_FULL_BUDGET,))  # valid
    _config(layout, modes=full, flaws=(CATEGORICAL_FULL_BUDGET,), neighbour="replace")
    with pytest.raises(ValueError, match="the joint release"):
        _config(layout, step=SuSplit())
    with pytest.raises(ValueError, match="the joint release"):
        _config(layout, step=NoiseFreeIterations(), flaws=(EXACT_ITERATIONS,))
    with pytest.raises(ValueError, match="Laplace noise"):
        _config(layout, noise="gaussian", delta=1e-6)
    with pytest.raises(ValueError, match="equal shares"):
        _config(layout, allocation=FixedShares(np.array([1.0, 0.5])))
