"""FastLloyd's radius assignment and relative release (dpkmeans.engine.relative; book chapter
12, "FastLloyd"): the exact statistics, the sensitivity of the released vector, the update as
post-processing, the calibration to the target, the same bits on every backend, and the
published code's flaw."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpkmeans.api.catalogue import FitInputs, choice
from dpkmeans.compute.backends import get_backend
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import tight_epsilon
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_releases
from dpkmeans.engine.relative import (
    RadiusAssignment,
    RelativeRelease,
    fold_into_box,
    radius_statistics,
)
from dpkmeans.engine.strategies import JointRelease
from dpkmeans.papers.fastlloyd.algorithm import fastlloyd_config, fastlloyd_iterations
from dpkmeans.papers.fastlloyd.flaws import SHARED_SEED
from dpkmeans.papers.fastlloyd.variants import as_published
from dpkmeans.privacy.gaussian import gaussian_sigma_analytic
from dpkmeans.privacy.tight import gdp_mu_of

BOX = (-np.ones(3), np.ones(3))


def _config(noise: str = "gaussian", **kwargs) -> DPLloydConfig:
    extra = {"delta": 1e-7} if noise == "gaussian" else {}
    return DPLloydConfig(4, BOX, [0.5, 0.5], noise=noise, assign=RadiusAssignment(),
                         step=RelativeRelease(), **extra, **kwargs)


def _mixture(n: int = 600, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.array([[-0.5, -0.5, -0.5], [0.5, 0.5, 0.5], [0.5, -0.5, 0.0]])
    return np.clip(centres[rng.integers(0, 3, n)] + rng.normal(0, 0.15, (n, 3)), -1, 1)


def test_the_radius_is_public_half_the_diagonal_then_alpha_diag_over_2_k_root_d():
    config = _config()
    diagonal = 2 * np.sqrt(3)
    assert config.assign.radius(0, config) == pytest.approx(diagonal / 2)
    for t in (1, 2):
        assert config.assign.radius(t, config) == pytest.approx(
            0.8 * diagonal / (2 * 4 ** (1 / 3)))
    wide = replace(config, assign=RadiusAssignment(alpha=100.0))
    assert wide.assign.radius(1, wide) == pytest.approx(diagonal)  # at most the diagonal


def test_radius_statistics_are_the_offsets_of_the_records_within_the_radius():
    X = _mixture()
    C = np.array([[[-0.5, -0.5, -0.5], [0.5, 0.5, 0.5], [0.9, -0.9, 0.9], [0.0, 0.9, -0.9]]])
    r = 0.6
    sums, counts, left_out = radius_statistics(X, C, r)
    dist = np.linalg.norm(X[:, None, :] - C[0][None], axis=2)
    nearest = dist.argmin(axis=1)
    inside = dist.min(axis=1) <= r
    for j in range(4):
        mine = inside & (nearest == j)
        assert counts[0, j] == mine.sum()
        np.testing.assert_allclose(sums[0, j], (X[mine] - C[0, j]).sum(axis=0), atol=1e-12)
    assert left_out[0] == (~inside).sum() > 0


def _released(X: np.ndarray, C: np.ndarray, r: float) -> np.ndarray:
    """The exact (S_j, n_j) of the radius assignment, (1, k, d + 1)."""
    sums, counts, _ = radius_statistics(X, C, r)
    return np.concatenate([sums, counts[..., None]], axis=2)


def _largest_change(config: DPLloydConfig, neighbour_of, norm: int, seed: int) -> float:
    """The largest change of the released (whitened) vector between a dataset and the
    neighbour ``neighbour_of(X, rng)`` gives, over random public centres, in iterations 1
    and 2."""
    rng = np.random.default_rng(seed)
    X = _mixture(200)
    worst = 0.0
    for t in (0, 1):
        white = config.step.whitening(config, t)
        r = config.assign.radius(t, config)
        for _ in range(200):
            C = rng.uniform(-1, 1, (1, 4, 3))
            change = (_released(neighbour_of(X, rng), C, r) - _released(X, C, r)) * white
            worst = max(worst, float(np.linalg.norm(change.reshape(-1), ord=norm)))
    return worst


def _one_more(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.r_[X, rng.uniform(-1, 1, (1, 3))]


def _first_replaced(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    Y = X.copy()
    Y[0] = rng.uniform(-1, 1, 3)
    return Y


@pytest.mark.parametrize("noise, norm", [("gaussian", 2), ("laplace", 1)])
def test_one_record_moves_the_released_vector_by_at_most_its_sensitivity(noise, norm):
    """Add/remove: a record changes one cluster's whitened (S_j / r_t w, n_j w') by at most 1
    in the noise's norm, or nothing when it lies beyond the radius."""
    config = _config(noise)
    (spec,) = config.step.specs(config, 0.5)
    assert spec.sensitivity == 1.0
    assert 0.5 < _largest_change(config, _one_more, norm, seed=1) <= 1.0 + 1e-12


def test_the_update_moves_at_most_the_radius_and_folds_into_the_box():
    config = _config()
    previous = np.array([[[0.9, 0.9, 0.9], [0.0, 0.0, 0.0], [-0.5, 0.2, 0.1], [0, 0, 0]]])
    noisy = np.zeros((1, 4, 4))
    noisy[0, 0] = [30.0, 30.0, 30.0, 10.0]  # a mean offset of 3 per coordinate
    noisy[0, 1] = [0.1, 0.0, 0.0, 1.0]
    noisy[0, 2] = [5.0, 5.0, 5.0, 0.5]  # count below the floor: the centre stays
    noisy[0, 3] = [0.0, 0.0, 0.0, -3.0]
    r = config.assign.radius(1, config)
    out = config.assign.update(noisy, previous, config, 1)
    moved = np.linalg.norm(out - previous, axis=2)
    assert np.all(moved <= r + 1e-12)
    np.testing.assert_allclose(out[0, 1], [0.1, 0.0, 0.0])
    np.testing.assert_array_equal(out[0, 2:], previous[0, 2:])
    assert np.all(out >= -1) and np.all(out <= 1)
    np.testing.assert_allclose(fold_into_box(np.array([1.5, -1.25, 3.5]), BOX),
                               [0.5, -0.75, -0.5])


def test_the_configuration_refuses_a_half_of_fastlloyd():
    with pytest.raises(ValueError, match="needs the relative release"):
        DPLloydConfig(4, BOX, [0.5], assign=RadiusAssignment(), step=JointRelease())
    with pytest.raises(ValueError, match="needs the radius assignment"):
        DPLloydConfig(4, BOX, [0.5], step=RelativeRelease())
    with pytest.raises(ValueError, match="white Gaussian"):
        DPLloydConfig(4, BOX, [0.5], noise="colored", delta=1e-7,
                      assign=RadiusAssignment(), step=RelativeRelease())
    with pytest.raises(ValueError, match="alpha must be finite"):
        RadiusAssignment(alpha=0.0)


def test_the_gaussian_form_is_the_papers_sigma_and_composes_to_its_target():
    """T Gaussian releases of sensitivity 1 at sigma = s sqrt(T) compose to mu = 1 / s, the
    analytic Gaussian's (epsilon, delta); the calibration lands just below the target."""
    config = fastlloyd_config(5, 1.0, BOX, n_records=20_000, delta=1e-6)
    T = config.iterations
    assert T == fastlloyd_iterations(20_000, 5, 3, 1.0, 1e-6)
    mu = gdp_mu_of(plan_releases(config))
    s = gaussian_sigma_analytic(1.0, 1.0, 1e-6)
    assert mu == pytest.approx(1.0 / s, rel=1e-3)
    assert 1.0 - 1e-3 <= tight_epsilon(config, 1e-6) <= 1.0


def test_fastlloyd_gives_the_same_bits_on_every_backend():
    pytest.importorskip("distributed")
    X = _mixture(900)
    config = choice("fastlloyd").build(FitInputs(3, 1.0, BOX, max_iter=5, n_records=900,
                                                 delta=1e-6))
    memory = run(X, config, 7, replicas=3)
    dask = run(X, config, 7, replicas=3, backend="dask")
    np.testing.assert_array_equal(memory.centroids, dask.centroids)


def test_fastlloyd_finds_well_separated_clusters_with_a_large_budget():
    X = _mixture(3000)
    config = choice("fastlloyd").build(FitInputs(3, 1e4, BOX, max_iter=5, n_records=3000,
                                                 delta=1e-6))
    C = run(X, config, 0).centroids[0]
    truth = np.array([[-0.5, -0.5, -0.5], [0.5, 0.5, 0.5], [0.5, -0.5, 0.0]])
    assert np.abs(np.sort(C, axis=0) - np.sort(truth, axis=0)).max() < 0.05


def test_as_in_the_authors_code_the_count_noise_is_a_sum_noise_and_not_private():
    X = _mixture(500)
    inputs = FitInputs(3, 1.0, BOX, max_iter=5, n_records=500, delta=1e-6)
    config = as_published(inputs)
    assert config.flaws == (SHARED_SEED,)
    result = run(X, config, 3, replicas=4, record_history=True)
    assert not result.ledger.is_private
    white = config.step.whitening(config, 0)
    noisy = result.release_history[0][0] * white
    first = config.assign.statistics(*_memory(X, config), result.initial_centroids, 0, config)
    exact = np.concatenate([first[0], first[1][..., None]], axis=2) * white
    noise = noisy - exact
    np.testing.assert_allclose(noise[..., 0, 3], noise[..., 0, 0], atol=1e-9)  # count = sum
    corrected = run(X, choice("fastlloyd").build(inputs), 3, replicas=4, record_history=True)
    fresh = corrected.release_history[0][0] * white - exact
    assert not np.allclose(fresh[..., 0, 3], fresh[..., 0, 0])


def _memory(X: np.ndarray, config: DPLloydConfig):
    backend = get_backend("memory")
    data = backend.prepare(X, config.bounds)[0]
    return backend, data


@pytest.mark.parametrize("noise, norm", [("gaussian", 2), ("laplace", 1)])
def test_under_replace_one_record_moves_the_release_by_at_most_its_joint_sensitivity(noise,
                                                                                      norm):
    """Replace: the record leaves one cluster and joins another (or moves within one); the
    release covers every cluster at once, with sensitivity max(sqrt 2, 2 w_s) (L2) or 2
    (L1)."""
    config = _config(noise, neighbour="replace")
    (spec,) = config.step.specs(config, 0.5)
    assert _largest_change(config, _first_replaced, norm, seed=2) <= spec.sensitivity + 1e-12
    assert spec.sensitivity == (max(np.sqrt(2), 2 * config.step.weights(config)[0])
                                if norm == 2 else 2.0)
