"""Making a class's assignments and grading their submissions (the ``assignments`` commands).

``make`` writes, into one directory::

    template.ipynb            the assignment with example parameters (for the instructor)
    students/<id>.ipynb       one notebook per student, their parameters injected (hand out)
    instructor/key.json       parameters and reference answers of every student (keep hidden:
                              the folder is mode 0700 and the key 0600)
    instructor/parameters.csv the same parameters as a table

``grade`` (:mod:`~dpkmeans.assignments.grading`) runs each submission in a sandbox and writes
the grades, the exports and the feedback.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans.assignments import notebook
from dpkmeans.assignments.exports import write_csv
from dpkmeans.assignments.key import KEY_FORMAT, key_path, write_private
from dpkmeans.assignments.registry import get_assignment
from dpkmeans.assignments.roster import read_roster
from dpkmeans.assignments.spec import Assignment, student_parameters
from dpkmeans.errors import DPKMeansError

__all__ = ["make_assignments"]


def make_assignments(roster: str | Path, chapter: int, out: str | Path, *, course_seed: int,
                     overwrite: bool = False) -> pd.DataFrame:
    """Write every student's notebook and the hidden key (module docstring); returns the
    parameters table. Everything is built in a temporary folder beside ``out`` and renamed
    into place at the end, so a failure leaves no half-written assignment."""
    assignment = get_assignment(chapter)
    students = read_roster(roster)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DPKMeansError(f"{out} is a file, not a folder")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise DPKMeansError(f"{out} exists and is not empty (pass overwrite=True / "
                                "--overwrite to replace an earlier `assignments make`)")
        if not key_path(out).is_file():
            raise DPKMeansError(f"{out} was not written by `assignments make` (no "
                                "instructor/key.json): not deleting it")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        table = _write_assignment(assignment, students, staging, course_seed)
        if out.exists():
            shutil.rmtree(out)
        staging.chmod(0o755)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return table


def _write_assignment(assignment: Assignment, students: list, folder: Path,
                      course_seed: int) -> pd.DataFrame:
    (folder / "students").mkdir()
    (folder / "instructor").mkdir(mode=0o700)
    example = {"STUDENT": "example", "SEED": 0, **dict(assignment.fixed),
               **{name: choices[0] for name, choices in assignment.pools.items()}}
    template = folder / "template.ipynb"
    notebook.write(notebook.build_notebook(assignment, example), template)
    key: dict[str, Any] = {"format": KEY_FORMAT, "chapter": assignment.chapter,
                           "slug": assignment.slug, "course_seed": course_seed, "students": {}}
    rows = []
    for student in students:
        parameters = student_parameters(assignment, course_seed, student.student_id)
        notebook.parametrize(template, folder / "students" / f"{student.student_id}.ipynb",
                             parameters)
        key["students"][student.student_id] = {
            "name": student.name, "email": student.email, "sis_id": student.sis_id,
            "section": student.section, "parameters": parameters,
            "answers": assignment.references(parameters)}
        rows.append({"student_id": student.student_id, "name": student.name, **parameters})
    write_private(key_path(folder), json.dumps(key, indent=1))
    table = pd.DataFrame(rows)
    write_csv(table, folder / "instructor" / "parameters.csv")
    return table
