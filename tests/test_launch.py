"""The launch buttons open a chapter that runs (docs/launch.md).

* Binder builds its image from ``binder/`` (repo2docker): the library in place with the
  extras the chapters import, at the versions of requirements/lock.txt, on the lock's Python.
  repo2docker needs Docker, which the tests do not have: they check the files it reads.
* Colab opens a notebook of the repository: its first cell (binder/launch_cell.py) installs
  the library where it is missing, from the configured repository and branch, with
  binder/install_library.py; where the library is installed it does nothing.
* The built pages: no thebe configuration (sphinx-thebe's names a placeholder repository),
  Binder at the built commit, Colab on the configured branch and only for the configured
  repository, nothing without a repository or in the student edition.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
LOCK = ROOT / "requirements" / "lock.txt"
sys.path[:0] = [str(BINDER), str(ROOT / "book" / "_ext")]
import install_library  # noqa: E402
import launch_cell  # noqa: E402
import reader  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: The files by which repo2docker picks how to build; binder/ may hold only the two it needs.
REPO2DOCKER_FILES = {"Dockerfile", "environment.yml", "environment.yaml", "Pipfile",
                     "Pipfile.lock", "requirements.txt", "requirements3.txt", "runtime.txt",
                     "setup.py", "pyproject.toml", "apt.txt", "postBuild", "start", "install.R",
                     "DESCRIPTION", "Project.toml", "REQUIRE", "default.nix", "manifest.xml"}
#: What pip installs without ``pip freeze`` (and so the lock) naming it.
UNPINNED = {"pip", "setuptools", "wheel"}
#: What a running kernel brings on Colab (the notebooks' ``from IPython.display import ...``).
KERNEL = {"ipython"}


def _lines(path: Path) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()
            if line.split("#", 1)[0].strip()]


def _lock() -> dict[str, str]:
    pins = (line.split("==") for line in _lines(LOCK) if "==" in line)
    return {install_library.canonical(name): version for name, version in pins}


def _requires(name: str) -> list[str]:
    """A distribution's requirements: the library's from pyproject.toml (the installed copy may
    predate it), the others' from their installed metadata (this environment is the lock's)."""
    if install_library.canonical(name) != "dpkmeans":
        try:
            return metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed: the environment is older than the lock "
                        "(make install)")
    found = list(PYPROJECT["dependencies"])
    for extra, specs in PYPROJECT["optional-dependencies"].items():
        for spec in specs:
            requirement, _, marker = spec.partition(";")
            when = f"({marker}) and extra == '{extra}'" if marker.strip() else f"extra == '{extra}'"
            found.append(f"{requirement}; {when}")
    return found


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install."""
    todo, seen = [Requirement(r) for r in requirements], set()
    while todo:
        req = todo.pop()
        key = (install_library.canonical(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        for spec in _requires(req.name):
            sub = Requirement(spec)
            if sub.marker is None or any(sub.marker.evaluate({"extra": extra})
                                         for extra in req.extras | {""}):
                todo.append(sub)
    return {name for name, _ in seen}


def _notebook_imports() -> set[str]:
    """The distributions providing the third-party modules the book's notebooks import."""
    modules = set()
    for path in launch_cell.book_notebooks():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    modules -= set(sys.stdlib_module_names) | {"dpkmeans"}
    providers = metadata.packages_distributions()
    missing = sorted(m for m in modules if m not in providers)
    assert not missing, f"the notebooks import modules no installed package provides: {missing}"
    return {install_library.canonical(d) for m in modules for d in providers[m]}


# ----------------------------------------------------------------------------------- Binder
def test_binder_reads_its_own_folder_only_the_files_it_needs():
    assert not (ROOT / ".binder").exists(), "repo2docker refuses both binder/ and .binder/"
    config = {p.name for p in BINDER.iterdir()} & REPO2DOCKER_FILES
    assert config == {"runtime.txt", "requirements.txt"}, config


def test_binder_runs_the_python_the_book_is_built_on():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    version = re.fullmatch(r"python-(\d+\.\d+)", runtime)
    assert version, f"binder/runtime.txt is {runtime!r}, not python-X.Y"
    assert version.group(1) == install_library.lock_python(ROOT)
    built_on = re.search(r"image: python:(\d+\.\d+)-",
                         (ROOT / ".github" / "workflows" / "book.yml").read_text())
    assert built_on and built_on.group(1) == version.group(1)
    low = re.search(r">=\s*(\d+)\.(\d+)", PYPROJECT["requires-python"]).groups()
    high = re.search(r"<\s*(\d+)\.(\d+)", PYPROJECT["requires-python"]).groups()
    wanted = tuple(int(n) for n in version.group(1).split("."))
    assert tuple(map(int, low)) <= wanted < tuple(map(int, high))


def test_binder_installs_the_library_in_place_at_the_locks_versions():
    """Two lines, no pin written by hand: the lock as constraints (pip takes a nested file
    from the requirements file's folder) and the library from the repository's root (pip
    takes a project's path from the working directory, the root where repo2docker runs)."""
    lines = _lines(BINDER / "requirements.txt")
    assert len(lines) == 2 and not [line for line in lines if "==" in line], lines
    constraint = re.fullmatch(r"(?:-c|--constraint)\s+(\S+)", lines[0])
    assert constraint and (BINDER / constraint.group(1)).resolve() == LOCK
    project = re.fullmatch(r"(?:-e|--editable)\s+\.\[([\w,]+)\]", lines[1])
    assert project, lines[1]
    extras = set(project.group(1).split(","))
    assert extras <= set(PYPROJECT["optional-dependencies"])
    needed = _notebook_imports() - _closure([f"dpkmeans[{','.join(sorted(extras))}]"])
    assert not needed, f"the notebooks import what Binder does not install: {needed}"
    unpinned = _closure([f"dpkmeans[{','.join(sorted(extras))}]"]) - set(_lock())
    assert unpinned <= UNPINNED | {"dpkmeans"}, f"not pinned by the lock: {unpinned}"


def test_a_kernel_without_the_library_gets_what_the_chapters_import():
    """Colab: the library's ``all`` extra and myst-nb, beside the kernel's own IPython."""
    assert install_library.EXTRA in PYPROJECT["optional-dependencies"]
    installed = (_closure([f"dpkmeans[{install_library.EXTRA}]"])
                 | {install_library.canonical(install_library.GLUE)} | KERNEL)
    needed = _notebook_imports() - installed
    assert not needed, f"the notebooks import what the first cell does not install: {needed}"
    assert install_library.canonical(install_library.GLUE) in _lock()


# ------------------------------------------------------------------------------ launch cell
def test_every_notebook_carries_the_launch_cell_for_the_configured_repository():
    source = launch_cell.render(*launch_cell.configured())
    problems = [found for found in (launch_cell.problem(path, source)
                                    for path in launch_cell.book_notebooks()) if found]
    assert not problems, "run `python binder/launch_cell.py`:\n" + "\n".join(problems)


def test_the_configured_repository_is_written_as_the_book_reads_it():
    url, branch = launch_cell.configured()
    assert reader.repository_url(url, "repository.url") == url
    assert re.fullmatch(r"[\w./-]+", branch), branch


def _run_cell(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "launch-cell", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_cell_does_nothing_where_the_library_is_installed(monkeypatch, capfd):
    def refuse(*args, **kwargs):
        raise AssertionError(f"the cell ran {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    _run_cell(launch_cell.render("https://github.com/owner/name", "main"))
    assert capfd.readouterr() == ("", "")


@pytest.fixture
def no_library(monkeypatch):
    """``dpkmeans`` cannot be found, as on Colab before the first cell."""
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "dpkmeans" else find(name, *a))


def test_without_a_repository_the_cell_says_how_to_get_the_library(no_library):
    with pytest.raises(ModuleNotFoundError, match="make install"):
        _run_cell(launch_cell.render("", "main"))


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def test_the_cell_clones_the_branch_and_runs_its_installer(tmp_path, monkeypatch, no_library):
    """Against a repository on disk, whose installer only records that it ran and where."""
    repo = tmp_path / "repo"
    (repo / "binder").mkdir(parents=True)
    (repo / "binder" / "install_library.py").write_text(
        "from pathlib import Path\n"
        "Path('ran.txt').write_text(str(Path(__file__).resolve().parents[1]))\n")
    _git(repo, "init", "-q", "-b", "published")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    _git(repo, "branch", "other")
    work = tmp_path / "content"
    work.mkdir()
    monkeypatch.chdir(work)
    _run_cell(launch_cell.render(f"file://{repo}", "published"))
    clone = work / launch_cell.CLONE
    assert (work / "ran.txt").read_text() == str(clone)
    assert _git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip() == "published"
    (work / "ran.txt").unlink()
    _run_cell(launch_cell.render(f"file://{repo}", "published"))  # a second chapter: no clone
    assert (work / "ran.txt").is_file()


def _pair(folder: Path, cells: list) -> Path:
    """A notebook pair as `make sync` leaves it, every cell executed."""
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                               execution_count=count)]
    py = folder / "01_x.py"
    py.write_text(jupytext.writes(nb, fmt="py:percent"), encoding="utf-8")
    nbformat.write(nb, py.with_suffix(".ipynb"))
    return py


def test_the_writer_puts_the_cell_after_the_title_and_renumbers_the_run(tmp_path):
    parameters = nbformat.v4.new_code_cell("SEED = 1", metadata={"tags": ["parameters"]})
    py = _pair(tmp_path, [nbformat.v4.new_markdown_cell("# Title"), parameters,
                          nbformat.v4.new_code_cell("SEED")])
    source = launch_cell.render("https://github.com/owner/name", "main")
    assert launch_cell.problem(py, source)
    assert launch_cell.write(py, source)
    assert launch_cell.problem(py, source) is None
    assert not launch_cell.write(py, source)  # once only
    stored = nbformat.read(py.with_suffix(".ipynb"), as_version=4)
    assert [c.execution_count for c in stored.cells[1:]] == [1, 2, 3]
    assert stored.cells[1].outputs == [] and stored.cells[1].metadata.tags == launch_cell.TAGS
    assert [o.execution_count for c in stored.cells[2:] for o in c.outputs] == [2, 3]
    assert [c.source for c in jupytext.read(py).cells] == [c.source for c in stored.cells]
    moved = launch_cell.render("https://github.com/owner/fork", "main")
    assert "out of date" in launch_cell.problem(py, moved)
    assert launch_cell.write(py, moved) and launch_cell.problem(py, moved) is None
    assert [c.execution_count for c in nbformat.read(py.with_suffix(".ipynb"),
                                                     as_version=4).cells[1:]] == [1, 2, 3]


# -------------------------------------------------------------------------- the installer
def test_the_kernel_keeps_the_packages_it_has_imported():
    providers = {"IPython": ["ipython"], "numpy": ["numpy"], "yaml": ["PyYAML"]}
    kernel = install_library.kernel_distributions(["IPython.core", "json", "yaml"], providers)
    assert kernel == {"ipython", "pyyaml"}
    lock = "# header\nipython==9.0.0\nnumpy==2.4.6\nPyYAML==6.0.4\n"
    assert install_library.constraints(lock, kernel) == "# header\nnumpy==2.4.6\n"
    assert install_library.replaced({"ipython": "8", "pyyaml": "6"},
                                    {"ipython": "9", "pyyaml": "6"}, kernel) == ["ipython"]


class _Pip:
    """Records pip's command lines; fails the ones naming a constraints file if told to."""

    def __init__(self, fail_pinned: bool = False):
        self.commands, self.constraints, self.fail_pinned = [], [], fail_pinned

    def __call__(self, command, **kwargs):
        if command[:2] == ["git", "-C"]:
            return subprocess.CompletedProcess(command, 0, "abc123def456\n", "")
        self.commands.append(command)
        if "--constraint" in command:
            self.constraints.append(Path(command[command.index("--constraint") + 1]).read_text())
            if self.fail_pinned:
                raise subprocess.CalledProcessError(1, command)
        return subprocess.CompletedProcess(command, 0)


def test_the_installer_pins_what_the_kernel_does_not_run(tmp_path, monkeypatch, capsys):
    pip = _Pip()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(ROOT / "src")])
    monkeypatch.setattr(metadata, "packages_distributions", lambda: {"numpy": ["numpy"]})
    assert install_library.install(ROOT, pip) == []
    library, glue = pip.commands
    assert library[-2:] == ["--editable", f"{ROOT}[all]"] and "--constraint" in library
    assert glue[-2:] == ["--no-deps", "myst-nb"] and "--constraint" in glue
    assert "numpy==" not in pip.constraints[0]  # numpy runs in this process: kept as it is
    assert re.search(r"^myst-nb==", pip.constraints[0], re.M)
    assert sys.path[0] == str(ROOT / "src")
    assert "with the versions of requirements/lock.txt" in capsys.readouterr().out


def test_the_installer_falls_back_to_the_librarys_ranges(monkeypatch, capsys):
    pip = _Pip(fail_pinned=True)
    monkeypatch.setattr(sys, "path", list(sys.path))
    install_library.install(ROOT, pip)
    assert "--constraint" not in pip.commands[-1] and "--constraint" not in pip.commands[-2]
    assert "version ranges" in capsys.readouterr().out


def test_the_installer_refuses_a_folder_that_is_not_the_books_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="not the book's source"):
        install_library.install(tmp_path, _Pip())


# --------------------------------------------------------------------------- built pages
def _theme_options(url: str) -> dict:
    """html_theme_options as Jupyter Book makes them from _config.yml, with ``url``."""
    from jupyter_book.config import yaml_to_sphinx

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["repository"]["url"] = url
    keys = ("repository", "html", "launch_buttons")
    return yaml_to_sphinx({key: config[key] for key in keys})[0]["html_theme_options"]


def _build(tmp_path: Path, monkeypatch, *, configured: str = "", built_from: str = "",
           modified: bool = False, **overrides) -> str:
    """Build a one-chapter book with the book's theme and extensions; the chapter's HTML."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    monkeypatch.setenv(reader.REPOSITORY_ENV, built_from)
    source = tmp_path / "book"
    (source / "notebooks").mkdir(parents=True)
    (source / "index.md").write_text("# Book\n\n```{toctree}\nnotebooks/ch\n```\n")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter"), nbformat.v4.new_code_cell("1")]
    nbformat.write(nb, source / "notebooks" / "ch.ipynb")
    (source / "SOURCE_COMMIT").write_text(
        f"commit: feedface0123\ntimestamp: 1\nmodified: {'yes' if modified else 'no'}\n")
    config = {"extensions": ["myst_nb", "sphinx_thebe", "sphinx_book_theme", "reader"],
              "html_theme": "sphinx_book_theme", "html_theme_options": _theme_options(configured),
              "nb_execution_mode": "off", "exclude_patterns": ["SOURCE_COMMIT"], **overrides}
    warnings = io.StringIO()
    with docutils_namespace():  # one build's roles and nodes, as sphinx.testing does
        app = Sphinx(str(source), None, str(tmp_path / "html"), str(tmp_path / "doctrees"),
                     "html", confoverrides=config, status=None, warning=warnings,
                     freshenv=True)
        app.build()
    assert not warnings.getvalue(), warnings.getvalue()
    pages = sorted((tmp_path / "html").rglob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "binder-examples" not in text and "thebe" not in text.lower(), page
    assert not list((tmp_path / "html").rglob("*thebe*"))
    return (tmp_path / "html" / "notebooks" / "ch.html").read_text(encoding="utf-8")


def _launch_links(html: str) -> set[str]:
    return set(re.findall(r'href="(https://[^"]*(?:mybinder|colab|github)[^"]*)"', html))


def test_without_a_repository_the_pages_have_no_buttons_and_no_thebe(tmp_path, monkeypatch):
    assert _launch_links(_build(tmp_path, monkeypatch)) == set()


def test_the_buttons_open_the_built_commit_on_binder_and_the_branch_on_colab(tmp_path,
                                                                             monkeypatch):
    url = "https://github.com/owner/book"
    html = _build(tmp_path, monkeypatch, configured=url, built_from=url + "/")
    assert _launch_links(html) == {
        url,
        "https://mybinder.org/v2/gh/owner/book/feedface0123?urlpath=tree/notebooks/ch.ipynb",
        "https://colab.research.google.com/github/owner/book/blob/main/notebooks/ch.ipynb"}


def test_a_build_with_uncommitted_changes_launches_the_branch(tmp_path, monkeypatch):
    url = "https://github.com/owner/book"
    links = _launch_links(_build(tmp_path, monkeypatch, configured=url, modified=True))
    assert "https://mybinder.org/v2/gh/owner/book/main?urlpath=tree/notebooks/ch.ipynb" in links


def test_colab_only_for_the_repository_the_notebooks_install_from(tmp_path, monkeypatch):
    """A fork's book: Binder builds the fork, Colab would install the configured library."""
    html = _build(tmp_path, monkeypatch, configured="https://github.com/owner/book",
                  built_from="https://github.com/fork/book")
    links = _launch_links(html)
    assert "https://mybinder.org/v2/gh/fork/book/feedface0123?urlpath=tree/notebooks/ch.ipynb" \
        in links
    assert not [link for link in links if "colab" in link]


def test_the_student_edition_links_no_repository(tmp_path, monkeypatch):
    url = "https://github.com/owner/book"
    html = _build(tmp_path, monkeypatch, configured=url, built_from=url,
                  extensions=["myst_nb", "sphinx_thebe", "sphinx_book_theme", "sphinx_exercise",
                              "reader"], hide_solutions=True)
    assert _launch_links(html) == set()


@pytest.mark.parametrize("value", ["github.com/owner/book", "https://github.com/owner",
                                   "https://github.com/owner/book/tree/main", "ssh://x/o/r"])
def test_a_repository_that_is_not_an_address_is_a_clear_error(value):
    from sphinx.errors import ConfigError

    with pytest.raises(ConfigError, match="DPKMEANS_REPOSITORY_URL is .*HOST/OWNER/NAME"):
        reader.repository_url(value, "$DPKMEANS_REPOSITORY_URL")
