"""From the leaderboard to advice (book: synthesis chapter): ranks with ties, the ranking
table, and the advice per regime of N epsilon / k and d, all computed from the committed
results (``data/results/leaderboard.csv``), never typed.

One rule orders the algorithms, overall and in every regime: the **mean rank**. At each point
(a dataset at an epsilon), an algorithm's rank is 1 + the number of algorithms that are
*significantly* better: whose 95% interval of the relative NICV lies entirely below its own.
Algorithms whose intervals overlap share a rank, so several can be first.

A regime's **leader** has the best mean rank over the regime's points. It is the regime's
**winner** only if it is significantly better than every other algorithm across those points:
for each other algorithm, a two-sided exact sign test over the points where the two differ
(the leader's interval entirely below the other's: a win; entirely above: a loss; overlapping:
a tie, left out) rejects "as often better as worse" at level ``level / m``, Bonferroni-corrected
for the ``m`` regimes tested. The closest rival (the largest p-value) is the **runner-up**; the
leader is the winner when it is significantly better than the runner-up, and otherwise the
regime has no clear winner and lists the leader with every algorithm it is not significantly
better than (its *ties*).

Algorithms are ranked only at equal privacy: every row of a point must have the same delta and
the same neighbour relation where the results record them, and each algorithm appears once a
point. The equal-privacy leaderboard ranks *contenders* (an algorithm in one form, at one
delta): :func:`dpkmeans.synthesis.advice.contenders` gives its rows at one delta with the
contender's name in ``algorithm``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "D_SPLIT",
    "LEVEL",
    "REGIME_SYMBOLS",
    "SIGNAL_BINS",
    "SIGNAL_REGIMES",
    "fewest_points",
    "head_to_head",
    "point_ranks",
    "ranked_points",
    "ranking_table",
    "recommendations",
    "regime_label",
    "regime_of",
    "sign_test",
    "standings",
]

#: Regimes of the signal N epsilon / k (records per cluster times epsilon): the bins' edges.
SIGNAL_BINS = (100.0, 1_000.0, 10_000.0)
#: Low or high dimension: d <= D_SPLIT or d > D_SPLIT.
D_SPLIT = 10
#: The family-wise level of the regimes' winner tests (Bonferroni over the regimes).
LEVEL = 0.05
#: A point of the leaderboard: a dataset (case) at an epsilon.
POINT = ("case", "epsilon")


def _check_equal_privacy(results: pd.DataFrame) -> None:
    """Refuse results that would rank rows of different privacy against each other."""
    if results.duplicated(list(POINT) + ["algorithm"]).any():
        raise ValueError("an algorithm appears twice at a point: rank one form at one delta "
                         "(dpkmeans.synthesis.advice.contenders)")
    for column in ("delta", "neighbour"):
        if column in results and (results.groupby(list(POINT))[column].nunique() > 1).any():
            raise ValueError(f"a point mixes rows of several {column} values: algorithms are "
                             "compared only at equal privacy")


def point_ranks(results: pd.DataFrame) -> pd.DataFrame:
    """The results with ``rank`` (1 + algorithms significantly better at the same point) and
    ``first`` (rank 1, alone or tied). Refuses results whose point mixes deltas or neighbour
    relations, or holds an algorithm twice (ValueError)."""
    _check_equal_privacy(results)
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


#: How a regime's label is written: typeset math, or plain text for a glued phrase.
REGIME_SYMBOLS = {"tex": (r"N\varepsilon/k", r"\le", r"\ge", "10^4"),
                  "text": ("Nε/k", "≤", "≥", "10,000")}


def regime_label(signal_regime: str, d_regime: str, form: str = "tex") -> str:
    """A regime's label for readers: ('N eps / k < 100', 'd <= 10') -> '$N\\varepsilon/k <
    100$, $d \\le 10$' (``form="tex"``) or 'Nε/k < 100, d ≤ 10' (``form="text"``)."""
    signal, le, ge, ten_thousand = REGIME_SYMBOLS[form]
    parts = [label.replace("N eps / k", signal).replace("<=", le).replace(">=", ge)
             .replace("10000", ten_thousand) for label in (signal_regime, d_regime)]
    return ", ".join(f"${part}$" if form == "tex" else part for part in parts)


def regime_of(N: np.ndarray, epsilon: np.ndarray, k: np.ndarray, d: np.ndarray) -> pd.DataFrame:
    """The regime of each point: the bin of N epsilon / k and low or high d."""
    signal = np.asarray(N, float) * np.asarray(epsilon, float) / np.asarray(k, float)
    edges = (0.0, *SIGNAL_BINS, np.inf)
    signal_bin = pd.cut(signal, edges, right=False, labels=list(SIGNAL_REGIMES))
    dim = np.where(np.asarray(d) <= D_SPLIT, f"d <= {D_SPLIT}", f"d > {D_SPLIT}")
    return pd.DataFrame({"signal": signal, "signal_regime": signal_bin.astype(str),
                         "d_regime": dim})


def ranked_points(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`point_ranks` with each point's regime (:func:`regime_of`) beside it."""
    ranked = point_ranks(results).reset_index(drop=True)
    regimes = regime_of(ranked["N"], ranked["epsilon"], ranked["k"], ranked["d"])
    return pd.concat([ranked, regimes], axis=1)


def head_to_head(results: pd.DataFrame, algorithm: str, other: str) -> tuple[int, int]:
    """Over the points both ran: at how many ``algorithm`` is significantly better than
    ``other`` (its 95% interval entirely below) and at how many significantly worse."""
    a = results[results["algorithm"] == algorithm].set_index(list(POINT))
    b = results[results["algorithm"] == other].set_index(list(POINT)).loc[a.index]
    wins = int((a["rel_nicv_ci_high"] < b["rel_nicv_ci_low"]).sum())
    losses = int((a["rel_nicv_ci_low"] > b["rel_nicv_ci_high"]).sum())
    return wins, losses


def fewest_points(threshold: float) -> int:
    """The fewest decided points at which the sign test can reject at ``threshold``: the
    smallest n with 2^(1 - n) < threshold (all n points won)."""
    return int(np.floor(1.0 - np.log2(threshold))) + 1


def sign_test(wins: int, losses: int) -> float:
    """The two-sided exact sign test's p-value for ``wins`` against ``losses`` (ties left
    out): the probability, were each decided point a fair coin, of a split at least as
    uneven. 1 when no point is decided."""
    decided = wins + losses
    return float(stats.binomtest(wins, decided, 0.5).pvalue) if decided else 1.0


def _regime_standing(group: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One regime's algorithms by mean rank, each with its record against the leader."""
    table = group.groupby("algorithm").agg(
        mean_rank=("rank", "mean"), median_rel_nicv=("rel_nicv_mean", "median"))
    table = table.sort_values(["mean_rank", "median_rel_nicv"]).reset_index()
    leader = table["algorithm"].iloc[0]
    record = [head_to_head(group, leader, a) if a != leader else (0, 0)
              for a in table["algorithm"]]
    table["wins"] = [w for w, _ in record]  # the leader's wins against this algorithm
    table["losses"] = [l for _, l in record]
    table["p_value"] = [sign_test(w, l) if a != leader else np.nan
                        for a, (w, l) in zip(table["algorithm"], record)]
    table["tied"] = ~(table["p_value"] < threshold)  # the leader itself: NaN, so True
    return table.assign(place=np.arange(1, len(table) + 1), of=len(table))


def standings(results: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """Per regime (signal bin x d) and algorithm: its mean rank and place by mean rank, the
    leader's wins and losses against it, their sign test's p-value, and whether it is tied
    with the leader (not significantly worse at ``level`` / the number of regimes)."""
    ranked = ranked_points(results)
    groups = ranked.groupby(["signal_regime", "d_regime"], sort=True)
    threshold = level / groups.ngroups
    out = []
    for (signal, dim), group in groups:
        points = group[list(POINT)].drop_duplicates().shape[0]
        out.append(_regime_standing(group, threshold).assign(
            signal_regime=signal, d_regime=dim, points=points, threshold=threshold,
            datasets=", ".join(sorted(group["dataset"].unique()))))
    table = pd.concat(out, ignore_index=True)
    order = table["signal_regime"].map(SIGNAL_REGIMES.index)
    return table.assign(_order=order).sort_values(["_order", "d_regime", "place"]).drop(
        columns="_order").reset_index(drop=True)


def recommendations(results: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """One row per regime: its leader (best mean rank) and runner-up (the leader's closest
    rival: the largest sign-test p-value, then the better mean rank), the leader's wins and
    losses against the runner-up with the p-value and the threshold it must beat, the
    ``winner`` (the leader if significantly better than the runner-up, else ""), and the
    ``tied`` algorithms (the leader and those it is not significantly better than, by mean
    rank), with the number of points and the datasets behind the row."""
    rows = []
    for _, regime in standings(results, level).groupby(["signal_regime", "d_regime"],
                                                          sort=False):
        leader = regime.iloc[0]
        rival = regime.iloc[1:].sort_values(["p_value", "place"],
                                            ascending=[False, True]).iloc[0]
        clear = bool(rival["p_value"] < leader["threshold"])
        rows.append({
            "signal_regime": leader["signal_regime"], "d_regime": leader["d_regime"],
            "points": int(leader["points"]), "datasets": leader["datasets"],
            "leader": leader["algorithm"], "leader_mean_rank": float(leader["mean_rank"]),
            "runner_up": rival["algorithm"], "runner_up_mean_rank": float(rival["mean_rank"]),
            "wins": int(rival["wins"]), "losses": int(rival["losses"]),
            "p_value": float(rival["p_value"]), "threshold": float(leader["threshold"]),
            "winner": leader["algorithm"] if clear else "",
            "tied": tuple(regime.loc[regime["tied"], "algorithm"]),
            "of": int(leader["of"])})
    return pd.DataFrame(rows)
