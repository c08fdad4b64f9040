"""How ``book/_ext/pdf_layout.contents`` reads the printed contents back from pdftotext's text
(the PDF tests check every chapter against it, so a misreading accuses a correct PDF)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from pdf_layout import contents  # noqa: E402

FOOTER = "Private k-Means, Reproduced\n2 / 300"


def _pages(*lines: str) -> list[str]:
    return ["Title page", "\n".join(lines) + "\n" + FOOTER, "First page\nof the book"]


def test_each_title_gets_the_number_after_it():
    pages = _pages("Contents", "Front matter", "How to read this book", "", "7",
                   "Part I: Foundations", "1. Differential privacy", "", "9",
                   "1.1. The Laplace mechanism", "", "11")
    assert contents(pages) == [("How to read this book", 7), ("1. Differential privacy", 9),
                               ("1.1. The Laplace mechanism", 11)]


def test_a_title_of_two_lines_then_its_number():
    pages = _pages("Contents", "10. Budget schedules: APDPk-means and every way to split",
                   "epsilon over iterations", "", "301", "10.1. How much noise", "", "303")
    assert contents(pages) == [
        ("10. Budget schedules: APDPk-means and every way to split epsilon over iterations",
         301), ("10.1. How much noise", 303)]


def test_two_titles_before_their_two_numbers_go_in_order():
    pages = _pages("Contents", "1.9. Exercises", "2. Gaussian noise", "", "30", "", "31",
                   "2.1. The Gaussian mechanism", "", "33")
    assert contents(pages) == [("1.9. Exercises", 30), ("2. Gaussian noise", 31),
                               ("2.1. The Gaussian mechanism", 33)]


def test_a_mark_before_a_title_stays_with_it():
    pages = _pages("Contents", "∗", "6.8. Auditing the whole curve", "", "160",
                   "6.9. The gallery", "", "170")
    assert contents(pages) == [("∗ 6.8. Auditing the whole curve", 160),
                               ("6.9. The gallery", 170)]
