"""The Dask backend: the in-memory bits on every partitioning, a killed worker, the estimators
(book chapter 8; ``docs/design.md``, "Determinism and the block plan")."""

from __future__ import annotations

import os
import signal
import warnings

import numpy as np
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.blocks import BLOCK_ROWS
from dpkmeans.compute.lloyd import assign, batched_stats, block_silhouette
from dpkmeans.engine import loop as engine
from dpkmeans.papers import apdp
from dpkmeans.papers.silhouette.variants import as_published, corrected
from dpkmeans.papers.su.variants import dplloyd

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
from dpkmeans.compute.backends import get_backend  # noqa: E402
from dpkmeans.compute.backends.dask import DaskBackend  # noqa: E402

pytestmark = pytest.mark.slow
BOX = (np.zeros(3), np.ones(3))


@pytest.fixture(scope="module")
def backend():
    with DaskBackend() as be:
        yield be


@pytest.fixture(scope="module")
def big():
    """More rows than one block, so the plan has three blocks and a real tree."""
    rng = np.random.default_rng(11)
    centres = rng.random((4, 3))
    X = centres[rng.integers(0, 4, 2 * BLOCK_ROWS + 5_000)] + rng.normal(0, 0.05, (2 * BLOCK_ROWS + 5_000, 3))
    return np.clip(X, 0.0, 1.0)


def _same(a: engine.DPLloydResult, b: engine.DPLloydResult) -> None:
    assert np.array_equal(a.centroids, b.centroids)
    assert np.array_equal(a.initial_centroids, b.initial_centroids)
    assert np.array_equal(a.noisy_counts, b.noisy_counts)
    assert np.array_equal(a.iterations_run, b.iterations_run)
    assert np.array_equal(a.spent, b.spent)
    assert a.ledger.entries == b.ledger.entries
    assert (a.sse_history is None) == (b.sse_history is None)
    if a.sse_history is not None:
        assert np.array_equal(a.sse_history, b.sse_history)


@pytest.mark.parametrize("chunks", [(BLOCK_ROWS, 3), (1_000, 3), (50_000, 1), (-1, -1)])
def test_statistics_are_the_in_memory_bits_on_every_partitioning(backend, big, chunks):
    C = np.random.default_rng(1).random((5, 4, 3))
    data, n_rows, n_clipped = backend.prepare(da.from_array(big, chunks=chunks), BOX)
    assert (n_rows, n_clipped) == (big.shape[0], 0)
    sums, counts = backend.stats(data, C)
    ref_sums, ref_counts = batched_stats(big, C)
    assert np.array_equal(sums, ref_sums) and np.array_equal(counts, ref_counts)
    sil = backend.map_reduce(data, block_silhouette, C)
    from dpkmeans.compute.lloyd import local_map_reduce

    ref = local_map_reduce(big, block_silhouette, C)
    assert all(np.array_equal(x, y) for x, y in zip(sil, ref, strict=True))


@pytest.mark.parametrize("make", [
    lambda: dplloyd(4, 1.0, BOX, iterations=4),
    lambda: corrected(4, 1.0, BOX),
    lambda: as_published(4, 1.0, BOX, data_derived_bounds=False),
    lambda: apdp.corrected(4, 5.0, BOX, n_records=10_000),
    lambda: apdp.as_published(4, 5.0, BOX, n_records=10_000, data_derived_bounds=False),
], ids=["dplloyd", "silhouette-corrected", "silhouette-as-published", "apdp-corrected",
        "apdp-as-published"])
def test_a_run_on_dask_is_the_in_memory_run(backend, big, make):
    """Also the record gather of APDP's initial release, its partition stop, and the SSE
    history."""
    config = make()
    memory = engine.run(big, config, 2026, replicas=3, record_history=True)
    on_dask = engine.run(da.from_array(big, chunks=(40_000, 3)), config, 2026, replicas=3,
                         backend=backend, record_history=True)
    _same(memory, on_dask)


@pytest.mark.parametrize("blocks_per_chunk", [2, 4])
def test_chunks_of_several_blocks_are_nodes_of_the_same_tree(backend, monkeypatch, blocks_per_chunk):
    """Chunks of 2^m blocks (fewer tasks) give the bits of one block per task."""
    import dpkmeans.compute.backends.dask as dask_backend

    rng = np.random.default_rng(4)
    X = rng.random((5 * BLOCK_ROWS + 123, 2))
    C = rng.random((3, 4, 2))
    monkeypatch.setattr(dask_backend, "chunk_blocks", lambda n_rows, workers: blocks_per_chunk)
    data, n_rows, _ = backend.prepare(X, (np.zeros(2), np.ones(2)))
    assert len(data.chunks) == -(-6 // blocks_per_chunk) and data.starts[1] == blocks_per_chunk * BLOCK_ROWS
    assert all(np.array_equal(x, y) for x, y in zip(backend.stats(data, C), batched_stats(X, C), strict=True))
    assert np.array_equal(backend.map_concat(data, assign, C[0]), assign(X, C[0]))


def test_chunk_sizes_follow_the_workers_not_the_data():
    from dpkmeans.compute.backends.dask import chunk_blocks

    assert chunk_blocks(10**6, 2) == 4  # 16 blocks: 4 chunks for 2 workers
    assert chunk_blocks(10**6, 1) == 8 and chunk_blocks(10**6, 16) == 1
    assert chunk_blocks(581_012, 2) == 2  # 9 blocks: 5 chunks, not 3 unequal ones
    assert chunk_blocks(1000, 8) == 1


def test_a_dask_dataframe_is_accepted(backend, big):
    import pandas as pd

    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(pd.DataFrame(big, columns=["a", "b", "c"]), npartitions=3)
    C = np.random.default_rng(6).random((2, 4, 3))
    data, n_rows, _ = backend.prepare(frame, BOX)
    assert n_rows == big.shape[0]
    assert all(np.array_equal(x, y) for x, y in zip(backend.stats(data, C), batched_stats(big, C),
                                                    strict=True))


def test_clipping_and_bad_input_are_reported_as_in_memory(backend):
    X = np.array([[0.5, 2.0, 0.1], [-1.0, 0.5, 0.5], [0.2, 0.2, 0.2]])
    _, n_rows, n_clipped = backend.prepare(da.from_array(X, chunks=(2, 3)), BOX)
    assert (n_rows, n_clipped) == (3, 2)
    with pytest.raises(ValueError, match="finite"):
        backend.prepare(da.from_array(np.array([[0.1, np.nan, 0.2]])), BOX)
    with pytest.raises(ValueError, match="2-D"):
        backend.prepare(da.zeros(5), BOX)
    with pytest.raises(ValueError, match="features"):
        backend.prepare(da.zeros((5, 2)), BOX)
    with pytest.raises(ValueError, match="real numbers"):
        backend.prepare(da.from_array(np.array([["a", "b", "c"]])), BOX)


def test_labels_match_the_exact_assignment(backend, big):
    C = np.random.default_rng(3).random((4, 3))
    assert np.array_equal(backend.labels(da.from_array(big, chunks=(30_000, 3)), C), assign(big, C))


def test_estimator_accepts_the_dask_backend_and_a_dask_array(backend, big):
    client = backend.client
    params = dict(n_clusters=4, epsilon=1.0, bounds=BOX, random_state=5, n_records=big.shape[0])
    memory = DPKMeans(**params).fit(big)
    on_dask = DPKMeans(**params, backend="dask", client=client).fit(
        da.from_array(big, chunks=(70_000, 3)))
    assert np.array_equal(memory.cluster_centers_, on_dask.cluster_centers_)
    assert np.array_equal(memory.labels_, on_dask.labels_)
    assert memory.ledger_.total() == on_dask.ledger_.total()
    with pytest.raises(ValueError, match="backend='dask'"):
        DPKMeans(**params).fit(da.from_array(big))


def test_get_backend_rejects_what_it_cannot_use(backend):
    with pytest.raises(ValueError, match="backend"):
        get_backend("spark")
    with pytest.raises(ValueError, match="client"):
        get_backend("memory", client=backend.client)
    with pytest.raises(TypeError, match="Client"):
        DaskBackend(client="tcp://127.0.0.1:1")


class _KillingBackend(DaskBackend):
    """Kills (SIGKILL) the worker process holding the data's first chunk while the
    ``kill_at``-th map-reduce of the fit is running; its nanny restarts it, empty."""

    def __init__(self, kill_at: int) -> None:
        super().__init__()
        self.kill_at, self.calls, self.killed = kill_at, 0, None

    def map_reduce(self, data, fn, *args, with_start=False):
        self.calls += 1
        future = self.submit(data, fn, *args, with_start=with_start)
        if self.calls == self.kill_at:
            first = data.chunks[0]
            self.killed = self.client.who_has([first])[first.key][0]
            pid = self.client.run(os.getpid, workers=[self.killed])[self.killed]
            os.kill(pid, signal.SIGKILL)
        return tuple(future.result())


def test_a_worker_killed_mid_fit_changes_neither_the_result_nor_the_ledger(big):
    config = corrected(4, 1.0, BOX)
    memory = engine.run(big, config, 99, replicas=2)
    with _KillingBackend(kill_at=4) as killing, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own warnings about the lost worker
        before = set(killing.client.scheduler_info()["workers"])
        on_dask = engine.run(big, config, 99, replicas=2, backend=killing)
        after = set(killing.client.scheduler_info()["workers"])
    assert killing.killed in before and killing.killed not in after  # it really died
    _same(memory, on_dask)  # recomputed, never noised twice
