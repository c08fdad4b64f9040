"""Wall-clock time of one paper's whole reproduction sweep, as the README's command runs it.

``python -m benchmarks.reproduction KEY`` runs every cell of the paper's sweep
(``notebooks/sweeps/<sweep>.yaml``) into a temporary results file, two cells at a time with one
BLAS thread per kernel, and writes the total wall time and each cell's time to
``benchmarks/KEY_reproduction.json``. The papers, their sweeps, their targets and the names of
their cells are the registry's (each paper's ``RECORD``, :mod:`dpkmeans.papers.registry`)::

    python -m benchmarks.reproduction dpkccm            # full run, writes the JSON
    python -m benchmarks.reproduction dpkccm --results data/results/dpkccm.csv
                                                        # the same, keeping the results (a
                                                        # fresh file: it must not exist)
    python -m benchmarks.reproduction dpkccm --smoke    # the CI grid, prints only
    python -m benchmarks.reproduction dpkccm --record data/results/dpkccm.csv --wall 1195 \\
        --note "..."   # record a sweep that already ran (its wall time from its own log)

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep
from dpkmeans.papers.registry import PaperRecord, Sweep, records

ROOT = Path(__file__).resolve().parent.parent


def timed(record: PaperRecord) -> Sweep | None:
    """The paper's timed sweep (the one with a target time), or None."""
    sweeps = [s for s in record.sweeps if s.target_s is not None]
    if len(sweeps) > 1:
        raise ValueError(f"paper {record.key!r} has several timed sweeps "
                         f"{[s.name for s in sweeps]}; the benchmark times one")
    return sweeps[0] if sweeps else None


def output(record: PaperRecord) -> Path:
    """Where the benchmark of ``record`` writes its result."""
    return ROOT / "benchmarks" / f"{record.key}_reproduction.json"


def run(record: PaperRecord, argv: Sequence[str] | None = None) -> int:
    """Time the paper's sweep; ``argv`` are the timing's own options (``--smoke``, ...)."""
    sweep = timed(record)
    if sweep is None:
        raise ValueError(f"paper {record.key!r} has no timed sweep")
    minutes = f"{sweep.target_s / 60:g}"
    return timed_sweep(
        list(argv or []), spec_path=ROOT / "notebooks" / "sweeps" / f"{sweep.name}.yaml",
        out=output(record), target_s=sweep.target_s,
        description=f"Wall-clock time of the whole {record.method} reproduction "
                    f"({record.cite}; at most {minutes} minutes on 2 cores).",
        cell_keys=list(sweep.cell_keys),
        cell_name=lambda cell: sweep.label(cell))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    papers = [r for r in records() if timed(r) is not None]
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reproduction",
        description=__doc__.splitlines()[0],
        epilog="Every other option is the timing's: --smoke, --jobs, --results, --record, "
               "--wall, --note (python -m benchmarks.reproduction KEY --help).")
    parser.add_argument("paper", choices=[r.key for r in papers],
                        help="the paper's key (its registry record)")
    if argv and argv[0] in {r.key for r in papers}:  # KEY --help: the timing's own options
        return run(next(r for r in papers if r.key == argv[0]), argv[1:])
    parser.parse_args(argv[:1])  # names the papers, or prints the help
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
