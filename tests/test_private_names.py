"""No module of the library imports another module's private name (docs/design.md, "The
packages"): a name one module uses from another is public, without the leading underscore, so
that renaming a private helper never breaks a module that is not its own.

A private name is one that starts with a single underscore (``_blocks``, ``_Nearest``);
dunders (``__version__``) are not private. A module imports one across modules when it writes
``from dpkmeans.x import _name`` (or from ``dpkmeans_classroom``) for a module ``dpkmeans.x``
other than itself, or reads ``x._name`` (an attribute) of a module it imported. The tests
themselves may read a module's private names: they test them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGES = ("dpkmeans", "dpkmeans_classroom")


def module_name(path: Path, src: Path = SRC) -> str:
    """The dotted name of a source file: ``src/dpkmeans/compute/lloyd.py`` is
    ``dpkmeans.compute.lloyd``, a package's ``__init__.py`` the package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(source: str, module: str, modules: frozenset[str]) -> list[tuple[int, str]]:
    """The private names ``source`` (the module ``module``) takes from other modules of the
    package, as (line, what): ``from`` imports of a private name, and private attributes read
    off an imported module (``kernels._panel_sums``). ``modules`` are the package's module
    names, which tell a module from a name."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> the module it names
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if _private(alias.name) and node.module != module:
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    imported[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        path, base = [], node.value
        while isinstance(base, ast.Attribute):
            path.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in imported:
            owner = ".".join([imported[base.id], *reversed(path)])
            if owner in modules and owner != module:
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return sorted(found)


def test_no_private_name_is_imported_across_modules():
    files = sorted(p for package in PACKAGES for p in (SRC / package).rglob("*.py"))
    modules = frozenset(module_name(p) for p in files)
    hits = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in files
            for line, what in private_imports(path.read_text(), module_name(path), modules)]
    assert not hits, ("a private name used across modules (make it public, or move it where "
                      "it is used):\n" + "\n".join(hits))


def test_the_check_finds_private_imports_and_attributes():
    modules = frozenset({"dpkmeans.compute.lloyd", "dpkmeans.compute.nearest",
                         "dpkmeans.compute"})
    source = ("from dpkmeans.compute.nearest import (Nearest, _blocks,\n"
              "    as_data_matrix)\n"
              "from dpkmeans.compute import nearest\n"
              "import dpkmeans.compute.nearest as near\n"
              "from dpkmeans.compute.lloyd import _own, __version__\n"
              "x = nearest._exact_dots(1) + near._group + nearest.public + self._state\n")
    found = private_imports(source, "dpkmeans.compute.lloyd", modules)
    assert [what for _, what in found] == [
        "from dpkmeans.compute.nearest import _blocks",
        "dpkmeans.compute.nearest._exact_dots", "dpkmeans.compute.nearest._group"], found
