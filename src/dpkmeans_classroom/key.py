"""The instructor's key: every student's parameters and reference answers (``key.json``).

The key is written once by ``dpkmeans_classroom make``, readable by its owner only (mode 0600), and
read by the grader in its own process; it never enters a student's sandbox. :func:`read_key`
checks all of it before anything is graded, so a corrupted or incomplete key is one named
error, not a traceback halfway through a class.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dpkmeans.errors import DPKMeansError
from dpkmeans.files import write_text
from dpkmeans_classroom.registry import get_assignment
from dpkmeans_classroom.roster import SAFE_ID
from dpkmeans_classroom.spec import Assignment

__all__ = ["KEY_FORMAT", "KeyFileError", "key_path", "read_key", "write_private"]

KEY_FORMAT = 2

#: Parameter values a notebook's parameters cell can hold (papermill writes them as literals).
_PARAMETER_TYPES = (str, int, float, bool)


class KeyFileError(DPKMeansError, ValueError):
    """The key cannot be used (the message names the file and what is wrong)."""


def key_path(assignment_dir: str | Path) -> Path:
    return Path(assignment_dir) / "instructor" / "key.json"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable and writable by its owner only."""
    write_text(path, text, mode=0o600)


def read_key(assignment_dir: str | Path) -> tuple[dict[str, Any], Assignment]:
    """The validated key of an assignment directory and its :class:`Assignment`."""
    path = key_path(assignment_dir)
    if not path.is_file():
        raise KeyFileError(f"no key at {path}: is {assignment_dir} a directory written by "
                           "`dpkmeans_classroom make`?")
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise KeyFileError(f"{path} is not UTF-8 text: the key is corrupted "
                           "(run `dpkmeans_classroom make` again)") from exc
    except json.JSONDecodeError as exc:
        raise KeyFileError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}): "
                           "the key is corrupted (run `dpkmeans_classroom make` again)") from exc
    if not isinstance(key, dict):
        raise KeyFileError(f"{path} is not a key: expected a JSON object")
    if key.get("format") != KEY_FORMAT:
        raise KeyFileError(f"{path} has key format {key.get('format')!r}, expected {KEY_FORMAT} "
                           "(run `dpkmeans_classroom make` again with this version)")
    chapter = key.get("chapter")
    if not isinstance(chapter, int) or isinstance(chapter, bool):
        raise KeyFileError(f"{path}: 'chapter' must be a chapter number, got {chapter!r}")
    assignment = get_assignment(chapter)
    students = key.get("students")
    if not isinstance(students, dict) or not students:
        raise KeyFileError(f"{path}: 'students' must map each student id to their entry")
    for sid, entry in students.items():
        _check_student(path, assignment, sid, entry)
    return key, assignment


def _check_student(path: Path, assignment: Assignment, sid: str, entry: Any) -> None:
    where = f"{path}, student {sid!r}"
    if not SAFE_ID.match(sid):
        raise KeyFileError(f"{where}: not a safe student id")
    if not isinstance(entry, dict):
        raise KeyFileError(f"{where}: the entry must be a JSON object")
    parameters, answers = entry.get("parameters"), entry.get("answers")
    if not isinstance(parameters, dict):
        raise KeyFileError(f"{where}: no parameters")
    needed = {"STUDENT", "SEED", *assignment.pools, *assignment.fixed}
    missing = sorted(needed - set(parameters))
    if missing:
        raise KeyFileError(f"{where}: parameters {missing} are missing")
    if parameters["STUDENT"] != sid:
        raise KeyFileError(f"{where}: its STUDENT parameter is {parameters['STUDENT']!r}")
    for name, value in parameters.items():
        if not name.isidentifier() or not isinstance(value, _PARAMETER_TYPES):
            raise KeyFileError(f"{where}: parameter {name!r} = {value!r} is not a plain value")
    if not isinstance(answers, dict):
        raise KeyFileError(f"{where}: no answers (the key holds no reference answers)")
    for question in assignment.questions:
        value = answers.get(question.variable)
        if (not isinstance(value, int | float) or isinstance(value, bool)
                or not math.isfinite(value)):
            raise KeyFileError(f"{where}: the answer to {question.variable!r} is missing or "
                               f"not a finite number ({value!r})")
        try:
            question.check_reference(value)
        except ValueError as exc:
            raise KeyFileError(f"{where}: {exc}") from exc
    for field in ("name", "email", "sis_id", "section"):
        if not isinstance(entry.get(field, ""), str):
            raise KeyFileError(f"{where}: {field!r} must be text")
    _check_questions(where, assignment, entry.get("questions"))


def _check_questions(where: str, assignment: Assignment, chosen: Any) -> None:
    """``questions`` (``dpkmeans_classroom make --questions N``): absent, or some of the
    assignment's answer variables, each once."""
    if chosen is None:
        return
    names = [q.variable for q in assignment.questions]
    if (not isinstance(chosen, list) or not chosen or not all(isinstance(c, str) for c in chosen)
            or len(set(chosen)) != len(chosen) or not set(chosen) <= set(names)):
        raise KeyFileError(f"{where}: 'questions' must list some of {names}, each once; got "
                           f"{chosen!r}")
