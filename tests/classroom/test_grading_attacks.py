"""Hostile submissions against `dpkmeans_classroom grade` (book: How to use, "Grading you can
trust").

One class of chapter 5 is graded once at the strongest sandbox level this machine offers. Each
student but one submits an attack; every attack must get a clear status, no credit for what it
tried to forge, and change nothing outside its sandbox: the assignment and submissions folders
are hashed before and after (the grader's own outputs aside). A second, smaller class is
graded at the ``limits`` level, which must still stop runaway notebooks.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import textwrap
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkmeans_classroom import Limits, detect_level, get_assignment, grade_submissions
from dpkmeans_classroom.notebook import model_solution
from tests.classroom.helpers import make_class, sandbox_processes

pytestmark = pytest.mark.slow

CHAPTER5 = get_assignment(5)
FULL = CHAPTER5.max_points
#: What the grader writes into the assignment folder (everything else must stay as it was).
OUTPUTS = ("instructor/graded", "instructor/feedback", "instructor/grades.csv",
           "instructor/canvas.csv", "instructor/moodle.csv")


def _attacks(assignment: Path, inbox: Path, port: int) -> dict[str, str]:
    """Student id -> the code of one cell added after the setup cell."""
    key = assignment / "instructor" / "key.json"
    return {
        # reads the key by its absolute path, or computes the references with the library
        "keyreader": f"""
            import json
            try:
                key = json.load(open({str(key)!r}))["students"][STUDENT]["answers"]
                print("LEAK key", key)
            except Exception as exc:
                print("BLOCKED key", type(exc).__name__)
                from dpkmeans_classroom.chapter05 import ASSIGNMENT
                key = ASSIGNMENT.references(
                    {{"STUDENT": STUDENT, "SEED": SEED, "DATASET": DATASET,
                      "EPSILON": EPSILON, "K": K, "ITERATIONS": ITERATIONS}})
                print("LEAK references", key)
            globals().update(key)
        """,
        # overwrites a classmate's submission, deletes a handout, writes beside the key
        "vandal": f"""
            import os, pathlib
            for target in ({str(inbox / "honest.ipynb")!r},
                           {str(assignment / "instructor" / "grades.csv")!r},
                           {str(assignment / "instructor" / "vandal.txt")!r},
                           "../honest.ipynb", "../../honest.ipynb"):
                try:
                    pathlib.Path(target).write_text("vandalised")
                    print("LEAK wrote", target)
                except OSError as exc:
                    print("BLOCKED write", target, type(exc).__name__)
            try:
                os.remove({str(assignment / "students" / "honest.ipynb")!r})
                print("LEAK deleted")
            except OSError as exc:
                print("BLOCKED delete", type(exc).__name__)
        """,
        # never ends, and ignores the grader's interrupt
        "looper": """
            import signal
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            while True:
                pass
        """,
        # asks for 8 GiB
        "hog": """
            hog = bytearray(8 * 2**30)
            print("LEAK allocated", len(hog))
        """,
        # forks until refused (each child sleeps, so the count is what the limit allows)
        "forkbomb": """
            import os, time
            children = []
            try:
                while len(children) < 5000:
                    pid = os.fork()
                    if pid == 0:
                        time.sleep(60)
                        os._exit(0)
                    children.append(pid)
                print("LEAK forked", len(children))
            except OSError as exc:
                print("BLOCKED fork after", len(children), type(exc).__name__)
        """,
        # a detached process that outlives the kernel and rewrites files later
        "daemon": f"""
            import os, time
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(8)
                    for target in ({str(inbox / "honest.ipynb")!r}, "late.txt"):
                        try:
                            open(target, "w").write("late")
                        except OSError:
                            pass
                    os._exit(0)
                os._exit(0)
            print("daemon started")
        """,
        # replaces the grader's last cell, so that the answers file is never written
        "forger": """
            def _swallow(lines):
                return ["sensitivity = 5\\n"]
            get_ipython().input_transformers_post.append(_swallow)
        """,
        # talks to a listener on the grader's loopback
        "caller": f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"hello")
                print("LEAK connected")
            except OSError as exc:
                print("BLOCKED connect", type(exc).__name__)
        """,
        # reads a classmate's submission and the other handouts
        "peeker": f"""
            import glob
            for pattern in ({str(inbox / "*.ipynb")!r}, {str(assignment / "students" / "*")!r},
                            "../*.ipynb", "/sandbox/*/*.ipynb"):
                found = [p for p in glob.glob(pattern)
                         if "peeker" not in p and not p.startswith("/sandbox/work/")]
                print("LEAK" if found else "BLOCKED", "listing", pattern, found[:2])
        """,
    }


def _tree_hashes(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    hashes = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if any(relative == s or relative.startswith(s + "/") for s in skip):
            continue
        hashes[relative] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() \
            else "dir"
    return hashes


def _submit(handout: Path, target: Path, attack: str | None) -> None:
    nb = nbformat.read(str(handout), as_version=4)
    if attack is None:
        nb = model_solution(CHAPTER5, nb)
    else:
        setup = next(i for i, c in enumerate(nb.cells) if c.source.startswith("import numpy"))
        nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(textwrap.dedent(attack).strip()))
    nbformat.write(nb, str(target))


def _printed(graded: Path, sid: str) -> str:
    nb = nbformat.read(str(graded / f"{sid}.ipynb"), as_version=4)
    return "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
                     if o.get("output_type") == "stream")



def _class(tmp: Path, ids: list[str]) -> tuple[Path, Path]:
    return make_class(tmp, ids, 5, course_seed=3, folder="hw5")


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, data_available):
    """The strongest level's class: the attacks first (the vandal before the honest student
    whose files it goes for), graded with two jobs and short limits."""
    tmp = tmp_path_factory.mktemp("attacks")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    placeholder_attacks = _attacks(tmp / "hw5", tmp / "inbox", port)
    ids = [*placeholder_attacks, "honest"]
    assignment, inbox = _class(tmp, ids)
    attacks = _attacks(assignment, inbox, port)
    for sid in ids:
        _submit(assignment / "students" / f"{sid}.ipynb", inbox / f"{sid}.ipynb",
                attacks.get(sid))
    before = (_tree_hashes(assignment, OUTPUTS), _tree_hashes(inbox))
    limits = Limits(wall_seconds=40, cell_seconds=15, memory_bytes=3 * 2**30, cpu_seconds=60)
    started = time.monotonic()
    grades = grade_submissions(assignment, inbox, limits=limits, jobs=2)
    seconds = time.monotonic() - started
    time.sleep(10)  # the daemon would have written by now
    try:
        connection, _ = listener.accept()
        connection.close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    after = (_tree_hashes(assignment, OUTPUTS), _tree_hashes(inbox))
    return {"grades": grades.set_index("student_id"), "assignment": assignment,
            "graded": assignment / "instructor" / "graded", "before": before, "after": after,
            "connected": connected, "seconds": seconds}


@pytest.fixture(scope="module")
def strong(attacked):
    if attacked["grades"]["sandbox"].iloc[0] != "bubblewrap":
        pytest.skip("bubblewrap cannot run here: the key and network attacks need it "
                    "(make test installs Debian's bubblewrap)")
    return attacked


def test_the_level_is_recorded_and_the_honest_student_gets_full_marks(attacked):
    grades = attacked["grades"]
    assert set(grades["sandbox"]) == {detect_level()}
    assert (grades.loc["honest", "status"], grades.loc["honest", "score"]) == ("graded", FULL)
    on_disk = pd.read_csv(attacked["assignment"] / "instructor" / "grades.csv")
    assert set(on_disk["sandbox"]) == {detect_level()}


def test_nothing_outside_the_sandboxes_changed(strong):
    assert strong["after"] == strong["before"]


def test_no_process_outlives_the_grading(attacked):
    assert sandbox_processes(os.getpid()) == []


@pytest.mark.parametrize("sid", ["keyreader", "vandal", "looper", "hog", "forkbomb", "daemon",
                                 "forger", "caller", "peeker"])
def test_every_attack_scores_zero(attacked, sid):
    assert attacked["grades"].loc[sid, "score"] == 0.0


def test_the_key_and_the_references_are_out_of_reach(strong):
    row = strong["grades"].loc["keyreader"]
    assert row["status"].startswith("graded, with an error: cell ")
    assert "ModuleNotFoundError" in row["status"] or "ImportError" in row["status"] or \
        "AttributeError" in row["status"]
    printed = _printed(strong["graded"], "keyreader")
    assert "BLOCKED key FileNotFoundError" in printed and "LEAK" not in printed


def test_the_vandal_changes_nothing(strong):
    printed = _printed(strong["graded"], "vandal")
    assert "LEAK" not in printed and printed.count("BLOCKED") == 6
    assert strong["grades"].loc["honest", "score"] == FULL


def test_a_notebook_that_never_ends_is_stopped_by_the_time_limit(attacked):
    # cell 4: the attack's, after the parameters, the injected parameters and the setup
    assert attacked["grades"].loc["looper", "status"] == (
        "stopped: the notebook ran longer than 40 s in cell 4")


def test_a_memory_hog_gets_a_memory_error(attacked):
    status = attacked["grades"].loc["hog", "status"]
    assert status.startswith("graded, with an error: cell ") and "MemoryError" in status


def test_a_fork_bomb_is_stopped_by_the_process_limit(strong):
    printed = _printed(strong["graded"], "forkbomb")
    assert "BLOCKED fork after" in printed and "LEAK" not in printed
    forked = int(printed.split("BLOCKED fork after")[1].split()[0])
    assert forked < Limits().processes


def test_a_detached_process_is_killed_with_its_sandbox(strong):
    assert "daemon started" in _printed(strong["graded"], "daemon")
    assert strong["grades"].loc["daemon", "status"] == "graded"
    # it would have rewritten the honest submission 8 s after starting: the hashes above
    # say it did not; and no process carrying a sandbox's token is left
    assert sandbox_processes(os.getpid()) == []


def test_a_replaced_collector_gives_no_answers(attacked):
    status = attacked["grades"].loc["forger", "status"]
    assert status.startswith("no answers: the notebook did not reach the grader's last cell")


def test_no_network(strong):
    printed = _printed(strong["graded"], "caller")
    assert "BLOCKED connect" in printed and not strong["connected"]


def test_classmates_files_are_invisible(strong):
    printed = _printed(strong["graded"], "peeker")
    assert "LEAK" not in printed and printed.count("BLOCKED listing") == 4


def test_feedback_and_exports_for_everyone(attacked):
    instructor = attacked["assignment"] / "instructor"
    ids = list(attacked["grades"].index)
    assert sorted(p.stem for p in (instructor / "feedback").glob("*.md")) == sorted(ids)
    canvas = pd.read_csv(instructor / "canvas.csv")
    assert list(canvas.columns[:5]) == ["Student", "ID", "SIS User ID", "SIS Login ID",
                                        "Section"]
    assert list(canvas["SIS User ID"]) == ids
    moodle = pd.read_csv(instructor / "moodle.csv")
    assert list(moodle["ID number"]) == ids


# ------------------------------------------------------------------------ the limits level
def test_the_limits_level_stops_runaway_notebooks(tmp_path, data_available):
    ids = ["looper", "hog", "daemon", "honest"]
    assignment, inbox = _class(tmp_path, ids)
    attacks = _attacks(assignment, inbox, 9)
    for sid in ids:
        _submit(assignment / "students" / f"{sid}.ipynb", inbox / f"{sid}.ipynb",
                attacks.get(sid))
    limits = Limits(wall_seconds=30, cell_seconds=10, memory_bytes=3 * 2**30, cpu_seconds=60)
    grades = grade_submissions(assignment, inbox, limits=limits, level="limits",
                               jobs=2).set_index("student_id")
    assert set(grades["sandbox"]) == {"limits"}
    assert grades.loc["looper", "status"] == "stopped: the notebook ran longer than 30 s in cell 4"
    assert "MemoryError" in grades.loc["hog", "status"]
    assert (grades.loc["honest", "status"], grades.loc["honest", "score"]) == ("graded", FULL)
    time.sleep(10)
    assert sandbox_processes(os.getpid()) == []  # the daemon carried the run's token: killed
    assert (inbox / "honest.ipynb").read_text() != "late"
    assert json.loads((inbox / "honest.ipynb").read_text())["cells"]
