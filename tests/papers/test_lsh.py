"""Google's private clustering (Chang and Kamath 2021; ``dpkmeans.papers.lsh``, book chapter
12): the ledger, seeding, replicas, the Dask backend, a neighbouring pair, utility and the
estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.backends import MemoryBackend
from dpkmeans.compute.blocks import BLOCK_ROWS
from dpkmeans.engine.loop import run
from dpkmeans.engine.standalone import Replica
from dpkmeans.errors import BudgetExceededError
from dpkmeans.papers.lsh.algorithm import (
    LSHClustering,
    _codes_below,
    _leaf_of,
    _leaf_ranges,
    _node_counts,
    catalogue_config,
    google_count_share,
)
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.loss import estimate_log_ratios
from dpkmeans.privacy.noise import zcdp_rho_for
from tests.papers.blobs import THREE_CENTRES, blobs

BOX3 = (-np.ones(3), np.ones(3))


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    return blobs(3000, THREE_CENTRES, 0.05, 1)


# -- the ledger ---------------------------------------------------------------------------------
@pytest.mark.parametrize("k, eps, delta, n, depth", [
    (3, 1.0, 1e-6, 3000, 20),
    (8, 0.3, 1e-5, 3000, 12),
    (2, 5.0, 1e-7, 500, 20),
    (4, 1.0, 1e-6, 3, 20),      # so small that the tree stops at the root
    (1, 0.05, 1e-6, 40, 6),
    (5, 2.0, 1e-6, 1000, 0),    # the root alone, by construction
])
def test_the_ledger_total_is_the_declared_budget(X, k, eps, delta, n, depth):
    config = LSHClustering(k, BOX3, eps, delta, max_depth=depth)
    result = run(X[:n], config, 7, replicas=2)
    ledger = result.ledger
    assert ledger.is_fully_spent() and ledger.is_private
    total = ledger.total()
    assert total.epsilon == pytest.approx(eps, rel=1e-12)
    assert total.delta == pytest.approx(delta, rel=1e-12)
    np.testing.assert_allclose(result.spent, eps, rtol=1e-12)
    charged = [e for e in ledger.entries if e.mechanism != "post-processing"]
    levels, sums = charged[:-1], charged[-1]
    # one discrete Laplace release per level, every level charged, sensitivity 1 (disjoint nodes)
    assert len(levels) == depth + 1
    assert [e.details["level"] for e in levels] == list(range(depth + 1))
    share = google_count_share(eps, delta, depth)
    for e in levels:
        assert e.mechanism == "Laplace (discrete)" and e.sensitivity == 1.0 and e.delta == 0.0
        assert e.epsilon == pytest.approx(share * eps / (depth + 1), rel=1e-12)
    assert levels[0].details["nodes"] == 1
    # the leaf sums: one discrete Gaussian, L2 sensitivity r (half the box's diagonal), all delta
    assert sums.mechanism == "Gaussian (discrete, zCDP)"
    assert sums.sensitivity == pytest.approx(math.sqrt(3.0), rel=1e-15)
    assert sums.delta == delta and sums.epsilon == pytest.approx((1 - share) * eps, rel=1e-9)
    assert sums.scale >= sums.sensitivity / math.sqrt(2 * zcdp_rho_for(sums.epsilon, delta))
    if depth:
        assert result.iterations_run.max() <= depth


def test_a_tiny_dataset_stops_at_the_root_yet_charges_every_level():
    X = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    result = run(X, LSHClustering(3, BOX3, 1.0, 1e-6), 3)
    levels = [e for e in result.ledger.entries if e.mechanism == "Laplace (discrete)"]
    assert len(levels) == 21 and result.ledger.is_fully_spent()
    assert result.iterations_run[0] == 0
    assert all(e.details["nodes"] == 0 for e in levels[1:])  # empty releases, still charged
    leaves = [e for e in result.ledger.entries if e.mechanism.startswith("Gaussian")]
    assert leaves[0].details["leaves"] == 1
    assert result.centroids.shape == (1, 3, 3)
    assert np.all(np.abs(result.centroids) <= 1.0)


def test_the_count_share_follows_google_s_noise_ratio():
    """Laplace scale of a level = 20 sigma / r at the default share."""
    for eps, delta, depth in [(1.0, 1e-6, 20), (0.2, 1e-5, 10), (8.0, 1e-7, 20)]:
        s = google_count_share(eps, delta, depth)
        laplace_scale = (depth + 1) / (s * eps)
        sigma_over_r = 1 / math.sqrt(2 * zcdp_rho_for((1 - s) * eps, delta))
        assert laplace_scale == pytest.approx(20 * sigma_over_r, rel=1e-6)
        assert 0.05 < s < 0.3


def test_a_given_share_and_thresholds_are_used(X):
    config = LSHClustering(3, BOX3, 2.0, 1e-6, max_depth=5, count_share=0.5,
                           min_num_points_in_node=50, min_num_points_in_branching_node=120)
    ledger = run(X, config, 1).ledger
    assert ledger.entries[0].epsilon == pytest.approx(1.0 / 6)
    assert config.thresholds(3000.0, 1.0) == (50.0, 120.0)
    # Google's rule: min(int(10 sqrt(d) sigma / r), floor(n~) // 2k), at least 1; branching 3x
    rule = LSHClustering(3, BOX3, 2.0, 1e-6)
    r = math.sqrt(3.0)
    assert rule.thresholds(3000.0, 2 * r) == (int(10 * math.sqrt(3) * 2), 3 * 34)
    assert rule.thresholds(150.7, 2 * r) == (25.0, 75.0)
    assert rule.thresholds(-12.0, 2 * r) == (1.0, 3.0)


@pytest.mark.parametrize("n", [500, 40])  # more records than the 64 codes, and fewer
def test_the_exact_tree_counts_add_up(n):
    rng = np.random.default_rng(0)
    block = rng.uniform(-1, 1, (n, 3))
    planes = rng.standard_normal((6, 3))
    backend = MemoryBackend()
    data, n_rows, _ = backend.prepare(block, BOX3)
    replica = Replica(backend, data, n_rows, PrivacyLedger(), np.random.default_rng(1))
    below = _codes_below(replica, np.zeros(3), math.sqrt(3), planes)
    signs = (block @ planes.T < 0).astype(np.int64)
    codes = signs @ (1 << np.arange(5, -1, -1))
    for level in range(7):
        every = np.arange(2**level, dtype=np.int64)
        counts = _node_counts(below, every, level, 6)
        assert counts.dtype == np.int64 and counts.sum() == n
        # a node's count is the number of records whose code starts with its prefix
        np.testing.assert_array_equal(counts, np.bincount(codes >> (6 - level),
                                                          minlength=2**level))
    # the first bit is the first hyperplane's sign (1 on the negative side)
    assert _node_counts(below, np.array([1]), 1, 6)[0] == np.sum(block @ planes[0] < 0)
    both = (block @ planes[0] < 0) & (block @ planes[1] >= 0)
    assert _node_counts(below, np.array([0b10]), 2, 6)[0] == both.sum()


def test_every_code_finds_the_leaf_whose_prefix_it_starts_with():
    # prefix-free leaves at depth 4: 0 (level 1), 10 (level 2), 1100 and 1111 (level 4)
    leaves = [(1, np.array([0]), np.array([5.0])), (2, np.array([0b10]), np.array([2.0])),
              (4, np.array([0b1111, 0b1100]), np.array([1.0, 3.0]))]
    ranges, weights = _leaf_ranges(leaves, 4)
    np.testing.assert_array_equal(weights, [5.0, 2.0, 1.0, 3.0])
    expected = [0] * 8 + [1] * 4 + [3, -1, -1, 2]
    np.testing.assert_array_equal(_leaf_of(np.arange(16), ranges), expected)
    empty, _ = _leaf_ranges([], 4)
    np.testing.assert_array_equal(_leaf_of(np.arange(3), empty), [-1, -1, -1])


# -- seeding, replicas, backends ---------------------------------------------------------------
def test_same_seed_same_bits_another_seed_other_bits(X):
    config = LSHClustering(3, BOX3, 1.0, 1e-6)
    a, b, c = run(X, config, 5), run(X, config, 5), run(X, config, 6)
    assert a.centroids.tobytes() == b.centroids.tobytes()
    assert a.ledger.entries == b.ledger.entries
    assert not np.array_equal(a.centroids, c.centroids)


def test_a_replica_alone_is_the_same_replica_in_a_batch(X):
    config = LSHClustering(3, BOX3, 1.0, 1e-6, max_depth=10)
    batch = run(X, config, np.random.SeedSequence(9), replicas=3)
    for r in range(3):
        alone = run(X, config, np.random.SeedSequence(9, n_children_spawned=r))
        for name in ("centroids", "noisy_counts", "spent", "iterations_run"):
            assert getattr(alone, name)[0].tobytes() == getattr(batch, name)[r].tobytes()
    assert len({batch.centroids[r].tobytes() for r in range(3)}) == 3


@pytest.mark.slow
def test_the_dask_backend_gives_the_in_memory_bits():
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    from dpkmeans.compute.backends.dask import DaskBackend

    rng = np.random.default_rng(11)
    n = 2 * BLOCK_ROWS + 5_000  # three blocks: a real reduction tree
    X = np.clip(rng.uniform(-0.9, 0.9, (4, 3))[rng.integers(0, 4, n)]
                + rng.normal(0, 0.05, (n, 3)), -1, 1)
    config = LSHClustering(4, BOX3, 1.0, 1e-6)
    memory = run(X, config, 2026, replicas=2)
    with DaskBackend(n_workers=2) as backend:
        on_dask = run(X, config, 2026, replicas=2, backend=backend)
        fitted = DPKMeans(4, epsilon=1.0, delta=1e-6, bounds=BOX3, algorithm="lsh",
                          backend="dask", client=backend.client, random_state=3).fit(X)
    for name in ("centroids", "noisy_counts", "spent", "iterations_run"):
        assert getattr(memory, name).tobytes() == getattr(on_dask, name).tobytes()
    assert memory.ledger.entries == on_dask.ledger.entries
    here = DPKMeans(4, epsilon=1.0, delta=1e-6, bounds=BOX3, algorithm="lsh",
                    random_state=3).fit(X)
    assert here.cluster_centers_.tobytes() == fitted.cluster_centers_.tobytes()


# -- a neighbouring pair ------------------------------------------------------------------------
class _Stop(Exception):
    pass


class _Recording(Replica):
    """A replica that keeps what it releases and stops the run after ``keep`` releases."""

    keep = 2

    def release(self, calibration, values, **kw):  # type: ignore[override]
        out = super().release(calibration, values, **kw)
        self.seen.append(out)
        if len(self.seen) == self.keep:
            raise _Stop
        return out


def _first_releases(X: np.ndarray, config: LSHClustering, trials: int, seed: int):
    backend = MemoryBackend()
    data, n_rows, _ = backend.prepare(X, config.bounds)
    root, child = np.empty(trials), np.empty(trials)
    for t, s in enumerate(np.random.SeedSequence(seed).spawn(trials)):
        replica = _Recording(backend, data, n_rows, PrivacyLedger(budget=config.cost),
                             np.random.default_rng(s))
        replica.seen = []
        with pytest.raises(_Stop):
            config.fit_replica(replica)
        root[t] = replica.seen[0][0]
        child[t] = replica.seen[1][0]  # the first hyperplane's positive side
    return root, child


def test_a_neighbouring_pair_shows_no_more_loss_than_a_level_s_epsilon():
    """D: 30 records at the box's midpoint, where every hyperplane passes (projection 0: the
    first hyperplane's positive side, child 0, whatever the trial's hyperplanes); D': one more.
    The root's count and child 0's count are each released with a level's epsilon (1 here):
    their observed log ratios stay below it, and come close to it (the test sees a loss)."""
    config = LSHClustering(2, BOX3, 4.0, 1e-6, max_depth=1, count_share=0.5,
                           min_num_points_in_node=1, min_num_points_in_branching_node=1)
    eps_level = config.epsilon_level
    assert eps_level == pytest.approx(1.0)
    trials = 4000
    root0, child0 = _first_releases(np.zeros((30, 3)), config, trials, 21)
    root1, child1 = _first_releases(np.zeros((31, 3)), config, trials, 22)
    edges = np.linspace(25.0, 36.0, 23)
    for a, b in ((root0, root1), (child0, child1)):
        est = estimate_log_ratios(a, b, edges, min_count=50)
        assert est.epsilon_lower_bound() <= eps_level
        assert est.max_abs_estimate() > 0.6 * eps_level
    # the same check sees a release with half the noise
    half0, half1 = 30 + (root0 - 30) / 2, 31 + (root1 - 31) / 2
    assert estimate_log_ratios(half0, half1, edges, min_count=50).epsilon_lower_bound() > eps_level


# -- utility -------------------------------------------------------------------------------------
def test_well_separated_blobs_are_found_at_a_large_epsilon():
    """Four blobs in eight dimensions, in different directions from the box's midpoint (the
    hyperplanes pass through it)."""
    centres = 0.6 * np.eye(8)[:4] - 0.6 * np.eye(8)[4:8]
    X = blobs(20_000, centres, 0.03, 2)
    box = (-np.ones(8), np.ones(8))
    result = run(X, LSHClustering(4, box, 50.0, 1e-6), 0)
    found = result.centroids[0]
    gaps = np.linalg.norm(centres[:, None] - found[None], axis=2).min(axis=1)
    assert gaps.max() < 0.1, gaps
    assert np.all(result.noisy_counts[0] > 2_000)


# -- the estimator and the inputs ----------------------------------------------------------------
def test_the_estimator_fits_and_predicts(X):
    model = DPKMeans(3, epsilon=1.0, delta=1e-6, bounds=(-1.0, 1.0), algorithm="lsh",
                     random_state=0).fit(X)
    assert model.cluster_centers_.shape == (3, 3)
    assert model.ledger_.is_fully_spent()
    assert model.privacy_spent_.delta == pytest.approx(1e-6)
    assert model.predict(X).shape == (3000,)
    again = DPKMeans(3, epsilon=1.0, delta=1e-6, bounds=(-1.0, 1.0), algorithm="lsh",
                     random_state=0).fit(X)
    assert again.cluster_centers_.tobytes() == model.cluster_centers_.tobytes()
    with pytest.raises(ValueError, match="give delta"):
        DPKMeans(3, epsilon=1.0, bounds=(-1.0, 1.0), algorithm="lsh").fit(X)


def test_the_catalogue_builds_google_s_defaults():
    from dpkmeans.api.catalogue import CATALOGUE, FitInputs

    choice = CATALOGUE["lsh"]
    assert choice.needs_delta and choice.neighbour == "add/remove"
    config = choice.build(FitInputs(4, 0.5, BOX3, max_iter=5, delta=1e-6))
    assert isinstance(config, LSHClustering)
    assert (config.max_depth, config.count_share, config.min_num_points_in_node) == (20, None,
                                                                                     None)
    with pytest.raises(ValueError, match="give delta"):
        catalogue_config(FitInputs(4, 0.5, BOX3, max_iter=5))


@pytest.mark.parametrize("kw, error, message", [
    ({"delta": 0.0}, ValueError, "give delta"),
    ({"delta": 1.5}, ValueError, "delta"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"max_depth": 25}, ValueError, "max_depth must be at most 24"),
    ({"max_depth": -1}, ValueError, "max_depth"),
    ({"count_share": 1.0}, ValueError, "count_share must lie in"),
    ({"count_share": "half"}, TypeError, "count_share"),
    ({"min_num_points_in_node": 0}, ValueError, "min_num_points_in_node"),
    ({"min_num_points_in_node": 10, "min_num_points_in_branching_node": 5}, ValueError,
     "at least min_num_points_in_node"),
    ({"neighbour": "replace"}, ValueError, "add/remove"),
    ({"n_init": 0}, ValueError, "n_init"),
])
def test_bad_inputs_are_refused(kw, error, message):
    args = {"n_clusters": 3, "bounds": BOX3, "epsilon": 1.0, "delta": 1e-6, **kw}
    with pytest.raises(error, match=message):
        LSHClustering(**args)


def test_a_ledger_without_room_for_the_run_refuses_it(X):
    ledger = PrivacyLedger(budget=(0.5, 1e-6))
    with pytest.raises(BudgetExceededError):
        run(X, LSHClustering(3, BOX3, 1.0, 1e-6), 0, ledger=ledger)
