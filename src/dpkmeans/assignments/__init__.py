"""Per-student assignments from the book's chapters, and their grading (book: How to use).

``python -m dpkmeans assignments make --roster roster.csv --chapter 5 --out hw5`` writes one
papermill-parametrized notebook per student (their own seed, dataset, epsilon, ...) and a
hidden key of reference answers computed by the library for each student's parameters;
``python -m dpkmeans assignments grade hw5 --submissions inbox/`` runs each submitted notebook
in a sandbox on the student's own parameters and writes the grades, Canvas and Moodle exports
and one feedback file per student.

Modules: :mod:`~dpkmeans.assignments.spec` (questions, parameters, marking),
:mod:`~dpkmeans.assignments.roster`, :mod:`~dpkmeans.assignments.notebook` (papermill),
:mod:`~dpkmeans.assignments.registry` (the chapters' assignments, each imported on first use),
:mod:`~dpkmeans.assignments.course` (make), :mod:`~dpkmeans.assignments.key` (the key),
:mod:`~dpkmeans.assignments.grading` (grade), :mod:`~dpkmeans.assignments.sandbox` and
:mod:`~dpkmeans.assignments.runner` (running a notebook in isolation),
:mod:`~dpkmeans.assignments.exports` (grades, Canvas, Moodle, feedback), one module per
chapter's assignment (``chapter01`` ... ``chapter12``) and
:mod:`~dpkmeans.assignments.commands` (the CLI).
"""

from dpkmeans.assignments.course import make_assignments
from dpkmeans.assignments.grading import grade_submissions
from dpkmeans.assignments.key import KeyFileError, read_key
from dpkmeans.assignments.registry import ASSIGNMENTS, get_assignment
from dpkmeans.assignments.roster import RosterError, Student, read_roster
from dpkmeans.assignments.sandbox import LEVELS, Limits, detect_level
from dpkmeans.assignments.spec import (
    Assignment,
    Mark,
    Question,
    mark_answer,
    student_parameters,
    student_questions,
)

__all__ = ["ASSIGNMENTS", "LEVELS", "Assignment", "KeyFileError", "Limits", "Mark", "Question",
           "RosterError", "Student", "detect_level", "get_assignment", "grade_submissions",
           "make_assignments", "mark_answer", "read_key", "read_roster", "student_parameters",
           "student_questions"]
