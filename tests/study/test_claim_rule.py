"""The claim rule (:func:`dpkmeans.study.claims.combine`): four claim verdicts a reader can
check, that never round a claim the data never supported up; and every paper chapter's claim
table uses it, with its tests' counts beside each verdict, defined once, in chapter 7."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pandas as pd
import pytest

from dpkmeans.papers.apdp import claims as apdp_claims
from dpkmeans.papers.colored import claims as colored_claims
from dpkmeans.papers.dpkccm import claims as dpkccm_claims
from dpkmeans.study.claims import CLAIM_VERDICTS, VERDICTS, combine, tally, verdict_with_counts
from tests.notebook_glue import glued_values

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
NOTEBOOKS = ROOT / "notebooks"


# -- the rule ----------------------------------------------------------------------------------
def test_the_claim_verdicts_are_the_four_of_the_rule():
    assert CLAIM_VERDICTS == ("holds", "holds in part", "not supported", "inconclusive")


def test_a_claim_never_supported_is_not_supported_not_mixed():
    """DP-KCCM's claim 1: refuted in 8 and inconclusive in 4 of 12 tests."""
    tests = ["refuted"] * 8 + ["inconclusive"] * 4
    assert combine(tests) == "not supported"
    assert verdict_with_counts(tests) == (
        "not supported (refuted in 8 and inconclusive in 4 of 12 tests)")


@pytest.mark.parametrize("tests, expected", [
    (["holds"], "holds"),
    (["holds"] * 5, "holds"),
    (["holds", "refuted"], "holds in part"),
    (["holds", "inconclusive", "mixed"], "holds in part"),
    (["refuted"], "not supported"),
    (["refuted", "mixed"], "not supported"),
    (["inconclusive"], "inconclusive"),
    (["mixed"], "inconclusive"),  # a mixed test neither holds nor is refuted
    (["inconclusive", "mixed"], "inconclusive"),
])
def test_the_rule_on_each_case(tests, expected):
    assert combine(tests) == expected


def test_no_claim_without_a_holding_test_is_rounded_up():
    """Every multiset of up to four test verdicts: "holds" or "holds in part" exactly when a
    test holds; "not supported" exactly when none holds and one is refuted."""
    for n in range(1, 5):
        for tests in itertools.combinations_with_replacement(VERDICTS, n):
            result = combine(tests)
            assert result in CLAIM_VERDICTS
            held = "holds" in tests
            assert (result in ("holds", "holds in part")) is held, tests
            assert (result == "holds") is all(t == "holds" for t in tests), tests
            assert (result == "not supported") is (not held and "refuted" in tests), tests


def test_the_rule_refuses_what_is_not_a_test_verdict():
    for bad in ([], ["fails"], ["holds in part"], ["not supported", "holds"]):
        with pytest.raises(ValueError):
            combine(bad)


def test_the_counts_are_in_words_in_a_fixed_order():
    assert tally(["inconclusive", "refuted", "refuted"]) == (
        "refuted in 2 and inconclusive in 1 of 3 tests")
    assert tally(["holds"], "dataset") == "holds in 1 of 1 dataset"
    assert tally(["mixed", "holds", "not tested"]) == (
        "holds in 1, mixed in 1 and not tested in 1 of 3 tests")


# -- the chapters ------------------------------------------------------------------------------
def _markdown(source: Path) -> str:
    """A chapter's markdown cells (the comment lines of its percent-format source)."""
    cells = re.split(r"^# %%", source.read_text(encoding="utf-8"), flags=re.M)
    return "\n".join(c for c in cells if c.startswith(" [markdown]"))


def test_chapter_7_defines_both_rules_once_and_the_others_refer_to_it():
    seven = _markdown(NOTEBOOKS / "07_dpkccm.py")
    assert "(claims-verdicts)=" in seven
    for name in VERDICTS + CLAIM_VERDICTS:
        assert f"- **{name}**:" in seven, name
    for chapter in ("09_colored", "10_schedules", "11_identifiability"):
        prose = _markdown(NOTEBOOKS / f"{chapter}.py")
        assert "claims-verdicts>`" in prose, chapter
        assert "- **mixed**:" not in prose and "if they all agree" not in prose, chapter
        assert not re.search(r"\*mixed\* (when|otherwise)|\*\*mixed\*\*\s+otherwise", prose)


def test_chapter_7_gives_each_claim_the_rules_verdict_with_its_counts():
    glued = glued_values(NOTEBOOKS / "07_dpkccm.ipynb")
    ledger = pd.read_csv(RESULTS / "dpkccm_claims.csv")
    ledger = ledger[ledger["metric"] == "nicv"]
    for claim, rows in ledger.groupby("claim"):
        assert glued[f"ch7_claim{claim}_overall"] == verdict_with_counts(
            rows["verdict"], "dataset")
    summary = dpkccm_claims.claims_summary(ledger)
    assert summary.loc[summary["claim"] == 1, "verdict"].item() == "not supported"


def test_chapter_9_gives_each_claim_the_rules_verdict_with_its_counts():
    glued = glued_values(NOTEBOOKS / "09_colored.ipynb")
    ledger = pd.read_csv(RESULTS / "colored_claims.csv")
    summary = colored_claims.claims_summary(ledger)
    table = glued["ch9_verdicts"]
    for row in summary.itertuples():
        if row.claim != 3:
            assert f"**{row.verdict}** ({row.evidence})" in table, row
    claim3 = ledger.loc[ledger["claim"] == 3, "verdict"]
    assert f"**{combine(claim3)}** ({tally(claim3)})" in table
    verdicts = re.findall(r"\*\*([a-z ]+)\*\* \(", table)
    assert verdicts and set(verdicts) <= set(CLAIM_VERDICTS)
    corrected = summary.set_index(["claim", "setting", "metric"]).loc[(1, "corrected", "nicv")]
    assert glued["ch9_claim1_corrected_nicv"] == f"{corrected.verdict} ({corrected.evidence})"


def test_chapter_10_gives_each_claim_the_rules_verdict_with_its_counts():
    glued = glued_values(NOTEBOOKS / "10_schedules.ipynb")
    ledger = pd.read_csv(RESULTS / "apdp_claims.csv", dtype={"claim": str})
    for row in apdp_claims.claims_summary(ledger).itertuples():
        assert row.verdict in CLAIM_VERDICTS
        assert glued[f"ch10_v{row.claim}_{row.method}"] == f"{row.verdict} ({row.evidence})"


def test_chapter_11_gives_each_claim_the_rules_verdict_with_its_counts():
    glued = glued_values(NOTEBOOKS / "11_identifiability.ipynb")
    ledger = pd.read_csv(RESULTS / "di_claims.csv", dtype={"claim": str})
    for claim, rows in ledger.groupby("claim", sort=False):
        corrected = rows["setting"].str.contains("corrected")
        for side, part in (("published", rows[~corrected]), ("corrected", rows[corrected])):
            if len(part):
                assert glued[f"ch11_{claim}_{side}_claim"] == verdict_with_counts(
                    part["verdict"])
    assert glued["ch11_1_published_claim"].startswith("holds in part")
