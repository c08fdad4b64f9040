"""Grading: the round trip of every chapter's assignment, what grading writes, and bad input
(book: How to use, "Per-student assignments" and "Grading you can trust")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans_classroom import (
    ASSIGNMENTS,
    KeyFileError,
    Limits,
    RosterError,
    make_assignments,
    read_key,
    read_roster,
)
from dpkmeans_classroom.commands import main
from dpkmeans_classroom.exports import feedback_markdown, neutralise, write_csv
from dpkmeans_classroom.grading import read_answers
from dpkmeans_classroom.notebook import model_solution
from dpkmeans_classroom.sandbox import read_untrusted


def _roster(folder: Path, text: str) -> Path:
    path = folder / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ every chapter, round trip
def test_every_chapter_has_an_assignment():
    assert sorted(ASSIGNMENTS) == list(range(1, 13))
    for assignment in ASSIGNMENTS.values():
        assert len(assignment.questions) >= 5
        kinds = {q.kind for q in assignment.questions}
        assert kinds == {"number", "choice"}, assignment.chapter  # computation and interpretation


def test_how_to_use_lists_every_assignment_as_it_is():
    text = (Path(__file__).resolve().parents[2] / "book" / "how_to_use.md").read_text()
    for chapter, a in ASSIGNMENTS.items():
        title = a.title.removesuffix(f" (chapter {chapter})")
        choices = sum(q.kind == "choice" for q in a.questions)
        row = f"| {chapter} | {title} | {len(a.questions)} ({choices}) | {a.max_points:g} |"
        assert row in text, row


@pytest.mark.slow
@pytest.mark.parametrize("chapter", range(1, 13))
def test_round_trip(chapter, tmp_path, data_available, capsys):
    """`dpkmeans_classroom make --chapter N`, then the model solution scores full marks and the
    untouched handout 0, through the command line."""
    roster = _roster(tmp_path, "student_id,name\nsolver,Sol Ver\nidle,Id Le\n")
    out, inbox = tmp_path / "hw", tmp_path / "inbox"
    assert main(["make", "--roster", str(roster), "--chapter", str(chapter),
                 "--out", str(out)]) == 0
    inbox.mkdir()
    assignment = ASSIGNMENTS[chapter]
    handout = nbformat.read(str(out / "students" / "solver.ipynb"), as_version=4)
    nbformat.write(model_solution(assignment, handout), str(inbox / "solver.ipynb"))
    (inbox / "idle.ipynb").write_bytes((out / "students" / "idle.ipynb").read_bytes())
    assert main(["grade", str(out), "--submissions", str(inbox),
                 "--jobs", "2"]) == 0
    grades = pd.read_csv(out / "instructor" / "grades.csv").set_index("student_id")
    assert (grades.loc["solver", "status"], grades.loc["solver", "score"]) == (
        "graded", assignment.max_points), grades.loc["solver"].to_dict()
    assert (grades.loc["idle", "status"], grades.loc["idle", "score"]) == ("graded", 0.0)
    assert "sandbox: " in capsys.readouterr().out


# ------------------------------------------------------------------------- what is written
def test_neutralise_formulas():
    for text in ("=HYPERLINK(\"http://x\",\"y\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert neutralise(text) == "'" + text
    assert neutralise("Ada") == "Ada" and neutralise(-1.5) == -1.5 and neutralise("") == ""


def test_csv_cells_and_headers_are_neutralised(tmp_path):
    table = pd.DataFrame({"student_id": ["a"], "=cmd": ["=1+1"], "score": [-0.0]})
    write_csv(table, tmp_path / "t.csv")
    text = (tmp_path / "t.csv").read_text()
    assert "'=cmd" in text and "'=1+1" in text and "\n=" not in text and ",=" not in text


def test_feedback_escapes_the_students_text():
    q = ASSIGNMENTS[5].questions[0]
    row = {"student_id": "ada", "status": "graded", "score": 0.0, "max_score": 1.0,
           q.variable: 0.0, f"{q.variable}_feedback": "`x` = <script>|\nhi"}
    text = feedback_markdown("T", row, [q])
    assert "<script>" not in text and "&lt;script&gt;\\| hi" in text


@pytest.mark.parametrize("payload", [
    b"not json", b"[]", b'{"x": 1}', b'{"x": {"present": true}}',
    b'{"x": {"present": "yes", "ellipsis": false, "value": 1, "type": "int", "repr": "1"}}',
    b'{"x": {"present": true, "ellipsis": false, "value": true, "type": "b", "repr": "1"}}',
    b'{"x": {"present": true, "ellipsis": false, "value": 1, "type": "int", "repr": "1"}, '
    b'"y": 2}',
])
def test_answers_that_the_collector_did_not_write_are_refused(payload):
    assert read_answers(payload, ["x"]) is None


def test_answers_are_read_and_cut_to_size():
    entry = {"present": True, "ellipsis": False, "value": 2, "type": "t" * 99, "repr": "r" * 999}
    answers = read_answers(json.dumps({"x": entry}).encode(), ["x"])
    assert answers["x"]["value"] == 2.0 and len(answers["x"]["repr"]) == 80


def test_untrusted_files_are_never_followed_and_are_size_limited(tmp_path):
    (tmp_path / "secret").write_text("key")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    (tmp_path / "big").write_bytes(b"x" * 100)
    os.mkfifo(tmp_path / "fifo")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_untrusted(folder, "secret", 10) == b"key"
        assert read_untrusted(folder, "link", 10) is None
        assert read_untrusted(folder, "big", 10) is None
        assert read_untrusted(folder, "fifo", 10) is None  # would block a plain open()
        assert read_untrusted(folder, "missing", 10) is None
    finally:
        os.close(folder)


@pytest.mark.parametrize("field, value", [("wall_seconds", 0), ("memory_bytes", -1),
                                          ("processes", True), ("cell_seconds", "9")])
def test_limits_must_be_positive_numbers(field, value):
    with pytest.raises(ValueError, match=f"sandbox limit {field}"):
        Limits(**{field: value})


# ------------------------------------------------------------------------------- bad input
def test_a_non_utf8_roster_is_named(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes("student_id,name\nada,Zo\xeb\n".encode("latin-1"))
    with pytest.raises(RosterError, match="is not UTF-8 text"):
        read_roster(path)


def test_ids_differing_only_in_case_are_duplicates(tmp_path):
    with pytest.raises(RosterError, match="row 3: student_id 'ADA' appears twice"):
        read_roster(_roster(tmp_path, "student_id\nada\nADA\n"))


def test_the_roster_keeps_the_exports_columns(tmp_path):
    students = read_roster(_roster(
        tmp_path, "student_id,name,email,sis_id,section\nada,Ada,a@x.org,S1,B\n"))
    assert (students[0].email, students[0].sis_id, students[0].section) == ("a@x.org", "S1", "B")


@pytest.fixture()
def made(tmp_path):
    """A chapter-3 assignment (no data files) for two students, one named like a formula."""
    roster = _roster(tmp_path, 'student_id,name,email\nada,"=HYPERLINK(""http://x"",""y"")",'
                               "a@x.org\nbob,Bob,\n")
    out = tmp_path / "hw"
    make_assignments(roster, 3, out, course_seed=1)
    return out


def test_the_key_is_private_and_complete(made):
    assert oct((made / "instructor" / "key.json").stat().st_mode & 0o777) == "0o600"
    assert oct((made / "instructor").stat().st_mode & 0o777) == "0o700"
    key, assignment = read_key(made)
    assert assignment.chapter == 3 and list(key["students"]) == ["ada", "bob"]
    params = (made / "instructor" / "parameters.csv").read_text()
    assert "'=HYPERLINK" in params


@pytest.mark.parametrize("corrupt, message", [
    (lambda k: "{not json", "is not valid JSON"),
    (lambda k: json.dumps([1]), "is not a key"),
    (lambda k: json.dumps({**k, "format": 1}), "has key format 1"),
    (lambda k: json.dumps({**k, "students": {}}), "'students' must map"),
    (lambda k: json.dumps({**k, "students": {"ada": {**k["students"]["ada"],
                                                     "answers": None}}}), "no answers"),
    (lambda k: json.dumps({**k, "students": {"ada": {**k["students"]["ada"],
                                                     "answers": {}}}}), "is missing or not"),
    (lambda k: json.dumps({**k, "students": {"../x": k["students"]["ada"]}}),
     "not a safe student id"),
    (lambda k: json.dumps({**k, "students": {"ada": {**k["students"]["ada"],
                                                     "parameters": {"STUDENT": "ada"}}}}),
     "are missing"),
])
def test_a_corrupted_key_is_one_named_error_and_nothing_is_written(made, corrupt, message,
                                                                   tmp_path, capsys):
    path = made / "instructor" / "key.json"
    path.write_text(corrupt(json.loads(path.read_text())))
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    with pytest.raises(KeyFileError, match=message):
        read_key(made)
    assert main(["grade", str(made), "--submissions", str(inbox)]) == 2
    err = capsys.readouterr().err.strip()
    assert message.split("'")[0] in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (made / "instructor" / "grades.csv").exists()
    assert not (made / "instructor" / "graded").exists()


def test_a_missing_submissions_folder_is_named(made, tmp_path, capsys):
    assert main(["grade", str(made), "--submissions",
                 str(tmp_path / "nowhere")]) == 2
    assert "submissions directory not found" in capsys.readouterr().err


@pytest.mark.slow
def test_files_that_are_not_notebooks_and_formula_names(made, tmp_path, capsys):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "ada.ipynb").write_text("this is not a notebook")
    (tmp_path / "elsewhere.ipynb").write_bytes((made / "students" / "bob.ipynb").read_bytes())
    (inbox / "bob.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    (inbox / "=evil.ipynb").write_text("{}")
    assert main(["grade", str(made), "--submissions", str(inbox)]) == 0
    printed = capsys.readouterr()
    assert "'=evil.ipynb' is not in the key" in printed.err
    grades = pd.read_csv(made / "instructor" / "grades.csv").set_index("student_id")
    assert grades.loc["ada", "status"].startswith(
        "not run: the submission is not a readable notebook")
    assert grades.loc["bob", "status"].startswith("not run: the submission is not a regular file")
    assert list(grades["score"]) == [0.0, 0.0]
    for name in ("grades.csv", "canvas.csv"):  # the two that carry the name
        text = (made / "instructor" / name).read_text()
        assert "'=HYPERLINK" in text and ',"=HYPERLINK' not in text and ",=HYPERLINK" not in text
    canvas = pd.read_csv(made / "instructor" / "canvas.csv")
    assert list(canvas["SIS User ID"]) == ["ada", "bob"]
    assert list(canvas["SIS Login ID"].fillna("")) == ["a@x.org", ""]
    feedback = (made / "instructor" / "feedback" / "ada.md").read_text()
    assert "Score: 0 of" in feedback and "not a readable notebook" in feedback


def test_make_writes_nothing_when_it_fails(tmp_path, monkeypatch):
    roster = _roster(tmp_path, "student_id\nada\nbob\n")
    assignment = ASSIGNMENTS[3]

    def broken(parameters):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(type(assignment), "references", lambda self, p: broken(p))
    with pytest.raises(RuntimeError, match="interrupted"):
        make_assignments(roster, 3, tmp_path / "hw", course_seed=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["roster.csv"]
