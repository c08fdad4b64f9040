"""Every statement of a paper's privacy agrees with the one source, the book-wide privacy
ledger (:func:`dpkmeans.synthesis.ledger.privacy_claims`: the as-published configurations'
flaw records and the committed audits): the flaws a chapter's sweep records in its paper-mode
runs, chapter 1's list of the papers that scale by the data, chapter 7's verdict on
DP-KCCM, chapter 12's privacy table, and the papers page (``book/papers.md``, whose
statements ``book/_ext/privacy_table.py`` computes when the book is built). The chapters are
read from their stored outputs, as the book shows them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.papers.dpkccm.study import Point, study_config
from dpkmeans.papers.dpkccm.variants import published_example as as_published
from dpkmeans.study.reading import join_names
from dpkmeans.synthesis import ledger
from tests.notebook_glue import glued_values

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
NOTEBOOKS = ROOT / "notebooks"
PAPERS_PAGE = ROOT / "book" / "papers.md"

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import privacy_table  # noqa: E402


def _claims():
    return ledger.privacy_claims(RESULTS).set_index("paper")


def test_what_the_paper_mode_runs_record_the_published_configuration_carries():
    """DP-KCCM's paper-mode sweep points scale by the data and record the leak; so must the
    configuration the ledger reads."""
    box = (-np.ones(2), np.ones(2))
    paper_mode = study_config(Point("allocation_nk", 3, 1.0, n=3, bounds="paper"), box, 1000)
    assert DATA_DERIVED_BOUNDS in paper_mode.flaws
    assert set(paper_mode.flaws) <= set(as_published().flaws)
    assert _claims().loc["dpkccm", "published"] != ledger.PRIVATE


def test_chapter_1_lists_the_papers_the_ledger_says_scale_by_the_data():
    glued = glued_values(NOTEBOOKS / "01_dp_laplace.ipynb")
    scaled = [p.title for p in ledger.papers_with_flaw(DATA_DERIVED_BOUNDS.name)]
    assert glued["ch1_scaling_papers"] == join_names(scaled)
    assert glued["ch1_scaling_count"] == f"{len(scaled)} of the {len(ledger.papers())}"
    assert "all five papers" not in (NOTEBOOKS / "01_dp_laplace.py").read_text()


def test_chapter_7_states_the_ledgers_verdict_on_dpkccm():
    glued = glued_values(NOTEBOOKS / "07_dpkccm.ipynb")
    claims = _claims()
    assert glued["ch7_published_status"] == claims.loc["dpkccm", "statement"]
    for leak in claims.loc["dpkccm", "leaks"]:
        assert leak in glued["ch7_published_leaks"]


def test_chapter_12s_privacy_table_gives_the_ledgers_status_for_every_paper():
    table = glued_values(NOTEBOOKS / "12_synthesis.ipynb")["ch12_privacy_table"]
    for paper, row in _claims().iterrows():
        line = next(line for line in table.splitlines() if f"<{row['chapter']}>" in line)
        assert f"| {row['published']} |" in line, (paper, line)


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_papers_page_states_privacy_only_through_the_ledger():
    text = PAPERS_PAGE.read_text(encoding="utf-8")
    claims = _claims()
    for paper in claims.index:
        assert f"{{privacy}}`{paper}`" in text, paper
    assert "```{privacy-table}" in text and "```{privacy-summary}" in text
    typed = re.sub(r"\{privacy\}`\w+`", "", _section(text, "The five papers"))
    typed = re.sub(r"\*\*[^*]+\*\*", "", typed)  # the papers' authors, in bold
    typed = re.sub(r"\*[^*]+\*", "", typed)  # and their titles, in italics
    # no verdict typed by hand: "private" appears only as "the private data"
    assert not re.search(r"\bprivate\b(?!\s+data)", typed), typed


def test_the_papers_page_extension_renders_the_ledger():
    claims = _claims()
    for paper, row in claims.iterrows():
        assert privacy_table.privacy_statement(RESULTS, paper) == row["statement"]
    rows = privacy_table.privacy_rows(RESULTS)
    assert [r[0] for r in rows] == list(claims["title"])
    for (_, status, relation, evidence, flaws), (_, row) in zip(rows, claims.iterrows()):
        assert row["published"] in status and evidence == row["evidence"]
        assert flaws == (", ".join(row["flaws"]) or "none")
        assert relation.startswith(row["neighbour"])  # every claim states its relation
        assert row["neighbour"] in ("add/remove", "replace")
    assert privacy_table.HEADER[1] == "As published"
