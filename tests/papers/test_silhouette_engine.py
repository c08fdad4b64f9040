"""The block plan, the block statistics and the silhouette weights (book chapter 8). The two
configurations and the engine's hooks are tested in ``test_silhouette_variants.py``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpkmeans.compute.blocks import BLOCK_ROWS, add_parts, plan, tree_reduce, tree_sum
from dpkmeans.compute.lloyd import batched_stats, block_silhouette, local_map_reduce
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.loop import noisy_iteration, weighted_iteration
from dpkmeans.engine.planning import Release
from dpkmeans.papers.silhouette.variants import (
    ExactSilhouetteWeights,
    NoisySilhouetteWeights,
    as_published,
    corrected,
)
from dpkmeans.privacy.accounting import PrivacyLedger

BOX = (np.zeros(2), np.ones(2))


@pytest.fixture(scope="module")
def blobs() -> np.ndarray:
    rng = np.random.default_rng(21)
    centres = np.array([[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]])
    return np.clip(centres[rng.integers(0, 3, 600)] + rng.normal(0, 0.05, (600, 2)), 0, 1)


# --- the block plan -------------------------------------------------------------------------

def test_plan_covers_every_row_once_in_order():
    for n in (0, 1, BLOCK_ROWS, BLOCK_ROWS + 1, 3 * BLOCK_ROWS - 7):
        rows = np.concatenate([np.arange(n)[s] for s in plan(n)])
        assert np.array_equal(rows, np.arange(n))
    assert plan(0) == [slice(0, 0)]
    with pytest.raises(ValueError, match="n_rows"):
        plan(-1)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 20])
def test_aligned_chunks_are_nodes_of_the_same_tree(n):
    """The property the Dask backend relies on: adding the blocks of aligned runs of 2^m blocks
    first, then the runs, gives the bits of the plain pairwise tree (values chosen so that the
    order of floating-point additions matters)."""
    rng = np.random.default_rng(n)
    parts = [(rng.standard_normal(6) * 10.0 ** rng.integers(-8, 9, 6),) for _ in range(n)]
    whole = tree_sum(parts)
    for size in (1, 2, 4, 8, 16):
        nodes = [tree_sum(parts[i:i + size]) for i in range(0, n, size)]
        assert np.array_equal(tree_reduce(nodes, add_parts)[0], whole[0]), size
    left_to_right = parts[0][0].copy()
    for p in parts[1:]:
        left_to_right = left_to_right + p[0]
    if n == 5:  # ((0 + 1) + (2 + 3)) + 4, not (((0 + 1) + 2) + 3) + 4
        expected = ((parts[0][0] + parts[1][0]) + (parts[2][0] + parts[3][0])) + parts[4][0]
        assert np.array_equal(whole[0], expected)
    with pytest.raises(ValueError):
        tree_sum([])


def test_block_statistics_over_several_blocks_are_the_direct_ones():
    rng = np.random.default_rng(2)
    X = rng.random((BLOCK_ROWS + 1000, 2))
    C = rng.random((3, 2))
    sums, counts = batched_stats(X, C)
    labels = np.linalg.norm(X[:, None] - C[None], axis=2).argmin(axis=1)
    np.testing.assert_array_equal(counts, np.bincount(labels, minlength=3))
    np.testing.assert_allclose(sums, np.stack([X[labels == j].sum(axis=0) for j in range(3)]),
                               rtol=1e-12)
    starts = local_map_reduce(X, lambda block, start: (np.array([start], float),),
                              with_start=True)[0]
    assert starts[0] == BLOCK_ROWS  # 0 + BLOCK_ROWS: each block saw its own first row


def test_block_silhouette_is_the_centre_silhouette():
    rng = np.random.default_rng(5)
    X = rng.random((500, 2))
    C = np.array([[0.2, 0.2], [0.2, 0.2], [0.7, 0.6]])  # a duplicated centre: ties give S = 0
    X[0] = C[2]  # a record on a centre: S = 1
    sums, counts = local_map_reduce(X, block_silhouette, C[None])
    dist = np.sort(np.linalg.norm(X[:, None] - C[None], axis=2), axis=1)
    s = (dist[:, 1] - dist[:, 0]) / dist[:, 1]
    assert s.min() >= 0 and s.max() == 1.0
    assert sums.sum() == pytest.approx(s.sum(), rel=1e-12) and counts.sum() == 500


# --- the silhouette weights ------------------------------------------------------------------

def test_exact_weights_are_at_least_one_and_noisy_weights_at_most_one(blobs):
    C = np.array([[[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]], [[0.1, 0.1], [0.15, 0.1], [0.9, 0.9]]])
    from dpkmeans.compute.backends import MemoryBackend
    from dpkmeans.privacy.accounting import PrivacyLedger

    config = corrected(3, 1.0, BOX)
    ledger = PrivacyLedger(budget=None)
    rngs = [np.random.default_rng(i) for i in range(2)]
    ctx = HookContext(MemoryBackend(), blobs, len(blobs), config, C, rngs, ledger, 1, 0.45)
    exact = ExactSilhouetteWeights().weights(ctx)
    assert exact.shape == (2, 3) and np.all(exact >= 1) and np.allclose(exact.min(axis=1), 1)
    noisy = NoisySilhouetteWeights().weights(ctx)
    assert np.all((noisy >= 0.5) & (noisy <= 1)) and np.allclose(noisy.max(axis=1), 1)
    assert ledger.total().epsilon == pytest.approx(0.45 * 0.1 / 0.9)  # the silhouettes' share
    for bad in (0.0, 1.0, -0.2):
        with pytest.raises(ValueError, match="share"):
            NoisySilhouetteWeights(bad)


# --- per-replica noise in one call ---------------------------------------------------------

@pytest.mark.parametrize("variant", ["corrected", "as published", "continuous"])
def test_weighted_noise_in_one_call_equals_each_replica_alone(variant):
    """An allocation rule's iteration draws all replicas' noise in one call, each at its own
    scales: bit for bit what each replica's own release gives (the loop it replaces)."""
    config = as_published(3, 1.0, BOX) if variant == "as published" else corrected(3, 1.0, BOX)
    if variant == "continuous":
        config = replace(config, sampler="continuous")
    rng = np.random.default_rng(5)
    R, eps_t = 7, 0.3
    stats = np.concatenate([rng.random((R, 3, 2)) * 50, rng.integers(0, 90, (R, 3, 1))], axis=2)
    weights = rng.uniform(0.5, 1.0, (R, 3))
    unit = rng.laplace(size=(R, 3, 3)) if variant == "continuous" else None
    noisy, cost, _ = weighted_iteration(stats, config, eps_t, weights, gens(R), unit,
                                         PrivacyLedger())
    (label, cols, sens, *_), = config.step.specs(config, eps_t)
    for r, g in enumerate(gens(R)):
        releases = [Release(label, j, cols,
                            config.noise.calibrate(sens, eps_t * w, config.delta,
                                                   coordinates=cols.stop - cols.start))
                    for j, w in enumerate(weights[r])]
        alone = noisy_iteration(stats[r:r + 1], releases, config, [g],
                                 None if unit is None else unit[r:r + 1], PrivacyLedger())
        np.testing.assert_array_equal(noisy[r:r + 1], alone)
    np.testing.assert_array_equal(cost, eps_t * weights.max(axis=1))


def gens(R: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(99).spawn(R)]
