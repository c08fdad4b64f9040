"""The five papers the book reproduces, one record each: how the book names them everywhere.

Prose, tables, claims ledgers and warnings name a paper by its authors and year and its
method (``Ni et al. (2021), DP-KCCM``), never by an internal number; the book's "The papers"
page gives the full references (``book/references.bib``, keys :attr:`PaperRecord.bibkey`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["PAPER_RECORDS", "PaperRecord", "paper", "paper_of_data_key"]


@dataclass(frozen=True)
class PaperRecord:
    """How the book names one paper, and where it treats it."""

    key: str  #: the library's name of the paper (``dpkmeans.papers.<key>``)
    authors: str  #: the authors in short, as cited ("Ni et al."); "" if unknown
    year: str  #: the year of publication; "" if unknown
    title: str  #: the full title
    method: str  #: the method's name in the book ("DP-KCCM")
    chapter: str  #: the chapter's document name ("07_dpkccm")
    bibkey: str  #: its key in book/references.bib
    data_key: str  #: its key in data/datasets.toml (``load(name, paper=...)``)

    @property
    def cite(self) -> str:
        """Authors and year, as prose cites the paper: ``Ni et al. (2021)``."""
        if not self.authors:
            return f"the {self.method} paper (authors unknown)"
        return f"{self.authors} ({self.year})"

    @property
    def name(self) -> str:
        """The method with its paper: ``DP-KCCM (Ni et al., 2021)``."""
        if not self.authors:
            return f"{self.method} (authors unknown)"
        return f"{self.method} ({self.authors}, {self.year})"


_RECORDS = (
    PaperRecord("dpkccm", "Ni et al.", "2021",
                "Utility-efficient differentially private K-means clustering based on cluster "
                "merging", "DP-KCCM", "07_dpkccm", "ni_dpkccm", "dp-kccm"),
    PaperRecord("silhouette", "Zhang, Liu and Wang", "2018",
                "A differential privacy protecting K-means clustering algorithm based on "
                "contour coefficients", "silhouette-weighted budgets", "08_silhouette",
                "zhang2018contour", "silhouette"),
    PaperRecord("colored", "Ravi, Scaglione and Peisert", "2021",
                "Colored noise mechanism for differentially private clustering",
                "colored Gaussian noise", "09_colored", "ravi2021colored", "colored-noise"),
    PaperRecord("apdp", "", "",
                "APDPk-means: a new differential privacy clustering algorithm based on "
                "arithmetic progression privacy budget allocation", "APDPk-means",
                "10_schedules", "apdpkmeans", "apdp"),
    PaperRecord("di", "Shang et al.", "2021",
                "Differential identifiability clustering algorithms for big data analysis",
                "differential identifiability", "11_identifiability", "shang2021di", "di"),
)

#: The papers by key, in the book's order.
PAPER_RECORDS = MappingProxyType({r.key: r for r in _RECORDS})


def paper(key: str) -> PaperRecord:
    """The record of paper ``key``; a ``ValueError`` naming the known keys otherwise."""
    try:
        return PAPER_RECORDS[key]
    except KeyError:
        raise ValueError(f"no paper {key!r}; the papers are {', '.join(PAPER_RECORDS)}") from None


def paper_of_data_key(data_key: str) -> PaperRecord:
    """The record of the paper that the dataset registry calls ``data_key`` ("dp-kccm")."""
    for record in _RECORDS:
        if record.data_key == data_key:
            return record
    raise ValueError(f"no paper {data_key!r} in the dataset registry's keys; they are "
                     f"{', '.join(r.data_key for r in _RECORDS)}")
