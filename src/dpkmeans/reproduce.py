"""Reproduce the whole book: every paper-scale sweep, then each paper's claims ledger and audit
(``make reproduce``, or ``python -m dpkmeans reproduce``).

Each sweep writes into ``_build/reproduce/<experiment>.csv`` (resuming the cells already
there, as any sweep does); when it completes, the file replaces ``data/results/<experiment>.csv``
and the experiment's ledgers are rebuilt from it. ``_build/reproduce/state.json`` records each
finished experiment and its time, so an interrupted reproduction continues where it stopped;
``--restart`` starts again from nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import DPKMeansError
from .sweep import expand, load_spec, run_sweep

__all__ = ["EXPERIMENTS", "Experiment", "add_parser", "run_reproduce"]


@dataclass(frozen=True)
class Experiment:
    """One sweep of the book, its chapter, and what rebuilds its ledgers from its results."""

    name: str
    chapter: str
    finish: Callable[[Path], None] | None = None

    def sweep(self, root: Path) -> Path:
        return root / "notebooks" / "sweeps" / f"{self.name}.yaml"


def _results(root: Path, name: str) -> Path:
    return root / "data" / "results" / name


def _dpkccm(root: Path) -> None:
    from .papers.dpkccm.claims import write_claims
    write_claims(_results(root, "dpkccm.csv"), _results(root, "dpkccm_claims.csv"))


def _silhouette(root: Path) -> None:
    from .papers.silhouette.claims import write_claims
    write_claims(_results(root, "silhouette.csv"), root / "benchmarks" / "dask_scaling.json",
                 _results(root, "silhouette_claims.csv"))


def _colored(root: Path) -> None:
    from .papers.colored.audit import write_audit
    from .papers.colored.claims import write_claims
    write_audit(_results(root, "colored_audit.csv"))
    write_claims(_results(root, "colored.csv"), _results(root, "colored_audit.csv"),
                 _results(root, "colored_claims.csv"))


def _apdp(root: Path) -> None:
    from .papers.apdp.claims import write_claims
    write_claims(_results(root, "apdp.csv"), _results(root, "apdp_claims.csv"))


def _di(root: Path) -> None:
    from .papers.di.audit import write_audit
    from .papers.di.claims import claims_table
    write_audit(_results(root, "di_audit.csv"))
    claims_table(pd.read_csv(_results(root, "di.csv"))).to_csv(_results(root, "di_claims.csv"),
                                                              index=False)


#: Every sweep of the book, in chapter order.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("dplloyd_baselines", "5"),
    Experiment("dpkccm", "7", _dpkccm),
    Experiment("silhouette", "8", _silhouette),
    Experiment("colored", "9", _colored),
    Experiment("apdp", "10", _apdp),
    Experiment("di", "11", _di),
    Experiment("leaderboard", "12"),
)


def _state(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"experiments": {}}


def run_reproduce(root: str | Path, *, jobs: int = 2, only: Sequence[str] | None = None,
                  restart: bool = False, experiments: Sequence[Experiment] = EXPERIMENTS,
                  runner=None, say: Callable[[str], None] = print) -> dict:
    """Run every experiment not yet finished (module docstring); returns the state, with each
    experiment's ``seconds``, ``cells`` and finish time. ``runner`` replaces the papermill
    cell runner (tests)."""
    root = Path(root).resolve()
    names = [e.name for e in experiments]
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise DPKMeansError(f"unknown experiments {unknown}; the book's are {names}")
    chosen = [e for e in experiments if not only or e.name in only]
    work = root / "_build" / "reproduce"
    if restart and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    state_path = work / "state.json"
    state = _state(state_path)
    for index, experiment in enumerate(chosen, start=1):
        done = state["experiments"].get(experiment.name)
        head = f"[{index}/{len(chosen)}] {experiment.name} (chapter {experiment.chapter})"
        if done:
            say(f"{head}: done before, {done['seconds']:.0f} s")
            continue
        spec = load_spec(experiment.sweep(root))
        partial = work / f"{experiment.name}.csv"
        say(f"{head}: {len(expand(spec))} cells" + (" (resuming)" if partial.exists() else ""))
        start = time.perf_counter()
        kwargs = {"runner": runner} if runner is not None else {}
        run_sweep(spec, jobs=jobs, results_path=partial, **kwargs)
        target = _results(root, f"{spec.experiment}.csv")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(partial), target)
        if experiment.finish is not None:
            experiment.finish(root)
        # this run only: the earlier cells of a resumed sweep are not counted
        seconds = time.perf_counter() - start
        state["experiments"][experiment.name] = {
            "chapter": experiment.chapter, "seconds": seconds, "cells": len(expand(spec)),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        state_path.write_text(json.dumps(state, indent=1))
        say(f"{head}: {seconds:.0f} s -> {target.relative_to(root)}")
    total = sum(e["seconds"] for e in state["experiments"].values())
    say(f"reproduced {len(state['experiments'])} experiments in {total:.0f} s of sweep time")
    return state


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("reproduce", help="run every sweep of the book, rebuild its "
                                                     "results and ledgers (resumable)")
    parser.add_argument("--jobs", type=int, default=2, help="cells run at once (default 2)")
    parser.add_argument("--only", help="comma-separated experiments (default: all)")
    parser.add_argument("--restart", action="store_true", help="forget finished experiments")
    parser.add_argument("--root", default=".", help="the book's repository (default: .)")
    parser.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    run_reproduce(args.root, jobs=args.jobs, only=only, restart=args.restart)
    return 0
