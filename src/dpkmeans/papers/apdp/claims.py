"""The claims ledger of the APDPk-means paper and the schedules' ranking, computed from the
committed results (``data/results/apdp.csv``).

The study notes that summarise the paper make three claims (the paper's rationale for the
progression), each re-tested for the as-published and for the corrected method:

1. the decreasing AP **converges faster in early iterations**: after iterations 1-3, its NICV
   is lower than uniform's (the curves in the scaling the run saw);
2. the AP **beats uniform, dichotomy and series-sum** (final squared NICV; one test per
   comparator, combined into the claim's verdict by :func:`dpkmeans.study.claims.combine`);
3. **the smaller epsilon, the flatter the AP**, (a) as a property of the schedules: the ratio
   of the first budget to the last grows with epsilon between consecutive AP points of a case;
   (b) and whether flatness helps: where the AP is flattest (each case's smallest epsilon on the
   AP branch) it beats the decreasing schedules whose shape does not flatten (dichotomy and
   series-sum).

Claims 1, 2 and 3b are about the progression, so they are judged only at points where the
progression ran (branch "ap", or "su-ap" corrected); elsewhere the AP *is* uniform (the
published fallback, or Su's T = 2) and a comparison would test nothing. The branch counts are
part of the evidence. Points are compared with Welch's t test on the summaries
(:func:`dpkmeans.study.claims.compare_means`; degrees of freedom: starts - 1 for the corrected
family, runs - 1 for the published one, whose starts are independent), with the four verdicts
of :func:`dpkmeans.study.claims.verdict` ("in all cases").

The ranking orders the private schedules at every (case, epsilon) by mean NICV with its 95%
interval, and marks those not significantly worse than the best (:func:`ranking`);
:func:`recommendations` counts, per regime of epsilon / epsilon_m, how often each schedule is
among the best.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dpkmeans.files import write_csv
from dpkmeans.papers.apdp.study import CASES, CORRECTED, OTHERS, PUBLISHED
from dpkmeans.papers.apdp.variants import plan
from dpkmeans.study.claims import VERDICTS, combine, compare_means, tally, verdict

__all__ = ["CLAIMS", "METHODS", "COMPARATORS", "EARLY", "AP_BRANCHES", "claims_ledger",
           "claims_summary", "branch_counts", "flatness", "ranking", "recommendations",
           "write_claims"]

CLAIMS = {
    "1": "the AP converges faster than uniform in early iterations (NICV after iterations 1-3)",
    "2": "the AP beats uniform, dichotomy and series-sum (final NICV)",
    "3a": "the smaller epsilon, the flatter the AP (first / last budget)",
    "3b": "where the AP is flattest, it beats the decreasing schedules that do not flatten",
}
#: The method twice: its family in the results and the names of its four schedules.
METHODS = {"as_published": dict(zip(("ap", "uniform", "dichotomy", "series-sum"), PUBLISHED)),
           "corrected": dict(zip(("ap", "uniform", "dichotomy", "series-sum"), CORRECTED))}
COMPARATORS = ("uniform", "dichotomy", "series-sum")
#: The early iterations of claim 1.
EARLY = (1, 2, 3)
#: Branches on which the progression ran.
AP_BRANCHES = ("ap", "su-ap")
#: Ranked: the private schedules.
RANKED = CORRECTED + OTHERS


def _df(row: pd.Series) -> int:
    """Degrees of freedom: starts - 1, or replicas - 1 for independent runs."""
    return int(row["groups"] if row["groups"] > 1 else row["replicas"]) - 1


def _compare(a_mean, a_se, a_row, b_mean, b_se, b_row):
    if a_se == 0 and b_se == 0:
        return None
    return compare_means(float(a_mean), float(a_se), _df(a_row), float(b_mean), float(b_se),
                         _df(b_row))


def _indexed(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["family"] != "reference"].set_index(["case", "algorithm", "epsilon"])


def _ap_points(results: pd.DataFrame, method: str) -> list[tuple[str, float]]:
    ap = METHODS[method]["ap"]
    rows = results[(results["algorithm"] == ap) & results["branch"].isin(AP_BRANCHES)]
    return sorted(zip(rows["case"], rows["epsilon"]))


def _tally(outcomes) -> tuple[int, int, int]:
    outcomes = [c for c in outcomes if c is not None]
    return (sum(c.a_better for c in outcomes), sum(c.b_better for c in outcomes),
            len(outcomes))


def _claim_early(results: pd.DataFrame, method: str) -> dict:
    rows, names = _indexed(results), METHODS[method]
    points = _ap_points(results, method)
    outcomes = []
    for case, eps in points:
        a, b = rows.loc[(case, names["ap"], eps)], rows.loc[(case, names["uniform"], eps)]
        am, ase = json.loads(a["curve_nicv_mean"]), json.loads(a["curve_nicv_se"])
        bm, bse = json.loads(b["curve_nicv_mean"]), json.loads(b["curve_nicv_se"])
        outcomes += [_compare(am[t], ase[t], a, bm[t], bse[t], b)
                     for t in EARLY if t < min(len(am), len(bm))]
    return _verdict(outcomes, "AP's NICV lower after iteration 1, 2 or 3", "uniform's lower",
                    len(points))


def _verdict(outcomes, better: str, worse: str, points: int) -> dict:
    held, opposite, n = _tally(outcomes)
    if n == 0:
        return {"verdict": "inconclusive", "points": points,
                "evidence": "no point where the progression ran: nothing to compare"}
    return {"verdict": verdict(held, opposite, n), "points": points,
            "evidence": f"{better} at {held}/{n} comparisons, {worse} at {opposite}/{n}, no "
                        f"significant difference at {n - held - opposite}/{n} "
                        f"({points} AP points)"}


def _final(rows, case, eps, a, b):
    ra, rb = rows.loc[(case, a, eps)], rows.loc[(case, b, eps)]
    return _compare(ra["nicv_mean"], ra["nicv_se"], ra, rb["nicv_mean"], rb["nicv_se"], rb)


def _claim_beats(results: pd.DataFrame, method: str, comparator: str) -> dict:
    rows, names = _indexed(results), METHODS[method]
    points = _ap_points(results, method)
    outcomes = [_final(rows, c, e, names["ap"], names[comparator]) for c, e in points]
    return _verdict(outcomes, f"AP's final NICV lower than {comparator}'s",
                    f"{comparator}'s lower", len(points))


def flatness(results: pd.DataFrame, method: str) -> pd.DataFrame:
    """The AP's first / last budget at every AP point of the method, from its schedule."""
    out = []
    for case, eps in _ap_points(results, method):
        row = results[(results["case"] == case) & (results["epsilon"] == eps)
                      & (results["algorithm"] == METHODS[method]["ap"])].iloc[0]
        p = plan(eps, int(row["n_records"]), CASES[case][1], int(row["d"]),
                 corrected=method == "corrected")
        out.append({"case": case, "epsilon": eps, "branch": p.branch, "T": p.iterations,
                    "first_over_last": float(p.schedule[0] / p.schedule[-1])})
    return pd.DataFrame(out, columns=["case", "epsilon", "branch", "T", "first_over_last"])


def _claim_flatter(results: pd.DataFrame, method: str) -> dict:
    table = flatness(results, method)
    steeper = flatter = n = 0
    for _, group in table.groupby("case"):
        ratios = group.sort_values("epsilon")["first_over_last"].to_numpy()
        steps = np.diff(ratios)
        steeper += int((steps > 1e-12).sum())
        flatter += int((steps < -1e-12).sum())
        n += steps.size
    if n == 0:
        return {"verdict": "inconclusive", "points": len(table),
                "evidence": "fewer than two AP points in every case: no trend to read"}
    return {"verdict": verdict(steeper, flatter, n), "points": len(table),
            "evidence": f"first / last budget grows with epsilon at {steeper}/{n} consecutive "
                        f"pairs, shrinks at {flatter}/{n} (ratios "
                        f"{table['first_over_last'].min():.2f} to "
                        f"{table['first_over_last'].max():.2f})"}


def _claim_flat_helps(results: pd.DataFrame, method: str) -> dict:
    rows, names = _indexed(results), METHODS[method]
    points = _ap_points(results, method)
    flattest = {}
    for case, eps in points:
        flattest[case] = min(eps, flattest.get(case, np.inf))
    outcomes = [_final(rows, c, e, names["ap"], names[s])
                for c, e in flattest.items() for s in ("dichotomy", "series-sum")]
    return _verdict(outcomes, "AP's NICV lower than dichotomy's or series-sum's",
                    "theirs lower", len(flattest))


def claims_ledger(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (claim, method[, comparator]): verdict, AP points and evidence."""
    rows = []
    for method in METHODS:
        rows.append({"claim": "1", "method": method, "comparator": "uniform",
                     **_claim_early(results, method)})
        rows += [{"claim": "2", "method": method, "comparator": c,
                  **_claim_beats(results, method, c)} for c in COMPARATORS]
        rows.append({"claim": "3a", "method": method, "comparator": "-",
                     **_claim_flatter(results, method)})
        rows.append({"claim": "3b", "method": method, "comparator": "dichotomy, series-sum",
                     **_claim_flat_helps(results, method)})
    ledger = pd.DataFrame(rows)
    ledger.insert(1, "text", ledger["claim"].map(CLAIMS))
    return ledger


def claims_summary(ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per (claim, method): the claim's verdict over its tests (claim 2: its three
    comparators; :func:`dpkmeans.study.claims.combine`), the tests' verdicts in words
    (``evidence``) and the AP points."""
    rows = []
    for (claim, method), group in ledger.groupby(["claim", "method"], sort=True):
        rows.append({"claim": str(claim), "method": method, "text": CLAIMS[str(claim)],
                     "verdict": combine(group["verdict"]), "evidence": tally(group["verdict"]),
                     "ap_points": int(group["points"].max())})
    return pd.DataFrame(rows)


def branch_counts(results: pd.DataFrame) -> pd.DataFrame:
    """How often each branch of APDP's schedule ran, per method, over the (case, epsilon)
    points."""
    ap = results[results["algorithm"].isin([METHODS[m]["ap"] for m in METHODS])]
    method = ap["family"].map({"published": "as_published", "corrected": "corrected"})
    return (ap.assign(method=method).groupby(["method", "branch"]).size()
            .rename("points").reset_index())


def _same_as_apdp(results: pd.DataFrame) -> pd.Series:
    """Rows of the corrected uniform schedule where the corrected APDP has no progression (Su's
    T = 2, equal shares): the same configuration as APDP's row, ranked once, as APDP."""
    apdp = results[results["algorithm"] == "apdp"]
    flat = set(zip(apdp.loc[apdp["branch"] == "su-uniform", "case"],
                   apdp.loc[apdp["branch"] == "su-uniform", "epsilon"]))
    return (results["algorithm"] == "uniform") & pd.Series(
        [(c, e) in flat for c, e in zip(results["case"], results["epsilon"])],
        index=results.index)


def ranking(results: pd.DataFrame) -> pd.DataFrame:
    """Per (case, epsilon), the private schedules ranked by mean NICV with 95% intervals;
    ``among_best`` marks those not significantly worse than the best (Welch, 5%). Where APDP
    is uniform (Su's T = 2) the uniform row is the same configuration and is left out."""
    private = results[results["algorithm"].isin(RANKED) & ~_same_as_apdp(results)]
    out = []
    for (case, eps), group in private.groupby(["case", "epsilon"], sort=True):
        group = group.sort_values("nicv_mean")
        best = group.iloc[0]
        for rank, (_, row) in enumerate(group.iterrows(), start=1):
            cmp = None if rank == 1 else _compare(row["nicv_mean"], row["nicv_se"], row,
                                                  best["nicv_mean"], best["nicv_se"], best)
            out.append({"case": case, "epsilon": eps, "rank": rank,
                        "algorithm": row["algorithm"], "iterations": int(row["iterations"]),
                        "nicv_mean": row["nicv_mean"], "nicv_ci_low": row["nicv_ci_low"],
                        "nicv_ci_high": row["nicv_ci_high"],
                        "among_best": bool(rank == 1 or cmp is None or not cmp.b_better)})
    return pd.DataFrame(out)


def _ratio(results: pd.DataFrame) -> pd.Series:
    """epsilon / epsilon_m of every (case, epsilon), from the public record count."""
    rows = results[results["algorithm"] == "apdp"]
    return pd.Series({(r["case"], r["epsilon"]): r["epsilon"] / r["epsilon_m"]
                      for _, r in rows.iterrows()})


#: Regimes of epsilon / epsilon_m: below 3 Su's rule gives T = 2 and APDP no progression.
REGIMES = ((0.0, 3.0, "eps < 3 eps_m (T = 2)"), (3.0, np.inf, "eps >= 3 eps_m"))


def recommendations(results: pd.DataFrame) -> pd.DataFrame:
    """Per regime, at how many (case, epsilon) points each schedule was ranked and was among the
    best (and the best); the uniform schedule is not ranked where it is APDP (:func:`ranking`)."""
    ranks = ranking(results)
    ratio = _ratio(results)
    ranks["ratio"] = [ratio[(c, e)] for c, e in zip(ranks["case"], ranks["epsilon"])]
    out = []
    for low, high, label in REGIMES:
        part = ranks[(ranks["ratio"] >= low) & (ranks["ratio"] < high)]
        n = part[["case", "epsilon"]].drop_duplicates().shape[0]
        for algorithm in RANKED:
            mine = part[part["algorithm"] == algorithm]
            out.append({"regime": label, "points": n, "algorithm": algorithm,
                        "ranked": len(mine), "among_best": int(mine["among_best"].sum()),
                        "best": int((mine["rank"] == 1).sum()),
                        "mean_rank": float(mine["rank"].mean()) if len(mine) else np.nan})
    return pd.DataFrame(out)


def write_claims(results_path, out_path) -> pd.DataFrame:
    """The ledger from a results CSV, written as a CSV; the committed
    ``data/results/apdp_claims.csv`` is made this way and checked by a test."""
    ledger = claims_ledger(pd.read_csv(results_path))
    write_csv(ledger, out_path)
    return ledger


if __name__ == "__main__":  # python -m dpkmeans.papers.apdp.claims [results] [out]
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    args = sys.argv[1:] or [root / "data/results/apdp.csv", root / "data/results/apdp_claims.csv"]
    print(write_claims(*args)[["claim", "method", "comparator", "verdict", "points"]].to_string())
    print(claims_summary(pd.read_csv(args[1], dtype={"claim": str})).to_string())
    assert set(pd.read_csv(args[1])["verdict"]) <= set(VERDICTS)
