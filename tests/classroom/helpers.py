"""Helpers shared by the grading tests."""

from __future__ import annotations

import os
from pathlib import Path

from dpkmeans_classroom import make_assignments
from dpkmeans_classroom.sandbox import TOKEN_ENV

#: ``python -m dpkmeans_classroom ARGS`` as a terminal starts it: SIGINT unblocked and raising
#: KeyboardInterrupt (a test runner may have blocked or ignored it).
AS_FROM_A_TERMINAL = (
    "import runpy, signal, sys\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "sys.argv = ['dpkmeans_classroom', *sys.argv[1:]]\n"
    "runpy.run_module('dpkmeans_classroom', run_name='__main__', alter_sys=True)\n")


def make_class(tmp: Path, ids: list[str], chapter: int, course_seed: int,
               folder: str = "hw") -> tuple[Path, Path]:
    """A class of ``ids`` (named after their ids) given ``chapter``'s assignment in
    ``tmp/folder``, and an empty inbox ``tmp/inbox`` for their submissions."""
    roster = tmp / "roster.csv"
    roster.write_text("student_id,name\n" + "".join(f"{i},{i.title()}\n" for i in ids))
    assignment, inbox = tmp / folder, tmp / "inbox"
    make_assignments(roster, chapter, assignment, course_seed=course_seed)
    inbox.mkdir()
    return assignment, inbox


def sandbox_processes(grader: int) -> list[int]:
    """The running processes of the sandboxes started by process ``grader`` (their token in
    the environment starts with its PID)."""
    mine, found = f"{TOKEN_ENV}={grader}-".encode(), []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and mine in Path(f"/proc/{entry}/environ").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found
