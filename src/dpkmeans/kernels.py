"""Compiled (numba) exact Lloyd statistics of one block, and their numpy reference.

:func:`kernel_block_stats` is the map step of :func:`dpkmeans.lloyd.block_stats` in one
compiled pass: for each tile of rows, the score of every centroid, the best and the runner-up,
the exact-assignment test, and the rows added to their cluster's sum. Each tile of X is read
once for all R replicas. Single-threaded and without Python threads: the caller runs blocks in
parallel (the compiled functions release the GIL) and adds their results with
:func:`dpkmeans.blocks.tree_sum`.

**Contract** (the caller passes one block of the public plan, :mod:`dpkmeans.blocks`):

* Labels: the exact nearest centroid of each row, as :class:`dpkmeans.lloyd._Nearest` defines
  it: the same b vectors (-2 c, fl(||c||^2)), the lowest index on an exact tie, a centroid
  equal to one of lower index never wins. The kernel decides a row only when its runner-up
  score exceeds ``best + margin * sqrt(||x||^2 + 1)`` with ``_Nearest``'s proven margin (which
  covers any rounding order of the scores). A block with an undecided row (near tie,
  non-finite row) is done again from its labels: the kernel's, and for the undecided rows
  :func:`dpkmeans.lloyd._exact_nearest`'s. The bits never depend on which rows were near ties.
* Counts: exact integers (float64 on return).
* Sums, the "panels" order: the block's rows are cut into panels of :data:`TILE` = 256 rows
  from the block's start; a panel's sum of a cluster is the left-to-right float64 sum of its
  rows in row order, from +0.0; the panels' sums are added in panel order to the block's sums,
  from +0.0. Any implementation can reproduce it; :func:`panels_block_stats` does with numpy
  (no BLAS). Its rounding error is at most about (256 + m / 256) u sum |x| for an m-row block.
* Replica r's results depend on replica r's centroids only (not on the replicas beside it),
  and a row's label on that row and the centroids only (not on N or its place in the block).
* A non-finite sum makes :func:`dpkmeans.lloyd.as_data_matrix` scan the block and raise its
  ValueError if the block has a NaN or infinite value (an overflow of huge finite values is
  returned as is), as in ``block_stats``.

Compiled code: the scorer is generated for each (k, d) with k d <= 512 (k and d fixed, every
score a chain of d FMAs in registers: about twice as fast as the generic loops, which serve
larger k d). The kernel functions for each (k, d) live in a module generated in a file
(``~/.cache/dpkmeans/kernels`` or ``$DPKMEANS_KERNEL_DIR``) so that numba caches them on disk:
a few seconds to compile each (k, d) once, about half a second to load in a later process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
from pathlib import Path

import numba as nb
import numpy as np

from .lloyd import _exact_nearest, _Nearest, as_data_matrix

__all__ = ["TILE", "kernel_block_labels", "kernel_block_stats", "panels_block_stats"]

#: Rows of a tile (scored together) and of a panel of the sums (module docstring).
TILE = 256


#: Largest k * d for which the scorer is generated with (k, d) fixed (unrolled, in registers).
_GENERATED_MAX = 512


@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath={"contract"})
def _score_generic(XT, m, CT, cn, mg, r, nrm, arg):
    """Best centroid of the m rows in XT (d, m) for replica r into ``arg[i]``, or -1 when the
    row is undecided (runner-up not above best + mg * sqrt(nrm[i]), or anything non-finite)."""
    d = CT.shape[1]
    k = CT.shape[2]
    S = np.empty(m)
    low = np.full(m, np.inf)
    second = np.full(m, np.inf)
    for i in range(m):
        arg[i] = 0
    for j in range(k):
        c = cn[r, j]
        for i in range(m):
            S[i] = c
        for f in range(d):
            b = CT[r, f, j]
            for i in range(m):
                S[i] += b * XT[f, i]
        for i in range(m):
            s = S[i]
            lo = low[i]
            # selects, not max/min: branch-free, and NaN handling spelled out
            hi = s if s > lo else lo  # noqa: FURB136
            second[i] = hi if hi < second[i] else second[i]  # noqa: FURB136
            better = s < lo
            low[i] = s if better else lo
            arg[i] = j if better else arg[i]
    for i in range(m):
        # a non-finite row has nrm = inf or NaN, so the test fails: undecided
        if not (second[i] > low[i] + mg * np.sqrt(nrm[i])):
            arg[i] = -1


def _scorer_source(k: int, d: int) -> str:
    """Source of the scorer for (k, d) with k and d fixed: every score of a row is a chain of d
    FMAs in a register, the rows vectorised. Same contract as :func:`_score_generic`."""
    lines = ['@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath={"contract"})',
             "def _score(XT, m, CT, cn, mg, r, nrm, arg):"]
    for j in range(k):
        lines.append(f"    c{j} = cn[r, {j}]")
        lines += [f"    b{j}_{f} = CT[r, {f}, {j}]" for f in range(d)]
    lines.append("    for i in range(m):")
    lines += [f"        x{f} = XT[{f}, i]" for f in range(d)]
    for j in range(k):
        expr = f"c{j}"
        for f in range(d):
            expr = f"({expr} + b{j}_{f} * x{f})"
        lines.append(f"        s{j} = {expr}")
    lines += ["        lo = s0", "        se = np.inf", "        a = 0"]
    for j in range(1, k):
        lines += [f"        hi = s{j} if s{j} > lo else lo",
                  "        se = hi if hi < se else se",
                  f"        bt = s{j} < lo",
                  f"        lo = s{j} if bt else lo",
                  f"        a = {j} if bt else a"]
    lines += ["        ok = se > lo + mg * np.sqrt(nrm[i])",
              "        arg[i] = a if ok else -1"]
    return "\n".join(lines) + "\n"


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _load_tile(X, t0, m, XT, nrm):
    """Rows t0 .. t0 + m of X transposed into XT (d, m), and 1 + ||x||^2 into nrm."""
    d = X.shape[1]
    for i in range(m):
        nrm[i] = 1.0
    for i in range(m):
        for f in range(d):
            XT[f, i] = X[t0 + i, f]
    for f in range(d):
        for i in range(m):
            nrm[i] += XT[f, i] * XT[f, i]


#: The scorer that the kernel functions below call. They are compiled in a module generated for
#: each (k, d) (:func:`_module`), whose ``_score`` is the generated scorer (or the generic one).
_score = _score_generic


def _k_block(X, CT, cn, margin, given, sums, counts):
    """Sums (R, k, d) and counts (R, k) of the rows of X (one block) in the panels order, added
    into ``sums`` and ``counts`` (zeros on entry). With ``given`` of shape (R, n) the labels are
    taken from it; with shape (R, 0) they are computed, and the number of undecided rows is
    returned (if not 0, the results are incomplete: redo with ``given``)."""
    n, d = X.shape
    R = CT.shape[0]
    k = CT.shape[2]
    use_given = given.shape[1] > 0
    XT = np.empty((d, TILE))
    nrm = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int64)
    panel = np.empty((k, d))
    undecided = 0
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, XT, nrm)  # the tile is read once for every replica
        for r in range(R):
            if use_given:
                for i in range(m):
                    arg[i] = given[r, t0 + i]
            else:
                _score(XT, m, CT, cn, margin[r], r, nrm, arg)
            for j in range(k):
                for f in range(d):
                    panel[j, f] = 0.0
            for i in range(m):
                lab = arg[i]
                if lab < 0:
                    undecided += 1
                    continue
                counts[r, lab] += 1
                for f in range(d):
                    panel[lab, f] += XT[f, i]
            for j in range(k):
                for f in range(d):
                    sums[r, j, f] += panel[j, f]
    return undecided


def _k_block_labels(X, CT, cn, margin, out):
    """Labels (R, n) of the rows of X into ``out``: the kernel's decision, -1 where undecided."""
    n = X.shape[0]
    d = X.shape[1]
    R = CT.shape[0]
    XT = np.empty((d, TILE))
    nrm = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int64)
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, XT, nrm)
        for r in range(R):
            _score(XT, m, CT, cn, margin[r], r, nrm, arg)
            for i in range(m):
                out[r, t0 + i] = arg[i]


_JIT = "@nb.njit(cache=True, nogil=True, boundscheck=False)"
_MODULES: dict[str, object] = {}
_MODULES_LOCK = threading.Lock()  # blocks run in the caller's threads: generate each once


def _kernel_dir() -> Path:
    """Where the generated modules (and numba's caches of them, in __pycache__) are kept."""
    where = os.environ.get("DPKMEANS_KERNEL_DIR")
    path = Path(where) if where else Path.home() / ".cache" / "dpkmeans" / "kernels"
    try:
        path.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        path = Path(tempfile.gettempdir()) / "dpkmeans-kernels"
        path.mkdir(parents=True, exist_ok=True)
        return path


def _module(k: int, d: int):
    """The compiled kernel functions for (k, d): a module generated in a file, so that numba
    caches them on disk (a fresh process compiles each (k, d) once, not every time)."""
    generated = k * d <= _GENERATED_MAX
    key = f"k{k}_d{d}" if generated else "generic"
    with _MODULES_LOCK:
        if key not in _MODULES:
            _MODULES[key] = _load_module(key, k, d, generated)
        return _MODULES[key]


def _load_module(key: str, k: int, d: int, generated: bool):
    parts = ["import numba as nb", "import numpy as np", "",
             "from dpkmeans.kernels import TILE, _load_tile",
             "" if generated else "from dpkmeans.kernels import _score_generic as _score",
             "", ""]
    if generated:
        parts.append(_scorer_source(k, d))
    for fn in (_k_block, _k_block_labels):
        parts += ["", _JIT, inspect.getsource(fn)]
    text = "\n".join(parts)
    # the digest covers this file too: numba's cache of the generated module does not see
    # changes to what it imports from here (_load_tile, TILE, _score_generic)
    digest = hashlib.sha256(text.encode() + Path(__file__).read_bytes()
                            + nb.__version__.encode()).hexdigest()[:16]
    name = f"dpkmeans_kernel_{key}_{digest}"
    path = _kernel_dir() / f"{name}.py"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)  # atomic: concurrent processes (Dask workers) agree
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Prepared:
    """One block and the public per-centroid quantities of :class:`_Nearest`, in the kernel's
    layout."""

    def __init__(self, X: np.ndarray, C: np.ndarray):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        near = _Nearest(self.X, C)
        self.near = near
        self.CT = np.ascontiguousarray(near.CT, dtype=np.float64)  # (R, d, k): -2 c
        self.cn = np.ascontiguousarray(near.c_norms[:, :, 0], dtype=np.float64)  # inf: shadowed
        self.margin = np.ascontiguousarray(near.margin, dtype=np.float64)  # (R,)
        self.mod = _module(self.CT.shape[2], self.CT.shape[1])

    def labels(self) -> np.ndarray:
        """Exact labels (R, n) (the undecided rows by ``_exact_nearest``)."""
        X, (R, d, _) = self.X, self.CT.shape
        out = np.empty((R, X.shape[0]), dtype=np.int64)
        self.mod._k_block_labels(X, self.CT, self.cn, self.margin, out)
        rep, col = np.nonzero(out < 0)
        if rep.size:
            rows = np.hstack([X[col], np.ones((col.size, 1))])
            # huge or non-finite rows: no warnings (non-finite data is reported by the caller)
            with np.errstate(invalid="ignore", over="ignore"):
                scores = np.einsum("ni,nik->nk", rows[:, :d], self.CT[rep]) + self.cn[rep]
                out[rep, col] = _exact_nearest(rows, self.near.B[rep], scores,
                                               ~self.near.shadowed[rep])
        return out

    def stats(self) -> tuple[np.ndarray, np.ndarray]:
        R, d, k = self.CT.shape
        sums, counts = np.zeros((R, k, d)), np.zeros((R, k), dtype=np.int64)
        none = np.empty((R, 0), dtype=np.int64)
        args = (self.X, self.CT, self.cn, self.margin)
        if self.mod._k_block(*args, none, sums, counts):  # undecided rows: redo from labels
            sums, counts = np.zeros((R, k, d)), np.zeros((R, k), dtype=np.int64)
            left = self.mod._k_block(*args, self.labels(), sums, counts)
            assert left == 0
        return _checked(self.X, sums, counts.astype(np.float64))


def _checked(X: np.ndarray, sums: np.ndarray, counts: np.ndarray):
    if not np.isfinite(sums).all():
        as_data_matrix(X)  # raises on NaN or inf in the block (else: overflow, returned)
    return sums, counts


def kernel_block_stats(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums (R, k, d) and counts (R, k) (float64) of one block X (m, d) for centroids C
    (R, k, d), already validated: the contract of the module docstring, single-threaded."""
    return _Prepared(X, C).stats()


def kernel_block_labels(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The exact labels (R, m) of one block X (m, d) for centroids C (R, k, d), through the
    kernel; equal to :func:`dpkmeans.lloyd.assign` (non-finite rows: arbitrary labels)."""
    return _Prepared(X, C).labels()


def panels_block_stats(X: np.ndarray, C: np.ndarray,
                       labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The panels order with numpy only (no numba, no BLAS): sums (R, k, d) and counts (R, k)
    of one block X (m, d) whose exact labels (R, m) are given (:func:`dpkmeans.lloyd.assign`).

    Per replica, one ``np.bincount`` over (panel, label, feature) bins of the flattened rows
    (a left-to-right loop from +0.0: each bin gets its rows in row order), then the panels'
    sums added in panel order to +0.0 by an explicit loop (``np.add.reduce`` may sum pairwise).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    R, k, d = C.shape
    m = X.shape[0]
    labels = np.asarray(labels)
    if labels.shape != (R, m):
        raise ValueError(f"labels must have shape {(R, m)}, got {labels.shape}")
    P = max(1, -(-m // TILE))
    base = (np.arange(m, dtype=np.intp) // TILE) * k  # (panel, label) bin of each row, then d
    features = np.arange(d, dtype=np.intp)
    weights = X.ravel()
    sums = np.empty((R, k, d))
    counts = np.empty((R, k))
    for r in range(R):
        lab = labels[r].astype(np.intp, copy=False)
        counts[r] = np.bincount(lab, minlength=k)
        bins = (((base + lab) * d)[:, None] + features).ravel()
        per_panel = np.bincount(bins, weights=weights, minlength=P * k * d).reshape(P, k * d)
        out = np.zeros(k * d)  # +0.0, then the panels in order
        for p in range(P):
            out += per_panel[p]
        sums[r] = out.reshape(k, d)
    return _checked(X, sums, counts)
