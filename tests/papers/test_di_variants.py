"""The DI k-means and DI k-prototypes of Shang, Zhao, Ren and Liu (2021), as published and
corrected (book chapter 11): the printed rho_i rule, the claimed epsilon, the DI <-> DP
identity, the true spend of the published variants, exact counts, and the Dask backend's bits."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpkmeans.compute.lloyd import batched_stats
from dpkmeans.engine import loop as engine
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.engine.prototypes import MixedLayout, encode
from dpkmeans.engine.strategies import RunWholeSchedule
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.variants import (
    claimed_epsilon,
    kmeans_as_published,
    kmeans_corrected,
    kprototypes_as_published,
    kprototypes_corrected,
    printed_rule,
)
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.identifiability import epsilon_from_rho
from dpkmeans.privacy.sensitivity import sum_sensitivity

M = variants.M_NUMERIC  # 10001
EPS_005 = epsilon_from_rho(0.05, M)  # 6.2659...


def box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(d), np.ones(d)


def blobs(n: int = 600, d: int = 3, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centres = gen.uniform(0.2, 0.8, (3, d))
    return np.clip(centres[gen.integers(0, 3, n)] + gen.normal(0, 0.05, (n, d)), 0.0, 1.0)


def mixed(n: int = 600, seed: int = 0) -> tuple[MixedLayout, np.ndarray]:
    layout = MixedLayout((2, 3, 2), 3, variants.GAMMA)
    gen = np.random.default_rng(seed)
    X = blobs(n, 3, seed)
    C = np.column_stack([gen.integers(0, k, n) for k in layout.n_levels])
    return layout, encode(X, C, layout)


def draws(ledger) -> list:
    return [e for e in ledger.entries if e.epsilon > 0]


# --- the printed rule (audit 4-1) -------------------------------------------------------------

def test_printed_rule_at_rho_005_m_10001():
    rule = printed_rule(0.05, M, 10)
    # capped: rho_1 = rho spends everything, then rho_i = rho / (m rho) = 1/m: infinite noise
    assert rule.capped[0] == 0.05
    assert np.all(rule.capped[1:] == 1.0 / M)
    assert rule.capped_epsilon[0] == pytest.approx(EPS_005, rel=1e-14)
    assert np.all(rule.capped_epsilon[1:] == 0.0)
    # literal: rho_1 = eps / 2 is a log-odds (> 1): no probability, no noise scale
    assert rule.literal[0] == pytest.approx(EPS_005 / 2, rel=1e-14)
    assert rule.literal[0] == pytest.approx(3.13295, abs=1e-5) and rule.literal[0] > 1
    assert math.isnan(rule.literal_epsilon[0])
    # and rho_2 = rho / (m rho_1) falls below the prior 1/m: a negative epsilon
    assert rule.literal[1] == pytest.approx(0.05 / (M * EPS_005 / 2), rel=1e-12)
    assert 0 < rule.literal[1] < 1.0 / M
    assert rule.literal_epsilon[1] < 0


def test_printed_rule_at_rho_07_m_2_is_below_the_prior_everywhere():
    rule = printed_rule(0.7, 2, 10)
    eps = epsilon_from_rho(0.7, 2)
    assert rule.literal[0] == pytest.approx(eps / 2, rel=1e-14)
    for rhos, epsilons in ((rule.literal, rule.literal_epsilon),
                           (rule.capped, rule.capped_epsilon)):
        assert np.all(rhos < 0.5) and np.all(rhos > 0)
        assert np.all(epsilons < 0)
    with pytest.raises(ValueError, match="no iteration with finite noise"):
        kmeans_as_published(box(2), rho=0.7, m=2, reading="printed")


def test_printed_rule_validation():
    with pytest.raises(ValueError, match="rho must lie in"):
        printed_rule(1e-5, M, 3)  # below the prior 1/m
    with pytest.raises(ValueError, match="reading"):
        kmeans_as_published(box(2), rho=0.05, reading="literal")


def test_claimed_epsilon_is_the_parallel_max_not_the_sequential_sum():
    c = claimed_epsilon(0.05, 0.7)
    assert c["epsilon_numeric"] == pytest.approx(6.2659, abs=1e-4)
    assert c["epsilon_categorical"] == pytest.approx(0.8473, abs=1e-4)
    assert round(c["claimed (parallel, max)"], 3) == 6.266
    assert round(c["sequential (sum)"], 3) == 7.113
    # the audit's "6.26" (the paper) against "7.11" (sequential composition)
    assert math.floor(100 * c["claimed (parallel, max)"]) / 100 == 6.26
    assert math.floor(100 * c["sequential (sum)"]) / 100 == 7.11


# --- DI k-means corrected: the DI <-> DP identity ---------------------------------------------

def _same_config(a, b) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "bounds":
            assert all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))
        elif isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def test_corrected_at_rho_is_dp_at_epsilon_from_rho():
    d = 3
    at_rho = kmeans_corrected(box(d), rho=0.05, n_clusters=3)
    at_eps = kmeans_corrected(box(d), epsilon=EPS_005, n_clusters=3)
    _same_config(at_rho, at_eps)
    assert at_rho.schedule.sum() == pytest.approx(EPS_005, rel=1e-12)
    X = blobs(600, d)
    a = run(X, at_rho, 2026, replicas=3)
    b = run(X, at_eps, 2026, replicas=3)
    assert np.array_equal(a.centroids, b.centroids)
    assert np.array_equal(a.noisy_counts, b.noisy_counts)
    for result in (a, b):
        ledger = result.ledger
        assert ledger.neighbour == "replace" and ledger.is_private
        assert abs(ledger.total().epsilon - EPS_005) <= 1e-12
        laplace = draws(ledger)
        assert len(laplace) == at_rho.iterations
        # the joint replace sensitivity of the centred (S_j - n_j m, n_j)_j on [0, 1]^d:
        # 2 (d / 2 + 1) = d + 2 (measured from the origin it would be 2 (d + 1))
        assert all(e.sensitivity == d + 2 for e in laplace)
        assert all(e.mechanism.startswith("Laplace") for e in laplace)
    assert abs(plan_ledger(at_rho).total().epsilon - EPS_005) <= 1e-12


def test_corrected_validation():
    with pytest.raises(ValueError, match="exactly one"):
        kmeans_corrected(box(2), rho=0.05, epsilon=1.0)
    with pytest.raises(ValueError, match="exactly one"):
        kmeans_corrected(box(2))


@pytest.mark.parametrize("variant", ["kmeans", "kprototypes"])
def test_corrected_run_that_stops_early_returns(variant):
    gen = np.random.default_rng(0)
    X = np.clip(gen.normal(0.5, 0.05, (2000, 2)), 0.0, 1.0)
    if variant == "kmeans":
        config = kmeans_corrected(box(2), epsilon=1000.0, n_clusters=1)
    else:
        layout = MixedLayout((2,), 2, variants.GAMMA)
        X = encode(X, np.zeros((2000, 1), dtype=int), layout)
        config = kprototypes_corrected(layout, box(2), epsilon=1000.0, n_clusters=1)
    result = run(X, config, 1, replicas=2)
    assert np.all(result.iterations_run < config.iterations)
    assert result.ledger.is_private and result.ledger.total().epsilon < 1000.0
    np.testing.assert_allclose(result.spent, result.ledger.total().epsilon, rtol=1e-12)


# --- DI k-means as published -------------------------------------------------------------------

def test_as_published_intended_overspends_twice_the_schedule():
    d = 3
    config = kmeans_as_published(box(d), rho=0.05, n_clusters=3)
    assert np.allclose(config.schedule, EPS_005 / 2.0 ** np.arange(1, 11), rtol=1e-14)
    assert {"exact-counts", "replace-sensitivity-d"} <= {f.name for f in config.flaws}
    result = run(blobs(600, d), config, 3, replicas=3)
    ledger = result.ledger
    assert not ledger.is_private and ledger.neighbour == "replace"
    n = int(result.iterations_run.max())
    assert ledger.total().epsilon == pytest.approx(2 * config.schedule[:n].sum(), rel=1e-12)
    np.testing.assert_allclose(
        result.spent, [2 * config.schedule[:i].sum() for i in result.iterations_run], rtol=1e-12)
    for t, e in enumerate(draws(ledger)):
        # noise calibrated to the paper's Delta f = d at eps_t: the true cost at 2d is 2 eps_t
        assert e.sensitivity == 2 * d
        assert e.epsilon == pytest.approx(2 * config.schedule[t], rel=1e-14)
        assert e.details["noise steps"] > 0
    # without the stop, every iteration runs and the total is twice the scheduled sum
    full = run(blobs(600, d), dataclasses.replace(config, stop=RunWholeSchedule()), 3,
               replicas=3)
    assert np.all(full.iterations_run == config.iterations)
    assert full.ledger.total().epsilon == pytest.approx(2 * config.schedule.sum(), rel=1e-12)


def test_as_published_printed_runs_one_iteration():
    config = kmeans_as_published(box(3), rho=0.05, n_clusters=3, reading="printed")
    assert config.schedule.size == 1
    assert config.schedule[0] == pytest.approx(EPS_005, rel=1e-14)
    result = run(blobs(600, 3), config, 4, replicas=3)
    assert np.all(result.iterations_run == 1)
    assert not result.ledger.is_private
    assert result.ledger.total().epsilon == pytest.approx(2 * EPS_005, rel=1e-12)
    assert any("Optimized Canopy" in e.label for e in result.ledger.entries)


def test_exact_counts_divide_the_noisy_sums():
    """k = 1 on five records from a fixed centre: the released count is exactly 5 and the
    centroid is (sum + Y) / 5, clipped, with Y the sums' only noise (scale d / eps_1)."""
    d, R, seed = 2, 3, 7
    X = np.array([[0.1, 0.2], [0.4, 0.9], [0.5, 0.5], [0.8, 0.3], [0.6, 0.7]])
    config = kmeans_as_published(box(d), rho=0.05, n_clusters=1, reading="printed",
                                 data_derived_bounds=False)
    initial = np.full((R, 1, d), 0.5)
    result = run(X, config, seed, replicas=R, initial_centroids=initial)
    assert np.array_equal(result.noisy_counts, np.full((R, 1), 5.0))
    eps_1 = float(config.schedule[0])
    (release,) = engine.iteration_releases(config, eps_1)
    assert release.columns == slice(0, d)  # the sums only: the count is not released noisily
    assert release.calibration.sensitivity == 2 * d
    assert release.calibration.epsilon == pytest.approx(2 * eps_1, rel=1e-14)
    assert release.calibration.nominal_scale == pytest.approx(d / eps_1, rel=1e-12)
    # replay the noise from the replicas' generators
    rngs = [np.random.default_rng(c) for c in np.random.SeedSequence(seed).spawn(R)]
    sums, counts = batched_stats(X, initial)
    assert np.array_equal(counts, np.full((R, 1), 5.0))
    stats = np.concatenate([sums, counts[..., None]], axis=2)
    noisy = engine.noisy_iteration(stats, [release], config, rngs, None,
                                    PrivacyLedger(neighbour="replace"))
    assert np.array_equal(noisy[..., -1], counts)
    assert not np.array_equal(noisy[..., :-1], sums)  # the sums got noise
    expected = np.clip(noisy[..., :-1] / 5.0, 0.0, 1.0)
    assert np.array_equal(result.centroids, expected)
    # the corrected variant releases noisy counts
    corrected = run(X, kmeans_corrected(box(d), rho=0.05, n_clusters=1, iterations=1), seed,
                    replicas=R, initial_centroids=initial)
    assert not np.array_equal(corrected.noisy_counts, result.noisy_counts)


@pytest.mark.parametrize("d", [1, 2, 6, 10])
def test_sum_sensitivity_on_the_unit_box(d):
    b = box(d)
    assert sum_sensitivity(b, "add/remove") == d
    assert sum_sensitivity(b, "replace") == 2 * d
    # centred at the midpoint: every |x_i - 1/2| <= 1/2
    assert sum_sensitivity(b, "add/remove", centred=True) == d / 2
    assert sum_sensitivity(b, "replace", centred=True) == d
    with pytest.raises(ValueError, match="neighbour"):
        sum_sensitivity(b, "swap")


# --- DI k-prototypes ---------------------------------------------------------------------------

def test_kprototypes_as_published_true_cost():
    layout, Z = mixed(600)
    config = kprototypes_as_published(layout, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3,
                                      data_derived_bounds=False)
    assert "categorical-full-budget" in {f.name for f in config.flaws}
    d_c = layout.n_categorical
    numeric, categorical = config.schedule, config.modes.schedule
    eps_c = epsilon_from_rho(0.7, 2)
    assert numeric.sum() == pytest.approx(EPS_005 * (1 - 2.0**-10), rel=1e-12)
    assert categorical.sum() == pytest.approx(eps_c * (1 - 2.0**-10), rel=1e-12)
    for cfg in (config, dataclasses.replace(config, stop=RunWholeSchedule())):
        result = run(Z, cfg, 9, replicas=3)
        n = int(result.iterations_run.max())
        assert not result.ledger.is_private
        true = 2 * numeric[:n].sum() + 2 * d_c * categorical[:n].sum()
        assert result.ledger.total().epsilon == pytest.approx(true, rel=1e-12)
    assert n == config.iterations  # the run without a stop spends the whole schedule
    exponential = [e for e in result.ledger.entries if e.mechanism == "exponential"]
    assert len(exponential) == d_c * config.iterations
    # each cluster's draw gets the iteration's whole categorical budget (the flaw)
    assert exponential[0].details["epsilon per cluster draw"] == pytest.approx(categorical[0])
    assert exponential[0].epsilon == pytest.approx(2 * categorical[0], rel=1e-14)


def test_kprototypes_as_published_records_gamma_chosen_on_the_classes():
    """The paper's gamma was picked by the F-measure against the evaluation data's classes:
    the as-published ledger records that leak; the corrected method, which takes gamma as a
    public constant on other data, does not carry it."""
    layout, Z = mixed(200)
    published = kprototypes_as_published(layout, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3,
                                         data_derived_bounds=False)
    ledger = run(Z, published, 9, replicas=1).ledger
    leaks = [e.label for e in ledger.entries if e.mechanism.startswith("LEAK")]
    assert any("classes of the evaluation data" in leak for leak in leaks)
    corrected = kprototypes_corrected(layout, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3)
    assert "gamma-from-classes" not in {f.name for f in corrected.flaws}


def test_kprototypes_corrected_spends_eps_r_plus_eps_c():
    layout, Z = mixed(600)
    config = kprototypes_corrected(layout, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3)
    result = run(Z, config, 9, replicas=3)
    total = claimed_epsilon(0.05, 0.7)["sequential (sum)"]
    assert result.ledger.is_private
    assert result.ledger.total().epsilon == pytest.approx(total, rel=1e-12)
    assert plan_ledger(config).total().epsilon == pytest.approx(total, rel=1e-12)
    # with epsilon, the default categorical share is the paper's eps_c / (eps_r + eps_c)
    by_eps = kprototypes_corrected(layout, box(3), epsilon=2.0)
    share = claimed_epsilon(0.05, 0.7)["epsilon_categorical"] / total
    assert by_eps.modes.schedule.sum() == pytest.approx(2.0 * share, rel=1e-12)
    assert by_eps.epsilon == pytest.approx(2.0, rel=1e-12)


# --- the Dask backend --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dask_backend():
    pytest.importorskip("distributed")
    from dpkmeans.compute.backends.dask import DaskBackend

    with DaskBackend() as be:
        yield be


def _kmeans_data():
    return blobs(600, 3, seed=5)


def _kprototypes_data():
    return mixed(600, seed=5)[1]


LAYOUT = mixed(10)[0]


@pytest.mark.slow
@pytest.mark.parametrize("make, data", [
    (lambda: kmeans_as_published(box(3), rho=0.05, n_clusters=3), _kmeans_data),
    (lambda: kmeans_as_published(box(3), rho=0.05, n_clusters=3, reading="printed"),
     _kmeans_data),
    (lambda: kmeans_corrected(box(3), rho=0.05, n_clusters=3), _kmeans_data),
    (lambda: kprototypes_as_published(LAYOUT, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3),
     _kprototypes_data),
    (lambda: kprototypes_corrected(LAYOUT, box(3), rho_r=0.05, rho_c=0.7, n_clusters=3),
     _kprototypes_data),
], ids=["kmeans-as-published", "kmeans-as-published-printed", "kmeans-corrected",
        "kprototypes-as-published", "kprototypes-corrected"])
def test_dask_gives_the_in_memory_bits(dask_backend, make, data):
    da = pytest.importorskip("dask.array")
    config, X = make(), data()
    memory = run(X, config, 2026, replicas=3)
    on_dask = run(da.from_array(X, chunks=(250, X.shape[1])), config, 2026, replicas=3,
                  backend=dask_backend)
    assert np.array_equal(memory.centroids, on_dask.centroids)
    assert np.array_equal(memory.initial_centroids, on_dask.initial_centroids)
    assert np.array_equal(memory.noisy_counts, on_dask.noisy_counts)
    assert np.array_equal(memory.iterations_run, on_dask.iterations_run)
    assert np.array_equal(memory.spent, on_dask.spent)
    assert memory.ledger.total() == on_dask.ledger.total()
    assert memory.ledger.entries == on_dask.ledger.entries
    assert memory.ledger.is_private == on_dask.ledger.is_private


def test_the_printed_rule_needs_rho():
    with pytest.raises(ValueError, match="rule for rho"):
        kmeans_as_published((np.zeros(2), np.ones(2)), epsilon=1.0, reading="printed")
