"""Sensitivity of the DP-Lloyd query: the formula against brute force (book chapter 1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.compute.lloyd import assign, cluster_stats
from dpkmeans.compute.lloyd import lloyd_query as query
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity


@pytest.mark.parametrize("d, r", [(1, 1.0), (5, 1.0), (13, 2.5)])
def test_symmetric_box_matches_reference_table(d, r):
    bounds = (np.full(d, -r), np.full(d, r))
    ar = lloyd_query_sensitivity(bounds)
    rp = lloyd_query_sensitivity(bounds, "replace")
    assert ar.per_cluster == ar.joint == pytest.approx(d * r + 1)
    assert rp.joint == pytest.approx(2 * (d * r + 1))
    assert (ar.clusters_touched, rp.clusters_touched) == (1, 2)


def test_unit_box():
    d = 4
    ar = lloyd_query_sensitivity((np.zeros(d), np.ones(d)))
    rp = lloyd_query_sensitivity((np.zeros(d), np.ones(d)), "replace")
    assert ar.joint == d + 1
    assert rp.joint == 2 * (d + 1)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 6), k=st.integers(1, 5))
def test_no_neighbour_exceeds_the_bound(seed, d, k):
    """Random data in a box, random neighbours including corner records: the bound holds."""
    rng = np.random.default_rng(seed)
    lower = rng.uniform(-3, 1, d)
    upper = lower + rng.uniform(0.1, 3, d)
    X = rng.uniform(lower, upper, size=(30, d))
    C = rng.uniform(lower, upper, size=(k, d))
    corners = np.where(rng.random((20, d)) < 0.5, lower, upper)
    candidates = np.vstack([corners, rng.uniform(lower, upper, size=(20, d))])
    base = query(X, C)
    ar = lloyd_query_sensitivity((lower, upper))
    rp = lloyd_query_sensitivity((lower, upper), "replace")
    for z in candidates:
        added = query(np.vstack([X, z]), C)
        assert np.abs(added - base).sum() <= ar.joint + 1e-9
        replaced = X.copy()
        replaced[rng.integers(len(X))] = z
        change = np.abs(query(replaced, C) - base)
        assert change.sum() <= rp.joint + 1e-9
        assert change.sum(axis=1).max() <= rp.per_cluster + 1e-9


def test_bounds_are_attained():
    """The add/remove and replace bounds are tight: a corner record moving clusters attains them."""
    d = 3
    lower, upper = -np.ones(d), np.ones(d)
    C = np.array([[-0.5] * d, [0.5] * d])
    X = np.array([[-0.9] * d, [0.9] * d])
    base = query(X, C)
    added = np.abs(query(np.vstack([X, upper]), C) - base).sum()
    assert added == pytest.approx(lloyd_query_sensitivity((lower, upper)).joint)
    # replace the corner record `lower` (cluster 0) by the opposite corner `upper` (cluster 1)
    moved = np.abs(query(np.array([lower, X[1]]), C) - query(np.array([upper, X[1]]), C)).sum()
    assert moved == pytest.approx(lloyd_query_sensitivity((lower, upper), "replace").joint)


def test_assign_matches_brute_force(rng):
    X = rng.normal(size=(200, 4))
    C = rng.normal(size=(6, 4))
    brute = np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(assign(X, C), brute)


def test_cluster_stats_counts_empty_clusters(rng):
    X = rng.uniform(0, 1, size=(50, 2))
    C = np.array([[0.5, 0.5], [100.0, 100.0]])
    sums, counts = cluster_stats(X, C)
    assert counts.tolist() == [50.0, 0.0]
    np.testing.assert_allclose(sums[0], X.sum(axis=0))
    np.testing.assert_array_equal(sums[1], [0.0, 0.0])


def test_lloyd_input_errors():
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        assign(np.zeros(3), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="features"):
        assign(np.zeros((3, 2)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="finite"):
        cluster_stats(np.array([[np.nan, 0.0]]), np.zeros((1, 2)))


# --- centred release (book chapter 5) ------------------------------------------------------

@pytest.mark.parametrize("lower, upper, plain, centred", [(0.0, 1.0, 7.0, 4.0),
                                                           (17.0, 90.0, 541.0, 220.0),
                                                           (-1.0, 1.0, 7.0, 7.0)])
def test_centring_on_the_midpoint_shrinks_the_sensitivity(lower, upper, plain, centred):
    bounds = (np.full(6, lower), np.full(6, upper))
    assert lloyd_query_sensitivity(bounds).joint == pytest.approx(plain)
    assert lloyd_query_sensitivity(bounds, centred=True).joint == pytest.approx(centred)
    width = 6 * (upper - lower)
    replace = lloyd_query_sensitivity(bounds, "replace", centred=True)
    assert replace.joint == pytest.approx(max(width, 2 * centred))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 6), k=st.integers(1, 5))
def test_no_neighbour_exceeds_the_centred_bound(seed, d, k):
    """The centred query (S_j - n_j m, n_j) against brute force, corners included."""
    rng = np.random.default_rng(seed)
    lower = rng.uniform(-3, 5, d)
    upper = lower + rng.uniform(0.1, 3, d)
    m = (lower + upper) / 2
    X = rng.uniform(lower, upper, size=(30, d))
    C = rng.uniform(lower, upper, size=(k, d))

    def centred_query(data):
        q = query(data, C)
        q[:, :d] -= q[:, d:] * m
        return q

    base = centred_query(X)
    ar = lloyd_query_sensitivity((lower, upper), centred=True)
    rp = lloyd_query_sensitivity((lower, upper), "replace", centred=True)
    corners = np.where(rng.random((20, d)) < 0.5, lower, upper)
    for z in np.vstack([corners, rng.uniform(lower, upper, size=(10, d))]):
        assert np.abs(centred_query(np.vstack([X, z])) - base).sum() <= ar.joint + 1e-9
        replaced = X.copy()
        replaced[rng.integers(len(X))] = z
        assert np.abs(centred_query(replaced) - base).sum() <= rp.joint + 1e-9
