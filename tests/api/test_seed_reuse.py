"""A fixed seed must not void a shared accountant (book chapter 12, "One budget across fits").

Two fits that share their seed share their noise: refitting on D and on D minus one record with
the same ``random_state`` gives noisy counts whose difference is exactly the record (1), so
membership is revealed with certainty, while basic composition would report epsilon 2. A
shared :class:`~dpkmeans.privacy.accounting.PrivacyLedger` therefore keeps the seed material of
every fit it absorbed: by default it refuses a repeat before the fit draws anything
(``SeedReuseError``); with ``seed_reuse="record"`` the fit runs and the ledger records a leak
(``is_private`` False).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.api.mixed_estimator import DPKPrototypes
from dpkmeans.errors import SeedReuseError
from dpkmeans.privacy.accounting import PrivacyLedger


@pytest.fixture
def D() -> np.ndarray:
    gen = np.random.default_rng(3)
    return np.clip(gen.normal(0, 0.3, (300, 2)), -1, 1)


def fit(X: np.ndarray, random_state, accountant=None, epsilon: float = 1.0) -> DPKMeans:
    # "dplloyd-impr" (the default) spends a share of epsilon on a noisy count of the records
    return DPKMeans(2, epsilon=epsilon, bounds=(-1, 1), accountant=accountant,
                    random_state=random_state).fit(X)


def test_a_repeated_seed_reveals_membership_without_an_accountant(D):
    """Why the accountant refuses: the same seed, the same noise, the exact difference."""
    for seed in range(5):
        assert fit(D, seed).n_records_used_ - fit(D[:-1], seed).n_records_used_ == 1


def test_the_accountant_refuses_a_fit_that_repeats_a_seed_before_it_draws(D):
    accountant = PrivacyLedger()
    first = fit(D, 7, accountant)
    n_entries, spent = len(accountant.entries), accountant.total()
    second = DPKMeans(2, epsilon=1.0, bounds=(-1, 1), accountant=accountant, random_state=7)
    with pytest.raises(SeedReuseError, match="repeats the seed material of fit 1") as err:
        second.fit(D[:-1])
    assert "different random_state" in str(err.value) and "spawn" in str(err.value)
    assert isinstance(err.value, ValueError)
    # nothing drawn, nothing recorded: the accountant is as the first fit left it
    assert not hasattr(second, "n_records_used_")
    assert len(accountant.entries) == n_entries and accountant.total() == spent
    assert accountant.is_private and first.n_records_used_ is not None


def test_record_mode_lets_the_fit_run_and_marks_the_accountant_not_private(D):
    accountant = PrivacyLedger(seed_reuse="record")
    a = fit(D, 7, accountant)
    b = fit(D[:-1], 7, accountant)
    assert a.n_records_used_ - b.n_records_used_ == 1  # the leak the record describes
    assert not accountant.is_private
    leaks = [e for e in accountant.entries if e.mechanism.startswith("LEAK")]
    assert len(leaks) == 1 and leaks[0].label.startswith(
        "fit 2 (DPKMeans(algorithm='dplloyd-impr')) reuses the seed material of fit 1 (")
    assert leaks[0].scope == "DPKMeans(algorithm='dplloyd-impr')"  # in the second fit's part
    assert accountant.entries[-1] is leaks[0]


def test_distinct_seeds_and_fresh_entropy_are_accepted(D):
    accountant = PrivacyLedger()
    fit(D, 7, accountant)
    fit(D[:-1], 8, accountant)
    fit(D, None, accountant)
    fit(D, None, accountant)
    for child in np.random.SeedSequence(11).spawn(3):  # distinct spawn keys, distinct material
        fit(D, child, accountant)
    assert accountant.is_private and accountant.total().epsilon == pytest.approx(7.0)


def test_a_seed_sequence_is_the_same_material_as_its_int_and_related_to_its_children(D):
    accountant = PrivacyLedger()
    fit(D, 11, accountant)
    with pytest.raises(SeedReuseError):
        fit(D, np.random.SeedSequence(11), accountant)
    with pytest.raises(SeedReuseError):  # a child of an absorbed seed shares its streams
        fit(D, np.random.SeedSequence(11).spawn(1)[0], accountant)
    parent_after_child = PrivacyLedger()
    fit(D, np.random.SeedSequence(12).spawn(2)[1], parent_after_child)
    with pytest.raises(SeedReuseError):
        fit(D, 12, parent_after_child)


def test_without_an_accountant_nothing_is_checked(D):
    a, b = fit(D, 7), fit(D, 7)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_a_refused_budget_takes_precedence_and_a_seed_is_recorded_only_when_charged(D):
    accountant = PrivacyLedger(budget=1.5)
    fit(D, 7, accountant)
    from dpkmeans.errors import BudgetExceededError

    with pytest.raises(BudgetExceededError):
        fit(D, 8, accountant)
    fit(D, 8, accountant, epsilon=0.5)  # seed 8 was never charged: accepted


def test_mixed_fits_check_the_seed_too():
    gen = np.random.default_rng(0)
    frame = pd.DataFrame({"x": gen.uniform(0, 1, 200), "c": gen.choice(["a", "b"], 200)})
    kw = dict(categorical=["c"], bounds=(0, 1), categories=[["a", "b"]])
    accountant = PrivacyLedger(neighbour="replace")
    DPKPrototypes(2, epsilon=1.0, accountant=accountant, random_state=0, **kw).fit(frame)
    with pytest.raises(SeedReuseError, match="DPKPrototypes"):
        DPKPrototypes(2, epsilon=1.0, accountant=accountant, random_state=0, **kw).fit(frame)
    DPKPrototypes(2, epsilon=1.0, accountant=accountant, random_state=1, **kw).fit(frame)
    assert accountant.is_private


def test_nested_ledgers_carry_their_seeds_up(D):
    inner, outer = PrivacyLedger(), PrivacyLedger()
    fit(D, 7, inner)
    outer.absorb(inner, "study A")
    with pytest.raises(SeedReuseError, match=r"of fit 1 \(study A\) > fit 1 \(DPKMeans"):
        fit(D, 7, outer)
    other = PrivacyLedger()
    fit(D[:-1], 7, other)
    with pytest.raises(SeedReuseError, match=r"fit 2 \(study B\) > fit 1 \(DPKMeans.*"
                                             r"of fit 1 \(study A\) > fit 1"):
        outer.absorb(other, "study B")
    assert outer.total() == inner.total()  # refused whole, nothing recorded
    recording = PrivacyLedger(seed_reuse="record")
    recording.absorb(inner, "study A")
    recording.absorb(other, "study B")
    assert not recording.is_private


def test_the_ledger_keeps_its_seeds_through_pickle_and_copy(D):
    accountant = PrivacyLedger()
    fit(D, 7, accountant)
    for twin in (pickle.loads(pickle.dumps(accountant)), copy.deepcopy(accountant)):
        with pytest.raises(SeedReuseError):
            fit(D, 7, twin)
        fit(D, 8, twin)


def test_the_seed_is_not_shown_in_the_ledgers_reports(D):
    accountant = PrivacyLedger()
    fit(D, 123456789, accountant)
    shown = repr(accountant) + accountant.to_frame().to_string()
    assert "123456789" not in shown


def test_an_invalid_seed_reuse_is_refused():
    with pytest.raises(ValueError, match="seed_reuse must be one of"):
        PrivacyLedger(seed_reuse="warn")


def test_the_fingerprint_follows_numpys_state():
    child = np.random.SeedSequence(11).spawn(1)[0]
    ledger = PrivacyLedger()
    ledger.absorb(PrivacyLedger(), "a", seed=child)
    # numpy mixes a short entropy as if zero-padded to its pool, then the spawn key
    for same in (np.random.SeedSequence([11, 0, 0, 0, 0]),
                 np.random.SeedSequence(np.uint32(11), spawn_key=(0,))):
        assert np.array_equal(same.generate_state(4), child.generate_state(4))
        with pytest.raises(SeedReuseError, match=r"fit 2 \(b\) repeats .* of fit 1 \(a\)"):
            ledger.check_seed(same, "b")
    with pytest.raises(SeedReuseError):  # the same state as SeedSequence(11), its parent
        ledger.check_seed(np.random.SeedSequence([11, 0]), "b")
    for other in (np.random.SeedSequence(11).spawn(2)[1], np.random.SeedSequence(2**40 + 11),
                  np.random.SeedSequence(11, pool_size=8), np.random.SeedSequence()):
        assert ledger.check_seed(other, "b") is None
    with pytest.raises(TypeError, match="SeedSequence"):
        ledger.check_seed(11, "b")
    recording = PrivacyLedger(seed_reuse="record")
    recording.absorb(PrivacyLedger(), "a", seed=child)
    assert recording.check_seed(child, "b") == "fit 1 (a)" and recording.is_private


def test_an_absorbed_ledger_is_checked_against_its_own_seed_not_within_itself():
    seed = np.random.SeedSequence(5)
    inner = PrivacyLedger(seed_reuse="record")
    inner.absorb(PrivacyLedger(), "a", seed=seed)
    inner.absorb(PrivacyLedger(), "b", seed=seed)  # its own leak, already recorded
    outer = PrivacyLedger()
    outer.absorb(inner, "study")  # the repeat inside is inner's record, carried as a leak
    assert not outer.is_private and len([e for e in outer.entries if "LEAK" in e.mechanism]) == 1
    with pytest.raises(SeedReuseError, match=r"fit 1 \(study\) > fit 1 \(a\)"):
        outer.check_seed(seed, "c")
    with pytest.raises(SeedReuseError, match=r"fit 1 \(again\) > fit 1 \(a\) repeats .* "
                                             r"of fit 1 \(again\), "):
        PrivacyLedger().absorb(inner, "again", seed=seed)
