"""Privacy audits at CI size: every correct mechanism is consistent, every broken one is caught.

Fixed seeds make each audit deterministic; the sizes keep each one to about a second.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.strategies import JointRelease, PublicStart
from dpkmeans.papers.di.flaws import EXACT_COUNTS, ExactCounts
from dpkmeans.papers.su.flaws import SKIP_EMPTY_CLUSTERS, SkipEmptyClusters
from dpkmeans.papers.su.variants import dplloyd, dplloyd_impr
from dpkmeans.privacy import mechanisms as m
from dpkmeans.study import audit

pytestmark = pytest.mark.statistical

BOX2 = (-np.ones(2), np.ones(2))
INIT = np.array([[-0.5, -0.5], [0.5, 0.5]])


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_laplace_is_consistent_and_half_scale_is_caught(eps):
    ok = audit.audit_mechanism("Laplace", audit.laplace_count_release(eps), eps, trials=100_000,
                               seed=1)
    bad = audit.audit_mechanism("half scale", audit.laplace_count_release(eps, noise_factor=0.5),
                                eps, trials=100_000, seed=1)
    assert ok.verdict == "consistent" and ok.lower_bound > 0.8 * eps  # tight, not vacuous
    assert bad.verdict == "violation detected" and bad.lower_bound > 1.5 * eps


@pytest.mark.parametrize("sampler, calibration, eps", [
    ("discrete", None, 1.0), ("continuous", "analytic", 1.0), ("continuous", "classic", 0.5)])
def test_gaussian_is_consistent_at_its_delta(sampler, calibration, eps):
    delta = 1e-3

    def release(which, n, rng):
        return m.gaussian_mechanism(float(which), 1.0, eps, delta, rng, ledger=None,
                                    calibration=calibration, repeats=n, sampler=sampler)

    report = audit.audit_mechanism("Gaussian", release, eps, delta=delta, trials=200_000, seed=2)
    assert report.verdict == "consistent"


def test_gaussian_with_too_little_noise_is_caught():
    eps, delta = 1.0, 1e-3
    sigma = m.gaussian_sigma_analytic(1.0, eps, delta)

    def release(which, n, rng):
        return which + rng.normal(0.0, 0.3 * sigma, n)

    report = audit.audit_mechanism("Gaussian / 3", release, eps, delta=delta, trials=200_000,
                                   seed=2)
    assert report.verdict == "violation detected"


def test_exponential_mechanism_is_consistent():
    base = np.array([1.0, 0.0, 2.0])

    def release(which, n, rng):
        u = base if which == 0 else base + np.array([1.0, -1.0, 0.0])
        return m.exponential_mechanism(u, 1.0, 1.0, rng, ledger=None, repeats=n)

    assert audit.audit_mechanism("exponential", release, 1.0, trials=200_000,
                                 seed=3).verdict == "consistent"


def fixed_init(bounds, k, rng):
    return INIT.copy()


def moved_second_centroid(result):
    return np.linalg.norm(result.centroids[:, 1] - result.initial_centroids[:, 1], axis=1)


@pytest.fixture
def empty_pair():
    X = np.clip(np.random.default_rng(0).normal(-0.5, 0.05, (20, 2)), -1, 1)
    return audit.empty_cluster_pair(X, [0.6, 0.6])


@pytest.mark.parametrize("flaws, verdict", [((), "consistent"),
                                            ((SKIP_EMPTY_CLUSTERS,), "violation detected")])
def test_skipping_noise_on_empty_clusters_is_caught(empty_pair, flaws, verdict):
    config = DPLloydConfig(n_clusters=2, bounds=BOX2, schedule=schedules.uniform(0.5, 3),
                           start=PublicStart(fixed_init), flaws=flaws,
                           step=SkipEmptyClusters() if flaws else JointRelease())
    report = audit.audit_configuration("DPLloyd", config, *empty_pair, moved_second_centroid,
                                       trials=20_000, seed=4)
    assert report.verdict == verdict


@pytest.mark.parametrize("flaws, verdict", [((), "consistent"),
                                            ((EXACT_COUNTS,), "violation detected")])
def test_exact_counts_are_caught(flaws, verdict):
    config = DPLloydConfig(n_clusters=1, bounds=(-np.ones(3), np.ones(3)), schedule=[1.0],
                           start=PublicStart(lambda b, k, g: np.zeros((1, 3))), flaws=flaws,
                           step=ExactCounts() if flaws else JointRelease())
    X0, X1 = np.zeros((1, 3)), np.zeros((2, 3))  # one record vs two: count 1 vs 2

    def largest_coordinate(result):
        return np.abs(result.centroids[:, 0]).max(axis=1)

    report = audit.audit_configuration("exact counts", config, X0, X1, largest_coordinate,
                                       trials=20_000, seed=5)
    assert report.verdict == verdict


@pytest.mark.parametrize("make", ["dplloyd", "dplloyd-impr"])
def test_baselines_are_consistent_on_a_corner_pair(make):
    X = np.random.default_rng(6).uniform(-0.3, 0.3, size=(30, 2))
    config = (dplloyd(2, 1.0, BOX2, iterations=2) if make == "dplloyd"
              else dplloyd_impr(2, 1.0, BOX2, n_records=30))
    X0, X1 = audit.corner_pair(X, BOX2)

    def family(result):  # every centroid coordinate, a family of statistics
        return result.centroids.reshape(len(result.centroids), -1)

    report = audit.audit_configuration(make, config, X0, X1, family, trials=10_000, seed=7)
    assert report.verdict == "consistent"


def test_report_fields_and_input_errors():
    report = audit.audit_samples("x", np.arange(100.0), np.arange(100.0) + 0.5, 1.0, seed=0)
    assert report.trials == 100 and 0.0 <= report.lower_bound and report.confidence == 0.99
    assert set(report.as_row()) >= {"name", "claimed_epsilon", "lower_bound", "verdict"}
    with pytest.raises(ValueError, match="samples0"):
        audit.audit_samples("x", [1.0, 2.0], np.arange(10.0), 1.0)
    with pytest.raises(ValueError, match="confidence"):
        audit.epsilon_lower_bound(np.arange(10.0), np.arange(10.0), confidence=0.2,
                                  rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="corner"):
        audit.corner_pair(np.zeros((2, 2)), BOX2, corner=[0.0, 1.0])
    _, replaced = audit.replace_pair(np.zeros((2, 2)) + 0.2, BOX2)
    assert replaced[0].tolist() == [-1.0, -1.0]


def test_exact_loss_distribution_and_trials_to_expose():
    from dpkmeans.privacy.loss import laplace_loss_tails

    tau, tail_d, tail_d_prime = laplace_loss_tails([1.0, 1.0], 0.02)
    assert tail_d[0] == pytest.approx(1.0) and tail_d_prime[0] == pytest.approx(1.0)
    assert tau.max() == pytest.approx(2.0)
    # the largest loss is attained: the top grid cell (both atoms plus half a step of density)
    # is e^2 times likelier under D, up to the grid's rounding of that half step
    assert tail_d[-1] / tail_d_prime[-1] == pytest.approx(np.exp(2.0), rel=1e-3)
    plan = audit.trials_to_expose(tail_d, tail_d_prime, 1.5, 0.99)
    assert plan is not None and 1e2 < plan["n"] < 1e7
    assert audit.trials_to_expose(tail_d, tail_d_prime, 2.5, 0.99) is None  # cannot exceed 2


def test_laplace_outputs_are_possible_under_their_own_value():
    from dpkmeans.privacy.floating_point import laplace_output_possible

    y = m.laplace_mechanism(0.0, 1.0, 1.0, np.random.default_rng(8), ledger=None, repeats=200,
                            sampler="continuous")
    assert laplace_output_possible(y, 0.0, 1.0).all()
    assert not laplace_output_possible(y, 1.0, 1.0).all()  # Mironov: some are impossible
