"""Colored noise (Ravi, Scaglione and Peisert 2021) in the engine (book chapter 9): colored noise
on each iteration's (S_j, n_j), the as-published one-shot output release, and the flaws the
ledger records."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.engine import loop as engine
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import iteration_releases, plan_ledger
from dpkmeans.engine.schedules import uniform
from dpkmeans.engine.strategies import PublishAsIs, SuSplit
from dpkmeans.papers.colored import variants
from dpkmeans.privacy import colored
from dpkmeans.privacy.accounting import PrivacyLedger

BOX = (np.array([0.0, 0.0, -2.0]), np.array([1.0, 4.0, 2.0]))  # half-widths 0.5, 2, 2


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    gen = np.random.default_rng(3)
    centres = np.array([[0.2, 1.0, -1.0], [0.8, 3.0, 1.0], [0.5, 2.0, 0.0]])
    return np.clip(centres[gen.integers(0, 3, 400)] + gen.normal(0, 0.1, (400, 3)), *BOX)


def test_colored_noise_has_the_box_optimum_s_shape():
    """Zero statistics, continuous noise: the per-coordinate variances are proportional to
    (r_1, .., r_d, 1), as :func:`dpkmeans.privacy.colored.box_covariance`."""
    config = DPLloydConfig(2, BOX, uniform(1.0, 1), noise="colored", delta=1e-5,
                           sampler="continuous")
    releases = iteration_releases(config, 1.0)
    R = 40000
    gen = np.random.default_rng(0)
    unit = gen.standard_normal((R, 2, 4))
    noisy = engine.noisy_iteration(np.zeros((R, 2, 4)), releases, config, [gen], unit,
                                    PrivacyLedger())
    var = noisy.reshape(-1, 4).var(axis=0)
    shape = np.diag(colored.box_covariance(BOX, 1.0))
    assert var / var[-1] == pytest.approx(shape / shape[-1], rel=0.03)
    # the whitened sensitivity is sqrt(sum r + 1), the (eps, delta) of the iteration
    assert releases[0].calibration.sensitivity == pytest.approx(np.sqrt(0.5 + 2 + 2 + 1))


def test_colored_beats_white_in_total_variance_on_an_uneven_box():
    """Same (eps, delta): colored total variance (sum r + 1)^2 vs white (d + 1)(sum r^2 + 1),
    through the calibrations the engine records."""
    col = DPLloydConfig(2, BOX, uniform(1.0, 1), noise="colored", delta=1e-5,
                        sampler="continuous")
    wht = DPLloydConfig(2, BOX, uniform(1.0, 1), noise="gaussian", delta=1e-5,
                        sampler="continuous")
    sc, sw = (iteration_releases(c, 1.0)[0].calibration.scale for c in (col, wht))
    r = np.array([0.5, 2.0, 2.0, 1.0])
    colored_total = sc**2 * r.sum()  # per coordinate sc^2 r_i
    white_total = sw**2 * 4
    assert colored_total / white_total == pytest.approx(r.sum() ** 2 / (4 * (r**2).sum()), rel=1e-9)
    assert colored_total < white_total


def test_colored_and_white_runs_are_private_at_the_same_budget(X):
    for make in (variants.corrected, variants.white):
        result = engine.run(X, make(3, 1.0, 1e-5, BOX, iterations=4), 7, replicas=3)
        assert result.ledger.is_private
        total = result.ledger.total()
        assert total.epsilon == pytest.approx(1.0) and total.delta == pytest.approx(1e-5)
        again = engine.run(X, make(3, 1.0, 1e-5, BOX, iterations=4), 7, replicas=3)
        assert np.array_equal(result.centroids, again.centroids)


@pytest.mark.parametrize("kw, words", [({"centred": False}, "centred"),
                                        ({"neighbour": "replace"}, "add/remove"),
                                        ({"step": SuSplit()}, "su")])
def test_colored_noise_needs_the_centred_joint_add_remove_query(kw, words):
    with pytest.raises(ValueError, match=words):
        DPLloydConfig(2, BOX, uniform(1.0, 2), noise="colored", delta=1e-5, **kw)


def test_as_published_is_not_private_and_its_check_is_computed(X):
    config = variants.as_published(3, 1.0, 1e-5, BOX)
    result = engine.run(X, config, 1, replicas=2)
    ledger = result.ledger
    assert not ledger.is_private
    leaks = " ".join(e.label for e in ledger.entries if e.mechanism.startswith("LEAK"))
    for words in ("without noise", "k-means++", "leave-one-out", "float64"):
        assert words in leaks, words
    (release,) = [e for e in ledger.entries if e.mechanism.startswith("colored Gaussian")]
    assert release.epsilon == pytest.approx(1.0 * 3 * 3)  # eps K d: what gamma_c buys
    own = release.details["own constraints violated"]
    assert float(own.split("%")[0]) > 50  # the closed form misses most of its own constraints
    assert np.all(result.spent == pytest.approx(9.0))
    # the loop ran exactly (no noise) to convergence; the release moved the centroids
    assert np.all(result.iterations_run < variants.MAX_ITER)
    again = engine.run(X, config, 1, replicas=2)
    assert np.array_equal(result.centroids, again.centroids)


def test_the_exact_loop_is_lloyd_from_its_initial_centres(X):
    """With the output release removed, the as-published loop is plain Lloyd."""
    from dataclasses import replace

    from sklearn.cluster import KMeans

    config = replace(variants.as_published(3, 1.0, 1e-5, BOX), output=PublishAsIs())
    result = engine.run(X, config, 2)
    km = KMeans(3, init=result.initial_centroids[0], n_init=1, tol=0, max_iter=300).fit(X)
    assert np.allclose(np.sort(result.centroids[0], axis=0), np.sort(km.cluster_centers_, axis=0),
                       atol=1e-9)


def test_a_configuration_with_an_output_release_cannot_be_planned():
    with pytest.raises(ValueError, match="output release"):
        plan_ledger(variants.as_published(3, 1.0, 1e-5, BOX))


def test_bad_parameters_are_named():
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        variants.as_published(3, -1.0, 1e-5, BOX)
    with pytest.raises((ValueError, TypeError), match="delta"):
        variants.corrected(3, 1.0, 2.0, BOX)
    with pytest.raises((ValueError, TypeError), match="iterations"):
        variants.white(3, 1.0, 1e-5, BOX, iterations=0)
