"""``python -m dpkmeans assignments make|grade`` (see :mod:`dpkmeans.assignments`)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser"]

#: The course seed when none is given: the same roster then gives the same assignments.
DEFAULT_COURSE_SEED = 20261123


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = subparsers.add_parser("assignments", help="per-student assignments and grading")
    commands = group.add_subparsers(dest="command", metavar="COMMAND", required=True)

    make = commands.add_parser("make", help="one parametrized notebook per student, and the key")
    make.add_argument("--roster", required=True, help="CSV with a student_id column")
    make.add_argument("--chapter", required=True, type=int, help="the book chapter (e.g. 5)")
    make.add_argument("--out", help="output directory (default: assignments-chNN)")
    make.add_argument("--course-seed", type=int, default=DEFAULT_COURSE_SEED,
                      help=f"seed of every student's parameters (default {DEFAULT_COURSE_SEED})")
    make.add_argument("--overwrite", action="store_true", help="replace an existing directory")
    make.set_defaults(func=_cmd_make)

    grade = commands.add_parser("grade", help="run the submissions, write a grades CSV")
    grade.add_argument("assignment", help="the directory written by `assignments make`")
    grade.add_argument("--submissions", required=True, help="directory of <student_id>.ipynb")
    grade.add_argument("--out", help="grades CSV (default: <assignment>/instructor/grades.csv)")
    grade.add_argument("--timeout", type=float, default=600.0,
                       help="seconds a notebook cell may run (default 600)")
    grade.set_defaults(func=_cmd_grade)


def _cmd_make(args: argparse.Namespace) -> int:
    from dpkmeans.assignments import make_assignments

    out = args.out or f"assignments-ch{args.chapter:02d}"
    table = make_assignments(args.roster, args.chapter, out, course_seed=args.course_seed,
                             overwrite=args.overwrite)
    print(f"chapter {args.chapter}: {len(table)} notebooks in {out}/students/; "
          f"the key (keep it hidden) is {out}/instructor/key.json")
    return 0


def _cmd_grade(args: argparse.Namespace) -> int:
    from dpkmeans.assignments import grade_submissions

    grades = grade_submissions(args.assignment, args.submissions, args.out, timeout=args.timeout,
                               progress=lambda sid: print(f"grading {sid}", file=sys.stderr))
    print(grades[["student_id", "status", "score", "max_score"]].to_string(index=False))
    for sid in grades.attrs.get("unknown_submissions", []):
        print(f"warning: {sid}.ipynb is not in the key; not graded", file=sys.stderr)
    return 0
