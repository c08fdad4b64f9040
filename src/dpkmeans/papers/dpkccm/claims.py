"""The claims ledger of DP-KCCM (Ni et al. 2021), computed from the committed sweep results.

Claims re-tested (the paper's section 4.2; lower NICV is better):

1. ``allocation_k`` is worse than ``average_k`` in all cases;
2. ``average_nk`` is better than ``average_k`` in nearly all cases;
3. ``allocation_nk`` is significantly better than ``average_nk`` in all cases;
4. all variants improve with epsilon;
5. dimensionality has no obvious effect.

"Cases" are the points of figures 3-14 for a dataset: the epsilon grid at the paper's k and
the k grid at the paper's fixed epsilon (12 distinct points; they share one). Claims 1-3 are
judged point by point with :func:`dpkmeans.study.claims.compare_means` and the four verdicts of
:func:`dpkmeans.study.claims.verdict`; "nearly all" needs 80% of the points. Claim 4 supports a
variant when its NICV at the largest epsilon is significantly below that at the smallest and
never rises significantly between neighbouring epsilons, and opposes it when the largest
epsilon is significantly *worse* than the smallest; the dataset verdict counts the four
variants. Claim 5 is judged across datasets: it holds if every other claim gets the same
verdict on all six datasets, is refuted if some claim's verdict is uniform within the
low-dimensional (d <= 10) and within the high-dimensional datasets but differs between them,
and is inconclusive otherwise (the verdicts vary, but not with the dimension in a way that six
datasets could show). Only private rows (``is_private``) are read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkmeans.files import write_csv
from dpkmeans.papers.dpkccm.study import EPSILONS, KS, PAPER_SETTINGS
from dpkmeans.papers.dpkccm.variants import VARIANTS
from dpkmeans.study.claims import VERDICTS, combine, compare_means, tally, verdict

__all__ = [
    "CLAIMS",
    "main_points",
    "pairwise",
    "head_to_head",
    "claims_ledger",
    "claims_summary",
    "write_claims",
    "LOW_DIMENSIONAL",
]

CLAIMS = {
    1: "allocation_k is worse than average_k (all cases)",
    2: "average_nk is better than average_k (nearly all cases)",
    3: "allocation_nk is significantly better than average_nk (all cases)",
    4: "all variants improve with epsilon",
    5: "dimensionality has no obvious effect",
}
#: (better, worse, required share) of the pairwise claims.
_PAIRWISE = {1: ("average_k", "allocation_k", 1.0), 2: ("average_nk", "average_k", 0.8),
             3: ("allocation_nk", "average_nk", 1.0)}
#: Datasets with d <= 10 (claim 5 splits the six datasets here).
LOW_DIMENSIONAL = 10


def main_points(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of figures 3-14 (public bounds, the paper's schedules and n = 3), one per
    (dataset, algorithm, k, epsilon)."""
    private = results["is_private"].astype(bool) if "is_private" in results else \
        results["bounds"] == "public"
    main = results[(results["axis"].isin(["epsilon", "k"])) & private
                   & (results["bounds"] == "public") & (results["schedule"] == "paper")]
    merged = main["algorithm"].str.endswith("_nk")
    main = main[(merged & (main["n"] == 3)) | (~merged & (main["n"] == 1))]
    keep = []
    for dataset, (k0, eps0) in PAPER_SETTINGS.items():
        rows = main[main["dataset"] == dataset]
        on_grid = ((rows["k"] == k0) & rows["epsilon"].isin(EPSILONS)) | (
            np.isclose(rows["epsilon"], eps0) & rows["k"].isin(KS))
        keep.append(rows[on_grid])
    out = pd.concat(keep, ignore_index=True)
    key = ["dataset", "algorithm", "k", "epsilon"]
    if out.duplicated(key).any():
        raise ValueError("results hold a point twice; drop duplicate cells first")
    return out


def _compare(ra: pd.Series, rb: pd.Series, metric: str):
    return compare_means(ra[f"{metric}_mean"], ra[f"{metric}_se"], int(ra["inits"]) - 1,
                         rb[f"{metric}_mean"], rb[f"{metric}_se"], int(rb["inits"]) - 1)


def pairwise(points: pd.DataFrame, dataset: str, a: str, b: str,
             metric: str = "nicv") -> pd.DataFrame:
    """Per (k, epsilon) point of ``dataset``: mean of a minus mean of b, the p-value and the
    outcome ("a better", "b better" or "no difference")."""
    rows = points[points["dataset"] == dataset].set_index(["k", "epsilon"])
    rows_a, rows_b = rows[rows["algorithm"] == a], rows[rows["algorithm"] == b]
    out = []
    for k, eps in rows_a.index.intersection(rows_b.index):
        cmp = _compare(rows_a.loc[(k, eps)], rows_b.loc[(k, eps)], metric)
        outcome = "a better" if cmp.a_better else "b better" if cmp.b_better else "no difference"
        out.append({"k": k, "epsilon": eps, "difference": cmp.difference,
                    "p_value": cmp.p_value, "outcome": outcome})
    return pd.DataFrame(out)


def head_to_head(points: pd.DataFrame, dataset: str, a: str, b: str,
                 metric: str = "nicv") -> dict[str, int]:
    """How many points of ``dataset`` a wins, b wins, or neither (see :func:`pairwise`)."""
    counts = pairwise(points, dataset, a, b, metric)["outcome"].value_counts()
    return {outcome: int(counts.get(outcome, 0))
            for outcome in ("a better", "b better", "no difference")}


def _pairwise_claim(points: pd.DataFrame, dataset: str, claim: int, metric: str) -> dict:
    better, worse, required = _PAIRWISE[claim]
    counts = head_to_head(points, dataset, better, worse, metric)
    held, opposite = counts["a better"], counts["b better"]
    n = sum(counts.values())
    evidence = (f"{better} significantly better at {held}/{n} points, {worse} better at "
                f"{opposite}/{n}, no difference at {n - held - opposite}/{n}")
    return {"verdict": verdict(held, opposite, n, required), "evidence": evidence}


def _improves_with_epsilon(points: pd.DataFrame, dataset: str, metric: str) -> dict:
    k0, _ = PAPER_SETTINGS[dataset]
    rows = points[(points["dataset"] == dataset) & (points["k"] == k0)]
    good, worse, notes = 0, 0, []
    for variant in VARIANTS:
        curve = rows[rows["algorithm"] == variant].sort_values("epsilon").reset_index(drop=True)
        end = _compare(curve.iloc[-1], curve.iloc[0], metric)
        rises = [f"{lo['epsilon']:g}->{hi['epsilon']:g}"
                 for (_, lo), (_, hi) in zip(curve.iloc[:-1].iterrows(), curve.iloc[1:].iterrows())
                 if _compare(hi, lo, metric).b_better]
        ok = end.a_better and not rises
        good += ok
        worse += end.b_better
        if not ok:
            why = ("significantly worse at the largest epsilon than at the smallest"
                   if end.b_better else
                   "no significant gain from the smallest to the largest epsilon"
                   if not end.a_better else f"significant rise at {', '.join(rises)}")
            notes.append(f"{variant}: {why}")
    evidence = f"{good}/{len(VARIANTS)} variants improve" + (f" ({'; '.join(notes)})" if notes else "")
    return {"verdict": verdict(good, worse, len(VARIANTS), 1.0), "evidence": evidence}


def claims_ledger(results: pd.DataFrame, metric: str = "nicv") -> pd.DataFrame:
    """One row per (claim, dataset): claim number and text, dataset, d, verdict, evidence.

    ``metric`` is ``"nicv"`` (squared, the primary metric) or ``"nicv_unsquared"`` (the
    paper's eq. 5 as printed).
    """
    if metric not in ("nicv", "nicv_unsquared"):
        raise ValueError(f"metric must be 'nicv' or 'nicv_unsquared', got {metric!r}")
    points = main_points(results)
    datasets = [d for d in PAPER_SETTINGS if d in set(points["dataset"])]
    dims = {d: int(points.loc[points["dataset"] == d, "d"].iloc[0]) for d in datasets}
    rows = []
    for dataset in datasets:
        for claim in (1, 2, 3):
            rows.append({"claim": claim, "dataset": dataset,
                         **_pairwise_claim(points, dataset, claim, metric)})
        rows.append({"claim": 4, "dataset": dataset,
                     **_improves_with_epsilon(points, dataset, metric)})
    ledger = pd.DataFrame(rows)
    rows5 = _dimension_claim(ledger, dims)
    ledger = pd.concat([ledger, pd.DataFrame(rows5)], ignore_index=True)
    ledger.insert(1, "text", ledger["claim"].map(CLAIMS))
    ledger.insert(3, "d", ledger["dataset"].map(dims))
    return ledger.sort_values(["claim", "d", "dataset"], ignore_index=True)


def _dimension_claim(ledger: pd.DataFrame, dims: dict[str, int]) -> list[dict]:
    """Claim 5 (see the module docstring); the same verdict is reported for every dataset."""
    low = {d for d, dim in dims.items() if dim <= LOW_DIMENSIONAL}
    uniform, split, patterns = 0, [], []
    for claim, group in ledger.groupby("claim"):
        by = dict(zip(group["dataset"], group["verdict"]))
        ordered = sorted(by, key=lambda d: (dims[d], d))
        patterns.append(f"claim {claim}: " + ", ".join(f"{d} (d={dims[d]}) {by[d]}"
                                                       for d in ordered))
        if len(set(by.values())) == 1:
            uniform += 1
            continue
        lo, hi = {by[d] for d in by if d in low}, {by[d] for d in by if d not in low}
        if len(lo) == 1 and len(hi) == 1 and lo != hi:
            split.append(int(claim))
    n = ledger["claim"].nunique()
    holds, refuted, inconclusive, _ = VERDICTS
    if uniform == n:
        result = holds
    elif split:
        result = refuted
    else:
        result = inconclusive
    evidence = (f"{uniform}/{n} claims get one verdict on every dataset"
                + (f"; claims {split} split low (d <= {LOW_DIMENSIONAL}) from high dimension"
                   if split else "") + ". " + "; ".join(patterns))
    return [{"claim": 5, "dataset": d, "verdict": result, "evidence": evidence} for d in dims]


def claims_summary(ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: its verdict over the datasets (:func:`dpkmeans.study.claims.combine`),
    the datasets' verdicts in words (``evidence``, :func:`dpkmeans.study.claims.tally`) and
    how many datasets gave each verdict."""
    rows = []
    for claim, group in ledger.groupby("claim", sort=True):
        counts = group["verdict"].value_counts()
        rows.append({"claim": int(claim), "text": CLAIMS[int(claim)],
                     "verdict": combine(group["verdict"]),
                     "evidence": tally(group["verdict"], "dataset"),
                     **{v: int(counts.get(v, 0)) for v in VERDICTS}})
    return pd.DataFrame(rows)


def write_claims(results_path, out_path) -> pd.DataFrame:
    """Compute the ledger (both metrics) from a results CSV and write it as a CSV; the
    committed ``data/results/dpkccm_claims.csv`` is made this way and checked by a test."""
    results = pd.read_csv(results_path)
    ledger = pd.concat([claims_ledger(results, metric=m).assign(metric=m)
                        for m in ("nicv", "nicv_unsquared")], ignore_index=True)
    write_csv(ledger, out_path)
    return ledger


if __name__ == "__main__":  # python -m dpkmeans.papers.dpkccm.claims [results.csv] [claims.csv]
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    args = sys.argv[1:] or [root / "data/results/dpkccm.csv", root / "data/results/dpkccm_claims.csv"]
    print(write_claims(*args).groupby(["metric", "verdict"]).size().to_string())
