"""Chapter 12 (``notebooks/12_synthesis``) states what the library computes: its privacy
sentences read the ledger (:func:`dpkmeans.synthesis.ledger.privacy_claims`), its claims tally
uses the four claim verdicts of chapter 7, and its regime table follows the ranking rule of
:func:`dpkmeans.synthesis.ranking.recommendations`. The checks read the glued values stored
in the executed notebook, as the book shows them."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.study.claims import CLAIM_VERDICTS
from dpkmeans.synthesis import ledger, ranking
from tests.notebook_glue import glued_values

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
SOURCE = ROOT / "notebooks" / "12_synthesis.py"
NOTEBOOK = ROOT / "notebooks" / "12_synthesis.ipynb"


@pytest.fixture(scope="module")
def glued() -> dict[str, str]:
    """Every value the stored notebook glues, by name (text, or markdown for tables)."""
    return glued_values(NOTEBOOK)


def _prose(source: str) -> str:
    """The chapter's markdown cells (comment lines of the percent format)."""
    cells = re.split(r"^# %%", source, flags=re.M)
    return "\n".join(c for c in cells if c.startswith(" [markdown]"))


def test_the_privacy_sentences_read_the_ledger(glued):
    assert glued["ch12_privacy_summary"] == ledger.privacy_summary(RESULTS)
    prose = _prose(SOURCE.read_text(encoding="utf-8"))
    assert "only {glue:text}" not in prose and "proven_privacy" not in prose
    claims = ledger.privacy_claims(RESULTS).set_index("paper")
    flaws = glued["ch12_flaws"]
    for paper in ledger.papers_with_flaw(DATA_DERIVED_BOUNDS.name):
        assert paper.title in flaws
        for leak in claims.loc[paper.key, "leaks"]:
            assert leak in flaws, f"{paper.key}'s leak is missing from chapter 12"


def test_the_claims_tally_uses_the_four_claim_verdicts(glued):
    counts = ledger.headline_claims(RESULTS)["verdict"].value_counts()
    for verdict in CLAIM_VERDICTS:
        assert glued[f"ch12_claims_{verdict.replace(' ', '_')}"] == str(
            int(counts.get(verdict, 0)))
        assert str(int(counts.get(verdict, 0))) in glued["ch12_claims_tally"]
    assert not re.search(r"\bmixed\b", _prose(SOURCE.read_text(encoding="utf-8")))
    assert "mixed" not in glued["ch12_claims_tally"]


def test_the_regime_table_follows_the_ranking_rule(glued):
    advice = ranking.recommendations(pd.read_csv(RESULTS / "leaderboard.csv"))
    rows = [line for line in glued["ch12_advice_table"].splitlines()
            if line.startswith("| $")]
    assert len(rows) == len(advice)
    for line, regime in zip(rows, advice.itertuples()):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == ranking.regime_label(regime.signal_regime, regime.d_regime)
        assert cells[2] == (f"`{regime.winner}`" if regime.winner else "none")
        assert f"`{regime.leader}`" in cells[3] and f"`{regime.runner_up}`" in cells[3]
    assert "first at" not in glued["ch12_advice_table"]
