"""Balcan et al. (2017)'s private k-means (``dpkmeans.papers.balcan``, book chapter 12): the
ledger, the fast swap losses, seeding, replicas, the Dask backend, a neighbouring pair, utility
and the estimator."""

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
from dpkmeans.papers.balcan.algorithm import (
    BalcanClustering,
    _child_counts,
    _initial_set,
    _keys,
    _locate,
    _project,
    _swap_losses,
    _swap_table,
    catalogue_config,
)
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.loss import estimate_log_ratios
from tests.papers.blobs import THREE_CENTRES, blobs

BOX3 = (-np.ones(3), np.ones(3))
BOX8 = (-np.ones(8), np.ones(8))


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    return blobs(3000, THREE_CENTRES, 0.05, 1)


@pytest.fixture(scope="module")
def X8() -> np.ndarray:
    centres = np.vstack([0.6 * np.eye(8)[:2], -0.6 * np.eye(8)[:2]])
    return blobs(4000, centres, 0.05, 3)


def _charged(ledger: PrivacyLedger) -> list:
    return [e for e in ledger.entries if e.mechanism != "post-processing"]


# -- the ledger ---------------------------------------------------------------------------------
@pytest.mark.parametrize("k, eps, n, box", [
    (3, 1.0, 3000, BOX3),
    (5, 0.05, 3000, BOX3),
    (2, 5.0, 500, BOX3),
    (1, 0.3, 3000, BOX3),
    (4, 1.0, 4000, BOX8),   # a random projection (d = 8 > 5)
    (3, 2.0, 4, BOX3),      # so small that no cube survives
])
def test_the_ledger_total_is_the_declared_budget(X, X8, k, eps, n, box):
    data = (X if box is BOX3 else X8)[:n]
    config = BalcanClustering(k, box, eps, n_records=n)
    result = run(data, config, 7, replicas=2)
    ledger = result.ledger
    assert ledger.is_fully_spent() and ledger.is_private
    assert ledger.total().epsilon == pytest.approx(eps, rel=1e-12)
    np.testing.assert_allclose(result.spent, eps, rtol=1e-12)
    eps_c, eps_ls, eps_rec, eps_lloyd = config.budgets
    assert (eps_c, eps_ls, eps_rec, eps_lloyd) == pytest.approx(
        (8 * eps / 17, eps / 17, 2 * eps / 17, 6 * eps / 17), rel=1e-12)
    charged = _charged(ledger)
    L, T = config.levels, config.steps
    counts, rest = charged[:3 * L], charged[3 * L:]
    # every level of the three grids: one discrete Laplace release, sensitivity 1
    assert [e.label for e in counts] == [f"cube counts: grid {g}, level {lv}"
                                         for lv in range(1, L + 1) for g in range(3)]
    for e in counts:
        assert e.mechanism == "Laplace (discrete)" and e.sensitivity == 1.0
        assert e.epsilon == pytest.approx(eps_c / (3 * L), rel=1e-12)
    picks, recovery, lloyd = rest[:T + 1], rest[T + 1], rest[T + 2:]
    for e in picks:  # T swaps and the choice of a set, sensitivity (2 R)^2
        assert e.mechanism == "exponential"
        assert e.epsilon == pytest.approx(eps_ls / (T + 1), rel=1e-12)
        assert e.sensitivity == pytest.approx(4 * config.radius**2, rel=1e-15)
    assert recovery.mechanism == "Laplace (discrete)" and recovery.epsilon == eps_rec
    assert recovery.sensitivity == pytest.approx(float(box[1].size) + 1.0)  # centred: d + 1
    assert len(lloyd) == 3 * k  # three DP-Lloyd iterations, k clusters in parallel
    assert result.iterations_run.tolist() == [T, T]


def test_a_tiny_dataset_kills_every_tree_yet_charges_every_level():
    X = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    config = BalcanClustering(3, BOX3, 1.0, n_records=1000)
    result = run(X, config, 3)
    counts = [e for e in result.ledger.entries if e.label.startswith("cube counts")]
    assert len(counts) == 3 * config.levels and result.ledger.is_fully_spent()
    assert all(e.details["cubes"] == 8 for e in counts[:3])  # the roots' children
    assert all(e.details["cubes"] == 0 for e in counts[3:])  # empty releases, still charged
    assert result.centroids.shape == (1, 3, 3)
    assert np.all(np.abs(result.centroids) <= 1.0) and np.all(np.isfinite(result.centroids))


def test_the_spend_does_not_depend_on_the_data(X):
    config = BalcanClustering(3, BOX3, 1.0, n_records=3000)
    many = run(X, config, 1).ledger
    none = run(np.zeros((3, 3)), config, 1).ledger
    assert ([(e.mechanism, e.epsilon, e.sensitivity, e.label) for e in _charged(many)]
            == [(e.mechanism, e.epsilon, e.sensitivity, e.label) for e in _charged(none)])


def test_a_ledger_without_room_for_the_run_refuses_it(X):
    with pytest.raises(BudgetExceededError):
        run(X, BalcanClustering(3, BOX3, 1.0, n_records=3000), 0,
            ledger=PrivacyLedger(budget=0.5))


def test_public_quantities_follow_the_authors_rules():
    config = BalcanClustering(5, (np.zeros(6), np.ones(6)), 1.0, n_records=32_561)
    assert config.projected_dimension == 5 and not config.identity  # floor(ln(32561) / 2)
    assert config.levels == 10  # depth < ln N = 10.39
    assert config.steps == 5 and config.iterations == 5
    assert config.radius == pytest.approx(math.sqrt(6) / 2)
    assert config.threshold == pytest.approx(2 * math.log(32_561) * 30 * 17 / 8)
    assert BalcanClustering(30, BOX3, 1.0, n_records=10).steps == 20
    small = BalcanClustering(2, BOX3, 1.0, n_records=1)
    assert small.identity and small.levels == 1 and small.projected_dimension == 3
    no_lloyd = BalcanClustering(2, BOX3, 1.0, n_records=50, lloyd_iterations=0)
    assert no_lloyd.budgets[3] == 0.0 and sum(no_lloyd.budgets) == pytest.approx(1.0)


# -- the map steps ------------------------------------------------------------------------------
def test_the_swap_table_is_the_loss_of_every_swap():
    rng = np.random.default_rng(0)
    block = rng.uniform(-1, 1, (300, 8))
    G = rng.standard_normal((3, 8)) / math.sqrt(3)
    mid, R = np.zeros(8), 2.0
    y = _project(block, G, mid, R)
    assert np.all(np.linalg.norm(y, axis=1) <= R * (1 + 1e-12))
    C = rng.uniform(-1, 1, (12, 3))
    for k in (1, 4):
        ids = np.arange(k)
        F, S = _swap_losses(block, G, mid, R, C[ids], C, 4 * R * R)
        table = _swap_table(F, S)
        for i in range(k):
            for j in range(12):
                swapped = C[np.where(ids == i, j, ids)]
                loss = ((y[:, None] - swapped[None]) ** 2).sum(axis=2).min(axis=1).sum()
                assert table[i, j] == pytest.approx(loss, rel=1e-9)


def test_the_cube_counts_add_up_and_nest():
    rng = np.random.default_rng(1)
    block = rng.uniform(-1, 1, (500, 2))
    corners = np.array([[-1.0, -1.0], [-1.3, -0.6]])
    root = np.zeros((1, 2), dtype=np.int64)
    level1 = _child_counts(block, None, np.zeros(2), 10.0, corners, 1.0, 1, 3, (root, root))
    assert [c.sum() for c in level1] == [500, 500]
    # unshifted grid: child b has bit i set when coordinate i is in the upper half
    assert level1[0][0] == np.sum((block[:, 0] < 0) & (block[:, 1] < 0))
    assert level1[0][1] == np.sum((block[:, 0] >= 0) & (block[:, 1] < 0))
    # level 2 under two parents: their children's counts add up to the parents' counts
    parents = np.array([[0, 0], [1, 1]])
    level2 = _child_counts(block, None, np.zeros(2), 10.0, corners, 1.0, 2, 3,
                           (parents, np.zeros((0, 2), dtype=np.int64)))
    assert level2[0].size == 8 and level2[1].size == 0
    assert level2[0][:4].sum() == level1[0][0] and level2[0][4:].sum() == level1[0][3]


def test_cells_are_found_among_the_parents_however_wide_their_keys():
    rng = np.random.default_rng(2)
    for bits in (20, 8):  # 4 x 20 = 80 bits: rows matched as rows; 4 x 8: one int64 key each
        assert (_keys(np.zeros((1, 4), dtype=np.int64), bits) is None) == (bits == 20)
        parents = rng.integers(0, 2**bits - 1, (50, 4))
        absent = np.full((1, 4), 2**bits - 1)  # no parent has a coordinate this large
        cells = np.vstack([parents[[3, 0, 49]], absent])
        found = _locate(parents, cells, bits)
        assert found[3] == -1
        assert np.array_equal(parents[found[:3]], parents[[3, 0, 49]])
    assert _locate(parents[:0], cells, 8).tolist() == [-1] * 4


def test_without_refinement_the_recovered_centroids_are_the_release(X):
    config = BalcanClustering(3, BOX3, 1.0, n_records=3000, lloyd_iterations=0)
    result = run(X, config, 4)
    assert result.ledger.is_fully_spent()
    assert result.centroids.tobytes() == result.initial_centroids.tobytes()
    assert not any("iteration" in e.scope for e in result.ledger.entries)


def test_the_initial_set_is_a_subset_when_it_can_be():
    u = np.array([0.99, 0.99, 0.99, 0.0])
    assert sorted(_initial_set(u, 4).tolist()) == [0, 1, 2, 3]
    assert _initial_set(u, 2).tolist() == [1, 1, 1, 0]


# -- seeding, replicas, backends ---------------------------------------------------------------
def test_same_seed_same_bits_another_seed_other_bits(X8):
    config = BalcanClustering(4, BOX8, 1.0, n_records=4000)
    a, b, c = run(X8, config, 5), run(X8, config, 5), run(X8, config, 6)
    assert a.centroids.tobytes() == b.centroids.tobytes()
    assert a.initial_centroids.tobytes() == b.initial_centroids.tobytes()
    assert a.ledger.entries == b.ledger.entries
    assert not np.array_equal(a.centroids, c.centroids)


def test_a_replica_alone_is_the_same_replica_in_a_batch(X8):
    config = BalcanClustering(4, BOX8, 2.0, n_records=4000)
    batch = run(X8, config, np.random.SeedSequence(9), replicas=3)
    for r in range(3):
        alone = run(X8, config, np.random.SeedSequence(9, n_children_spawned=r))
        for name in ("centroids", "initial_centroids", "noisy_counts", "spent",
                     "iterations_run"):
            assert getattr(alone, name)[0].tobytes() == getattr(batch, name)[r].tobytes()
    assert len({batch.centroids[r].tobytes() for r in range(3)}) == 3


@pytest.mark.slow
def test_the_dask_backend_gives_the_in_memory_bits():
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    from dpkmeans.compute.backends.dask import DaskBackend

    rng = np.random.default_rng(11)
    n = BLOCK_ROWS + 5_000  # two blocks: a real reduction
    X = np.clip(rng.uniform(-0.9, 0.9, (4, 8))[rng.integers(0, 4, n)]
                + rng.normal(0, 0.05, (n, 8)), -1, 1)
    config = BalcanClustering(4, BOX8, 1.0, n_records=n)
    memory = run(X, config, 2026, replicas=2)
    with DaskBackend(n_workers=2) as backend:
        on_dask = run(X, config, 2026, replicas=2, backend=backend)
        fitted = DPKMeans(4, epsilon=1.0, bounds=BOX8, algorithm="balcan", backend="dask",
                          client=backend.client, random_state=3).fit(X)
    for name in ("centroids", "initial_centroids", "noisy_counts", "spent", "iterations_run"):
        assert getattr(memory, name).tobytes() == getattr(on_dask, name).tobytes()
    assert memory.ledger.entries == on_dask.ledger.entries
    here = DPKMeans(4, epsilon=1.0, bounds=BOX8, algorithm="balcan", random_state=3).fit(X)
    assert here.cluster_centers_.tobytes() == fitted.cluster_centers_.tobytes()


# -- a neighbouring pair ------------------------------------------------------------------------
class _Stop(Exception):
    pass


class _FirstRelease(Replica):
    """A replica that keeps its first release and stops the run there."""

    def release(self, calibration, values, **kw):  # type: ignore[override]
        self.seen = super().release(calibration, values, **kw)
        raise _Stop


def _first_releases(X: np.ndarray, config: BalcanClustering, trials: int, seed: int):
    backend = MemoryBackend()
    data, n_rows, _ = backend.prepare(X, config.bounds)
    out = np.empty(trials)
    for t, s in enumerate(np.random.SeedSequence(seed).spawn(trials)):
        replica = _FirstRelease(backend, data, n_rows, PrivacyLedger(budget=config.cost),
                                np.random.default_rng(s))
        with pytest.raises(_Stop):
            config.fit_replica(replica)
        out[t] = replica.seen[0]  # the unshifted grid's child 0 (the lower-left quarter)
    return out


def test_a_neighbouring_pair_shows_no_more_loss_than_a_level_s_epsilon():
    """D: 30 records in the lower-left quarter of the unshifted grid's root cube (d = 2: no
    projection, public cubes); D': one more. The first release, the root's children's counts,
    spends one level's epsilon (1 here): the observed log ratios of child 0's noisy count stay
    below it, and come close to it (the test sees a loss)."""
    box = (-np.ones(2), np.ones(2))
    config = BalcanClustering(2, box, 3 * 17 / 8, n_records=5)  # 1 level: eps_c / 3 = 1
    assert config.levels == 1 and config.level_epsilon == pytest.approx(1.0)
    trials = 3000
    a = _first_releases(np.full((30, 2), -0.5), config, trials, 21)
    b = _first_releases(np.full((31, 2), -0.5), config, trials, 22)
    edges = np.linspace(25.0, 36.0, 23)
    est = estimate_log_ratios(a, b, edges, min_count=50)
    assert est.epsilon_lower_bound() <= config.level_epsilon
    assert est.max_abs_estimate() > 0.6 * config.level_epsilon
    # the same check sees a release with half the noise
    half_a, half_b = 30 + (a - 30) / 2, 31 + (b - 31) / 2
    assert (estimate_log_ratios(half_a, half_b, edges, min_count=50).epsilon_lower_bound()
            > config.level_epsilon)


# -- utility -------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [3, 10])
def test_well_separated_blobs_are_found_at_a_large_epsilon(d):
    """Four blobs, without (d = 3) and with (d = 10) a random projection."""
    centres = np.vstack([0.6 * np.eye(d)[:2], -0.6 * np.eye(d)[:2]])
    X = blobs(20_000, centres, 0.03, 2)
    result = run(X, BalcanClustering(4, (-np.ones(d), np.ones(d)), 50.0, n_records=20_000), 0)
    found = result.centroids[0]
    gaps = np.linalg.norm(centres[:, None] - found[None], axis=2).min(axis=1)
    assert gaps.max() < 0.05, gaps
    assert np.all(result.noisy_counts[0] > 4_000)


def test_it_is_close_to_non_private_kmeans_at_a_large_epsilon(X):
    from sklearn.cluster import KMeans

    result = run(X, BalcanClustering(3, BOX3, 20.0, n_records=3000), 1)
    C = result.centroids[0]
    sse = ((X[:, None] - C[None]) ** 2).sum(axis=2).min(axis=1).sum()
    reference = KMeans(3, n_init=3, random_state=0).fit(X).inertia_
    assert sse < 1.1 * reference


# -- the estimator and the inputs ----------------------------------------------------------------
def test_the_estimator_fits_and_predicts(X):
    kw = dict(epsilon=1.0, bounds=(-1.0, 1.0), algorithm="balcan", random_state=0)
    model = DPKMeans(3, n_records=3000, **kw).fit(X)
    assert model.cluster_centers_.shape == (3, 3)
    assert model.ledger_.is_fully_spent() and model.ledger_.is_private
    assert model.n_iter_ == 3 and model.n_records_used_ == 3000
    assert model.predict(X).shape == (3000,)
    again = DPKMeans(3, n_records=3000, **kw).fit(X)
    assert again.cluster_centers_.tobytes() == model.cluster_centers_.tobytes()
    # without n_records the estimator pays for a noisy count first
    counted = DPKMeans(3, **kw).fit(X)
    assert counted.ledger_.is_fully_spent()
    assert abs(counted.n_records_used_ - 3000) < 500
    assert counted.ledger_.entries[0].label == "N (record count)"
    with pytest.raises(ValueError, match="pure epsilon-DP"):
        DPKMeans(3, delta=1e-6, **kw).fit(X)


def test_the_catalogue_builds_the_default_configuration():
    from dpkmeans.api.catalogue import CATALOGUE, FitInputs

    choice = CATALOGUE["balcan"]
    assert choice.needs_n_records and not choice.needs_delta
    assert choice.neighbour == "add/remove"
    config = choice.build(FitInputs(4, 0.5, BOX3, max_iter=5, n_records=1000))
    assert isinstance(config, BalcanClustering)
    assert (config.n_records, config.shares, config.lloyd_iterations) == (1000, (8, 1, 2, 6), 3)
    with pytest.raises(ValueError, match="needs n_records"):
        catalogue_config(FitInputs(4, 0.5, BOX3, max_iter=5))


@pytest.mark.parametrize("kw, error, message", [
    ({"n_records": None}, ValueError, "needs n_records"),
    ({"n_records": 0}, ValueError, "n_records"),
    ({"n_records": 2.5}, TypeError, "n_records"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"delta": 1e-6}, ValueError, "delta must be 0"),
    ({"neighbour": "replace"}, ValueError, "add/remove"),
    ({"shares": (1.0, 1.0, 1.0)}, ValueError, "4 finite weights"),
    ({"shares": (1.0, 0.0, 1.0, 1.0)}, ValueError, "share > 0"),
    ({"lloyd_iterations": -1}, ValueError, "lloyd_iterations"),
    ({"shifted_grids": -1}, ValueError, "shifted_grids"),
    ({"radius_factor": 0.0}, ValueError, "radius_factor"),
    ({"max_steps": 0}, ValueError, "max_steps"),
])
def test_bad_inputs_are_refused(kw, error, message):
    args = {"n_clusters": 3, "bounds": BOX3, "epsilon": 1.0, "n_records": 100, **kw}
    with pytest.raises(error, match=message):
        BalcanClustering(**args)
