"""Grading a class: every submission run in its own sandbox, marked in the grader's process.

For each student of the key, the grader reads ``<submissions>/<id>.ipynb`` (a regular file,
at most :data:`~dpkmeans_classroom.notebook.MAX_NOTEBOOK_BYTES`), injects the student's
parameters from the key, appends its collector cell and runs the notebook in a fresh sandbox
(:mod:`~dpkmeans_classroom.sandbox`) holding only that notebook and read-only copies of the
data files it needs. The key and the references stay in the grader's process. What comes back
(the answers file, the executed notebook, the first error) is read as untrusted data: through
a directory handle opened before the student's code ran, never following a symlink, limited
in size, and checked field by field. Only then are the answers marked.

Only what ran counts: the runner records which cells started and returned (and which were
stopped at the cell time limit) and, after each cell, the answers so far. A question whose
cell (:func:`question_cells`) was stopped, or had not returned when the notebook was stopped
or its kernel died, scores 0 with feedback naming the cell and the limit; the others are
marked on the answers recorded after their cells. One submission the grader fails on gets a
``not graded`` row, and Ctrl-C kills the running sandboxes at once and writes nothing for
the submissions it interrupted and no grade file.

Outputs (:mod:`~dpkmeans_classroom.exports`): ``grades.csv``, ``canvas.csv``,
``moodle.csv``, ``feedback/<id>.md`` and the executed notebooks in ``graded/``, by default in
the assignment's ``instructor/`` folder.
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dpkmeans import files
from dpkmeans.data import get_registry
from dpkmeans.data.fetch import ensure_file
from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom import exports, notebook
from dpkmeans_classroom.key import read_key
from dpkmeans_classroom.sandbox import (
    LEVELS,
    Limits,
    Outcome,
    Sandbox,
    detect_level,
    read_untrusted,
)
from dpkmeans_classroom.spec import Assignment, Mark, Question, mark_answer

__all__ = ["MAX_ANSWERS_BYTES", "Run", "grade_submissions", "question_cells", "read_answers",
           "read_progress"]

#: The largest answers file, progress file and executed notebook the grader reads back.
MAX_ANSWERS_BYTES = 64 * 2**10
MAX_PROGRESS_BYTES = 2**20
MAX_EXECUTED_BYTES = 50 * 2**20

_RUNNER = Path(__file__).resolve().parent / "runner.py"
_ANSWER_FIELDS = {"present": bool, "ellipsis": bool, "type": str, "repr": str}
#: The grades table's first columns; each question's points and feedback follow.
_ROW_START = ("student_id", "name", "sandbox", "status", "score", "max_score")


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


@dataclass(frozen=True)
class Run:
    """How far a notebook got, from the runner's progress file (cells are numbered by their
    execution count, ``In [N]`` in the executed notebook).

    ``kernel_started``: the kernel answered; ``done``: cells that returned; ``stopped``: those
    of them that ran out of their time and were interrupted; ``running``: the cell that
    started last and never returned (the notebook was stopped or its kernel died there)."""

    kernel_started: bool = False
    done: frozenset[int] = frozenset()
    stopped: frozenset[int] = frozenset()
    running: int | None = None


def read_progress(raw: bytes | None) -> Run | None:
    """The runner's progress file as a :class:`Run`, or None when there is none. Lines that
    are not what the runner writes (a line cut short when the sandbox was killed) are
    skipped: the file is the student's to tamper with, and it only ever decides which
    answers are marked, never their values."""
    if raw is None:
        return None
    started, done, stopped, kernel = [], set(), set(), False
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kernel = kernel or event.get("event") == "kernel"
        cell = event.get("cell")
        if not isinstance(cell, int) or isinstance(cell, bool):
            continue
        if event.get("event") == "start":
            started.append(cell)
        elif event.get("event") == "done":
            done.add(cell)
            if event.get("stopped") is True:
                stopped.add(cell)
    running = started[-1] if started and started[-1] not in done else None
    return Run(kernel, frozenset(done), frozenset(stopped), running)


def _assigned_names(source: str) -> set[str]:
    """The names a cell assigns at its top level (a cell IPython syntax makes unreadable to
    :mod:`ast` is read line by line)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?[-+*/%@&|^]?=(?!=)", source,
                              re.MULTILINE))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def question_cells(nb: Any, variables: Sequence[str]) -> dict[str, int]:
    """``{variable: N}``: the last cell before the grader's (the notebook's last) that sets
    each variable, numbered as the runner numbers cells (non-empty code cells, in order, not
    counting those nbclient skips)."""
    found, number = {}, 0
    for cell in nb.cells[:-1]:
        if (cell.cell_type != "code" or not cell.source.strip()
                or "skip-execution" in cell.metadata.get("tags", [])):
            continue
        number += 1
        for name in _assigned_names(cell.source) & set(variables):
            found[name] = number
    return found


@dataclass(frozen=True)
class _Result:
    """One submission's run as the marks need it."""

    status: str
    answers: dict[str, Any]
    error: str | None = None
    run: Run | None = None
    cells: Mapping[str, int] | None = None
    ended: str | None = None  # why the notebook stopped before its end, if it did


class _Cancelled(Exception):
    """Grading was called off (Ctrl-C) while this submission ran: nothing of it is kept."""


def _questions_of(assignment: Assignment, entry: Mapping[str, Any]) -> tuple[Question, ...]:
    """The questions one student was asked: the key's ``questions`` (``dpkmeans_classroom make
    --questions N``), else all of the assignment's."""
    chosen = entry.get("questions")
    if chosen is None:
        return assignment.questions
    return tuple(q for q in assignment.questions if q.variable in set(chosen))


def _grade_one(assignment: Assignment, sid: str, entry: Mapping[str, Any], submissions: Path,
               graded: Path, level: str, limits: Limits,
               stop: threading.Event | None = None) -> dict[str, Any]:
    """One student's row of the grades table."""
    questions = _questions_of(assignment, entry)
    path = submissions / f"{sid}.ipynb"
    (graded / f"{sid}.ipynb").unlink(missing_ok=True)  # not an earlier run's notebook
    if not path.exists() and not path.is_symlink():
        result = _Result("missing", {})
    else:
        result = _run_submission(assignment, sid, entry, path, graded, level, limits,
                                 [q.variable for q in questions], stop)
    return _row(sid, entry, level, questions, result, limits)


def _row(sid: str, entry: Mapping[str, Any], level: str, questions: Sequence[Question],
         result: _Result, limits: Limits) -> dict[str, Any]:
    """The grades table's row of one student, from how their submission ran."""
    row: dict[str, Any] = {"student_id": sid, "name": entry.get("name", ""), "sandbox": level,
                           "status": result.status}
    marks = {q.variable: _mark(q, result, entry["answers"][q.variable], limits)
             for q in questions}
    row["score"] = float(sum(m.points for m in marks.values()))
    row["max_score"] = float(sum(q.points for q in questions))
    for name, mark in marks.items():
        row[name] = mark.points
        row[f"{name}_feedback"] = "no submission" if result.status == "missing" else mark.feedback
    return row


def _mark(question: Question, result: _Result, reference: float, limits: Limits) -> Mark:
    """The mark of one question: 0 with the reason when its cell did not run to its end,
    else its answer marked (:func:`~dpkmeans_classroom.spec.mark_answer`)."""
    cell = (result.cells or {}).get(question.variable)
    run = result.run
    if cell is not None and run is not None and cell in run.stopped:
        return Mark(0.0, question.points,
                    f"not marked: its cell (cell {cell}) ran longer than "
                    f"{limits.cell_seconds:g} s, the time a cell may run (--timeout), and was "
                    "stopped")
    if result.ended is not None:
        # a value in the answers file was recorded after a cell that returned; a cell found
        # to set the question's variable must have returned itself
        answer = result.answers.get(question.variable) or {}
        ran = (cell in run.done if cell is not None and run is not None
               else cell is None and answer.get("present", False))
        if not ran:
            where = (f"its cell (cell {cell}) did not finish"
                     if cell and run is not None and run.kernel_started else "not marked")
            return Mark(0.0, question.points, f"{where}: {result.ended}")
    return mark_answer(question, result.answers.get(question.variable), reference,
                       error=result.error)


def _run_submission(assignment: Assignment, sid: str, entry: Mapping[str, Any], path: Path,
                    graded: Path, level: str, limits: Limits, variables: list[str],
                    stop: threading.Event | None = None) -> _Result:
    """Run one submission in its sandbox (:class:`_Cancelled` if ``stop`` is set meanwhile)."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        return _Result(f"not run: the submissions folder cannot be opened ({exc.strerror})", {})
    try:
        raw = read_untrusted(folder, path.name, notebook.MAX_NOTEBOOK_BYTES)
    finally:
        os.close(folder)
    if raw is None:
        return _Result(f"not run: the submission is not a regular file of at most "
                       f"{notebook.MAX_NOTEBOOK_BYTES // 2**20} MiB", {})
    answers_name = f"answers-{secrets.token_hex(8)}.json"
    nb, why = notebook.prepare_submission(raw, entry["parameters"], variables, answers_name)
    if nb is None:
        return _Result(f"not run: {why}", {})
    with Sandbox(level, limits, _data_files(assignment, entry["parameters"])) as sandbox:
        import nbformat

        prepared = sandbox.work / "submission.ipynb"
        nbformat.write(nb, str(prepared))
        prepared.chmod(0o644)
        so_far_name = f"so-far-{answers_name}"
        outcome = sandbox.run([sys.executable, str(_RUNNER), "submission.ipynb",
                               "executed.ipynb", "result.json", repr(limits.cell_seconds),
                               "progress.jsonl", answers_name, so_far_name], stop=stop)
        if outcome.cancelled:
            raise _Cancelled(sid)
        answers, so_far = (
            read_answers(read_untrusted(sandbox.work_fd, name, MAX_ANSWERS_BYTES), variables)
            for name in (answers_name, so_far_name))
        result = read_untrusted(sandbox.work_fd, "result.json", MAX_ANSWERS_BYTES)
        executed = read_untrusted(sandbox.work_fd, "executed.ipynb", MAX_EXECUTED_BYTES)
        run = read_progress(read_untrusted(sandbox.work_fd, "progress.jsonl",
                                           MAX_PROGRESS_BYTES))
    if executed is not None:
        files.write_text(graded / f"{sid}.ipynb", executed.decode("utf-8", "replace"))
    error = None
    if result is not None:
        try:
            error = json.loads(result.decode("utf-8")).get("error")
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            error = None
    error = _one_line(error) if error else None
    status, ended = _status(outcome, run, answers, error, result is not None, limits)
    if answers is None and ended is not None:  # stopped before the grader's last cell
        answers = so_far
    return _Result(status, answers or {}, error, run, question_cells(nb, variables), ended)


def _status(outcome: Outcome, run: Run | None, answers: dict[str, Any] | None,
            error: str | None, finished: bool, limits: Limits) -> tuple[str, str | None]:
    """The submission's status, and why the notebook stopped before its end (None when it
    ran to its end)."""
    memory = f"a process may use {limits.memory_bytes / 2**20:g} MiB (--memory)"
    started = run is not None and run.kernel_started
    if outcome.timed_out:
        where = f" in cell {run.running}" if run is not None and run.running else ""
        ended = (f"the notebook was stopped{where} at its time limit of "
                 f"{limits.wall_seconds:g} s (--time-limit)")
        return f"stopped: the notebook ran longer than {limits.wall_seconds:g} s{where}", ended
    if not started and (finished or "MemoryError" in outcome.stderr_tail):
        ended = f"out of memory: the notebook could not start; {memory}"
        return f"no answers: {ended}: raise --memory", ended
    if run is not None and run.running is not None:
        ended = (f"the kernel died in cell {run.running} (out of memory, {memory}, or another "
                 "limit on processes or CPU time, or a crash)")
        return f"stopped: {ended}", ended
    if answers is None:
        if not finished and outcome.returncode:
            ended = f"the sandbox ended with code {outcome.returncode}"
            return f"no answers: {ended}", ended
        return ("no answers: the notebook did not reach the grader's last cell"
                + (f" ({error})" if error else "") + " or replaced what it writes"), None
    if error:
        oom = f" (out of memory: {memory})" if "MemoryError" in error else ""
        return f"graded, with an error: {error}{oom}", None
    return "graded", None


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

    stop = threading.Event()

    def grade(sid: str, entry: Mapping[str, Any]) -> dict[str, Any]:
        if progress:
            progress(sid)
        try:
            return _grade_one(assignment, sid, entry, submissions, graded, level, limits, stop)
        except (_Cancelled, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - one submission never stops the class
            why = f"{type(exc).__name__}: {_one_line(exc, 120)}"
            result = _Result(f"not graded: the grader failed on this submission ({why}); "
                             "grade it again", {}, ended=f"the grader failed ({why})")
            return _row(sid, entry, level, _questions_of(assignment, entry), result, limits)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(grade, sid, entry) for sid, entry in key["students"].items()]
        try:
            rows = [future.result() for future in futures]
        except KeyboardInterrupt:
            # Ctrl-C: every running sandbox is killed now, nothing not yet started starts,
            # and no grade file is written (an earlier run's stay whole)
            stop.set()
            for future in futures:
                future.cancel()
            raise
    asked = [c for q in assignment.questions for c in (q.variable, f"{q.variable}_feedback")
             if any(c in row for row in rows)]  # a question no one was asked has no column
    grades = pd.DataFrame(rows, columns=[*_ROW_START, *asked])
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
    column, students = assignment.title, key["students"]
    asked = {sid: _questions_of(assignment, entry) for sid, entry in students.items()}
    for row in grades.to_dict("records"):
        files.write_text(out / "feedback" / f"{row['student_id']}.md",
                         exports.feedback_markdown(assignment.title, row,
                                                   asked[row["student_id"]]))
    exports.write_csv(exports.canvas_table(grades, students, column), out / "canvas.csv")
    exports.write_csv(exports.moodle_table(grades, students, column, asked), out / "moodle.csv")
    exports.write_csv(grades, out / "grades.csv")
