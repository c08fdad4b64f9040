"""Grading a class: every submission run in its own sandbox, marked in the grader's process.

For each student of the key, the grader reads ``<submissions>/<id>.ipynb`` (a regular file,
at most :data:`~dpkmeans.assignments.notebook.MAX_NOTEBOOK_BYTES`), injects the student's
parameters from the key, appends its collector cell and runs the notebook in a fresh sandbox
(:mod:`~dpkmeans.assignments.sandbox`) holding only that notebook and read-only copies of the
data files it needs. The key and the references stay in the grader's process. What comes back
(the answers file, the executed notebook, the first error) is read as untrusted data: through
a directory handle opened before the student's code ran, never following a symlink, limited
in size, and checked field by field. Only then are the answers marked.

Outputs (:mod:`~dpkmeans.assignments.exports`): ``grades.csv``, ``canvas.csv``,
``moodle.csv``, ``feedback/<id>.md`` and the executed notebooks in ``graded/``, by default in
the assignment's ``instructor/`` folder.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans import files
from dpkmeans.assignments import exports, notebook
from dpkmeans.assignments.key import read_key
from dpkmeans.assignments.sandbox import LEVELS, Limits, Sandbox, detect_level, read_untrusted
from dpkmeans.assignments.spec import Assignment, mark_answer
from dpkmeans.data import get_registry
from dpkmeans.data.fetch import ensure_file
from dpkmeans.errors import DPKMeansError

__all__ = ["MAX_ANSWERS_BYTES", "grade_submissions", "read_answers"]

#: The largest answers file and executed notebook the grader reads back.
MAX_ANSWERS_BYTES = 64 * 2**10
MAX_EXECUTED_BYTES = 50 * 2**20

_RUNNER = Path(__file__).resolve().parent / "runner.py"
_ANSWER_FIELDS = {"present": bool, "ellipsis": bool, "type": str, "repr": str}


def read_answers(raw: bytes | None, variables: list[str]) -> dict[str, Any] | None:
    """The collector's answers, checked field by field, or None when the file is missing or
    not what the collector writes (then no answer counts)."""
    if raw is None:
        return None
    try:
        answers = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(answers, dict) or set(answers) != set(variables):
        return None
    checked = {}
    for name in variables:
        entry = answers[name]
        if not isinstance(entry, dict) or set(entry) != {*_ANSWER_FIELDS, "value"}:
            return None
        if any(not isinstance(entry[f], kind) for f, kind in _ANSWER_FIELDS.items()):
            return None
        value = entry["value"]
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            return None
        checked[name] = {"present": entry["present"], "ellipsis": entry["ellipsis"],
                         "value": None if value is None else float(value),
                         "type": entry["type"][:40], "repr": entry["repr"][:80]}
    return checked


def _one_line(text: Any, limit: int = 200) -> str:
    return " ".join(str(text).split())[:limit]


def _data_files(assignment: Assignment, parameters: Mapping[str, Any]) -> dict[str, Path]:
    """``{"<dataset>/<file>": host path}`` of the registry datasets one notebook reads
    (datasets bundled with scikit-learn need no file)."""
    registry, found = get_registry(), {}
    for name in assignment.dataset_names(parameters):
        if name in registry.bundled:
            continue
        spec = registry.dataset(name)
        _, path = ensure_file(spec, spec.file, download=False)  # checks its sha256
        found[f"{spec.name}/{spec.file.name}"] = path
    return found


def _grade_one(assignment: Assignment, sid: str, entry: Mapping[str, Any], submissions: Path,
               graded: Path, level: str, limits: Limits) -> dict[str, Any]:
    """One student's row of the grades table."""
    variables = [q.variable for q in assignment.questions]
    row: dict[str, Any] = {"student_id": sid, "name": entry.get("name", ""), "sandbox": level}
    answers: dict[str, Any] = {}
    error: str | None = None
    path = submissions / f"{sid}.ipynb"
    (graded / f"{sid}.ipynb").unlink(missing_ok=True)  # not an earlier run's notebook
    if not path.exists() and not path.is_symlink():
        row["status"] = "missing"
    else:
        status, answers, error = _run_submission(assignment, sid, entry, path, graded, level,
                                                 limits, variables)
        row["status"] = status
    marks = {q.variable: mark_answer(q, answers.get(q.variable), entry["answers"][q.variable],
                                     error=error)
             for q in assignment.questions}
    row["score"] = float(sum(m.points for m in marks.values()))
    row["max_score"] = assignment.max_points
    for name, mark in marks.items():
        row[name] = mark.points
        row[f"{name}_feedback"] = "no submission" if row["status"] == "missing" else mark.feedback
    return row


def _run_submission(assignment: Assignment, sid: str, entry: Mapping[str, Any], path: Path,
                    graded: Path, level: str, limits: Limits,
                    variables: list[str]) -> tuple[str, dict[str, Any], str | None]:
    """Run one submission in its sandbox: ``(status, answers, first error)``."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        return f"not run: the submissions folder cannot be opened ({exc.strerror})", {}, None
    try:
        raw = read_untrusted(folder, path.name, notebook.MAX_NOTEBOOK_BYTES)
    finally:
        os.close(folder)
    if raw is None:
        return (f"not run: the submission is not a regular file of at most "
                f"{notebook.MAX_NOTEBOOK_BYTES // 2**20} MiB"), {}, None
    answers_name = f"answers-{secrets.token_hex(8)}.json"
    nb, why = notebook.prepare_submission(raw, entry["parameters"], variables, answers_name)
    if nb is None:
        return f"not run: {why}", {}, None
    with Sandbox(level, limits, _data_files(assignment, entry["parameters"])) as sandbox:
        import nbformat

        prepared = sandbox.work / "submission.ipynb"
        nbformat.write(nb, str(prepared))
        prepared.chmod(0o644)
        outcome = sandbox.run([sys.executable, str(_RUNNER), "submission.ipynb",
                               "executed.ipynb", "result.json", repr(limits.cell_seconds)])
        answers = read_answers(read_untrusted(sandbox.work_fd, answers_name, MAX_ANSWERS_BYTES),
                               variables)
        result = read_untrusted(sandbox.work_fd, "result.json", MAX_ANSWERS_BYTES)
        executed = read_untrusted(sandbox.work_fd, "executed.ipynb", MAX_EXECUTED_BYTES)
    if executed is not None:
        files.write_text(graded / f"{sid}.ipynb", executed.decode("utf-8", "replace"))
    error = None
    if result is not None:
        try:
            error = json.loads(result.decode("utf-8")).get("error")
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            error = None
    error = _one_line(error) if error else None
    if outcome.timed_out:
        status = f"stopped: the notebook ran longer than {limits.wall_seconds:g} s"
    elif answers is None:
        status = ("no answers: the notebook did not reach the grader's last cell"
                  + (f" ({error})" if error else "") + " or replaced what it writes")
        if result is None and outcome.returncode:
            status = f"no answers: the sandbox ended with code {outcome.returncode}"
    elif error:
        status = f"graded, with an error: {error}"
    else:
        status = "graded"
    return status, answers or {}, error


def grade_submissions(assignment_dir: str | Path, submissions: str | Path,
                      out: str | Path | None = None, *, limits: Limits | None = None,
                      level: str | None = None, jobs: int = 1,
                      progress: Callable[[str], None] | None = None,
                      timeout: float | None = None) -> pd.DataFrame:
    """Grade every student of the key from ``submissions/<id>.ipynb`` (module docstring).

    ``out`` is the folder of the outputs (default ``<assignment>/instructor``); ``level`` the
    sandbox level (default: the strongest this machine offers); ``jobs`` how many notebooks
    run at once; ``timeout`` overrides ``limits.cell_seconds``. Returns the grades table."""
    assignment_dir, submissions = Path(assignment_dir), Path(submissions)
    key, assignment = read_key(assignment_dir)
    if not submissions.is_dir():
        raise DPKMeansError(f"submissions directory not found: {submissions}")
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise DPKMeansError(f"jobs must be a positive whole number, got {jobs!r}")
    limits = limits or Limits()
    if timeout is not None:
        from dataclasses import replace

        limits = replace(limits, cell_seconds=float(timeout))
    level = level or detect_level()
    if level not in LEVELS:
        raise DPKMeansError(f"unknown sandbox level {level!r}; choose one of {LEVELS}")
    out = Path(out) if out else assignment_dir / "instructor"
    if out.exists() and not out.is_dir():
        raise DPKMeansError(f"{out} is a file; --out names a folder for the grade files")
    for entry in key["students"].values():  # every data file present before anything runs
        _data_files(assignment, entry["parameters"])
    graded = out / "graded"
    graded.mkdir(parents=True, exist_ok=True)

    def grade(item: tuple[str, Mapping[str, Any]]) -> dict[str, Any]:
        sid, entry = item
        if progress:
            progress(sid)
        return _grade_one(assignment, sid, entry, submissions, graded, level, limits)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(grade, key["students"].items()))
    grades = pd.DataFrame(rows)
    _write_outputs(out, grades, key, assignment)
    unknown = sorted(p.name for p in submissions.iterdir()
                     if p.suffix == ".ipynb" and p.stem not in key["students"])
    if unknown:
        grades.attrs["unknown_submissions"] = unknown
    grades.attrs["sandbox"] = level
    return grades


def _write_outputs(out: Path, grades: pd.DataFrame, key: Mapping[str, Any],
                   assignment: Assignment) -> None:
    """The grades table, the two exports and the feedback files (each written atomically)."""
    column = assignment.title
    for row in grades.to_dict("records"):
        files.write_text(out / "feedback" / f"{row['student_id']}.md",
                           exports.feedback_markdown(assignment.title, row, assignment.questions))
    students = key["students"]
    exports.write_csv(exports.canvas_table(grades, students, column), out / "canvas.csv")
    exports.write_csv(exports.moodle_table(grades, students, column), out / "moodle.csv")
    exports.write_csv(grades, out / "grades.csv")
