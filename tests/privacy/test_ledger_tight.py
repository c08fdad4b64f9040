"""A ledger that composes tightly (book chapter 3, "Tight composition"): what
``PrivacyLedger(accounting="tight")`` accepts and refuses, how its parallel scopes compose, and
that a basic ledger is unchanged."""

from __future__ import annotations

import math
import pickle

import pytest

from dpkmeans.errors import BudgetExceededError
from dpkmeans.privacy.accounting import TIGHT_RTOL, LedgerEntry, PrivacyLedger
from dpkmeans.privacy.tight import Release, epsilon_at, gdp_epsilon, gdp_mu

pytest.importorskip("dp_accounting")

DELTA = 1e-6
#: Gaussian noise that is (0.5, 1e-7)-DP alone: seven releases cost 3.5 by basic composition,
#: 1.2643 at delta 1e-6 by Gaussian DP.
MU = gdp_mu(0.5, 1e-7)
GAUSS = Release("gaussian", epsilon=0.5, delta=1e-7, mu=MU)


def gaussian(ledger: PrivacyLedger, release: Release = GAUSS, label: str = "") -> LedgerEntry:
    return ledger.charge("Gaussian", epsilon=release.epsilon, delta=release.delta,
                         sensitivity=1.0, scale=1.0 / release.mu, label=label, release=release)


def laplace(ledger: PrivacyLedger, eps: float, label: str = "") -> LedgerEntry:
    return ledger.charge("Laplace", epsilon=eps, sensitivity=1.0, scale=1.0 / eps, label=label,
                         release=Release("laplace", epsilon=eps))


def snapshot(ledger: PrivacyLedger) -> tuple:
    return len(ledger.entries), ledger.releases(), ledger.total(), ledger.epsilon_at(DELTA)


# --- the budget check -----------------------------------------------------------------------
def test_tight_ledger_accepts_what_basic_composition_refuses():
    seven = gdp_epsilon(MU * math.sqrt(7), DELTA)
    assert 1.26 < seven < 1.27
    basic = PrivacyLedger(budget=(1.3, DELTA))
    tight = PrivacyLedger(budget=(1.3, DELTA), accounting="tight")
    for t in range(7):
        gaussian(tight, label=f"iteration {t + 1}")
    gaussian(basic)
    gaussian(basic)
    with pytest.raises(BudgetExceededError):
        gaussian(basic)  # 1.5 > 1.3 by adding epsilons
    assert len(basic.entries) == 2
    assert len(tight.entries) == 7
    assert tight.total().epsilon == pytest.approx(seven, rel=1e-12)
    assert tight.total().delta == DELTA
    assert tight.epsilon_at(DELTA) == pytest.approx(seven, rel=1e-12)
    assert tight.epsilon_at(DELTA, "basic") == pytest.approx(3.5)  # deltas add to 7e-7
    assert tight.epsilon_at(5e-7, "basic") == math.inf  # below the sum of deltas


def test_tight_ledger_refuses_past_the_tight_budget_and_records_nothing():
    tight = PrivacyLedger(budget=(1.3, DELTA), accounting="tight")
    for _ in range(7):
        gaussian(tight)
    before = snapshot(tight)
    eight = gdp_epsilon(MU * math.sqrt(8), DELTA)
    assert eight > 1.3 * (1 + TIGHT_RTOL)
    with pytest.raises(BudgetExceededError):
        gaussian(tight)
    with pytest.raises(BudgetExceededError):
        laplace(tight, 0.2)  # a Laplace release after them: PLD composition, also over
    assert snapshot(tight) == before
    laplace(tight, 1e-3)  # a small one still fits (PLD of the mixture)
    assert len(tight.entries) == 8
    assert tight.epsilon_at(DELTA) <= 1.3 * (1 + TIGHT_RTOL)


def test_tight_ledger_within_the_accountants_slack():
    """The check allows TIGHT_RTOL of the budget, no more."""
    mu = gdp_mu(1.0, DELTA)
    ledger = PrivacyLedger(budget=(1.0, DELTA), accounting="tight")
    gaussian(ledger, Release("gaussian", epsilon=0.9, delta=1e-7, mu=mu / math.sqrt(2)))
    over = Release("gaussian", epsilon=0.9, delta=1e-7, mu=mu / math.sqrt(2) * 1.01)
    with pytest.raises(BudgetExceededError):
        gaussian(ledger, over)
    gaussian(ledger, Release("gaussian", epsilon=0.9, delta=1e-7, mu=mu / math.sqrt(2)))
    assert ledger.is_fully_spent()
    assert abs(ledger.total().epsilon - 1.0) <= TIGHT_RTOL


def test_tight_ledger_with_a_pure_budget_is_basic():
    ledger = PrivacyLedger(budget=1.0, accounting="tight")
    for _ in range(10):
        laplace(ledger, 0.1)
    with pytest.raises(BudgetExceededError):
        laplace(ledger, 0.01)
    assert ledger.total().epsilon == pytest.approx(1.0)
    assert ledger.total().is_pure
    assert ledger.pure_epsilon() == pytest.approx(1.0)


def test_accounting_mode_is_checked():
    with pytest.raises(ValueError, match="accounting"):
        PrivacyLedger(budget=(1.0, DELTA), accounting="renyi")


# --- parallel scopes ------------------------------------------------------------------------
def parallel(parts: list[list[Release]], budget=None, accounting="basic") -> PrivacyLedger:
    ledger = PrivacyLedger(budget=budget, accounting=accounting)
    with ledger.parallel("clusters"):
        for j, part in enumerate(parts):
            with ledger.part(f"cluster {j}"):
                for r in part:
                    if r.kind == "gaussian":
                        gaussian(ledger, r)
                    else:
                        laplace(ledger, r.epsilon)
    return ledger


def test_identical_parts_count_once():
    part = [GAUSS, Release("laplace", epsilon=0.2)]
    ledger = parallel([part] * 5)
    assert ledger.releases() == part
    assert ledger.epsilon_at(DELTA) == pytest.approx(epsilon_at(part, DELTA)[0], rel=1e-12)


def test_heterogeneous_parts_take_the_dominating_part():
    big = [Release("laplace", epsilon=0.5), Release("laplace", epsilon=0.3)]
    small = [Release("laplace", epsilon=0.2), Release("laplace", epsilon=0.3)]
    smaller = [Release("laplace", epsilon=0.1)]
    ledger = parallel([small, big, smaller])
    assert ledger.releases() == big
    assert ledger.total().epsilon == pytest.approx(0.8)  # basic: the worst part


def test_non_comparable_parts_fall_back_to_sequential():
    """Parts none of which dominates every other compose in sequence: sound (at least each
    part's own epsilon), looser than the true parallel cost."""
    a = [Release("laplace", epsilon=0.5), Release("laplace", epsilon=0.1)]
    b = [Release("laplace", epsilon=0.3), Release("laplace", epsilon=0.3)]
    c = [Release("gaussian", epsilon=0.5, delta=1e-7, mu=0.2)]
    ledger = parallel([a, b, c])
    assert sorted(ledger.releases()) == sorted(a + b + c)
    eps = ledger.epsilon_at(DELTA)
    for part in (a, b, c):
        assert eps >= epsilon_at(part, DELTA)[0]


def test_tight_ledger_in_parallel_scopes_checks_the_worst_part():
    mu = gdp_mu(1.0, DELTA) / math.sqrt(3)
    one = Release("gaussian", epsilon=0.5, delta=1e-7, mu=mu)
    ledger = PrivacyLedger(budget=(1.0, DELTA), accounting="tight")
    for t in range(3):
        with ledger.sequential(f"iteration {t + 1}"), ledger.parallel("clusters"):
            for j in range(4):
                with ledger.part(f"cluster {j}"):
                    gaussian(ledger, one)
    assert len(ledger.entries) == 12
    assert ledger.releases() == [one] * 3
    assert ledger.is_fully_spent()
    with pytest.raises(BudgetExceededError):
        with ledger.sequential("iteration 4"), ledger.parallel("clusters"):
            with ledger.part("cluster 0"):
                gaussian(ledger, one)
    assert len(ledger.entries) == 12


# --- a plan checked whole -------------------------------------------------------------------
def test_expect_refuses_an_over_budget_plan():
    mu = gdp_mu(1.0, DELTA) / math.sqrt(7)
    ledger = PrivacyLedger(budget=(1.0, DELTA), accounting="tight")
    with pytest.raises(BudgetExceededError):
        ledger.expect([Release("gaussian", mu=mu)] * 8)
    assert ledger.entries == ()
    laplace(ledger, 0.5)  # recorded first: the plan is checked on top of it
    with pytest.raises(BudgetExceededError):
        ledger.expect([Release("gaussian", mu=mu)] * 7)


def test_expect_accepts_charges_within_the_plan():
    mu = gdp_mu(1.0, DELTA) / math.sqrt(7)
    planned = Release("gaussian", epsilon=0.4, delta=1e-7, mu=mu)
    ledger = PrivacyLedger(budget=(1.0, DELTA), accounting="tight")
    ledger.expect([planned] * 7)
    gaussian(ledger, Release("gaussian", epsilon=0.3, delta=1e-7, mu=mu / 2))  # weaker
    for _ in range(6):
        gaussian(ledger, planned)
    assert len(ledger.entries) == 7
    assert ledger.epsilon_at(DELTA) <= 1.0
    with pytest.raises(BudgetExceededError):
        laplace(ledger, 0.1)  # outside the plan: composed, and over
    assert len(ledger.entries) == 7


def test_expect_is_a_no_op_on_a_basic_ledger():
    ledger = PrivacyLedger(budget=(1.0, DELTA))
    ledger.expect([Release("gaussian", mu=10.0)] * 3)  # not checked: basic accounting
    with pytest.raises(BudgetExceededError):
        for _ in range(3):
            gaussian(ledger)


# --- absorb ---------------------------------------------------------------------------------
def test_absorb_into_a_tight_ledger():
    fit = PrivacyLedger()
    for _ in range(7):
        gaussian(fit)
    basic = PrivacyLedger(budget=(1.3, DELTA))
    with pytest.raises(BudgetExceededError):
        basic.absorb(fit, "fit 1")
    tight = PrivacyLedger(budget=(1.3, DELTA), accounting="tight")
    tight.absorb(fit, "fit 1")
    assert len(tight.entries) == 7
    assert tight.entries[0].scope == "fit 1"
    assert tight.releases() == [GAUSS] * 7
    assert tight.epsilon_at(DELTA) == pytest.approx(gdp_epsilon(MU * math.sqrt(7), DELTA))
    before = snapshot(tight)
    with pytest.raises(BudgetExceededError):
        tight.absorb(fit, "fit 2")
    assert snapshot(tight) == before
    small = PrivacyLedger()
    laplace(small, 1e-3)
    tight.absorb(small, "fit 2")
    assert len(tight.entries) == 8


# --- what an entry records ------------------------------------------------------------------
def test_ledger_entry_pickles_with_its_release():
    ledger = PrivacyLedger()
    entry = gaussian(ledger, label="sums")
    back = pickle.loads(pickle.dumps(entry))
    assert back == entry
    assert back.release == GAUSS
    assert back.as_release == GAUSS
    plain = ledger.charge("exponential", epsilon=0.2, sensitivity=1.0, scale=10.0)
    assert pickle.loads(pickle.dumps(plain)).release is None
    assert plain.as_release == Release("pure", epsilon=0.2)
    approx = ledger.charge("sparse vector", epsilon=0.2, delta=1e-8, sensitivity=1.0, scale=5.0)
    assert approx.as_release == Release("approx", epsilon=0.2, delta=1e-8)
    note = ledger.post_process("clamp")
    assert note.as_release is None
    assert pickle.loads(pickle.dumps(ledger)).releases() == ledger.releases()


def test_privacy_report():
    ledger = PrivacyLedger()
    for _ in range(7):
        gaussian(ledger)
    report = ledger.privacy_report(DELTA)
    assert set(report) == {"pure_epsilon", "basic", "zcdp", "gdp", "pld", "best", "rho", "mu"}
    assert report["pure_epsilon"] is None
    assert report["basic"] == pytest.approx(3.5)
    assert report["mu"] == pytest.approx(MU * math.sqrt(7))
    assert report["rho"] == pytest.approx(7 * MU**2 / 2)
    assert report["best"] == report["gdp"] == pytest.approx(gdp_epsilon(MU * math.sqrt(7), DELTA))
    assert report["pld"] == pytest.approx(report["gdp"], rel=TIGHT_RTOL)
    assert report["gdp"] <= report["zcdp"] <= report["basic"]
    lap = PrivacyLedger()
    laplace(lap, 0.3)
    report = lap.privacy_report(DELTA)
    assert report["pure_epsilon"] == pytest.approx(0.3)
    assert report["gdp"] is None and report["mu"] is None


def test_pure_epsilon():
    ledger = PrivacyLedger()
    laplace(ledger, 0.25)
    ledger.charge("exponential", epsilon=0.5, sensitivity=1.0, scale=4.0)
    with ledger.parallel("clusters"):
        for j in range(3):
            with ledger.part(f"cluster {j}"):
                laplace(ledger, 0.1 * (j + 1))
    assert ledger.pure_epsilon() == pytest.approx(1.05)
    assert ledger.epsilon_at(0.0) == pytest.approx(1.05)
    gaussian(ledger)
    assert ledger.pure_epsilon() is None
    assert ledger.epsilon_at(0.0) == math.inf


# --- a basic ledger is unchanged ------------------------------------------------------------
def test_basic_ledger_total_is_unchanged_by_releases():
    with_release, without = PrivacyLedger(), PrivacyLedger()
    for ledger, keep in ((with_release, True), (without, False)):
        for t in range(3):
            ledger.charge("Gaussian", epsilon=0.5, delta=1e-7, sensitivity=1.0, scale=1 / MU,
                          release=GAUSS if keep else None)
            with ledger.parallel(f"clusters {t}"):
                for j in range(2):
                    with ledger.part(f"cluster {j}"):
                        ledger.charge("Laplace", epsilon=0.1 * (j + 1), sensitivity=1.0,
                                      scale=10.0 / (j + 1),
                                      release=Release("laplace", epsilon=0.1 * (j + 1))
                                      if keep else None)
    assert with_release.total() == without.total()
    assert with_release.total().epsilon == pytest.approx(3 * 0.5 + 3 * 0.2)
    assert with_release.total().delta == pytest.approx(3e-7)
    assert "accounting" not in repr(with_release)
    assert "accounting='tight'" in repr(PrivacyLedger(budget=(1, DELTA), accounting="tight"))
    # the tight accountings still read a basic ledger, without changing its total
    assert with_release.epsilon_at(DELTA) < with_release.total().epsilon
    assert with_release.accounting == "basic"
