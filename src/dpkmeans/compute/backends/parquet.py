"""Parquet files on disk as a streamed source of records for the Dask backend (book chapter 8;
``docs/design.md``, "Determinism and the block plan").

A :class:`ParquetRows` names the files and the feature columns; it reads only their footers
(the number of rows of every row group, the columns' types). The Dask backend cuts the rows
into chunks of 2^m aligned blocks of the public plan (:mod:`dpkmeans.compute.blocks`) and gives
each task one :class:`RowChunk`: the row groups that hold its rows, file by file. The task
reads exactly those row groups (``pyarrow.parquet.ParquetFile.read_row_group``), one at a time,
keeps the chunk's rows, and builds each float64 (rows, d) block of the plan in row-major
order, as the in-memory path holds it, in one pass that also clips it to the public bounds
(:func:`fill_rows`, with the values of the in-memory path's ``np.clip``, signed zeros included:
:func:`clip_mode`); the block is mapped while it is in the processor's cache. The check pass
counts with :func:`count_rows` (the counts of the backend's ``_check_block``). Nothing is held
between map-reduce steps: every step reads the files again, so the data may be larger than the
memory of the whole cluster.

Files larger than memory are read with ``O_DIRECT`` (``ParquetRows(direct=...)``): runs of row
groups go from the disk into reused buffers (:func:`read_window`), the next run while this one
is decoded, and pyarrow decodes them from there; the page cache, which every pass would evict
anyway, costs the processor about three times as much per byte (``benchmarks/README.md``,
benchmark 6).

The row groups may have any sizes: a chunk reads every row group it overlaps, whole, and keeps
its rows. Row groups aligned to the chunks (their sizes a power of two times 2^16 rows, or
divisors of the chunk) are read once per pass; others are partly read twice.

Every file's size and modification time are recorded when the source is opened; a task that
finds a file changed raises, so that all passes of a fit read the same records.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpkmeans.compute import fastpath
from dpkmeans.compute.blocks import BLOCK_ROWS
from dpkmeans.extras import require

__all__ = ["ParquetRows", "RowChunk", "fill_rows", "count_rows", "clip_mode", "read_window",
           "NO_CLIP", "CLIP_STRIDED", "CLIP_CONTIGUOUS", "DIRECT_WINDOW", "DIRECT_ALIGN"]

#: Options of ``pyarrow.parquet.ParquetFile`` for a chunk's read: no memory map (the page cache
#: is not charged to the worker), one read per column chunk (the kernel reads ahead).
READ_OPTIONS: dict[str, Any] = {"memory_map": False, "pre_buffer": False}


def _pq() -> Any:
    return require("pyarrow.parquet", "ParquetRows (streamed Parquet input)")


def _is_real(arrow_type: Any) -> bool:
    """An integer or floating Arrow type (booleans, decimals, strings and dates are not)."""
    import pyarrow as pa

    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)


@dataclass(frozen=True)
class _Piece:
    """Rows of one file: its row groups ``groups`` (consecutive), of which the rows
    ``[skip, skip + take)`` are kept; ``stamp`` is the file's (size, mtime_ns) at opening."""

    path: str
    groups: tuple[int, ...]
    skip: int
    take: int
    stamp: tuple[int, int]


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return int(st.st_size), int(st.st_mtime_ns)


class ParquetRows:
    """The records of Parquet files on disk, read by the Dask backend one chunk at a time.

    Accepted as X by ``DaskBackend.prepare`` and ``as_chunks``, by ``engine.run(...,
    backend="dask")`` and by ``DPKMeans(backend="dask").fit``. Only the files' footers are read
    here; the records are read by the workers, at every pass (module docstring).

    Parameters
    ----------
    source : str, path or sequence of them
        A directory (its ``*.parquet`` files, in name order) or a list of files (in the given
        order). The records are the files' rows in that order.
    columns : sequence of str
        The feature columns, in order. Each must exist in every file with an integer or
        floating type; a null counts as a non-finite value (rejected by the fit's check).
    direct : bool or None
        Read the row groups with ``O_DIRECT`` (Linux), past the page cache: for files larger
        than memory, whose pages every pass would evict anyway, it saves the processor the
        cache's copies (:func:`read_window`). ``None`` (default): when the files are larger
        than this machine's physical memory. A filesystem that refuses it is read through
        the cache. The values are the same either way.

    Attributes
    ----------
    files : tuple of str
        The files, in row order.
    columns : tuple of str
        The feature columns.
    shape : (int, int)
        (records, features), from the footers.
    direct : bool
        Whether the workers read with ``O_DIRECT``.

    Raises
    ------
    ValueError
        A missing or unreadable file, an empty directory, a missing column or one that is not
        numeric.
    TypeError
        ``columns`` that is not a sequence of strings, or ``direct`` that is not a bool.

    Examples
    --------
    >>> from dpkmeans.compute.backends.parquet import ParquetRows
    >>> ParquetRows("no/such/dir", ["a"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ParquetRows: no such file or directory: ...
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, source: str | os.PathLike | Sequence[str | os.PathLike],
                 columns: Sequence[str], *, direct: bool | None = None) -> None:
        pq = _pq()
        if direct is not None and not isinstance(direct, bool):
            raise TypeError(f"ParquetRows: direct must be True, False or None, got {direct!r}")
        self.files = _resolve_files(source)
        self.columns = _check_columns(columns)
        sizes: list[np.ndarray] = []
        stamps: list[tuple[int, int]] = []
        for path in self.files:
            try:
                stamps.append(_stamp(path))
                meta = pq.ParquetFile(path).metadata
                schema = meta.schema.to_arrow_schema()
            except OSError as err:
                raise ValueError(f"ParquetRows: cannot read {path}: {err}") from err
            except ValueError as err:  # pyarrow's ArrowInvalid: not a Parquet file
                raise ValueError(f"ParquetRows: {path} is not a readable Parquet file: "
                                 f"{err}") from err
            for name in self.columns:
                if name not in schema.names:
                    raise ValueError(f"ParquetRows: column {name!r} is missing from {path} "
                                     f"(it has {schema.names})")
                kind = schema.field(name).type
                if not _is_real(kind):
                    raise ValueError(f"ParquetRows: column {name!r} of {path} has type {kind}; "
                                     "the features must be integer or floating columns")
            sizes.append(np.array([meta.row_group(g).num_rows
                                   for g in range(meta.num_row_groups)], dtype=np.int64))
        self._stamps = tuple(stamps)
        on_disk = sum(size for size, _ in stamps)
        self.direct = bool(on_disk > _physical_memory()) if direct is None else direct
        self._group_rows = sizes
        counts = np.array([s.sum() for s in sizes], dtype=np.int64)
        self._file_starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._group_starts = [np.concatenate([[0], np.cumsum(s)]).astype(np.int64)
                              for s in sizes]

    # -- metadata ------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        """The number of records (from the footers)."""
        return int(self._file_starts[-1])

    @property
    def n_features(self) -> int:
        """The number of feature columns."""
        return len(self.columns)

    @property
    def shape(self) -> tuple[int, int]:
        """(records, features)."""
        return self.n_rows, self.n_features

    @property
    def nbytes(self) -> int:
        """The size of the records as a float64 array (what one pass builds, chunk by chunk)."""
        return self.n_rows * self.n_features * 8

    def __repr__(self) -> str:  # no row count: the number of records is private
        return f"ParquetRows({len(self.files)} files, columns={list(self.columns)})"

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("a ParquetRows source is streamed by backend='dask' and never loaded "
                        "whole; read a part with .read(start, stop), or use backend='dask'")

    # -- reading -------------------------------------------------------------------------------
    def chunk(self, start: int, stop: int) -> RowChunk:
        """The records ``[start, stop)`` as a task reads them (what it reads, not the values)."""
        n = self.n_rows
        if not 0 <= start <= stop <= n:
            raise ValueError(f"rows [{start}, {stop}) are not within the {self.shape[1]}-column "
                             "source's records")
        pieces = []
        f = max(int(np.searchsorted(self._file_starts, start, side="right")) - 1, 0)
        while f < len(self.files) and self._file_starts[f] < stop:
            offset = int(self._file_starts[f])
            lo, hi = max(start, offset) - offset, min(stop, int(self._file_starts[f + 1])) - offset
            if lo < hi:
                bounds = self._group_starts[f]
                a = int(np.searchsorted(bounds, lo, side="right")) - 1
                b = int(np.searchsorted(bounds, hi, side="left"))
                pieces.append(_Piece(self.files[f], tuple(range(a, b)), lo - int(bounds[a]),
                                     hi - lo, self._stamps[f]))
            f += 1
        return RowChunk(self.columns, tuple(pieces), stop - start, self.direct)

    def chunks(self, rows_per_chunk: int) -> list[tuple[int, RowChunk]]:
        """(first row, :class:`RowChunk`) of every chunk of ``rows_per_chunk`` records."""
        n = self.n_rows
        return [(s, self.chunk(s, min(s + rows_per_chunk, n)))
                for s in range(0, max(n, 1), rows_per_chunk)]

    def read(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The records ``[start, stop)`` as a float64 (rows, d) array, as stored (not
        clipped; a null is NaN), read here: for the data holder's own checks."""
        return self.chunk(start, self.n_rows if stop is None else stop).read()


def _resolve_files(source: Any) -> tuple[str, ...]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            files = sorted(str(p) for p in path.iterdir()
                           if p.suffix == ".parquet" and p.is_file())
            if not files:
                raise ValueError(f"ParquetRows: no *.parquet file in {path}")
            return tuple(files)
        sources: list[Any] = [path]
    elif isinstance(source, Sequence) and not isinstance(source, bytes):
        sources = list(source)
        if not sources:
            raise ValueError("ParquetRows: source is an empty list of files")
    else:
        raise TypeError("ParquetRows: source must be a directory, a file or a list of files, "
                        f"got {type(source).__name__}")
    files = []
    for item in sources:
        if not isinstance(item, str | os.PathLike):
            raise TypeError(f"ParquetRows: a file must be a path, got {type(item).__name__}")
        if not Path(item).is_file():
            raise ValueError(f"ParquetRows: no such file or directory: {os.fspath(item)}")
        files.append(str(Path(item)))
    return tuple(files)


def _check_columns(columns: Any) -> tuple[str, ...]:
    if isinstance(columns, str | bytes) or not isinstance(columns, Sequence):
        raise TypeError("ParquetRows: columns must be a list of column names, got "
                        f"{type(columns).__name__}")
    if not columns or not all(isinstance(c, str) for c in columns):
        raise TypeError("ParquetRows: columns must be a non-empty list of column names")
    if len(set(columns)) != len(columns):
        raise ValueError(f"ParquetRows: columns are repeated in {list(columns)}")
    return tuple(columns)


@dataclass(frozen=True)
class RowChunk:
    """What one task reads: the row groups of each file that hold a run of records."""

    columns: tuple[str, ...]
    pieces: tuple[_Piece, ...]
    rows: int
    direct: bool = False

    def _batches(self) -> Iterator[tuple[np.ndarray, ...]]:
        """The chunk's columns, one row group (or less) at a time, as tuples of float64 arrays
        (read-only). With ``direct``, the row groups are read in runs (:func:`_windows`), each
        in one ``O_DIRECT`` call, the next run while this one is decoded (:class:`_Prefetch`);
        otherwise each file's byte range is first handed to the kernel's read-ahead
        (``POSIX_FADV_WILLNEED``), so that the disk works while the first blocks are
        computed."""
        pq = _pq()
        names = list(self.columns)
        runs = []  # (piece, its ParquetFile, row groups, first byte, end byte)
        for piece in self.pieces:
            if _stamp(piece.path) != piece.stamp:
                raise ValueError(f"ParquetRows: {piece.path} has changed since it was opened; "
                                 "open the source again")
            handle = pq.ParquetFile(piece.path, **READ_OPTIONS)
            if self.direct:
                runs += [(piece, handle, *run) for run in _windows(handle.metadata,
                                                                    piece.groups)]
            else:
                span = _byte_range(handle.metadata, piece.groups)
                _read_ahead(piece.path, span)
                runs.append((piece, handle, piece.groups, *span))
        windows = _Prefetch([(r[0].path, r[3], r[4], r[0].stamp[0]) for r in runs]) \
            if self.direct else iter([None] * len(runs))
        seen, current, skip, left = 0, None, 0, 0
        for (piece, handle, groups, _, _), window in zip(runs, windows, strict=True):
            if piece is not current:
                if current is not None and left:
                    raise ValueError(f"ParquetRows: {current.path} has fewer rows than its "
                                     "footer said; open the source again")
                current, skip, left = piece, piece.skip, piece.take
            reader = handle if window is None else pq.ParquetFile(
                window, metadata=handle.metadata, **READ_OPTIONS)
            for group in groups:
                if left == 0:
                    break
                table = reader.read_row_group(group, columns=names, use_threads=False)
                if skip >= table.num_rows:
                    skip -= table.num_rows
                    continue
                table = table.slice(skip, left)
                skip, left = 0, left - table.num_rows
                for batch in table.to_batches():
                    if batch.num_rows:
                        seen += batch.num_rows
                        yield tuple(_as_float64(batch.column(j)) for j in range(len(names)))
        if seen != self.rows:
            raise ValueError("ParquetRows: a file has fewer rows than its footer said; open "
                             "the source again")

    def blocks(self, lower: np.ndarray | None = None, upper: np.ndarray | None = None, *,
               clip: bool = False, out: np.ndarray | None = None
               ) -> Iterator[tuple[int, np.ndarray]]:
        """(first row within the chunk, block) of every block of the public plan in the chunk
        (which starts at a block boundary), each a C-ordered float64 (rows, d) array built as
        its row groups are read; with ``clip``, clipped to [lower, upper] in place by
        ``np.clip``, the call of the in-memory path and of the Dask backend's ``_clip_block``,
        or, on the compiled path, while it is filled, in the way :func:`clip_mode` found to
        give numpy's values, signed zeros included. A block is built while it is in the
        processor's cache, then handed on. With ``out`` (rows, d), the blocks are its rows."""
        d = len(self.columns)
        fill = _kernels()[0]
        mode = clip_mode(d) if clip else NO_CLIP
        late = clip and mode == NO_CLIP  # np.clip once the block is full
        if clip:
            lower, upper = (np.ascontiguousarray(b, dtype=np.float64) for b in (lower, upper))
        else:
            lower = upper = np.zeros(d)
        start, pos = 0, 0
        block = None
        for cols in self._batches():
            m, used = cols[0].shape[0], 0
            while used < m:
                if block is None:
                    size = min(BLOCK_ROWS, self.rows - start)
                    block = out[start:start + size] if out is not None else np.empty((size, d))
                    pos = 0
                take = min(m - used, block.shape[0] - pos)
                part = cols if (used, take) == (0, m) else tuple(c[used:used + take] for c in cols)
                fill(block, pos, part, lower, upper, mode)
                used, pos = used + take, pos + take
                if pos == block.shape[0]:
                    if late:
                        np.clip(block, lower, upper, out=block)
                    yield start, block
                    start, block = start + pos, None

    def read(self, lower: np.ndarray | None = None, upper: np.ndarray | None = None, *,
             clip: bool = False) -> np.ndarray:
        """The records as one C-ordered float64 (rows, d) array, clipped as :meth:`blocks`."""
        out = np.empty((self.rows, len(self.columns)))
        for _ in self.blocks(lower, upper, clip=clip, out=out):
            pass
        return out

    def check(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """(non-finite values, finite values outside [lower, upper]) of the records."""
        lower, upper = (np.ascontiguousarray(b, dtype=np.float64) for b in (lower, upper))
        counts = np.zeros(2, dtype=np.int64)
        count = _kernels()[1]
        for cols in self._batches():
            counts += np.asarray(count(cols, lower, upper), dtype=np.int64)
        return counts


def _byte_range(meta: Any, groups: tuple[int, ...]) -> tuple[int, int]:
    """[first, end) of the bytes of these (consecutive) row groups' column chunks."""
    lo, hi = None, 0
    for g in groups:
        row_group = meta.row_group(g)
        for j in range(row_group.num_columns):
            col = row_group.column(j)
            first = col.data_page_offset
            if col.has_dictionary_page and col.dictionary_page_offset is not None:
                first = min(first, col.dictionary_page_offset)
            lo = first if lo is None else min(lo, first)
            hi = max(hi, first + col.total_compressed_size)
    return (0, 0) if lo is None else (int(lo), int(hi))


def _windows(meta: Any, groups: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, int]]:
    """The row groups in runs of at most :data:`DIRECT_WINDOW` bytes (a larger row group
    alone), each with its byte range: what one ``O_DIRECT`` read fetches. The first run is a
    quarter of that, so that decoding starts (and the next read overlaps it) sooner."""
    runs: list[tuple[tuple[int, ...], int, int]] = []
    for g in groups:
        lo, hi = _byte_range(meta, (g,))
        limit = DIRECT_WINDOW if len(runs) > 1 else DIRECT_WINDOW // 4
        if runs and hi - runs[-1][1] <= limit and lo >= runs[-1][2]:
            runs[-1] = ((*runs[-1][0], g), runs[-1][1], hi)
        else:
            runs.append(((g,), lo, hi))
    return runs


def _read_ahead(path: str, span: tuple[int, int]) -> None:
    """Ask the kernel to read these bytes now, in the background (a hint: nothing happens
    where ``posix_fadvise`` is missing)."""
    lo, hi = span
    if hi <= lo or not hasattr(os, "posix_fadvise"):
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, lo, hi - lo, os.POSIX_FADV_WILLNEED)
    finally:
        os.close(fd)


#: The largest run of row groups one ``O_DIRECT`` read fetches (bytes): a chunk is read in a
#: few runs, so that reading the next overlaps decoding this one.
DIRECT_WINDOW = 16 * 2**20
#: Alignment of ``O_DIRECT`` offsets and lengths (a multiple of every logical block size).
DIRECT_ALIGN = 4096


class _Buffers:
    """Page-aligned read buffers kept for reuse in this process (a fresh one would cost a page
    fault per 4 KiB at every read)."""

    def __init__(self) -> None:
        self._free: list[mmap.mmap] = []
        self._lock = threading.Lock()

    def take(self, size: int) -> mmap.mmap:
        with self._lock:
            for i, buffer in enumerate(self._free):
                if len(buffer) >= size:
                    return self._free.pop(i)
        return mmap.mmap(-1, -(-size // 2**20) * 2**20)

    def give(self, buffer: mmap.mmap | None) -> None:
        if buffer is not None:
            with self._lock:
                self._free.append(buffer)


_BUFFERS = _Buffers()


class _Window:
    """A file's bytes [start, start + len(view)) read into memory, served to pyarrow as a
    read-only file at the file's own offsets (the footer comes from the metadata passed
    with it)."""

    def __init__(self, view: memoryview, start: int, size: int) -> None:
        self.view, self.start, self.size, self.pos, self.closed = view, start, size, 0, False

    def read(self, n: int = -1) -> memoryview:
        a = self.pos - self.start
        if a < 0 or (n > 0 and a + n > len(self.view)):
            raise OSError(f"read of bytes [{self.pos}, {self.pos + n}) outside the window")
        out = self.view[a:] if n < 0 else self.view[a:a + n]
        self.pos += len(out)
        return out

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 \
            else self.size + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def read_window(path: str, lo: int, hi: int, size: int,
                buffer: mmap.mmap) -> _Window | None:
    """Bytes [lo, hi) of a file (of ``size`` bytes), read in one ``O_DIRECT`` call into a
    page-aligned ``buffer`` (DMA from the disk: no page-cache copy, no eviction work), as a
    file for ``pyarrow.parquet.ParquetFile``; None when the system or the filesystem refuses
    ``O_DIRECT`` (the caller reads through the page cache). pyarrow decodes the values into
    arrays of its own (``tests/compute/test_backend_parquet.py`` checks it), so the buffer may
    be reused once the window's row groups are read."""
    flag = getattr(os, "O_DIRECT", None)
    start = lo // DIRECT_ALIGN * DIRECT_ALIGN
    length = -(-(hi - start) // DIRECT_ALIGN) * DIRECT_ALIGN
    if flag is None or hi <= lo or len(buffer) < length:
        return None
    view = memoryview(buffer)
    try:
        fd = os.open(path, os.O_RDONLY | flag)
    except OSError:
        return None
    try:
        got = 0
        while got < length:
            n = os.preadv(fd, [view[got:length]], start + got)
            if n <= 0:
                break
            got += n
    except OSError:
        return None
    finally:
        os.close(fd)
    if start + got < hi:
        raise ValueError(f"ParquetRows: {path} is shorter than its footer says; open the "
                         "source again")
    return _Window(view[:got], start, size)


class _Prefetch:
    """The windows of (path, first byte, end byte, file size), in order, each read while the
    one before is used: one background thread, two buffers. A window is valid until the next
    one is asked for."""

    def __init__(self, requests: list[tuple[str, int, int, int]]) -> None:
        self.requests = requests

    @staticmethod
    def _read(request: tuple[str, int, int, int]) -> tuple[_Window | None, mmap.mmap]:
        path, lo, hi, size = request
        buffer = _BUFFERS.take(hi - lo + 2 * DIRECT_ALIGN)
        try:
            return read_window(path, lo, hi, size, buffer), buffer
        except BaseException:
            _BUFFERS.give(buffer)
            raise

    def __iter__(self) -> Iterator[_Window | None]:
        from concurrent.futures import ThreadPoolExecutor

        if not self.requests:
            return
        pool = ThreadPoolExecutor(1) if len(self.requests) > 1 else None
        pending, buffer = None, None
        try:
            window, buffer = self._read(self.requests[0])
            for k in range(len(self.requests)):
                if pool is not None and k + 1 < len(self.requests):
                    pending = pool.submit(self._read, self.requests[k + 1])
                yield window
                _BUFFERS.give(buffer)
                buffer = None
                if pending is not None:
                    (window, buffer), pending = pending.result(), None
        finally:
            _BUFFERS.give(buffer)
            if pending is not None:
                try:
                    _BUFFERS.give(pending.result()[1])
                except BaseException:  # the read's own error: nothing to give back
                    pass
            if pool is not None:
                pool.shutdown(wait=True)


def _physical_memory() -> int:
    """This machine's physical memory in bytes (a large number where it is not known)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 2**62


def _as_float64(column: Any) -> np.ndarray:
    """One Arrow column as a contiguous float64 numpy array (zero-copy when it is float64
    without nulls; a null becomes NaN), read-only so that every column has the same type."""
    import pyarrow as pa

    if pa.types.is_float64(column.type) and column.null_count == 0:
        arr = column.to_numpy(zero_copy_only=True)
    else:
        arr = np.ascontiguousarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    if arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


#: How :func:`fill_rows` clips: not at all, or as one of numpy's two ``np.clip`` loops, which
#: differ only on a signed zero equal to a bound (:func:`clip_mode` says which one numpy runs).
NO_CLIP, CLIP_STRIDED, CLIP_CONTIGUOUS = 0, 1, 2


def fill_rows(out: np.ndarray, pos: int, columns: tuple[np.ndarray, ...], lower: np.ndarray,
              upper: np.ndarray, mode: int) -> None:
    """Write the columns (each of m values) into rows ``pos .. pos + m`` of ``out`` (C order)
    in one pass, reading the d columns side by side, clipped to [lower, upper] as ``mode``
    says: ``CLIP_STRIDED`` ``max`` then ``min`` keeping the bound on a tie, as numpy's clip
    loop with per-feature bounds; ``CLIP_CONTIGUOUS`` keeping the value on a tie, as its loop
    with one bound for a whole column. Compiled with numba on the compiled path; this is its
    source."""
    d = len(columns)
    m = columns[0].shape[0]
    for i in range(m):
        for j in range(d):
            x = columns[j][i]
            if mode == 1 and x == x:  # NaN stays NaN, as in numpy
                x = x if x > lower[j] else lower[j]
                x = x if x < upper[j] else upper[j]
            elif mode == 2:
                if x < lower[j]:
                    x = lower[j]
                elif x > upper[j]:
                    x = upper[j]
            out[pos + i, j] = x


def count_rows(columns: tuple[np.ndarray, ...], lower: np.ndarray,
               upper: np.ndarray) -> tuple[int, int]:
    """(non-finite values, finite values outside [lower, upper]) of the columns: the counts
    of the Dask backend's ``_check_block``. Compiled with numba like :func:`fill_rows`."""
    non_finite = 0
    outside = 0
    for j in range(len(columns)):
        v = columns[j]
        lo = lower[j]
        hi = upper[j]
        for i in range(v.shape[0]):
            x = v[i]
            if not np.isfinite(x):
                non_finite += 1
            elif x < lo or x > hi:
                outside += 1
    return non_finite, outside


def _fill_numpy(out: np.ndarray, pos: int, columns: tuple[np.ndarray, ...], lower: np.ndarray,
                upper: np.ndarray, mode: int) -> None:
    """:func:`fill_rows` with numpy, never clipping (on the numpy path :func:`clip_mode` is
    ``NO_CLIP``: the block is clipped by ``np.clip`` once full)."""
    rows = out[pos:pos + columns[0].shape[0]]
    for j, col in enumerate(columns):
        rows[:, j] = col


def _count_numpy(columns: tuple[np.ndarray, ...], lower: np.ndarray,
                 upper: np.ndarray) -> tuple[int, int]:
    """:func:`count_rows` with numpy."""
    non_finite = outside = 0
    for j, col in enumerate(columns):
        finite = np.isfinite(col)
        non_finite += int(col.size - np.count_nonzero(finite))
        outside += int(np.count_nonzero(finite & ((col < lower[j]) | (col > upper[j]))))
    return non_finite, outside


_LOCK = threading.Lock()
_COMPILED: tuple[Any, Any] | None = None
_CLIP_MODES: dict[int, int] = {}


def clip_mode(d: int) -> int:
    """How :func:`fill_rows` reproduces ``np.clip(block, lower, upper)`` for a (rows, d) block
    with per-feature bounds, the call of the in-memory path: the mode whose values (signed
    zeros included) equal numpy's on a probe of every tie, or ``NO_CLIP`` (clip with
    ``np.clip`` afterwards) if none does or the compiled path is off. Decided once per d."""
    if d in _CLIP_MODES:
        return _CLIP_MODES[d]
    mode = NO_CLIP
    if fastpath.compiled():
        values = np.tile([-0.0, 0.0, -1.0, 1.0, -2.0, 2.0, 0.5, -np.inf, np.inf, np.nan], 410)
        probe = np.stack([np.roll(values, j) for j in range(d)], axis=1)  # 4100 rows
        cols = tuple(np.ascontiguousarray(probe[:, j]) for j in range(d))
        for c in cols:
            c.flags.writeable = False
        fill = _kernels()[0]
        candidates = {CLIP_STRIDED, CLIP_CONTIGUOUS}
        for lo, hi in [(0.0, 1.0), (-0.0, 0.0), (-1.0, -0.0), (-1.0, 0.0), (-0.0, 1.0)]:
            lower, upper = np.full(d, lo), np.full(d, hi)
            want = np.clip(probe, lower, upper).view(np.int64)  # bits: signed zeros too
            for candidate in sorted(candidates):
                got = np.empty_like(probe)
                fill(got, 0, cols, lower, upper, candidate)
                if not np.array_equal(got.view(np.int64), want):
                    candidates.discard(candidate)
        mode = min(candidates) if candidates else NO_CLIP
    _CLIP_MODES[d] = mode
    return mode


def _kernels() -> tuple[Any, Any]:
    """(fill, count): numba-compiled on the compiled path (:mod:`dpkmeans.compute.fastpath`),
    else numpy; compiled on first use in each process."""
    global _COMPILED
    if not fastpath.compiled():
        return _fill_numpy, _count_numpy
    with _LOCK:
        if _COMPILED is None:
            import numba as nb

            jit = nb.njit(cache=True, nogil=True, boundscheck=False)
            _COMPILED = (jit(fill_rows), jit(count_rows))
    return _COMPILED
