"""Time to grade a class: 30 students submitting the model solution, per chapter, sandboxed.

For each chapter, ``python -m dpkmeans_classroom make`` writes 30 students' notebooks (course
seed 2026), each submission is the student's own notebook with the model solution's cells, and
``grade_submissions(..., jobs=JOBS)`` grades them at the strongest sandbox level the machine
offers. The time is the grading call's wall time (the notebooks, the sandboxes and the
outputs; not ``make``). Every student must score full marks, or the chapter's row says so.

    python -m benchmarks.grading                 # chapters 1-12, writes benchmarks/grading.json
    python -m benchmarks.grading --chapters 5,7  # a subset; prints only unless --out is given
    python -m benchmarks.grading --students 6    # a smaller class (a smoke run)

Target (book: How to use): grading 30 students takes at most 2 minutes per chapter with
``--jobs 2`` on a 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from benchmarks.run import _load, machine_info, write_report
from dpkmeans_classroom import ASSIGNMENTS, detect_level, grade_submissions, make_assignments
from dpkmeans_classroom.notebook import model_solution

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = 30
JOBS = 2
TARGET_SECONDS = 120.0
COURSE_SEED = 2026


def bench_chapter(chapter: int, students: int = STUDENTS, jobs: int = JOBS) -> dict:
    """Make and grade one chapter's class of model solutions; times and scores."""
    assignment = ASSIGNMENTS[chapter]
    with tempfile.TemporaryDirectory(prefix=f"grading-ch{chapter:02d}-") as tmp:
        folder = Path(tmp)
        roster = folder / "roster.csv"
        roster.write_text("student_id\n" + "".join(f"s{i:02d}\n" for i in range(students)))
        started = time.perf_counter()
        make_assignments(roster, chapter, folder / "hw", course_seed=COURSE_SEED)
        made = time.perf_counter() - started
        inbox = folder / "inbox"
        inbox.mkdir()
        for handout in sorted((folder / "hw" / "students").glob("*.ipynb")):
            solved = model_solution(assignment, nbformat.read(str(handout), as_version=4))
            nbformat.write(solved, str(inbox / handout.name))
        load_before = _load()
        started = time.perf_counter()
        grades = grade_submissions(folder / "hw", inbox, jobs=jobs)
        seconds = time.perf_counter() - started
    full = int((grades["score"] == assignment.max_points).sum())
    return {"chapter": chapter, "students": students, "jobs": jobs,
            "sandbox": grades.attrs["sandbox"], "make_s": round(made, 2),
            "grade_s": round(seconds, 2), "per_student_s": round(seconds / students, 2),
            "full_marks": full, "target_s": TARGET_SECONDS * students / STUDENTS,
            "met": bool(seconds <= TARGET_SECONDS * students / STUDENTS and full == students),
            "load_before": load_before, "load_after": _load()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", help="comma-separated chapters (default: all)")
    parser.add_argument("--students", type=int, default=STUDENTS)
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--out", help="JSON report (default benchmarks/grading.json for a "
                                      "full run; none for a subset)")
    args = parser.parse_args(argv)
    chapters = ([int(c) for c in args.chapters.split(",")] if args.chapters
                else sorted(ASSIGNMENTS))
    started = time.perf_counter()
    rows = []
    for chapter in chapters:
        row = bench_chapter(chapter, args.students, args.jobs)
        rows.append(row)
        print(f"chapter {chapter:2d}: {row['grade_s']:6.1f} s for {row['students']} students "
              f"({row['per_student_s']:.2f} s each, jobs {row['jobs']}, {row['sandbox']}), "
              f"{row['full_marks']}/{row['students']} full marks, "
              f"{'met' if row['met'] else 'NOT met'} (target {row['target_s']:.0f} s); "
              f"load {row['load_before']}", flush=True)
    report = {"benchmark": "grading", "sandbox": detect_level(), "machine": machine_info(),
              "wall_s": round(time.perf_counter() - started, 1), "chapters": rows}
    out = args.out or (None if args.chapters or args.students != STUDENTS
                       else ROOT / "benchmarks" / "grading.json")
    if out:
        write_report(report, Path(out))
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
