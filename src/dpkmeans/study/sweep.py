"""Parameter sweeps: expand a YAML grid, run each cell through a papermill notebook, append
tidy rows to ``data/results/<experiment>.csv`` (``docs/design.md``, "Notebooks and chapters").

A sweep file looks like::

    experiment: dplloyd_baselines
    notebook: notebooks/sweeps/dplloyd_cell.ipynb   # its `parameters` cell is overridden
    seed: 20261122                                  # base seed; each cell derives its own
    fixed: {replicas: 200}                          # passed to every cell
    grid:                                           # cartesian product
      case: [synthetic, blood]
      epsilon: [0.1, 1.0]
    cases:                                          # a `case` value expands to parameters
      blood: {dataset: blood, paper: dp-kccm, k: 4}
    smoke: {grid: {epsilon: [1.0]}, fixed: {replicas: 3}}   # --smoke overrides
    parts: {case: {adult: 3}}                       # optional: a long cell runs in parts

Cells already in the results file are skipped (resume). The cell seed is a hash of the base
seed and the cell's parameters, so adding a grid value never changes the other cells.

The experiment name is a plain identifier (it names the results file). Every parameter must be
one of the cell notebook's (its ``parameters`` cell); ``seed`` and ``output_csv`` are set by the
sweep, and so are ``part`` and ``parts`` in a split cell.

A long cell may run as several *parts*, each a task of its own: ``parts:`` gives how many, one
integer for every cell or a count per grid value (``{NAME: {VALUE: N}}``, a value not listed
runs whole; with several names the counts multiply), and ``smoke: {parts: ...}`` overrides it.
Part ``k`` of ``n`` runs the cell notebook with ``part = k`` and ``parts = n``; the notebook
(which then declares both in its parameters cell) computes only the ``k``-th block of its rows
(:func:`dpkmeans.study.parts.part_block`). The parts are left out of the cell's id and seed, so
the split never changes a number: the cell's rows are its parts' rows in part order, with the
cell's id, and its ``cell_runtime_s`` is the sum of its parts' times. A finished part's rows wait
in ``_build/sweep-parts/`` under the sweep's base (with ``cell_part`` and ``cell_parts``
columns) until the cell's last part is in, so a stopped sweep resumes part by part
(:meth:`SweepSpec.parts_path`). A relative ``notebook`` and the results folder are taken from the sweep file's *base*:
the folder above ``notebooks/sweeps/`` when the file is in such a folder (the book's root),
otherwise the folder of the sweep file itself.

Ctrl-C stops a sweep within seconds: the cells not started are cancelled, the running cells'
kernels are killed, and the rows of every cell that finished are kept (the next run resumes).
A cell that fails stops the sweep the same way, with one line naming the cell and its error;
the whole traceback goes to ``_build/sweep-logs/`` under the sweep's base.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import itertools
import json
import os
import re
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpkmeans.data import get_registry
from dpkmeans.data.needs import require_datasets
from dpkmeans.errors import DPKMeansError
from dpkmeans.files import write_csv, write_text
from dpkmeans.papers.registry import records
from dpkmeans.study.cell_kernels import (
    KERNEL_ARGUMENTS,
    allow_cell_kernels,
    close_warm_kernels,
    execute_cell_notebook,
    kernels_stopped,
    stop_cell_kernels,
)

# the cell kernels (warm between cells, killed on Ctrl-C), re-exported under their old home
from dpkmeans.study.environment import cell_environment, cpu_info, pin_cell_environment  # noqa: F401

__all__ = ["SweepSpec", "SweepError", "SweepFileNotFoundError", "SweepCellError", "load_spec",
           "check_spec", "check_results_path", "sweep_datasets", "require_sweep_data",
           "sweep_base", "notebook_parameters", "expand", "cell_key", "cell_id", "cell_seed",
           "run_sweep", "run_cell", "run_cell_notebook", "completed_cells", "append_rows",
           "cell_parts", "cell_tasks", "part_key", "completed_parts", "merge_parts",
           "PART_PARAMETERS", "PART_COLUMNS",
           "versions_string", "settle_cells", "CellGate", "CellNotStarted", "stop_cell_kernels",
           "KERNEL_ARGUMENTS",
           "read_results", "results_frame", "exact_integers",
           "allow_cell_kernels", "close_warm_kernels", "BOOKKEEPING",
           "cell_environment", "cpu_info", "pin_cell_environment", "add_parser"]

#: Results keep 12 significant digits of a float: enough for the spot checks, and half the file
#: size. Integers (seeds) are written whole (:func:`results_frame`, :func:`read_results`).
FLOAT_FORMAT = "%.12g"

#: A split cell's part and number of parts (set by the sweep; not in the cell's id or seed).
PART_PARAMETERS = ("part", "parts")

#: Parameters the sweep itself gives every cell (the parts only to a split one).
SWEEP_PARAMETERS = ("seed", "output_csv", *PART_PARAMETERS)

#: The columns that carry a split cell's part (and its number of parts) until it is merged.
PART_COLUMNS = ("cell_part", "cell_parts")

#: Columns of a results file that are not results: the timings and versions a run records, and
#: the experiment and cell names (a rerun must give every other column bit for bit).
BOOKKEEPING = frozenset({"run_s", "runtime_s", "cell_runtime_s", "sdp_seconds", "seconds",
                         "audit_minutes", "versions", "experiment", "cell", *PART_COLUMNS})

#: Seconds a stopped sweep waits for its killed cells' threads to end.
STOP_GRACE_S = 5.0

#: The largest sweep file read, and the most values it may hold once its YAML aliases are
#: expanded (the book's largest holds a few hundred): a billion-laughs file is refused at once.
MAX_SPEC_BYTES = 1 << 20
MAX_SPEC_VALUES = 100_000

_EXPERIMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class SweepError(DPKMeansError, ValueError):
    """A sweep file or a sweep argument that cannot be used (the CLI prints it on one line)."""


class SweepFileNotFoundError(SweepError, FileNotFoundError):
    """No sweep file at the path given."""


class SweepCellError(SweepError):
    """A cell's notebook failed: the message names the cell, its error and the full log."""

@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep file (see the module docstring)."""

    experiment: str
    notebook: Path
    seed: int
    grid: dict[str, list[Any]]
    fixed: dict[str, Any] = field(default_factory=dict)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: Path | None = None
    parts: int | dict[str, dict[str, int]] = 1

    def parts_path(self, results: Path) -> Path:
        """Where the finished parts of split cells wait for their cell's last part before
        their rows go to ``results``: ``_build/sweep-parts/`` under the sweep's base, one file
        per results file."""
        root = sweep_base(self.source) if self.source else Path.cwd()
        digest = hashlib.sha256(str(Path(results).resolve()).encode()).hexdigest()[:8]
        return root / "_build" / "sweep-parts" / f"{self.experiment}-{digest}.csv"

    @property
    def results_path(self) -> Path:
        root = sweep_base(self.source) if self.source else Path.cwd()
        return root / "data" / "results" / f"{self.experiment}.csv"


def sweep_base(path: str | os.PathLike[str]) -> Path:
    """The folder a sweep file's relative notebook and its ``data/results/`` are taken from:
    the book's root for a file in ``notebooks/sweeps/``, otherwise the file's own folder."""
    folder = Path(path).resolve().parent
    if folder.name == "sweeps" and folder.parent.name == "notebooks":
        return folder.parent.parent
    return folder


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SweepError(f"{where} must be a mapping of names to values, got "
                         f"{type(value).__name__}")
    return value


def _expanded_values(node: Any, name: str, sizes: dict[int, int], open_: set[int]) -> int:
    """How many YAML nodes ``node`` holds once every alias in it is expanded (each shared node
    counted once per use, computed once); refuses a node that contains itself."""
    import yaml

    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise SweepError(f"{name}: a YAML alias refers to a value that contains it; a sweep "
                         "file holds finite lists and mappings")
    open_.add(key)
    children = ([item for pair in node.value for item in pair]
                if isinstance(node, yaml.MappingNode)
                else node.value if isinstance(node, yaml.SequenceNode) else [])
    total = 1
    for child in children:
        total += _expanded_values(child, name, sizes, open_)
        if total > MAX_SPEC_VALUES:
            raise SweepError(f"{name}: more than {MAX_SPEC_VALUES} values once its YAML aliases "
                             "are expanded; a sweep file lists its grid plainly")
    open_.discard(key)
    sizes[key] = total
    return total


def _read_yaml(path: Path) -> Any:
    """The file's YAML, read with PyYAML's safe loader, refused (``SweepError``) when larger than
    :data:`MAX_SPEC_BYTES` or when its aliases expand to more than :data:`MAX_SPEC_VALUES`
    values (checked on the composed nodes, before any value is built)."""
    import yaml

    if path.stat().st_size > MAX_SPEC_BYTES:
        raise SweepError(f"{path.name}: larger than {MAX_SPEC_BYTES} bytes; a sweep file lists "
                         "a grid of parameters")
    loader = yaml.SafeLoader(path.read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_values(node, path.name, {}, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_spec(path: str | os.PathLike[str], *, smoke: bool = False) -> SweepSpec:
    """Read a sweep YAML file; with ``smoke`` apply its ``smoke`` overrides. A file that cannot
    be used raises :class:`SweepError` naming the problem."""
    import yaml

    path = Path(path).resolve()
    if not path.is_file():
        raise SweepFileNotFoundError(f"no sweep file at {path}")
    try:
        raw = _read_yaml(path)
    except RecursionError:
        raise SweepError(f"{path.name}: nested too deeply to be a sweep file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SweepError(f"{path.name}: not valid YAML{where}: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path.name}: cannot read it ({exc})") from None
    raw = _mapping(raw, f"{path.name}: the file")
    missing = [key for key in ("experiment", "notebook", "seed", "grid") if key not in raw]
    if missing:
        raise SweepError(f"{path.name}: missing keys {missing}")
    experiment = str(raw["experiment"])
    if not _EXPERIMENT_NAME.fullmatch(experiment):
        raise SweepError(f"{path.name}: experiment {experiment!r} is not a plain identifier "
                         "(letters, digits and underscores; it names data/results/NAME.csv)")
    try:
        seed = int(raw["seed"])
    except (TypeError, ValueError):
        raise SweepError(f"{path.name}: seed must be an integer, got {raw['seed']!r}") from None

    def values(v: Any) -> list[Any]:
        return list(v) if isinstance(v, list) else [v]

    grid = {k: values(v) for k, v in _mapping(raw["grid"], f"{path.name}: grid").items()}
    fixed = dict(_mapping(raw.get("fixed"), f"{path.name}: fixed"))
    overrides = _mapping(raw.get("smoke"), f"{path.name}: smoke")
    smoke_grid = {k: values(v) for k, v in
                  _mapping(overrides.get("grid"), f"{path.name}: smoke.grid").items()}
    every = {k: [*grid.get(k, []), *smoke_grid.get(k, [])] for k in {*grid, *smoke_grid}}
    parts = raw.get("parts", 1)
    _check_parts(parts, every, f"{path.name}: parts")
    if smoke:
        grid.update(smoke_grid)
        fixed.update(_mapping(overrides.get("fixed"), f"{path.name}: smoke.fixed"))
        parts = overrides.get("parts", parts)
        _check_parts(parts, every, f"{path.name}: smoke.parts")
    cases = {str(k): dict(_mapping(v, f"{path.name}: case {k}")) for k, v in
             _mapping(raw.get("cases"), f"{path.name}: cases").items()}
    unknown = [c for c in grid.get("case", []) if str(c) not in cases]
    if unknown:
        raise SweepError(f"{path.name}: grid cases {unknown} are not defined under `cases`")
    notebook = Path(str(raw["notebook"]))
    return SweepSpec(experiment, sweep_base(path) / notebook, seed, grid, fixed, cases, path,
                     parts)


def _check_count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SweepError(f"{where} must be a whole number of parts, at least 1, got {value!r}")
    return value


def _check_parts(parts: Any, grid: dict[str, list[Any]], where: str, *,
                 values: bool = True) -> None:
    """Refuse a ``parts`` value that is neither a count nor ``{grid parameter: {value:
    count}}`` over the parameters (and, with ``values``, the values) of ``grid``."""
    if not isinstance(parts, dict):
        if not isinstance(parts, int) or isinstance(parts, bool):
            raise SweepError(f"{where} must be a whole number of parts for every cell or a "
                             f"mapping {{grid parameter: {{value: parts}}}}, got {parts!r}")
        _check_count(parts, where)
        return
    for name, counts in parts.items():
        if name not in grid:
            raise SweepError(f"{where}: {name!r} is not a grid parameter; the grid's are "
                             f"{sorted(grid)}")
        if not isinstance(counts, dict):
            raise SweepError(f"{where}.{name} must map values of {name} to numbers of parts, "
                             f"got {counts!r}")
        known = {str(v) for v in grid[name]}
        for value, count in counts.items():
            if values and str(value) not in known:
                raise SweepError(f"{where}.{name}: {value!r} is not a value of {name} in the "
                                 f"grid ({sorted(known)})")
            _check_count(count, f"{where}.{name}.{value}")


def cell_parts(spec: SweepSpec, params: dict[str, Any]) -> int:
    """How many parts the cell ``params`` runs in (its sweep file's ``parts``; 1: whole).

    Parameters
    ----------
    spec : SweepSpec
        The sweep.
    params : dict
        One cell of :func:`expand` (or one of its parts).

    Returns
    -------
    int
        The product of the counts its grid values are given (1 for a value not listed).
    """
    if not isinstance(spec.parts, dict):
        return _check_count(spec.parts, f"{spec.experiment}: parts")
    total = 1
    for name, counts in spec.parts.items():
        if isinstance(counts, dict):
            by_text = {str(value): count for value, count in counts.items()}
            total *= _check_count(by_text.get(str(params.get(name)), 1),
                                  f"{spec.experiment}: parts.{name}")
    return total


def cell_tasks(spec: SweepSpec, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The tasks of one cell: the cell itself, or its parts (its parameters with ``part`` and
    ``parts`` added; :data:`PART_PARAMETERS`), in part order."""
    n = cell_parts(spec, params)
    if n == 1:
        return [params]
    return [{**params, "part": k, "parts": n} for k in range(n)]


def part_key(params: dict[str, Any]) -> tuple[str, int, int]:
    """A task's cell id, part and number of parts (``(id, 0, 1)`` for a whole cell)."""
    return cell_id(params), int(params.get("part", 0)), int(params.get("parts", 1))


def notebook_parameters(notebook: str | os.PathLike[str]) -> list[str]:
    """The names its ``parameters`` cell assigns (the ones papermill can override)."""
    path = Path(notebook)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SweepError(f"cannot read the notebook {path} ({exc})") from None
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell["source"]
            source = "".join(source) if isinstance(source, list) else source
            try:
                tree = ast.parse(source)
            except SyntaxError as exc:
                raise SweepError(f"{path.name}: its parameters cell is not Python "
                                 f"({exc.msg})") from None
            names: list[str] = []
            for node in tree.body:
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target] if isinstance(node, ast.AnnAssign) else [])
                names += [t.id for t in targets if isinstance(t, ast.Name)]
            return names
    raise SweepError(f"{path.name} has no cell tagged `parameters`")


def check_spec(spec: SweepSpec) -> None:
    """Refuse a sweep whose notebook is missing, or which sets a parameter its notebook does
    not have (it would only become a column of the results file)."""
    name = spec.source.name if spec.source else spec.experiment
    if not spec.notebook.is_file():
        base = sweep_base(spec.source) if spec.source else Path.cwd()
        raise SweepError(f"{name}: no notebook at {spec.notebook} (a relative `notebook` is "
                         f"taken from {base}: the folder above notebooks/sweeps/ for a sweep "
                         "file there, otherwise the sweep file's own folder)")
    known = notebook_parameters(spec.notebook)
    used = {*spec.fixed, *spec.grid, *(k for case in spec.cases.values() for k in case)}
    reserved = sorted(used & set(PART_PARAMETERS))
    if reserved:
        raise SweepError(f"{name}: {reserved} are set by the sweep for a cell run in parts "
                         "(the `parts` key); a sweep file does not set them")
    _check_parts(spec.parts, spec.grid, f"{name}: parts", values=False)
    split = any(cell_parts(spec, params) > 1 for params in expand(spec))
    if split and not set(PART_PARAMETERS) <= set(known):
        raise SweepError(f"{name}: its `parts` split cells, but {spec.notebook.name} cannot "
                         "run in parts (its parameters cell does not declare `part` and "
                         "`parts`)")
    unknown = sorted(used - set(known) - set(SWEEP_PARAMETERS))
    if unknown:
        cell = [p for p in known if p not in SWEEP_PARAMETERS]
        raise SweepError(f"{name}: {unknown} are not parameters of {spec.notebook.name}; "
                         f"its parameters are {cell}")


def cell_key(params: dict[str, Any]) -> str:
    """A stable text key of a cell's parameters (sorted JSON), without a part's ``part`` and
    ``parts`` (:data:`PART_PARAMETERS`): every part of a cell has the cell's key."""
    kept = {k: v for k, v in params.items() if k not in PART_PARAMETERS}
    return json.dumps(kept, sort_keys=True, default=str)


def cell_id(params: dict[str, Any]) -> str:
    """A short stable identifier of a cell (the first 16 hex digits of its key's sha256)."""
    return hashlib.sha256(cell_key(params).encode()).hexdigest()[:16]


def cell_seed(base_seed: int, params: dict[str, Any]) -> int:
    """A 63-bit seed from the base seed and the cell's parameters (stable across runs)."""
    digest = hashlib.sha256(f"{base_seed}|{cell_key(params)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """All cells: the grid's cartesian product, with cases expanded and fixed values added."""
    names = list(spec.grid)
    cells = []
    for values in itertools.product(*(spec.grid[n] for n in names)):
        grid_params = dict(zip(names, values))
        params = {**spec.fixed, **grid_params}
        if "case" in grid_params:
            params.update(spec.cases[str(grid_params["case"])])
        params["seed"] = cell_seed(spec.seed, grid_params)
        cells.append(params)
    return cells


def cell_log_dir(notebook: Path) -> Path:
    """Where a failed cell's full log goes: ``_build/sweep-logs/`` under the notebook's base
    (:func:`sweep_base`: the book's root for a cell notebook in ``notebooks/sweeps/``)."""
    return sweep_base(notebook) / "_build" / "sweep-logs"


def _write_cell_log(notebook: Path, params: dict[str, Any], exc: BaseException,
                    executed: Path) -> Path:
    """Write the failed cell's parameters, traceback and executed notebook; returns the log's
    path (in the system's temporary folder when the base is not writable)."""
    cell, part, parts = part_key(params)
    where = f"\npart: {part} of {parts}" if parts > 1 else ""
    text = (f"notebook: {notebook}\nparameters: {cell_key(params)}{where}\n\n"
            + _ANSI.sub("", "".join(traceback.format_exception(exc))))
    stem = f"{notebook.stem}-{cell}" + (f"-part{part}of{parts}" if parts > 1 else "")
    for folder in (cell_log_dir(notebook), Path(tempfile.gettempdir()) / "dpkmeans-sweep-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / f"{stem}.log"
            write_text(log, text)
        except OSError:
            continue
        if executed.is_file():
            shutil.copyfile(executed, folder / f"{stem}.ipynb")
        return log
    raise SweepError(f"cannot write the log of the failed cell {stem} anywhere") from exc


def _cell_failure(notebook: Path, params: dict[str, Any], exc: Exception,
                  executed: Path) -> SweepCellError:
    """One line for a failed cell: which cell, its error's last line, and where the log is."""
    log = _write_cell_log(notebook, params, exc, executed)
    ename = getattr(exc, "ename", None) or type(exc).__name__
    evalue = getattr(exc, "evalue", None)
    evalue = " ".join(_ANSI.sub("", str(exc if evalue is None else evalue)).split())
    evalue = evalue if len(evalue) <= 200 else evalue[:197] + "..."
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k not in SWEEP_PARAMETERS)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    cell, part, parts = part_key(params)
    which = f"part {part} of {parts} of cell {cell}" if parts > 1 else f"cell {cell}"
    return SweepCellError(f"{which} of {notebook.name} ({shown}) failed: "
                          f"{ename}: {evalue}; the full log is {log}")


def run_cell_notebook(notebook: Path, params: dict[str, Any], workdir: Path) -> pd.DataFrame:
    """Execute the cell notebook with papermill, on this thread's warm kernel
    (:mod:`dpkmeans.study.cell_kernels`), and return the rows it wrote. A failure raises
    :class:`SweepCellError` (one line; the traceback goes to :func:`cell_log_dir`), except
    when the cell was stopped (Ctrl-C killed its kernel)."""
    out_csv = workdir / "rows.csv"
    executed = workdir / "executed.ipynb"
    try:
        execute_cell_notebook(notebook, executed, {**params, "output_csv": str(out_csv)})
        return read_results(out_csv)
    except Exception as exc:
        if kernels_stopped():
            raise
        raise _cell_failure(notebook, params, exc, executed) from exc


class CellNotStarted(SweepError):
    """A cell the run did not start because it was stopping (Ctrl-C, or a failed cell)."""


class CellGate:
    """Lets a cell start only while the run is not stopping.

    A worker thread that finishes a cell takes the next waiting one at once, before the main
    thread has seen a failure or Ctrl-C and cancelled the rest: the gate closes as soon as a
    cell fails (or the main thread closes it), and a cell that starts after that raises
    :class:`CellNotStarted` instead of running."""

    def __init__(self) -> None:
        self._stopping = threading.Event()

    def close(self) -> None:
        """From now on, no cell starts."""
        self._stopping.set()

    def guard(self, cell: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
        """``cell``, run only while the gate is open; its failure closes the gate."""
        def guarded(*args: Any, **kwargs: Any) -> pd.DataFrame:
            if self._stopping.is_set():
                raise CellNotStarted("the run is stopping: this cell was not started")
            try:
                return cell(*args, **kwargs)
            except BaseException:
                self._stopping.set()
                raise
        return guarded


def settle_cells(pool: ThreadPoolExecutor, futures: Iterable[Future], *, interrupted: bool,
                 gate: CellGate | None = None, grace: float = STOP_GRACE_S) -> list[Future]:
    """After Ctrl-C (``interrupted``) or a failed cell: close the ``gate`` and cancel the cells
    not started; kill the running cells' kernels and wait at most ``grace`` seconds for them
    (Ctrl-C), or wait for them to finish (a failure); return the futures whose cells finished
    with rows."""
    futures = list(futures)
    if gate is not None:
        gate.close()
    pool.shutdown(wait=False, cancel_futures=True)
    if interrupted:
        stop_cell_kernels()
    running = [f for f in futures if not f.done()]
    concurrent.futures.wait(running, timeout=grace if interrupted else None)
    return [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]


def package_versions() -> dict[str, str]:
    """Versions of the packages that produce the numbers (recorded with every result row)."""
    out = {}
    for name in ("dpkmeans", "numpy", "scipy", "scikit-learn", "diffprivlib"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def versions_string() -> str:
    """The package versions recorded in every row (``versions`` column)."""
    return ";".join(f"{k}={v}" for k, v in sorted(package_versions().items()))


def run_cell(spec: SweepSpec, params: dict[str, Any],
             runner: Callable[[Path, dict[str, Any], Path], pd.DataFrame] = run_cell_notebook,
             versions: str = "") -> pd.DataFrame:
    """One cell, or one part of a cell (``params`` with ``part`` and ``parts``,
    :func:`cell_tasks`): its rows, with its parameters first, then the metrics, then the
    bookkeeping (experiment, cell id, ``cell_runtime_s``, versions; a part's rows also carry
    :data:`PART_COLUMNS`, which :func:`merge_parts` drops)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rows = runner(spec.notebook, params, Path(tmp))
    cell = {k: v for k, v in params.items() if k not in PART_PARAMETERS}
    for name, value in cell.items():  # a value the cell computed is kept (a non-private
        # reference row runs once, whatever the cell's `runs`); the parameter fills the rest
        rows[name] = rows[name].where(rows[name].notna(), value) if name in rows else value
    rows["experiment"], rows["cell"] = spec.experiment, cell_id(params)
    rows["cell_runtime_s"], rows["versions"] = time.perf_counter() - start, versions
    _, part, parts = part_key(params)
    if parts > 1:
        rows["cell_part"], rows["cell_parts"] = part, parts
    first = ["experiment", *cell]  # parameters first, then metrics, then bookkeeping
    return rows[first + [c for c in rows.columns if c not in first]]


def sweep_datasets(spec: SweepSpec) -> tuple[str, ...]:
    """The registry datasets the sweep's cells read, in grid order: each cell's ``dataset``
    (else ``case``) value, where it is a registry name, or what its paper's sweep record maps
    it to (:attr:`dpkmeans.papers.registry.Sweep.data_aliases`); other values (a synthetic
    mixture, a sweep of one's own) read no registered file."""
    aliases: dict[str, tuple[str, ...]] = {}
    for record in records():
        for sweep in record.sweeps:
            if sweep.name == spec.experiment:
                aliases.update(sweep.data_aliases)
    known = get_registry().datasets
    out: dict[str, None] = {}
    for params in expand(spec):
        value = params.get("dataset", params.get("case"))
        if isinstance(value, str):
            names = aliases.get(value, (value,) if value in known else ())
            out.update(dict.fromkeys(names))
    return tuple(out)


def require_sweep_data(specs: Iterable[SweepSpec], command: str) -> None:
    """Stop ``command`` before any cell runs when a data file its sweeps read is missing (one
    line naming the files and how to get them: :func:`dpkmeans.data.needs.require_datasets`)."""
    names = [name for spec in specs for name in sweep_datasets(spec)]
    if names:
        require_datasets(names, command)


def check_results_path(path: Path, experiment: str) -> None:
    """Refuse, before any cell runs, a results path the sweep cannot use: a folder, a place
    where no file can be written, or a file that is not this experiment's results (its rows
    would be mixed with the new ones or lost). The file, if any, is left as it is."""
    again = "; give another --results"
    if path.is_dir():
        raise SweepError(f"{path} is a folder, not a results file{again} (a .csv path)")
    if path.exists():
        try:
            head = pd.read_csv(path, usecols=lambda c: c in ("experiment", "cell"), dtype=str)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise SweepError(f"{path} cannot be read as a sweep's results ({reason})"
                             f"{again}") from None
        if set(head.columns) != {"experiment", "cell"}:
            raise SweepError(f"{path} is not a sweep's results file (it has no experiment and "
                             f"cell columns){again}")
        others = sorted(set(head["experiment"].dropna()) - {experiment})
        if others:
            raise SweepError(f"{path} holds the results of {others}, not of {experiment!r}"
                             f"{again}")
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise SweepError(f"cannot write {path}: its folder {folder} cannot be made or written "
                         f"({exc.strerror or exc}){again}") from None


def exact_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its integer columns as pandas' nullable integers (``Int64``).

    A plain integer column becomes floats as soon as a row lacks it (another kind of row, or
    another cell's rows joined to it), and a float keeps about 16 significant digits of a
    63-bit seed; a nullable one keeps every digit and is written as an integer.
    """
    ints = [c for c in frame.columns if pd.api.types.is_integer_dtype(frame[c].dtype)]
    return frame.astype(dict.fromkeys(ints, "Int64")) if ints else frame


def results_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A results frame from one dict a row: a column whose values are all integers is kept as
    integers (:func:`exact_integers`) even when some rows lack it (e.g. a reference row has no
    ``point_seed``), so the file written from it records every seed exactly.

    Parameters
    ----------
    rows : list of dict
        One mapping of column names to values a row (a study's summary rows).

    Returns
    -------
    pandas.DataFrame
        The rows, with their integer columns as ``Int64``.

    Examples
    --------
    >>> from dpkmeans.study.sweep import results_frame
    >>> results_frame([{"point_seed": 2**62 + 1}, {"f": 0.5}])["point_seed"].tolist()
    [4611686018427387905, <NA>]
    """
    frame = pd.DataFrame(rows)
    for column in frame.columns:
        values = [row.get(column) for row in rows]
        given = [v for v in values if v is not None and not pd.isna(v)]
        if (given and frame[column].dtype.kind == "f"
                and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                        for v in given)):
            frame[column] = pd.array([None if v is None or pd.isna(v) else int(v)
                                      for v in values], dtype="Int64")
    return exact_integers(frame)


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A results (or cell) file as a frame whose integer columns are exact.

    pandas reads a column of integers with an empty field as floats, which round a 63-bit
    seed; here a column whose every value is written as an integer is read as ``Int64``
    (:func:`exact_integers`), and written back as the same text.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV file written by a sweep cell or by :func:`append_rows`.

    Returns
    -------
    pandas.DataFrame
        Its rows, with every column of integers (and empty fields) as ``Int64``.
    """
    frame = pd.read_csv(path)
    text = pd.read_csv(path, dtype=str)
    for column in frame.columns:
        values = text[column].dropna()
        if (frame[column].dtype.kind == "f" and len(values)
                and all(_INTEGER_TEXT.fullmatch(v) and str(int(v)) == v for v in values)):
            frame[column] = pd.array([None if pd.isna(v) else int(v) for v in text[column]],
                                     dtype="Int64")
    return exact_integers(frame)


def _part_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Each row's cell, part and number of parts (0 of 1 for a row of a whole cell)."""
    keys = pd.DataFrame({"cell": frame["cell"].astype(str)}, index=frame.index)
    for column, whole in zip(PART_COLUMNS, (0, 1)):
        values = frame[column] if column in frame else pd.Series(whole, index=frame.index)
        keys[column] = pd.to_numeric(values).fillna(whole).astype(int)
    return keys


def _read_keys(path: Path) -> pd.DataFrame:
    if not path.exists():
        return _part_keys(pd.DataFrame({"cell": []}))
    return _part_keys(pd.read_csv(path, usecols=lambda c: c in ("cell", *PART_COLUMNS)))


def _whole(keys: pd.DataFrame) -> dict[str, int]:
    """Each cell all of whose parts the keys hold, with its number of parts (the fewest, when
    rows of several splits are there)."""
    found = keys.drop_duplicates().groupby(["cell", "cell_parts"])["cell_part"].nunique()
    out: dict[str, int] = {}
    for (cell, parts), count in found.items():
        if count == parts and cell not in out:
            out[cell] = int(parts)
    return out


def completed_parts(path: Path) -> set[tuple[str, int, int]]:
    """The (cell id, part, parts) of every task whose rows a results or parts file holds (a
    whole cell as part 0 of 1; :func:`part_key`)."""
    keys = _read_keys(path)
    return {(str(c), int(k), int(n)) for c, k, n in keys.drop_duplicates().itertuples(
        index=False)}


def completed_cells(path: Path) -> set[str]:
    """The ids of the cells whose rows a results file already holds: every part of a cell
    run in parts (a cell with only some of its parts in is not complete)."""
    return set(_whole(_read_keys(path)))


def merge_parts(rows: pd.DataFrame, order: dict[str, int] | None = None) -> pd.DataFrame:
    """The rows of the complete cells among ``rows``, each cell's parts joined into the
    cell's rows.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of :func:`run_cell`: whole cells, and parts of cells (with :data:`PART_COLUMNS`).
    order : dict of str to int, optional
        Each cell id's position in the grid. Default: the order of the cells' first rows.

    Returns
    -------
    pandas.DataFrame
        The rows sorted by the cell's position, then by part, each part's rows in their own
        order (a stable sort); a split cell's ``cell_runtime_s`` is the sum of its parts',
        and the part columns are gone. A cell still missing a part is left out, and so are
        the rows of another split of a cell already whole.
    """
    if not len(rows):
        return rows.drop(columns=[c for c in PART_COLUMNS if c in rows])
    keys = _part_keys(rows)
    whole = _whole(keys)
    keep = (keys["cell_parts"] == keys["cell"].map(whole)).to_numpy()
    rows, keys = rows[keep], keys[keep]
    if not len(rows):
        return rows.drop(columns=[c for c in PART_COLUMNS if c in rows])
    if order is None:
        order = {cell: i for i, cell in enumerate(dict.fromkeys(keys["cell"]))}
    position = keys["cell"].map(order).fillna(len(order)).to_numpy(dtype=np.int64)
    sort = np.argsort(position * (1 + int(keys["cell_parts"].max()))
                      + keys["cell_part"].to_numpy(), kind="stable")
    rows, keys = rows.iloc[sort], keys.iloc[sort]
    if "cell_runtime_s" in rows and (keys["cell_parts"] > 1).any():
        first = rows.assign(_part=keys["cell_part"].to_numpy()).groupby(
            ["cell", "_part"], sort=False)["cell_runtime_s"].first()
        total = first.groupby(level=0, sort=False).sum()
        rows = rows.assign(cell_runtime_s=rows["cell"].map(total).to_numpy())
    return rows.drop(columns=[c for c in PART_COLUMNS if c in rows])


def run_sweep(
    spec: SweepSpec,
    *,
    jobs: int = 1,
    results_path: Path | None = None,
    runner: Callable[[Path, dict[str, Any], Path], pd.DataFrame] = run_cell_notebook,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every cell not yet in the results file; append its rows; return the new rows.

    A cell run in parts (:func:`cell_tasks`) reaches the results file once its last part is
    in (:func:`merge_parts`); until then its finished parts wait in
    :meth:`SweepSpec.parts_path`, and a new run runs only the parts missing."""
    from tqdm.auto import tqdm

    if jobs < 1:
        raise SweepError(f"jobs must be >= 1, got {jobs}")
    if runner is run_cell_notebook:
        check_spec(spec)
    allow_cell_kernels()
    # absolute: papermill changes the process's working directory while a cell runs, and the
    # other worker thread appends its rows meanwhile
    path = Path(results_path or spec.results_path).resolve()
    check_results_path(path, spec.experiment)
    staged = spec.parts_path(path)
    done = completed_cells(path)
    cells = [c for c in expand(spec) if cell_id(c) not in done]
    new = [_move_whole_cells(staged, path, {cell_id(c) for c in cells}, done)]
    have = completed_parts(staged)
    todo = [t for c in cells for t in cell_tasks(spec, c) if part_key(t) not in have]
    versions = versions_string()

    gate = CellGate()

    @gate.guard
    def one(params: dict[str, Any]) -> pd.DataFrame:
        return run_cell(spec, params, runner, versions)

    def keep(rows: pd.DataFrame) -> pd.DataFrame | None:
        """A whole cell's rows go to the results, a part's to the parts file (and the cell's
        to the results, once its last part is in); returns the rows the results gained."""
        if "cell_parts" not in rows:
            append_rows(path, rows)
            return rows
        append_rows(staged, rows)
        return _move_whole_cells(staged, path, {str(rows["cell"].iloc[0])})

    path.parent.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(todo), desc=spec.experiment, disable=not progress)
    pool = ThreadPoolExecutor(max_workers=jobs)  # each thread runs its cells on its own kernel
    futures = [pool.submit(one, params) for params in todo]
    kept: set[Future] = set()
    try:
        for future in futures:  # in grid order
            new.append(keep(future.result()))
            kept.add(future)
            bar.update()
    except BaseException as exc:  # Ctrl-C or a failed cell: keep what finished, then stop
        for future in settle_cells(pool, futures, gate=gate,
                                   interrupted=isinstance(exc, KeyboardInterrupt)):
            if future not in kept:
                keep(future.result())
        raise
    finally:
        pool.shutdown(wait=False)
        bar.close()
        close_warm_kernels()  # the idle ones: a cell still running keeps its kernel
    new = [rows for rows in new if rows is not None and len(rows)]
    return pd.concat(new, ignore_index=True) if new else pd.DataFrame()


def _move_whole_cells(staged: Path, path: Path, cells: set[str],
                      done: set[str] = frozenset()) -> pd.DataFrame | None:
    """Move each of ``cells`` whose parts are all in the parts file ``staged`` to the results
    file ``path``, merged (:func:`merge_parts`), and drop the parts of the cells ``done``
    already there (a run stopped between the two writes); the parts file keeps the rest (and
    is removed once empty). Returns the rows moved."""
    whole = completed_cells(staged) & cells
    stale = done & {cell for cell, _, _ in completed_parts(staged)}
    if not whole and not stale:
        return None
    rows = read_results(staged)
    moving = rows["cell"].astype(str).isin(whole | stale).to_numpy()
    merged = merge_parts(rows[rows["cell"].astype(str).isin(whole).to_numpy()])
    if len(merged):
        append_rows(path, merged)
    if moving.all():
        staged.unlink()
    else:
        write_csv(rows[~moving], staged, float_format=FLOAT_FORMAT)
    return merged


def append_rows(path: Path, rows: pd.DataFrame) -> None:
    """Append rows, keeping the existing column order (new columns go last). The file is
    replaced whole (:func:`dpkmeans.files.write_text`), never left half-written."""
    if path.exists():
        existing = pd.read_csv(path, nrows=0).columns.tolist()
        columns = existing + [c for c in rows.columns if c not in existing]
        if columns != existing:  # a new column: rewrite once with the wider header
            joined = pd.concat([read_results(path), exact_integers(rows)], ignore_index=True)
            write_csv(joined[columns], path, float_format=FLOAT_FORMAT)
            return
        text = path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text += "\n"
        write_text(path, text + rows.reindex(columns=existing).to_csv(
            header=False, index=False, float_format=FLOAT_FORMAT))
    else:
        write_csv(rows, path, float_format=FLOAT_FORMAT)


# --- CLI: python -m dpkmeans sweep FILE [--smoke] [--jobs N] -------------------------------
def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "sweep", help="run a papermill sweep from a YAML grid",
        description="Run every cell of a sweep file not yet in its results file. A relative "
        "`notebook` and data/results/ are taken from the folder above notebooks/sweeps/ for a "
        "sweep file there, otherwise from the sweep file's own folder. Ctrl-C keeps the rows "
        "of every finished cell; run the command again to continue.")
    parser.add_argument("file", help="notebooks/sweeps/NAME.yaml")
    parser.add_argument("--smoke", action="store_true", help="the small grid (CI)")
    parser.add_argument("--jobs", type=int, default=1, help="cells run at once (default 1)")
    parser.add_argument("--results", help="results CSV (default data/results/<experiment>.csv)")
    parser.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise SweepError(f"--jobs must be at least 1, got {args.jobs}")
    spec = load_spec(args.file, smoke=args.smoke)
    check_spec(spec)
    require_sweep_data([spec], f"`sweep {Path(args.file).name}`")
    pin_cell_environment()  # the cells run as in `make reproduce`: the committed results' BLAS
    results = Path(args.results) if args.results else None
    new = run_sweep(spec, jobs=args.jobs, results_path=results)
    print(f"{spec.experiment}: {len(expand(spec))} cells, {len(new)} new rows -> "
          f"{results or spec.results_path}")
    return 0
