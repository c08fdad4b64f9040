"""The silhouette-weighted DP k-means of Zhang, Liu and Wang (2018) as configurations of the one
engine (book chapter 8): the as-published variant's leaks and computed overspend, the corrected
variant's spend, the engine's hooks (allocation rule, initial release, per-replica early
stopping) and seeding."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.engine.strategies import AllocationRule, FixedShares, PublicStart, ShiftBelow, SuSplit
from dpkmeans.errors import BudgetExceededError
from dpkmeans.papers.silhouette import variants
from dpkmeans.papers.silhouette.flaws import MIN_NORMALISED_WEIGHTS
from dpkmeans.papers.silhouette.variants import (
    MAX_ITERATIONS,
    SILHOUETTE_SHARE,
    EqualSplitInitialRelease,
    ExactSilhouetteWeights,
    NoisySilhouetteWeights,
    as_published,
    corrected,
    equal_weights,
)

BOX = (np.zeros(2), np.ones(2))
CENTRES = np.array([[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]])
#: The halving schedule's sum over T = 10 iterations, as a share of epsilon (open-ended).
HALVING_SUM = 1.0 - 2.0**-MAX_ITERATIONS


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    """Three well-separated blobs of 200 rows each in [0, 1]^2, in blob order (so the paper's
    equal split by record order is the blobs)."""
    gen = np.random.default_rng(0)
    return np.clip(CENTRES[np.repeat(np.arange(3), 200)] + gen.normal(0, 0.04, (600, 2)), 0, 1)


@dataclass
class Recording(AllocationRule):
    """An allocation rule that delegates to another and keeps what it saw and returned."""

    rule: object
    calls: list = field(default_factory=list)
    name: str = "recording"

    def weights(self, ctx: HookContext) -> np.ndarray:
        w = self.rule.weights(ctx)
        self.calls.append({"iteration": ctx.iteration, "epsilon": ctx.epsilon,
                           "centroids": ctx.centroids.copy(), "replicas": ctx.replicas,
                           "weights": np.array(w, copy=True)})
        return w


class Fixed(AllocationRule):
    """An allocation rule returning the given weights (k,) or (R, k) for the active replicas."""

    name = "fixed"

    def __init__(self, weights):
        self.w = np.asarray(weights, dtype=float)

    def weights(self, ctx: HookContext) -> np.ndarray:
        if self.w.ndim == 1:
            return np.broadcast_to(self.w, (ctx.replicas, self.w.size)).copy()
        return self.w[: ctx.replicas].copy()


def brute_silhouettes(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Per replica and cluster, the mean centre-based silhouette (0 for an empty cluster), from
    explicit distances: a to the nearest centre, b to the second nearest."""
    R, k, _ = C.shape
    S = np.zeros((R, k))
    for r in range(R):
        dist = np.sqrt(((X[:, None, :] - C[r][None]) ** 2).sum(axis=2))
        order = np.sort(dist, axis=1)
        own = np.argmin(dist, axis=1)
        a, b = order[:, 0], order[:, 1]
        s = np.where(np.maximum(a, b) > 0, (b - a) / np.maximum(np.maximum(a, b), 1e-300), 0.0)
        for j in range(k):
            S[r, j] = s[own == j].mean() if np.any(own == j) else 0.0
    return S


def ledger_rows(ledger) -> list[tuple]:
    return [(e.mechanism, e.epsilon, e.delta, e.sensitivity, e.scale, e.scope, e.label,
             tuple(sorted(e.details.items()))) for e in ledger.entries]


def iteration_charges(ledger, label_start: str) -> list[float]:
    return [e.epsilon for e in ledger.entries
            if e.scope.startswith("iteration") and e.label.startswith(label_start)]


# --- as published ---------------------------------------------------------------------------


def test_as_published_records_every_leak_and_charges_the_true_cost(X):
    eps = 1.0
    config = as_published(3, eps, BOX)
    assert {f.name for f in config.flaws} == {
        "shared-noise", "exact-silhouettes", "min-normalised-weights", "undefined-initial-budget",
        "position-split", "data-derived-bounds"}
    assert [f for f in config.flaws if f.overspends] == [MIN_NORMALISED_WEIGHTS]
    result = run(X, config, 3, replicas=4)
    ledger = result.ledger
    assert not ledger.is_private and ledger.budget is None
    leaks = [e.label for e in ledger.entries if e.mechanism == "LEAK (not private)"]
    assert sorted(leaks) == sorted(f.text for f in config.flaws if not f.overspends)
    assert len(leaks) == 5
    notes = [e.label for e in ledger.entries if e.mechanism == "post-processing"]
    assert any(MIN_NORMALISED_WEIGHTS.text in n for n in notes)  # an overspend, not a leak
    # The initial release: (sum, count) of each equal split, Delta = d + 1, charged eps itself.
    initial = [e for e in ledger.entries if e.scope == "initialisation" and e.epsilon > 0]
    assert len(initial) == 1
    assert initial[0].epsilon == eps and initial[0].sensitivity == 3.0
    assert initial[0].mechanism == "Laplace (discrete)"
    # Not centred: every iteration's release has the paper's Delta = d r + 1 = 3.
    draws = [e for e in ledger.entries if e.scope.startswith("iteration") and e.epsilon > 0]
    assert len(draws) == result.iterations_run.max() and {e.sensitivity for e in draws} == {3.0}


def test_as_published_overspend_is_computed_from_its_weights(X):
    eps = 1.0
    recording = Recording(ExactSilhouetteWeights())
    config = replace(as_published(3, eps, BOX), allocation=recording)
    result = run(X, config, 3, replicas=4)
    assert len(recording.calls) == result.iterations_run.max()
    per_replica_cost = np.zeros(4)
    ledger_cost = []
    active = np.arange(4)
    for call in recording.calls:
        t, w = call["iteration"], call["weights"]
        assert call["epsilon"] == eps / 2**t  # eps / 2^t, open-ended halving
        assert w.shape == (call["replicas"], 3)
        # (1 + S_k) / (1 + min S): >= 1, exactly 1 for the worst cluster, <= 2 (S in [0, 1])
        assert np.all(w >= 1.0) and np.all(w <= 2.0)
        assert w.min(axis=1).tolist() == [1.0] * w.shape[0]
        S = brute_silhouettes(X, call["centroids"])
        np.testing.assert_allclose(w, (1 + S) / (1 + S.min(axis=1, keepdims=True)), rtol=1e-9)
        active = np.flatnonzero(result.iterations_run >= t)
        assert active.size == w.shape[0]
        per_replica_cost[active] += eps / 2**t * w.max(axis=1)
        ledger_cost.append(eps / 2**t * w.max())
    np.testing.assert_allclose(result.spent, eps + per_replica_cost, rtol=1e-12)
    np.testing.assert_allclose(iteration_charges(result.ledger, "(S_j, n_j)"), ledger_cost,
                               rtol=1e-12)
    assert result.ledger.total().epsilon == pytest.approx(eps + sum(ledger_cost), rel=1e-12)
    assert result.ledger.total().epsilon >= result.spent.max() - 1e-12
    overspend = result.spent / eps
    assert np.all(overspend > 1.0) and np.all(overspend <= 3.0)
    # The initial eps alone is uncounted; the iterations spend more than the halving's sum.
    assert np.all(result.spent - eps > eps / 2)


def test_as_published_initial_centres_are_the_means_of_the_file_order_splits(X):
    """With a huge budget the noisy means of the K equal splits (row i in split floor(i K / N),
    computed block by block with each block's start) are the blob means of the ordered data."""
    result = run(X, as_published(3, 1e6, BOX), 0, replicas=2)
    means = np.stack([X[i * 200:(i + 1) * 200].mean(axis=0) for i in range(3)])
    np.testing.assert_allclose(result.initial_centroids, np.stack([means, means]), atol=1e-4)
    # A shuffled file gives other splits: every split's mean is near the global mean.
    shuffled = X[np.random.default_rng(1).permutation(len(X))]
    mixed = run(shuffled, as_published(3, 1e6, BOX), 0).initial_centroids[0]
    np.testing.assert_allclose(mixed, np.broadcast_to(X.mean(axis=0), (3, 2)), atol=0.05)


# --- corrected --------------------------------------------------------------------------------


def test_corrected_is_private_and_each_replica_spends_at_most_epsilon(X):
    eps = 1.0
    recording = Recording(NoisySilhouetteWeights())
    config = replace(corrected(3, eps, BOX), allocation=recording)
    assert config.flaws == () and config.budget == eps
    result = run(X, config, 5, replicas=4)
    ledger = result.ledger
    assert ledger.is_private and ledger.budget.epsilon == eps
    assert not [e for e in ledger.entries if e.mechanism == "LEAK (not private)"]
    assert np.all(result.spent <= eps + 1e-12)
    assert ledger.total().epsilon <= eps + 1e-12
    # Each iteration: share of the normalised halving step for the silhouettes, the rest for
    # the centroids at weight max 1, so replica r spends eps * sum_{t <= T_r} 2^-t / (1 - 2^-10).
    step = eps * 2.0 ** -np.arange(1, MAX_ITERATIONS + 1) / HALVING_SUM
    expected = np.array([step[:n].sum() for n in result.iterations_run])
    np.testing.assert_allclose(result.spent, expected, rtol=1e-12)
    n = result.iterations_run.max()
    np.testing.assert_allclose(iteration_charges(ledger, "(sum_x S(x), n_j)"),
                               SILHOUETTE_SHARE * step[:n], rtol=1e-12)
    np.testing.assert_allclose(iteration_charges(ledger, "(S_j, n_j)"),
                               (1 - SILHOUETTE_SHARE) * step[:n], rtol=1e-12)
    assert {e.sensitivity for e in ledger.entries if e.label.startswith("(sum_x S(x)")} == {2.0}
    for call in recording.calls:
        w = call["weights"]
        # (1 + S~_k) / (1 + max S~) with S~ in [0, 1]: in [1/2, 1], max exactly 1
        assert np.all(w >= 0.5) and np.all(w <= 1.0)
        assert w.max(axis=1).tolist() == [1.0] * w.shape[0]


def test_corrected_without_early_stop_spends_exactly_epsilon(X):
    result = run(X, corrected(3, 2.0, BOX, stop_threshold=0.0), 8, replicas=3)
    assert result.iterations_run.tolist() == [MAX_ITERATIONS] * 3
    np.testing.assert_allclose(result.spent, 2.0, rtol=1e-12)
    assert result.ledger.is_fully_spent()


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_silhouette_share_outside_the_open_unit_interval_is_refused(share):
    with pytest.raises(ValueError, match=r"share must lie in \(0, 1\)"):
        NoisySilhouetteWeights(share)
    with pytest.raises(ValueError, match=r"share must lie in \(0, 1\)"):
        corrected(3, 1.0, BOX, silhouette_share=share)


def test_silhouette_share_must_be_a_number():
    with pytest.raises(TypeError, match="share must be a real number"):
        NoisySilhouetteWeights("0.1")
    with pytest.raises(TypeError, match="share must be a real number"):
        NoisySilhouetteWeights(True)
    assert NoisySilhouetteWeights(0.25).epsilon(0.75) == pytest.approx(0.25)


@pytest.mark.parametrize("make", [as_published, corrected, equal_weights])
@pytest.mark.parametrize("epsilon, error, message", [
    (0.0, ValueError, "epsilon must be > 0"),
    (-1.0, ValueError, "epsilon must be > 0"),
    (float("nan"), ValueError, "epsilon must be finite"),
    (float("inf"), ValueError, "epsilon must be finite"),
    ("1", TypeError, "epsilon must be a real number"),
])
def test_bad_epsilon_is_refused_with_a_clear_message(make, epsilon, error, message):
    with pytest.raises(error, match=message):
        make(3, epsilon, BOX)


@pytest.mark.parametrize("make", [as_published, corrected, equal_weights])
@pytest.mark.parametrize("k, error, message", [
    (0, ValueError, "n_clusters must be >= 1"),
    (-2, ValueError, "n_clusters must be >= 1"),
    (2.5, TypeError, "n_clusters must be an integer"),
    (True, TypeError, "n_clusters must be an integer"),
])
def test_bad_n_clusters_is_refused_with_a_clear_message(make, k, error, message):
    with pytest.raises(error, match=message):
        make(k, 1.0, BOX)


# --- the engine's hooks ----------------------------------------------------------------------------


def _base(**kw) -> DPLloydConfig:
    args = dict(n_clusters=3, bounds=BOX, schedule=schedules.halving(5.0, 5),
                start=PublicStart(sphere_packing))
    return DPLloydConfig(**{**args, **kw})


def test_all_ones_allocation_rule_is_the_plain_loop_bit_for_bit(X):
    plain = run(X, _base(), 11, replicas=4)
    ruled = run(X, _base(allocation=Fixed(np.ones(3))), 11, replicas=4)
    for name in ("centroids", "initial_centroids", "noisy_counts", "spent", "iterations_run"):
        assert getattr(ruled, name).tobytes() == getattr(plain, name).tobytes(), name
    assert ruled.ledger.total() == plain.ledger.total()
    assert ruled.ledger.is_fully_spent() and plain.spent.tolist() == [5.0] * 4


def test_a_rule_s_weights_scale_each_cluster_s_budget_like_a_fixed_allocation(X):
    """Weights a (max 1) in every iteration draw the same noise as allocation=a (cluster j at
    eps_t a_j); a constant weight c as the schedule c eps_t."""
    a = np.array([0.5, 1.0, 0.25])
    fixed = run(X, _base(allocation=FixedShares(a)), 12, replicas=3)
    ruled = run(X, _base(allocation=Fixed(a)), 12, replicas=3)
    assert ruled.centroids.tobytes() == fixed.centroids.tobytes()
    assert ruled.noisy_counts.tobytes() == fixed.noisy_counts.tobytes()
    assert ruled.ledger.total() == fixed.ledger.total()
    half = _base(allocation=Fixed(np.full(3, 0.5)), budget=5.0)
    scaled = DPLloydConfig(n_clusters=3, bounds=BOX, schedule=0.5 * schedules.halving(5.0, 5),
                           start=PublicStart(sphere_packing))
    got, expected = run(X, half, 13, replicas=3), run(X, scaled, 13, replicas=3)
    assert got.centroids.tobytes() == expected.centroids.tobytes()
    np.testing.assert_allclose(got.spent, 2.5, rtol=1e-12)
    assert got.ledger.total().epsilon == pytest.approx(2.5, rel=1e-12)


def test_weights_that_differ_by_replica_are_charged_at_the_most_expensive(X):
    eps = 4.0
    W = np.array([[0.25, 0.5, 0.5], [1.0, 0.1, 0.2], [0.3, 0.3, 0.6]])
    config = DPLloydConfig(n_clusters=3, bounds=BOX, schedule=schedules.halving(eps, 4),
                           start=PublicStart(sphere_packing), allocation=Fixed(W), budget=eps)
    result = run(X, config, 14, replicas=3)
    eps_t = schedules.halving(eps, 4)
    np.testing.assert_allclose(result.spent, eps * W.max(axis=1), rtol=1e-12)
    charges = iteration_charges(result.ledger, "(S_j, n_j)")
    np.testing.assert_allclose(charges, eps_t * W.max(), rtol=1e-12)  # eps_t max_r,j w_rj
    assert result.ledger.total().epsilon == pytest.approx(eps, rel=1e-12)
    assert result.ledger.is_private


def test_weights_above_one_in_a_private_configuration_exceed_the_budget(X):
    with pytest.raises(BudgetExceededError, match="exceeds the declared budget"):
        run(X, _base(allocation=Fixed(np.array([1.0, 2.0, 1.0]))), 0, replicas=2)


@pytest.mark.parametrize("bad", [[1.0, 0.0, 1.0], [1.0, -0.5, 1.0], [1.0, np.nan, 1.0],
                                 [1.0, np.inf, 1.0]])
def test_non_positive_or_non_finite_weights_are_refused(X, bad):
    with pytest.raises(ValueError, match="allocation weights must be finite and > 0"):
        run(X, _base(allocation=Fixed(bad)), 0)


def test_an_allocation_rule_needs_the_joint_release_and_add_remove():
    rule = Fixed(np.ones(3))
    with pytest.raises(ValueError, match="the joint release"):
        _base(allocation=rule, step=SuSplit())
    with pytest.raises(ValueError, match="add/remove"):
        _base(allocation=rule, neighbour="replace")


def test_plan_ledger_refuses_data_dependent_hooks():
    for config in (as_published(3, 1.0, BOX), corrected(3, 1.0, BOX),
                   _base(allocation=Fixed(np.ones(3))),
                   _base(start=EqualSplitInitialRelease(1.0), budget=6.0)):
        with pytest.raises(ValueError, match="run it and read result.spent"):
            plan_ledger(config)
    plain = plan_ledger(equal_weights(3, 1.5, BOX), replicas=2)
    assert plain.total().epsilon == pytest.approx(1.5, rel=1e-12) and plain.is_private


# --- per-replica early stopping ----------------------------------------------------------------------


@pytest.mark.parametrize("make", [as_published, corrected])
def test_a_threshold_above_the_box_diameter_stops_every_replica_after_one_iteration(X, make):
    eps = 2.0
    recording = Recording(make(3, eps, BOX).allocation)
    config = replace(make(3, eps, BOX), stop=ShiftBelow(2.0), allocation=recording)  # > sqrt 2
    result = run(X, config, 6, replicas=4, record_history=True)
    assert result.iterations_run.tolist() == [1] * 4
    assert len(result.history) == 1 and len(recording.calls) == 1
    np.testing.assert_array_equal(result.history[0], result.centroids)
    scopes = {e.scope for e in result.ledger.entries if e.scope.startswith("iteration")}
    assert scopes == {"iteration 1"}
    assert any("iterations run: 1 to 1" in e.label for e in result.ledger.entries)
    w = recording.calls[0]["weights"]
    if make is corrected:
        np.testing.assert_allclose(result.spent, eps / 2 / HALVING_SUM, rtol=1e-12)
    else:  # the initial eps, then eps / 2 at the most expensive cluster's weight
        np.testing.assert_allclose(result.spent, eps + eps / 2 * w.max(axis=1), rtol=1e-12)


def test_each_replica_stops_on_its_own_released_shift(X):
    config = corrected(3, 5.0, BOX, stop_threshold=0.1)
    result = run(X, config, 21, replicas=6, record_history=True)
    runs = result.iterations_run
    assert len(set(runs.tolist())) > 1, runs  # the replicas stop at different iterations
    assert len(result.history) == runs.max()
    path = np.stack([result.initial_centroids, *result.history])  # (T + 1, R, k, d)
    shift = np.linalg.norm(np.diff(path, axis=0), axis=3).max(axis=2)  # (T, R)
    for r, n in enumerate(runs):
        assert np.all(shift[: n - 1, r] >= 0.1)  # kept going while some centroid moved
        if n < MAX_ITERATIONS:
            assert shift[n - 1, r] < 0.1  # stopped on its n-th update
        assert np.all(shift[n:, r] == 0.0)  # then frozen
    step = 5.0 * 2.0 ** -np.arange(1, MAX_ITERATIONS + 1) / HALVING_SUM
    np.testing.assert_allclose(result.spent, [step[:n].sum() for n in runs], rtol=1e-12)


@pytest.mark.parametrize("make, kw", [(as_published, {}), (corrected, {"stop_threshold": 0.1})])
def test_a_replica_alone_is_the_same_replica_in_a_batch(X, make, kw):
    """Replica r draws from child r of SeedSequence(seed); a SeedSequence that has already
    spawned r children gives that child to a run of one replica."""
    config = make(3, 5.0, BOX, **kw)
    batch = run(X, config, np.random.SeedSequence(9), replicas=4)
    for r in range(4):
        alone = run(X, config, np.random.SeedSequence(9, n_children_spawned=r), replicas=1)
        for name in ("centroids", "initial_centroids", "noisy_counts", "spent", "iterations_run"):
            assert getattr(alone, name)[0].tobytes() == getattr(batch, name)[r].tobytes(), (r, name)
    if kw:
        assert len(set(batch.iterations_run.tolist())) > 1  # the stopped replicas were dropped


# --- seeding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(variants.VARIANTS))
def test_same_seed_same_bits_and_another_seed_other_bits(X, name):
    config = variants.VARIANTS[name](3, 2.0, BOX)
    a, b = run(X, config, 31, replicas=3), run(X, config, 31, replicas=3)
    for field_name in ("centroids", "initial_centroids", "noisy_counts", "spent", "iterations_run"):
        assert getattr(a, field_name).tobytes() == getattr(b, field_name).tobytes(), field_name
    assert ledger_rows(a.ledger) == ledger_rows(b.ledger)
    assert a.ledger.is_private == (name != "as_published")
    c = run(X, config, 32, replicas=3)
    assert not np.array_equal(a.centroids, c.centroids)


@pytest.mark.parametrize("make", [as_published, corrected])
def test_silhouettes_fused_into_the_statistics_pass_change_no_bit(X, make, monkeypatch):
    """The silhouettes of iteration t + 1 come from its statistics pass
    (lloyd.block_silhouette_ahead, kernels._Fusion): the same centroids, noise, spend and
    ledger as with a separate silhouette pass every iteration."""
    config = make(3, 2.0, BOX)
    fused = run(X, config, 41, replicas=12)
    monkeypatch.setattr(variants, "block_silhouette_ahead", variants.block_silhouette)
    apart = run(X, config, 41, replicas=12)
    for name in ("centroids", "initial_centroids", "noisy_counts", "spent", "iterations_run"):
        assert getattr(fused, name).tobytes() == getattr(apart, name).tobytes(), name
    assert ledger_rows(fused.ledger) == ledger_rows(apart.ledger)
