"""Making a class's assignments and grading their submissions (``python -m
dpkmeans_classroom make`` and ``grade``).

``make`` writes, into one directory::

    template.ipynb            the assignment with example parameters (for the instructor)
    students/<id>.ipynb       one notebook per student, their parameters injected (hand out)
    instructor/key.json       parameters and reference answers of every student (keep hidden:
                              the folder is mode 0700 and the key 0600)
    instructor/parameters.csv the same parameters as a table (and, with ``--questions N``,
                              which questions each student was asked)

``grade`` (:mod:`~dpkmeans_classroom.grading`) runs each submission in a sandbox and writes
the grades, the exports and the feedback.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom import notebook
from dpkmeans_classroom.exports import write_csv
from dpkmeans_classroom.key import KEY_FORMAT, key_path, write_private
from dpkmeans_classroom.registry import get_assignment
from dpkmeans_classroom.roster import read_roster
from dpkmeans_classroom.spec import Assignment, student_parameters, student_questions

__all__ = ["make_assignments"]


def make_assignments(roster: str | Path, chapter: int, out: str | Path, *, course_seed: int,
                     overwrite: bool = False, questions: int | None = None) -> pd.DataFrame:
    """Write every student's notebook and the hidden key (module docstring); returns the
    parameters table. Everything is built in a temporary folder beside ``out`` and renamed
    into place at the end, so a failure leaves no half-written assignment.

    With ``questions`` (``--questions N``), each student is asked their own ``N`` of the
    chapter's questions (:func:`~dpkmeans_classroom.spec.student_questions`); the key
    records which, and grading marks those only. A folder that cannot be written is a
    :class:`~dpkmeans.errors.DPKMeansError` naming it."""
    assignment = get_assignment(chapter)
    if questions is not None:
        try:  # the count is checked before anything is written
            student_questions(assignment, course_seed, "check", questions)
        except ValueError as exc:
            raise DPKMeansError(f"--questions: {exc}") from exc
    students = read_roster(roster)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DPKMeansError(f"{out} is a file, not a folder")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise DPKMeansError(f"{out} exists and is not empty (pass overwrite=True / "
                                "--overwrite to replace an earlier `dpkmeans_classroom make`)")
        if not key_path(out).is_file():
            raise DPKMeansError(f"{out} was not written by `dpkmeans_classroom make` (no "
                                "instructor/key.json): not deleting it")
    with _writing(out):
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        table = _write_assignment(assignment, students, staging, course_seed, questions)
        with _writing(out):
            if out.exists():
                shutil.rmtree(out)
            staging.chmod(0o755)
            staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return table


@contextlib.contextmanager
def _writing(out: Path) -> Iterator[None]:
    """An OSError while creating or replacing ``out`` as one :class:`DPKMeansError`."""
    try:
        yield
    except OSError as exc:
        why = ("a part of that path is a file, not a folder"
               if isinstance(exc, FileExistsError | NotADirectoryError)
               else exc.strerror or type(exc).__name__)
        raise DPKMeansError(f"cannot write the assignment to {out} ({why}): give --out a "
                            "folder you can write") from exc


def _write_assignment(assignment: Assignment, students: list, folder: Path,
                      course_seed: int, questions: int | None = None) -> pd.DataFrame:
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
        handout = folder / "students" / f"{student.student_id}.ipynb"
        entry = {"name": student.name, "email": student.email, "sis_id": student.sis_id,
                 "section": student.section, "parameters": parameters,
                 "answers": assignment.references(parameters)}
        if questions is None:
            notebook.parametrize(template, handout, parameters)
        else:
            asked = student_questions(assignment, course_seed, student.student_id, questions)
            entry["questions"] = [q.variable for q in asked]
            own = folder / f"template-{student.student_id}.ipynb"
            notebook.write(notebook.build_notebook(assignment, example, asked), own)
            notebook.parametrize(own, handout, parameters)
            own.unlink()
        key["students"][student.student_id] = entry
        rows.append({"student_id": student.student_id, "name": student.name, **parameters,
                     **({"questions": " ".join(entry["questions"])} if questions else {})})
    write_private(key_path(folder), json.dumps(key, indent=1))
    table = pd.DataFrame(rows)
    write_csv(table, folder / "instructor" / "parameters.csv")
    return table
