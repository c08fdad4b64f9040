"""The vector code of the compiled statistics gives the bits of the scalar code it replaced: the
panel accumulation (``kernels._accumulate``, four and two features a vector) those of the scalar
loop, for every remainder of d modulo 4; the generated tile loader (four rows a wide load,
``kernels._rows_loader``) those of the generic one; and the statistics kernel those of the numpy
reference of the panels order."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from dpkmeans.compute import kernels
from dpkmeans.compute.kernels import TILE, kernel_block_stats, panels_block_stats
from dpkmeans.compute.lloyd import assign, batched_stats
from tests.compute.test_kernels import _tricky


@nb.njit(cache=False, nogil=True, boundscheck=False)
def _scalar_accumulate(X, t0, m, arg, r, sums, counts, panel):
    """``kernels._accumulate`` as it was before its vector additions (verbatim)."""
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
        for f in range(d):
            panel[lab, f] += X[t0 + i, f]
    for j in range(k):
        for f in range(d):
            sums[r, j, f] += panel[j, f]
    return undecided


@nb.njit(cache=False)
def _panels(accumulate, X, labels, k):
    """Sums, counts and undecided rows of every panel of X, as the statistics kernel adds them
    (R = 2: replica 1 gets the labels reversed in cluster index)."""
    n, d = X.shape
    sums = np.zeros((2, k, d))
    counts = np.zeros((2, k), dtype=np.int64)
    panel = np.empty((k, d))
    flipped = np.where(labels >= 0, k - 1 - labels, labels).astype(np.int32)
    left = 0
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        left += accumulate(X, t0, m, labels[t0:t0 + m], 0, sums, counts, panel)
        left += accumulate(X, t0, m, flipped[t0:t0 + m], 1, sums, counts, panel)
    return sums, counts, left


def _labels(rng, n: int, k: int, how: str) -> np.ndarray:
    labels = rng.integers(k, size=n).astype(np.int32)
    if how == "sorted":  # runs of one cluster: each row's sum waits for the row before
        labels.sort()
    elif how == "one":
        labels[:] = k - 1
    labels[rng.integers(n, size=n // 50)] = -1  # undecided rows are skipped and counted
    return labels


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 24])
@pytest.mark.parametrize("how", ["random", "sorted", "one"])
def test_vector_accumulate_is_the_scalar_loop_bit_for_bit(d, how):
    rng = np.random.default_rng(d)
    n, k = 3 * TILE + 77, 5
    # magnitudes from 1e-8 to 1e8: any other order of the additions would show in the bits
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))
    X[rng.integers(n, size=20)] = -0.0
    labels = _labels(rng, n, k, how)
    want = _panels(_scalar_accumulate, X, labels, k)
    got = _panels(kernels._accumulate, X, labels, k)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2] == want[2] == 2 * int((labels < 0).sum())


@pytest.mark.parametrize("seed,n,d,k,R", [(11, 2100, 4, 6, 2), (12, 1800, 6, 8, 1),
                                          (13, 900, 7, 3, 3), (14, 1300, 9, 9, 2),
                                          (15, 700, 13, 8, 1), (16, 600, 24, 8, 2)])
def test_statistics_equal_the_panels_reference_with_ties(seed, n, d, k, R):
    """kernel_block_stats (the generated and the generic module) against the numpy reference,
    on rows with exact and near ties, bit for bit."""
    X, C = _tricky(seed, n, d, k, R)
    want = panels_block_stats(X, C, assign(X, C))
    for generated_max, min_work in ((kernels._GENERATED_MAX, 0), (0, kernels._GENERATED_MIN_WORK)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(kernels, "_GENERATED_MAX", generated_max)
            patch.setattr(kernels, "_GENERATED_MIN_WORK", min_work)
            s, c = kernel_block_stats(X, C)
        assert np.array_equal(s, want[0]) and np.array_equal(c, want[1])


def test_batched_stats_over_blocks_equal_the_reference_blocks():
    """Several blocks of the plan, added in its tree order: the same bits through the compiled
    path as through the numpy reference of each block."""
    from dpkmeans.compute.blocks import BLOCK_ROWS, plan, tree_sum

    X, C = _tricky(21, 2 * BLOCK_ROWS + 999, 10, 8, 1)
    want = tree_sum([panels_block_stats(X[s], C, assign(X[s], C)) for s in plan(X.shape[0])])
    s, c = batched_stats(X, C)
    assert np.array_equal(s, want[0]) and np.array_equal(c, want[1])


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 10, 17, 24, 33])
@pytest.mark.parametrize("tile_type", [np.float32, np.float64])
def test_generated_loader_is_the_generic_one_bit_for_bit(d, tile_type):
    """The generated ``_load_tile`` (vector rows up to d = 32, then row by row) against
    ``_load_tile_generic``: the tile (rounded to the tile's type), 1 + ||x||^2 and ||x||^2, on
    partial tiles at odd starts, with -0.0, infinities, NaN and huge and tiny values."""
    rng = np.random.default_rng(100 + d)
    n = 3 * TILE
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-150, 150, size=(n, d))
    specials = [-0.0, np.inf, -np.inf, np.nan, 1e300, 5e-324]
    X.flat[rng.integers(X.size, size=40)] = rng.choice(specials, size=40)
    mod = kernels._module(3, d, True, scores=True)
    stride = kernels._STRIDE
    for t0, m in [(0, TILE), (5, TILE), (TILE + 3, 131), (2 * TILE, 7), (n - 3, 3), (17, 1)]:
        got = (np.zeros(d * stride, dtype=tile_type), np.zeros(TILE), np.zeros(TILE))
        want = (np.zeros(d * stride), np.zeros(TILE), np.zeros(TILE))
        with np.errstate(over="ignore"):
            mod._load_tile(X, t0, m, *got)
            kernels._load_tile_generic(X, t0, m, *want)
            want = (want[0].astype(tile_type), *want[1:])
        for a, b in zip(got, want, strict=True):
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8))  # NaN and -0.0 too
