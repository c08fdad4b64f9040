"""The noise of a DP-Lloyd fit at one guarantee, (epsilon, delta) = (1, 1e-6), calibrated three
ways (book chapter 12, "Equal privacy"), and what each calibration costs.

For DPLloyd (Su et al. 2016; T = 7 given) and DPLloyd-Impr (Su et al. 2017; T by Su et al.'s
rule from the public N) at d = 2, 10 and 50, k = 3, the box [0, 1]^d, N = 10^5:

* ``pure``: the catalogue's pure epsilon-DP configuration at epsilon = 1 (Laplace noise, the
  schedule added up by basic composition), ``build_at(entry, inputs, 0.0)``;
* ``laplace_at``: the same configuration with its schedule scaled until the PLD composition of
  its releases reaches (1, 1e-6) (``build_at(..., 1e-6, form="laplace")``);
* ``twin``: the Gaussian twin, colored Gaussian noise on the joint (S_j, n_j) with its schedule
  scaled until the tight composition reaches (1, 1e-6) (``build_at(..., 1e-6)``).

For each, the per-coordinate standard deviation of the noise on the (centred) sums S_j, from
the planned calibrations (``dpkmeans.engine.planning.iteration_releases``; colored noise:
the whitened sd over the whitening factor): the largest over iterations, clusters and
coordinates, and the ratios to the pure fit's (the largest elementwise ratio). The time of a
calibration is that of ``build_at`` with the PLD caches of ``dpkmeans.privacy.tight`` cleared
before each call (a cold calibration), the median of the repeats, interleaved.

    python -m benchmarks.equal_privacy              # full run (~1 min), writes the JSON below
    python -m benchmarks.equal_privacy --quick      # one repeat; prints only
    python -m benchmarks.equal_privacy --out PATH   # write the JSON to PATH

Target (chapter 12): at d = 10 the twin of DPLloyd-Impr has a sum noise sd at most 0.4 of the
pure fit's. This is a benchmark, not a test: nothing fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.run import _load, finish_report, machine_info, measure
from dpkmeans.api.catalogue import FitInputs, build_at, choice
from dpkmeans.engine.equal_privacy import tight_epsilon
from dpkmeans.privacy import tight
from dpkmeans.synthesis.noise_table import sum_sd

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "equal_privacy.json"
ALGORITHMS = ("dplloyd", "dplloyd-impr")
DIMS = (2, 10, 50)
EPSILON, DELTA = 1.0, 1e-6
K, N_RECORDS, MAX_ITER = 3, 10**5, 7
TARGET = 0.4  # twin / pure at d = 10, DPLloyd-Impr
REPEATS = {"full": 3, "quick": 1}
FORMS = {"pure": (0.0, None), "laplace_at": (DELTA, "laplace"), "twin": (DELTA, "gaussian")}


def inputs(d: int, n_records: int = N_RECORDS, k: int = K) -> FitInputs:
    """The public inputs of every fit: [0, 1]^d, epsilon = 1, T = 7 where it is given."""
    return FitInputs(k, EPSILON, (np.zeros(d), np.ones(d)), max_iter=MAX_ITER,
                     n_records=n_records)




def _clear_caches() -> None:
    """Forget every composed privacy-loss distribution (a cold calibration)."""
    tight.clear_caches()


def bench_case(name: str, d: int, *, repeats: int = REPEATS["full"],
               n_records: int = N_RECORDS) -> dict:
    """One row: the three calibrations of ``name`` at dimension ``d``, their noise and time."""
    entry, fit = choice(name), inputs(d, n_records)
    configs = {form: build_at(entry, fit, delta, form=how)
               for form, (delta, how) in FORMS.items()}

    def timed(delta: float, how: str | None):
        def call() -> None:
            _clear_caches()
            build_at(entry, fit, delta, form=how)
        return call

    load = _load()
    times = measure({form: timed(*spec) for form, spec in FORMS.items()}, repeats, warmup=0)
    sds = {form: sum_sd(c) for form, c in configs.items()}
    pure = sds["pure"]
    ratios = {form: float((sds[form] / pure).max()) for form in ("laplace_at", "twin")}
    res = {
        "algorithm": name, "d": d, "k": K, "n_records": n_records,
        "T": {form: int(c.iterations) for form, c in configs.items()},
        "noise": {form: str(c.noise) for form, c in configs.items()},
        "sum_sd": {form: float(s.max()) for form, s in sds.items()},
        "ratio_to_pure": ratios,
        "schedule_factor_laplace_at": float(configs["laplace_at"].schedule[0]
                                            / configs["pure"].schedule[0]),
        "epsilon_at_delta": {form: float(tight_epsilon(c, DELTA))
                             for form, c in configs.items()},
        "pure_epsilon": float(configs["pure"].schedule.sum()),
        "measurements": times,
        "calibration_s": {form: m["median_s"] for form, m in times.items()},
        "load_average_before": load, "load_average_after": _load(),
    }
    if (name, d) == ("dplloyd-impr", 10):
        res["target"] = f"twin / pure <= {TARGET}"
        res["met"] = bool(ratios["twin"] <= TARGET)
    return res


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def table(results: list[dict]) -> str:
    head = ("| algorithm | d | T | sd pure | sd laplace_at | sd twin | laplace_at / pure "
            "| twin / pure | time pure | time laplace_at | time twin | target | met |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for res in results:
        sd, r, s = res["sum_sd"], res["ratio_to_pure"], res["calibration_s"]
        rows.append(
            f"| {res['algorithm']} | {res['d']} | {res['T']['pure']} "
            f"| {sd['pure']:.4g} | {sd['laplace_at']:.4g} | {sd['twin']:.4g} "
            f"| {r['laplace_at']:.3f} | {r['twin']:.3f} "
            f"| {_fmt(s['pure'])} | {_fmt(s['laplace_at'])} | {_fmt(s['twin'])} "
            f"| {res.get('target', '-')} "
            f"| {'-' if 'met' not in res else ('yes' if res['met'] else '**no**')} |")
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.equal_privacy",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one repeat, same sizes")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON output (default: benchmarks/equal_privacy.json for a full "
                             "run, none for --quick)")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    out = args.out if args.out is not None else (None if args.quick else OUT)
    started = time.perf_counter()
    import dp_accounting

    report = {"mode": mode, "machine": machine_info(), "load_average_before": _load(),
              "dp_accounting": getattr(dp_accounting, "__version__", "unknown"),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "setting": {"epsilon": EPSILON, "delta": DELTA, "k": K, "box": "[0, 1]^d",
                          "n_records": N_RECORDS, "max_iter": MAX_ITER},
              "method": f"median of {REPEATS[mode]} interleaved cold calls of build_at per "
                        "form (PLD caches cleared before each); noise sd from the planned "
                        "calibrations",
              "results": []}
    build_at(choice("dplloyd"), inputs(2), DELTA)  # imports dp-accounting's PLD code
    for name in ALGORITHMS:
        for d in DIMS:
            res = bench_case(name, d, repeats=REPEATS[mode])
            report["results"].append(res)
            print(f"{name}, d = {d}: twin / pure {res['ratio_to_pure']['twin']:.3f}, "
                  f"laplace_at / pure {res['ratio_to_pure']['laplace_at']:.3f}",
                  file=sys.stderr, flush=True)
    return finish_report(report, started, table, out)


if __name__ == "__main__":
    sys.exit(main())
