"""Per-student assignments (book: How to use): roster, parameters, marking, and the worked
example of a class of three: the made notebooks, one correct and one wrong submission, one
missing, and the grades file."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pandas as pd
import pytest

from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom import (
    Question,
    RosterError,
    get_assignment,
    make_assignments,
    mark_answer,
    read_roster,
    student_parameters,
)
from dpkmeans_classroom.commands import main
from dpkmeans_classroom.notebook import collect_answers, is_real_number

CHAPTER5 = get_assignment(5)


# ------------------------------------------------------------------------------------ roster
def _roster(tmp_path, text: str):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


def test_roster_reads_ids_and_names_in_order(tmp_path):
    students = read_roster(_roster(tmp_path, "student_id,name\nada,Ada L\nb-2,\n"))
    assert [(s.student_id, s.name) for s in students] == [("ada", "Ada L"), ("b-2", "")]


@pytest.mark.parametrize("text, message", [
    ("name\nada\n", "needs a 'student_id' column"),
    ("student_id\n", "lists no student"),
    ("student_id\nada\nada\n", "row 3: student_id 'ada' appears twice"),
    ("student_id\n../etc\n", "row 2: student_id '../etc' must be"),
    ("student_id\n\n", "lists no student"),
    ("student_id,name\n,Nobody\n", "row 2: student_id '' must be"),
])
def test_roster_errors_name_the_row_and_problem(tmp_path, text, message):
    with pytest.raises(RosterError, match=message.replace("(", r"\(").replace(".", r"\.")):
        read_roster(_roster(tmp_path, text))


def test_missing_roster_file_is_a_clear_error(tmp_path):
    with pytest.raises(RosterError, match="roster file not found"):
        read_roster(tmp_path / "nope.csv")


# -------------------------------------------------------------------------------- parameters
def test_student_parameters_are_stable_drawn_from_the_pools_and_differ():
    a = student_parameters(CHAPTER5, 7, "ada")
    assert a == student_parameters(CHAPTER5, 7, "ada")
    assert a["STUDENT"] == "ada" and isinstance(a["SEED"], int)
    for name, pool in CHAPTER5.pools.items():
        assert a[name] in pool
    class_of_40 = [student_parameters(CHAPTER5, 7, f"s{i}") for i in range(40)]
    assert len({p["SEED"] for p in class_of_40}) == 40
    for name in CHAPTER5.pools:  # every pool value is handed out in a class of 40
        assert {p[name] for p in class_of_40} == set(CHAPTER5.pools[name])
    assert student_parameters(CHAPTER5, 8, "ada")["SEED"] != a["SEED"]


def test_unknown_chapter_lists_the_chapters_with_an_assignment():
    with pytest.raises(DPKMeansError, match=r"chapter 99 has no assignment; chapters with one: \[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12\]"):
        get_assignment(99)


def test_an_answer_cannot_share_a_parameters_name():
    q = Question("EPSILON", "?", lambda p, c: 0.0, "hint", solution="EPSILON = 0")
    others = tuple(Question(f"q{i}", "?", lambda p, c: 0.0, "hint", solution=f"q{i} = 0")
                   for i in range(4))
    with pytest.raises(ValueError, match="is a parameter and an answer"):
        type(CHAPTER5)(chapter=1, slug="x", title="x", introduction="", pools={"EPSILON": (1,)},
                       setup="", questions=(q, *others), prepare=lambda p: {})


# ----------------------------------------------------------------------------------- marking
Q = Question("x", "?", lambda p, c: 0.0, "Look at chapter 1.", points=2.0, rtol=1e-6,
             solution="x = 25.0")


def _answer(value):
    ns = {"x": value}
    return _collected(ns)["x"]


def _collected(ns, names=("x",)):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "a.json"
        collect_answers(ns, list(names), str(path))
        return json.loads(path.read_text())


@pytest.mark.parametrize("value, points, feedback", [
    (25.0, 2.0, "correct"),
    (np.float32(25.0), 2.0, "correct"),
    (np.array(25.0), 2.0, "correct"),
    (25 + 2e-5, 2.0, "correct"),  # within rtol 1e-6 of 25
    (25.1, 0.0, "`x` = 25.1 is not right. Look at chapter 1."),
    ("25", 0.0, "`x` must be a number, got str: '25'"),
    (True, 0.0, "`x` must be a number, got bool: True"),
    ([25.0], 0.0, "`x` must be a number, got list: [25.0]"),
    (float("nan"), 0.0, "`x` is nan, not a finite number"),
    (Ellipsis, 0.0, "no answer: `x` is still `...`"),
])
def test_mark_answer(value, points, feedback):
    mark = mark_answer(Q, _answer(value), 25.0)
    assert (mark.points, mark.out_of, mark.feedback) == (points, 2.0, feedback)


def test_mark_missing_answer_names_the_notebook_error():
    missing = _collected({}, ("x",))["x"]
    assert mark_answer(Q, missing, 1.0).feedback == "no answer: `x` is not set"
    assert mark_answer(Q, missing, 1.0, error="cell 9: ZeroDivisionError").feedback == (
        "no answer: `x` is not set (the notebook raised cell 9: ZeroDivisionError)")


def test_real_numbers_only():
    assert is_real_number(3) and is_real_number(np.int64(3)) and is_real_number(2.5)
    assert not any(is_real_number(v) for v in (True, np.bool_(True), "3", None, 1j, [1.0]))


# ---------------------------------------------------------------- the references themselves
def test_chapter5_references_match_the_book_formulas():
    """The key's answers (read from the fit's ledger) equal the chapter's formulas."""
    p = {"STUDENT": "t", "SEED": 11, "DATASET": "iris", "EPSILON": 0.5, "K": 3, "ITERATIONS": 5}
    ref = CHAPTER5.references(p)
    d = 4
    assert ref["sensitivity"] == d + 1
    assert ref["epsilon_per_iteration"] == pytest.approx(0.5 / 5, rel=1e-15)
    assert ref["noise_scale"] == pytest.approx((d + 1) / 0.1, rel=1e-6)
    assert ref["iterations_impr"] in range(2, 8)
    assert ref == CHAPTER5.references(p)  # same seed, same numbers


# --------------------------------------------------------------------------- worked example
CORRECT = {
    "sensitivity": "sensitivity = lloyd_query_sensitivity((-np.ones(d), np.ones(d))).joint",
    "epsilon_per_iteration": "epsilon_per_iteration = EPSILON / ITERATIONS",
    "noise_scale": "noise_scale = (d + 1) / (EPSILON / ITERATIONS)",
    "iterations_impr": "iterations_impr = schedules.su_iterations(EPSILON, N, K, d)",
    "diffprivlib_factor": "diffprivlib_factor = diffprivlib_epsilon_factor(d)",
    "nicv": ("model = DPKMeans(n_clusters=K, epsilon=EPSILON, bounds=(-1, 1), "
             "algorithm='dplloyd', max_iter=ITERATIONS, random_state=SEED).fit(X)\n"
             "nicv = metrics.nicv(X, model.cluster_centers_)"),
    "more_iterations": "more_iterations = 3",
}
# Wrong: d instead of d + 1, a string, and a cell that raises.
WRONG = {**CORRECT, "sensitivity": "sensitivity = d", "noise_scale": "noise_scale = 'twenty'",
         "nicv": "nicv = 1 / 0"}


def _answer_notebook(handed_out, submitted, code: dict[str, str], *, tamper: bool = False):
    """A student's work: each `name = ...` cell replaced by their code (and, with ``tamper``,
    their injected parameters changed, which grading must ignore)."""
    nb = nbformat.read(str(handed_out), as_version=4)
    for cell in nb.cells:
        for name, source in code.items():
            if cell.cell_type == "code" and cell.source.startswith(f"{name} = ..."):
                cell.source = source
        if tamper and "injected-parameters" in cell.metadata.get("tags", []):
            cell.source += "\nEPSILON = 100.0\nSEED = 1\n"
    nbformat.write(nb, str(submitted))



@pytest.mark.slow
def test_worked_example_three_students(tmp_path, data_available, capsys):
    roster = _roster(tmp_path, "student_id,name\nada,Ada Lovelace\nbob,Bob\ncy,Cy\n")
    out, inbox = tmp_path / "hw5", tmp_path / "inbox"
    assert main(["make", "--roster", str(roster), "--chapter", "5",
                 "--out", str(out)]) == 0
    key = json.loads((out / "instructor" / "key.json").read_text())
    assert list(key["students"]) == ["ada", "bob", "cy"]
    params = pd.read_csv(out / "instructor" / "parameters.csv")
    assert list(params["student_id"]) == ["ada", "bob", "cy"]

    for sid, entry in key["students"].items():  # each notebook: own parameters, no answers
        nb = nbformat.read(str(out / "students" / f"{sid}.ipynb"), as_version=4)
        injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert len(injected) == 1
        namespace: dict = {}
        exec(injected[0].source, namespace)  # noqa: S102 - papermill's literal assignments
        assert {n: namespace[n] for n in entry["parameters"]} == entry["parameters"]
        text = nbformat.writes(nb)  # the reference answers stay in the key
        assert repr(entry["answers"]["nicv"]) not in text
        assert repr(entry["answers"]["diffprivlib_factor"]) not in text

    inbox.mkdir()
    _answer_notebook(out / "students" / "ada.ipynb", inbox / "ada.ipynb", CORRECT, tamper=True)
    _answer_notebook(out / "students" / "bob.ipynb", inbox / "bob.ipynb", WRONG)
    # cy submits nothing; an unknown file is reported, not graded
    _answer_notebook(out / "students" / "bob.ipynb", inbox / "mallory.ipynb", CORRECT)
    capsys.readouterr()
    assert main(["grade", str(out), "--submissions", str(inbox)]) == 0
    printed = capsys.readouterr()
    assert "'mallory.ipynb' is not in the key" in printed.err

    grades = pd.read_csv(out / "instructor" / "grades.csv", keep_default_na=False).set_index(
        "student_id")
    assert list(grades.index) == ["ada", "bob", "cy"]
    ada, bob, cy = grades.loc["ada"], grades.loc["bob"], grades.loc["cy"]
    # ada is right everywhere, graded on her own parameters despite her edit
    assert (ada["status"], ada["score"], ada["max_score"]) == ("graded", 8.0, 8.0)
    for q in CHAPTER5.questions:
        assert ada[f"{q.variable}_feedback"] == "correct"
    # bob: the three wrong answers get 0 with their feedback, the four right ones count
    assert bob["score"] == 4.0  # sensitivity, noise_scale and nicv wrong (1 + 1 + 2 of 8)
    assert bob["status"].startswith("graded, with an error: cell ")
    assert bob["status"].endswith("ZeroDivisionError: division by zero")
    assert bob["sensitivity"] == 0.0 and bob["sensitivity_feedback"].startswith(
        "`sensitivity` = ") and "its count by 1" in bob["sensitivity_feedback"]
    assert bob["noise_scale_feedback"] == "`noise_scale` must be a number, got str: 'twenty'"
    assert bob["nicv_feedback"].startswith("no answer: `nicv` is not set (the notebook raised")
    assert bob["epsilon_per_iteration_feedback"] == "correct"
    # cy: nothing submitted
    assert (cy["status"], cy["score"]) == ("missing", 0.0)
    assert set(cy[[f"{q.variable}_feedback" for q in CHAPTER5.questions]]) == {"no submission"}
    assert (out / "instructor" / "graded" / "ada.ipynb").is_file()


@pytest.mark.slow
def test_the_handed_out_notebook_runs_and_scores_zero(tmp_path, data_available):
    roster = _roster(tmp_path, "student_id\nada\n")
    out = tmp_path / "hw"
    make_assignments(roster, 5, out, course_seed=1)
    from dpkmeans_classroom import grade_submissions

    grades = grade_submissions(out, out / "students")
    row = grades.iloc[0]
    assert (row["status"], row["score"]) == ("graded", 0.0)
    assert row["nicv_feedback"] == "no answer: `nicv` is still `...`"


def test_make_refuses_to_overwrite_and_grade_needs_a_key(tmp_path, capsys):
    roster = _roster(tmp_path, "student_id\nada\n")
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "old.txt").write_text("x")
    assert main(["make", "--roster", str(roster), "--chapter", "5",
                 "--out", str(tmp_path / "hw")]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert main(["make", "--roster", str(roster), "--chapter", "5",
                 "--out", str(tmp_path / "hw"), "--overwrite"]) == 2
    assert "not deleting it" in capsys.readouterr().err
    assert (tmp_path / "hw" / "old.txt").exists()
    (tmp_path / "inbox").mkdir()
    assert main(["grade", str(tmp_path / "hw"), "--submissions",
                 str(tmp_path / "inbox")]) == 2
    assert "no key at" in capsys.readouterr().err
    assert main(["make", "--roster", str(roster), "--chapter", "99",
                 "--out", str(tmp_path / "hw9")]) == 2
    assert "chapter 99 has no assignment" in capsys.readouterr().err


def test_a_value_that_cannot_be_converted_is_not_a_number():
    class Odd(float):
        def __float__(self):
            raise RuntimeError("no")

        def __repr__(self):
            raise RuntimeError("no")

    answer = _answer(Odd(1.0))
    assert answer["value"] is None and answer["repr"] == "<a value that cannot be shown>"
    assert mark_answer(Q, answer, 1.0).points == 0.0
