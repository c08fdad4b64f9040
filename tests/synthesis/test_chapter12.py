"""Chapter 12 (``notebooks/12_synthesis``) states what the library computes: its privacy
sentences read the ledger (:func:`dpkmeans.synthesis.ledger.privacy_claims`), its claims tally
uses the four claim verdicts of chapter 7, its regime tables follow the ranking rule of
:func:`dpkmeans.synthesis.ranking.recommendations` at each delta with the privacy definition
in every row (:func:`dpkmeans.synthesis.advice.regime_advice`), and its smallest epsilons, rule
of thumb, changes with delta and noise table are those of :mod:`dpkmeans.synthesis.advice` and
:mod:`dpkmeans.synthesis.noise_table`. The checks read the glued values stored in the executed
notebook, as the book shows them, against the leaderboard the notebook reads
(:func:`dpkmeans.study.committed.committed_file`)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.study.claims import CLAIM_VERDICTS
from dpkmeans.study.committed import committed_file
from dpkmeans.study.reading import number, percent
from dpkmeans.synthesis import advice, ledger, noise_table, ranking
from tests.notebook_glue import glued_values

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
SOURCE = ROOT / "notebooks" / "12_synthesis.py"
NOTEBOOK = ROOT / "notebooks" / "12_synthesis.ipynb"


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    """The leaderboard, from where the notebook reads it."""
    return pd.read_csv(committed_file("data/results/leaderboard.csv"))


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


@pytest.mark.parametrize("tag, which", [("pure", 0), ("approx", -1)])
def test_the_regime_tables_follow_the_ranking_rule_at_each_delta(glued, board, tag, which):
    delta = advice.deltas(board)[which]
    expected = advice.regime_advice(board, delta)
    rows = [line for line in glued[f"ch12_advice_table_{tag}"].splitlines()
            if line.startswith("| $")]
    assert len(rows) == len(expected)
    for line, regime in zip(rows, expected.itertuples()):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == ranking.regime_label(regime.signal_regime, regime.d_regime)
        # every row flags delta, the neighbour relation and the accounting
        assert cells[1] == regime.definition and "add/remove" in cells[1]
        assert cells[1].startswith("δ = 0," if delta == 0 else "δ = 1e-")
        assert cells[3] == (f"`{regime.winner}`" if regime.winner else "none")
        assert f"`{regime.leader}`" in cells[4] and f"`{regime.runner_up}`" in cells[4]
    assert "first at" not in glued[f"ch12_advice_table_{tag}"]


def test_the_ranked_contenders_are_at_equal_privacy(board):
    for delta in advice.deltas(board):
        rows = advice.contenders(board, delta)
        assert (rows["neighbour"] == "add/remove").all()
        assert rows["delta"].nunique() == 1
    assert advice.deltas(board)[0] == 0.0


def test_the_changes_with_delta_are_computed(glued, board):
    changes = advice.winner_changes(board)
    moved = changes[changes["leader_changes"]]
    assert glued["ch12_n_leader_changes"] == f"{len(moved)} of the {len(changes)}"
    for row in moved.itertuples():
        assert f"{row.leader_low} at δ = 0" in glued["ch12_leader_changes"]


def test_the_smallest_epsilons_read_the_upper_bound(glued, board):
    reach = advice.smallest_epsilon(board)  # rel_nicv_ci_high, staying within
    rows = [line for line in glued["ch12_reach_table"].splitlines()[2:]]
    assert len(rows) == reach["case"].nunique()
    deltas = advice.deltas(board)
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        own = reach[reach["dataset"] == cells[0]]
        shown = iter(cells[4:])
        for delta in deltas:
            for level in advice.THRESHOLDS:
                best = own.loc[own["delta"] == delta, f"eps_{level:g}"].min()
                cell = next(shown)
                assert cell == "–" if pd.isna(best) else cell.startswith(f"{number(best)} (")


def test_the_rule_of_thumb_is_computed(glued, board):
    for tag, delta in (("pure", 0.0), ("approx", advice.deltas(board)[-1])):
        points = advice.leader_at_points(board, delta)
        for level in advice.THRESHOLDS:
            text = glued[f"ch12_rule_{tag}_{round(100 * level)}"]
            for row in advice.signal_needed(points, level).itertuples():
                if not pd.isna(row.signal_from):
                    assert f"Nε/k ≥ {number(row.signal_from)} is within {percent(level)}" \
                        in text


def test_the_noise_table_is_the_library_s():
    table = noise_table.noise_per_coordinate(dims=(2, 50))
    at = table.set_index(["algorithm", "d"])
    glued = glued_values(NOTEBOOK)["ch12_noise_gauss"]
    for algorithm in dict.fromkeys(table["algorithm"]):
        assert f"for {algorithm}, {number(at.loc[(algorithm, 2), 'Gaussian / pure'])} at " \
            f"d = 2 and {number(at.loc[(algorithm, 50), 'Gaussian / pure'])} at d = 50" \
            in glued
