"""The papers' names (dpkmeans.papers.registry): one record per paper, matching the dataset
registry, the bibliography and the table of contents."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkmeans.data import get_registry
from dpkmeans.papers.registry import PAPER_RECORDS, paper, paper_of_data_key

ROOT = Path(__file__).resolve().parents[1]


def test_every_paper_is_in_the_data_registry_the_bibliography_and_the_book():
    bib = (ROOT / "book" / "references.bib").read_text()
    toc = (ROOT / "_toc.yml").read_text()
    assert set(r.data_key for r in PAPER_RECORDS.values()) == set(get_registry().papers)
    for record in PAPER_RECORDS.values():
        assert paper_of_data_key(record.data_key) is record is paper(record.key)
        assert f"{{{record.bibkey}," in bib
        assert f"notebooks/{record.chapter}" in toc


def test_names_are_authors_and_year_and_unknown_keys_are_named():
    assert paper("dpkccm").cite == "Ni et al. (2021)"
    assert paper("apdp").name == "APDPk-means (authors unknown)"
    with pytest.raises(ValueError, match="dpkccm"):
        paper("seed 000")
    with pytest.raises(ValueError, match="dp-kccm"):
        paper_of_data_key("dpkccm")
