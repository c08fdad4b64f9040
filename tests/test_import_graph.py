"""The package's import graph: no import cycle, and fewer and fewer imports hidden in functions.

An import inside a function hides a dependency (and often holds an import cycle open); the
graph below reads every ``import`` of ``src/dpkmeans`` with :mod:`ast`, at module level and
inside functions alike, so a cycle cannot hide behind a function-local import, and an
``importlib.import_module("dpkmeans....")`` call with a literal name counts as an import too (a
lazy import is still an arrow). Imports under ``if TYPE_CHECKING:`` never run and are left out.
Importing ``a.b.c`` also runs the package ``a.b``'s ``__init__``: that edge is in the graph too.

The folders are layered (:data:`LAYERS`): every import points down, to the module's own folder
or one below it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "dpkmeans"

#: Cycles still to break, each the set of modules of one strongly connected component, with
#: the reason it is still open. A cycle not listed here fails the test; so does a listed one
#: that is gone (remove it, the list only shrinks).
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

#: Own modules that exist to wrap an optional dependency: importing one inside a function (so
#: the package works without the dependency) is not counted below. None at the moment:
#: ``dpkmeans.compute.backends.dask`` imports dask itself lazily, so it is imported at module level.
OPTIONAL_DEPENDENCY_MODULES: frozenset[str] = frozenset()

#: At most this many (module, imported own module) pairs with an import inside a function.
#: Lower it when you remove some; it may never go up.
FUNCTION_LOCAL_CEILING = 0


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement under ``node`` that runs, and whether it sits in a function."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]), in_function)
        else:
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            yield from _imports(child, inner)


def _lazy_imports(tree: ast.AST) -> Iterator[str]:
    """The literal module names of the ``import_module("...")`` calls under ``tree``."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and (getattr(node.func, "attr", None) == "import_module"
                     or getattr(node.func, "id", None) == "import_module")):
            yield node.args[0].value


def imported_modules(name: str, path: Path, node: ast.stmt, modules: dict[str, Path]) -> set[str]:
    """The package's own modules that the import statement ``node`` of module ``name`` names.

    ``from .x import y`` names ``x.y`` when ``y`` is a submodule, otherwise ``x``; relative
    imports are resolved against the module's package (the module itself for an ``__init__``).
    """
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - (node.level - 1)])
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module or ""
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                   for a in node.names]
    return {t for t in targets if t in modules and t != name}


def _packages(name: str) -> set[str]:
    """The packages whose ``__init__`` importing ``name`` runs, below the top package."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts))}


def named_imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(named, function_local): the own modules each module names in an import statement or
    a literal ``import_module`` call, and those it names in an import inside a function."""
    modules = module_files()
    named: dict[str, set[str]] = {m: set() for m in modules}
    local: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, in_function in _imports(tree):
            for target in imported_modules(name, path, node, modules):
                named[name].add(target)
                if in_function:
                    local[name].add(target)
        named[name] |= {t for t in _lazy_imports(tree) if t in modules and t != name}
    return named, local


def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(edges, function_local): every module's imported own modules (:func:`named_imports`,
    each with the packages between it and the top package, whose ``__init__`` the import
    runs, except the module's own packages, already being imported), and the modules it
    names in an import inside a function."""
    named, local = named_imports()
    edges = {name: {e for t in targets for e in {t} | (_packages(t) - _packages(name) - {name})}
             for name, targets in named.items()}
    return edges, local


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan 1972, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_the_graph_reader_resolves_relative_and_local_imports():
    source = ("import numpy\nfrom ..compute.backends import memory\n"
              "from ..privacy.noise import calibrate\nfrom ..privacy import mechanisms\n"
              "from . import hooks\nimport dpkmeans.data.scaling\n"
              "def f():\n    from ..privacy.gaussian import gaussian_delta\n"
              "if TYPE_CHECKING:\n    from ..compute.lloyd import assign\n"
              "def g():\n    return importlib.import_module('dpkmeans.compute.kernels')\n")
    modules = module_files()
    path = SRC / PACKAGE / "engine" / "loop.py"
    found = {(target, local) for node, local in _imports(ast.parse(source))
             for target in imported_modules("dpkmeans.engine.loop", path, node, modules)}
    assert found == {("dpkmeans.compute.backends.memory", False), ("dpkmeans.privacy.noise", False),
                     ("dpkmeans.privacy.mechanisms", False), ("dpkmeans.engine.hooks", False),
                     ("dpkmeans.data.scaling", False),
                     ("dpkmeans.privacy.gaussian", True)}
    assert list(_lazy_imports(ast.parse(source))) == ["dpkmeans.compute.kernels"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]


def test_no_import_cycle_except_the_listed_ones():
    edges, _ = import_graph()
    found = set(cycles(edges))
    new = [sorted(c) for c in found - set(ALLOWED_CYCLES)]
    assert not new, f"import cycles (counting imports inside functions): {new}"
    gone = [sorted(c) for c in set(ALLOWED_CYCLES) - found]
    assert not gone, f"these cycles are broken: remove them from ALLOWED_CYCLES: {gone}"


def test_function_local_imports_of_own_modules_stay_under_the_ceiling():
    _, local = import_graph()
    pairs = sorted((m, t) for m, targets in local.items() for t in targets
                   if t not in OPTIONAL_DEPENDENCY_MODULES)
    print(f"{len(pairs)} function-local imports of the package's own modules "
          f"(ceiling {FUNCTION_LOCAL_CEILING})")
    assert len(pairs) <= FUNCTION_LOCAL_CEILING, (
        "a new import inside a function of a dpkmeans module: import it at module level "
        f"(or break the cycle that needs it): {pairs}")


#: The layers of the package, from the bottom up (docs/design.md, "Layout"): a module imports
#: only from its own layer and the layers below it. Each layer is a tuple of folders or
#: modules (a name covers its submodules); the top package and what is in no layer (``cli``,
#: ``__main__``) sit on top of them all.
#:
#: - the plumbing: errors, argument checks, atomic file writes, the optional extras' import
#:   (``extras`` imports only ``errors``), which every layer may use;
#: - ``data``: the dataset registry and loader; the bounds of ``compute`` read it, and it
#:   imports only the plumbing;
#: - ``privacy``, ``compute``, ``engine``: the core, in that order;
#: - ``study``: the kit every study shares (sweeps, claim verdicts, the audit's statistics,
#:   plots): the papers' own ``study.py``, ``claims.py`` and ``audit.py`` are built on it, so it
#:   sits below ``papers`` (its one import of ``papers`` is in :data:`ALLOWED_UPWARD`);
#: - ``papers``: one folder per paper and the registry of them;
#: - ``api``: the estimators and the catalogue of the papers' corrected algorithms;
#: - ``synthesis`` (with ``reproduce``): the book-wide studies, built on all of the above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("dpkmeans.errors", "dpkmeans.validation", "dpkmeans.files", "dpkmeans.extras"),
    ("dpkmeans.data",),
    ("dpkmeans.privacy",),
    ("dpkmeans.compute",),
    ("dpkmeans.engine",),
    ("dpkmeans.study",),
    ("dpkmeans.papers",),
    ("dpkmeans.api",),
    ("dpkmeans.synthesis", "dpkmeans.reproduce"),
)

#: Imports that point up the layers, each (module, imported module) with the reason it is still
#: there. One not listed fails the test; so does a listed one that is gone (the list only
#: shrinks).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("dpkmeans.study.sweep", "dpkmeans.papers.registry"): (
        "sweep_datasets reads each paper's Sweep.data_aliases (which registry datasets a "
        "cell's case names) to check the data files before a sweep starts; to remove it, the "
        "sweep file or its caller (the command line) should carry the aliases"),
}


def _within(module: str, folder: str) -> bool:
    return module == folder or module.startswith(folder + ".")


def layer(module: str) -> int:
    """The index in :data:`LAYERS` of the layer ``module`` belongs to (the top: ``len``)."""
    for index, members in enumerate(LAYERS):
        if any(_within(module, member) for member in members):
            return index
    return len(LAYERS)


def upward_imports(named: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (module, imported module) pair whose import points up :data:`LAYERS`."""
    return sorted((m, t) for m, targets in named.items() for t in targets
                  if layer(t) > layer(m))


def test_every_import_points_down_the_layers():
    """privacy, compute and engine import nothing above them, the papers nothing of the API,
    the data nothing of the papers, and so on (imports inside functions and literal
    ``import_module`` calls included)."""
    named, _ = named_imports()
    found = upward_imports(named)
    print(f"{len(found)} imports point up the layers: {found}")
    new = [pair for pair in found if pair not in ALLOWED_UPWARD]
    assert not new, f"imports that point up the layers (docs/design.md, \"Layout\"): {new}"
    gone = sorted(set(ALLOWED_UPWARD) - set(found))
    assert not gone, f"these imports are gone: remove them from ALLOWED_UPWARD: {gone}"


def test_every_folder_is_in_a_layer():
    """A new folder of the package takes its place in :data:`LAYERS` (only the command line
    and the top package sit above them)."""
    above = sorted(m for m in module_files() if layer(m) == len(LAYERS))
    assert above == ["dpkmeans", "dpkmeans.__main__", "dpkmeans.cli"]


def test_the_layer_check_sees_a_crossing():
    """The check's own test: an engine module that imports a paper is caught, and so is a
    lazy ``import_module`` of one."""
    assert not _within("dpkmeans.papers_extra", "dpkmeans.papers")
    named = {"dpkmeans.engine.loop": {"dpkmeans.papers.di.variants", "dpkmeans.compute.lloyd"},
             "dpkmeans.papers.di.variants": {"dpkmeans.engine.loop"},
             "dpkmeans.data.loader": {"dpkmeans.errors"}}
    assert upward_imports(named) == [("dpkmeans.engine.loop", "dpkmeans.papers.di.variants")]
    lazy = "import importlib\nimportlib.import_module('dpkmeans.papers.registry')\n"
    assert upward_imports({"dpkmeans.data.loader": set(_lazy_imports(ast.parse(lazy)))}) == [
        ("dpkmeans.data.loader", "dpkmeans.papers.registry")]
