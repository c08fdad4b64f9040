"""The engine's hook for algorithms that are not DP-Lloyd configurations
(:mod:`dpkmeans.engine.standalone`): run() hands them the data, one generator and one ledger per
replica, and checks every replica's spend against the budget."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dpkmeans.engine.loop import run
from dpkmeans.engine.standalone import Replica, StandaloneConfig, StandaloneFit
from dpkmeans.errors import BudgetExceededError, ClippingWarning
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.noise import calibrate


def _column_sums(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return block.sum(axis=0), np.array([float(block.shape[0])])


@dataclass(frozen=True)
class NoisyMean(StandaloneConfig):
    """A toy: every centroid is the noisy mean of all records (half the budget on the count,
    half on the sums), or spends only ``spend`` of its budget."""

    spend: float = 1.0

    @property
    def iterations(self) -> int:
        return 1

    def fit_replica(self, replica: Replica) -> StandaloneFit:
        sums, count = replica.backend.map_reduce(replica.data, _column_sums)
        half = self.spend * self.epsilon / 2
        d = sums.size
        n = replica.release(calibrate("laplace", 1.0, half, integer_valued=True), count,
                            label="count")
        s = replica.release(calibrate("laplace", float(d), half, coordinates=d), sums,
                            label="sums")
        mean = np.clip(s / max(float(n[0]), 1.0), *self.bounds)
        return StandaloneFit(np.tile(mean, (self.n_clusters, 1)), 1, np.full(self.n_clusters, n[0]))


BOX = (np.zeros(2), np.ones(2))
X = np.random.default_rng(0).random((300, 2))


def test_run_hands_a_standalone_configuration_its_replicas():
    result = run(X, NoisyMean(3, BOX, 1.0), 7, replicas=4)
    assert result.centroids.shape == (4, 3, 2)
    assert result.ledger.is_fully_spent() and result.ledger.is_private
    np.testing.assert_allclose(result.spent, 1.0)
    assert result.iterations_run.tolist() == [1, 1, 1, 1]
    # same seed, same bits; replica r is the r-th child of the seed, whatever runs beside it
    again = run(X, NoisyMean(3, BOX, 1.0), 7, replicas=4)
    np.testing.assert_array_equal(result.centroids, again.centroids)
    more = run(X, NoisyMean(3, BOX, 1.0), 7, replicas=6)
    np.testing.assert_array_equal(result.centroids, more.centroids[:4])
    assert not np.array_equal(result.centroids[0], result.centroids[1])


def test_a_replica_that_spends_less_than_its_budget_is_refused():
    with pytest.raises(RuntimeError, match="differs from the budget"):
        run(X, NoisyMean(2, BOX, 1.0, spend=0.5), 0)


def test_a_replica_cannot_spend_more_than_its_budget():
    with pytest.raises(BudgetExceededError):
        run(X, NoisyMean(2, BOX, 1.0, spend=1.5), 0)


def test_a_callers_ledger_continues_and_is_checked():
    ledger = PrivacyLedger(budget=1.5)
    ledger.charge("Laplace (discrete)", epsilon=0.5, sensitivity=1.0, scale=2.0, label="count")
    result = run(X, NoisyMean(2, BOX, 1.0), 0, ledger=ledger, replicas=2)
    assert result.ledger is ledger and ledger.is_fully_spent()
    np.testing.assert_allclose(result.spent, 1.5)


def test_standalone_runs_clip_and_refuse_what_only_the_loop_takes():
    with pytest.warns(ClippingWarning, match="clipped"):
        run(X * 2, NoisyMean(2, BOX, 1.0), 0)
    with pytest.raises(ValueError, match="not a DP-Lloyd configuration"):
        run(X, NoisyMean(2, BOX, 1.0), 0, initial_centroids=np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="not a DP-Lloyd configuration"):
        run(X, NoisyMean(2, BOX, 1.0), 0, record_history=True)


def test_a_standalone_configuration_checks_its_public_inputs():
    with pytest.raises(ValueError, match="n_clusters"):
        NoisyMean(0, BOX, 1.0)
    with pytest.raises(ValueError, match="neighbour"):
        NoisyMean(2, BOX, 1.0, neighbour="swap")
    with pytest.raises(ValueError):
        NoisyMean(2, BOX, -1.0)


def test_the_dask_backend_gives_the_same_bits():
    pytest.importorskip("dask.distributed")
    memory = run(X, NoisyMean(2, BOX, 1.0), 3, replicas=2)
    dask = run(X, NoisyMean(2, BOX, 1.0), 3, replicas=2, backend="dask")
    np.testing.assert_array_equal(memory.centroids, dask.centroids)
