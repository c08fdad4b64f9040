"""The docstrings of the public API (``dpkmeans.api``), the engine (``dpkmeans.engine``) and the
privacy core (``dpkmeans.privacy``; docs/design.md, "The packages").

Every public object (a module's ``__all__``, and the public methods of its public classes) has
a numpydoc docstring: a Parameters section naming exactly the parameters of its signature,
Returns (or Yields) when it gives something back, Raises when its own code raises, and, for
every public function and class, Examples; a public constant has a ``#:`` comment. numpydoc is
not a dependency: the sections are read here (a title line underlined with dashes). Every
example runs as a doctest with doctest's default flags (an example states the ones it needs),
in a namespace of its own (it imports what it uses). The book's listings that skip a docstring
by line numbers must skip exactly it, or, for an excerpt of the engine's code, skip all of it and
cut only between statements.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dpkmeans.api
import dpkmeans.engine
import dpkmeans.privacy

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (dpkmeans.api, dpkmeans.engine, dpkmeans.privacy)
MODULES = sorted([p.__name__ for p in PACKAGES]
                 + [info.name for p in PACKAGES
                    for info in pkgutil.iter_modules(p.__path__, p.__name__ + ".")])

#: numpydoc's section titles (a title outside this list is a typo).
TITLES = ("Parameters", "Attributes", "Methods", "Returns", "Yields", "Receives",
          "Other Parameters", "Raises", "Warns", "Warnings", "See Also", "Notes", "References",
          "Examples")

#: numpy's default print options (numpy >= 2: scalars print as ``np.float64(...)``).
PRINT_OPTIONS = dict(edgeitems=3, infstr="inf", linewidth=75, nanstr="nan", precision=8,
                     suppress=False, threshold=1000, formatter=None, sign="-",
                     floatmode="maxprec", legacy=False)


def sections(doc: str) -> dict[str, list[str]]:
    """A numpydoc docstring's sections by title, each its body's lines (dedented)."""
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    skip = False
    for i, line in enumerate(lines):
        if skip:
            skip = False
            continue
        title = line.strip()
        under = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if title and re.fullmatch(r"-{3,}", under) and len(under) >= len(title):
            assert title in TITLES, f"unknown section {title!r}"
            assert title not in out, f"section {title!r} twice"
            current = out[title] = []
            skip = True
        elif current is not None:
            current.append(line)
    return out


def documented_names(body: list[str]) -> list[str]:
    """The names a Parameters section documents: its unindented ``name[, name] : type`` lines."""
    names = []
    for line in body:
        if line and not line[0].isspace():
            match = re.fullmatch(r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?", line)
            assert match, f"not a parameter line: {line!r}"
            names += [n.strip() for n in match.group(1).split(",")]
    return names


def signature_names(obj: object, *, method: bool) -> list[str]:
    """The parameters of a callable's signature (without self), ``*args`` and ``**kw`` starred."""
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return []
    if method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [stars.get(p.kind, "") + p.name for p in params]


def _own_nodes(node: ast.AST):
    """The nodes of a function body, without those of nested functions, lambdas and classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield child
        yield from _own_nodes(child)


def _definition(func: object) -> ast.FunctionDef | None:
    try:
        source = inspect.getsource(inspect.unwrap(func))
    except (OSError, TypeError):
        return None  # generated (a dataclass's __init__)
    tree = ast.parse(textwrap.dedent(source))
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def gives_back(func: object) -> bool:
    """Whether a function returns or yields a value: by its annotation or by its code."""
    annotation = inspect.signature(func).return_annotation
    if annotation not in (inspect.Signature.empty, None, "None"):
        return True
    node = _definition(func)
    return node is not None and any(
        isinstance(n, ast.Yield | ast.YieldFrom)
        or (isinstance(n, ast.Return) and n.value is not None
            and not (isinstance(n.value, ast.Constant) and n.value.value is None))
        for n in _own_nodes(node))


def raises(func: object) -> bool:
    """Whether a function's own code has a ``raise`` statement."""
    node = _definition(func)
    return node is not None and any(isinstance(n, ast.Raise) for n in _own_nodes(node))


def public_objects() -> list[tuple[str, str, object]]:
    """(qualified name, kind, object) of every public object: kind is "function", "class",
    "method", "property" or "data"; an object re-exported by several modules comes once."""
    seen: set[int] = set()
    out = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                out.append((f"{name}.{attr}", "class", obj))
                for key, member in vars(obj).items():
                    if key.startswith("_"):
                        continue
                    if isinstance(member, property):
                        out.append((f"{name}.{attr}.{key}", "property", member))
                    elif isinstance(member, staticmethod | classmethod) or inspect.isfunction(
                            member):
                        out.append((f"{name}.{attr}.{key}", "method", getattr(obj, key)))
            elif inspect.isfunction(obj):
                out.append((f"{name}.{attr}", "function", obj))
            else:
                out.append((f"{name}.{attr}", "data", obj))
    return out


PUBLIC = public_objects()


def check(qualname: str, kind: str, obj: object) -> list[str]:
    """What the docstring of one public object lacks (empty if nothing)."""
    if kind == "data":
        attr = qualname.rsplit(".", 1)[1]
        comment = re.compile(rf"^#:[^\n]*\n{attr}\s*(?::[^=\n]+)?=", re.M)
        sources = (inspect.getsource(importlib.import_module(m)) for m in MODULES)
        return [] if any(comment.search(s) for s in sources) else ["a '#:' comment"]
    doc = obj.__doc__ if kind == "property" else inspect.getdoc(obj)
    if not doc or not doc.strip():
        return ["a docstring"]
    if kind == "property":
        return []
    try:
        found = sections(doc)
    except AssertionError as err:
        return [str(err)]
    missing = []
    names = signature_names(obj, method=kind == "method")
    documented = documented_names(found.get("Parameters", []))
    if names and "Parameters" not in found:
        missing.append("a Parameters section")
    elif set(names) != set(documented):
        missing.append(f"Parameters for {sorted(set(names) - set(documented))}, not for "
                       f"{sorted(set(documented) - set(names))}")
    if kind in ("function", "method") and gives_back(obj) and not {"Returns", "Yields"} & set(
            found):
        missing.append("a Returns (or Yields) section")
    own = [obj] if kind != "class" else [vars(obj)[k] for k in ("__init__", "__post_init__")
                                         if inspect.isfunction(vars(obj).get(k))]
    if any(raises(f) for f in own) and "Raises" not in found:
        missing.append("a Raises section")
    if kind in ("function", "class") and "Examples" not in found:
        missing.append("an Examples section")
    elif "Examples" in found and ">>>" not in "\n".join(found["Examples"]):
        missing.append("an example in its Examples section")
    return missing


def test_every_public_object_has_a_numpydoc_docstring():
    assert len(PUBLIC) > 300  # the check sees the objects (about 360 of them)
    lacking = {q: m for q, k, o in PUBLIC if (m := check(q, k, o))}
    assert not lacking, "\n".join(f"{q}: lacks {', '.join(m)}" for q, m in lacking.items())


@pytest.mark.parametrize("name", MODULES)
def test_examples_run_as_doctests(name: str):
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name, globs={})
    runner = doctest.DocTestRunner(optionflags=0)  # an example states the flags it needs
    report: list[str] = []
    with np.printoptions(**PRINT_OPTIONS):
        for test in tests:
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_the_checks_read_numpydoc():
    doc = """Summary.

    Parameters
    ----------
    a, b : int
        Two.
    *args
    **kwargs : dict

    Returns
    -------
    int
    """
    found = sections(doc)
    assert set(found) == {"Parameters", "Returns"}
    assert documented_names(found["Parameters"]) == ["a", "b", "*args", "**kwargs"]

    def f(a, b, *args, **kwargs) -> int:
        if a:
            raise ValueError
        return 1

    def g(x):
        def inner():
            raise ValueError
        return None

    assert signature_names(f, method=False) == ["a", "b", "*args", "**kwargs"]
    assert gives_back(f) and raises(f) and not gives_back(g) and not raises(g)
    f.__doc__ = doc
    assert check("m.f", "function", f) == ["a Raises section", "an Examples section"]
    with pytest.raises(AssertionError, match="unknown section"):
        sections("Summary.\n\nParameter\n---------\n")


#: A literalinclude of a library file with its options (comment lines of a notebook's source).
INCLUDE = re.compile(r"^# ```\{literalinclude\} \.\./src/(\S+\.py)\n((?:# :.*\n)+)", re.M)


def _line_set(spec: str, last: int) -> set[int]:
    out: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.strip().partition("-")
        out.update(range(int(lo), (int(hi) if hi else last if _ else int(lo)) + 1))
    return out


def _ranges(lines: set[int]) -> list[tuple[int, int]]:
    """The maximal runs of consecutive numbers, as (first, last)."""
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _cuts(node: ast.FunctionDef | ast.ClassDef, doc: ast.Expr) -> tuple[set[int], set[int]]:
    """The lines (1 = the definition's first) where an excerpt of the object may start and end:
    a statement's first line; a statement's last line, a compound statement's header, or the
    signature's last line."""
    starts, ends = {1}, {doc.lineno - node.lineno}
    for n in ast.walk(node):
        if isinstance(n, ast.stmt) and n is not node:
            starts.add(n.lineno - node.lineno + 1)
            ends.add(n.end_lineno - node.lineno + 1)
            body = getattr(n, "body", None)
            if isinstance(body, list) and body:
                ends.add(body[0].lineno - node.lineno)
    return starts, ends


def test_listings_that_skip_a_docstring_skip_exactly_it():
    """A listing of a public object of api/, engine/ or privacy/ whose ``:lines:`` leave out
    part of it shows its signature and its code after the docstring, nothing less and nothing
    more; an engine listing may instead be an excerpt of its code (chapters 4, 7, 10 and 11),
    which leaves out the whole docstring and starts and ends each run of lines with a statement
    (so a docstring that grows cannot shift it unnoticed)."""
    checked = excerpts = 0
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        for match in INCLUDE.finditer(notebook.read_text()):
            path, options = match.group(1), dict(
                re.match(r"# :([\w-]+):\s*(.*)", line).groups()
                for line in match.group(2).splitlines())
            if not re.match(r"dpkmeans/(api|engine|privacy)/", path) or "lines" not in options:
                continue
            name = options.get("pyobject", "")
            if name.split(".")[-1].startswith("_"):
                continue  # a private helper, shown as the chapter chooses
            tree = ast.parse((ROOT / "src" / path).read_text())
            node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)
                        and n.name == name.split(".")[-1])
            doc = node.body[0]
            assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
            last = node.end_lineno - node.lineno + 1
            expected = (set(range(1, doc.lineno - node.lineno + 1))
                        | set(range(doc.end_lineno - node.lineno + 2, last + 1)))
            shown = _line_set(options["lines"], last)
            if shown == expected:
                checked += 1
                continue
            assert path.startswith("dpkmeans/engine/"), (
                f"{notebook.name}: the listing of {name} should have :lines: "
                f"1-{doc.lineno - node.lineno}, {doc.end_lineno - node.lineno + 2}-")
            docstring = set(range(doc.lineno - node.lineno + 1, doc.end_lineno - node.lineno + 2))
            starts, ends = _cuts(node, doc)
            assert shown <= set(range(1, last + 1)) and not shown & docstring, (
                f"{notebook.name}: the excerpt of {name} (:lines: {options['lines']}) shows lines "
                f"of its docstring ({min(docstring)}-{max(docstring)}) or past its end ({last})")
            for first, end in _ranges(shown):
                assert first in starts and end in ends, (
                    f"{notebook.name}: the excerpt of {name} (:lines: {options['lines']}) cuts "
                    f"inside a statement at {first}-{end}")
            excerpts += 1
    assert checked >= 12  # the listings of chapters 1, 2, 9, 10, 11 and 12
    assert excerpts >= 4  # the engine's excerpts of chapters 4, 7, 10 and 11
