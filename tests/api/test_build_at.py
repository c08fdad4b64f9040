"""The catalogue's forms of an algorithm at a target (epsilon, delta): ``forms`` and
``build_at`` (book chapter 12, "Equal privacy")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpkmeans.api.catalogue import FORMS, FitInputs, build_at, choice, choices, forms
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import tight_epsilon
from dpkmeans.engine.loop import run
from dpkmeans.privacy.accounting import TIGHT_RTOL, PrivacyCost, PrivacyLedger
from dpkmeans.privacy.tight import Release

pytest.importorskip("dp_accounting")

DELTA = 1e-6
INPUTS = FitInputs(3, 1.0, (np.zeros(3), np.ones(3)), max_iter=5, n_records=10**4)

#: The forms of every corrected algorithm, at delta = 0 and at DELTA.
EXPECTED = {
    "dplloyd": (("pure",), ("gaussian", "laplace")),
    "dplloyd-impr": (("pure",), ("gaussian", "laplace")),
    "dp-kccm": (("pure",), ("gaussian", "laplace")),
    "silhouette": (("pure",), ("gaussian", "laplace")),
    "apdp": (("pure",), ("gaussian", "laplace")),
    "di": (("pure",), ("laplace",)),  # replace adjacency: no Gaussian twin
    "balcan": (("pure",), ("pure",)),
    "fastlloyd-laplace": (("pure",), ("gaussian", "laplace")),
    "colored": ((), ("gaussian", "basic")),
    "lsh": ((), ("gaussian", "basic")),
    "fastlloyd": ((), ("gaussian",)),  # its own analysis is tight: one form
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_forms_of_each_algorithm(name):
    entry = choice(name)
    at_zero, at_delta = EXPECTED[name]
    assert forms(entry, 0.0) == at_zero
    assert forms(entry, DELTA) == at_delta
    assert set(at_zero) | set(at_delta) <= set(FORMS)
    if entry.neighbour == "replace":  # under add/remove it has the Gaussian twin too
        assert forms(entry, DELTA, "add/remove") == ("gaussian", "laplace")


def test_every_catalogue_algorithm_has_its_forms_listed():
    assert set(choices()) == set(EXPECTED)
    for entry in choices().values():  # the rule behind the table
        if entry.needs_delta:
            assert forms(entry, 0.0) == ()
        else:
            assert forms(entry, 0.0) == ("pure",)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_build_at_builds_every_form(name):
    entry = choice(name)
    for delta in (0.0, DELTA):
        for form in forms(entry, delta):
            if (name, form) == ("silhouette", "gaussian"):
                continue  # 10 s to calibrate: tests/engine/test_equal_privacy.py runs it
            if name == "di" and form == "gaussian":  # the twin needs add/remove
                config = build_at(entry, INPUTS, delta, form=form, neighbour="add/remove")
            else:
                config = build_at(entry, INPUTS, delta, form=form)
            assert config.n_clusters >= 3  # DP-KCCM runs 3k clusters and merges them
            target = getattr(config, "target", None)
            if form in ("gaussian", "laplace") and not entry.standalone:
                assert target == PrivacyCost(1.0, delta)
                assert tight_epsilon(config, delta) <= 1.0
            elif isinstance(config, DPLloydConfig):
                assert target is None


def test_default_form_is_the_first():
    twin = build_at(choice("dplloyd"), INPUTS, DELTA)
    assert twin.noise.whitened and twin.target == PrivacyCost(1.0, DELTA)
    pure = build_at(choice("dplloyd"), INPUTS, 0.0)
    assert pure.target is None and not pure.noise.needs_delta
    assert pure.schedule.sum() == pytest.approx(1.0)
    colored = build_at(choice("colored"), INPUTS, DELTA, form="basic")
    assert colored.target is None and colored.noise.needs_delta


# --- errors ---------------------------------------------------------------------------------
def test_build_at_refuses_a_form_it_does_not_have():
    with pytest.raises(ValueError, match="form must be one of"):
        build_at(choice("dplloyd"), INPUTS, DELTA, form="basic")
    with pytest.raises(ValueError, match="form must be one of"):
        build_at(choice("dplloyd"), INPUTS, DELTA, form="renyi")
    with pytest.raises(ValueError, match="form must be one of"):
        build_at(choice("dplloyd"), INPUTS, 0.0, form="gaussian")
    with pytest.raises(ValueError, match="form must be one of"):
        build_at(choice("colored"), INPUTS, DELTA, form="laplace")
    with pytest.raises(ValueError, match="form must be one of"):
        build_at(choice("balcan"), INPUTS, DELTA, form="gaussian")


def test_build_at_refuses_an_approximate_algorithm_at_delta_zero():
    for name in ("colored", "lsh"):
        with pytest.raises(ValueError, match="no form at delta = 0"):
            build_at(choice(name), INPUTS, 0.0)


def test_build_at_checks_delta_and_neighbour():
    with pytest.raises(ValueError):
        build_at(choice("dplloyd"), INPUTS, 1.5)
    with pytest.raises(ValueError):
        build_at(choice("dplloyd"), INPUTS, -1e-6)
    with pytest.raises(ValueError, match="neighbour must be one of"):
        build_at(choice("dplloyd"), INPUTS, DELTA, neighbour="swap")
    with pytest.raises(ValueError, match="neighbour must be one of"):
        build_at(choice("dplloyd"), INPUTS, 0.0, neighbour="add-remove")


def test_standalone_algorithms_keep_their_relation():
    with pytest.raises(ValueError, match="adjacency only"):
        build_at(choice("balcan"), INPUTS, DELTA, neighbour="replace")
    with pytest.raises(ValueError, match="adjacency only"):
        build_at(choice("lsh"), INPUTS, DELTA, form="basic", neighbour="replace")
    config = build_at(choice("balcan"), INPUTS, 0.0, neighbour="add/remove")  # its own: fine
    assert config.neighbour == "add/remove"


def test_neighbour_switches_a_lloyd_algorithm():
    own = build_at(choice("di"), INPUTS, 0.0)
    switched = build_at(choice("di"), INPUTS, 0.0, neighbour="add/remove")
    assert own.neighbour == "replace" and switched.neighbour == "add/remove"
    assert switched.schedule == pytest.approx(own.schedule)
    laplace = build_at(choice("di"), INPUTS, DELTA, form="laplace")
    assert laplace.neighbour == "replace" and tight_epsilon(laplace, DELTA) <= 1.0


# --- a release before the run ---------------------------------------------------------------
@pytest.mark.parametrize("form", ["gaussian", "laplace"])
def test_prefix_lowers_the_schedule(form):
    """A noisy record count released first (Laplace, epsilon 0.1) is covered by the same
    target: the run's schedule is lower, and the count and the run together meet it."""
    count = Release("laplace", epsilon=0.1)
    alone = build_at(choice("dplloyd"), INPUTS, DELTA, form=form)
    after = build_at(choice("dplloyd"), INPUTS, DELTA, form=form, prefix=[count])
    assert (after.schedule < alone.schedule).all()
    assert after.iterations == alone.iterations and after.target == alone.target
    both = tight_epsilon(after, DELTA, [count])
    assert 1.0 * (1 - 1e-4) <= both <= 1.0
    assert tight_epsilon(after, DELTA) < both  # the run alone spends less than the target

    ledger = PrivacyLedger(budget=(1.0, DELTA), accounting="tight")
    ledger.charge("Laplace (discrete)", epsilon=0.1, sensitivity=1.0, scale=10.0,
                  label="noisy record count", release=count)
    X = np.random.default_rng(3).uniform(size=(2000, 3))
    result = run(X, after, 7, ledger=ledger)
    assert result.ledger is ledger
    assert abs(ledger.total().epsilon - 1.0) <= TIGHT_RTOL
    assert ledger.is_fully_spent()
    # without the count in its ledger the run does not spend its declared target: refused
    with pytest.raises((RuntimeError, ValueError)):
        run(X, after, 7)


def test_balcan_at_delta_is_its_pure_configuration():
    entry = choice("balcan")
    at_delta = build_at(entry, INPUTS, DELTA)
    pure = build_at(entry, INPUTS, 0.0)
    assert type(at_delta) is type(pure)
    assert at_delta.delta == 0.0 and at_delta.epsilon == 1.0
    for f in dataclasses.fields(pure):
        a, b = getattr(at_delta, f.name), getattr(pure, f.name)
        if f.name == "bounds":
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
        else:
            assert a == b, f.name


def test_lsh_tight_form():
    entry = choice("lsh")
    config = build_at(entry, INPUTS, DELTA, form="gaussian")
    basic = build_at(entry, INPUTS, DELTA, form="basic")
    assert type(config) is type(basic)
    assert config.delta == DELTA and config.epsilon == 1.0
