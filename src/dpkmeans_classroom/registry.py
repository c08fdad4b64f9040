"""The chapters' assignments by chapter: found by file name, imported when first asked for.

Each ``chapterNN.py`` module of this package holds one chapter's
:class:`~dpkmeans_classroom.spec.Assignment` as ``ASSIGNMENT``; its references are computed
with the library (numpy, the compiled kernels, the estimators), which the module imports. The
registry lists the chapters from the modules' file names alone and imports a chapter's module
(a plug-in looked up by its name) the first time that chapter is asked for, so the command
line starts without loading the library and grading a chapter loads that chapter only (book:
How to use, "Per-student assignments").
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom.spec import Assignment

__all__ = ["ASSIGNMENTS", "AssignmentRegistry", "get_assignment"]

#: The name of a chapter's module: ``chapter`` and the chapter's number (``chapter05``).
CHAPTER_MODULE = re.compile(r"chapter(\d+)")


class AssignmentRegistry(Mapping[int, Assignment]):
    """Read-only ``{chapter: Assignment}`` of the ``chapterNN`` modules of ``package``.

    ``folder`` is where the package's modules are; listing the chapters (``in``, ``len``,
    iterating) reads their file names only, and a chapter's module is imported on the first
    look-up of that chapter. A module whose ``ASSIGNMENT.chapter`` is not the number in its
    name is refused with a :class:`~dpkmeans.errors.DPKMeansError` when it is looked up.
    """

    def __init__(self, package: str, folder: str | Path):
        found: dict[int, str] = {}
        for module in pkgutil.iter_modules([str(folder)]):
            match = CHAPTER_MODULE.fullmatch(module.name)
            if not match:
                continue
            chapter = int(match[1])
            if chapter in found:
                raise DPKMeansError(f"two modules hold chapter {chapter}'s assignment: "
                                    f"{found[chapter]} and {package}.{module.name}")
            found[chapter] = f"{package}.{module.name}"
        self._modules = dict(sorted(found.items()))
        self._loaded: dict[int, Assignment] = {}

    def module_name(self, chapter: int) -> str:
        """The dotted name of the module holding ``chapter``'s assignment (KeyError if none)."""
        return self._modules[chapter]

    def __getitem__(self, chapter: int) -> Assignment:
        if chapter not in self._loaded:
            name = self._modules[chapter]
            assignment = importlib.import_module(name).ASSIGNMENT
            if assignment.chapter != chapter:
                raise DPKMeansError(f"{name} holds the assignment of chapter "
                                    f"{assignment.chapter}, not {chapter}: the number in a "
                                    "chapter module's name is its ASSIGNMENT.chapter")
            self._loaded[chapter] = assignment
        return self._loaded[chapter]

    def __contains__(self, chapter: object) -> bool:
        return chapter in self._modules  # no import: Mapping's default would look it up

    def __iter__(self) -> Iterator[int]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(chapters {list(self._modules)})"


#: Every chapter's assignment, by chapter (read-only; each imported on first use).
ASSIGNMENTS: Mapping[int, Assignment] = AssignmentRegistry(__name__.rpartition(".")[0],
                                                           Path(__file__).resolve().parent)


def get_assignment(chapter: int) -> Assignment:
    """The assignment of ``chapter`` (a DPKMeansError lists the chapters that have one)."""
    if chapter not in ASSIGNMENTS:
        raise DPKMeansError(f"chapter {chapter} has no assignment; chapters with one: "
                            f"{sorted(ASSIGNMENTS)}")
    return ASSIGNMENTS[chapter]
