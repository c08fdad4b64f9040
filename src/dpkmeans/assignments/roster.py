"""The class roster: a CSV with a ``student_id`` column (and any others, such as ``name``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpkmeans.errors import DPKMeansError

__all__ = ["RosterError", "Student", "read_roster"]

#: A student id names the student's files, so it is a safe file name.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RosterError(DPKMeansError, ValueError):
    """The roster file cannot be used (the message names the row and the problem)."""


@dataclass(frozen=True)
class Student:
    student_id: str
    name: str = ""


def read_roster(path: str | Path) -> list[Student]:
    """The students of a roster CSV, in file order; every id checked (present, unique, a safe
    file name: letters, digits, ``.``, ``_``, ``-``)."""
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster file not found: {path}")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise RosterError(f"{path} is not a readable CSV file: {exc}") from exc
    if "student_id" not in table.columns:
        raise RosterError(f"{path} needs a 'student_id' column; it has {list(table.columns)}")
    if table.empty:
        raise RosterError(f"{path} lists no student")
    students, seen = [], set()
    for row, record in enumerate(table.to_dict("records"), start=2):  # row 1 is the header
        sid = record["student_id"].strip()
        if not _ID.match(sid):
            raise RosterError(f"{path}, row {row}: student_id {sid!r} must be 1-64 letters, "
                              "digits, '.', '_' or '-', starting with a letter or digit")
        if sid in seen:
            raise RosterError(f"{path}, row {row}: student_id {sid!r} appears twice")
        seen.add(sid)
        students.append(Student(sid, record.get("name", "").strip()))
    return students
