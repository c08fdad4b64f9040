"""Making a class's assignments and grading their submissions (the ``assignments`` commands).

``make`` writes, into one directory::

    template.ipynb            the assignment with example parameters (for the instructor)
    students/<id>.ipynb       one notebook per student, their parameters injected (hand out)
    instructor/key.json       parameters and reference answers of every student (keep hidden)
    instructor/parameters.csv the same parameters as a table

``grade`` runs ``<submissions>/<id>.ipynb`` of every student in the key with their own
parameters, keeps the executed notebooks in ``instructor/graded/`` and writes a grades CSV:
one row per student, with each question's points and feedback.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans.assignments import notebook
from dpkmeans.assignments.roster import read_roster
from dpkmeans.assignments.spec import Assignment, mark_answer, student_parameters
from dpkmeans.errors import DPKMeansError

__all__ = [
    "ASSIGNMENTS",
    "KEY_FORMAT",
    "get_assignment",
    "grade_submissions",
    "make_assignments",
]

KEY_FORMAT = 1


def _registry() -> dict[int, Assignment]:
    """Every ``chapterNN`` module's ``ASSIGNMENT``, by chapter."""
    import importlib
    import pkgutil

    import dpkmeans.assignments as package

    found = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
        if module.startswith("chapter") and module[7:].isdigit():
            assignment = importlib.import_module(f"{package.__name__}.{module}").ASSIGNMENT
            found[assignment.chapter] = assignment
    return dict(sorted(found.items()))


ASSIGNMENTS: Mapping[int, Assignment] = _registry()


def get_assignment(chapter: int) -> Assignment:
    """The assignment of ``chapter`` (a ValueError lists the chapters that have one)."""
    if chapter not in ASSIGNMENTS:
        raise DPKMeansError(f"chapter {chapter} has no assignment; chapters with one: "
                            f"{sorted(ASSIGNMENTS)}")
    return ASSIGNMENTS[chapter]


def make_assignments(roster: str | Path, chapter: int, out: str | Path, *, course_seed: int,
                     overwrite: bool = False) -> pd.DataFrame:
    """Write every student's notebook and the hidden key (module docstring); returns the
    parameters table."""
    assignment = get_assignment(chapter)
    students = read_roster(roster)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise DPKMeansError(f"{out} exists and is not empty (pass overwrite=True / "
                                "--overwrite to replace an earlier `assignments make`)")
        if not (out / "instructor" / "key.json").is_file():
            raise DPKMeansError(f"{out} was not written by `assignments make` (no "
                                "instructor/key.json): not deleting it")
        shutil.rmtree(out)
    (out / "students").mkdir(parents=True)
    (out / "instructor").mkdir()
    example = {"STUDENT": "example", "SEED": 0, **dict(assignment.fixed),
               **{name: choices[0] for name, choices in assignment.pools.items()}}
    template = out / "template.ipynb"
    notebook.write(notebook.build_notebook(assignment, example), template)
    key: dict[str, Any] = {"format": KEY_FORMAT, "chapter": chapter, "slug": assignment.slug,
                           "course_seed": course_seed, "students": {}}
    rows = []
    for student in students:
        parameters = student_parameters(assignment, course_seed, student.student_id)
        notebook.parametrize(template, out / "students" / f"{student.student_id}.ipynb",
                             parameters)
        key["students"][student.student_id] = {
            "name": student.name, "parameters": parameters,
            "answers": assignment.references(parameters)}
        rows.append({"student_id": student.student_id, "name": student.name, **parameters})
    (out / "instructor" / "key.json").write_text(json.dumps(key, indent=1))
    table = pd.DataFrame(rows)
    table.to_csv(out / "instructor" / "parameters.csv", index=False)
    return table


def _read_key(assignment_dir: Path) -> dict[str, Any]:
    path = assignment_dir / "instructor" / "key.json"
    if not path.is_file():
        raise DPKMeansError(f"no key at {path}: is {assignment_dir} a directory written by "
                            "`assignments make`?")
    key = json.loads(path.read_text())
    if key.get("format") != KEY_FORMAT:
        raise DPKMeansError(f"{path} has key format {key.get('format')}, expected {KEY_FORMAT}")
    return key


def grade_submissions(assignment_dir: str | Path, submissions: str | Path,
                      out: str | Path | None = None, *, timeout: float = 600.0,
                      progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Grade every student of the key from ``submissions/<id>.ipynb``; write and return the
    grades table (default ``instructor/grades.csv``)."""
    assignment_dir, submissions = Path(assignment_dir), Path(submissions)
    if not submissions.is_dir():
        raise DPKMeansError(f"submissions directory not found: {submissions}")
    key = _read_key(assignment_dir)
    assignment = get_assignment(int(key["chapter"]))
    graded = assignment_dir / "instructor" / "graded"
    graded.mkdir(parents=True, exist_ok=True)
    variables = [q.variable for q in assignment.questions]
    rows = []
    for sid, entry in key["students"].items():
        if progress:
            progress(sid)
        submission = submissions / f"{sid}.ipynb"
        row: dict[str, Any] = {"student_id": sid, "name": entry.get("name", "")}
        answers: dict[str, Any] = {}
        error = None
        if not submission.is_file():
            row["status"] = "missing"
        else:
            answers_path = (graded / f"{sid}.answers.json").resolve()
            answers_path.unlink(missing_ok=True)
            error = notebook.execute(submission, graded / f"{sid}.ipynb", entry["parameters"],
                                     variables, answers_path, timeout=timeout)
            if answers_path.is_file():
                answers = json.loads(answers_path.read_text())
            row["status"] = "graded" if error is None else f"graded, with an error: {error}"
            if error is not None and not answers:
                row["status"] = f"not run: {error}"
        marks = {q.variable: mark_answer(q, answers.get(q.variable),
                                         entry["answers"][q.variable], error=error)
                 for q in assignment.questions}
        row["score"] = sum(m.points for m in marks.values())
        row["max_score"] = assignment.max_points
        for name, mark in marks.items():
            row[name] = mark.points
            row[f"{name}_feedback"] = mark.feedback if submission.is_file() else "no submission"
        rows.append(row)
    grades = pd.DataFrame(rows)
    path = Path(out) if out else assignment_dir / "instructor" / "grades.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    grades.to_csv(path, index=False)
    unknown = sorted(p.stem for p in submissions.glob("*.ipynb") if p.stem not in key["students"])
    if unknown:
        grades.attrs["unknown_submissions"] = unknown
    return grades

