"""DP-KCCM (Ni et al. 2021; book chapter 7): the eq. 12 merge and the four engine configurations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpkmeans.engine import schedules
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import JointRelease, PostProcess, PublishAsIs
from dpkmeans.papers.dpkccm.merging import MergeRelease, merge_eq12, merge_release, merge_to_k
from dpkmeans.papers.dpkccm.variants import (
    VARIANTS,
    allocation_nk,
    average_k,
    average_nk,
    dpkccm_config,
)

coords = st.floats(-1.0, 1.0, allow_nan=False)
positive = st.floats(1e-3, 1e6, allow_nan=False)


def box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return -np.ones(d), np.ones(d)


def blobs(n: int = 300, d: int = 3, k: int = 4, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centres = gen.uniform(-0.6, 0.6, size=(k, d))
    return np.clip(centres[gen.integers(k, size=n)] + gen.normal(0, 0.08, (n, d)), -1, 1)


def merge_reference(C: np.ndarray, n: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Naive Alg. 1 merge on one replica: lists, itertools, the textbook weighted mean."""
    cs, ns = [c for c in C], [max(float(x), 1.0) for x in n]
    while len(cs) > k:
        p, q = min(itertools.combinations(range(len(cs)), 2),
                   key=lambda pq: np.linalg.norm(cs[pq[0]] - cs[pq[1]]))
        cs[p] = (ns[p] * cs[p] + ns[q] * cs[q]) / (ns[p] + ns[q])
        ns[p] += ns[q]
        del cs[q], ns[q]
    return np.array(cs), np.array(ns)


# --- eq. 12 is the noisy-count-weighted mean -------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(d=st.integers(1, 6), data=st.data(), n_p=positive, n_q=positive)
def test_eq12_is_the_noisy_count_weighted_mean(d, data, n_p, n_q):
    c_p = data.draw(hnp.arrays(float, d, elements=coords))
    c_q = data.draw(hnp.arrays(float, d, elements=coords))
    same = data.draw(hnp.arrays(bool, d))
    c_q[same] = c_p[same]  # some coordinates equal: the argmax tie in eq. 12
    mean = (n_p * c_p + n_q * c_q) / (n_p + n_q)
    eq12 = merge_eq12(c_p, c_q, n_p, n_q)
    np.testing.assert_allclose(eq12, mean, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(eq12[same], c_p[same])  # exactly, where c_p^i == c_q^i
    # ... and it is what merge_to_k does to one pair (counts above the floor)
    merged, count = merge_to_k(np.stack([c_p, c_q]), np.array([n_p, n_q]), 1,
                               count_floor=1e-3, return_counts=True)
    np.testing.assert_allclose(merged[0], eq12, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(merged[0][same], c_p[same])
    assert count[0] == n_p + n_q


def test_eq12_symbolic_cases_by_hand():
    # c_p > c_q: c_q + (c_p - c_q) n_p / (n_p + n_q); the heavier cluster pulls harder
    assert merge_eq12(1.0, 0.0, 3.0, 1.0) == pytest.approx(0.75)
    assert merge_eq12(0.0, 1.0, 3.0, 1.0) == pytest.approx(0.25)
    assert merge_eq12(-0.5, -0.5, 2.0, 7.0) == -0.5


# --- merge_to_k ------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(R=st.integers(1, 4), m=st.integers(1, 15), d=st.integers(1, 4), data=st.data(),
       floor=st.sampled_from([1.0, 0.5, 3.0]))
def test_merge_reduces_to_k_without_nan_and_preserves_the_weighted_total(R, m, d, data, floor):
    k = data.draw(st.integers(1, m))
    C = data.draw(hnp.arrays(float, (R, m, d), elements=coords))
    n = data.draw(hnp.arrays(float, (R, m), elements=st.floats(-50, 500)))  # noisy: may be < 0
    merged, counts = merge_to_k(C, n, k, count_floor=floor, return_counts=True)
    assert merged.shape == (R, k, d) and counts.shape == (R, k)
    assert np.all(np.isfinite(merged)) and np.all(counts >= floor)
    clamped = np.maximum(n, floor)
    np.testing.assert_allclose(counts.sum(axis=1), clamped.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(np.einsum("rk,rkd->rd", counts, merged),
                               np.einsum("rm,rmd->rd", clamped, C), rtol=1e-9, atol=1e-9)
    # merged centroids are convex combinations: inside the inputs' coordinate-wise hull
    assert np.all(merged >= C.min(axis=1, keepdims=True) - 1e-12)
    assert np.all(merged <= C.max(axis=1, keepdims=True) + 1e-12)


def test_batched_merge_equals_per_replica_loop_and_the_naive_algorithm():
    gen = np.random.default_rng(3)
    C, n = gen.uniform(-1, 1, (6, 15, 4)), gen.normal(40, 60, (6, 15))
    batched, counts = merge_to_k(C, n, 5, return_counts=True)
    for r in range(6):
        alone, alone_counts = merge_to_k(C[r], n[r], 5, return_counts=True)
        np.testing.assert_array_equal(batched[r], alone)
        np.testing.assert_array_equal(counts[r], alone_counts)
        ref, ref_counts = merge_reference(C[r], n[r], 5)
        np.testing.assert_allclose(batched[r], ref, atol=1e-12)
        np.testing.assert_allclose(counts[r], ref_counts)


def test_merging_two_identical_centroids_gives_that_centroid_exactly():
    c = np.array([0.1234567, -0.7654321, 0.3])
    C = np.stack([c, np.full(3, 0.9), c, np.full(3, -0.9)])
    merged, counts = merge_to_k(C, np.array([3.7, 10.0, 0.2, 5.0]), 3, return_counts=True)
    np.testing.assert_array_equal(merged, np.stack([c, np.full(3, 0.9), np.full(3, -0.9)]))
    np.testing.assert_array_equal(counts, [3.7 + 1.0, 10.0, 5.0])  # 0.2 clamped to the floor


def test_ties_merge_the_lowest_index_pair_and_survivors_keep_slot_order():
    C = np.array([[0.0], [1.0], [2.0], [3.0]])  # three equally near pairs
    np.testing.assert_array_equal(merge_to_k(C, np.ones(4), 3), [[0.5], [2.0], [3.0]])
    # then (0.5, 2) and (2, 3) are 1.5 and 1 apart: (2, 3) goes next, into slot 2
    np.testing.assert_array_equal(merge_to_k(C, np.ones(4), 2), [[0.5], [2.5]])


def test_merge_to_k_with_m_equal_k_is_the_identity_and_does_not_modify_its_input():
    gen = np.random.default_rng(0)
    C, n = gen.uniform(-1, 1, (2, 4, 3)), gen.normal(5, 5, (2, 4))
    before = C.copy()
    np.testing.assert_array_equal(merge_to_k(C, n, 4), C)
    merge_to_k(C, n, 1)
    np.testing.assert_array_equal(C, before)


@pytest.mark.parametrize("args, kwargs, match", [
    ((np.zeros((1, 3, 2)), np.ones((1, 3)), 0), {}, "k must be >= 1"),
    ((np.zeros((1, 3, 2)), np.ones((1, 3)), 4), {}, r"k must be <= .*\(3\), got 4"),
    ((np.zeros((1, 3, 2)), np.ones((1, 4)), 2), {}, "noisy_counts must have shape"),
    ((np.zeros(3), np.ones(3), 2), {}, "centroids must have shape"),
    ((np.full((1, 3, 2), np.nan), np.ones((1, 3)), 2), {}, "finite"),
    ((np.zeros((1, 3, 2)), np.ones((1, 3)), 2), {"count_floor": 0.0}, "count_floor"),
])
def test_merge_input_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        merge_to_k(*args, **kwargs)


def test_merge_release_is_a_named_comparable_release():
    release = merge_release(4)
    assert isinstance(release, MergeRelease) and release == merge_release(4)
    assert "noisy-count-weighted mean" in release.__name__ and "-> 4" in release.__name__
    with pytest.raises(ValueError, match="count_floor"):
        merge_release(4, count_floor=-1.0)
    with pytest.raises(ValueError, match="k"):
        merge_release(0)


# --- the four configurations -----------------------------------------------------------------

STEPPED_SHARES = np.repeat([1 / 24, 1 / 12, 1 / 8], 4)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_variant_configures_the_engine_as_in_seed_000(name):
    k, d, eps = 3, 3, 0.7
    config = VARIANTS[name](k, eps, box(d))
    assert config.name == name and isinstance(config.step, JointRelease) and config.iterations == 12
    assert config.epsilon == pytest.approx(eps, rel=1e-12)
    expected = eps * STEPPED_SHARES if name.startswith("allocation") else np.full(12, eps / 12)
    np.testing.assert_allclose(config.schedule, expected, rtol=1e-12)
    merges = name.endswith("_nk")
    assert config.n_clusters == (3 * k if merges else k)
    assert (config.output == PostProcess(merge_release(k))) if merges \
        else config.output == PublishAsIs()
    result = run(blobs(d=d), config, 11, replicas=3)
    assert result.initial_centroids.shape == (3, config.n_clusters, d)  # sphere packing for n k
    assert result.centroids.shape == (3, k, d)
    assert np.all(np.isfinite(result.centroids))


def test_stepped_schedule_shares_at_t_12():
    np.testing.assert_allclose(schedules.dpkccm_stepped(1.0, 12), STEPPED_SHARES, rtol=1e-12)
    assert schedules.dpkccm_stepped(1.0, 12).sum() == pytest.approx(1.0, rel=1e-15)


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(VARIANTS)), eps=st.floats(0.01, 10.0),
       k=st.integers(1, 4), d=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_ledger_total_equals_epsilon_with_parallel_composition_over_the_clusters(name, eps, k, d,
                                                                                  seed):
    X = np.random.default_rng(seed).uniform(-1, 1, size=(40, d))
    config = VARIANTS[name](k, eps, box(d))
    result = run(X, config, seed, replicas=2)
    assert result.ledger.total().epsilon == pytest.approx(eps, rel=1e-9)
    assert result.ledger.is_fully_spent() and result.ledger.is_private
    laplace = [e for e in result.ledger.entries if e.mechanism == "Laplace (discrete)"]
    m = config.n_clusters
    assert len(laplace) == 12 * m  # one joint (S_j, n_j) release per cluster per iteration
    assert {e.sensitivity for e in laplace} == {d + 1.0}  # Delta = d r + 1 on [-1, 1]^d
    for t, eps_t in enumerate(config.schedule, start=1):
        step = [e for e in laplace if e.scope.startswith(f"iteration {t} >")]
        assert {e.scope.split(" > ")[1] for e in step} == {"clusters[parallel]"}
        assert sorted(e.scope.split(" > ")[2] for e in step) == sorted(
            f"cluster {j}" for j in range(m))
        assert all(e.epsilon == eps_t and e.scale == pytest.approx((d + 1) / eps_t)
                   for e in step)
    if name.endswith("_nk"):
        assert result.ledger.entries[-1].label.startswith("final release: merge n*k ->")


def test_release_is_the_merge_of_the_last_iterate_and_runs_are_deterministic():
    X = blobs()
    config = allocation_nk(4, 1.0, box(3))
    a = run(X, config, 99, replicas=4, record_history=True)
    b = run(X, config, 99, replicas=4)
    np.testing.assert_array_equal(a.centroids, b.centroids)
    np.testing.assert_array_equal(a.centroids, merge_to_k(a.history[-1], a.noisy_counts, 4))
    assert not np.array_equal(a.centroids, run(X, config, 100, replicas=4).centroids)


def test_options_merge_factor_schedule_and_iterations():
    X, k = blobs(), 4
    config = average_nk(k, 0.5, box(3), n=5, iterations=6, schedule="stepped")
    assert config.n_clusters == 5 * k and config.iterations == 6
    np.testing.assert_allclose(config.schedule, schedules.dpkccm_stepped(0.5, 6))
    uniform = allocation_nk(k, 0.5, box(3), schedule=schedules.uniform)
    np.testing.assert_array_equal(uniform.schedule, average_nk(k, 0.5, box(3)).schedule)
    explicit = allocation_nk(k, 1.0, box(3), iterations=2, schedule=[0.25, 0.75])
    np.testing.assert_array_equal(explicit.schedule, [0.25, 0.75])
    # n = 1: merging k clusters to k changes nothing, so average_nk is average_k
    one = run(X, average_nk(k, 0.5, box(3), n=1), 5, replicas=2)
    np.testing.assert_array_equal(one.centroids, run(X, average_k(k, 0.5, box(3)), 5,
                                                     replicas=2).centroids)


@pytest.mark.parametrize("variant, kwargs, match", [
    ("dp-kccm", {}, "variant must be one of"),
    ("average_k", {"n": 3}, "does not merge"),
    ("allocation_nk", {"n": 0}, "n must be >= 1"),
    ("allocation_nk", {"iterations": 10}, "multiple of 3"),
    ("average_nk", {"schedule": "halving"}, "schedule must be one of"),
    ("average_nk", {"schedule": [0.5] * 12}, "sum to epsilon"),
    ("average_nk", {"schedule": [1.0]}, "one budget per iteration"),
    ("average_nk", {"epsilon": 0.0}, "epsilon"),
    ("average_nk", {"n_clusters": 0}, "n_clusters"),
])
def test_config_input_errors(variant, kwargs, match):
    args = {"n_clusters": 3, "epsilon": 1.0, "bounds": box(2)}
    with pytest.raises(ValueError, match=match):
        dpkccm_config(variant, **{**args, **kwargs})
