"""Helpers shared by the grading tests."""

from __future__ import annotations

import os
from pathlib import Path

from dpkmeans.assignments import make_assignments
from dpkmeans.assignments.sandbox import TOKEN_ENV


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
