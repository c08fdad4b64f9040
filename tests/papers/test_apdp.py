"""APDPk-means' library parts (book chapter 10): the reversed arithmetic progression and its
branches, the study notes' algorithm as published and corrected, the engine's partition stop
and SSE history, and the planned centroid noise of a schedule."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.compute import metrics
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.apdp import variants
from dpkmeans.papers.apdp.flaws import (
    PARTITION_STOP,
    PRIVATE_EPSILON_M,
    RECORD_INITIALISATION,
    PartitionRepeats,
)
from dpkmeans.papers.apdp.noise_profile import centroid_noise_sd
from dpkmeans.papers.apdp.variants import RecordInitialRelease, as_published, corrected


@pytest.fixture(scope="module")
def mixture() -> np.ndarray:
    raw = gaussian_mixture_dataset(600, 3, 2, rng=np.random.default_rng(11), separation=6.0)
    return np.asarray(raw.scaled((0.0, 1.0)).X)


def _box(d: int):
    return np.zeros(d), np.ones(d)


# --- the schedule -----------------------------------------------------------------------------

def test_the_note_s_example_and_the_exact_sum():
    ap = schedules.arithmetic_progression(2.0, 10, 0.1)
    np.testing.assert_allclose(ap[[0, 1, -1]], [0.3, 0.3 - 0.2 / 9, 0.1], rtol=1e-12)
    assert ap.sum() == pytest.approx(2.0, abs=1e-15) and np.all(np.diff(ap) < 0)
    for eps, n, m in [(5.0, 7, 0.3), (1.0, 3, 1 / 3), (0.7, 1, 0.5)]:
        terms = schedules.arithmetic_progression(eps, n, m)
        assert terms.size == n and terms.sum() == pytest.approx(eps, rel=1e-14)
        assert terms[-1] == pytest.approx(eps if n == 1 else m, rel=1e-12)
        assert np.allclose(np.diff(np.diff(terms)), 0.0, atol=1e-15)  # equal steps


def test_the_progression_refuses_terms_below_the_minimum():
    with pytest.raises(ValueError, match="iterations \\* epsilon_m"):
        schedules.arithmetic_progression(0.5, 10, 0.1)
    with pytest.raises(ValueError, match="epsilon_m"):
        schedules.arithmetic_progression(1.0, 3, -0.1)


@pytest.mark.parametrize(("eps", "published", "fixed", "T"), [
    (2.0, "ap", "ap", 10),           # eps / eps_m = 20 > t_m: both run the progression
    (0.65, "fallback", "su-ap", 6),  # 6.5: published eps / t_m; corrected T = 6, AP
    (0.25, "fallback", "su-uniform", 2),  # 2.5: T = 2, equal shares
    (0.01, "fallback", "su-uniform", 2),  # below 2 eps_m: still T = 2 (Su's floor)
    (0.85, "fallback", "su-ap", 7),  # 8.5: Su caps T at 7
])
def test_branches(eps, published, fixed, T):
    as_pub = schedules.apdp_plan(eps, 10, 0.1, corrected=False)
    corr = schedules.apdp_plan(eps, 10, 0.1, corrected=True)
    assert as_pub.branch == published and corr.branch == fixed and corr.iterations == T
    assert as_pub.schedule.sum() == pytest.approx(eps) == corr.schedule.sum()
    if published == "fallback":
        assert np.all(as_pub.schedule == eps / 10) and as_pub.schedule[0] < 0.1  # below eps_m
    if fixed == "su-ap":
        assert corr.schedule[-1] == pytest.approx(0.1) and np.all(corr.schedule >= 0.1 - 1e-15)
    assert {as_pub.branch, corr.branch} <= set(schedules.APDP_BRANCHES)


def test_the_published_ratio_grows_with_epsilon_but_the_corrected_one_saws():
    def ratio(eps, corrected):
        s = schedules.apdp_plan(eps, 10, 0.1, corrected=corrected).schedule
        return s[0] / s[-1]
    published = [ratio(e, False) for e in (1.01, 1.5, 2.0, 5.0)]
    assert np.all(np.diff(published) > 0)
    assert ratio(0.39, True) > ratio(0.40, True) == pytest.approx(1.0)  # T: 3 -> 4, flat again


# --- the configurations -------------------------------------------------------------------------

def test_corrected_is_private_and_spends_exactly_epsilon(mixture):
    config = corrected(3, 1.0, _box(2), n_records=600)
    assert isinstance(config.start, PublicStart) and not config.start.charged
    result = run(mixture, config, 5, replicas=4)
    assert result.ledger.is_private and np.allclose(result.spent, 1.0)
    assert plan_ledger(config).total().epsilon == pytest.approx(1.0)
    for name in variants.SCHEDULE_NAMES:
        other = corrected(3, 1.0, _box(2), n_records=600, schedule=name)
        assert other.iterations == config.iterations and other.schedule.sum() == pytest.approx(1.0)


def test_as_published_records_its_leaks_and_its_overspend(mixture):
    config = as_published(3, 2.0, _box(2), n_records=600)
    assert {"partition-stop", "record-initialisation", "record-order-split", "private-epsilon-m",
            "data-derived-bounds"} <= {f.name for f in config.flaws}
    result = run(mixture, config, 5, replicas=6)
    assert not result.ledger.is_private
    eps0 = 2.0 / variants.MAX_ITERATIONS  # the initial records' charged budget
    assert result.spent.max() == pytest.approx(2.0 + eps0) or result.spent.max() < 2.0 + eps0
    assert result.spent.min() >= eps0 and np.all(result.iterations_run <= config.iterations)
    uniform = as_published(3, 2.0, _box(2), n_records=600, schedule="uniform")
    assert PRIVATE_EPSILON_M not in uniform.flaws  # only the AP reads eps_m
    open_ended = as_published(3, 2.0, _box(2), n_records=600, schedule="dichotomy")
    assert open_ended.schedule.sum() == pytest.approx(2.0 * (1 - 2.0**-10))  # as written


def test_unknown_schedule_names_the_choices():
    with pytest.raises(ValueError, match="schedule must be one of"):
        corrected(3, 1.0, _box(2), n_records=600, schedule="geometric")


def test_record_initialisation_picks_one_record_per_split(mixture):
    """With a huge eps_0 the noise is negligible: each start is a record of its own split."""
    config = DPLloydConfig(3, _box(2), [1.0], start=RecordInitialRelease(1e9),
                           flaws=(RECORD_INITIALISATION,), budget=1.0, sampler="continuous")
    result = run(mixture, config, 9, replicas=5)
    N = mixture.shape[0]
    for r in range(5):
        for j, start in enumerate(result.initial_centroids[r]):
            distance = np.abs(mixture - start).sum(axis=1)
            row = int(np.argmin(distance))
            assert distance[row] < 1e-6 and row * 3 // N == j


def test_record_initialisation_needs_k_records():
    config = DPLloydConfig(3, _box(2), [1.0], start=RecordInitialRelease(1.0),
                           flaws=(RECORD_INITIALISATION,), budget=1.0)
    with pytest.raises(ValueError, match="at least k = 3 records"):
        run(np.full((2, 2), 0.5), config, 1)


# --- the engine: partition stop and SSE history --------------------------------------------------

def test_sse_history_is_the_exact_sse_of_each_iteration_s_centroids(mixture):
    config = corrected(3, 5.0, _box(2), n_records=600, schedule="uniform")
    result = run(mixture, config, 2, replicas=3, record_history=True)
    entering = [result.initial_centroids, *result.history[:-1]]
    expected = np.column_stack([metrics.sse(mixture, c) for c in entering])
    np.testing.assert_allclose(result.sse_history, expected, rtol=1e-9)
    plain = run(mixture, config, 2, replicas=3)
    assert plain.sse_history is None
    np.testing.assert_array_equal(plain.centroids, result.centroids)  # history is analysis only


def test_partition_stop_ends_a_run_whose_partition_repeats(mixture):
    """Noise-free (huge budget) Lloyd converges, and the run stops when the partition repeats;
    the stop is a recorded leak and the stopped replicas spend less."""
    config = DPLloydConfig(3, _box(2), np.full(30, 1e9), flaws=(PARTITION_STOP,),
                           stop=PartitionRepeats(), budget=30e9, sampler="continuous")
    result = run(mixture, config, 4, replicas=4, record_history=True)
    assert np.all(result.iterations_run < 30) and not result.ledger.is_private
    assert np.all(result.spent < 30e9)
    # the SSE of a stopped replica stays at its last value
    last = result.sse_history[np.arange(4), result.iterations_run]
    np.testing.assert_allclose(result.sse_history[:, -1], last, rtol=1e-12)


# --- planned noise ---------------------------------------------------------------------------------

def test_noise_profile_follows_one_over_epsilon_t():
    config = corrected(3, 2.0, _box(4), n_records=10_000, schedule="dichotomy")
    sd = centroid_noise_sd(config, 1000.0)
    np.testing.assert_allclose(sd * config.schedule, sd[0] * config.schedule[0], rtol=0.02)
    # Laplace b = (d / 2 + 1) / eps_t on the centred release; sd sqrt(2) b / n
    b = (4 / 2 + 1) / config.schedule[0]
    assert sd[0] == pytest.approx(np.sqrt(2) * b / 1000.0, rel=0.02)
    assert np.all(centroid_noise_sd(config, 1000.0, offset=0.3) > sd)
    assert np.allclose(centroid_noise_sd(config, 1000.0, weight=0.5), 2 * sd, rtol=0.02)
    with pytest.raises(ValueError, match="cluster_size"):
        centroid_noise_sd(config, 0.0)
    with pytest.raises(ValueError, match="weight"):
        centroid_noise_sd(config, 10.0, weight=1.5)
