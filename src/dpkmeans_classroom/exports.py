"""What grading writes: the grades table, the exports a learning-management system imports,
and one feedback file per student, all safe to open in a spreadsheet.

- ``grades.csv``: one row per student (status, sandbox level, score, each question's points
  and feedback);
- ``canvas.csv``: Canvas's gradebook import (columns ``Student``, ``ID``, ``SIS User ID``,
  ``SIS Login ID``, ``Section``, then one column named after the assignment; Canvas matches a
  row by ``SIS User ID`` or ``ID``, and a new column name creates the assignment);
- ``moodle.csv``: Moodle's "Import grades from CSV" (``ID number``, ``Email address``, the
  grade and a feedback column with the status and each question's points and feedback, each
  mapped to the grade item on import);
- ``feedback/<student_id>.md``: each question's points and feedback.

Every text cell of every CSV is neutralised against formula injection: a cell that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading apostrophe, so a
spreadsheet shows it as text instead of running it. Every file is written to a temporary
name and renamed into place (:mod:`dpkmeans.files`), so an interrupted run leaves the earlier
files whole.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans import files

__all__ = ["FORMULA_STARTS", "canvas_table", "feedback_markdown", "moodle_table",
           "neutralise", "write_csv"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value`` safe for a spreadsheet cell: text starting like a formula gets a ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(table: pd.DataFrame, path: Path) -> None:
    """``table`` as CSV, every header and text cell neutralised, written atomically."""
    safe = table.rename(columns=lambda c: neutralise(str(c))).map(neutralise)
    files.write_csv(safe, path)


def canvas_table(grades: pd.DataFrame, students: Mapping[str, Mapping[str, Any]],
                 column: str) -> pd.DataFrame:
    """The Canvas gradebook import: one row per student, the score under ``column``."""
    rows = []
    for _, row in grades.iterrows():
        entry = students[row["student_id"]]
        rows.append({"Student": entry.get("name") or row["student_id"], "ID": "",
                     "SIS User ID": entry.get("sis_id") or row["student_id"],
                     "SIS Login ID": entry.get("email", ""), "Section": entry.get("section", ""),
                     column: row["score"]})
    return pd.DataFrame(rows, columns=["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                       column])


def moodle_table(grades: pd.DataFrame, students: Mapping[str, Mapping[str, Any]],
                 column: str, questions: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Moodle's CSV grade import: identifier columns, the grade and its feedback, which holds
    the status, the score and each of the student's ``questions`` with its points and
    feedback line (HTML-escaped: Moodle shows feedback as HTML)."""
    rows = []
    for _, row in grades.iterrows():
        sid = row["student_id"]
        entry = students[sid]
        marks = [f"{number} ({question.variable}): {row[question.variable]:g} of "
                 f"{question.points:g}, {_plain(row[f'{question.variable}_feedback'])}"
                 for number, question in enumerate(questions[sid], start=1)]
        rows.append({"ID number": entry.get("sis_id") or sid,
                     "Email address": entry.get("email", ""), column: row["score"],
                     "Feedback": "; ".join([f"{_plain(row['status'])}, score "
                                            f"{row['score']:g} of {row['max_score']:g}",
                                            *marks])})
    return pd.DataFrame(rows, columns=["ID number", "Email address", column, "Feedback"])


def _plain(text: Any) -> str:
    """Text of the student's notebook (values, error messages) on one line, HTML-escaped."""
    return html.escape(" ".join(str(text).split()), quote=False)


def feedback_markdown(title: str, row: Mapping[str, Any], questions: Sequence[Any]) -> str:
    """One student's feedback: status, score, and each question's points and feedback.

    Text that came from the student's notebook (values, error messages) is HTML-escaped and
    kept on one line, so the file renders as the grader wrote it."""
    def plain(text: Any) -> str:
        return _plain(text).replace("|", "\\|")

    lines = [f"# Feedback: {title}", "",
             f"- Student: {plain(row['student_id'])}",
             f"- Status: {plain(row['status'])}",
             f"- Score: {row['score']:g} of {row['max_score']:g}", "",
             "| Question | Points | Feedback |", "|---|---|---|"]
    for number, question in enumerate(questions, start=1):
        name = question.variable
        lines.append(f"| {number} (`{name}`) | {row[name]:g} of {question.points:g} | "
                     f"{plain(row[f'{name}_feedback'])} |")
    return "\n".join(lines) + "\n"
