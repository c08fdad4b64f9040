"""The package's import graph: no import cycle, and fewer and fewer imports hidden in functions.

An import inside a function hides a dependency (and often holds an import cycle open); the
graph below reads every ``import`` of ``src/dpkmeans`` with :mod:`ast`, at module level and
inside functions alike, so a cycle cannot hide behind a function-local import. Imports under
``if TYPE_CHECKING:`` never run and are left out; so are ``importlib.import_module`` calls (a
string, not a statement). Importing ``a.b.c`` also runs the package ``a.b``'s ``__init__``:
that edge is in the graph too.
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


def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(edges, function_local): every module's imported own modules (each with the packages
    between it and the top package, whose ``__init__`` the import runs, except the module's
    own packages, already being imported), and the modules it names in an import inside a
    function."""
    modules = module_files()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    local: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node, in_function in _imports(ast.parse(path.read_text(), str(path))):
            for target in imported_modules(name, path, node, modules):
                edges[name] |= {target} | (_packages(target) - _packages(name) - {name})
                if in_function:
                    local[name].add(target)
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
              "if TYPE_CHECKING:\n    from ..compute.lloyd import assign\n")
    modules = module_files()
    path = SRC / PACKAGE / "engine" / "loop.py"
    found = {(target, local) for node, local in _imports(ast.parse(source))
             for target in imported_modules("dpkmeans.engine.loop", path, node, modules)}
    assert found == {("dpkmeans.compute.backends.memory", False), ("dpkmeans.privacy.noise", False),
                     ("dpkmeans.privacy.mechanisms", False), ("dpkmeans.engine.hooks", False),
                     ("dpkmeans.data.scaling", False),
                     ("dpkmeans.privacy.gaussian", True)}
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


#: Each folder of the package and the folders it may not import from (docs/design.md, "The
#: packages"): the core below the papers names none of them, and the privacy core depends
#: on nothing but the plumbing.
FORBIDDEN_LAYERS: dict[str, tuple[str, ...]] = {
    "dpkmeans.privacy": ("dpkmeans.compute", "dpkmeans.engine", "dpkmeans.papers",
                         "dpkmeans.study", "dpkmeans.api", "dpkmeans.data"),
    "dpkmeans.compute": ("dpkmeans.engine", "dpkmeans.papers", "dpkmeans.study",
                         "dpkmeans.api"),
    "dpkmeans.engine": ("dpkmeans.papers", "dpkmeans.study", "dpkmeans.api"),
}


def _within(module: str, folder: str) -> bool:
    return module == folder or module.startswith(folder + ".")


def layer_crossings(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (module, imported module) pair that :data:`FORBIDDEN_LAYERS` forbids."""
    return sorted((m, t) for m, targets in edges.items() for t in targets
                  for folder, forbidden in FORBIDDEN_LAYERS.items() if _within(m, folder)
                  for above in forbidden if _within(t, above))


def test_the_core_imports_no_layer_above_it():
    """``engine/`` imports nothing from ``papers/``; ``compute/`` nothing from the loop;
    ``privacy/`` only the plumbing (imports inside functions included)."""
    edges, _ = import_graph()
    assert not layer_crossings(edges), f"imports across the layers: {layer_crossings(edges)}"


def test_the_layer_check_sees_a_crossing():
    """The check's own test: an engine module that imports a paper is caught."""
    assert not _within("dpkmeans.papers_extra", "dpkmeans.papers")
    edges = {"dpkmeans.engine.loop": {"dpkmeans.papers.di.variants", "dpkmeans.compute.lloyd"},
             "dpkmeans.papers.di.variants": {"dpkmeans.engine.loop"}}
    assert layer_crossings(edges) == [("dpkmeans.engine.loop", "dpkmeans.papers.di.variants")]
