"""Shang et al.'s (2021) Optimized Canopy (dpkmeans.papers.di.canopy): max-min order, the depth rule for k,
errors, the engine hook, the Dask backend's bits and the Magic data."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from dpkmeans.compute.blocks import BLOCK_ROWS
from dpkmeans.data import load
from dpkmeans.data.registry import get_registry
from dpkmeans.engine import loop as engine
from dpkmeans.papers.di.canopy import CanopyInitialRelease, CanopyResult, optimized_canopy

_DATA_ROOT = os.environ.get("DPKMEANS_DATA")  # read at import, as tests/data/test_data_loader.py


def _need(name: str) -> Path:
    """The file of ``name`` under $DPKMEANS_DATA, or skip with the reason."""
    if not _DATA_ROOT:
        pytest.skip(f"{name}: $DPKMEANS_DATA is not set (point it at ../shared/data)")
    spec = get_registry().dataset(name)
    path = Path(_DATA_ROOT) / name / spec.file.name
    if not path.is_file():
        pytest.skip(f"{name}: {spec.file.name} is not under $DPKMEANS_DATA/{name}/")
    return path


def _blobs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three well-separated blobs of 50 records at unequal distances (so that D_2 and D_3
    differ: with three equidistant blobs the depth index can tie k = 3 against k = 4, as the
    single drop D_3 -> D_4 enters both Depth(3) and Depth(4))."""
    means = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 4.0]])
    rng = np.random.default_rng(seed)
    return np.concatenate([m + rng.normal(0.0, 0.2, (50, 2)) for m in means]), means


def _same(a: CanopyResult, b: CanopyResult) -> None:
    assert a.n_clusters == b.n_clusters
    for field in ("centres", "max_min_distances", "depth"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@pytest.mark.parametrize("seed", range(5))
def test_three_blobs_give_k_3_and_one_centre_per_blob(seed):
    X, means = _blobs(seed)
    res = optimized_canopy(X)
    assert res.n_clusters == 3 and res.centres.shape == (3, 2)
    assert res.max_min_distances.shape == (10,) and res.depth.shape == (9,)
    nearest_mean = np.argmin(((res.centres[:, None] - means[None]) ** 2).sum(axis=2), axis=1)
    assert sorted(nearest_mean) == [0, 1, 2]
    assert all(np.any(np.all(X == c, axis=1)) for c in res.centres)  # centres are records


def test_farthest_first_order_by_hand():
    """Mean 3.2 -> 3 first; then 10 (D_2 = 7), 0 (D_3 = 3), then 2 and 1 tie at distance 1 and
    the lower row (2, row 1) comes first (D_4 = 1), then 1 (D_5 = 1). With D_1 := D_2 the
    steps are |0|, |3 - 7|, |1 - 3|, |1 - 1| and Depth(2..4) = 4, 6, 2: k = 3."""
    X = np.array([[10.0], [2.0], [0.0], [3.0], [1.0]])
    res = optimized_canopy(X, k_max=4)
    assert np.array_equal(res.max_min_distances, [7.0, 3.0, 1.0, 1.0])
    assert np.array_equal(res.depth, [4.0, 6.0, 2.0])
    assert res.n_clusters == 3 and np.array_equal(res.centres[:, 0], [3.0, 10.0, 0.0])
    full = optimized_canopy(X, n_clusters=5, k_max=4)
    assert np.array_equal(full.centres[:, 0], [3.0, 10.0, 0.0, 2.0, 1.0])


def test_fixed_n_clusters_keeps_the_order_and_the_depth():
    X, _ = _blobs(0)
    auto = optimized_canopy(X)
    for k in (1, 2, 5, 12):  # 12 > k_max + 1: more centres than the depth rule looks at
        res = optimized_canopy(X, n_clusters=k)
        assert res.n_clusters == k and res.centres.shape == (k, 2)
        assert np.array_equal(res.centres[: min(k, 3)], auto.centres[: min(k, 3)])
        assert np.array_equal(res.max_min_distances, auto.max_min_distances)
        assert np.array_equal(res.depth, auto.depth)


@pytest.mark.parametrize(("X", "kwargs", "error", "match"), [
    (np.arange(20.0), {}, ValueError, "2-D"),
    (np.full((20, 2), np.nan), {}, ValueError, "finite"),
    (np.zeros((5, 2)), {}, ValueError, "at least 11 records"),
    (np.zeros((0, 2)), {}, ValueError, "at least 11 records"),
    (np.zeros((15, 2)), {"n_clusters": 20}, ValueError, "at least 20 records"),
    (np.zeros((20, 2)), {"k_max": 1}, ValueError, "k_max must be >= 2"),
    (np.zeros((20, 2)), {"n_clusters": 0}, ValueError, "n_clusters must be >= 1"),
    (np.zeros((20, 2)), {"n_clusters": 2.5}, TypeError, "n_clusters must be an integer"),
    (np.zeros((20, 2)), {"k_max": "3"}, TypeError, "k_max must be an integer"),
])
def test_bad_inputs_are_refused(X, kwargs, error, match):
    with pytest.raises(error, match=match):
        optimized_canopy(X, **kwargs)


def test_deterministic():
    X, _ = _blobs(3)
    _same(optimized_canopy(X), optimized_canopy(X.copy()))


def test_hook_gives_every_replica_the_same_centres_and_records_the_step():
    X, _ = _blobs(1)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))  # inside the box [0, 1]^2
    config = engine.DPLloydConfig(n_clusters=2, bounds=(np.zeros(2), np.ones(2)),
                                  schedule=[1.0], start=CanopyInitialRelease())
    result = engine.run(X, config, seed=0, replicas=3)
    expected = optimized_canopy(X, n_clusters=2).centres
    assert result.initial_centroids.shape == (3, 2, 2)
    assert all(np.array_equal(c, expected) for c in result.initial_centroids)
    assert any(e.mechanism == "post-processing" and "Optimized Canopy on the raw records" in e.label
               for e in result.ledger.entries)
    assert CanopyInitialRelease().name.startswith("Optimized Canopy")


@pytest.fixture(scope="module")
def dask_backend():
    pytest.importorskip("distributed")
    from dpkmeans.compute.backends.dask import DaskBackend

    with DaskBackend() as be:
        yield be


@pytest.mark.slow
def test_dask_gives_the_in_memory_bits(dask_backend):
    """Three blocks of the plan, in uneven dask chunks: the same centres, D and Depth."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7)
    X = rng.random((4, 3))[rng.integers(0, 4, 2 * BLOCK_ROWS + 5_000)]
    X = X + rng.normal(0.0, 0.05, X.shape)
    data, n_rows, n_clipped = dask_backend.prepare(da.from_array(X, chunks=(50_000, 2)),
                                                   (X.min(axis=0), X.max(axis=0)))
    assert (n_rows, n_clipped) == (X.shape[0], 0)
    _same(optimized_canopy(data, backend=dask_backend), optimized_canopy(X))
    _same(optimized_canopy(data, n_clusters=4, backend=dask_backend),
          optimized_canopy(X, n_clusters=4))


def test_magic_scaled_to_unit_box():
    """Magic (19,020 x 10, the DI paper's columns) scaled to [0, 1]: with k_max = 10 the depth
    rule picks k = 5 (D_2..D_11 = 0.922, 0.864, 0.782, 0.699, 0.593, 0.589, ...: the largest
    Depth is at i = 5, 0.189). Well under a second in memory."""
    _need("magic")
    X = load("magic", paper="di", download=False).scaled((0, 1)).X
    start = time.perf_counter()
    res = optimized_canopy(X, k_max=10)
    assert time.perf_counter() - start < 5.0
    assert 2 <= res.n_clusters <= 10 and res.centres.shape == (res.n_clusters, X.shape[1])
    _same(res, optimized_canopy(X, k_max=10))
