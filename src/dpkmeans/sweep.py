"""Parameter sweeps: expand a YAML grid, run each cell through a papermill notebook, append
tidy rows to ``data/results/<experiment>.csv`` (DESIGN.md section 5).

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

Cells already in the results file are skipped (resume). The cell seed is a hash of the base
seed and the cell's parameters, so adding a grid value never changes the other cells.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["SweepSpec", "load_spec", "expand", "cell_key", "cell_id", "cell_seed", "run_sweep",
           "run_cell", "run_cell_notebook", "completed_cells", "append_rows", "versions_string",
           "cell_environment", "cpu_info", "pin_cell_environment", "add_parser"]

#: Results keep 12 significant digits: enough for the spot checks, and half the file size.
FLOAT_FORMAT = "%.12g"

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

    @property
    def results_path(self) -> Path:
        root = self.source.parent.parent.parent if self.source else Path.cwd()
        return root / "data" / "results" / f"{self.experiment}.csv"


def load_spec(path: str | os.PathLike[str], *, smoke: bool = False) -> SweepSpec:
    """Read a sweep YAML file; with ``smoke`` apply its ``smoke`` overrides."""
    import yaml

    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no sweep file at {path}")
    raw = yaml.safe_load(path.read_text()) or {}
    missing = [key for key in ("experiment", "notebook", "seed", "grid") if key not in raw]
    if missing:
        raise ValueError(f"{path.name}: missing keys {missing}")
    grid = {k: list(v) if isinstance(v, list) else [v] for k, v in raw["grid"].items()}
    fixed = dict(raw.get("fixed") or {})
    if smoke:
        overrides = raw.get("smoke") or {}
        grid.update({k: list(v) if isinstance(v, list) else [v]
                     for k, v in (overrides.get("grid") or {}).items()})
        fixed.update(overrides.get("fixed") or {})
    cases = {str(k): dict(v) for k, v in (raw.get("cases") or {}).items()}
    unknown = [c for c in grid.get("case", []) if str(c) not in cases]
    if unknown:
        raise ValueError(f"{path.name}: grid cases {unknown} are not defined under `cases`")
    root = path.parent.parent.parent  # notebooks/sweeps/X.yaml -> repository root
    return SweepSpec(str(raw["experiment"]), root / raw["notebook"], int(raw["seed"]), grid,
                     fixed, cases, path)


def cell_key(params: dict[str, Any]) -> str:
    """A stable text key of a cell's parameters (sorted JSON)."""
    return json.dumps(params, sort_keys=True, default=str)


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


def run_cell_notebook(notebook: Path, params: dict[str, Any], workdir: Path) -> pd.DataFrame:
    """Execute the cell notebook with papermill and return the rows it wrote."""
    import papermill as pm

    out_csv = workdir / "rows.csv"
    pm.execute_notebook(str(notebook), str(workdir / "executed.ipynb"),
                        parameters={**params, "output_csv": str(out_csv)},
                        kernel_name="python3", cwd=str(notebook.parent), progress_bar=False)
    return pd.read_csv(out_csv)


def versions_string() -> str:
    """The package versions recorded in every row (``versions`` column)."""
    from .experiments import package_versions
    return ";".join(f"{k}={v}" for k, v in sorted(package_versions().items()))


def run_cell(spec: SweepSpec, params: dict[str, Any],
             runner: Callable[[Path, dict[str, Any], Path], pd.DataFrame] = run_cell_notebook,
             versions: str = "") -> pd.DataFrame:
    """One cell: its rows, with its parameters first, then the metrics, then the bookkeeping
    (experiment, cell id, ``cell_runtime_s``, versions)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rows = runner(spec.notebook, params, Path(tmp))
    for name, value in params.items():
        rows[name] = value
    rows["experiment"], rows["cell"] = spec.experiment, cell_id(params)
    rows["cell_runtime_s"], rows["versions"] = time.perf_counter() - start, versions
    first = ["experiment", *params]  # parameters first, then metrics, then bookkeeping
    return rows[first + [c for c in rows.columns if c not in first]]


def completed_cells(path: Path) -> set[str]:
    """The ids of the cells whose rows a results file already holds."""
    if not path.exists():
        return set()
    return set(pd.read_csv(path, usecols=["cell"])["cell"])


def run_sweep(
    spec: SweepSpec,
    *,
    jobs: int = 1,
    results_path: Path | None = None,
    runner: Callable[[Path, dict[str, Any], Path], pd.DataFrame] = run_cell_notebook,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every cell not yet in the results file; append its rows; return the new rows."""
    from tqdm.auto import tqdm

    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    # absolute: papermill changes the process's working directory while a cell runs, and the
    # other worker thread appends its rows meanwhile
    path = Path(results_path or spec.results_path).resolve()
    done = completed_cells(path)
    todo = [c for c in expand(spec) if cell_id(c) not in done]
    versions = versions_string()

    def one(params: dict[str, Any]) -> pd.DataFrame:
        return run_cell(spec, params, runner, versions)

    path.parent.mkdir(parents=True, exist_ok=True)
    new: list[pd.DataFrame] = []
    bar = tqdm(total=len(todo), desc=spec.experiment, disable=not progress)
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each cell runs in its own kernel
        for rows in pool.map(one, todo):
            append_rows(path, rows)
            new.append(rows)
            bar.update()
    bar.close()
    return pd.concat(new, ignore_index=True) if new else pd.DataFrame()


def append_rows(path: Path, rows: pd.DataFrame) -> None:
    """Append rows, keeping the existing column order (new columns go last)."""
    if path.exists():
        existing = pd.read_csv(path, nrows=0).columns.tolist()
        columns = existing + [c for c in rows.columns if c not in existing]
        if columns != existing:  # a new column: rewrite once with the wider header
            pd.concat([pd.read_csv(path), rows], ignore_index=True)[columns].to_csv(
                path, index=False, float_format=FLOAT_FORMAT)
            return
        rows.reindex(columns=existing).to_csv(path, mode="a", header=False, index=False,
                                              float_format=FLOAT_FORMAT)
    else:
        rows.to_csv(path, index=False, float_format=FLOAT_FORMAT)


# --- the cells' environment -------------------------------------------------------------------
def cpu_info() -> dict:
    """This machine's CPU from ``/proc/cpuinfo`` (its first processor): ``model`` (the model
    name), ``family`` and ``model_number``, and ``flags`` (a set); empty values off Linux."""
    info: dict = {"model": None, "family": None, "model_number": None, "flags": set()}
    keys = {"model name": "model", "cpu family": "family", "model": "model_number",
            "flags": "flags"}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor only
                key, _, value = line.partition(":")
                name = keys.get(key.strip())
                if name == "flags":
                    info["flags"] = set(value.split())
                elif name == "model":
                    info["model"] = value.strip()
                elif name:
                    info[name] = int(value)
    except OSError:  # pragma: no cover - not Linux
        pass
    return info


def cell_environment() -> dict[str, str]:
    """The environment the cells run with (their papermill kernels inherit it): one BLAS and
    OpenMP thread a cell (two cells share the two cores), and, on an x86-64 CPU with AVX2 and
    FMA, OpenBLAS's AVX2 ("Haswell") kernels whatever the CPU. OpenBLAS otherwise picks its
    kernels by the CPU it finds, and their rounding differs: on an AVX-512 machine the
    colored-noise chapter's CEDS covariance of Marketing (as published: the inverse of a nearly
    singular matrix) came out with a trace 1.83 times the one the AVX2 kernels give, and every
    CEDS number of that dataset with it. Pinned, the committed results reproduce on either."""
    env = {var: "1" for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    if (platform.machine().lower() in ("x86_64", "amd64")
            and {"avx2", "fma"} <= cpu_info()["flags"]):
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def pin_cell_environment(*, override: bool = False) -> dict[str, str]:
    """Put :func:`cell_environment` into ``os.environ`` before any cell starts (a variable the
    user set is kept unless ``override``); returns what the cells will see. The sweep and
    reproduce commands call it; the library functions leave the environment alone."""
    wanted = cell_environment()
    for var, value in wanted.items():
        if override:
            os.environ[var] = value
        else:
            os.environ.setdefault(var, value)
    return {var: os.environ[var] for var in wanted}


# --- CLI: python -m dpkmeans sweep FILE [--smoke] [--jobs N] -------------------------------
def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("sweep", help="run a papermill sweep from a YAML grid")
    parser.add_argument("file", help="notebooks/sweeps/NAME.yaml")
    parser.add_argument("--smoke", action="store_true", help="the small grid (CI)")
    parser.add_argument("--jobs", type=int, default=1, help="cells run at once (default 1)")
    parser.add_argument("--results", help="results CSV (default data/results/<experiment>.csv)")
    parser.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args: argparse.Namespace) -> int:
    pin_cell_environment()  # the cells run as in `make reproduce`: the committed results' BLAS
    spec = load_spec(args.file, smoke=args.smoke)
    results = Path(args.results) if args.results else None
    new = run_sweep(spec, jobs=args.jobs, results_path=results)
    print(f"{spec.experiment}: {len(expand(spec))} cells, {len(new)} new rows -> "
          f"{results or spec.results_path}")
    return 0
