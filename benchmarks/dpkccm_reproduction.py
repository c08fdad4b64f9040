"""Wall-clock time of the whole DP-KCCM reproduction (issue 6: at most 15 minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/dpkccm.yaml`` (20 x 50 runs per point) into a temporary
results file, two cells at a time with one BLAS thread per kernel, exactly as the README's
command does, and records the total wall time and each cell's time: the "epsilon" cell of a
dataset is its figure among figures 3-8, the "k" cell its figure among 9-14 (without the
point it shares with the epsilon figure), "ablations" the chapter's ablation table.

    python -m benchmarks.dpkccm_reproduction            # full run, writes the JSON below
    python -m benchmarks.dpkccm_reproduction --results data/results/dpkccm.csv
                                                        # the same, keeping the results (a
                                                        # fresh file: it must not exist)
    python -m benchmarks.dpkccm_reproduction --smoke    # the CI grid, prints only
    python -m benchmarks.dpkccm_reproduction --record data/results/dpkccm.csv --wall 1195 \
        --note "..."   # record a sweep that already ran (its wall time from its own log)

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "dpkccm.yaml"
OUT = ROOT / "benchmarks" / "dpkccm_reproduction.json"
TARGET_S = 15 * 60
FIGURES = {"epsilon": "NICV vs epsilon (figs 3-8)", "k": "NICV vs k (figs 9-14)",
           "ablations": "ablations"}


def main(argv: list[str] | None = None) -> int:
    return timed_sweep(argv, spec_path=SPEC, out=OUT, target_s=TARGET_S,
                       description=__doc__.splitlines()[0], cell_keys=["dataset", "axis"],
                       cell_name=lambda c: f"{FIGURES[c['axis']]}: {c['dataset']}")


if __name__ == "__main__":
    raise SystemExit(main())
