"""The claims ledger of the whole book (synthesis chapter), computed from committed files.

* **Headline claims**: every claim of the papers (:func:`papers`: those of the registry with an
  as-published configuration), read from ``data/results/<paper>_claims.csv`` (each paper's own
  ledger, written by its finisher). A claim's rows (datasets, metrics, readings: each one test)
  combine into one of the claim verdicts :data:`~dpkmeans.study.claims.CLAIM_VERDICTS`
  (:func:`dpkmeans.study.claims.combine`: "holds", "holds in part", "not supported" or
  "inconclusive"). Where a paper's rows also test the corrected method
  (a ``method`` or ``setting`` that says "corrected"), the claim gets two verdicts, one for the
  published method (every other row) and one for the corrected. The evidence is the tally of
  the rows' verdicts, in words.
* **Privacy claims**: each paper's claim that its algorithm is private. The as-published
  configuration's recorded flaws (the engine's ledger) and, where the book ran one, the audit's
  verdict (``<paper>_audit.csv``) decide "refuted by audit" or "refuted by the ledger"; a
  configuration without a flaw is "proven here", with the chapter's theorem. This is the one
  source of every statement of a paper's privacy in the book: the chapters, the synthesis
  chapter and the papers page read it (:func:`privacy_summary`, :func:`papers_with_flaw`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.papers.registry import paper as paper_record
from dpkmeans.papers.registry import records
from dpkmeans.study.claims import combine, tally
from dpkmeans.study.reading import join_names

__all__ = ["PAPERS", "PRIVATE", "Paper", "headline_claims", "papers",
           "papers_with_flaw", "privacy_claims", "privacy_summary"]

#: The status of a published algorithm the book proves private (:func:`privacy_claims`).
PRIVATE = "proven here"


@dataclass(frozen=True)
class Paper:
    """A paper as the ledger reads it: its key (:mod:`dpkmeans.papers.registry`), the label of
    the book's privacy theorem for its corrected algorithm, and its published configuration."""

    key: str
    theorem: str  # the label of the book's privacy theorem for the (corrected) algorithm
    published: Callable[[], DPLloydConfig]

    @property
    def title(self) -> str:
        """The method and its paper, as the book names them."""
        return paper_record(self.key).name

    @property
    def chapter(self) -> str:
        """The chapter's document name."""
        return paper_record(self.key).chapter


def papers() -> tuple[Paper, ...]:
    """The papers of the ledger, in the book's order: every paper of the registry with an
    as-published configuration (:attr:`~dpkmeans.papers.registry.PaperRecord.published`); each
    has a claims ledger ``<key>_claims.csv``."""
    return tuple(Paper(r.key, r.theorem, r.published) for r in records()
                 if r.published is not None)


def __getattr__(name: str) -> tuple[Paper, ...]:
    """``PAPERS``: :func:`papers` now (PEP 562), for the callers that read the constant."""
    if name == "PAPERS":
        return papers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _split_rows(claim: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A claim's rows about the published method and about the corrected one (empty when the
    paper's ledger does not test a corrected method for this claim)."""
    for column in ("method", "setting"):
        if column in claim:
            corrected = claim[column].astype(str).str.contains("corrected")
            if corrected.any():
                return claim[~corrected], claim[corrected]
    return claim, claim.iloc[:0]


def _verdict(rows: pd.DataFrame) -> str:
    tested = [v for v in rows["verdict"] if v != "not tested"]
    return combine(tested) if tested else "not tested"


def _tally(rows: pd.DataFrame) -> str:
    """The rows' verdicts in words (:func:`dpkmeans.study.claims.tally`): ``holds in 8 of 8
    tests``, ``refuted in 2 and inconclusive in 1 of 3 tests``."""
    return tally(rows["verdict"])


def headline_claims(results: str | Path) -> pd.DataFrame:
    """One row per claim of every paper: its text, the published method's combined verdict
    (``verdict``) and the corrected method's (``corrected``, "" where not tested), and the
    verdicts' tallies in words."""
    rows = []
    for paper in papers():
        table = pd.read_csv(Path(results) / f"{paper.key}_claims.csv", dtype={"claim": str})
        text = "text" if "text" in table else "statement"
        for claim_id, claim in table.groupby("claim", sort=False):
            published, corrected = _split_rows(claim)
            rows.append({"paper": paper.key, "title": paper.title, "chapter": paper.chapter,
                         "claim": f"{paper.key}-{claim_id}", "text": claim[text].iloc[0],
                         "verdict": _verdict(published), "rows": len(published),
                         "evidence": _tally(published),
                         "corrected": _verdict(corrected) if len(corrected) else "",
                         "corrected_evidence": _tally(corrected) if len(corrected) else ""})
    return pd.DataFrame(rows)


def _statement(status: str, evidence: str) -> str:
    """One paper's privacy in one phrase: ``not private as published (refuted by the
    ledger: 2 flaws recorded in the published configuration's ledger)``."""
    private = "private" if status == PRIVATE else "not private"
    return f"{private} as published ({status}: {evidence})"


def privacy_claims(results: str | Path) -> pd.DataFrame:
    """One row per paper: is the published algorithm private? From its recorded flaws and the
    book's audit of it, where there is one.

    Columns: ``paper``, ``title``, ``chapter``; ``published``, the status ("refuted by audit",
    "refuted by the ledger" or :data:`PRIVATE`, "proven here"); ``evidence``, its reason in
    words; ``leaks`` and ``overspends``, the flaws' texts
    (:class:`dpkmeans.engine.flaws.Flaw`), split as the ledger treats them; ``flaws``, the
    flaws' names; ``statement``, the row in one phrase ("not private as published (refuted
    by the ledger: ...)"); ``theorem``, the label of the book's theorem for the corrected
    algorithm; ``neighbour``, the neighbour relation its privacy claim is stated under (the
    published configuration's).
    """
    rows = []
    for paper in papers():
        published = paper.published()
        flaws = published.flaws
        audit_path = Path(results) / f"{paper.key}_audit.csv"
        audit = pd.read_csv(audit_path) if audit_path.exists() else None
        if audit is not None:  # the audits of the published algorithm, not the corrected one
            audit = audit[audit["name"].str.contains("published")]
        violations = 0 if audit is None else int(
            (audit["verdict"] == "violation detected").sum())
        if violations:
            status = "refuted by audit"
            evidence = (f"{violations} of {len(audit)} audited settings of the published "
                        "algorithm show a violation")
        elif flaws:
            status = "refuted by the ledger"
            evidence = (f"{len(flaws)} flaw{'s' if len(flaws) != 1 else ''} recorded in the "
                        "published configuration's ledger")
        else:
            status = PRIVATE
            evidence = "no flaw recorded"
        rows.append({"paper": paper.key, "title": paper.title, "chapter": paper.chapter,
                     "published": status, "evidence": evidence,
                     "leaks": tuple(f.text for f in flaws if not f.overspends),
                     "overspends": tuple(f.text for f in flaws if f.overspends),
                     "flaws": tuple(f.name for f in flaws),
                     "statement": _statement(status, evidence),
                     "theorem": paper.theorem, "neighbour": published.neighbour})
    return pd.DataFrame(rows)


def papers_with_flaw(name: str) -> tuple[Paper, ...]:
    """The papers whose published configuration carries the flaw called ``name`` (e.g.
    ``"data-derived-bounds"``, :data:`dpkmeans.engine.flaws.DATA_DERIVED_BOUNDS`), in the
    book's order."""
    return tuple(p for p in papers() if name in {f.name for f in p.published().flaws})


def privacy_summary(results: str | Path) -> str:
    """The book-wide privacy verdict in one sentence, from :func:`privacy_claims`: how many of
    the published algorithms are private as published, and which.

    Examples: "None of the 5 published algorithms is private as published: 2 refuted by
    audit and 3 refuted by the ledger." or "1 of the 5 published algorithms is private as
    published: DP-KCCM (Ni et al., 2021)."
    """
    claims = privacy_claims(results)
    n = len(claims)
    private = list(claims.loc[claims["published"] == PRIVATE, "title"])
    if private:
        verb = "is" if len(private) == 1 else "are"
        return (f"{len(private)} of the {n} published algorithms {verb} private as "
                f"published: {join_names(private)}.")
    counts = claims["published"].value_counts()
    how = [f"{int(counts[status])} {status}" for status in counts.index]
    return f"None of the {n} published algorithms is private as published: {join_names(how)}."
