"""Per-student assignments from the book's chapters, and their grading (book: How to use).

``python -m dpkmeans assignments make --roster roster.csv --chapter 5 --out hw5`` writes one
papermill-parametrized notebook per student (their own seed, dataset, epsilon, ...) and a
hidden key of reference answers computed by the library for each student's parameters;
``python -m dpkmeans assignments grade hw5 --submissions inbox/`` runs the submitted notebooks
on those parameters and writes a grades CSV with per-question feedback.

Modules: :mod:`~dpkmeans.assignments.spec` (questions, parameters, marking),
:mod:`~dpkmeans.assignments.roster`, :mod:`~dpkmeans.assignments.notebook` (papermill),
:mod:`~dpkmeans.assignments.course` (make and grade), one module per chapter's assignment
(:mod:`~dpkmeans.assignments.chapter05`) and :mod:`~dpkmeans.assignments.commands` (the CLI).
"""

from dpkmeans.assignments.course import (
    ASSIGNMENTS,
    get_assignment,
    grade_submissions,
    make_assignments,
)
from dpkmeans.assignments.roster import RosterError, Student, read_roster
from dpkmeans.assignments.spec import Assignment, Mark, Question, mark_answer, student_parameters

__all__ = ["ASSIGNMENTS", "Assignment", "Mark", "Question", "RosterError", "Student",
           "get_assignment", "grade_submissions", "make_assignments", "mark_answer",
           "read_roster", "student_parameters"]
