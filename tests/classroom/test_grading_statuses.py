"""Grading statuses that say what happened (book: How to use, "Grading you can trust"): a cell
stopped by its time limit, a notebook stopped by the notebook's, too little memory, a
submission the grader fails on, Ctrl-C during grading, and the Moodle export's feedback.

The classes here are of chapter 3 (no data files), graded with limits of a few seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import dpkmeans_classroom
from dpkmeans_classroom import Limits, get_assignment, grade_submissions, grading
from dpkmeans_classroom.exports import moodle_table
from dpkmeans_classroom.notebook import model_solution
from tests.classroom.helpers import AS_FROM_A_TERMINAL, make_class, sandbox_processes

CHAPTER3 = get_assignment(3)
FULL = CHAPTER3.max_points
FIRST = CHAPTER3.questions[0]

#: A loop that ignores Ctrl-C, so that only the notebook's time limit (or the grader) ends it.
STUBBORN_LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                 "while True:\n    pass")


def _class(tmp: Path, ids: list[str]) -> tuple[Path, Path]:
    return make_class(tmp, ids, 3, course_seed=7)


def _submit(assignment: Path, inbox: Path, sid: str, *, into_first: str = "",
            after_first: str = "") -> None:
    """The model solution, with ``into_first`` appended to the first question's cell and a
    cell ``after_first`` after it."""
    nb = model_solution(CHAPTER3, nbformat.read(str(assignment / "students" / f"{sid}.ipynb"),
                                                as_version=4))
    first = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and c.source == FIRST.solution)
    if into_first:
        nb.cells[first].source += "\n" + into_first
    if after_first:
        nb.cells.insert(first + 1, nbformat.v4.new_code_cell(after_first))
    nbformat.write(nb, str(inbox / f"{sid}.ipynb"))


#: The first question's cell as the grader numbers it (In [N]): after the parameters cell,
#: the injected parameters and the setup cell.
FIRST_CELL = 4


@pytest.mark.slow
def test_a_question_whose_cell_was_stopped_scores_zero_and_says_why(tmp_path):
    """The first question's cell sets its answer, then loops until the cell's time limit
    interrupts it: that question scores 0 (it used to count: full marks), the feedback names
    the cell and the limit, and the status says the cell ran out of time (it used to say
    ``KeyboardInterrupt:``). The other questions' cells ran and count."""
    assignment, inbox = _class(tmp_path, ["ada"])
    _submit(assignment, inbox, "ada", into_first="while True:\n    pass")
    limits = Limits(wall_seconds=40, cell_seconds=5)  # the setup cell needs 1-2 s
    row = grade_submissions(assignment, inbox, limits=limits).set_index("student_id").loc["ada"]
    cell = FIRST_CELL
    assert row["status"] == (f"graded, with an error: cell {cell} ran longer than 5 s, the time "
                             "a cell may run (--timeout), and was stopped"), row["status"]
    assert "KeyboardInterrupt" not in row["status"]
    assert row[FIRST.variable] == 0.0
    assert row[f"{FIRST.variable}_feedback"] == (
        f"not marked: its cell (cell {cell}) ran longer than 5 s, the time a cell may run "
        "(--timeout), and was stopped")
    assert row["score"] == FULL - FIRST.points


@pytest.mark.slow
def test_the_time_limit_keeps_what_ran_names_the_cell_and_the_batch_goes_on(tmp_path):
    """A cell after the first question never ends (it ignores the interrupt): the notebook's
    time limit stops it. The first question's cell ran and counts; every later question
    scores 0 with feedback naming the stopped cell and the limit (all of it used to be
    "not set"); the next student in the batch is graded as usual."""
    assignment, inbox = _class(tmp_path, ["hang", "next"])
    _submit(assignment, inbox, "hang", after_first=STUBBORN_LOOP)
    _submit(assignment, inbox, "next")
    limits = Limits(wall_seconds=20, cell_seconds=5)
    grades = grade_submissions(assignment, inbox, limits=limits).set_index("student_id")
    row, loop = grades.loc["hang"], FIRST_CELL + 1
    assert row["status"] == f"stopped: the notebook ran longer than 20 s in cell {loop}"
    assert (row[FIRST.variable], row[f"{FIRST.variable}_feedback"]) == (FIRST.points,
                                                                        "correct")
    for number, question in enumerate(CHAPTER3.questions[1:], start=loop + 1):
        assert row[question.variable] == 0.0
        assert row[f"{question.variable}_feedback"] == (
            f"its cell (cell {number}) did not finish: the notebook was stopped in cell {loop} "
            "at its time limit of 20 s (--time-limit)")
    assert row["score"] == FIRST.points
    assert (grades.loc["next", "status"], grades.loc["next", "score"]) == ("graded", FULL)


@pytest.mark.slow
def test_too_little_memory_says_so_and_names_the_limit(tmp_path):
    assignment, inbox = _class(tmp_path, ["ada"])
    _submit(assignment, inbox, "ada")
    limits = Limits(wall_seconds=30, cell_seconds=10, memory_bytes=100 * 2**20)
    row = grade_submissions(assignment, inbox, limits=limits).set_index("student_id").loc["ada"]
    assert row["status"] == ("no answers: out of memory: the notebook could not start; a "
                             "process may use 100 MiB (--memory): raise --memory")
    assert "ended with code" not in row["status"]
    assert row[f"{FIRST.variable}_feedback"].startswith("not marked: out of memory")


def test_a_submission_the_grader_fails_on_does_not_stop_the_class(tmp_path, monkeypatch):
    """The grader itself fails on one submission: that student's row says so (the whole
    class used to fail with a traceback, and no grade was written); the others are graded."""
    assignment, inbox = _class(tmp_path, ["ada", "bob"])
    (inbox / "ada.ipynb").write_text("{}")  # bob's is missing

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(grading, "_run_submission", broken)
    grades = grade_submissions(assignment, inbox, level="limits").set_index("student_id")
    assert grades.loc["ada", "status"] == (
        "not graded: the grader failed on this submission (OSError: [Errno 28] No space left "
        "on device); grade it again")
    assert grades.loc["ada", "score"] == 0.0
    assert grades.loc["ada", f"{FIRST.variable}_feedback"].startswith(
        "not marked: the grader failed (OSError")
    assert grades.loc["bob", "status"] == "missing"
    assert (assignment / "instructor" / "grades.csv").is_file()


def test_moodle_feedback_carries_every_question():
    questions = CHAPTER3.questions[:2]
    a, b = (q.variable for q in questions)
    grades = pd.DataFrame([{"student_id": "ada", "status": "graded", "score": 1.0,
                            "max_score": 3.0, a: 0.0, f"{a}_feedback": "`x` = <b>2</b> is not "
                            "right.", b: 1.0, f"{b}_feedback": "correct"}])
    table = moodle_table(grades, {"ada": {"email": "a@x.org"}}, "HW", {"ada": questions})
    feedback = table.loc[0, "Feedback"]
    assert feedback == (f"graded, score 1 of 3; 1 ({a}): 0 of {questions[0].points:g}, `x` = "
                        f"&lt;b&gt;2&lt;/b&gt; is not right.; 2 ({b}): 1 of "
                        f"{questions[1].points:g}, correct")


def test_progress_lines_cut_short_or_forged_are_skipped():
    raw = (b'{"event": "kernel"}\n{"cell": 1, "event": "start"}\n'
           b'{"cell": 1, "event": "done", "stopped": false}\n{"cell": 2, "event": "start"}\n'
           b'{"cell": true, "event": "done"}\n[1]\n{"cell": 2, "ev')
    run = grading.read_progress(raw)
    assert run == grading.Run(True, frozenset({1}), frozenset(), 2)
    assert grading.read_progress(None) is None


def test_question_cells_are_found_by_what_they_assign():
    """The last cell that sets a variable at its top level, numbered as In [N] (markdown and
    empty cells are not run; the last cell is the grader's)."""
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[
        v4.new_code_cell("x = 1"), v4.new_markdown_cell("y = 2"), v4.new_code_cell("   "),
        v4.new_code_cell("%load_ext foo\ny += 2"), v4.new_code_cell("a, (x, b) = 1, (2, 3)"),
        v4.new_code_cell("def f():\n    w = 1"), v4.new_code_cell("x = y = z = w = 0")])
    assert grading.question_cells(nb, ["x", "y", "z", "w"]) == {"x": 3, "y": 2}


# --------------------------------------------------------------------------------- Ctrl-C
@pytest.mark.slow
def test_ctrl_c_stops_the_sandboxes_at_once_and_leaves_nothing_half_done(tmp_path):
    """Ctrl-C while a notebook that ignores interrupts runs: the grader kills its sandbox
    and stops within seconds (it used to wait for the notebook's time limit), exits 130 with
    one line, keeps the finished student's executed notebook, leaves none for the
    interrupted one (not even an earlier run's) and writes no grade file."""
    assignment, inbox = _class(tmp_path, ["done", "stuck"])
    _submit(assignment, inbox, "done")
    _submit(assignment, inbox, "stuck", after_first=STUBBORN_LOOP)
    graded = assignment / "instructor" / "graded"
    graded.mkdir()
    (graded / "stuck.ipynb").write_text("an earlier run's notebook")
    env = {**os.environ, "PYTHONPATH": str(Path(dpkmeans_classroom.__file__).resolve().parents[1]),
           "PYTHONUNBUFFERED": "1"}  # the dpkmeans_classroom under test
    proc = subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_TERMINAL, "grade", str(assignment), "--submissions",
         str(inbox), "--timeout", "100", "--time-limit", "120"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (graded / "done.ipynb").exists():  # the first student is graded
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        time.sleep(4)  # the stuck notebook is in its loop
        assert sandbox_processes(proc.pid), "the stuck notebook's sandbox is not running"
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert seconds < 5, seconds
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted", err
    assert "Traceback" not in err
    assert json.loads((graded / "done.ipynb").read_text())["cells"]
    assert sorted(p.name for p in graded.iterdir()) == ["done.ipynb"]
    assert not (assignment / "instructor" / "grades.csv").exists()
    assert not (assignment / "instructor" / "feedback").exists()
    assert sandbox_processes(proc.pid) == []
