"""Equal privacy (book chapter 12, "Equal privacy"): every DP-Lloyd algorithm of the catalogue
at one target (epsilon, delta) under tight composition, checked against Google's
``dp-accounting``, the maintained accountant.

The target: the ledger's epsilon at delta agrees with dp-accounting's PLD accountant to 1e-3
(relative) on every algorithm's release sequence. The sequence is rebuilt here from the run's
ledger table alone (mechanism, sensitivity, scale, epsilon and scope columns), not from the
ledger's own :class:`~dpkmeans.privacy.tight.Release` records, and composed directly with
dp-accounting's privacy-loss distributions.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

from dpkmeans.api.catalogue import FitInputs, build_at, choice, forms, loop_choices
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import (
    CALIBRATION_RTOL,
    gaussian_twin,
    laplace_at,
    plan_releases,
    tight_epsilon,
)
from dpkmeans.engine.loop import run
from dpkmeans.papers.registry import records
from dpkmeans.privacy.accounting import TIGHT_RTOL, PrivacyCost
from dpkmeans.privacy.gaussian import zcdp_delta
from dpkmeans.synthesis.noise_table import sum_sd

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

EPSILON, DELTA = 1.0, 1e-6
K, N_RECORDS, MAX_ITER = 3, 10**4, 5
DIMS = (3, 10)
PLD_RTOL = 1e-3  # the target's agreement with dp-accounting


def cases() -> list[tuple[str, str | None, str]]:
    """(algorithm, neighbour or None for its own, form) for every DP-Lloyd algorithm of the
    catalogue and every form it has at DELTA; differential identifiability ("di", proven under
    replace adjacency) under add/remove in both forms, and under its own relation in the
    Laplace form (the Gaussian twin needs add/remove)."""
    out = []
    for name, entry in loop_choices().items():
        for form in forms(entry, DELTA):
            if entry.neighbour == "replace":
                out.append((name, "add/remove", form))
                if form == "laplace":
                    out.append((name, None, form))
            else:
                out.append((name, None, form))
    return out


CASES = cases()


def params(chosen: list[tuple[str, str | None, str]]) -> list:
    """The cases as pytest parameters; the silhouette's Gaussian twin is slow to calibrate (a
    Laplace release remains beside the Gaussian ones, so every step of the bisection composes
    20 privacy-loss distributions: about 10 s at d = 3)."""
    return [pytest.param(c, id=case_id(c),
                         marks=[pytest.mark.slow] if (c[0], c[2]) == ("silhouette", "gaussian")
                         else [])
            for c in chosen]


def inputs(d: int, n_records: int = N_RECORDS, k: int = K) -> FitInputs:
    return FitInputs(k, EPSILON, (np.zeros(d), np.ones(d)), max_iter=MAX_ITER,
                     n_records=n_records)


@lru_cache(maxsize=None)
def built(name: str, neighbour: str | None, form: str, d: int) -> DPLloydConfig:
    return build_at(choice(name), inputs(d), DELTA, form=form, neighbour=neighbour)


@lru_cache(maxsize=None)
def fitted(name: str, neighbour: str | None, form: str, d: int):
    """A seeded run (two replicas) of the configuration on uniform data in the box."""
    X = np.random.default_rng(20261129 + d).uniform(size=(N_RECORDS, d))
    return run(X, built(name, neighbour, form, d), 51, replicas=2)


def case_id(case: tuple[str, str | None, str]) -> str:
    name, neighbour, form = case
    return f"{name}-{form}" + ("" if neighbour is None else "-add_remove")


# --- rebuilding the release sequence from the ledger table ----------------------------------
def kind_of(mechanism: str) -> str:
    if mechanism.startswith("Laplace"):
        return "laplace"
    if mechanism.startswith("Gaussian"):
        return "gaussian"
    raise AssertionError(f"a release this test cannot rebuild: {mechanism!r}")


def parameters(row: dict, elements: bool) -> list[tuple[str, float]]:
    """The releases of one ledger row: itself (:func:`parameter`), or with ``elements`` one
    Laplace release per element when the row records its elements' bounds (a Laplace vector
    whose elements' bounds hold together: the composition of its elements dominates it)."""
    kind, p = parameter(row)
    bounds = row.get("details.element bounds")
    if not elements or not isinstance(bounds, tuple):
        return [(kind, p)]
    assert kind == "laplace" and sum(bounds) == pytest.approx(row["sensitivity"], rel=1e-12)
    return [(kind, p * row["sensitivity"] / b) for b in bounds]


def parameter(row: dict) -> tuple[str, float]:
    """(kind, noise scale / sensitivity) of one ledger row, at the nominal scale.

    The exact samplers round the scale up: the discrete Gaussian's sigma^2 covers the rounding
    of the statistic to the grid (the rounded query's L2 sensitivity is the sensitivity plus
    sqrt(coordinates) grid steps). The ledger pays for the nominal sigma, Delta_2 /
    sqrt(2 rho), which bounds the rounded query's mu (checked here), so its mu is
    sensitivity / nominal scale; the row records the rounding as ``scale / nominal - 1``.
    """
    kind = kind_of(row["mechanism"])
    rounding = row.get("details.scale rounding")
    rounding = 0.0 if rounding is None or math.isnan(rounding) else float(rounding)
    nominal = row["scale"] / (1.0 + rounding)
    p = nominal / row["sensitivity"]
    if kind == "laplace":  # pure epsilon = Delta_1 / b
        assert 1.0 / p == pytest.approx(row["epsilon"], rel=1e-9)
    else:  # the zCDP calibration at the row's (epsilon, delta): mu^2 / 2 = rho
        mu = 1.0 / p
        assert zcdp_delta(mu * mu / 2, row["epsilon"]) == pytest.approx(row["delta"], rel=1e-6)
        on_grid = row.get("details.sensitivity on grid")
        if on_grid is not None and not math.isnan(on_grid):
            assert on_grid / row["scale"] <= mu  # the drawn sigma covers the rounded query
    return kind, p


def dominates(big: list[tuple[str, float]], small: list[tuple[str, float]]) -> bool:
    """Every release of ``small`` matched to one of ``big`` of the same kind with at most its
    parameter (less noise per unit of sensitivity: a stronger release)."""
    for kind in {k for k, _ in small}:
        mine = sorted(p for k, p in big if k == kind)
        theirs = sorted(p for k, p in small if k == kind)
        if len(theirs) > len(mine) or any(t < m for t, m in zip(theirs, mine)):
            return False
    return True


def sequence(frame, elements: bool = False) -> list[tuple[str, float]]:
    """The releases a run composes in sequence, from its ledger table: every row with a cost
    (by its elements, with ``elements``: :func:`parameters`), a parallel scope
    (``...[parallel] > part``) by the part that dominates the others."""
    out: list[tuple[str, float] | dict] = []
    scopes: dict[str, dict[str, list]] = {}
    for row in frame.to_dict("records"):
        if row["epsilon"] == 0 and row["delta"] == 0:
            assert row["mechanism"] == "post-processing", row
            continue
        releases = parameters(row, elements)
        head, mark, tail = row["scope"].partition("[parallel] > ")
        if not mark:
            out.extend(releases)
            continue
        if head not in scopes:
            scopes[head] = {}
            out.append(scopes[head])
        scopes[head].setdefault(tail.split(" > ")[0], []).extend(releases)
    flat: list[tuple[str, float]] = []
    for item in out:
        if isinstance(item, tuple):
            flat.append(item)
            continue
        parts = list(item.values())
        worst = [p for p in parts if all(dominates(p, q) for q in parts)]
        assert worst, "no part of a parallel scope dominates the others"
        flat.extend(worst[0])
    return flat


def dp_accounting_epsilon(releases: list[tuple[str, float]], delta: float) -> float:
    """dp-accounting's epsilon at ``delta`` of the releases composed (its default
    discretisation; equal releases self-composed)."""
    counts: dict[tuple[str, float], int] = {}
    for r in releases:
        counts[r] = counts.get(r, 0) + 1
    composed = None
    for (kind, p), times in counts.items():
        one = (pld.from_laplace_mechanism(p) if kind == "laplace"
               else pld.from_gaussian_mechanism(p))
        one = one if times == 1 else one.self_compose(times)
        composed = one if composed is None else composed.compose(one)
    return float(composed.get_epsilon_for_delta(delta))


# --- the target -----------------------------------------------------------------------------
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("case", params(CASES))
def test_ledger_epsilon_agrees_with_dp_accounting(case, d):
    """The ledger's epsilon at delta agrees with dp-accounting's PLD accountant to 1e-3
    (relative) on every algorithm's release sequence."""
    config = built(*case, d)
    result = fitted(*case, d)
    ledger = result.ledger
    assert ledger.is_private
    releases = sequence(ledger.to_frame())
    assert len(releases) >= config.iterations
    # each vector whole, and (when its elements' bounds hold together) by its elements
    ref = min(dp_accounting_epsilon(releases, DELTA),
              dp_accounting_epsilon(sequence(ledger.to_frame(), elements=True), DELTA))
    mine = ledger.epsilon_at(DELTA)
    assert abs(mine - ref) <= PLD_RTOL * ref, (mine, ref)
    # the ledger composes what it recorded, in the same count
    assert sum(r.times for r in ledger.releases()) == len(releases)
    for entry in ledger.entries:  # a Gaussian release is paid at its nominal sigma
        if entry.release is not None and entry.release.kind == "gaussian":
            nominal = entry.scale / (1.0 + entry.details.get("scale rounding", 0.0))
            assert entry.release.mu == pytest.approx(entry.sensitivity / nominal, rel=1e-12)
            assert entry.release.mu >= entry.sensitivity / entry.scale  # drawn sigma >= it


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("case", params(CASES))
def test_run_spends_its_target(case, d):
    """The run's ledger total is its declared target, to the accountant's precision."""
    name, neighbour, form = case
    config = built(*case, d)
    ledger = fitted(*case, d).ledger
    assert ledger.neighbour == (neighbour or choice(name).neighbour)
    if form == "basic":  # an (epsilon, delta) algorithm as its paper accounts it
        assert config.target is None and ledger.accounting == "basic"
        assert ledger.total().epsilon == pytest.approx(EPSILON)
    else:
        assert config.target == PrivacyCost(EPSILON, DELTA)
        assert ledger.accounting == "tight" and ledger.budget == config.target
        assert abs(ledger.total().epsilon - EPSILON) <= TIGHT_RTOL * EPSILON
        # the calibration meets the target from below, so the recorded releases do too
        # (the ledger's budget check would allow TIGHT_RTOL more)
        assert ledger.epsilon_at(DELTA) <= EPSILON
    assert ledger.is_fully_spent()


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("case", params([c for c in CASES if c[2] != "basic"]))
def test_calibration_meets_the_target_from_below(case, d):
    """``tight_epsilon`` of a calibrated form is at most the target and within
    CALIBRATION_RTOL of it; the Laplace form never spends less than the pure form."""
    name, neighbour, form = case
    config = built(*case, d)
    eps = tight_epsilon(config, DELTA)
    assert EPSILON * (1 - 1e-4) <= eps <= EPSILON
    assert CALIBRATION_RTOL <= 1e-4
    if form == "laplace":
        pure = build_at(choice(name), inputs(d), 0.0, neighbour=neighbour)
        factor = config.schedule / pure.schedule
        np.testing.assert_allclose(factor, factor[0], rtol=1e-12)  # the schedule's shape kept
        assert factor[0] >= 1.0  # PLD composition is never worse than adding epsilons
        assert config.iterations == pure.iterations and config.noise == pure.noise
        assert laplace_at(pure, EPSILON, DELTA).schedule == pytest.approx(config.schedule)


# --- what the forms refuse ------------------------------------------------------------------
def test_twin_refuses_replace_adjacency():
    with pytest.raises(ValueError, match=r"form must be one of \('laplace',\)"):
        build_at(choice("di"), inputs(3), DELTA, form="gaussian")  # di: replace adjacency
    with pytest.raises(ValueError, match=r"form must be one of \('laplace',\)"):
        build_at(choice("dplloyd"), inputs(3), DELTA, form="gaussian", neighbour="replace")
    pure = build_at(choice("dplloyd"), inputs(3), 0.0)
    with pytest.raises(ValueError, match="add/remove"):
        gaussian_twin(replace(pure, neighbour="replace"), EPSILON, DELTA)
    # the Laplace form is fine under replace adjacency
    at = laplace_at(replace(pure, neighbour="replace"), EPSILON, DELTA)
    assert at.neighbour == "replace" and tight_epsilon(at, DELTA) <= EPSILON


def test_laplace_form_needs_a_pure_configuration():
    twin = built("dplloyd", None, "gaussian", 3)
    with pytest.raises(ValueError, match="pure"):
        laplace_at(twin, EPSILON, DELTA)


def published() -> list[tuple[str, DPLloydConfig]]:
    out = [(r.key, r.published()) for r in records() if r.published is not None]
    return [(key, c) for key, c in out if isinstance(c, DPLloydConfig)]


@pytest.mark.parametrize("key, config", published(), ids=[k for k, _ in published()])
def test_as_published_configurations_are_refused(key, config):
    assert config.flaws
    with pytest.raises(ValueError, match="as-published"):
        plan_releases(config)
    with pytest.raises(ValueError, match="as-published"):
        tight_epsilon(config, DELTA)
    with pytest.raises(ValueError):
        replace(config, target=PrivacyCost(EPSILON, DELTA))


def test_as_published_configurations_exist():
    assert len(published()) >= 4  # the papers' records offer them


# --- the noise at equal privacy -------------------------------------------------------------


def sd_ratio(n_records: int, d: int = 10) -> tuple[int, float]:
    """(T, the largest ratio of the twin's sum noise sd to the pure fit's) of DPLloyd-Impr."""
    entry = choice("dplloyd-impr")
    pure = build_at(entry, inputs(d, n_records), 0.0)
    twin = build_at(entry, inputs(d, n_records), DELTA)
    assert twin.noise.whitened and twin.iterations == pure.iterations
    assert tight_epsilon(twin, DELTA) <= EPSILON
    ratio = sum_sd(twin) / sum_sd(pure)
    return pure.iterations, float(ratio.max())


def test_twin_noise_at_most_0_4_of_pure_at_d10():
    """At d = 10, a DPLloyd-Impr fit at (1, 1e-6) has a per-coordinate noise standard deviation
    on the sums at most 0.4 of the pure-epsilon fit's at epsilon = 1 (at N = 10^5, where Su et
    al.'s rule gives T = 7; measured 0.347 on [0, 1]^10)."""
    T, ratio = sd_ratio(10**5)
    assert T == 7
    assert ratio <= 0.4


def test_twin_noise_ratio_falls_with_T():
    """With fewer iterations the twin gains less, and the 0.4 target is not met: on [0, 1]^10,
    k = 3, the ratio was 0.650 at T = 2 (N = 10^4), 0.53 at T = 3 (N = 1.5 10^4) and 0.347 at
    T = 7 (N = 10^5). Recorded, not a target: this checks only that it falls as T grows (Su et
    al.'s rule chooses T from the public N)."""
    measured = [sd_ratio(n) for n in (10**4, 15_000, 10**5)]
    assert [T for T, _ in measured] == [2, 3, 7]
    ratios = [r for _, r in measured]
    assert ratios[0] > ratios[1] > ratios[2]
