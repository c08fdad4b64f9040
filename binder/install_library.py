"""Install the library into a running Jupyter kernel from the source tree this file is in.

Every chapter's first cell runs this file (``runpy.run_path``) where ``dpkmeans`` cannot be
imported, as on Colab, after cloning the book's repository into ``private-kmeans-reproduced/``
(``binder/launch_cell.py`` writes that cell; docs/launch.md). It installs the library in place,
as ``make install`` does, with what the chapters import: the ``all`` extra (everything the
library can use: compiled kernels, Dask, the SDP, figures, k-prototypes, the accountant, the
derivation of a dataset from its UCI original) and myst-nb's ``glue``.

A kernel is already running, inside an environment someone else maintains (Colab's), so:

* every package comes at its version in ``requirements/lock.txt`` (the versions the book is
  built with), except the packages the kernel has already imported: those are the kernel's
  own (IPython, ipykernel, its Jupyter client...), replacing them under it would break it,
  and they stay as they are when the library's ranges accept them;
* myst-nb comes without its dependencies, which build the book (Sphinx, myst-parser, a newer
  Jupyter client): in a kernel, ``glue`` only displays a value, with IPython and nbformat.

The kernel then imports the library at once. The reader is told what comes next: nothing, or
restarting the kernel when the install had to replace a package the kernel had imported.
The standard library only: this runs before anything is installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

#: The extra that brings everything the library can use (pyproject.toml).
EXTRA = "all"
#: The chapters' one import from the book's tools: ``from myst_nb import glue``.
GLUE = "myst-nb"
#: The versions the book is built and tested with, relative to the source tree.
LOCK = Path("requirements") / "lock.txt"
#: The Python the lock is for, as Binder reads it (``python-X.Y``).
RUNTIME = Path("binder") / "runtime.txt"

Runner = Callable[..., subprocess.CompletedProcess]


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def kernel_distributions(loaded: Iterable[str], providers: Mapping[str, Iterable[str]]
                         ) -> set[str]:
    """The distributions (canonical names) that provide a module in ``loaded``
    (``providers``: top-level module -> distributions)."""
    tops = {module.split(".")[0] for module in loaded}
    return {canonical(dist) for module in tops for dist in providers.get(module, ())}


def constraints(lock: str, keep: set[str]) -> str:
    """The lock's lines, without the pins of the distributions in ``keep``."""
    kept = []
    for line in lock.splitlines():
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==", line)
        if name is None or canonical(name.group(1)) not in keep:
            kept.append(line)
    return "\n".join(kept) + "\n"


def pip_commands(root: Path, constraint: Path | None, *, glue_deps: bool = False
                 ) -> list[list[str]]:
    """pip's command lines: the library in place from ``root`` with its ``all`` extra, then
    myst-nb, alone unless ``glue_deps``; at the versions of ``constraint`` when given."""
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    pinned = ["--constraint", str(constraint)] if constraint is not None else []
    return [[*pip, *pinned, "--editable", f"{root}[{EXTRA}]"],
            [*pip, *pinned, *([] if glue_deps else ["--no-deps"]), GLUE]]


def glue_imports() -> bool:
    """Whether ``myst_nb.glue`` finds what it imports (IPython, nbformat, docutils)."""
    importlib.invalidate_caches()
    try:
        importlib.import_module("myst_nb.ext.glue")
    except ImportError:
        return False
    return True


def installed_versions() -> dict[str, str]:
    """Every installed distribution's version, by canonical name."""
    return {canonical(dist.metadata["Name"]): dist.version
            for dist in importlib.metadata.distributions() if dist.metadata["Name"]}


def replaced(before: Mapping[str, str], after: Mapping[str, str], running: set[str]
             ) -> list[str]:
    """The distributions in ``running`` that the install moved to another version."""
    return sorted(name for name in running
                  if name in before and after.get(name, before[name]) != before[name])


def lock_python(root: Path) -> str | None:
    """The Python version (``X.Y``) the lock's versions are for, from ``binder/runtime.txt``."""
    try:
        text = (root / RUNTIME).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    found = re.fullmatch(r"python-(\d+\.\d+)", text)
    return found.group(1) if found else None


def commit_of(root: Path, run: Runner) -> str:
    """The commit the tree at ``root`` holds (git's short name), or "unknown"."""
    try:
        done = run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                   capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _pip(commands: list[list[str]], run: Runner) -> None:
    for command in commands:
        run(command, check=True)


def install(root: Path, run: Runner = subprocess.run) -> list[str]:
    """Install the library from ``root`` into this kernel's Python; return the distributions
    the kernel runs that the install replaced (then the kernel must restart)."""
    if not (root / "pyproject.toml").is_file() or not (root / LOCK).is_file():
        raise FileNotFoundError(f"{root} is not the book's source: it has no pyproject.toml "
                                f"or no {LOCK.as_posix()}")
    wanted, running = lock_python(root), f"{sys.version_info[0]}.{sys.version_info[1]}"
    print(f"Installing dpkmeans from {root} (commit {commit_of(root, run)}) with the "
          f"versions of {LOCK.as_posix()}: a few minutes.")
    if wanted and wanted != running:
        print(f"Those are the versions the book is built with on Python {wanted}; this "
              f"kernel runs Python {running}.")
    kernel = kernel_distributions(list(sys.modules), importlib.metadata.packages_distributions())
    before = installed_versions()
    with tempfile.TemporaryDirectory() as folder:
        constraint = Path(folder) / "constraints.txt"
        constraint.write_text(constraints((root / LOCK).read_text(encoding="utf-8"), kernel),
                              encoding="utf-8")
        try:
            _pip(pip_commands(root, constraint), run)
        except subprocess.CalledProcessError:
            print(f"pip could not install the versions of {LOCK.as_posix()} here (above). "
                  "Installing with the version ranges of the library's pyproject.toml "
                  "instead: the chapters run, and a figure's last digits may differ from "
                  "the book's.")
            constraint = None
            _pip(pip_commands(root, constraint), run)
        if not glue_imports():  # this kernel lacks nbformat or docutils: myst-nb brings them
            _pip(pip_commands(root, constraint, glue_deps=True)[1:], run)
    source = str(root / "src")
    if source not in sys.path:
        sys.path.insert(0, source)  # what the install's .pth file does from the next start
    return replaced(before, installed_versions(), kernel)


def main(root: Path, run: Runner = subprocess.run) -> None:
    """Install, then tell the reader what comes next."""
    stale = install(root, run)
    print(f"dpkmeans is installed from {root}; the chapters read the book's committed "
          "results there. A chapter that reads one of the papers' datasets downloads it from "
          "UCI into ~/.cache/dpkmeans the first time (`python -m dpkmeans datasets check "
          "--for-book` lists them, and says where to get any without a download address).")
    if stale:
        print(f"The install replaced {', '.join(stale)}, which this kernel had already "
              "imported: restart the kernel (Colab: Runtime > Restart session), then run the "
              "notebook from the top. The library stays installed; this cell then does "
              "nothing.")


if __name__ in {"__main__", "<run_path>"}:
    main(Path(__file__).resolve().parents[1])
