"""Google's private clustering in its tight form (``dpkmeans.papers.lsh``, book chapter 12):
both noises scaled together until the PLD composition of the tree's levels and the leaf sums
is the budget, as Google's library accounts them; the basic form kept as it was."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from dpkmeans.api.catalogue import FitInputs, build_at, choice, forms
from dpkmeans.engine.loop import run
from dpkmeans.papers.lsh.algorithm import (
    GOOGLE_MAX_DEPTH,
    GOOGLE_NOISE_RATIO,
    LSHClustering,
    catalogue_config,
    catalogue_config_tight,
    google_count_share,
    tight_factor,
)
from dpkmeans.privacy.tight import epsilon_at
from tests.papers.blobs import THREE_CENTRES, blobs

pytest.importorskip("dp_accounting")

DELTA = 1e-6


def box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return -np.ones(d), np.ones(d)


def data(d: int, n: int = 3000) -> np.ndarray:
    """Three blobs in the first three coordinates, zeros elsewhere, inside ``box(d)``."""
    X = np.zeros((n, d))
    X[:, :3] = blobs(n, THREE_CENTRES, 0.05, 1)
    return X


def inputs(eps: float, d: int, delta: float | None = DELTA) -> FitInputs:
    return FitInputs(3, eps, box(d), max_iter=5, delta=delta)


def charged(ledger) -> tuple[list, object]:
    """The level releases and the sums' release of a run's ledger."""
    entries = [e for e in ledger.entries if e.mechanism != "post-processing"]
    return entries[:-1], entries[-1]


@pytest.fixture(scope="module", params=[(1.0, 10), (0.1, 10)], ids=["eps1-d10", "eps0.1-d10"])
def pair(request):
    """The basic and the tight form at one (epsilon, d), and a run of each."""
    eps, d = request.param
    X = data(d)
    basic, tight = catalogue_config(inputs(eps, d)), catalogue_config_tight(inputs(eps, d))
    return eps, basic, tight, run(X, basic, 5), run(X, tight, 5)


# -- the tight form ------------------------------------------------------------------------------
def test_the_tight_ledger_spends_the_budget_by_tight_composition(pair):
    eps, _, tight, _, result = pair
    ledger = result.ledger
    assert ledger.accounting == "tight" and ledger.is_private
    assert (ledger.budget.epsilon, ledger.budget.delta) == (eps, DELTA)
    assert ledger.is_fully_spent()
    spent = ledger.epsilon_at(DELTA)
    assert spent <= eps and spent == pytest.approx(eps, rel=1e-3)
    # calibrated to 1e-4 below the target, never above, by the planned releases
    planned, _ = epsilon_at(tight.planned_releases(), DELTA)
    assert eps * (1 - 1e-4) <= planned <= eps
    assert spent == pytest.approx(planned, rel=1e-12)
    # basic composition of the same releases would exceed the budget: the ledger is tight
    assert ledger.epsilon_at(DELTA, "basic") > 1.2 * eps


def test_the_tight_form_adds_less_noise_in_google_s_ratio(pair):
    _, basic, tight, basic_run, tight_run = pair
    assert tight.factor > 1.0 and basic.factor == 1.0
    (b_levels, b_sums), (t_levels, t_sums) = charged(basic_run.ledger), charged(tight_run.ledger)
    assert len(b_levels) == len(t_levels) == GOOGLE_MAX_DEPTH + 1
    assert max(e.scale for e in t_levels) < min(e.scale for e in b_levels)
    assert t_sums.scale < b_sums.scale
    assert t_sums.sensitivity == b_sums.sensitivity == pytest.approx(basic.radius)
    # both forms: a level's Laplace scale is 20 times the sums' nominal sigma / r
    for config in (basic, tight):
        levels, sums = config.planned_releases()
        assert levels.times == GOOGLE_MAX_DEPTH + 1
        assert (1.0 / levels.epsilon) * sums.mu == pytest.approx(GOOGLE_NOISE_RATIO, rel=1e-9)
    b_levels_plan, b_sums_plan = basic.planned_releases()
    t_levels_plan, t_sums_plan = tight.planned_releases()
    assert t_levels_plan.epsilon / b_levels_plan.epsilon == pytest.approx(tight.factor, rel=1e-12)
    assert t_sums_plan.mu / b_sums_plan.mu == pytest.approx(tight.factor, rel=1e-9)


def test_the_tight_ledger_agrees_with_an_independent_pld_accountant(pair):
    """The ledger's table rebuilt as dp-accounting events, as Google's ``privacy_calculator``
    composes them (Laplace events for the levels, a Gaussian event for the sums)."""
    import dp_accounting
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    eps, _, _, _, result = pair
    frame = result.ledger.to_frame()
    frame = frame[frame["mechanism"] != "post-processing"]
    assert len(frame) == GOOGLE_MAX_DEPTH + 2
    accountant = PLDAccountant(value_discretization_interval=1e-5)
    for row in frame.itertuples():
        multiplier = row.scale / row.sensitivity
        if row.mechanism.startswith("Laplace"):
            accountant.compose(dp_accounting.LaplaceDpEvent(multiplier))
        else:
            assert row.mechanism.startswith("Gaussian")
            accountant.compose(dp_accounting.GaussianDpEvent(multiplier))
    independent = accountant.get_epsilon(DELTA)
    assert independent <= eps
    assert result.ledger.epsilon_at(DELTA) == pytest.approx(independent, rel=1e-3)


def test_a_tiny_dataset_stops_at_the_root_yet_spends_the_same():
    """The spend does not depend on the data: every level is charged."""
    X = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    config = catalogue_config_tight(inputs(1.0, 3))
    result = run(X, config, 3)
    levels, _ = charged(result.ledger)
    assert len(levels) == GOOGLE_MAX_DEPTH + 1
    plan_levels, plan_sums = config.planned_releases()
    assert result.ledger.releases() == [replace(plan_levels, times=1)] * plan_levels.times + [
        plan_sums]
    assert result.ledger.is_fully_spent()


def test_a_given_share_keeps_its_ratio_in_the_tight_form():
    basic = LSHClustering(3, box(4), 0.5, 1e-5, max_depth=8, count_share=0.5)
    tight = LSHClustering(3, box(4), 0.5, 1e-5, max_depth=8, count_share=0.5,
                          accounting="tight")
    (b_levels, b_sums), (t_levels, t_sums) = basic.planned_releases(), tight.planned_releases()
    assert b_levels.times == t_levels.times == 9
    assert t_levels.epsilon / t_sums.mu == pytest.approx(b_levels.epsilon / b_sums.mu, rel=1e-9)
    assert 0.5 * (1 - 1e-4) <= epsilon_at(tight.planned_releases(), 1e-5)[0] <= 0.5
    assert tight.factor == tight_factor(0.5, 1e-5, 8, 0.5, tight.radius)


def test_an_unknown_accounting_is_refused():
    with pytest.raises(ValueError, match="accounting must be one of"):
        LSHClustering(3, box(3), 1.0, DELTA, accounting="pld")


# -- the basic form is unchanged ----------------------------------------------------------------
@pytest.mark.parametrize("eps, d", [(1.0, 10), (0.1, 10), (0.5, 3)])
def test_the_basic_form_is_the_catalogue_s_as_before(eps, d):
    config = catalogue_config(inputs(eps, d))
    assert type(config) is LSHClustering
    assert (config.n_clusters, config.epsilon, config.delta, config.neighbour, config.name) == (
        3, eps, DELTA, "add/remove", "lsh")
    assert (config.max_depth, config.count_share, config.min_num_points_in_node,
            config.min_num_points_in_branching_node, config.n_init, config.flaws) == (
        GOOGLE_MAX_DEPTH, None, None, None, 1, ())
    assert config.accounting == "basic" and config.target is None and config.factor == 1.0
    share = google_count_share(eps, DELTA, GOOGLE_MAX_DEPTH)
    level = share * eps / (GOOGLE_MAX_DEPTH + 1)  # the split as it always was, bit for bit
    assert config.epsilon_level == level
    assert config.epsilon_sums == eps - (GOOGLE_MAX_DEPTH + 1) * level
    for got, want in zip(config.bounds, box(d)):
        np.testing.assert_array_equal(got, want)
    assert config.radius == math.sqrt(d)


def test_the_basic_run_keeps_its_basic_ledger():
    config = catalogue_config(inputs(1.0, 3))
    result = run(data(3), config, 7)
    ledger = result.ledger
    assert ledger.accounting == "basic"
    total = ledger.total()
    assert total.epsilon == pytest.approx(1.0, rel=1e-12) and total.delta == DELTA
    levels, sums = charged(ledger)
    assert all(e.epsilon == config.epsilon_level for e in levels)
    assert sums.epsilon == config.epsilon_sums and sums.delta == DELTA


# -- the catalogue ---------------------------------------------------------------------------------
def test_the_catalogue_builds_both_forms():
    entry = choice("lsh")
    assert entry.build_tight is catalogue_config_tight
    assert forms(entry, DELTA) == ("gaussian", "basic") and forms(entry, 0.0) == ()
    own = inputs(1.0, 10, delta=None)
    tight = build_at(entry, own, DELTA, form="gaussian")
    assert isinstance(tight, LSHClustering) and tight.accounting == "tight"
    assert (tight.target.epsilon, tight.target.delta) == (1.0, DELTA)
    assert build_at(entry, own, DELTA).accounting == "tight"  # the first form is the default
    basic = build_at(entry, own, DELTA, form="basic")
    assert basic.accounting == "basic" and basic.target is None
    assert basic.epsilon_level == catalogue_config(inputs(1.0, 10)).epsilon_level
    with pytest.raises(ValueError, match="give delta"):
        catalogue_config_tight(inputs(1.0, 10, delta=None))
