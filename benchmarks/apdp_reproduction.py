"""Wall-clock time of the whole APDP and budget-schedules reproduction (issue 13: at most 10
minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/apdp.yaml`` (20 starts x 50 runs = 1000 runs per point;
one cell per case: every algorithm at every epsilon) through :mod:`benchmarks.sweep_timing`.

    python -m benchmarks.apdp_reproduction            # full run, writes the JSON below
    python -m benchmarks.apdp_reproduction --results data/results/apdp.csv
                                                      # the same, keeping the results
    python -m benchmarks.apdp_reproduction --smoke    # the CI grid, prints only

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "apdp.yaml"
OUT = ROOT / "benchmarks" / "apdp_reproduction.json"
TARGET_S = 10 * 60


def main(argv: list[str] | None = None) -> int:
    return timed_sweep(argv, spec_path=SPEC, out=OUT, target_s=TARGET_S,
                       description=__doc__.splitlines()[0], cell_keys=["case"],
                       cell_name=lambda c: f"all algorithms x epsilons: {c['case']}")


if __name__ == "__main__":
    raise SystemExit(main())
