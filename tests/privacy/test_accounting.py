"""The privacy ledger: composition rules and budget enforcement (book chapter 3)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkmeans.errors import BudgetExceededError
from dpkmeans.privacy import accounting
from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger

eps_lists = st.lists(st.floats(1e-4, 5.0, allow_nan=False), min_size=1, max_size=20)


def charge(ledger: PrivacyLedger, eps: float, delta: float = 0.0) -> None:
    ledger.charge("Laplace", epsilon=eps, delta=delta, sensitivity=1.0, scale=1.0 / eps)


@settings(max_examples=200, deadline=None)
@given(eps_lists)
def test_sequential_composition_adds(epsilons):
    ledger = PrivacyLedger()
    for e in epsilons:
        charge(ledger, e)
    assert ledger.total().epsilon == pytest.approx(sum(epsilons))
    assert ledger.total().is_pure


@settings(max_examples=200, deadline=None)
@given(st.lists(eps_lists, min_size=1, max_size=6))
def test_parallel_composition_takes_the_worst_part(parts):
    ledger = PrivacyLedger()
    with ledger.parallel("clusters"):
        for i, part in enumerate(parts):
            with ledger.part(f"cluster {i}"):
                for e in part:
                    charge(ledger, e)
    assert ledger.total().epsilon == pytest.approx(max(sum(p) for p in parts))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=5), min_size=1, max_size=8))
def test_iterations_of_parallel_clusters(iterations):
    """T iterations, each a parallel release over clusters: the total is sum_t max_j eps_tj."""
    ledger = PrivacyLedger()
    for t, eps_per_cluster in enumerate(iterations):
        with ledger.sequential(f"iteration {t}"), ledger.parallel("clusters"):
            for j, e in enumerate(eps_per_cluster):
                with ledger.part(f"cluster {j}"):
                    charge(ledger, e)
                    ledger.post_process("clamp the noisy count at 1")
    assert ledger.total().epsilon == pytest.approx(sum(max(it) for it in iterations))


@settings(max_examples=200, deadline=None)
@given(eps_lists, st.floats(0.1, 10.0))
def test_budget_is_never_exceeded(epsilons, budget):
    ledger = PrivacyLedger(budget=budget)
    for e in epsilons:
        try:
            charge(ledger, e)
        except BudgetExceededError:
            pass
        assert ledger.total().epsilon <= budget * (1 + 1e-9)


def test_delta_composes_and_is_enforced():
    ledger = PrivacyLedger(budget=(2.0, 1e-5))
    charge(ledger, 0.5, 4e-6)
    charge(ledger, 0.5, 4e-6)
    assert ledger.total() == PrivacyCost(1.0, 8e-6)
    with pytest.raises(BudgetExceededError, match="delta"):
        charge(ledger, 0.5, 4e-6)
    assert not ledger.total().is_pure


def test_split_budget_is_fully_spent_despite_rounding():
    ledger = PrivacyLedger(budget=1.0)
    for _ in range(3):
        charge(ledger, 1.0 / 3.0)
    assert ledger.is_fully_spent()
    assert ledger.remaining().epsilon == pytest.approx(0.0, abs=1e-12)


def test_post_processing_is_free_and_recorded():
    ledger = PrivacyLedger(budget=1.0)
    charge(ledger, 1.0)
    ledger.post_process("centroid = noisy sum / max(noisy count, 1)")
    assert ledger.total().epsilon == pytest.approx(1.0)
    assert ledger.entries[-1].mechanism == "post-processing"
    frame = ledger.to_frame()
    assert list(frame["mechanism"]) == ["Laplace", "post-processing"]


def test_scopes_are_recorded():
    ledger = PrivacyLedger()
    with ledger.sequential("iteration 1"), ledger.parallel("clusters"), ledger.part("cluster 0"):
        charge(ledger, 0.1)
    assert ledger.entries[0].scope == "iteration 1 > clusters[parallel] > cluster 0"


def test_scope_misuse_is_a_clear_error():
    ledger = PrivacyLedger()
    with pytest.raises(RuntimeError, match="part"):
        with ledger.part("orphan"):
            pass
    with pytest.raises(RuntimeError, match="inside parallel scope"):
        with ledger.parallel("clusters"):
            charge(ledger, 0.1)


def test_budget_forms_and_errors():
    assert PrivacyLedger(budget=2).budget == PrivacyCost(2.0)
    assert PrivacyLedger(budget=(1.0, 1e-6)).budget == PrivacyCost(1.0, 1e-6)
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=-1.0)
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="no declared budget"):
        PrivacyLedger().is_fully_spent()
    assert PrivacyLedger().remaining() is None


def test_refused_draw_leaves_the_ledger_unchanged():
    ledger = PrivacyLedger(budget=1.0)
    with ledger.parallel("clusters"):
        with ledger.part("a"):
            charge(ledger, 0.9)
        with ledger.part("b"):
            with pytest.raises(BudgetExceededError):
                charge(ledger, 1.1)
            charge(ledger, 1.0)  # a disjoint part may use the full budget
    assert ledger.total().epsilon == pytest.approx(1.0)
    assert len(ledger.entries) == 2
    assert np.isclose(ledger.remaining().epsilon, 0.0)


def test_docstring_example_runs():
    assert doctest.testmod(accounting).failed == 0


def test_absorb_adds_a_finished_ledger_as_one_sequential_part():
    from dpkmeans.errors import BudgetExceededError
    from dpkmeans.privacy.accounting import PrivacyLedger

    fit = PrivacyLedger()
    with fit.parallel("clusters"):
        for j in range(3):
            with fit.part(f"cluster {j}"):
                fit.charge("Laplace", epsilon=0.6, sensitivity=2.0, scale=2 / 0.6)
    fit.charge("Laplace", epsilon=0.4, sensitivity=1.0, scale=2.5, label="count")
    fit.leak("bounds read off the data")
    shared = PrivacyLedger(budget=2.0)
    shared.absorb(fit, "fit 1")
    assert shared.total().epsilon == pytest.approx(1.0)
    assert len(shared.entries) == len(fit.entries) and not shared.is_private
    assert shared.entries[0].scope == "fit 1 > clusters[parallel] > cluster 0"
    assert shared.entries[3].scope == "fit 1"
    fit.charge("Laplace", epsilon=0.0001, sensitivity=1.0, scale=1e4)  # later draws stay out
    assert shared.total().epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError, match="fit 2 costs epsilon=1.0001"):
        shared.absorb(fit, "fit 2")
    assert shared.total().epsilon == pytest.approx(1.0) and len(shared.entries) == 5
    with pytest.raises(ValueError, match="under replace adjacency into one under add/remove"):
        shared.absorb(PrivacyLedger(neighbour="replace"), "x")
    with pytest.raises(ValueError, match="cannot absorb itself"):
        shared.absorb(shared, "x")
