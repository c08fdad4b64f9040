"""The gallery of real bugs (book chapter 6, "A gallery of real bugs"): every case's broken
variant records its flaw, its corrected counterpart records none and passes the audit, and the
doubling ladder catches a cheap case at its smallest rung."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.errors import SeedReuseError
from dpkmeans.papers.fastlloyd.flaws import SEED_ZERO_FIRST_ITERATION, iteration_seed
from dpkmeans.synthesis import gallery

#: The flaw each case's broken variant must record (a name, or the start of a leak's text).
RECORDED = {"a": "shared-seed-noise", "b": SEED_ZERO_FIRST_ITERATION.name,
            "c": "swapped-split", "d": "skip-empty-clusters", "e": "data-derived-bounds",
            "f": "local-sensitivity", "g": "reuses the seed material",
            "h": "continuous float64 noise"}


def test_the_gallery_has_the_eight_cases_in_order():
    assert [c.letter for c in gallery.CASES] == list("abcdefgh")
    assert len({c.name for c in gallery.CASES}) == 8
    assert gallery.case("g") is gallery.case(gallery.CASES[6].name)
    with pytest.raises(ValueError, match="no gallery case"):
        gallery.case("z")


@pytest.mark.parametrize("letter", list("abcdefgh"))
def test_each_broken_variant_records_its_flaw_and_its_counterpart_none(letter):
    c = gallery.case(letter)
    broken = c.sample(True, 8, np.random.SeedSequence(1))
    fixed = c.sample(False, 8, np.random.SeedSequence(1))
    assert any(RECORDED[letter] in name for name in broken.flaws), broken.flaws
    assert broken.on_d.shape == broken.on_d_prime.shape == (8,)
    # a leak makes the ledger say "not private"; the swapped split is an overspend, which the
    # ledger charges at its true cost, above the claim
    if letter == "c":
        assert broken.ledger_is_private and broken.ledger_epsilon > c.epsilon
    else:
        assert not broken.ledger_is_private and broken.ledger_epsilon == np.inf
    assert not any(RECORDED[letter] in name for name in fixed.flaws), fixed.flaws


@pytest.mark.parametrize("letter", ["a", "h"])
def test_the_corrected_counterpart_passes_where_the_bug_is_caught(letter):
    c = gallery.case(letter)
    report, _ = gallery.audit_case(c, 64)
    control, _ = gallery.audit_case(c, 64, flawed=False)
    assert report.verdict == "violation detected"
    assert control.verdict == "consistent" and control.lower_bound <= c.epsilon


def test_a_small_ladder_catches_a_cheap_case_at_its_smallest_rung():
    rung, caught, seconds = gallery.ladder(gallery.case("h"), max_trials=1024)
    assert caught and rung.trials == 64 and seconds >= 0
    below, _ = gallery.audit_case(gallery.case("h"), 32)  # the rung below does not
    assert below.verdict == "consistent"
    assert rung.control.verdict == "consistent"


def test_a_case_not_caught_within_the_cap_says_so():
    rung, caught, _ = gallery.ladder(gallery.case("c"), max_trials=64)
    assert not caught and rung.trials == 64


def test_the_rungs_seeds_differ_by_case_trials_and_side():
    seeds = {gallery.rung_seed(name, n, control=control).entropy
             for name in ("x", "y") for n in (16, 32) for control in (False, True)}
    assert len(seeds) == 8


def test_the_row_records_what_the_variant_records():
    row = gallery.gallery_rows("e", max_trials=256).iloc[0]
    assert row["flaws"] == "data-derived-bounds" and not row["ledger_is_private"]
    assert row["detected"] and not row["control_detected"]
    assert row["ratio"] == pytest.approx(row["lower_bound"] / row["claimed_epsilon"])


def test_the_seed_pitfall_is_refused_by_default_and_recorded_on_request():
    D, D_prime = gallery.seed_reuse_pair()
    with pytest.raises(SeedReuseError):
        gallery.refit_difference(D, (7, 7), seed_reuse="refuse")
    difference, accountant = gallery.refit_difference(D, (7, 7))
    assert difference == 1 and not accountant.is_private
    assert gallery.refit_difference(D_prime, (7, 7))[0] == 0
    assert gallery.refit_difference(D, (7, 8))[1].is_private


def test_the_published_seed_rule_is_zero_in_every_first_iteration():
    assert {iteration_seed(s, 0) for s in (1, 2, 2**31)} == {0}
    with pytest.raises(ValueError, match=">= 0"):
        iteration_seed(-1, 0)
