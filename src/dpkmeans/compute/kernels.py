"""Compiled (numba) exact Lloyd statistics, silhouettes and distances of one block. Their numpy
references live in :mod:`dpkmeans.compute.panels` (no numba) and are re-exported here; this
module is imported only when the compiled path runs (:mod:`dpkmeans.compute.fastpath`).

:func:`kernel_block_stats` is the map step of :func:`dpkmeans.compute.lloyd.block_stats` in one
compiled pass: for each tile of rows, the score of every centroid, the best and the runner-up,
the exact-assignment test, and the rows added to their cluster's sum. Each tile of X is read
once for all R replicas. Single-threaded and without Python threads: the caller runs blocks in
parallel (the compiled functions release the GIL) and adds their results with
:func:`dpkmeans.compute.blocks.tree_sum`.

**Contract** (the caller passes one block of the public plan, :mod:`dpkmeans.compute.blocks`):

* Labels: the exact nearest centroid of each row, as :class:`dpkmeans.compute.nearest.Nearest` defines
  it: the same b vectors (-2 c, fl(||c||^2)), the lowest index on an exact tie, a centroid
  equal to one of lower index never wins. The kernel decides a row only when its runner-up
  score exceeds ``best + margin * sqrt(||x||^2 + 1)`` with ``Nearest``'s proven margin (which
  covers any rounding order of the scores); a near tie is settled in the kernel, exactly
  (:func:`_exact_row`: floating-point operations shown free of rounding). A replica with a
  row still undecided (a non-finite row, or values beyond 2^+-400) is done again from its
  labels: the kernel's, and for the undecided rows
  :func:`dpkmeans.compute.nearest.exact_nearest`'s. The bits never depend on which rows were
  near ties.
* Counts: exact integers (float64 on return).
* Sums, the "panels" order (:mod:`dpkmeans.compute.panels`): the block's rows are cut into
  panels of :data:`TILE` = 256 rows from the block's start; a panel's sum of a cluster is the
  left-to-right float64 sum of its rows in row order, from +0.0; the panels' sums are added in
  panel order to the block's sums, from +0.0. Any implementation can reproduce it;
  :func:`~dpkmeans.compute.panels.panels_block_stats` does with numpy (no BLAS). Its rounding
  error is at most about (256 + m / 256) u sum |x| for an m-row block.
* Silhouettes (:func:`kernel_block_silhouette`) and nearest distances
  (:func:`kernel_nearest_distance_sums`): each row's value from its scores rounded in one
  canonical order (:func:`~dpkmeans.compute.panels.canonical_scores`: no fused multiply-add,
  so the bits are the same on every CPU), added in the panels order;
  :func:`~dpkmeans.compute.panels.panels_block_silhouette` and
  :func:`~dpkmeans.compute.panels.panels_nearest_distance_sums` reproduce them with numpy, bit
  for bit.
* Replica r's results depend on replica r's centroids only (not on the replicas beside it),
  and a row's label on that row and the centroids only (not on N or its place in the block).
* A non-finite sum makes :func:`dpkmeans.compute.nearest.as_data_matrix` scan the block and raise its
  ValueError if the block has a NaN or infinite value (an overflow of huge finite values is
  returned as is), as in ``block_stats``.

Compiled code: the scorers are generated for each (k, d) with k d <= 640 (k and d fixed, the
centroids in small groups whose scores stay in registers; the assigner's in single precision
with fused multiply-adds, since the labels do not depend on the rounding: a row that its
single-precision scores do not decide is decided in float64, and only then, if still
undecided, exactly), faster than the generic loops (float64),
which serve larger k d; so is the tile loader, generated for each d, which prefetches X ahead
of the row it reads and transposes four rows at a time from one wide load
(:func:`_rows_loader`); the panels are added four and two features a vector
(:func:`_vector_add`): the operations of scalar code, lane by lane, so the same bits. A tile
and its scores share one flat workspace, so that the compiler can prove they do not overlap
and vectorise the scorers over rows. The kernel functions for each
(k, d) live in a module generated in a file
(:func:`dpkmeans.compute.kernel_cache.kernel_dir`) so that numba caches them on disk:
1 to 25 seconds to compile each (k, d) once (more for larger k d), about half a second to
load in a later process. The statistics and labels for k above one centroid group share one
module for each d (:func:`_groups_source`). The decision, silhouettes and minima read off the
canonical scores are generated for each k up to :data:`_ROWS_GENERATED_MAX` as well
(:func:`_rows_source`: the same operations, a row's scores in registers).

The silhouette allocation (chapter 8) reads the statistics of each iteration's centroids,
then their silhouettes: when the silhouette call expects another iteration, the next
statistics pass computes both (:class:`_Fusion`, :func:`_k_block_fused`), the same bits.
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
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from dpkmeans.compute import panels
from dpkmeans.compute.gil import releases_gil
from dpkmeans.compute.kernel_cache import kernel_dir
from dpkmeans.compute.nearest import Nearest, exact_nearest, score_margin

# the numpy references, re-exported (their names as they were here); TILE is the kernels' too
from dpkmeans.compute.panels import (  # noqa: F401
    TILE,
    canonical_scores,
    checked_sums,
    panels_block_silhouette,
    panels_block_stats,
    panels_nearest_distance_sums,
)

__all__ = ["TILE", "canonical_scores", "kernel_block_labels", "kernel_block_silhouette",
           "kernel_block_silhouette_ahead", "kernel_block_stats", "kernel_nearest_distance_sums",
           "panels_block_silhouette", "panels_block_stats", "panels_nearest_distance_sums"]

#: How far ahead of the row it loads the tile loader asks for X (:func:`_prefetch`), in
#: elements (2 KB): one prefetch a row keeps reading X from memory, which the loader's stores
#: otherwise hold to about a third of the machine's bandwidth (9.5 -> 6.4 ns a row at d = 10).
_AHEAD = 256
#: Distance between two rows of a tile's workspace W (module notes below): a tile plus one
#: cache line, so that the d + k rows of W fall in different sets of the L1 cache (at exactly
#: TILE, 2 KB apart, they share two sets of it and evict each other from d = 8 or so).
_STRIDE = TILE + 8


#: Largest k * d for which the scorer is generated with (k, d) fixed (unrolled, in registers).
#: 640 covers DP-KCCM's 25 clusters at d = 24 (credit card, n = 5): the statistics in 37 against
#: 125 ns a row and replica for the generic loops, for about 25 s of compiling once per machine.
_GENERATED_MAX = 640
#: The generated assigners score in single precision (twice float64's numbers per cycle; the
#: assignment alone 42 -> 24 ns a row and replica at k = d = 24, 3.9 -> 2.8 at k = 8, d = 10) with
#: :class:`dpkmeans.compute.nearest.Nearest`'s single-precision margin; the rows it leaves undecided
#: are decided in float64 (:func:`_settle`), so the labels are the exact ones either way. The
#: margin's bound holds without overflow or underflow: a replica with max_j ||b_j|| outside
#: this range, or a row with 1 + ||x||^2 above :data:`_SINGLE_NRM_MAX`, is decided in float64.
_SINGLE_B_RANGE = (2.0**-60, 2.0**60)
_SINGLE_NRM_MAX = 2.0**120
#: The tile's type in the generic modules (float64 scores); the generated modules, whose
#: assigner scores in single precision, define it as float32.
_TILE_TYPE = np.float64
#: Fewest (row, replica) pairs in one call for which the generated scorer is worth compiling
#: (a few seconds per (k, d), once per machine); smaller calls use the generic one. The choice
#: changes no bit (module docstring): only the speed.
_GENERATED_MIN_WORK = 2**16

# The workspace of a tile is one flat float64 array W of (d + k) _STRIDE values: feature f of
# row i at W[f _STRIDE + i] (the tile transposed), the score of centroid j for row i at
# W[(d + j) _STRIDE + i]. One array with constant distances between its rows lets the compiler
# prove that the scores' stores never overlap the rows' loads, and so vectorise the scorer.


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _score_generic(W, m, CT, cn, r):
    """Scores ||c_j||^2 - 2 x_i.c_j of the m rows of the tile in W for replica r, into W's
    score rows, in the canonical order (:func:`canonical_scores`): the generic loops, for k d
    above :data:`_GENERATED_MAX`."""
    d = CT.shape[1]
    k = CT.shape[2]
    for j in range(k):
        s0 = (d + j) * _STRIDE
        c = cn[r, j]
        for i in range(m):
            W[s0 + i] = c
        for f in range(d):
            b = CT[r, f, j]
            x0 = f * _STRIDE
            for i in range(m):
                W[s0 + i] += b * W[x0 + i]


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _assign_generic(W, m, CT, cn, mg, r, nrm, arg):
    """Best centroid of each of the m rows of the tile in W into ``arg[i]`` (the lowest index
    among equal scores; ``cn`` holds +inf for a centroid that never wins), or -1 when the row
    is undecided: runner-up not above best + mg * sqrt(nrm[i]), or anything non-finite. Leaves
    these scores in W's score rows."""
    _score_generic(W, m, CT, cn, r)
    _pick(W, CT.shape[1] * _STRIDE, m, cn, r, mg, nrm, arg, np.empty(m), np.empty(m))


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _assign_double(W, m, CT32, cs32, mg32, r, nrm, arg, X, t0, CT, cs, margin):
    """The generic modules' assigner in the signature of the generated ones (which score in
    single precision with CT32, cs32 and mg32, and settle the rest in float64 from X): float64
    scores only, :func:`_assign_generic` on the float64 tile in W. Returns m (every row may
    be undecided: the caller looks, as after a generated assigner's nonzero return)."""
    _assign_generic(W, m, CT, cs, margin[r], r, nrm, arg)
    return m


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _pick(W, s0, m, cs, r, mg, nrm, arg, low, second):
    """The decision of :func:`_assign_generic` from scores already in W (centroid j of row i at
    W[s0 + j _STRIDE + i], rounded in any order: the margin covers it), leaving out the centroids
    with ``cs[r, j]`` = +inf (equal to one of lower index: they never win). ``low`` and
    ``second`` are workspaces of at least m values."""
    k = cs.shape[1]
    for i in range(m):
        low[i] = W[s0 + i]
        second[i] = np.inf
        arg[i] = 0
    for j in range(1, k):
        if cs[r, j] == np.inf:
            continue
        sj = s0 + j * _STRIDE
        for i in range(m):
            s = W[sj + i]
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


#: Centroids scored together in one loop over a tile's rows by the generated assigner and by
#: the generated canonical scorer: the group's running scores, a feature and its products stay
#: in the CPU's 16 vector registers, where all k scores at once spill. At k = 25, d = 24 (one
#: core, 40 replicas): the statistics 80 -> 37 ns a row and replica, the nearest distances
#: 88 -> 45 ns; no change measured at k <= 10 (the two sizes are the best of 4, 5, 6 and 8).
_ASSIGN_GROUP = 8
_SCORE_GROUP = 6


def _group_terms(js: range, d: int, base: str = "") -> list[str]:
    """Generated lines: the constants of centroids ``js``, the loop over rows and each row's
    scores s_j of those centroids, in the canonical order of :func:`canonical_scores`
    (c + b_0 x_0, then each product added in feature order, feature by feature for the group);
    compiled with ``contract``, the products fuse into FMAs. With ``base`` = "j0 + " the
    centroids are j0 + j, for a j0 given at run time."""
    lines = []
    for j in js:
        lines.append(f"    c{j} = cn[r, {base}{j}]")
        lines += [f"    b{j}_{f} = CT[r, {f}, {base}{j}]" for f in range(d)]
    lines.append("    for i in range(m):")
    lines += [f"        s{j} = c{j}" for j in js]
    for f in range(d):
        lines.append(f"        x = W[{f * _STRIDE} + i]")
        lines += [f"        s{j} = s{j} + b{j}_{f} * x" for j in js]
    return lines


def _assign_group(size: int, d: int, first: bool, base: str) -> list[str]:
    """Generated lines of the single-precision assigner for one group of ``size`` centroids
    (``base`` + 0 .. size - 1, :func:`_group_terms`): each row's best score, runner-up and
    centroid, started from the group's first centroid (``first``) or from W's first two
    score rows and ``arg`` where the previous group left them, and left there. Everything in
    the loop over rows is float32 or int32, so that it is vectorised in single precision (8
    rows a 256-bit vector on the Zen 4 measured; a float64 or int64 value in the loop made
    LLVM take 4)."""
    low, second = d * _STRIDE, (d + 1) * _STRIDE
    lines = [f"    l{t} = np.int32({base}{t})" for t in range(size)]
    lines += ["    inf32 = np.float32(np.inf)"] if first else []
    lines += _group_terms(range(size), d, base)
    if first:
        lines += ["        lo = s0", "        se = inf32", "        a = l0"]
    else:
        lines += [f"        lo = W[{low} + i]", f"        se = W[{second} + i]",
                  "        a = arg[i]"]
    for t in range(1 if first else 0, size):
        lines += [f"        hi = s{t} if s{t} > lo else lo",
                  "        se = hi if hi < se else se",
                  f"        bt = s{t} < lo",
                  f"        lo = s{t} if bt else lo",
                  f"        a = l{t} if bt else a"]
    lines += [f"        W[{low} + i] = lo", f"        W[{second} + i] = se", "        arg[i] = a"]
    return lines


#: Signature of every assigner (:func:`_assign_double` and the generated ones). Each returns
#: the number of rows its scores left undecided before its float64 pass (0: no row of the tile
#: is -1, and the caller's exact pass, :func:`_settle_exact`, is skipped).
_ASSIGN_SIGNATURE = "(W, m, CT, cn, mg, r, nrm, arg, X, t0, CT64, cs64, mg64)"


def _finish_call(d: int) -> str:
    return (f"    return _finish(W, m, {d * _STRIDE}, {(d + 1) * _STRIDE}, mg, r, nrm, arg, X, t0,"
            " CT64, cs64, mg64)")


def _scorer_source(k: int, d: int) -> str:
    """Source of the scorer ``_score`` and of the assigner ``_assign`` for (k, d) with k and d
    fixed (the contracts of :func:`_score_generic` and :func:`_assign_double`, except that the
    generated ``_assign`` scores the float32 tile in single precision, CT, cn and mg being the
    single-precision terms, then settles in float64 the rows that these leave undecided
    (:func:`_finish`), and leaves W's score rows alone but the first two): the rows vectorised,
    the centroids in groups (:data:`_SCORE_GROUP`, :data:`_ASSIGN_GROUP`), one loop over the
    rows each.
    ``_score`` gives the canonical bits (no fused multiply-add: portable across CPUs);
    ``_assign`` may round as it likes (the same chains, fused into FMAs): the labels are exact
    whatever the rounding. Between the groups the assigner keeps each row's best score, its
    runner-up and its centroid in W's first two score rows and in ``arg``."""
    score = ["@nb.njit(cache=True, nogil=True, boundscheck=False)",
             "def _score(W, m, CT, cn, r):"]
    for j in range(0, k, _SCORE_GROUP):
        js = range(j, min(j + _SCORE_GROUP, k))
        score += _group_terms(js, d)
        score += [f"        W[{(d + j) * _STRIDE} + i] = s{j}" for j in js]
    jit = '@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath={"contract"})'
    assign = [jit, f"def _assign{_ASSIGN_SIGNATURE}:"]
    for j in range(0, k, _ASSIGN_GROUP):
        assign += _assign_group(min(_ASSIGN_GROUP, k - j), d, j == 0, f"{j} + ")
    assign.append(_finish_call(d))
    return "\n".join(score) + "\n\n\n" + "\n".join(assign) + "\n"


#: Group sizes of the per-d module's assigner (:func:`_groups_source`): k - 8 centroids are
#: taken 8, 4, 2 and 1 at a time (at most three passes for the remainder), so that the module
#: compiles 5 group functions rather than one for every size from 1 to 8 (about half the time).
_GROUP_SIZES = (8, 4, 2, 1)


def _groups_source(d: int) -> str:
    """Source of ``_assign`` for any k > :data:`_ASSIGN_GROUP` at d fixed (the contract of
    :func:`_scorer_source`'s, one module for every such k): one function for each size of
    :data:`_GROUP_SIZES`, for centroids j0 .. j0 + size - 1 given at run time, called group by
    group in the order of the centroids. The first group (8 centroids) starts each row's best
    score, runner-up and centroid as :func:`_scorer_source`'s does (from centroid 0), every
    group keeps them in W's first two score rows and ``arg``, and :func:`_finish` takes the
    decision. Compiled once per d rather than once per (k, d): DP-KCCM's n k clusters take
    many values of k. (The statistics and labels only: the canonical scorer with run-time
    offsets did not vectorise, 2-3x slower, so the silhouettes and distances keep a module for
    each (k, d); ``_score`` here is the generic one, unused.)"""
    jit = '@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath={"contract"})'
    out = ["from dpkmeans.compute.kernels import _score_generic as _score"]
    for size in _GROUP_SIZES:
        for first in ((True, False) if size == _ASSIGN_GROUP else (False,)):
            name = f"_assign{size}_first" if first else f"_assign{size}"
            out += ["", "", jit, f"def {name}(W, m, CT, cn, r, j0, arg):",
                    *_assign_group(size, d, first, "j0 + ")]
    out += ["", "", _JIT, f"def _assign{_ASSIGN_SIGNATURE}:", "    k = CT.shape[2]",
            f"    _assign{_ASSIGN_GROUP}_first(W, m, CT, cn, r, 0, arg)",
            f"    j0 = {_ASSIGN_GROUP}", "    while j0 < k:"]
    for n, size in enumerate(_GROUP_SIZES):
        test = "else" if size == 1 else f"{'if' if n == 0 else 'elif'} k - j0 >= {size}"
        out += [f"        {test}:", f"            _assign{size}(W, m, CT, cn, r, j0, arg)",
                f"            j0 += {size}"]
    out.append(_finish_call(d))
    return "\n".join(out) + "\n"


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _finish(W, m, low, second, mg, r, nrm, arg, X, t0, CT, cs, margin):
    """The single-precision assigner's decision from each row's best score and runner-up (at
    W[low + i] and W[second + i]): ``arg[i]`` stays if the runner-up is above
    best + mg * sqrt(nrm[i]) (and nrm[i] is at most :data:`_SINGLE_NRM_MAX`), else the row is
    decided in float64 by :func:`_settle` (a non-finite row has nrm = inf or NaN: -1).
    Returns the number of rows the single-precision scores left to :func:`_settle` (0: every
    row decided, and neither it nor the caller's exact pass need look at the tile)."""
    left = 0
    for i in range(m):
        ok = (W[second + i] > W[low + i] + mg * np.sqrt(nrm[i])) & (nrm[i] <= _SINGLE_NRM_MAX)
        arg[i] = arg[i] if ok else -1
        left += 0 if ok else 1
    if left:
        _settle(X, t0, m, CT, cs, margin, r, nrm, arg)
    return left


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _settle(X, t0, m, CT, cs, margin, r, nrm, arg):
    """The rows of the tile (rows t0 .. t0 + m of X) that the single-precision scores left
    undecided (``arg[i]`` = -1), decided as :func:`_assign_generic` decides in float64: the
    scores from the row of X, the lowest index among equal scores, the centroids with
    ``cs[r, j]`` = +inf left out, and -1 again when the runner-up is not above
    best + margin[r] sqrt(nrm[i]) (a near tie in float64 too, or a non-finite row). Rare
    (about 1 row in 10^4 to 10^5): one row at a time."""
    d = X.shape[1]
    k = CT.shape[2]
    mg = margin[r]
    for i in range(m):
        if arg[i] >= 0:
            continue
        lo = 0.0
        se = np.inf
        a = 0
        for j in range(k):
            if j > 0 and cs[r, j] == np.inf:
                continue
            s = cs[r, j]
            for f in range(d):
                s += CT[r, f, j] * X[t0 + i, f]
            if j == 0:
                lo = s
                continue
            # the selects of _pick (NaN handling included)
            hi = s if s > lo else lo  # noqa: FURB136
            se = hi if hi < se else se  # noqa: FURB136
            better = s < lo
            lo = s if better else lo
            a = j if better else a
        arg[i] = a if se > lo + mg * np.sqrt(nrm[i]) else -1


# The exact nearest centroid of a near tie, in the kernel (:func:`_exact_row`): the same label
# as :func:`dpkmeans.compute.nearest.exact_nearest` (the exact argmin, the lowest index on an
# exact tie), decided by floating-point operations whose results are exact, so that a replica
# with near ties need not be done again (the as-published APDP runs on adult had 1.6 % of
# their (replica, row) pairs as exact ties in the first iteration, and two calls in three
# redid their replicas). Row and centroid values are kept within _EXACT_RANGE, where Dekker's
# product and Knuth's sum are error-free (Higham, Accuracy and Stability, sec. 4.3; no
# overflow, no underflow of an error term); a row outside it is left to exact_nearest.
_EXACT_RANGE = (2.0**-400, 2.0**400)
#: Veltkamp's splitting constant for float64, 2^27 + 1.
_VELTKAMP = 134217729.0
#: The float64 scores' rounding bound factor of exact_nearest: 2.2 (d + 4) u sum |a_i b_i|.
_TIE_BOUND = 2.2 * 2.0**-53


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _exact_range(v):
    """Whether v is 0 or within :data:`_EXACT_RANGE` in magnitude (NaN and inf are not)."""
    a = abs(v)
    return a == 0.0 or (a >= _EXACT_RANGE[0] and a <= _EXACT_RANGE[1])


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _two_product(a, b):
    """(p, e) with p = fl(a b) and e = a b - p exactly (Dekker's TwoProduct, Veltkamp's split),
    for a and b within :data:`_EXACT_RANGE`."""
    p = a * b
    c = _VELTKAMP * a
    ah = c - (c - a)
    al = a - ah
    c = _VELTKAMP * b
    bh = c - (c - b)
    bl = b - bh
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _grow(e, n, b):
    """Add b to the expansion e[:n] (nonoverlapping, increasing magnitude, no zeros) exactly:
    Shewchuk's Grow-Expansion with zero elimination, in place (e holds n + 1 values). Returns
    the new length; the expansion's sign is that of its last component."""
    q = b
    h = 0
    for i in range(n):
        x = q + e[i]
        bv = x - q
        err = (q - (x - bv)) + (e[i] - bv)  # Knuth's TwoSum
        q = x
        if err != 0.0:
            e[h] = err
            h += 1
    if q != 0.0:
        e[h] = q
        h += 1
    return h


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _exact_less(X, row, CT, cs, r, j, c):
    """Whether a.b_j < a.b_c exactly, a = (x, 1) the row, b_j = (CT[r, :, j], cs[r, j]): first
    a.(b_j - b_c) where every difference, product and partial sum is shown exact (the common
    case: shared coordinates, 0/1 or dyadic values), else the sign of the exact sum of the
    4 (d + 1) product terms (:func:`_two_product`) as an expansion (:func:`_grow`)."""
    d = X.shape[1]
    total = 0.0
    cheap = True
    for f in range(d + 1):
        a = X[row, f] if f < d else 1.0
        bj = CT[r, f, j] if f < d else cs[r, j]
        bc = CT[r, f, c] if f < d else cs[r, c]
        delta = bj - bc
        z = delta - bj
        if (bj - (delta - z)) + (-bc - z) != 0.0 or not _exact_range(delta):
            cheap = False
            break
        p, err = _two_product(a, delta)
        t = total + p
        z = t - total
        if err != 0.0 or (total - (t - z)) + (p - z) != 0.0:
            cheap = False
            break
        total = t
    if cheap:
        return total < 0.0
    e = np.empty(4 * (d + 1) + 1)
    n = 0
    for f in range(d + 1):
        a = X[row, f] if f < d else 1.0
        for b in (CT[r, f, j] if f < d else cs[r, j], -(CT[r, f, c] if f < d else cs[r, c])):
            p, err = _two_product(a, b)
            n = _grow(e, n, p)
            n = _grow(e, n, err)
    return n > 0 and e[n - 1] < 0.0


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _exact_row(X, row, CT, cs, margin, r):
    """The exact nearest centroid of row ``row`` of X for replica r (the lowest index on an
    exact tie; ``cs[r, j]`` = +inf for a centroid equal to one of lower index, which never
    wins), as :func:`dpkmeans.compute.nearest.exact_nearest` decides it: the float64 scores
    and their rounding bound leave the contenders, which meet in index order, each replacing
    the best so far only when exactly smaller (:func:`_exact_less`). -1 (left to
    exact_nearest) for a replica with a non-finite b vector (``margin[r]`` not finite) or a
    value of the row or of the centroids outside :data:`_EXACT_RANGE`."""
    d = X.shape[1]
    k = CT.shape[2]
    if not np.isfinite(margin[r]):
        return -1
    for f in range(d):
        if not _exact_range(X[row, f]):
            return -1
    s = np.empty(k)
    bound = np.empty(k)
    low = -1
    for j in range(k):
        v = cs[r, j]
        if v == np.inf:
            continue
        if not _exact_range(v):
            return -1
        w = abs(v)
        for f in range(d):
            b = CT[r, f, j]
            if not _exact_range(b):
                return -1
            p = b * X[row, f]
            v += p
            w += abs(p)
        s[j] = v
        bound[j] = _TIE_BOUND * (d + 4) * w
        if low < 0 or v < s[low]:
            low = j
    top = s[low] + bound[low]
    best = -1
    for j in range(k):
        if cs[r, j] == np.inf or s[j] - bound[j] > top:
            continue  # a copy of an earlier centroid, or beaten beyond the rounding
        if best < 0 or _exact_less(X, row, CT, cs, r, j, best):
            best = j
    return best


#: Largest k for which the row functions of the canonical scores are generated
#: (:func:`_rows_source`): each row's k scores in registers, every loop over rows vectorised
#: (at k = 5, d = 6: the decision 0.30 -> 0.10 s, the silhouettes 0.26 -> 0.12 s for 1000
#: replicas of 30,000 rows); above it, the generic loops.
_ROWS_GENERATED_MAX = 16
#: The generic row functions, as the generated modules name them.
_ROWS_GENERIC = ["_decide = _pick", "_silhouette_rows = _silhouette_values",
                 "_row_minima = _row_minima_generic"]


def _rows_source(k: int) -> str:
    """Source of ``_decide``, ``_silhouette_rows`` and ``_row_minima`` for k fixed: the
    contracts and bits of :func:`_pick`, :func:`_silhouette_values` and
    :func:`_row_minima_generic` (the same selects and operations, row by row, in the same
    order; a centroid that never wins has its score replaced by +inf in the decision, which
    selects as skipping it does), each row's k scores in registers."""
    if k > _ROWS_GENERATED_MAX:
        return "\n".join(_ROWS_GENERIC) + "\n"
    loads = [f"        s{j} = W[base + {j * _STRIDE} + i]" for j in range(k)]
    decide = [_JIT, "def _decide(W, base, m, cs, r, mg, nrm, arg, low, second):"]
    decide += [f"    never{j} = cs[r, {j}] == np.inf" for j in range(1, k)]
    decide += ["    inf = np.inf", "    for i in range(m):", *loads,
               "        lo = s0", "        se = inf", "        a = 0"]
    for j in range(1, k):
        decide += [f"        e = inf if never{j} else s{j}",
                   "        hi = e if e > lo else lo",
                   "        se = hi if hi < se else se",
                   "        bt = e < lo",
                   "        lo = e if bt else lo",
                   f"        a = {j} if bt else a"]
    decide += ["        arg[i] = a if se > lo + mg * np.sqrt(nrm[i]) else -1"]
    sil = ['@nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")',
           "def _silhouette_rows(W, base, m, k, arg, sq, val, own, other):",
           "    inf = np.inf", "    for i in range(m):", "        lab = arg[i]", *loads,
           "        mine_s = inf", "        other_s = inf"]
    for j in range(k):
        sil += [f"        mine = lab == {j}",
                f"        mine_s = s{j} if mine else mine_s",
                f"        other_s = s{j} if (not mine and s{j} < other_s) else other_s"]
    sil += ["        a2 = mine_s + sq[i]",
            f"        b2 = {'a2' if k == 1 else 'other_s + sq[i]'}",
            "        a = np.sqrt(a2 if a2 > 0.0 else 0.0)",
            "        b = np.sqrt(b2 if b2 > 0.0 else 0.0)",
            "        top = a if a > b else b",
            "        v = (b - a) / (top if top != 0.0 else 1.0)",
            "        v = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)",
            "        v = 0.0 if top == 0.0 else v",
            "        val[i] = np.nan if (np.isnan(a2) or np.isnan(b2)) else v"]
    minima = [_JIT, "def _row_minima(W, base, m, k, low):", "    for i in range(m):", *loads,
              "        lo = s0"]
    minima += [f"        lo = s{j} if s{j} < lo else lo" for j in range(1, k)]
    minima += ["        low[i] = lo"]
    return "\n".join(decide + ["", ""] + sil + ["", ""] + minima) + "\n"


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _settle_exact(X, t0, m, CT, cs, margin, r, arg):
    """The rows of the tile (rows t0 .. t0 + m of X) left undecided (``arg[i]`` < 0) by the
    scores, decided exactly where :func:`_exact_row` can (else -1 stays)."""
    for i in range(m):
        if arg[i] < 0:
            arg[i] = _exact_row(X, t0 + i, CT, cs, margin, r)


#: Rows that the generated tile loader transposes at a time (:func:`_rows_loader`), and the
#: largest d for which it does (above, row by row: the wide load's shuffles grow with d). One
#: thread, 10^6 rows in cache: d = 3 1.5 -> 0.6 ms, d = 10 4.9 -> 4.0 ms, d = 24 15 -> 8 ms
#: (8 rows at a time, 512-bit lanes, were slower at d = 10).
_LOAD_LANES = 4
_LOAD_VECTOR_MAX_D = 32


def _rows_loader(d: int):
    """An intrinsic ``load(X, row, W, col, nrm, sq)`` for d fixed: rows ``row`` ..
    ``row`` + :data:`_LOAD_LANES` of the C-contiguous float64 X (n, d) into the tile W,
    transposed (feature f of row ``row`` + l at W[f _STRIDE + col + l], rounded to W's dtype),
    with 1 + ||x||^2 into nrm[col + l] and ||x||^2 into sq[col + l]: the operations of
    :func:`_loader_source`'s row loop (each product x_f x_f rounded, then added in feature
    order, no fused multiply-add), a row a vector lane, so the same bits. One wide load of the
    rows and a shuffle a feature, instead of d loads and d scalar stores a row."""
    lanes = _LOAD_LANES

    @intrinsic
    def load(typingctx, X, row, W, col, nrm, sq):
        if not (isinstance(X, types.Array) and X.dtype == types.float64 and X.layout == "C"
                and X.ndim == 2):
            return None
        for arr in (W, nrm, sq):
            if not (isinstance(arr, types.Array) and arr.layout == "C" and arr.ndim == 1):
                return None
        if W.dtype not in (types.float32, types.float64) or nrm.dtype != types.float64 \
                or sq.dtype != types.float64:
            return None

        def codegen(context, builder, signature, args):
            f64, i32 = ir.DoubleType(), ir.IntType(32)
            X_, W_, nrm_, sq_ = (context.make_array(signature.args[a])(context, builder, args[a])
                                 for a in (0, 2, 4, 5))
            first = context.cast(builder, args[1], signature.args[1], types.intp)
            at = context.cast(builder, args[3], signature.args[3], types.intp)
            wide = ir.VectorType(f64, lanes * d)
            start = builder.gep(X_.data, [builder.mul(first, ir.Constant(first.type, d))])
            rows = builder.load(builder.bitcast(start, wide.as_pointer()), align=8)
            lane = ir.VectorType(f64, lanes)
            w_lane = ir.VectorType(context.get_value_type(signature.args[2].dtype), lanes)
            n = ir.Constant(lane, [1.0] * lanes)
            q = ir.Constant(lane, [0.0] * lanes)
            for f in range(d):
                mask = ir.Constant(ir.VectorType(i32, lanes), [f + l * d for l in range(lanes)])
                x = builder.shuffle_vector(rows, ir.Constant(wide, ir.Undefined), mask)
                square = builder.fmul(x, x)
                n = builder.fadd(n, square)
                q = builder.fadd(q, square)
                to = builder.gep(W_.data, [builder.add(at, ir.Constant(at.type, f * _STRIDE))])
                value = x if w_lane.element == f64 else builder.fptrunc(x, w_lane)
                builder.store(value, builder.bitcast(to, w_lane.as_pointer()), align=4)
            for arr, value in ((nrm_, n), (sq_, q)):
                to = builder.gep(arr.data, [at])
                builder.store(value, builder.bitcast(to, lane.as_pointer()), align=8)
            return context.get_dummy_value()

        return types.void(X, row, W, col, nrm, sq), codegen

    return load


def _loader_source(d: int) -> str:
    """Source of ``_load_tile`` for d fixed: the contract (and bits) of
    :func:`_load_tile_generic`, each row's features in registers (the generic loops over a
    run-time d are about 1.5 times as slow); for d up to :data:`_LOAD_VECTOR_MAX_D`,
    :data:`_LOAD_LANES` rows at a time by :func:`_rows_loader` (the same bits), the rest row
    by row. Prefetched :data:`_AHEAD` elements ahead, a cache line at a time."""
    load = [_JIT, "def _load_tile(X, t0, m, W, nrm, sq):", "    last = X.size - 1", "    i0 = 0"]
    if d <= _LOAD_VECTOR_MAX_D:
        lines = (_LOAD_LANES * d + 7) // 8  # cache lines of the rows loaded at a time
        load += [f"    while i0 + {_LOAD_LANES} <= m:",
                 f"        ahead = (t0 + i0) * {d} + _AHEAD"]
        load += [f"        _prefetch(X, min(ahead + {8 * e}, last))" for e in range(lines)]
        load += ["        _load_rows(X, t0 + i0, W, i0, nrm, sq)", f"        i0 += {_LOAD_LANES}"]
    load += ["    for i in range(i0, m):",
             f"        _prefetch(X, min((t0 + i) * {d} + _AHEAD, last))"]
    load += [f"        x{f} = X[t0 + i, {f}]" for f in range(d)]
    load += [f"        W[{f * _STRIDE} + i] = x{f}" for f in range(d)]
    # features added in order, from 1.0 and from 0.0, one statement each (a nested expression
    # would pass Python's limit of 200 parentheses at d = 200)
    load += ["        n = 1.0", "        q = 0.0"]
    for f in range(d):
        load += [f"        n = n + x{f} * x{f}", f"        q = q + x{f} * x{f}"]
    load += ["        nrm[i] = n", "        sq[i] = q"]
    head = f"_load_rows = _rows_loader({d})\n\n\n" if d <= _LOAD_VECTOR_MAX_D else ""
    return head + "\n".join(load) + "\n"


@intrinsic
def _prefetch(typingctx, arr, offset):
    """Prefetch, for reading into every cache level, the cache line holding element ``offset``
    of the flat data of the C-contiguous ``arr`` (LLVM's ``llvm.prefetch``; a hint only, it
    reads nothing into the program and cannot fault)."""
    if not isinstance(arr, types.Array) or not isinstance(offset, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        at = builder.gep(ary.data, [context.cast(builder, args[1], signature.args[1], types.intp)])
        byte = builder.bitcast(at, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte.type, i32, i32, i32]),
            "llvm.prefetch.p0")
        builder.call(fn, [byte, i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(arr, offset), codegen


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _load_tile_generic(X, t0, m, W, nrm, sq):
    """Rows t0 .. t0 + m of X transposed into W's feature rows, 1 + ||x||^2 into nrm and
    ||x||^2 into sq (features added in order)."""
    d = X.shape[1]
    last = X.size - 1
    for i in range(m):
        nrm[i] = 1.0
        sq[i] = 0.0
    for i in range(m):
        _prefetch(X, min((t0 + i) * d + _AHEAD, last))
        for f in range(d):
            W[f * _STRIDE + i] = X[t0 + i, f]
    for f in range(d):
        for i in range(m):
            v = W[f * _STRIDE + i] * W[f * _STRIDE + i]
            nrm[i] += v
            sq[i] += v


def _vector_add(width: int):
    """An intrinsic ``add(dst, i, src, j)``: ``dst.flat[i:i + width] += src.flat[j:j + width]``
    for C-contiguous float64 arrays, as one ``width``-lane vector load, add and store. Each
    lane is the one IEEE addition of the scalar loop, so the bits are those of the scalar
    ``dst[i + l] += src[j + l]``; it only saves the compiler from proving that the two arrays
    do not overlap (numba does not run LLVM's SLP vectoriser, which would do it)."""

    @intrinsic
    def add(typingctx, dst, i, src, j):
        for arr in (dst, src):
            if not (isinstance(arr, types.Array) and arr.dtype == types.float64
                    and arr.layout == "C"):
                return None

        def codegen(context, builder, signature, args):
            vector = ir.VectorType(ir.DoubleType(), width)
            ptrs = []
            for arr, at, arr_type, at_type in ((args[0], args[1], signature.args[0],
                                                signature.args[1]),
                                               (args[2], args[3], signature.args[2],
                                                signature.args[3])):
                ary = context.make_array(arr_type)(context, builder, arr)
                ptr = builder.gep(ary.data, [context.cast(builder, at, at_type, types.intp)])
                ptrs.append(builder.bitcast(ptr, vector.as_pointer()))
            total = builder.fadd(builder.load(ptrs[0], align=8), builder.load(ptrs[1], align=8))
            builder.store(total, ptrs[0], align=8)
            return context.get_dummy_value()

        return types.void(dst, i, src, j), codegen

    return add


#: Four and two lanes (256 and 128 bits): on the Zen 4 measured, 512-bit vectors were slower
#: when the same cluster's row follows (their stores, 80 bytes apart at d = 10, straddle cache
#: lines and are not forwarded to the next row's load).
_add4 = _vector_add(4)
_add2 = _vector_add(2)


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _accumulate(X, t0, m, arg, r, sums, counts, panel):
    """The panel of rows t0 .. t0 + m of X (module docstring: each row added, in row order, to
    its cluster's sum from +0.0) added into ``sums[r]``, the rows counted in ``counts[r]``;
    rows labelled -1 are skipped and their number returned. ``panel`` (k, d) is a workspace.
    A row is added four and two features at a time (:func:`_vector_add`, the same additions:
    1 000 000 rows at d = 10, k = 8 in cache, one thread: 3.9 -> 2.6 ms); X and ``panel``
    C-contiguous. (Generated versions for (k, d) fixed, unrolled or in registers, measured
    slower.)"""
    k, d = panel.shape
    for j in range(k):
        for f in range(d):
            panel[j, f] = 0.0
    undecided = 0
    for i in range(m):
        lab = arg[i]
        if lab < 0:
            undecided += 1
            continue
        counts[r, lab] += 1
        to = lab * d
        row = (t0 + i) * d  # the row as stored: contiguous
        f = 0
        while f + 4 <= d:
            _add4(panel, to + f, X, row + f)
            f += 4
        if f + 2 <= d:
            _add2(panel, to + f, X, row + f)
            f += 2
        if f < d:
            panel[lab, f] += X[t0 + i, f]
    for j in range(k):
        for f in range(d):
            sums[r, j, f] += panel[j, f]
    return undecided


@nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def _silhouette_values(W, s0, m, k, arg, sq, val, own, other):
    """(b - a) / max(a, b) in [0, 1] into ``val[i]`` for each of the m rows of the tile (row i
    of cluster ``arg[i]``, any value for an undecided row): a its distance to its own centroid,
    b to the nearest other one (b = a for k = 1), from the scores at W[s0 + j _STRIDE + i] and
    sq = ||x||^2; squares below 0 (rounding) count as 0. NaN stays NaN (the caller reports
    non-finite data). Loops over rows with selects only (vectorised); ``own`` and ``other``
    are workspaces of at least m values (their contents on entry are not read)."""
    for i in range(m):
        own[i] = np.inf
        other[i] = np.inf
    for j in range(k):
        sj = s0 + j * _STRIDE
        for i in range(m):
            s = W[sj + i]
            mine = arg[i] == j
            own[i] = s if mine else own[i]
            other[i] = s if (not mine and s < other[i]) else other[i]
    for i in range(m):
        a2 = own[i] + sq[i]
        b2 = a2 if k == 1 else other[i] + sq[i]
        a = np.sqrt(a2 if a2 > 0.0 else 0.0)  # noqa: FURB136 - a select (NaN -> 0 here)
        b = np.sqrt(b2 if b2 > 0.0 else 0.0)  # noqa: FURB136
        top = a if a > b else b  # noqa: FURB136 - the same select as the numpy reference
        v = (b - a) / (top if top != 0.0 else 1.0)
        v = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)  # noqa: FURB136
        v = 0.0 if top == 0.0 else v
        val[i] = np.nan if (np.isnan(a2) or np.isnan(b2)) else v


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _row_minima_generic(W, s0, m, k, low):
    """Each row's smallest score (centroid j of row i at W[s0 + j _STRIDE + i]) into
    ``low[i]``, taken in index order with ``s < low`` (a NaN is kept only from centroid 0)."""
    for i in range(m):
        low[i] = W[s0 + i]
    for j in range(1, k):
        sj = s0 + j * _STRIDE
        for i in range(m):
            s = W[sj + i]
            low[i] = s if s < low[i] else low[i]  # noqa: FURB136


#: The scorer, assigner, tile loader and row functions (decision, silhouettes, minima from the
#: canonical scores) that the kernel functions below call. They are compiled in a module
#: generated for each (k, d) (:func:`_module`), with the generated ones (or the generic ones).
_score = _score_generic
_assign = _assign_generic
_load_tile = _load_tile_generic
_decide = _pick
_silhouette_rows = _silhouette_values
_row_minima = _row_minima_generic


def _k_block(X, CT, cn, cs, margin, CT32, cs32, margin32, given, sums, counts, undecided):
    """Sums (R, k, d) and counts (R, k) of the rows of X (one block) in the panels order, added
    into ``sums`` and ``counts`` (zeros on entry). With ``given`` of shape (R, n) the labels are
    taken from it; with shape (R, 0) they are computed (scores with ``cs``, raw ``cn`` unused
    here), each replica's number of undecided rows is added into ``undecided`` (R,), and their
    total returned (where not 0, that replica's results are incomplete: redo it with
    ``given``). The single-precision terms (``CT32``, ``cs32``,
    ``margin32``) serve the generated assigner (its tile is float32)."""
    n, d = X.shape
    R = CT.shape[0]
    k = CT.shape[2]
    use_given = given.shape[1] > 0
    W = np.empty((d + max(k, 2)) * _STRIDE, dtype=_TILE_TYPE)  # 2 rows: best, runner-up
    nrm = np.empty(TILE)
    sq = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int32)  # int32: the assigner's labels
    panel = np.empty((k, d))
    total = 0
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, W, nrm, sq)  # the tile is read once for every replica
        for r in range(R):
            if use_given:
                for i in range(m):
                    arg[i] = given[r, t0 + i]
            else:
                if _assign(W, m, CT32, cs32, margin32[r], r, nrm, arg, X, t0, CT, cs, margin):
                    _settle_exact(X, t0, m, CT, cs, margin, r, arg)  # rows left undecided
            left = _accumulate(X, t0, m, arg, r, sums, counts, panel)
            undecided[r] += left
            total += left
    return total


def _k_block_silhouette(X, CT, cn, cs, margin, CT32, cs32, margin32, given, sums, counts,
                        undecided):
    """Per-cluster sums (R, k) of the centre-based silhouette and counts (R, k) of the rows of X,
    in the panels order, added into ``sums`` and ``counts``; labels and ``given`` as in
    :func:`_k_block`, except that the labels are decided from the raw scores themselves
    (``cs`` only marks the centroids that never win), and the silhouettes come from the same
    raw scores (``cn``: a centroid equal to the row's own is at distance a, so b = a); the
    single-precision terms are not used (the canonical scores are float64)."""
    n, d = X.shape
    R = CT.shape[0]
    k = CT.shape[2]
    use_given = given.shape[1] > 0
    W = np.empty((d + k) * _STRIDE)
    nrm = np.empty(TILE)
    sq = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int64)
    panel = np.empty(k)
    val = np.empty(TILE)
    own = np.empty(TILE)
    other = np.empty(TILE)
    total = 0
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, W, nrm, sq)
        for r in range(R):
            _score(W, m, CT, cn, r)  # the raw scores, in the canonical order
            if use_given:
                for i in range(m):
                    arg[i] = given[r, t0 + i]
            else:  # decided from the same scores (the margin covers any rounding order)
                _decide(W, d * _STRIDE, m, cs, r, margin[r], nrm, arg, own, other)
                _settle_exact(X, t0, m, CT, cs, margin, r, arg)
            _silhouette_rows(W, d * _STRIDE, m, k, arg, sq, val, own, other)
            for j in range(k):
                panel[j] = 0.0
            for i in range(m):
                lab = arg[i]
                if lab < 0:
                    undecided[r] += 1
                    total += 1
                    continue
                counts[r, lab] += 1
                panel[lab] += val[i]
            for j in range(k):
                sums[r, j] += panel[j]
    return total


def _k_block_fused(X, CT, cn, cs, margin, sums, counts, silhouettes, undecided):
    """:func:`_k_block` and :func:`_k_block_silhouette` in one pass over X: the labels, counts
    and silhouette sums (R, k) of :func:`_k_block_silhouette` (from the canonical scores) and
    the sums (R, k, d) of :func:`_k_block` (:func:`_accumulate`, with these labels: the exact
    ones, so the same bits), added into ``sums``, ``counts`` and ``silhouettes``; undecided
    rows (non-finite or extreme values) counted in ``undecided`` as there and their total
    returned. For the silhouette allocation (:func:`kernel_block_stats` when armed)."""
    n, d = X.shape
    R = CT.shape[0]
    k = CT.shape[2]
    W = np.empty((d + k) * _STRIDE)
    nrm = np.empty(TILE)
    sq = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int64)
    panel = np.empty((k, d))
    spanel = np.empty(k)
    val = np.empty(TILE)
    own = np.empty(TILE)
    other = np.empty(TILE)
    total = 0
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, W, nrm, sq)
        for r in range(R):
            _score(W, m, CT, cn, r)  # the raw scores, in the canonical order
            _decide(W, d * _STRIDE, m, cs, r, margin[r], nrm, arg, own, other)
            _settle_exact(X, t0, m, CT, cs, margin, r, arg)
            _silhouette_rows(W, d * _STRIDE, m, k, arg, sq, val, own, other)
            left = _accumulate(X, t0, m, arg, r, sums, counts, panel)
            undecided[r] += left
            total += left
            for j in range(k):
                spanel[j] = 0.0
            for i in range(m):
                lab = arg[i]
                if lab >= 0:
                    spanel[lab] += val[i]
            for j in range(k):
                silhouettes[r, j] += spanel[j]
    return total


def _k_block_minima(X, CT, cn, squared, plain):
    """Per replica, the sums over the rows of X of the squared and of the plain distance to the
    nearest centroid, in the panels order, added into ``squared`` and ``plain`` (R,)."""
    n, d = X.shape
    R = CT.shape[0]
    k = CT.shape[2]
    W = np.empty((d + k) * _STRIDE)
    nrm = np.empty(TILE)
    sq = np.empty(TILE)
    low = np.empty(TILE)
    root = np.empty(TILE)
    s0 = d * _STRIDE
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, W, nrm, sq)
        for r in range(R):
            _score(W, m, CT, cn, r)
            _row_minima(W, s0, m, k, low)
            for i in range(m):  # each row's terms (vectorised), then their sums in row order
                v = low[i] + sq[i]
                v = v if v > 0.0 else 0.0  # noqa: FURB136
                low[i] = v
                root[i] = np.sqrt(v)
            p2 = 0.0
            p1 = 0.0
            for i in range(m):
                p2 += low[i]
                p1 += root[i]
            squared[r] += p2
            plain[r] += p1


def _k_block_labels(X, CT, cn, cs, margin, CT32, cs32, margin32, out):
    """Labels (R, n) of the rows of X into ``out``: the kernel's decision, -1 where undecided
    (the assigner of :func:`_k_block`)."""
    n = X.shape[0]
    d = X.shape[1]
    R = CT.shape[0]
    k = CT.shape[2]
    W = np.empty((d + max(k, 2)) * _STRIDE, dtype=_TILE_TYPE)  # 2 rows: best, runner-up
    nrm = np.empty(TILE)
    sq = np.empty(TILE)
    arg = np.empty(TILE, dtype=np.int32)  # int32: the assigner's labels
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        _load_tile(X, t0, m, W, nrm, sq)
        for r in range(R):
            if _assign(W, m, CT32, cs32, margin32[r], r, nrm, arg, X, t0, CT, cs, margin):
                _settle_exact(X, t0, m, CT, cs, margin, r, arg)  # rows left undecided
            for i in range(m):
                out[r, t0 + i] = arg[i]


_JIT = "@nb.njit(cache=True, nogil=True, boundscheck=False)"
_MODULES: dict[str, object] = {}
_MODULES_LOCK = threading.Lock()  # blocks run in the caller's threads: generate each once


def _module(k: int, d: int, generated: bool, scores: bool = False):
    """The compiled kernel functions for (k, d): a module generated in a file, so that numba
    caches them on disk (a fresh process compiles each (k, d) once, not every time). The
    statistics and labels of k > :data:`_ASSIGN_GROUP` share one module for each d
    (:func:`_groups_source`); ``scores`` asks for the kernels that use the canonical scores
    (silhouettes, distances), whose module is always the one of (k, d)."""
    if not generated:
        key = "generic"
    elif k > _ASSIGN_GROUP and not scores:
        key = f"groups_d{d}"  # one module for every k above a group (:func:`_groups_source`)
    else:
        key = f"k{k}_d{d}"
    with _MODULES_LOCK:
        if key not in _MODULES:
            _MODULES[key] = _load_module(key, k, d, generated)
        return _MODULES[key]


def _load_module(key: str, k: int, d: int, generated: bool):
    parts = ["import numba as nb", "import numpy as np", "",
             "from dpkmeans.compute.kernels import (_AHEAD, _SINGLE_NRM_MAX, _STRIDE, TILE, _accumulate,",
             "                              _finish, _pick, _prefetch, _row_minima_generic,",
             "                              _rows_loader, _settle, _settle_exact,",
             "                              _silhouette_values)",
             ""]
    if generated:
        groups = key.startswith("groups")
        scorers = _groups_source(d) if groups else _scorer_source(k, d)
        rows = "\n".join(_ROWS_GENERIC) if groups else _rows_source(k)
        parts += ["_TILE_TYPE = np.float32  # the assigner's tile (single precision)", "",
                  scorers, "", _loader_source(d), "", rows]
    else:
        parts += ["from dpkmeans.compute.kernels import _TILE_TYPE",
                  "from dpkmeans.compute.kernels import _assign_double as _assign"]
        parts += [f"from dpkmeans.compute.kernels import _{name}_generic as _{name}"
                  for name in ("score", "load_tile")]
        parts += _ROWS_GENERIC
    for fn in (_k_block, _k_block_silhouette, _k_block_fused, _k_block_minima, _k_block_labels):
        parts += ["", _JIT, inspect.getsource(fn)]
    text = "\n".join(parts)
    # the digest covers this file and panels.py too: numba's cache of the generated module
    # does not see changes to what it imports from here (TILE, the generic functions)
    digest = hashlib.sha256(text.encode() + Path(__file__).read_bytes()
                            + Path(panels.__file__).read_bytes()
                            + nb.__version__.encode()).hexdigest()[:16]
    name = f"dpkmeans_kernel_{key}_{digest}"
    path = kernel_dir() / f"{name}.py"
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


class _CentroidTerms:
    """The public per-centroid quantities of :class:`Nearest` in the kernel's layout: they
    depend on the centroids only, so every block of one call shares them (:func:`_terms`)."""

    def __init__(self, C: np.ndarray):
        d = C.shape[2]
        near = Nearest(np.zeros((1, d)), C)
        self.B, self.shadowed = near.B, near.shadowed  # for exact_nearest
        self.CT = np.ascontiguousarray(near.CT, dtype=np.float64)  # (R, d, k): -2 c
        self.cn = np.ascontiguousarray(near.B[:, d, :])  # (R, k): fl(||c||^2)
        # the same with +inf for a centroid equal to one of lower index (it never wins)
        self.cs = np.ascontiguousarray(near.c_norms[:, :, 0], dtype=np.float64)
        self.margin = np.ascontiguousarray(near.margin, dtype=np.float64)  # (R,)
        # the generated assigners' single-precision terms: those of Nearest(scores="single")
        # (-2 c and fl(||c||^2) rounded to float32, its margin), and an infinite margin (every
        # row decided in float64) for a replica outside _SINGLE_B_RANGE
        low, high = _SINGLE_B_RANGE
        with np.errstate(over="ignore", invalid="ignore"):  # out of float32's range: unused
            self.CT32 = np.ascontiguousarray(near.CT, dtype=np.float32)
            self.cs32 = np.ascontiguousarray(self.cs, dtype=np.float32)
            usable = (near.b_norm >= low) & (near.b_norm <= high)  # NaN: not usable
        self.margin32 = np.where(usable, score_margin(near.b_norm, d, np.float32), np.inf)


_TERMS: dict[bytes, _CentroidTerms] = {}
_TERMS_KEPT = 4  # the centroid sets of the last few calls (each block of a call reuses them)
_TERMS_LOCK = threading.Lock()


def _terms(C: np.ndarray) -> _CentroidTerms:
    """:class:`_CentroidTerms` of C, computed once for the blocks of one call (keyed by C's
    shape and bits: a changed C is a new key)."""
    C = np.ascontiguousarray(C, dtype=np.float64)
    key = repr(C.shape).encode() + C.tobytes()
    with _TERMS_LOCK:
        terms = _TERMS.get(key)
    if terms is None:
        terms = _CentroidTerms(C)
        with _TERMS_LOCK:
            while len(_TERMS) >= _TERMS_KEPT:
                del _TERMS[next(iter(_TERMS))]  # the oldest
            _TERMS[key] = terms
    return terms


class _Prepared:
    """One block and the public per-centroid quantities (:class:`_CentroidTerms`)."""

    def __init__(self, X: np.ndarray, C: np.ndarray, generated: bool | None = None):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.C = C
        self.terms = terms = _terms(C) if generated is None else _CentroidTerms(
            np.ascontiguousarray(C, dtype=np.float64))  # a redo (:meth:`_labelled`): uncached
        self.CT, self.cn, self.cs, self.margin = terms.CT, terms.cn, terms.cs, terms.margin
        R, d, k = self.CT.shape
        if generated is None:
            generated = k * d <= _GENERATED_MAX and R * self.X.shape[0] >= _GENERATED_MIN_WORK
        self.generated = generated
        self.mod = _module(k, d, self.generated)  # statistics and labels
        self.shape = (R, k, d)

    def _scoring_module(self):
        """The module of the kernels that use the canonical scores (:func:`_module`)."""
        _, k, d = self.shape
        return _module(k, d, self.generated, scores=True)

    def _decided(self):
        t = self.terms
        return self.X, self.CT, self.cn, self.cs, self.margin, t.CT32, t.cs32, t.margin32

    def labels(self) -> np.ndarray:
        """Exact labels (R, n) (the undecided rows by ``exact_nearest``)."""
        X, (R, _, d) = self.X, self.shape
        out = np.empty((R, X.shape[0]), dtype=np.int64)
        self.mod._k_block_labels(*self._decided(), out)
        rep, col = np.nonzero(out < 0)
        if rep.size:
            rows = np.hstack([X[col], np.ones((col.size, 1))])
            # huge or non-finite rows: no warnings (non-finite data is reported by the caller)
            with np.errstate(invalid="ignore", over="ignore"):
                scores = np.einsum("ni,nik->nk", rows[:, :d], self.CT[rep]) + self.cs[rep]
                out[rep, col] = exact_nearest(rows, self.terms.B[rep], scores,
                                               ~self.terms.shadowed[rep])
        return out

    def _labelled(self, kernel, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Run a labelled kernel (sums, counts) with the kernel's labels, and again, from their
        exact labels, for the replicas with an undecided row: a replica's results depend on its
        own centroids only, so the others' stand. (Near ties are settled in the kernel,
        :func:`_exact_row`: only non-finite or extreme rows are left undecided.)"""
        R, k, _ = self.shape
        counts = np.zeros((R, k), dtype=np.int64)
        undecided = np.zeros(R, dtype=np.int64)
        none = np.empty((R, 0), dtype=np.int64)
        if kernel(*self._decided(), none, sums, counts, undecided):
            reps = np.flatnonzero(undecided)
            redo = _Prepared(self.X, self.C[reps], generated=self.generated)  # same module
            redo_sums = np.zeros((reps.size, *sums.shape[1:]))
            redo_counts = np.zeros((reps.size, k), dtype=np.int64)
            left = kernel(*redo._decided(), redo.labels(), redo_sums, redo_counts,
                          np.zeros(reps.size, dtype=np.int64))
            assert left == 0
            sums[reps], counts[reps] = redo_sums, redo_counts
        return checked_sums(self.X, sums, counts.astype(np.float64))

    def stats(self) -> tuple[np.ndarray, np.ndarray]:
        R, k, d = self.shape
        return self._labelled(self.mod._k_block, np.zeros((R, k, d)))

    def silhouette(self) -> tuple[np.ndarray, np.ndarray]:
        R, k, _ = self.shape
        return self._labelled(self._scoring_module()._k_block_silhouette, np.zeros((R, k)))

    def fused(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(sums, counts, silhouette sums) in one pass (:func:`_k_block_fused`), or None if a
        row was left undecided or a sum is not finite (the caller takes the separate paths,
        which redo or report it)."""
        R, k, d = self.shape
        sums, silhouettes = np.zeros((R, k, d)), np.zeros((R, k))
        counts = np.zeros((R, k), dtype=np.int64)
        if self._scoring_module()._k_block_fused(self.X, self.CT, self.cn, self.cs, self.margin,
                                                 sums, counts, silhouettes,
                                                 np.zeros(R, dtype=np.int64)):
            return None
        if not (np.isfinite(sums).all() and np.isfinite(silhouettes).all()):
            return None
        return sums, counts.astype(np.float64), silhouettes

    def minima(self) -> tuple[np.ndarray, np.ndarray]:
        R = self.shape[0]
        squared, plain = np.zeros(R), np.zeros(R)
        self._scoring_module()._k_block_minima(self.X, self.CT, self.cn, squared, plain)
        return squared, plain



class _Fusion:
    """The silhouette allocation's passes fused (chapter 8): each iteration reads the
    statistics of the centroids, then their silhouettes, two passes over the data. A
    silhouette call that expects another iteration (:func:`kernel_block_silhouette_ahead`)
    *arms* its block; the next statistics call on that block (the next iteration's) then
    computes the silhouettes of its centroids in the same pass (:func:`_k_block_fused`) and
    keeps them here, where the silhouette call finds them. A replica's silhouettes are a
    function of the block and of its own centroids only, so a kept one is the one the
    silhouette kernel would compute, bit for bit; the keys are a copy of the block (compared
    in full) and each replica's centroid bytes. Speed only: nothing armed or kept, the
    separate passes run."""

    #: Most blocks armed, and most with kept silhouettes (the oldest go first), and most bytes
    #: of blocks beyond which a block is neither armed nor kept.
    MAX_BLOCKS = 16
    MAX_BYTES = 256 * 2**20
    #: Fewest replicas for which a block is armed (the block's comparison is then negligible).
    MIN_REPLICAS = 8

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.armed: dict[tuple, np.ndarray] = {}  # block key -> copy of the block
        self.kept: dict[tuple, tuple[np.ndarray, dict[bytes, tuple]]] = {}

    @staticmethod
    def key(X: np.ndarray) -> tuple:
        return (X.__array_interface__["data"][0], X.shape, X.strides)

    def _bytes(self) -> int:
        return (sum(a.nbytes for a in self.armed.values())
                + sum(b.nbytes for b, _ in self.kept.values()))

    def _room(self, table: dict, nbytes: int) -> bool:
        """Drop ``table``'s oldest entries until a block of ``nbytes`` fits; whether it does."""
        while table and (len(table) >= self.MAX_BLOCKS or self._bytes() + nbytes > self.MAX_BYTES):
            del table[next(iter(table))]
        return self._bytes() + nbytes <= self.MAX_BYTES

    def arm(self, X: np.ndarray) -> None:
        with self.lock:
            key = self.key(X)
            copy = self.kept[key][0] if key in self.kept else None
            self.armed.pop(key, None)
            if copy is None or not np.array_equal(copy, X):
                if not self._room(self.armed, X.nbytes):
                    return
                copy = X.copy()
            elif not self._room(self.armed, 0):
                return
            self.armed[key] = copy

    def take(self, X: np.ndarray) -> bool:
        """Whether the block was armed (and disarm it)."""
        with self.lock:
            copy = self.armed.pop(self.key(X), None)
        return copy is not None and np.array_equal(copy, X)

    def keep(self, X: np.ndarray, C: np.ndarray, silhouettes: np.ndarray,
             counts: np.ndarray) -> None:
        results = {C[r].tobytes(): (silhouettes[r], counts[r]) for r in range(C.shape[0])}
        with self.lock:
            key = self.key(X)
            old = self.kept.pop(key, None)
            copy = old[0] if old is not None and np.array_equal(old[0], X) else None
            if not self._room(self.kept, 0 if copy is not None else X.nbytes):
                return
            self.kept[key] = (X.copy() if copy is None else copy, results)

    def find(self, X: np.ndarray) -> dict[bytes, tuple]:
        """The silhouettes kept for this block, by replica centroid bytes."""
        with self.lock:
            entry = self.kept.get(self.key(X))
        if entry is None or not np.array_equal(entry[0], X):
            return {}
        return entry[1]


_FUSION = _Fusion()


def kernel_block_stats(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums (R, k, d) and counts (R, k) (float64) of one block X (m, d) for centroids C
    (R, k, d), already validated: the contract of the module docstring, single-threaded. On a
    block armed by :func:`kernel_block_silhouette_ahead`, the silhouettes of C come in the
    same pass and are kept for the silhouette call that follows (:class:`_Fusion`)."""
    prepared = _Prepared(X, C)
    if _FUSION.take(prepared.X):
        fused = prepared.fused()
        if fused is not None:
            sums, counts, silhouettes = fused
            _FUSION.keep(prepared.X, np.ascontiguousarray(C, dtype=np.float64), silhouettes,
                         counts)
            return sums, counts
    return prepared.stats()


def kernel_block_silhouette(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (R, k) of the centre-based silhouette of one block X (m, d) and counts
    (R, k), for validated centroids C (R, k, d): the labels of :func:`kernel_block_stats`, each
    row's (b - a) / max(a, b) from its scores, added in the panels order. Each distinct set of
    centroids is computed once (a replica's results depend on its own centroids only: the
    shared starts of a study's first iteration), or taken from the statistics pass that
    computed it (:class:`_Fusion`)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    R, k, _ = C.shape
    kept = _FUSION.find(X)
    keys = [C[r].tobytes() for r in range(R)]
    first: dict[bytes, int] = {}
    for r, key in enumerate(keys):
        first.setdefault(key, r)
    todo = [r for key, r in first.items() if key not in kept]
    results = dict(kept) if kept else {}
    if todo:
        sums, counts = _Prepared(X, C[todo]).silhouette()
        results.update({keys[r]: (sums[i], counts[i]) for i, r in enumerate(todo)})
    sums, counts = np.empty((R, k)), np.empty((R, k))
    for r, key in enumerate(keys):
        sums[r], counts[r] = results[key]
    return sums, counts


def kernel_block_silhouette_ahead(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kernel_block_silhouette`, and the block armed: the next statistics call on it
    computes its centroids' silhouettes in the same pass (:class:`_Fusion`)."""
    out = kernel_block_silhouette(X, C)
    if C.shape[0] >= _Fusion.MIN_REPLICAS:
        _FUSION.arm(np.ascontiguousarray(X, dtype=np.float64))
    return out


@releases_gil
def kernel_nearest_distance_sums(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replica, the sums over the rows of X (m, d) of the squared and of the plain distance
    to the nearest centroid of C (R, k, d), in the panels order: two arrays (R,). X and C
    validated (finite)."""
    return _Prepared(X, C).minima()


def kernel_block_labels(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The exact labels (R, m) of one block X (m, d) for centroids C (R, k, d), through the
    kernel; equal to :func:`dpkmeans.compute.lloyd.assign` (non-finite rows: arbitrary labels)."""
    return _Prepared(X, C).labels()
