"""`dpkmeans_classroom make --questions N` (each student their own seeded subset of the
questions, the key and grading following it) and `dpkmeans_classroom make --out` to a place
that cannot be written (book: How to use, "Per-student assignments")."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans_classroom import (
    KeyFileError,
    Limits,
    get_assignment,
    grade_submissions,
    make_assignments,
    read_key,
    student_questions,
)
from dpkmeans_classroom.commands import main
from dpkmeans_classroom.notebook import model_solution

CHAPTER3 = get_assignment(3)
IDS = ["ada", "bob", "cy", "dee", "eve", "fay"]


def _roster(folder: Path) -> Path:
    path = folder / "roster.csv"
    path.write_text("student_id\n" + "".join(f"{i}\n" for i in IDS))
    return path


def _asked(handout: Path) -> list[str]:
    """The answer variables a handed-out notebook asks for, in its order."""
    nb = nbformat.read(str(handout), as_version=4)
    return [c.source.split(" = ...")[0] for c in nb.cells
            if c.cell_type == "code" and c.source.endswith(" = ...  # your answer")]


@pytest.fixture()
def subsets(tmp_path):
    out = tmp_path / "hw"
    make_assignments(_roster(tmp_path), 3, out, course_seed=11, questions=3)
    return out


def test_each_student_gets_their_own_seeded_subset(subsets, tmp_path):
    key, _ = read_key(subsets)
    names = [q.variable for q in CHAPTER3.questions]
    chosen = {sid: key["students"][sid]["questions"] for sid in IDS}
    for sid, asked in chosen.items():
        assert len(asked) == 3 and asked == sorted(asked, key=names.index)  # the book's order
        assert _asked(subsets / "students" / f"{sid}.ipynb") == asked
        assert asked == [q.variable for q in student_questions(CHAPTER3, 11, sid, 3)]
        nb = nbformat.read(str(subsets / "students" / f"{sid}.ipynb"), as_version=4)
        headings = [c.source.split(" (")[0] for c in nb.cells if c.source.startswith("## ")]
        assert headings == ["## Question 1", "## Question 2", "## Question 3"]
    assert len({tuple(a) for a in chosen.values()}) > 1, chosen  # not one subset for all
    parameters = pd.read_csv(subsets / "instructor" / "parameters.csv").set_index("student_id")
    assert parameters.loc["ada", "questions"] == " ".join(chosen["ada"])
    again = tmp_path / "again"
    make_assignments(_roster(tmp_path), 3, again, course_seed=11, questions=3)
    assert {sid: e["questions"] for sid, e in read_key(again)[0]["students"].items()} == chosen


def test_without_questions_everyone_gets_every_question(tmp_path):
    out = tmp_path / "hw"
    make_assignments(_roster(tmp_path), 3, out, course_seed=11)
    assert "questions" not in read_key(out)[0]["students"]["ada"]
    assert _asked(out / "students" / "ada.ipynb") == [q.variable for q in CHAPTER3.questions]


@pytest.mark.slow
def test_grading_follows_the_subset(subsets, tmp_path):
    """The model solution of a student's subset gets full marks out of the subset's points;
    the questions they were not asked have no points and appear in none of their feedback."""
    key, _ = read_key(subsets)
    asked = key["students"]["ada"]["questions"]
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    handout = nbformat.read(str(subsets / "students" / "ada.ipynb"), as_version=4)
    nbformat.write(model_solution(CHAPTER3, handout), str(inbox / "ada.ipynb"))
    grades = grade_submissions(subsets, inbox, limits=Limits(wall_seconds=60, cell_seconds=20))
    row = grades.set_index("student_id").loc["ada"]
    points = sum(q.points for q in CHAPTER3.questions if q.variable in asked)
    assert (row["status"], row["score"], row["max_score"]) == ("graded", points, points)
    others = [q.variable for q in CHAPTER3.questions if q.variable not in asked]
    assert all(pd.isna(row[name]) for name in others if name in row.index)
    feedback = (subsets / "instructor" / "feedback" / "ada.md").read_text()
    moodle = pd.read_csv(subsets / "instructor" / "moodle.csv").set_index("ID number")
    for name in asked:
        assert f"(`{name}`)" in feedback and f"({name})" in moodle.loc["ada", "Feedback"]
    for name in others:
        assert name not in feedback and name not in moodle.loc["ada", "Feedback"]


@pytest.mark.parametrize("count", ["0", "9"])
def test_a_count_out_of_range_is_one_line(tmp_path, capsys, count):
    assert main(["make", "--roster", str(_roster(tmp_path)), "--chapter", "3",
                 "--out", str(tmp_path / "hw"), "--questions", count]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --questions: chapter 3 has 8 questions: ask 1 to 8 of them, not {count}"
    assert not (tmp_path / "hw").exists()


def test_a_key_asking_unknown_questions_is_refused(subsets):
    path = subsets / "instructor" / "key.json"
    key = json.loads(path.read_text())
    key["students"]["ada"]["questions"] = ["run_cost", "not_a_question"]
    path.write_text(json.dumps(key))
    with pytest.raises(KeyFileError, match="student 'ada': 'questions' must list some of"):
        read_key(subsets)


# ------------------------------------------------------------------------ make --out
@pytest.mark.parametrize("where, why", [
    ("a-file/hw", "a part of that path is a file, not a folder"),
    ("/proc/dpkmeans-hw", "No such file or directory"),  # not writable, even by root
])
def test_make_to_a_place_that_cannot_be_written_is_one_line(tmp_path, capsys, where, why):
    (tmp_path / "a-file").write_text("")
    out = Path(where) if where.startswith("/") else tmp_path / where
    assert main(["make", "--roster", str(_roster(tmp_path)), "--chapter", "3",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: cannot write the assignment to {out} ({why}): give --out a folder "
                   "you can write\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "roster.csv"]
