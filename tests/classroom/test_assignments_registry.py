"""The chapters' assignments are found by file name and imported when first asked for
(:mod:`dpkmeans_classroom.registry`), so the command line starts without the library."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom import ASSIGNMENTS, get_assignment
from dpkmeans_classroom.registry import AssignmentRegistry

_PROBE = textwrap.dedent("""\
    import json, sys

    import dpkmeans_classroom.commands
    from dpkmeans_classroom import ASSIGNMENTS, get_assignment


    def loaded():
        return sorted(m.rpartition(".")[2] for m in sys.modules
                      if m.startswith("dpkmeans_classroom.chapter"))


    listed = {"chapters": list(ASSIGNMENTS), "len": len(ASSIGNMENTS), "has_5": 5 in ASSIGNMENTS,
              "has_13": 13 in ASSIGNMENTS, "numba": "numba" in sys.modules}
    listed["loaded"] = loaded()
    chapter = get_assignment(2).chapter
    print(json.dumps({**listed, "chapter": chapter, "after": loaded()}))
""")


def test_listing_the_chapters_imports_none_of_them():
    """The command line and the listing of the chapters import no chapter module (nor numba);
    asking for chapter 2 imports chapter 2's module only."""
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          check=True, timeout=120)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {"chapters": list(range(1, 13)), "len": 12, "has_5": True, "has_13": False,
                     "numba": False, "loaded": [], "chapter": 2, "after": ["chapter02"]}


def test_each_chapter_module_holds_its_own_chapter():
    for chapter, assignment in ASSIGNMENTS.items():
        assert ASSIGNMENTS.module_name(chapter) == f"dpkmeans_classroom.chapter{chapter:02d}"
        assert assignment.chapter == chapter
        assert get_assignment(chapter) is assignment


def test_the_registry_is_read_only_and_names_the_chapters_it_has():
    with pytest.raises(TypeError):
        ASSIGNMENTS[13] = ASSIGNMENTS[1]  # type: ignore[index]
    with pytest.raises(DPKMeansError, match=r"chapter 99 has no assignment; chapters with "
                                            r"one: \[1, 2, .*, 12\]"):
        get_assignment(99)
    with pytest.raises(KeyError):
        ASSIGNMENTS[99]


def _package(root: Path, name: str, chapters: dict[str, int]) -> Path:
    """A package ``name`` under ``root`` whose modules ``chapters`` hold a stand-in
    ``ASSIGNMENT`` of the given chapter."""
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "notes.py").write_text("")  # not a chapter
    for module, chapter in chapters.items():
        (folder / f"{module}.py").write_text(
            f"from types import SimpleNamespace\nASSIGNMENT = SimpleNamespace(chapter={chapter})\n")
    return folder


@pytest.fixture
def probe_package(tmp_path, monkeypatch):
    name = "assignments_registry_probe"
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, tmp_path
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def test_a_chapter_is_imported_on_first_look_up_and_a_wrong_number_is_refused(probe_package):
    name, root = probe_package
    folder = _package(root, name, {"chapter03": 4, "chapter07": 7})
    registry = AssignmentRegistry(name, folder)
    assert list(registry) == [3, 7] and len(registry) == 2 and 3 in registry
    assert not [m for m in sys.modules if m.startswith(f"{name}.chapter")]
    assert registry[7].chapter == 7
    assert f"{name}.chapter07" in sys.modules and f"{name}.chapter03" not in sys.modules
    with pytest.raises(DPKMeansError, match=rf"{name}\.chapter03 holds the assignment of "
                                            r"chapter 4, not 3"):
        registry[3]


def test_two_modules_of_one_chapter_are_refused(probe_package):
    name, root = probe_package
    folder = _package(root, name, {"chapter3": 3, "chapter03": 3})
    with pytest.raises(DPKMeansError, match="two modules hold chapter 3's assignment"):
        AssignmentRegistry(name, folder)
