"""Every privacy statement of a plain page (``book/papers.md``), computed at build time from the
book-wide privacy ledger (:func:`dpkmeans.synthesis.ledger.privacy_claims`): the published
configurations' flaw records and the committed audits (``data/results/*_audit.csv``).

* The role ``{privacy}`<paper key>``` writes one paper's privacy as published, in one phrase:
  "not private as published (refuted by the ledger: 2 flaws recorded in the published
  configuration's ledger)".
* The directive ``{privacy-table}`` writes a table of every paper of the ledger: the paper,
  its privacy as published, the evidence and the flaws its published configuration records.
* The directive ``{privacy-summary}`` writes the book-wide verdict in one sentence
  (:func:`dpkmeans.synthesis.ledger.privacy_summary`).

The page states nothing the ledger does not say, in an executed build and in a build from
stored outputs alike: neither executes a notebook, both read the library and the committed
files. A page that uses them is read again in every build, so that it never lags behind a
flaw record or an audit that changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

#: The table's columns.
HEADER = ("Paper", "As published", "Neighbours", "Evidence", "Flaws recorded")


def _claims(results: str | Path) -> pd.DataFrame:
    from dpkmeans.synthesis.ledger import privacy_claims

    return privacy_claims(results).set_index("paper", drop=False)


def _results(app: Sphinx) -> Path:
    """The committed results of the book being built (its source is the repository)."""
    return Path(app.srcdir) / "data" / "results"


def privacy_statement(results: str | Path, key: str) -> str:
    """One paper's privacy as published, in one phrase (the ledger's ``statement``)."""
    claims = _claims(results)
    if key not in claims.index:
        raise KeyError(f"no paper {key!r} in the privacy ledger; its papers are "
                       f"{sorted(claims.index)}")
    return str(claims.loc[key, "statement"])


def privacy_rows(results: str | Path) -> list[tuple[str, str, str, str, str]]:
    """The table's rows, one per paper of the ledger, in the book's order (:data:`HEADER`):
    the neighbour relation the paper's claim is under."""
    from dpkmeans.synthesis.ledger import PRIVATE

    return [(row.title, f"{'private' if row.published == PRIVATE else 'not private'} "
             f"({row.published})",
             row.neighbour,
             row.evidence, ", ".join(row.flaws) or "none")
            for row in _claims(results).itertuples()]


def _mark_dependencies(directive_or_role: Any, results: Path) -> None:
    """Re-read the page in every build (the ledger reads code and committed files)."""
    env = directive_or_role.env
    for path in sorted(results.glob("*_audit.csv")):
        env.note_dependency(str(path))
    env.note_reread()


class PrivacyRole(SphinxRole):
    """``{privacy}`dpkccm```: the paper's privacy as published, from the ledger."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        results = _results(self.env.app)
        _mark_dependencies(self, results)
        try:
            text = privacy_statement(results, self.text.strip())
        except KeyError as error:
            message = self.inliner.reporter.error(str(error), line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        return [nodes.inline(self.rawtext, text, classes=["privacy-statement"])], []


def _table(rows: list[tuple[str, ...]]) -> nodes.table:
    table = nodes.table(classes=["privacy-table"])
    group = nodes.tgroup(cols=len(HEADER))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in HEADER]
    head, body = nodes.thead(), nodes.tbody()
    group += [head, body]
    for target, cells in ((head, [HEADER]), (body, rows)):
        for cells_of_row in cells:
            row = nodes.row()
            for text in cells_of_row:
                row += nodes.entry("", nodes.paragraph(text=text))
            target += row
    return table


class PrivacyTable(SphinxDirective):
    """``{privacy-table}``: every paper's privacy as published, from the ledger."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        results = _results(self.env.app)
        _mark_dependencies(self, results)
        return [_table(privacy_rows(results))]


class PrivacySummary(SphinxDirective):
    """``{privacy-summary}``: the book-wide verdict in one sentence, from the ledger."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from dpkmeans.synthesis.ledger import privacy_summary

        results = _results(self.env.app)
        _mark_dependencies(self, results)
        return [nodes.paragraph(text=privacy_summary(results))]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_role("privacy", PrivacyRole())
    app.add_directive("privacy-table", PrivacyTable)
    app.add_directive("privacy-summary", PrivacySummary)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
