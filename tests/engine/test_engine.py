"""The DP-Lloyd engine: accounting, post-processing, determinism (book chapter 5)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.compute.lloyd import batched_stats, lloyd_reference
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.init import sphere_packing, uniform_box
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import FixedShares, JointRelease, PostProcess, PublicStart, SuSplit
from dpkmeans.errors import ClippingWarning
from dpkmeans.papers.di.flaws import EXACT_COUNTS, ExactCounts
from dpkmeans.papers.su.flaws import SKIP_EMPTY_CLUSTERS, SWAPPED_SPLIT, SwappedSplit
from dpkmeans.papers.su.variants import dplloyd, dplloyd_impr


def blobs(n: int = 600, d: int = 2, k: int = 3, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centres = gen.uniform(-0.6, 0.6, size=(k, d))
    return np.clip(centres[gen.integers(k, size=n)] + gen.normal(0, 0.08, (n, d)), -1, 1)


BOX2 = (-np.ones(2), np.ones(2))


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 6),
    d=st.integers(1, 5),
    eps=st.floats(0.01, 20.0),
    T=st.integers(1, 6),
    schedule=st.sampled_from(["uniform", "halving", "series_sum"]),
    split=st.sampled_from(["joint", "su"]),
    neighbour=st.sampled_from(["add/remove", "replace"]),
    replicas=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_ledger_total_equals_declared_epsilon(k, d, eps, T, schedule, split, neighbour, replicas,
                                               seed):
    X = np.random.default_rng(seed).uniform(-1, 1, size=(50, d))
    config = DPLloydConfig(n_clusters=k, bounds=(-np.ones(d), np.ones(d)),
                           schedule=getattr(schedules, schedule)(eps, T),
                           step=JointRelease() if split == "joint" else SuSplit(),
                           neighbour=neighbour, start=PublicStart(uniform_box))
    result = run(X, config, seed, replicas=replicas)
    assert result.ledger.total().epsilon == pytest.approx(eps, rel=1e-9)
    assert result.ledger.is_fully_spent()
    assert np.all(np.isfinite(result.centroids))
    assert result.centroids.shape == (replicas, k, d)
    draws = [e for e in result.ledger.entries if e.mechanism != "post-processing"]
    releases_per_cluster = 1 if split == "joint" else d + 1
    expected = T * releases_per_cluster * (1 if neighbour == "replace" else k)
    assert len(draws) == expected


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(1e-4, 0.05), seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12))
def test_never_nan_or_infinite_even_with_tiny_budgets_and_empty_clusters(eps, seed, k):
    X = np.full((5, 2), 0.9)  # every record in one corner: most clusters are empty
    result = run(X, dplloyd(k, eps, BOX2, iterations=4), seed, replicas=3)
    assert np.all(np.isfinite(result.centroids))
    assert np.all((result.centroids >= -1) & (result.centroids <= 1))


def test_empty_clusters_receive_noise():
    X = np.full((20, 2), -0.9)
    config = DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=[1.0],
                           start=PublicStart(lambda b, k, g: np.array([[-0.9, -0.9], [0.9, 0.9],
                                                                       [0.9, -0.9]])))
    result = run(X, config, 7)
    _, exact = batched_stats(X, result.initial_centroids)
    assert exact[0].tolist() == [20.0, 0.0, 0.0]
    assert np.all(result.noisy_counts[0, 1:] != 0.0), "an empty cluster was not noised"
    assert len([e for e in result.ledger.entries if e.mechanism == "Laplace (discrete)"]) == 3


def test_same_seed_gives_bit_identical_output_and_replicas_do_not_depend_on_batch_size():
    X = blobs()
    config = dplloyd_impr(3, 0.5, BOX2, n_records=len(X))
    a = run(X, config, 123, replicas=6)
    b = run(X, config, 123, replicas=6)
    np.testing.assert_array_equal(a.centroids, b.centroids)
    for r in (0, 2, 5):
        alone = run(X, config, 123, replicas=r + 1)
        np.testing.assert_array_equal(alone.centroids[r], a.centroids[r])
    c = run(X, config, 124, replicas=6)
    assert not np.array_equal(a.centroids, c.centroids)


def test_huge_epsilon_recovers_non_private_lloyd():
    X = blobs()
    config = DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=schedules.uniform(1e9, 6),
                           start=PublicStart(sphere_packing))
    result = run(X, config, 5, replicas=2)
    reference = lloyd_reference(X, result.initial_centroids, 6)
    np.testing.assert_allclose(result.centroids, reference, atol=1e-6)


def test_sensitivities_and_su_split_in_the_ledger():
    d = 5
    X = np.random.default_rng(1).uniform(-1, 1, size=(100, d))
    joint = run(X, dplloyd(2, 1.0, (-np.ones(d), np.ones(d)), iterations=2), 0)
    laplace = [e for e in joint.ledger.entries if e.mechanism == "Laplace (discrete)"]
    assert {e.sensitivity for e in laplace} == {d + 1.0}
    assert all(e.scale == pytest.approx((d + 1.0) / 0.5) for e in laplace)
    impr = run(X, dplloyd_impr(2, 1.0, (-np.ones(d), np.ones(d)), n_records=100), 0)
    counts = [e for e in impr.ledger.entries if e.label == "n_j"]
    dims = [e for e in impr.ledger.entries if e.label == "S_j[0]"]
    c = (4 * d * 0.225**2) ** (1 / 3)
    assert counts[0].epsilon / dims[0].epsilon == pytest.approx(c)  # not swapped (diffprivlib)


def test_replace_adjacency_uses_joint_sensitivity():
    X = blobs()
    config = DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=[0.5, 0.5], neighbour="replace")
    result = run(X, config, 0)
    laplace = [e for e in result.ledger.entries if e.mechanism == "Laplace (discrete)"]
    assert len(laplace) == 2 and {e.sensitivity for e in laplace} == {6.0}  # 2 (d r + 1)
    assert result.ledger.neighbour == "replace"


def test_gaussian_noise_spends_delta_per_iteration():
    config = DPLloydConfig(n_clusters=2, bounds=BOX2, schedule=[0.5, 0.5], noise="gaussian",
                           delta=1e-6)
    result = run(blobs(), config, 0)
    assert result.ledger.total().delta == pytest.approx(2e-6)
    assert np.all(np.isfinite(result.centroids))


def test_data_outside_bounds_is_clipped_and_the_warning_gives_no_count():
    X = blobs()
    X[:3, 0] = 5.0
    with pytest.warns(ClippingWarning, match="^values of X outside the public bounds") as seen:
        result = run(X, dplloyd(3, 1.0, BOX2), 0)
    assert not any(ch.isdigit() for ch in str(seen[0].message))
    assert seen[0].filename == __file__  # the caller's line, not the engine's
    assert result.n_clipped == 3  # the count stays the data holder's, in the result


def test_final_release_is_post_processing():
    def keep_first(centroids, counts):
        return centroids[:, :1]

    config = DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=[1.0],
                           output=PostProcess(keep_first))
    result = run(blobs(), config, 0)
    assert result.centroids.shape == (1, 1, 2)
    assert result.ledger.entries[-1].label == "final release: keep_first"
    assert result.ledger.total().epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_clusters": 0}, "n_clusters"),
    ({"schedule": []}, "schedule"),
    ({"schedule": [0.5, -0.1]}, "schedule"),
    ({"step": "su"}, "step must be"),
    ({"start": sphere_packing}, "start must be"),
    ({"noise": "cauchy"}, "noise"),
    ({"neighbour": "swap"}, "neighbour"),
    ({"count_floor": 0.0}, "count_floor"),
    ({"allocation": FixedShares([1.0, 2.0, 0.5])}, "allocation"),
    ({"allocation": [1.0, 1.0, 0.5]}, "allocation must be"),
    ({"bounds": (np.ones(2), -np.ones(2))}, "bounds"),
    ({"delta": 1e-5}, "delta"),
])
def test_config_validation(kwargs, match):
    base = dict(n_clusters=3, bounds=BOX2, schedule=[1.0])
    with pytest.raises((ValueError, TypeError), match=match):
        DPLloydConfig(**{**base, **kwargs})


def test_run_input_errors():
    config = dplloyd(2, 1.0, BOX2)
    with pytest.raises(ValueError, match="finite"):
        run(np.array([[np.nan, 0.0]]), config, 0)
    with pytest.raises(ValueError, match="features"):
        run(np.zeros((3, 3)), config, 0)
    with pytest.raises(ValueError, match="replicas"):
        run(np.zeros((3, 2)), config, 0, replicas=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(np.zeros((3, 2)), config, 0)  # in-bounds data: no warning


def test_as_published_flaws_are_recorded_truthfully():
    import dataclasses

    d = 10
    X = np.random.default_rng(2).uniform(-1, 1, size=(60, d))
    box = (-np.ones(d), np.ones(d))
    impr = dplloyd_impr(3, 1.0, box, n_records=60)
    swapped = run(X, dataclasses.replace(impr, step=SwappedSplit(), flaws=(SWAPPED_SPLIT,)), 0)
    c = (4 * d * 0.225**2) ** (1 / 3)
    assert swapped.ledger.total().epsilon == pytest.approx((1 + d * c) / (d + c))  # overspends
    assert swapped.ledger.is_private  # it is private, just at a larger epsilon than declared
    leaky = run(X, dataclasses.replace(dplloyd(3, 1.0, box), step=ExactCounts(),
                                       flaws=(EXACT_COUNTS, DATA_DERIVED_BOUNDS)), 0)
    assert not leaky.ledger.is_private
    assert [e.mechanism for e in leaky.ledger.entries[:2]] == ["LEAK (not private)"] * 2
    assert np.all(np.isfinite(leaky.centroids))


@pytest.mark.parametrize("kwargs, match", [
    ({"step": SwappedSplit()}, "swapped-split"),
    ({"step": SuSplit(), "flaws": (SWAPPED_SPLIT,)}, "change a step of the loop"),
    ({"flaws": (SKIP_EMPTY_CLUSTERS,), "neighbour": "replace"}, "under replace adjacency"),
    ({"step": SwappedSplit(), "noise": "gaussian", "delta": 1e-6, "flaws": (SWAPPED_SPLIT,)},
     "Laplace noise only"),
    ({"flaws": (SWAPPED_SPLIT, SWAPPED_SPLIT), "step": SuSplit()}, "listed twice"),
])
def test_flaw_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPLloydConfig(n_clusters=2, bounds=BOX2, schedule=[1.0], **kwargs)


def test_empty_data_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one row"):
        run(np.zeros((0, 2)), dplloyd(2, 1.0, BOX2), 0)


def test_centred_release_adds_the_midpoint_back():
    """On [17, 90]^2 the centred run charges Delta = 2 * 36.5 + 1 = 74 (not 181) and, with
    noise negligible, lands where the uncentred one does: non-private Lloyd."""
    import dataclasses

    gen = np.random.default_rng(4)
    X = np.clip(gen.normal([30.0, 70.0], 3.0, size=(400, 2)), 17, 90)
    box = (np.full(2, 17.0), np.full(2, 90.0))
    base = DPLloydConfig(n_clusters=2, bounds=box, schedule=schedules.uniform(1e9, 4))
    runs = {c: run(X, dataclasses.replace(base, centred=c), 3) for c in (True, False)}
    sens = {c: {e.sensitivity for e in r.ledger.entries if e.epsilon > 0} for c, r in runs.items()}
    assert sens == {True: {74.0}, False: {181.0}}
    reference = lloyd_reference(X, runs[True].initial_centroids, 4)
    for r in runs.values():
        np.testing.assert_allclose(r.centroids, reference, atol=1e-6)


def test_the_discrete_release_lies_on_its_public_grid():
    from dpkmeans.engine.planning import iteration_releases
    from dpkmeans.privacy.floating_point import grid_output_possible

    config = dplloyd(3, 1.0, BOX2, iterations=2)
    result = run(blobs(), config, 0, replicas=4)
    grid = iteration_releases(config, 0.5)[0].calibration.grid
    noisy_counts = result.noisy_counts  # the released counts of the last iteration
    assert grid_output_possible(noisy_counts, 0.0, grid).all()
    entries = [e for e in result.ledger.entries if e.epsilon > 0]
    assert all(e.details["sampler"] == "discrete" and e.details["grid"] == grid for e in entries)


def test_the_planned_ledger_of_diffprivlib_is_its_closed_form_overspend():
    """diffprivlib's flaws as an engine configuration: its ledger, planned without data, spends
    (1 + d c) / (d + c) times the declared epsilon (the chapter's closed form) and leaks."""
    from dpkmeans.engine.planning import plan_ledger
    from dpkmeans.papers.su.study import diffprivlib_config, diffprivlib_epsilon_factor

    for d in (2, 10, 24):
        box = (-np.ones(d), np.ones(d))
        ledger = plan_ledger(diffprivlib_config(3, 1.0, box, 5000))
        assert ledger.total().epsilon == pytest.approx(diffprivlib_epsilon_factor(d))
        assert not ledger.is_private
