"""Wall-clock time of the whole silhouette reproduction (issue 11: at most 10 minutes on 2 cores).

Runs every cell of ``notebooks/sweeps/silhouette.yaml`` (200 independent runs per point; one
cell per dataset: every algorithm at every epsilon) through :mod:`benchmarks.sweep_timing`.

    python -m benchmarks.silhouette_reproduction            # full run, writes the JSON below
    python -m benchmarks.silhouette_reproduction --results data/results/silhouette.csv
                                                             # the same, keeping the results
    python -m benchmarks.silhouette_reproduction --smoke    # the CI grid, prints only

This is a benchmark, not a test: nothing fails. Run it on a quiet machine.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sweep_timing import main as timed_sweep

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "notebooks" / "sweeps" / "silhouette.yaml"
OUT = ROOT / "benchmarks" / "silhouette_reproduction.json"
TARGET_S = 10 * 60


def main(argv: list[str] | None = None) -> int:
    return timed_sweep(argv, spec_path=SPEC, out=OUT, target_s=TARGET_S,
                       description=__doc__.splitlines()[0], cell_keys=["dataset"],
                       cell_name=lambda c: f"all algorithms x epsilons: {c['dataset']}")


if __name__ == "__main__":
    raise SystemExit(main())
