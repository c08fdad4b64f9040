"""Wall-clock time of the whole colored-noise reproduction (issue 12: at most 5 minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/colored.yaml`` (1000 independent draws per point; one
cell per dataset: every algorithm at every (epsilon, delta), the dataset's SDP solved once)
through :mod:`benchmarks.sweep_timing`.

    python -m benchmarks.colored_reproduction            # full run, writes the JSON below
    python -m benchmarks.colored_reproduction --results data/results/colored.csv
                                                             # the same, keeping the results
    python -m benchmarks.colored_reproduction --smoke    # the CI grid, prints only

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "colored.yaml"
OUT = ROOT / "benchmarks" / "colored_reproduction.json"
TARGET_S = 5 * 60


def main(argv: list[str] | None = None) -> int:
    return timed_sweep(argv, spec_path=SPEC, out=OUT, target_s=TARGET_S,
                       description=__doc__.splitlines()[0], cell_keys=["dataset"],
                       cell_name=lambda c: f"all algorithms x (epsilon, delta): {c['dataset']}")


if __name__ == "__main__":
    raise SystemExit(main())
