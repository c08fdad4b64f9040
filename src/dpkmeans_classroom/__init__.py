"""Per-student assignments from the book's chapters, and their grading (book: How to use).

The book's classroom tools: a package of its own beside the library, which it imports (the
library never imports it), installed with the book (``make install``) and not part of the
``dpkmeans`` wheel (docs/design.md, "The packages").

``python -m dpkmeans_classroom make --roster roster.csv --chapter 5 --out hw5`` writes one
papermill-parametrized notebook per student (their own seed, dataset, epsilon, ...) and a
hidden key of reference answers computed by the library for each student's parameters;
``python -m dpkmeans_classroom grade hw5 --submissions inbox/`` runs each submitted notebook
in a sandbox on the student's own parameters and writes the grades, Canvas and Moodle exports
and one feedback file per student.

Modules: :mod:`~dpkmeans_classroom.spec` (questions, parameters, marking),
:mod:`~dpkmeans_classroom.roster`, :mod:`~dpkmeans_classroom.notebook` (papermill),
:mod:`~dpkmeans_classroom.registry` (the chapters' assignments, each imported on first use),
:mod:`~dpkmeans_classroom.course` (make), :mod:`~dpkmeans_classroom.key` (the key),
:mod:`~dpkmeans_classroom.grading` (grade), :mod:`~dpkmeans_classroom.sandbox` and
:mod:`~dpkmeans_classroom.runner` (running a notebook in isolation),
:mod:`~dpkmeans_classroom.exports` (grades, Canvas, Moodle, feedback), one module per
chapter's assignment (``chapter01`` ... ``chapter12``) and
:mod:`~dpkmeans_classroom.commands` (the command line, also the ``dpkmeans-classroom``
script).
"""

from dpkmeans_classroom.course import make_assignments
from dpkmeans_classroom.grading import grade_submissions
from dpkmeans_classroom.key import KeyFileError, read_key
from dpkmeans_classroom.registry import ASSIGNMENTS, get_assignment
from dpkmeans_classroom.roster import RosterError, Student, read_roster
from dpkmeans_classroom.sandbox import LEVELS, Limits, detect_level
from dpkmeans_classroom.spec import (
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
