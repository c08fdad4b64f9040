"""The Dask backend over Parquet files on disk, streamed: the in-memory bits and ledger whatever
the files' row groups, the estimator, and clear errors for bad input (book chapter 8;
``docs/design.md``, "Determinism and the block plan")."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from dpkmeans.api.catalogue import FitInputs, choice
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.blocks import BLOCK_ROWS
from dpkmeans.compute.bounds import clip_to_bounds
from dpkmeans.compute.lloyd import assign, batched_stats, block_silhouette, local_map_reduce
from dpkmeans.engine import loop as engine

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")
from dpkmeans.compute.backends import dask as dask_backend  # noqa: E402
from dpkmeans.compute.backends import parquet  # noqa: E402
from dpkmeans.compute.backends.dask import DaskBackend, HeldChunks, StreamedChunks, stream_blocks  # noqa: E402
from dpkmeans.compute.backends.parquet import ParquetRows  # noqa: E402

pytestmark = pytest.mark.slow
N, D = 3 * BLOCK_ROWS + 12345, 5
COLUMNS = [f"x{j}" for j in range(D)]
BOX = (np.zeros(D), np.ones(D))
#: Files of awkward sizes (one of a single row) and row groups that fit no block.
CUTS = [0, 70_000, 70_001, 150_000, N]
ROW_GROUPS = [33_333, 1, 10_007, 65_535]


@pytest.fixture(scope="module")
def backend():
    with DaskBackend() as be:
        yield be


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> tuple[np.ndarray, ParquetRows]:
    """A Gaussian mixture, partly outside the box (so clipping happens), in four files."""
    rng = np.random.default_rng(38)
    centres = rng.uniform(0.1, 0.9, (4, D))
    X = centres[rng.integers(0, 4, N)] + rng.normal(0.0, 0.12, (N, D))
    folder = tmp_path_factory.mktemp("parquet")
    for i, (a, b) in enumerate(zip(CUTS[:-1], CUTS[1:], strict=True)):
        columns = {name: X[a:b, j] for j, name in enumerate(COLUMNS)}
        table = pa.table(columns | {"note": ["r"] * (b - a)})  # a column that is not read
        pq.write_table(table, folder / f"part-{i}.parquet", row_group_size=ROW_GROUPS[i])
    return X, ParquetRows(folder, COLUMNS)


def _config(name: str):
    return choice(name).build(FitInputs(4, 1.0, BOX, max_iter=4, n_records=N, delta=None))


def _same(a: engine.DPLloydResult, b: engine.DPLloydResult) -> None:
    assert np.array_equal(a.centroids, b.centroids)
    assert np.array_equal(a.initial_centroids, b.initial_centroids)
    assert np.array_equal(a.noisy_counts, b.noisy_counts)
    assert np.array_equal(a.iterations_run, b.iterations_run)
    assert a.n_clipped == b.n_clipped
    assert a.ledger.entries == b.ledger.entries


def test_footers_give_the_shape_and_every_range_reads_its_rows(data):
    X, src = data
    assert src.shape == (N, D) and src.nbytes == N * D * 8 and len(src.files) == 4
    assert "rows" not in repr(src) and str(N) not in repr(src)  # the count is private
    assert np.array_equal(src.read(), X)
    for start, stop in [(0, 1), (69_999, 70_002), (BLOCK_ROWS, 3 * BLOCK_ROWS), (N - 5, N)]:
        assert np.array_equal(src.read(start, stop), X[start:stop])
    pieces = src.chunk(69_999, 70_002).pieces
    assert [(p.skip, p.take) for p in pieces] == [(69_999 - 2 * 33_333, 1), (0, 1), (0, 1)]
    assert src.chunk(5, 5).read().shape == (0, D)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_the_pass_kernels_give_np_clip_and_the_check_block(d):
    """The fill clips as the in-memory path's np.clip does, signed zeros included (numpy's
    two loops differ there: one bound per column for d = 1, per-feature bounds otherwise)."""
    values = np.array([-0.0, 0.0, 2.0, -3.0, 0.5, np.nan, np.inf, 1.0, -1.0, -np.inf])
    X = np.stack([np.roll(values, j) for j in range(d)], axis=1)
    cols = tuple(np.ascontiguousarray(X[:, j]) for j in range(d))
    for c in cols:
        c.flags.writeable = False
    for lo, hi in [(0.0, 1.0), (-0.0, 0.0), (-1.0, -0.0), (-1.0, 0.0), (-0.0, 1.0)]:
        lower, upper = np.full(d, lo), np.full(d, hi)
        want = np.clip(X, lower, upper)
        checks = tuple(dask_backend._check_block(X, lower, upper)[0])
        for fill, count, mode in [
                (parquet.fill_rows, parquet.count_rows, parquet.clip_mode(d)),  # in Python
                (*parquet._kernels(), parquet.clip_mode(d))]:  # compiled, with numba
            out = np.full((X.shape[0] + 2, d), 7.0)
            fill(out, 1, cols, lower, upper, mode)
            if mode == parquet.NO_CLIP:  # the numpy path: np.clip once the block is full
                np.clip(out[1:-1], lower, upper, out=out[1:-1])
            assert np.array_equal(out[1:-1].view(np.int64), want.view(np.int64))
            assert np.all(out[[0, -1]] == 7.0)
            assert tuple(int(v) for v in count(cols, lower, upper)) == checks
        out = np.empty_like(X)
        parquet._fill_numpy(out, 0, cols, lower, upper, parquet.NO_CLIP)
        assert np.array_equal(out.view(np.int64), X.view(np.int64))
        assert tuple(parquet._count_numpy(cols, lower, upper)) == checks


def test_blocks_are_clipped_as_in_memory_whatever_the_path(data, monkeypatch):
    X, src = data
    want = clip_to_bounds(X, BOX)[0]
    assert np.array_equal(src.chunk(0, N).read(*BOX, clip=True).view(np.int64),
                          want.view(np.int64))
    monkeypatch.setitem(parquet._CLIP_MODES, D, parquet.NO_CLIP)  # np.clip on full blocks
    got = list(src.chunk(BLOCK_ROWS, N).blocks(*BOX, clip=True))
    assert [start for start, _ in got] == [0, BLOCK_ROWS, 2 * BLOCK_ROWS]
    assert np.array_equal(np.concatenate([b for _, b in got]), want[BLOCK_ROWS:])


def test_chunks_of_a_stream_are_aligned_runs_sized_for_io():
    assert stream_blocks(4 * 10**8, 10, 2) == 16  # 16 blocks of 5.2 MB: 84 MB per task
    assert stream_blocks(4 * 10**8, 1000, 2) == 1  # a block is already larger than the cap
    assert stream_blocks(N, D, 2) == 1  # four blocks: at least two chunks per worker
    assert stream_blocks(10**9, 3, 2, max_bytes=2**30) == 512


@pytest.mark.parametrize(("blocks_per_chunk", "direct"), [(1, False), (2, True), (4, False),
                                                          (4, True)])
def test_streamed_statistics_are_the_in_memory_bits(backend, data, monkeypatch, blocks_per_chunk,
                                                    direct):
    """Through the page cache or with O_DIRECT, in windows smaller than a file's row groups
    or holding several."""
    X, src = data
    src = ParquetRows(src.files, COLUMNS, direct=direct)
    monkeypatch.setattr(parquet, "DIRECT_WINDOW", 2**20)  # runs of about one row group (here)
    assert np.array_equal(src.read(), X)
    monkeypatch.setattr(dask_backend, "stream_blocks", lambda *a, **k: blocks_per_chunk)
    held, n_rows, n_clipped = backend.prepare(src, BOX)
    clipped, memory_clipped = clip_to_bounds(X, BOX)
    assert isinstance(held, StreamedChunks) and (n_rows, n_clipped) == (N, memory_clipped)
    assert n_clipped > 0 and held.clip
    assert held.starts == list(range(0, N, blocks_per_chunk * BLOCK_ROWS))  # 4 blocks
    C = np.random.default_rng(1).random((3, 4, D))
    assert all(np.array_equal(x, y) for x, y in zip(backend.stats(held, C),
                                                    batched_stats(clipped, C), strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(
        backend.map_reduce(held, block_silhouette, C),
        local_map_reduce(clipped, block_silhouette, C), strict=True))
    rows = np.array([[0, N - 1], [70_000, 123]])
    assert np.array_equal(backend.records(held, rows), clipped[rows])


@pytest.mark.parametrize("name", ["dplloyd-impr", "apdp", "silhouette"])
def test_a_streamed_run_is_the_in_memory_run(backend, data, name):
    """APDP also gathers records for its initial release; the silhouette variant maps
    another statistic."""
    X, src = data
    src = ParquetRows(src.files, COLUMNS, direct=name == "apdp")
    config = _config(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the clipping warning
        memory = engine.run(X, config, 2026, replicas=2)
        streamed = engine.run(src, config, 2026, replicas=2, backend=backend)
    _same(memory, streamed)


def test_a_parquet_source_can_be_persisted_and_a_dask_array_streamed(data):
    X, src = data
    config = _config("dplloyd-impr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = engine.run(X, config, 5)
        with DaskBackend(persist=True) as keep:
            held, _, _ = keep.prepare(src, BOX)
            assert isinstance(held, HeldChunks)
            _same(memory, engine.run(src, config, 5, backend=keep))
        with DaskBackend(persist=False) as stream:
            lazy = da.from_array(X, chunks=(40_000, D))
            held, _, _ = stream.prepare(lazy, BOX)
            assert isinstance(held, StreamedChunks)
            _same(memory, engine.run(lazy, config, 5, backend=stream))
            labels = stream.labels(lazy, memory.centroids[0])
            assert isinstance(labels, da.Array)
            assert np.array_equal(labels.compute(scheduler=stream.client),
                                  assign(X, memory.centroids[0]))
    with pytest.raises(TypeError, match="persist"):
        DaskBackend(persist="yes")


@pytest.mark.parametrize("name", ["dplloyd-impr", "apdp"])
def test_the_estimator_fits_a_parquet_source(backend, data, name):
    X, src = data
    params = dict(n_clusters=4, epsilon=1.0, bounds=BOX, algorithm=name, random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = DPKMeans(**params).fit(X)
        streamed = DPKMeans(**params, backend="dask", client=backend.client).fit(src)
    assert np.array_equal(memory.cluster_centers_, streamed.cluster_centers_)
    assert memory.ledger_.entries == streamed.ledger_.entries
    assert memory.n_records_used_ == streamed.n_records_used_
    assert streamed.n_features_in_ == D
    assert isinstance(streamed.labels_, da.Array)  # lazy: nothing N-sized came back
    assert np.array_equal(streamed.labels_.compute(scheduler=backend.client), memory.labels_)
    predicted = streamed.predict(src)
    assert isinstance(predicted, da.Array)
    assert np.array_equal(predicted.compute(scheduler="sync"), memory.labels_)
    assert np.array_equal(streamed.predict(X[:100]), memory.labels_[:100])
    with pytest.raises(TypeError, match="ParquetRows"):
        streamed.transform(src)
    with pytest.raises(TypeError, match="ParquetRows"):
        streamed.score(src)


def test_the_estimator_refuses_what_a_stream_cannot_do(backend, data):
    _, src = data
    with pytest.raises(ValueError, match="backend='dask'"):
        DPKMeans(n_clusters=2, bounds=BOX).fit(src)
    with pytest.raises(ValueError, match="bounds=None"):
        DPKMeans(n_clusters=2, backend="dask", client=backend.client).fit(src)
    with pytest.raises(ValueError, match="features"):
        DPKMeans(n_clusters=2, bounds=(np.zeros(2), np.ones(2)), backend="dask",
                 client=backend.client).fit(src)
    with pytest.raises(TypeError, match="backend='dask'"):
        np.asarray(src)  # the memory backend would load it whole
    held, _, _ = backend.prepare(src, BOX)
    with pytest.raises(ValueError, match="persist=True"):
        backend.map_concat(held, np.transpose)  # an N-sized gather


def test_direct_reads_fall_back_and_leave_no_alias(data, monkeypatch):
    """pyarrow decodes a window into arrays of its own (so its buffer may be reused), and a
    system without O_DIRECT reads through the page cache: the same values."""
    X, src = data
    direct = ParquetRows(src.files, COLUMNS, direct=True)
    assert direct.direct and not src.direct  # None: direct only beyond physical memory
    path = src.files[0]
    meta = pq.ParquetFile(path).metadata
    (groups, lo, hi), *_ = parquet._windows(meta, tuple(range(meta.num_row_groups)))
    buffer = parquet._BUFFERS.take(hi - lo + 2 * parquet.DIRECT_ALIGN)
    window = parquet.read_window(path, lo, hi, os.path.getsize(path), buffer)
    table = pq.ParquetFile(window, metadata=meta).read_row_group(groups[0], columns=COLUMNS)
    buffer[:] = b"\0" * len(buffer)  # the next window's read
    assert np.array_equal(np.column_stack([c.to_numpy() for c in table.columns]),
                          X[:table.num_rows])
    monkeypatch.delattr(os, "O_DIRECT", raising=False)
    assert np.array_equal(direct.read(1000, 140_000), X[1000:140_000])
    with pytest.raises(TypeError, match="direct"):
        ParquetRows(src.files, COLUMNS, direct="yes")


def _write(path, columns: dict, row_group_size: int | None = None) -> None:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)


def test_bad_sources_are_refused_clearly(backend, tmp_path):
    good = {"a": np.arange(10.0), "b": np.ones(10)}
    _write(tmp_path / "good.parquet", good)
    with pytest.raises(ValueError, match="no such file"):
        ParquetRows([tmp_path / "good.parquet", tmp_path / "missing.parquet"], ["a"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no \\*.parquet file"):
        ParquetRows(tmp_path / "empty", ["a"])
    with pytest.raises(ValueError, match="column 'c' is missing"):
        ParquetRows(tmp_path / "good.parquet", ["a", "c"])
    with pytest.raises(ValueError, match="repeated"):
        ParquetRows(tmp_path / "good.parquet", ["a", "a"])
    with pytest.raises(TypeError, match="list of column names"):
        ParquetRows(tmp_path / "good.parquet", "a")
    with pytest.raises(TypeError, match="directory, a file or a list"):
        ParquetRows(3, ["a"])
    (tmp_path / "text.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        ParquetRows(tmp_path / "text.parquet", ["a"])
    _write(tmp_path / "words.parquet", {"a": ["x", "y"], "flag": [True, False]})
    with pytest.raises(ValueError, match="column 'a' .* has type string"):
        ParquetRows(tmp_path / "words.parquet", ["a"])
    with pytest.raises(ValueError, match="column 'flag' .* has type bool"):
        ParquetRows(tmp_path / "words.parquet", ["flag"])


def test_non_finite_values_and_nulls_are_refused_and_integers_accepted(backend, tmp_path):
    box = (np.zeros(2), np.full(2, 100.0))
    for i, bad in enumerate([np.nan, np.inf]):
        values = np.linspace(0.0, 1.0, 3 * BLOCK_ROWS)
        values[BLOCK_ROWS + 17] = bad
        _write(tmp_path / f"bad{i}.parquet", {"a": values, "b": values}, 50_000)
        with pytest.raises(ValueError, match="finite"):
            backend.prepare(ParquetRows(tmp_path / f"bad{i}.parquet", ["a", "b"]), box)
    _write(tmp_path / "null.parquet", {"a": pa.array([1, None, 3], pa.int64()),
                                      "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="finite"):
        backend.prepare(ParquetRows(tmp_path / "null.parquet", ["a", "b"]), box)
    ints = {"a": pa.array(np.arange(1000), pa.int32()), "b": pa.array(np.arange(1000) % 7,
                                                                    pa.uint8())}
    _write(tmp_path / "ints.parquet", ints, 300)
    src = ParquetRows(tmp_path / "ints.parquet", ["a", "b"])
    X = np.column_stack([np.arange(1000.0), np.arange(1000) % 7])
    held, _, n_clipped = backend.prepare(src, box)
    assert n_clipped == 899  # a > 100
    C = np.random.default_rng(2).random((1, 3, 2)) * 100
    assert all(np.array_equal(x, y) for x, y in zip(
        backend.stats(held, C), batched_stats(clip_to_bounds(X, box)[0], C), strict=True))


def test_a_file_changed_after_opening_is_refused(backend, tmp_path):
    path = tmp_path / "x.parquet"
    _write(path, {"a": np.zeros(5)})
    src = ParquetRows(path, ["a"])
    _write(path, {"a": np.ones(7)})
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    with pytest.raises(ValueError, match="changed since it was opened"):
        src.read()
    with pytest.raises(ValueError, match="changed since it was opened"):
        backend.prepare(src, (np.zeros(1), np.ones(1)))
