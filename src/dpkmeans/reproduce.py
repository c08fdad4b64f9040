"""Reproduce the whole book: every paper-scale sweep, then each paper's claims ledger and audit
(``make reproduce``, or ``python -m dpkmeans reproduce``).

Every cell of every sweep runs in one pool of workers, longest first. A cell's rows go into
``_build/reproduce/<experiment>.csv`` as it finishes (resuming the cells already there, as any
sweep does); when an experiment's last cell is in, its rows, in the grid's order, replace
``data/results/<experiment>.csv`` and the experiment's ledgers are rebuilt from them.
``_build/reproduce/state.json`` records each finished experiment and its times, so an
interrupted reproduction continues where it stopped; ``--restart`` starts again from nothing.
Once the sweeps are in, the files derived from several experiments' results without a sweep
(:data:`DERIVED`) are rebuilt; ``--only NAME`` rebuilds one of them alone.
Ctrl-C stops the run within seconds and keeps the rows of every cell that finished. Before
anything starts, the data files of every sweep to run are checked (downloaded where allowed):
a missing one stops the command in one line that says how to get it.

``--scheduler ADDRESS`` sends the cells to the workers of a Dask distributed cluster instead
of local threads (:mod:`dpkmeans.study.cluster`); this process still writes every file, so the
run resumes and ends as a local one does, with the same results. The workers need the
repository at the same path (a shared file system), the same Python environment and the data
files; each checks them before its first cell.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from dpkmeans.errors import DPKMeansError
from dpkmeans.files import write_csv, write_text
from dpkmeans.papers.registry import records
from dpkmeans.study.cluster import cell_pool
from dpkmeans.study.sweep import (
    FLOAT_FORMAT,
    SweepError,
    SweepSpec,
    allow_cell_kernels,
    append_rows,
    cell_id,
    cell_tasks,
    check_spec,
    completed_cells,
    completed_parts,
    expand,
    load_spec,
    merge_parts,
    part_key,
    pin_cell_environment,
    read_results,
    require_sweep_data,
    run_cell,
    versions_string,
)
from dpkmeans.synthesis import recommend

__all__ = ["BOOK_EXPERIMENTS", "DERIVED", "EXPERIMENTS", "Derived", "Experiment",
           "ReproduceInterrupted", "add_parser", "all_experiments", "data_notebooks",
           "run_reproduce"]


class ReproduceInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_reproduce`, which has said what it kept and how to continue
    (the command line then says nothing more)."""


@dataclass(frozen=True)
class Experiment:
    """One sweep of the book, its chapter, and what rebuilds its ledgers from its results.

    ``paper`` is the key of the paper whose sweep it is ("" for the book's own): when a paper
    has several sweeps, its finisher runs once the last of them is in. ``needs_data``: the
    sweep's cell notebook reads a data file with its default parameters.
    """

    name: str
    chapter: str
    finish: Callable[[Path], None] | None = None
    paper: str = ""
    needs_data: bool = True

    def sweep(self, root: Path) -> Path:
        return root / "notebooks" / "sweeps" / f"{self.name}.yaml"


def _results(root: Path, name: str) -> Path:
    return root / "data" / "results" / name


#: The book's own sweeps, which belong to no paper: the auditing chapter's tightness table,
#: power study and gallery of real bugs, and the synthesis chapter's leaderboard, home-ground
#: benchmark and audit of the outside algorithms.
BOOK_EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("audit_tightness", "6", needs_data=False),
    Experiment("audit_power", "6", needs_data=False),
    Experiment("audit_gallery", "6", needs_data=False),
    Experiment("leaderboard", "12"),
    Experiment("home_ground", "12", needs_data=False),
    Experiment("outside_audit", "12", needs_data=False),
)


@dataclass(frozen=True)
class Derived:
    """A results file computed from other experiments' committed results, without a sweep:
    ``build(root)`` writes ``data/results/<name>.csv`` from the files of ``reads``. It runs at
    the end of a reproduction that ran everything or one of ``reads``, or alone when ``--only``
    names it."""

    name: str
    chapter: str
    reads: tuple[str, ...]
    build: Callable[[Path], None]


def _recommend_validation(root: Path) -> None:
    recommend.write_validation(root / "data" / "results")


#: The derived files: the synthesis chapter's held-out validation of its recommendation.
DERIVED: tuple[Derived, ...] = (
    Derived("recommend_validation", "12", recommend.SOURCES, _recommend_validation),
)


def all_experiments() -> tuple[Experiment, ...]:
    """Every sweep of the book in chapter order: each paper's, as its registry record lists
    them (with the paper's finisher), and the book's own (:data:`BOOK_EXPERIMENTS`)."""
    found = [Experiment(s.name, r.number, r.finisher, r.key, s.needs_data)
             for r in records() for s in r.sweeps]
    return tuple(sorted([*found, *BOOK_EXPERIMENTS], key=lambda e: int(e.chapter)))


def __getattr__(name: str) -> tuple[Experiment, ...]:
    """``EXPERIMENTS``: :func:`all_experiments` now (PEP 562), for the callers of the constant."""
    if name == "EXPERIMENTS":
        return all_experiments()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def data_notebooks(root: str | Path, chosen: Sequence[Experiment] | None = None) -> list[Path]:
    """The cell notebooks (relative to ``root``) of the sweeps that read a data file with their
    default parameters (``make test-notebooks`` checks their outputs only with the files)."""
    root = Path(root).resolve()
    out = []
    for experiment in all_experiments() if chosen is None else chosen:
        if experiment.needs_data:
            notebook = load_spec(experiment.sweep(root)).notebook.resolve()
            if notebook.relative_to(root) not in out:
                out.append(notebook.relative_to(root))
    return out


def _column_order(target: Path, rows: pd.DataFrame) -> list[str]:
    """The columns of the file being replaced, in its order, then any new ones: the partial
    file's order depends on which cell finished first, and a rerun should only change what its
    numbers change."""
    before = pd.read_csv(target, nrows=0).columns.tolist() if target.exists() else []
    return ([c for c in before if c in rows.columns]
            + [c for c in rows.columns if c not in before])


def _state(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"experiments": {}}


def _cell_seconds(rows: pd.DataFrame) -> float:
    """The time an experiment's cells took, from its rows (each cell's ``cell_runtime_s``, once
    per cell): the cells of an earlier, interrupted run count too."""
    if not len(rows):
        return 0.0
    return float(rows.groupby("cell")["cell_runtime_s"].first().sum())


@dataclass
class _Pending:
    """An experiment under way: its spec, its partial results file, its tasks left (a cell,
    or a part of a cell run in parts)."""

    experiment: Experiment
    spec: SweepSpec
    partial: Path
    order: dict[str, int]  # cell id -> position in the grid (the results file's order)
    left: int
    kept: set[tuple[str, int, int]] = field(default_factory=set)  # tasks in the partial file
    cell_seconds: float = 0.0


def _task_key(rows: pd.DataFrame) -> tuple[str, int, int]:
    """The task whose rows these are: cell id, part, parts (as
    :func:`dpkmeans.study.sweep.part_key` gives them; 0 of 1 for a whole cell)."""
    first = rows.iloc[0]
    return (str(first["cell"]), int(first["cell_part"]) if "cell_part" in rows else 0,
            int(first["cell_parts"]) if "cell_parts" in rows else 1)


def _previous_runtimes(root: Path, name: str) -> dict[str, float]:
    """Each cell's runtime in the committed results (used only to order the work)."""
    path = _results(root, f"{name}.csv")
    if not path.exists():
        return {}
    try:
        rows = pd.read_csv(path, usecols=["cell", "cell_runtime_s"])
    except ValueError:  # an older file without the runtimes
        return {}
    return rows.groupby("cell")["cell_runtime_s"].first().to_dict()


def run_reproduce(root: str | Path, *, jobs: int = 2, only: Sequence[str] | None = None,
                  restart: bool = False, experiments: Sequence[Experiment] | None = None,
                  runner=None, say: Callable[[str], None] = print,
                  progress: bool = True, derived: Sequence[Derived] | None = None,
                  scheduler: str | None = None) -> dict:
    """Run every experiment not yet finished (module docstring); returns the state, with each
    experiment's ``cell_seconds`` (the time its cells took), ``finished_after_s`` (since this
    run started), ``cells`` and finish time, and the run's ``wall_s``. ``experiments`` default
    to :func:`all_experiments`; ``runner`` replaces the papermill cell runner (tests).

    The cells of all the experiments share one pool of ``jobs`` workers, longest first (by
    their runtime in the committed results; new cells first): one slow cell no longer leaves a
    core idle at the end of its chapter. Each results file keeps its grid's order, and an
    experiment's ledgers are rebuilt as soon as its last cell is in. With ``scheduler`` (a Dask
    scheduler's address) the cells run on that cluster's workers instead, longest first by
    Dask priority, and ``jobs`` is unused (:class:`dpkmeans.study.cluster.ClusterCells`).

    Then the derived files (``derived``; default :data:`DERIVED` for the book's own
    experiments, none for ``experiments`` given) are rebuilt: all of them when ``only`` is
    None, else those ``only`` names or whose inputs it names; ``only`` may name a derived file
    alone, which rebuilds it from the committed results.
    """
    from tqdm.auto import tqdm

    if jobs < 1:
        raise SweepError(f"jobs must be >= 1, got {jobs}")
    root = Path(root).resolve()
    if derived is None:
        derived = DERIVED if experiments is None else ()
    if experiments is None:
        experiments = all_experiments()
    names = [e.name for e in experiments] + [d.name for d in derived]
    if only is not None and not [name for name in only if name]:
        raise DPKMeansError(f"`only` names no experiment; the book's are {names}")
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise DPKMeansError(f"unknown experiments {unknown}; the book's are {names}")
    chosen = [e for e in experiments if not only or e.name in only]
    work = root / "_build" / "reproduce"
    state_path = work / "state.json"
    if runner is None:  # every data file first: a missing one stops the run before it starts
        done_before = {} if restart else _state(state_path)["experiments"]
        command = "`reproduce" + (f" --only {','.join(only)}`" if only else "`")
        require_sweep_data([load_spec(e.sweep(root)) for e in chosen
                            if e.name not in done_before], command)
    if restart and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    state = _state(state_path)
    pending: dict[str, _Pending] = {}
    tasks: list[tuple[float, int, str, dict]] = []
    for index, experiment in enumerate(chosen, start=1):
        done = state["experiments"].get(experiment.name)
        head = f"[{index}/{len(chosen)}] {experiment.name} (chapter {experiment.chapter})"
        if done:
            say(f"{head}: done before")
            continue
        spec = load_spec(experiment.sweep(root))
        if runner is None:
            check_spec(spec)
        partial = work / f"{experiment.name}.csv"
        cells = expand(spec)
        finished, have = completed_cells(partial), completed_parts(partial)
        todo = [t for c in cells if cell_id(c) not in finished for t in cell_tasks(spec, c)
                if part_key(t) not in have]
        split = sum(len(cell_tasks(spec, c)) for c in cells)
        say(f"{head}: {len(cells)} cells" + (f" in {split} parts" if split > len(cells) else "")
            + (f", {len(todo)} to run" if have else ""))
        pending[experiment.name] = _Pending(experiment, spec, partial,
                                            {cell_id(c): i for i, c in enumerate(cells)},
                                            len(todo), set(have))
        before = _previous_runtimes(root, spec.experiment)
        tasks += [(before.get(cell_id(t), float("inf")) / part_key(t)[2], len(tasks),
                   experiment.name, t) for t in todo]
    tasks.sort(key=lambda t: (-t[0], t[1]))  # longest first (a part: its share); ties in order
    versions = versions_string()
    kwargs = {"runner": runner} if runner is not None else {}
    start = time.perf_counter()
    allow_cell_kernels()

    def complete(name: str) -> None:
        p = pending.pop(name)
        rows = read_results(p.partial) if p.partial.exists() else pd.DataFrame()
        # the grid's order, then part order, each part's rows in their own order (a stable
        # sort); a split cell's parts joined into its rows, its runtime their sum
        rows = merge_parts(rows, p.order)
        target = _results(root, f"{p.spec.experiment}.csv")
        write_csv(rows[_column_order(target, rows)], target, float_format=FLOAT_FORMAT)
        p.cell_seconds = _cell_seconds(rows)
        same_paper = [q for q in pending.values()
                      if p.experiment.paper and q.experiment.paper == p.experiment.paper]
        if p.experiment.finish is not None and not same_paper:  # after the paper's last sweep
            p.experiment.finish(root)
        elapsed = time.perf_counter() - start
        state["experiments"][name] = {
            "chapter": p.experiment.chapter, "cell_seconds": round(p.cell_seconds, 1),
            "finished_after_s": round(elapsed, 1), "cells": len(p.order),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_text(state_path, json.dumps(state, indent=1))
        p.partial.unlink(missing_ok=True)  # only now: stopped before, the next run redoes this
        say(f"{name} (chapter {p.experiment.chapter}): {p.cell_seconds:.0f} s of cells, done "
            f"{elapsed:.0f} s in -> {target.relative_to(root)}")

    def record(name: str, rows: pd.DataFrame) -> None:
        p = pending[name]
        key = _task_key(rows)
        if key in p.kept:
            return  # already kept (a stopped run records each finished task once)
        append_rows(p.partial, rows)
        p.kept.add(key)
        p.left -= 1

    for name in [n for n, p in pending.items() if p.left == 0]:  # resumed, nothing left
        complete(name)
    # threads here, each with its own warm kernel, or a Dask cluster's workers (study.cluster)
    pool = cell_pool(jobs, scheduler, [p.spec for p in pending.values()])
    bar = tqdm(total=len(tasks), desc="reproduce", disable=not progress)
    futures: dict = {}
    try:  # a Ctrl-C while the tasks are being sent is handled as any other
        for i, (_, _, name, params) in enumerate(tasks):  # longest first
            futures[pool.submit(run_cell, pending[name].spec, params, versions=versions,
                                priority=len(tasks) - i, **kwargs)] = name
        for future in pool.as_completed(futures):
            name = futures[future]
            rows = future.result()
            record(name, rows)
            bar.update()
            if pending[name].left == 0:
                complete(name)
    except BaseException as exc:  # Ctrl-C or a failed cell: keep what finished (resumable)
        interrupted = isinstance(exc, KeyboardInterrupt)
        finished = pool.settle(futures, interrupted=interrupted)
        for future in finished:  # those not yet in their partial file (or in the results)
            name, rows = futures[future], future.result()
            if (name in pending and rows["cell"].iloc[0]
                    not in completed_cells(pending[name].partial)):
                record(name, rows)
        bar.close()
        if interrupted:
            say(f"interrupted: the rows of the {len(finished)} cells finished in this run are "
                f"kept ({work.relative_to(root)}); run the command again to continue")
            raise ReproduceInterrupted from exc
        raise
    finally:
        pool.close()  # and the idle warm kernels: a cell still running keeps its kernel
    bar.close()
    for step in derived:
        if only and step.name not in only and not set(step.reads) & set(only):
            continue
        step.build(root)
        state.setdefault("derived", {})[step.name] = {
            "chapter": step.chapter,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_text(state_path, json.dumps(state, indent=1))
        say(f"{step.name} (chapter {step.chapter}): rebuilt from the results of "
            f"{', '.join(step.reads)} -> data/results/{step.name}.csv")
    state["wall_s"] = round(time.perf_counter() - start, 1)
    write_text(state_path, json.dumps(state, indent=1))
    say(f"reproduced {len(state['experiments'])} experiments; this run took "
        f"{state['wall_s']:.0f} s")
    return state


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    listing = "\n".join(
        [f"  {e.name:<18} chapter {e.chapter}" for e in all_experiments()]
        + [f"  {d.name:<18} chapter {d.chapter}, from the results of {', '.join(d.reads)}"
           for d in DERIVED])
    parser = subparsers.add_parser(
        "reproduce", help="run every sweep of the book, rebuild its results and ledgers "
                          "(resumable)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run every sweep of the book (notebooks/sweeps/NAME.yaml), replace\n"
                    "data/results/NAME.csv and rebuild the ledgers.",
        epilog=f"experiments (in chapter order):\n{listing}\n\n"
               "state: ROOT/_build/reproduce/ holds state.json (the finished experiments and "
               "their times)\nand the rows of the cells finished so far; a run resumes from "
               "it, --restart deletes it.\nCtrl-C stops within seconds and keeps every "
               "finished cell's rows.\n\n"
               "cluster: --scheduler tcp://HOST:8786 runs the cells on the workers of a Dask "
               "distributed\ncluster (`dask scheduler`, `dask worker ADDRESS`; the dask extra) "
               "instead of --jobs local\nthreads; this process writes every file, so the run "
               "resumes and gives the same results.\nEach worker needs the repository at the "
               "same path (a shared file system), the same\nPython environment and the data "
               "files ($DPKMEANS_DATA); it checks them before its first cell.")
    parser.add_argument("--jobs", type=int, help="cells run at once (default 2; not with "
                                                  "--scheduler)")
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated experiments or derived files, from the list "
                             "below (default: all)")
    parser.add_argument("--restart", action="store_true",
                        help="forget finished experiments (delete ROOT/_build/reproduce/)")
    parser.add_argument("--root", default=".", help="the book's repository (default: .)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the cells on the Dask distributed cluster whose scheduler is "
                             "at ADDRESS (see below)")
    parser.add_argument("--data-notebooks", action="store_true",
                        help="print the sweeps' cell notebooks that read a data file with their "
                             "default parameters, one a line, and exit (make test-notebooks)")
    parser.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    if not Path(args.root).is_dir():
        raise DPKMeansError(f"--root {args.root}: no such folder")
    if args.data_notebooks:
        print("\n".join(str(path) for path in data_notebooks(args.root)))
        return 0
    if args.jobs is not None and args.scheduler is not None:
        raise DPKMeansError("--jobs and --scheduler: with a cluster each worker runs as many "
                            "cells at once as it has threads (`dask worker --nthreads N`)")
    jobs = 2 if args.jobs is None else args.jobs
    if jobs < 1:
        raise SweepError(f"--jobs must be at least 1, got {jobs}")
    only = None
    if args.only is not None:
        only = [s.strip() for s in args.only.split(",")]
        if not all(only):
            raise DPKMeansError(f"--only {args.only!r} has an empty name; give comma-separated "
                                f"experiments from {[e.name for e in all_experiments()]}")
    pin_cell_environment()  # the cells' kernels inherit it (cell_environment)
    try:
        run_reproduce(args.root, jobs=jobs, only=only, restart=args.restart,
                      scheduler=args.scheduler)
    except ReproduceInterrupted:  # it has said what it kept and how to continue
        return 130
    return 0
