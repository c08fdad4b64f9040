"""Synthetic Gaussian mixtures: known centres, controlled separation, chunk-size invariance."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpkmeans.data.synthetic import (
    BLOCK_ROWS,
    GaussianMixture,
    gaussian_mixture_dataset,
    make_mixture,
)


def _min_distance(centers: np.ndarray) -> float:
    return min(np.linalg.norm(a - b) for a, b in itertools.combinations(centers, 2))


@pytest.mark.parametrize(("k", "d"), [(2, 1), (3, 2), (5, 3), (8, 2), (10, 40)])
def test_centres_are_at_least_separation_std_apart(k: int, d: int) -> None:
    mix = make_mixture(k, d, rng=np.random.default_rng(1), separation=3.0, std=0.5)
    assert mix.centers.shape == (k, d)
    assert _min_distance(mix.centers) >= 3.0 * 0.5 - 1e-12


def test_same_seed_same_rows_whatever_the_chunk_size() -> None:
    mix = make_mixture(4, 3, rng=np.random.default_rng(7))
    n = 2 * BLOCK_ROWS + 123
    whole_X, whole_y = mix.sample(n, np.random.default_rng(99))
    for chunk in (1000, BLOCK_ROWS, 3 * BLOCK_ROWS):
        parts = list(mix.iter_chunks(n, np.random.default_rng(99), chunk_size=chunk))
        assert all(len(y) <= chunk for _, y in parts)
        np.testing.assert_array_equal(np.concatenate([X for X, _ in parts]), whole_X)
        np.testing.assert_array_equal(np.concatenate([y for _, y in parts]), whole_y)
    other_X, _ = mix.sample(n, np.random.default_rng(100))
    assert not np.array_equal(other_X, whole_X)


def test_streaming_millions_of_rows_in_bounded_chunks() -> None:
    mix = make_mixture(3, 2, rng=np.random.default_rng(0), separation=6.0)
    total = 0
    counts = np.zeros(3, dtype=np.int64)
    sums = np.zeros((3, 2))
    for X, y in mix.iter_chunks(3_000_000, np.random.default_rng(5), chunk_size=500_000):
        assert X.shape[0] <= 500_000
        total += X.shape[0]
        counts += np.bincount(y, minlength=3)
        np.add.at(sums, y, X)
    assert total == 3_000_000
    np.testing.assert_allclose(sums / counts[:, None], mix.centers, atol=0.01)
    np.testing.assert_allclose(counts / total, 1 / 3, atol=0.002)


def test_weights_are_respected() -> None:
    mix = make_mixture(2, 2, rng=np.random.default_rng(3), weights=[1, 3])
    np.testing.assert_allclose(mix.weights, [0.25, 0.75])
    _, y = mix.sample(40_000, np.random.default_rng(4))
    assert abs(y.mean() - 0.75) < 0.01


def test_dataset_carries_true_centres_and_public_bounds() -> None:
    ds = gaussian_mixture_dataset(5000, 4, 2, rng=np.random.default_rng(11), separation=5.0)
    centers = ds.metadata["true_centers"]
    assert ds.X.shape == (5000, 2) and centers.shape == (4, 2)
    assert ds.target_levels == ("0", "1", "2", "3")
    means = np.array([ds.X[ds.target == j].mean(axis=0) for j in range(4)])
    np.testing.assert_allclose(means, centers, atol=0.1)
    np.testing.assert_allclose(ds.bounds[:, 0], centers.min(axis=0) - 4.0)
    scaled = ds.scaled((-1, 1))
    assert scaled.n_clipped < 5  # only far-tail points leave centres +/- 4 std
    np.testing.assert_allclose(
        scaled.unscale(scaled.X[:3]), np.clip(ds.X[:3], ds.bounds[:, 0], ds.bounds[:, 1])
    )


def test_randomness_must_be_an_explicit_generator() -> None:
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        make_mixture(2, 2, rng=42)  # type: ignore[arg-type]
    mix = make_mixture(2, 2, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        mix.sample(10, rng=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"k": 0, "d": 2}, ValueError),
        ({"k": 2, "d": 0}, ValueError),
        ({"k": 2.5, "d": 2}, TypeError),
        ({"k": 2, "d": 2, "separation": -1.0}, ValueError),
        ({"k": 2, "d": 2, "std": 0.0}, ValueError),
        ({"k": 2, "d": 2, "weights": [1.0]}, ValueError),
        ({"k": 2, "d": 2, "weights": [1.0, -1.0]}, ValueError),
    ],
)
def test_bad_parameters_name_the_problem(kwargs: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        make_mixture(rng=np.random.default_rng(0), **kwargs)


def test_mixture_validates_its_arrays() -> None:
    with pytest.raises(ValueError, match="centers"):
        GaussianMixture(centers=np.zeros(3), std=1.0, weights=np.ones(1))
    with pytest.raises(ValueError, match="chunk_size"):
        next(
            make_mixture(2, 2, rng=np.random.default_rng(0)).iter_chunks(
                10, np.random.default_rng(0), chunk_size=0
            )
        )
