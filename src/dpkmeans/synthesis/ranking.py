"""From the leaderboard to advice (book: synthesis chapter): ranks with ties, the ranking
table, and the recommendation per regime of N epsilon / k and d, all computed from the
committed results (``data/results/leaderboard.csv``), never typed.

At each point (a dataset at an epsilon), an algorithm's rank is 1 + the number of algorithms
that are *significantly* better: whose 95% interval of the relative NICV lies entirely below
its own. Algorithms whose intervals overlap share a rank, so several can be first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "D_SPLIT",
    "SIGNAL_BINS",
    "SIGNAL_REGIMES",
    "point_ranks",
    "ranking_table",
    "recommendations",
    "regime_of",
]

#: Regimes of the signal N epsilon / k (records per cluster times epsilon): the bins' edges.
SIGNAL_BINS = (100.0, 1_000.0, 10_000.0)
#: Low or high dimension: d <= D_SPLIT or d > D_SPLIT.
D_SPLIT = 10


def point_ranks(results: pd.DataFrame) -> pd.DataFrame:
    """The results with ``rank`` (1 + algorithms significantly better at the same point) and
    ``first`` (rank 1, alone or tied)."""
    out = []
    for _, point in results.groupby(["case", "epsilon"], sort=False):
        low = point["rel_nicv_ci_low"].to_numpy()
        high = point["rel_nicv_ci_high"].to_numpy()
        better = (high[None, :] < low[:, None]).sum(axis=1)  # row i: how many beat i
        out.append(point.assign(rank=1 + better, first=better == 0))
    return pd.concat(out)


def ranking_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm over every point: mean rank, points ranked first (alone or tied), and the
    median relative NICV; best first."""
    ranked = point_ranks(results)
    table = ranked.groupby("algorithm").agg(
        mean_rank=("rank", "mean"), first=("first", "sum"), points=("first", "size"),
        median_rel_nicv=("rel_nicv_mean", "median"))
    table["first_share"] = table["first"] / table["points"]
    return table.sort_values(["mean_rank", "median_rel_nicv"]).reset_index()


#: The signal regimes' names, smallest signal first.
SIGNAL_REGIMES = (f"N eps / k < {SIGNAL_BINS[0]:g}",
                  *(f"{a:g} <= N eps / k < {b:g}" for a, b in zip(SIGNAL_BINS[:-1],
                                                                   SIGNAL_BINS[1:])),
                  f"N eps / k >= {SIGNAL_BINS[-1]:g}")


def regime_of(N: np.ndarray, epsilon: np.ndarray, k: np.ndarray, d: np.ndarray) -> pd.DataFrame:
    """The regime of each point: the bin of N epsilon / k and low or high d."""
    signal = np.asarray(N, float) * np.asarray(epsilon, float) / np.asarray(k, float)
    edges = (0.0, *SIGNAL_BINS, np.inf)
    signal_bin = pd.cut(signal, edges, right=False, labels=list(SIGNAL_REGIMES))
    dim = np.where(np.asarray(d) <= D_SPLIT, f"d <= {D_SPLIT}", f"d > {D_SPLIT}")
    return pd.DataFrame({"signal": signal, "signal_regime": signal_bin.astype(str),
                         "d_regime": dim})


def recommendations(results: pd.DataFrame, top: int = 3) -> pd.DataFrame:
    """Per regime (signal bin x d): the ``top`` algorithms by share of points ranked first,
    then mean rank, then median relative NICV, with the number of points behind each."""
    ranked = point_ranks(results).reset_index(drop=True)
    ranked = pd.concat([ranked, regime_of(ranked["N"], ranked["epsilon"], ranked["k"],
                                          ranked["d"])], axis=1)
    rows = []
    for (signal, dim), group in ranked.groupby(["signal_regime", "d_regime"], sort=True):
        stats = group.groupby("algorithm").agg(
            first_share=("first", "mean"), mean_rank=("rank", "mean"),
            median_rel_nicv=("rel_nicv_mean", "median"))
        stats = stats.sort_values(["first_share", "mean_rank", "median_rel_nicv"],
                                  ascending=[False, True, True])
        points = group[["case", "epsilon"]].drop_duplicates().shape[0]
        datasets = sorted(group["dataset"].unique())
        for place, (algorithm, s) in enumerate(stats.head(top).iterrows(), start=1):
            rows.append({"signal_regime": signal, "d_regime": dim, "place": place,
                         "algorithm": algorithm, "first_share": float(s["first_share"]),
                         "mean_rank": float(s["mean_rank"]),
                         "median_rel_nicv": float(s["median_rel_nicv"]), "points": points,
                         "datasets": ", ".join(datasets)})
    table = pd.DataFrame(rows)
    order = table["signal_regime"].map(SIGNAL_REGIMES.index)
    return table.assign(_order=order).sort_values(["_order", "d_regime", "place"]).drop(
        columns="_order").reset_index(drop=True)
