"""The public block plan and its fixed reduction order (``docs/design.md``, "Determinism and the
block plan"), the in-memory map-reduce over it, and the centre-based ("simplified") silhouette
of one block (Zhang, Liu and Wang 2018; book chapter 8)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.compute import blocks
from dpkmeans.compute.backends import MemoryBackend
from dpkmeans.compute.blocks import BLOCK_ROWS, plan, tree_reduce, tree_sum
from dpkmeans.compute.lloyd import batched_stats, block_silhouette, block_stats, local_map_reduce

# --- plan ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, size", [(1, 1), (7, 3), (9, 3), (10, 4), (5, 100), (2 * BLOCK_ROWS + 3, BLOCK_ROWS)])
def test_plan_covers_every_row_once_in_order(n, size):
    slices = plan(n, size)
    rows = np.concatenate([np.arange(n)[s] for s in slices])
    np.testing.assert_array_equal(rows, np.arange(n))  # each row once, in order
    assert [s.start for s in slices] == list(range(0, n, size))
    assert all(s.step is None for s in slices)
    assert all(s.stop - s.start == size for s in slices[:-1])  # every block but the last is full
    last = slices[-1].stop - slices[-1].start
    assert last == (n % size or size) and 1 <= last <= size
    assert len(slices) == -(-n // size)


def test_plan_default_block_and_short_last_block():
    assert BLOCK_ROWS == blocks.BLOCK_ROWS == 2**16
    assert plan(BLOCK_ROWS + 1000) == [slice(0, BLOCK_ROWS), slice(BLOCK_ROWS, BLOCK_ROWS + 1000)]
    assert plan(BLOCK_ROWS) == [slice(0, BLOCK_ROWS)]
    assert plan(7, 3) == [slice(0, 3), slice(3, 6), slice(6, 7)]


def test_plan_of_no_rows_is_one_empty_block_and_negative_is_refused():
    assert plan(0) == [slice(0, 0)]
    assert plan(0, 5) == [slice(0, 0)]
    assert np.zeros((0, 3))[plan(0)[0]].shape == (0, 3)
    with pytest.raises(ValueError, match="n_rows must be >= 0, got -1"):
        plan(-1)


# --- the fixed reduction order -----------------------------------------------------------------


def _parts(n: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """n blocks' results, each (a (4, 3) array of wildly different magnitudes, a (4,) array):
    floating-point addition of them is far from associative, so the order shows in the bits."""
    gen = np.random.default_rng(seed)
    return [(gen.standard_normal((4, 3)) * 10.0 ** gen.integers(-8, 17, (4, 3)),
             gen.standard_normal(4) * 10.0 ** gen.integers(-8, 17, 4)) for _ in range(n)]


def _pairwise(p: list, n: int):
    """The expected tree, written out by hand for 1, 2, 3, 5 and 8 parts."""
    return {
        1: lambda: p[0],
        2: lambda: p[0] + p[1],
        3: lambda: (p[0] + p[1]) + p[2],
        5: lambda: ((p[0] + p[1]) + (p[2] + p[3])) + p[4],
        8: lambda: ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])),
    }[n]()


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_tree_sum_is_the_pairwise_tree_bit_for_bit(n):
    parts = _parts(n, seed=n)
    total = tree_sum(parts)
    assert isinstance(total, tuple) and len(total) == 2
    for i in range(2):
        expected = _pairwise([p[i] for p in parts], n)
        np.testing.assert_array_equal(total[i], expected)
        assert total[i].tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [5, 8])
def test_the_tree_order_is_not_the_left_to_right_order(n):
    """The inputs of the test above discriminate: adding left to right gives other bits, so the
    bitwise check would catch a reduction in another order."""
    parts = _parts(n, seed=n)
    left_to_right = parts[0][0]
    for p in parts[1:]:
        left_to_right = left_to_right + p[0]
    assert not np.array_equal(tree_sum(parts)[0], left_to_right)


def test_tree_reduce_order_with_a_symbolic_combine():
    assert tree_reduce(list("abcde"), lambda x, y: f"({x}+{y})") == "(((a+b)+(c+d))+e)"
    assert tree_reduce(list("abcdefg"), lambda x, y: f"({x}+{y})") == "(((a+b)+(c+d))+((e+f)+g))"
    assert tree_reduce(["a"], lambda x, y: 1 / 0) == "a"  # one block: nothing to combine


def test_tree_sum_of_nothing_raises():
    with pytest.raises(ValueError, match="at least one block"):
        tree_sum([])
    with pytest.raises(ValueError, match="at least one block"):
        tree_reduce([], lambda x, y: x)


def test_tree_sum_refuses_parts_of_different_lengths():
    with pytest.raises(ValueError):  # zip(strict=True): a block that lost a statistic
        tree_sum([(np.ones(2), np.ones(2)), (np.ones(2),)])


# --- the in-memory map-reduce --------------------------------------------------------------------

N_THREE_BLOCKS = 2 * BLOCK_ROWS + 5


def test_local_map_reduce_passes_each_block_with_its_start():
    X = np.arange(N_THREE_BLOCKS, dtype=float)[:, None]  # row i holds i
    seen = []

    def fn(block, start, factor):
        seen.append((start, block.shape[0], block[0, 0], block[-1, 0]))
        return (np.array([float(start)]), np.array([float(block.shape[0])]), block.sum(0) * factor)

    starts, sizes, sums = local_map_reduce(X, fn, 2.0, with_start=True)
    expected = [s.start for s in plan(N_THREE_BLOCKS)]
    assert expected == [0, BLOCK_ROWS, 2 * BLOCK_ROWS]
    assert [s[0] for s in seen] == expected
    assert [s[1] for s in seen] == [BLOCK_ROWS, BLOCK_ROWS, 5]
    assert [s[2] for s in seen] == expected  # the block's first row is row `start` of X
    assert [s[3] for s in seen] == [BLOCK_ROWS - 1.0, 2 * BLOCK_ROWS - 1.0, N_THREE_BLOCKS - 1.0]
    assert starts.tolist() == [3.0 * BLOCK_ROWS] and sizes.tolist() == [float(N_THREE_BLOCKS)]
    assert sums.tolist() == [2.0 * N_THREE_BLOCKS * (N_THREE_BLOCKS - 1) / 2]


def test_local_map_reduce_without_start_adds_the_blocks_in_tree_order():
    gen = np.random.default_rng(3)
    X = gen.standard_normal((N_THREE_BLOCKS, 2)) * 10.0 ** gen.integers(-6, 12, (N_THREE_BLOCKS, 1))
    calls = []

    def fn(block, power):
        calls.append(block.shape[0])
        return ((block**power).sum(axis=0), np.array([block.shape[0]]))

    total = local_map_reduce(X, fn, 3)
    assert calls == [BLOCK_ROWS, BLOCK_ROWS, 5]
    per_block = [fn(X[s], 3) for s in plan(N_THREE_BLOCKS)]
    expected = (per_block[0][0] + per_block[1][0]) + per_block[2][0]
    assert total[0].tobytes() == expected.tobytes()
    assert total[1].tolist() == [N_THREE_BLOCKS]


def test_local_map_reduce_of_an_empty_matrix_calls_fn_once_on_an_empty_block():
    calls = []

    def fn(block, start):
        calls.append((start, block.shape))
        return (np.zeros(2),)

    (total,) = local_map_reduce(np.zeros((0, 2)), fn, with_start=True)
    assert calls == [(0, (0, 2))] and total.tolist() == [0.0, 0.0]


# --- the centre-based silhouette of one block ----------------------------------------------------


def _brute_silhouette(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of S(x) = (b - a) / max(a, b) and counts, for (R, k, d) centroids, by
    explicit distances: a to the nearest centre (lowest index on a tie), b to the second
    nearest (any other centre, duplicates included); S = 0 when a = b = 0 or k = 1."""
    R, k, _ = C.shape
    sums, counts = np.zeros((R, k)), np.zeros((R, k))
    for r in range(R):
        dist = np.sqrt(((X[:, None, :] - C[r][None, :, :]) ** 2).sum(axis=2))  # (n, k)
        own = np.argmin(dist, axis=1)
        for i, j in enumerate(own):
            a = dist[i, j]
            b = np.delete(dist[i], j).min() if k > 1 else a
            s = 0.0 if max(a, b) == 0 else (b - a) / max(a, b)
            sums[r, j] += s
            counts[r, j] += 1
    return sums, counts


def test_block_silhouette_matches_the_brute_force_centre_silhouette(rng):
    X = rng.uniform(0, 1, size=(300, 3))
    C = rng.uniform(0, 1, size=(4, 5, 3))
    sums, counts = block_silhouette(X, C)
    b_sums, b_counts = _brute_silhouette(X, C)
    np.testing.assert_array_equal(counts, b_counts)
    np.testing.assert_allclose(sums, b_sums, rtol=1e-9, atol=1e-9)
    assert counts.sum(axis=1).tolist() == [300.0] * 4
    assert np.all((sums >= 0) & (sums <= counts))  # every S(x) in [0, 1]
    _, stats_counts = block_stats(X, C)
    np.testing.assert_array_equal(counts, stats_counts)  # the same exact assignment


def test_block_silhouette_with_duplicate_centroids_and_points_on_centres():
    C = np.array([[[0.2, 0.2], [0.2, 0.2], [0.8, 0.8]]])  # centres 0 and 1 coincide
    X = np.array([[0.2, 0.2],   # on the duplicated centre: a = b = 0, S = 0
                  [0.3, 0.2],   # nearest the duplicated centre: b = a, S = 0
                  [0.8, 0.8],   # on centre 2: a = 0, S = 1
                  [0.7, 0.8]])  # a = 0.1, b = |(0.5, 0.6)|
    sums, counts = block_silhouette(X, C)
    assert counts.tolist() == [[2.0, 0.0, 2.0]]  # ties go to the lowest index
    b = np.hypot(0.5, 0.6)
    expected = [[0.0, 0.0, 1.0 + (b - 0.1) / b]]
    np.testing.assert_allclose(sums, expected, rtol=0, atol=1e-7)
    assert sums[0, 0] == 0.0  # exact: the duplicated centres give bit-identical distances
    b_sums, b_counts = _brute_silhouette(X, C)
    np.testing.assert_array_equal(counts, b_counts)
    np.testing.assert_allclose(sums, b_sums, rtol=0, atol=1e-7)


def test_block_silhouette_is_zero_for_one_cluster_and_on_an_empty_block(rng):
    X = rng.uniform(0, 1, size=(50, 2))
    sums, counts = block_silhouette(X, np.array([[[0.5, 0.5]]]))
    assert sums.tolist() == [[0.0]] and counts.tolist() == [[50.0]]
    sums, counts = block_silhouette(np.zeros((0, 2)), rng.uniform(0, 1, (2, 3, 2)))
    assert sums.shape == counts.shape == (2, 3)
    assert not sums.any() and not counts.any()


def test_block_silhouette_reduces_over_blocks_like_any_statistic(rng):
    X = rng.uniform(0, 1, size=(BLOCK_ROWS + 1000, 2))
    C = rng.uniform(0, 1, size=(2, 4, 2))
    total = MemoryBackend().map_reduce(X, block_silhouette, C)
    first, second = block_silhouette(X[:BLOCK_ROWS], C), block_silhouette(X[BLOCK_ROWS:], C)
    for got, a, b in zip(total, first, second, strict=True):
        assert got.tobytes() == (a + b).tobytes()
    assert total[1].sum(axis=1).tolist() == [BLOCK_ROWS + 1000.0] * 2


# --- the DP-Lloyd query over more than one block ---------------------------------------------------


def test_batched_stats_over_two_blocks_equals_a_direct_computation_and_the_backend(rng):
    n = BLOCK_ROWS + 1000
    X = rng.uniform(-1, 1, size=(n, 2))
    C = rng.uniform(-1, 1, size=(3, 4, 2))
    sums, counts = batched_stats(X, C)
    assert sums.shape == (3, 4, 2) and counts.shape == (3, 4)
    for r in range(3):
        labels = np.argmin(((X[:, None, :] - C[r][None]) ** 2).sum(axis=2), axis=1)
        np.testing.assert_array_equal(counts[r], np.bincount(labels, minlength=4))
        direct = np.stack([X[labels == j].sum(axis=0) for j in range(4)])
        np.testing.assert_allclose(sums[r], direct, rtol=1e-12, atol=1e-9)
    # The backend: the same plan, the same function per block, the same order of additions.
    backend = MemoryBackend()
    data, rows, clipped = backend.prepare(X, (-np.ones(2), np.ones(2)))
    assert rows == n and clipped == 0
    b_sums, b_counts = backend.stats(data, C)
    assert b_sums.tobytes() == sums.tobytes() and b_counts.tobytes() == counts.tobytes()
    # ... and that order is block 0 + block 1, each computed on its own.
    s0, c0 = block_stats(X[:BLOCK_ROWS], C)
    s1, c1 = block_stats(X[BLOCK_ROWS:], C)
    assert sums.tobytes() == (s0 + s1).tobytes() and counts.tobytes() == (c0 + c1).tobytes()


def test_batched_stats_of_a_single_centroid_set_and_of_shared_starts(rng):
    X = rng.uniform(-1, 1, size=(500, 2))
    C = rng.uniform(-1, 1, size=(3, 2))
    sums, counts = batched_stats(X, C)
    assert sums.shape == (3, 2) and counts.shape == (3,)
    many = np.stack([C, C[::-1], C])  # replicas 0 and 2 share their centroids: computed once
    m_sums, m_counts = batched_stats(X, many)
    assert m_sums[0].tobytes() == sums.tobytes() == m_sums[2].tobytes()
    assert m_counts[0].tobytes() == counts.tobytes()
    assert m_counts[1].tolist() == counts[::-1].tolist()
    np.testing.assert_allclose(m_sums[1], sums[::-1], rtol=1e-12, atol=1e-12)
