"""``python -m dpkmeans_classroom make|grade`` (the ``dpkmeans-classroom`` script; see
:mod:`dpkmeans_classroom`). Errors are reported as the library's command line reports them
(:func:`dpkmeans.cli.run`): one line, exit status 2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from dpkmeans import __version__
from dpkmeans.cli import run
from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom.course import make_assignments
from dpkmeans_classroom.grading import grade_submissions
from dpkmeans_classroom.sandbox import LEVELS, Limits

__all__ = ["PROG", "add_commands", "build_parser", "main"]

#: How the book spells the command line (``python -m dpkmeans_classroom``).
PROG = "python -m dpkmeans_classroom"
#: The course seed when none is given: the same roster then gives the same assignments.
DEFAULT_COURSE_SEED = 20261123


def build_parser() -> argparse.ArgumentParser:
    """The classroom's command line: ``make`` and ``grade``.

    Returns
    -------
    argparse.ArgumentParser
        The parser; each command sets ``func``, run by :func:`dpkmeans.cli.run`.

    Examples
    --------
    >>> args = build_parser().parse_args(["make", "--roster", "r.csv", "--chapter", "5"])
    >>> args.command, args.chapter, args.course_seed
    ('make', 5, 20261123)
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description="Per-student assignments from the chapters of 'Private k-Means, "
                               "Reproduced', and their grading in a sandbox.")
    parser.add_argument("--version", action="version",
                        version=f"dpkmeans_classroom (dpkmeans {__version__})")
    add_commands(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the classroom's command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, or 2 after a usage or data error (one line, ``error: ...``).

    Examples
    --------
    >>> main(["make", "--roster", "no-such.csv", "--chapter", "99"])
    2
    """
    return run(build_parser(), argv)


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``make`` and ``grade`` to ``commands``, a parser's ``add_subparsers()``.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        Where the two commands are added.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_commands(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["grade", "hw5", "--submissions", "inbox"]).jobs
    1
    """
    make = commands.add_parser("make", help="one parametrized notebook per student, and the key")
    make.add_argument("--roster", required=True,
                      help="UTF-8 CSV with a student_id column (optional: name, email, sis_id, "
                           "section)")
    make.add_argument("--chapter", required=True, type=int, help="the book chapter, 1 to 12")
    make.add_argument("--out", help="output directory (default: assignments-chNN)")
    make.add_argument("--course-seed", type=int, default=DEFAULT_COURSE_SEED,
                      help=f"seed of every student's parameters (default {DEFAULT_COURSE_SEED})")
    make.add_argument("--overwrite", action="store_true", help="replace an existing directory")
    make.add_argument("--questions", type=int, metavar="N",
                      help="ask each student their own N of the chapter's questions, drawn "
                           "from the course seed and their id (default: all questions)")
    make.set_defaults(func=_cmd_make)

    grade = commands.add_parser(
        "grade", help="run each submission in a sandbox; write grades, exports, feedback")
    grade.add_argument("assignment", help="the directory written by `make`")
    grade.add_argument("--submissions", required=True, help="directory of <student_id>.ipynb")
    grade.add_argument("--out", help="folder of grades.csv, canvas.csv, moodle.csv, feedback/ "
                                     "and graded/ (default: <assignment>/instructor)")
    grade.add_argument("--jobs", type=int, default=1, help="notebooks run at once (default 1)")
    grade.add_argument("--sandbox", choices=("auto", *LEVELS), default="auto",
                       help="isolation level (default: the strongest this machine offers)")
    defaults = Limits()
    grade.add_argument("--timeout", type=float, default=defaults.cell_seconds,
                       help=f"seconds a cell may run (default {defaults.cell_seconds:g})")
    grade.add_argument("--time-limit", type=float, default=defaults.wall_seconds,
                       help="seconds a whole notebook may run "
                            f"(default {defaults.wall_seconds:g})")
    grade.add_argument("--memory", type=int, default=defaults.memory_bytes // 2**20,
                       help="MiB of address space a process of the notebook may use "
                            f"(default {defaults.memory_bytes // 2**20})")
    grade.set_defaults(func=_cmd_grade)


def _cmd_make(args: argparse.Namespace) -> int:
    out = args.out or f"assignments-ch{args.chapter:02d}"
    table = make_assignments(args.roster, args.chapter, out, course_seed=args.course_seed,
                             overwrite=args.overwrite, questions=args.questions)
    print(f"chapter {args.chapter}: {len(table)} notebooks in {out}/students/; "
          f"the key (keep it hidden) is {out}/instructor/key.json")
    return 0


def _cmd_grade(args: argparse.Namespace) -> int:
    try:
        limits = replace(Limits(), cell_seconds=args.timeout, wall_seconds=args.time_limit,
                         memory_bytes=args.memory * 2**20,
                         cpu_seconds=max(1, int(args.time_limit)))
    except ValueError as exc:
        raise DPKMeansError(str(exc)) from exc
    level = None if args.sandbox == "auto" else args.sandbox
    grades = grade_submissions(args.assignment, args.submissions, args.out, limits=limits,
                               level=level, jobs=args.jobs,
                               progress=lambda sid: print(f"grading {sid}", file=sys.stderr))
    print(grades[["student_id", "status", "score", "max_score"]].to_string(index=False))
    out = args.out or f"{args.assignment}/instructor"
    print(f"sandbox: {grades.attrs['sandbox']}; grades, canvas.csv, moodle.csv and feedback/ "
          f"in {out}")
    for name in grades.attrs.get("unknown_submissions", []):
        print(f"warning: {name!r} is not in the key; not graded", file=sys.stderr)
    return 0
