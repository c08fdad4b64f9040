"""The outside algorithms on the leaderboard (book: synthesis chapter, "Beyond the five papers"):
where each ranks in every regime, how its error compares with DPLloyd-Impr's point by point,
and what a fit costs, all computed from the committed leaderboard
(``data/results/leaderboard.csv``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkmeans.synthesis.ranking import head_to_head, standings

__all__ = ["BASELINE", "OUTSIDE", "against", "fit_times", "regime_places"]

#: The catalogue's algorithms that are not DP-Lloyd loops (chapter 12).
OUTSIDE = ("lsh", "balcan")
#: What they are compared with: the leaderboard's best DP-Lloyd algorithm.
BASELINE = "dplloyd-impr"


def regime_places(results: pd.DataFrame,
                  algorithms: tuple[str, ...] = OUTSIDE) -> pd.DataFrame:
    """Per regime (signal bin x d) and algorithm: its place by mean rank among all the
    leaderboard's algorithms, out of how many, its mean rank, and whether it is tied with the
    regime's leader (the rule of :func:`~dpkmeans.synthesis.ranking.standings`)."""
    every = standings(results)
    out = every[every["algorithm"].isin(algorithms)]
    return out[["signal_regime", "d_regime", "algorithm", "place", "of", "mean_rank", "tied",
                "median_rel_nicv", "points", "datasets"]].reset_index(drop=True)


def against(results: pd.DataFrame, algorithm: str, baseline: str = BASELINE) -> dict[str, float]:
    """``algorithm`` against ``baseline`` over the points they share: the mean relative NICV of
    each (over points), the median and range of the NICV ratio (1 + rel_a) / (1 + rel_b), and
    at how many points each is significantly better (95% intervals apart)."""
    keys = ["case", "epsilon"]
    a = results[results["algorithm"] == algorithm].set_index(keys)
    b = results[results["algorithm"] == baseline].set_index(keys).loc[a.index]
    ratio = (1.0 + a["rel_nicv_mean"]) / (1.0 + b["rel_nicv_mean"])
    better, worse = head_to_head(results, algorithm, baseline)
    return {"algorithm": algorithm, "baseline": baseline, "points": int(len(a)),
            "mean_rel_nicv": float(a["rel_nicv_mean"].mean()),
            "baseline_mean_rel_nicv": float(b["rel_nicv_mean"].mean()),
            "median_ratio": float(np.median(ratio)), "min_ratio": float(ratio.min()),
            "max_ratio": float(ratio.max()), "better": better, "worse": worse}


def fit_times(results: pd.DataFrame, case: str | None = None) -> pd.Series:
    """Seconds per fit of every algorithm on ``case`` (default: the largest dataset by N d),
    the mean over its epsilons of each point's time per run."""
    if case is None:
        size = results["N"] * results["d"]
        case = str(results.loc[size.idxmax(), "case"])
    rows = results[results["case"] == case]
    return rows.groupby("algorithm")["run_s"].mean().sort_values()

