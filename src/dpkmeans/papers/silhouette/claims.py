"""The claims ledger of Zhang, Liu and Wang (2018), computed from committed results.

Claims re-tested (the text of the paper's Figs 4-7), each for the as-published and for the corrected method
against uniform DPLloyd (the paper's baseline [7] spends the same budget in every iteration):

1. at small epsilon (<= 0.5), a **higher F-measure** than uniform DPLloyd, on blood and gamma
   (``magic`` in the data registry);
2. at large epsilon (>= 1), uniform DPLloyd is **as good or better**, on blood and gamma;
3. **fewer iterations**, and so faster (every dataset, every epsilon);
4. the MapReduce **speed-up improves with data size** (Fig 7; ``benchmarks/dask_scaling.json``).

Points are compared with Welch's t test over the 200 independent runs of each point
(:func:`dpkmeans.study.claims.compare_means`) and the four verdicts of :func:`dpkmeans.study.claims.verdict`
("in all cases": every point must support the claim). Claim 2 is supported at a point when
DPLloyd is significantly better **or** the two are equivalent: the 95% interval of the
difference lies inside +-``EQUIVALENCE`` (a margin fixed before looking at the results); a
non-significant difference with a wide interval supports nothing. Claim 3 is judged on the
iterations; the time per run is reported beside it. Claim 4 supports a method when the
speed-up of 2 workers over 1 is significantly larger on the largest dataset than on the
smallest and never falls significantly from one size to the next.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy import stats

from dpkmeans.files import write_csv
from dpkmeans.study.claims import (
    LEVEL,
    VERDICTS,
    Comparison,
    combine,
    compare_means,
    tally,
    verdict,
)

__all__ = ["CLAIMS", "METHODS", "BASELINE", "EQUIVALENCE", "SMALL", "claims_ledger",
           "claims_summary", "speedup_claim", "write_claims"]

CLAIMS = {
    1: "higher F-measure than uniform DPLloyd at small ε (≤ 0.5), on blood and magic",
    2: "uniform DPLloyd as good or better at large ε (> 0.5), on blood and magic",
    3: "fewer iterations than uniform DPLloyd, so faster",
    4: "the MapReduce speed-up improves with data size",
}
#: The paper's method, twice.
METHODS = ("as_published", "corrected")
#: The uniform baseline of claims 1-3.
BASELINE = "dplloyd"
#: "Small" epsilon for claim 1; claim 2's "large" is everything above.
SMALL = 0.5
#: Claim 2's equivalence margin on the F-measure (fixed a priori).
EQUIVALENCE = 0.02
#: The datasets of claims 1 and 2 (Fig 4): blood and gamma (``magic`` in the registry).
FIGURE_4 = ("blood", "magic")


def _test(a: pd.Series, b: pd.Series, metric: str, higher_is_better: bool):
    """Welch's test of a against b on ``metric`` (a Comparison in which lower is better),
    and the 95% interval half-width of the difference a - b."""
    sign = -1.0 if higher_is_better else 1.0
    se_a, se_b = float(a[f"{metric}_se"]), float(b[f"{metric}_se"])
    if se_a == 0 and se_b == 0:  # both constant (e.g. DPLloyd's fixed T against a capped run)
        diff = sign * (float(a[f"{metric}_mean"]) - float(b[f"{metric}_mean"]))
        return Comparison(diff, 0.0 if diff != 0 else 1.0), 0.0
    cmp = compare_means(sign * a[f"{metric}_mean"], se_a, int(a["runs"]) - 1,
                        sign * b[f"{metric}_mean"], se_b, int(b["runs"]) - 1)
    var = se_a**2 + se_b**2
    df = var**2 / (se_a**4 / (int(a["runs"]) - 1) + se_b**4 / (int(b["runs"]) - 1))
    return cmp, float(stats.t.ppf(1 - LEVEL / 2, df) * np.sqrt(var))


def _pairs(results: pd.DataFrame, dataset: str, method: str, epsilons) -> list[tuple]:
    rows = results[results["dataset"] == dataset].set_index(["algorithm", "epsilon"])
    return [(eps, rows.loc[(method, eps)], rows.loc[(BASELINE, eps)]) for eps in epsilons
            if (method, eps) in rows.index and (BASELINE, eps) in rows.index]


def _claim_small(results, dataset, method) -> dict:
    eps = sorted(e for e in results["epsilon"].unique() if e <= SMALL)
    outcomes = [_test(m, b, "f", True)[0] for _, m, b in _pairs(results, dataset, method, eps)]
    held = sum(c.a_better for c in outcomes)
    opposite = sum(c.b_better for c in outcomes)
    n = len(outcomes)
    return {"verdict": verdict(held, opposite, n), "evidence":
            f"{method} F significantly higher at {held}/{n} points (ε ≤ {SMALL:g}), DPLloyd "
            f"higher at {opposite}/{n}, no difference at {n - held - opposite}/{n}"}


def _claim_large(results, dataset, method) -> dict:
    eps = sorted(e for e in results["epsilon"].unique() if e > SMALL)
    better = equivalent = opposite = 0
    for _, m, b in _pairs(results, dataset, method, eps):
        cmp, half = _test(b, m, "f", True)  # a = DPLloyd
        if cmp.a_better:
            better += 1
        elif cmp.b_better:
            opposite += 1
        elif abs(cmp.difference) + half <= EQUIVALENCE:
            equivalent += 1
    n = len(eps)
    return {"verdict": verdict(better + equivalent, opposite, n), "evidence":
            f"DPLloyd F significantly higher at {better}/{n} points (ε > {SMALL:g}), "
            f"equivalent within {EQUIVALENCE:g} at {equivalent}/{n}, {method} higher at "
            f"{opposite}/{n}, undecided at {n - better - equivalent - opposite}/{n}"}


def _claim_iterations(results, dataset, method) -> dict:
    eps = sorted(results["epsilon"].unique())
    pairs = _pairs(results, dataset, method, eps)
    outcomes = [_test(m, b, "iterations", False)[0] for _, m, b in pairs]
    held = sum(c.a_better for c in outcomes)
    opposite = sum(c.b_better for c in outcomes)
    n = len(outcomes)
    time_ratio = float(np.median([m["run_s"] / b["run_s"] for _, m, b in pairs]))
    iters = ", ".join(f"{m['iterations_mean']:.1f}" for _, m, _ in pairs)
    return {"verdict": verdict(held, opposite, n), "evidence":
            f"{method} ran fewer iterations at {held}/{n} points, more at {opposite}/{n} "
            f"(mean iterations {iters} against DPLloyd's {pairs[0][2]['iterations_mean']:.0f}); "
            f"time per run {time_ratio:.1f}x DPLloyd's (median over the points)"}


def speedup_claim(scaling: dict, method: str) -> dict:
    """Claim 4 for one method from the ``fig7_speedup`` part of ``dask_scaling.json``."""
    rows = sorted((r for r in scaling.values() if r["method"] == method),
                  key=lambda r: r["n"] * r["d"])
    if len(rows) < 2:
        raise ValueError(f"claim 4 needs speed-ups at two sizes or more for {method}")

    def cmp(a, b):  # is a's speed-up larger than b's? (lower is better: negate)
        ra, rb = np.array(a["speedup_per_round"]), np.array(b["speedup_per_round"])
        se = lambda r: float(r.std(ddof=1) / np.sqrt(r.size))  # noqa: E731
        return compare_means(-ra.mean(), se(ra), ra.size - 1, -rb.mean(), se(rb), rb.size - 1)

    end = cmp(rows[-1], rows[0])
    falls = [f"{lo['dataset']}->{hi['dataset']}" for lo, hi in zip(rows[:-1], rows[1:])
             if cmp(hi, lo).b_better]
    ok = end.a_better and not falls
    table = ", ".join(f"{r['dataset']} {r['speedup_mean']:.2f}" for r in rows)
    evidence = (f"speed-up of 2 workers over 1: {table}"
                + (f"; falls significantly at {', '.join(falls)}" if falls else ""))
    return {"verdict": verdict(int(ok), int(end.b_better), 1), "evidence": evidence}


def claims_ledger(results: pd.DataFrame, scaling: dict | None = None) -> pd.DataFrame:
    """One row per (claim, method, dataset): verdict and evidence. ``scaling`` is the
    ``fig7_speedup`` part of ``benchmarks/dask_scaling.json`` (claim 4; skipped if None)."""
    rows = []
    datasets = list(results["dataset"].unique())
    for method in METHODS:
        for dataset in FIGURE_4:
            if dataset in datasets:
                rows.append({"claim": 1, "method": method, "dataset": dataset,
                             **_claim_small(results, dataset, method)})
                rows.append({"claim": 2, "method": method, "dataset": dataset,
                             **_claim_large(results, dataset, method)})
        for dataset in datasets:
            rows.append({"claim": 3, "method": method, "dataset": dataset,
                         **_claim_iterations(results, dataset, method)})
        if scaling is not None:
            rows.append({"claim": 4, "method": method, "dataset": "synthetic (Fig 7 sizes)",
                         **speedup_claim(scaling, method)})
    ledger = pd.DataFrame(rows)
    ledger.insert(1, "text", ledger["claim"].map(CLAIMS))
    return ledger.sort_values(["claim", "method"], kind="stable", ignore_index=True)


def claims_summary(ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per (claim, method): the verdict over the datasets
    (:func:`dpkmeans.study.claims.combine`), their verdicts in words (``evidence``) and the
    count of each."""
    rows = []
    for (claim, method), group in ledger.groupby(["claim", "method"], sort=True):
        counts = group["verdict"].value_counts()
        rows.append({"claim": int(claim), "method": method, "text": CLAIMS[int(claim)],
                     "verdict": combine(group["verdict"]),
                     "evidence": tally(group["verdict"], "dataset"),
                     **{v: int(counts.get(v, 0)) for v in VERDICTS}})
    return pd.DataFrame(rows)


def write_claims(results_path, scaling_path, out_path) -> pd.DataFrame:
    """The ledger from a results CSV and the scaling benchmark's JSON, written as a CSV; the
    committed ``data/results/silhouette_claims.csv`` is made this way and checked by a test."""
    results = pd.read_csv(results_path)
    scaling = json.loads(open(scaling_path).read())["fig7_speedup"]
    ledger = claims_ledger(results, scaling)
    write_csv(ledger, out_path)
    return ledger


if __name__ == "__main__":  # python -m dpkmeans.papers.silhouette.claims [results] [json] [out]
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    args = sys.argv[1:] or [root / "data/results/silhouette.csv",
                            root / "benchmarks/dask_scaling.json",
                            root / "data/results/silhouette_claims.csv"]
    print(write_claims(*args)[["claim", "method", "dataset", "verdict"]].to_string())
