"""The class roster: a UTF-8 CSV with a ``student_id`` column, and optionally ``name``,
``email``, ``sis_id`` (the student information system's id) and ``section``, which the
learning-management-system exports carry (book: How to use)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpkmeans.errors import DPKMeansError

__all__ = ["OPTIONAL_COLUMNS", "SAFE_ID", "RosterError", "Student", "read_roster"]

#: A student id names the student's files, so it is a safe file name.
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

#: The roster's optional columns, kept in the key for the grade exports.
OPTIONAL_COLUMNS = ("name", "email", "sis_id", "section")


class RosterError(DPKMeansError, ValueError):
    """The roster file cannot be used (the message names the row and the problem)."""


@dataclass(frozen=True)
class Student:
    """One row of the roster."""

    student_id: str
    name: str = ""
    email: str = ""
    sis_id: str = ""
    section: str = ""


def read_roster(path: str | Path) -> list[Student]:
    """The students of a roster CSV, in file order; every id checked (present, unique, a safe
    file name: letters, digits, ``.``, ``_``, ``-``)."""
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster file not found: {path}")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterError(f"{path} is not UTF-8 text (byte {exc.start}): save the roster as "
                          "CSV UTF-8") from exc
    try:
        table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise RosterError(f"{path} is not a readable CSV file: {exc}") from exc
    if "student_id" not in table.columns:
        raise RosterError(f"{path} needs a 'student_id' column; it has {list(table.columns)}")
    if table.empty:
        raise RosterError(f"{path} lists no student")
    students, seen = [], set()
    for row, record in enumerate(table.to_dict("records"), start=2):  # row 1 is the header
        sid = record["student_id"].strip()
        if not SAFE_ID.match(sid):
            raise RosterError(f"{path}, row {row}: student_id {sid!r} must be 1-64 letters, "
                              "digits, '.', '_' or '-', starting with a letter or digit")
        if sid.lower() in seen:  # file names may ignore case
            raise RosterError(f"{path}, row {row}: student_id {sid!r} appears twice (ids "
                              "that differ only in case count as one)")
        seen.add(sid.lower())
        extra = {column: " ".join(str(record.get(column, "")).split())[:200]
                 for column in OPTIONAL_COLUMNS}
        students.append(Student(sid, **extra))
    return students
