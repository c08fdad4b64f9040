"""The claims ledger of the whole book (synthesis chapter), computed from committed files.

* **Headline claims**: every claim of the five papers, read from ``data/results/<paper>_claims.csv``
  (each paper's own ledger, written by its ``claims`` module). A claim's rows (datasets,
  metrics, readings) combine into one verdict (:func:`dpkmeans.claims.combine`: theirs if they
  all agree, else "mixed"); where a paper's rows also cover the corrected method, only the
  published method's rows count. The evidence is the tally of the rows' verdicts.
* **Privacy claims**: each paper's claim that its algorithm is private. The as-published
  configuration's recorded flaws (the engine's ledger) and, where the book ran one, the audit's
  verdict (``<paper>_audit.csv``) decide "refuted by audit" or "refuted by the ledger"; a
  configuration without a flaw is "proven here", with the chapter's theorem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..claims import combine
from ..engine import FLAWS, OVERSPENDING_FLAWS, DPLloydConfig

__all__ = ["PAPERS", "Paper", "headline_claims", "privacy_claims"]


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    chapter: str  # the chapter's document name
    theorem: str  # the label of the book's privacy theorem for the (corrected) algorithm
    published: Callable[[], DPLloydConfig]


def _box(d: int = 2) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(d), np.ones(d)


def _dpkccm() -> DPLloydConfig:
    from ..papers.dpkccm.variants import allocation_nk
    return allocation_nk(3, 1.0, _box())


def _silhouette() -> DPLloydConfig:
    from ..papers.silhouette.variants import as_published
    return as_published(3, 1.0, _box())


def _colored() -> DPLloydConfig:
    from ..papers.colored.variants import as_published
    return as_published(3, 1.0, 1e-5, _box())


def _apdp() -> DPLloydConfig:
    from ..papers.apdp.variants import as_published
    return as_published(3, 1.0, _box(), n_records=1000)


def _di() -> DPLloydConfig:
    from ..papers.di.variants import kmeans_as_published
    return kmeans_as_published(_box(), rho=0.05, m=10001)


PAPERS: tuple[Paper, ...] = (
    Paper("dpkccm", "DP-KCCM (seed 000)", "07_dpkccm", "thm-dpkccm-private", _dpkccm),
    Paper("silhouette", "Silhouette-weighted budgets (seed 001)", "08_silhouette",
          "thm-silhouette-corrected", _silhouette),
    Paper("colored", "Colored Gaussian noise (seed 002)", "09_colored", "thm-colored-dplloyd",
          _colored),
    Paper("apdp", "APDPk-means (seed 003)", "10_schedules", "thm-ap-schedule", _apdp),
    Paper("di", "Differential identifiability (seed 004)", "11_identifiability", "thm-di-dp",
          _di),
)


def _published_rows(claim: pd.DataFrame) -> pd.DataFrame:
    """A claim's rows about the published method, where the rows also cover the corrected."""
    for column in ("method", "setting"):
        if column in claim:
            published = claim[column].astype(str).str.contains("published")
            corrected = claim[column].astype(str).str.contains("corrected")
            if published.any() and corrected.any():
                return claim[published]
    return claim


def headline_claims(results: str | Path) -> pd.DataFrame:
    """One row per claim of every paper: its text, combined verdict and the verdicts' tally."""
    rows = []
    for paper in PAPERS:
        table = pd.read_csv(Path(results) / f"{paper.key}_claims.csv", dtype={"claim": str})
        text = "text" if "text" in table else "statement"
        for claim_id, claim in table.groupby("claim", sort=False):
            claim = _published_rows(claim)
            verdicts = list(claim["verdict"])
            tested = [v for v in verdicts if v != "not tested"]
            tally = ", ".join(f"{v}: {n}" for v, n in pd.Series(verdicts).value_counts().items())
            rows.append({"paper": paper.key, "title": paper.title, "chapter": paper.chapter,
                         "claim": f"{paper.key}-{claim_id}", "text": claim[text].iloc[0],
                         "verdict": combine(tested) if tested else "not tested",
                         "rows": len(verdicts), "evidence": tally})
    return pd.DataFrame(rows)


def privacy_claims(results: str | Path) -> pd.DataFrame:
    """One row per paper: is the published algorithm private? From its recorded flaws and the
    book's audit of it, where there is one."""
    rows = []
    for paper in PAPERS:
        flaws = paper.published().flaws
        audit_path = Path(results) / f"{paper.key}_audit.csv"
        audit = pd.read_csv(audit_path) if audit_path.exists() else None
        if audit is not None:  # the audits of the published algorithm, not the corrected one
            audit = audit[audit["name"].str.contains("published")]
        violations = 0 if audit is None else int(
            (audit["verdict"] == "violation detected").sum())
        if violations:
            status = "refuted by audit"
            evidence = (f"{violations} of {len(audit)} audited settings of the published "
                        f"algorithm show a violation ({audit_path.name})")
        elif flaws:
            status = "refuted by the ledger"
            evidence = "recorded flaws"
        else:
            status = "proven here"
            evidence = "no flaw recorded"
        leaks = [f for f in flaws if f not in OVERSPENDING_FLAWS]
        over = [f for f in flaws if f in OVERSPENDING_FLAWS]
        rows.append({"paper": paper.key, "title": paper.title, "chapter": paper.chapter,
                     "published": status, "evidence": evidence,
                     "leaks": "; ".join(FLAWS[f] for f in leaks) or "-",
                     "overspends": "; ".join(FLAWS[f] for f in over) or "-",
                     "theorem": paper.theorem})
    return pd.DataFrame(rows)
