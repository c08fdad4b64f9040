"""The classroom is a package of its own (docs/design.md, "The packages"): it imports the
library, the library never imports it, the library's wheel does not hold it (checked on the
built wheel by tests/installed), ``make install`` installs it from ``classroom/pyproject.toml``,
and the library's old command ``python -m dpkmeans assignments`` names the new one."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import dpkmeans
import dpkmeans_classroom
from dpkmeans.cli import MOVED_GROUPS
from dpkmeans.cli import main as library_main
from dpkmeans_classroom.commands import PROG, main

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = Path(dpkmeans.__file__).resolve().parent


def _imported(path: Path) -> set[str]:
    """The absolute module names the imports of one file name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_the_library_never_imports_the_classroom():
    found = sorted(str(path.relative_to(LIBRARY)) for path in LIBRARY.rglob("*.py")
                   if any(n.split(".")[0] == "dpkmeans_classroom" for n in _imported(path)))
    assert not found, f"library modules that import the classroom package: {found}"
    assert not (LIBRARY / "assignments").exists()


def test_importing_the_library_and_its_command_line_loads_no_classroom_module():
    code = ("import sys, dpkmeans, dpkmeans.cli, dpkmeans.api.estimators; "
            "print(sorted(m for m in sys.modules if 'classroom' in m or 'assignments' in m))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "[]"


def test_the_classroom_lives_beside_the_library_and_is_installed_with_the_book():
    assert Path(dpkmeans_classroom.__file__).resolve().parent == ROOT / "src" / "dpkmeans_classroom"
    library = tomllib.loads((ROOT / "pyproject.toml").read_text())
    classroom = tomllib.loads((ROOT / "classroom" / "pyproject.toml").read_text())
    found = library["tool"]["setuptools"]["packages"]["find"]
    assert "dpkmeans_classroom" in found["exclude"] and "dpkmeans_classroom.*" in found["exclude"]
    assert "classroom" not in str(library["project"]["scripts"])
    assert classroom["project"]["version"] == library["project"]["version"]
    assert classroom["project"]["dependencies"] == ["dpkmeans[book]"]
    assert classroom["tool"]["setuptools"]["packages"] == ["dpkmeans_classroom"]
    assert classroom["project"]["scripts"] == {
        "dpkmeans-classroom": "dpkmeans_classroom.commands:main"}
    assert "-e ./classroom" in (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("argv", [
    [sys.executable, "-m", "dpkmeans_classroom", "--help"],
    [str(Path(sys.executable).parent / "dpkmeans-classroom"), "--help"],
], ids=["python -m", "script"])
def test_the_classroom_command_line_runs(argv):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {PROG} ") and "make" in done.stdout
    assert "grade" in done.stdout


def test_a_usage_error_is_one_line(capsys):
    assert main(["make", "--roster", "roster.csv", "--chapter", "99"]) == 2
    assert capsys.readouterr().err == ("error: chapter 99 has no assignment; chapters with one: "
                                       f"{list(range(1, 13))}\n")


def test_the_old_command_names_the_new_one(capsys):
    assert MOVED_GROUPS == {"assignments": PROG}
    assert library_main(["assignments", "grade", "hw 5", "--submissions", "inbox"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "`python -m dpkmeans_classroom grade 'hw 5' --submissions inbox`" in err
    done = subprocess.run([sys.executable, "-m", "dpkmeans", "assignments"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "`python -m dpkmeans_classroom make|grade ...`" in done.stderr
