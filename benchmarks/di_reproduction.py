"""Wall-clock time of the whole differential-identifiability reproduction (issue 14: at most 10
minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/di.yaml`` (500 runs a point on magic, 1000 on heart, 200
gamma starts; one cell per case) through :mod:`benchmarks.sweep_timing`.

    python -m benchmarks.di_reproduction            # full run, writes the JSON below
    python -m benchmarks.di_reproduction --results data/results/di.csv
                                                      # the same, keeping the results
    python -m benchmarks.di_reproduction --smoke    # the CI grid, prints only

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "di.yaml"
OUT = ROOT / "benchmarks" / "di_reproduction.json"
TARGET_S = 10 * 60


def main(argv: list[str] | None = None) -> int:
    return timed_sweep(argv, spec_path=SPEC, out=OUT, target_s=TARGET_S,
                       description=__doc__.splitlines()[0], cell_keys=["case"],
                       cell_name=lambda c: f"case {c['case']}")


if __name__ == "__main__":
    raise SystemExit(main())
