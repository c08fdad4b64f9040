"""Advice at equal privacy (book: synthesis chapter, "Which private k-means should you use?"):
which contender to run at a given (epsilon, delta) under add/remove adjacency, from which
epsilon each one comes close to non-private Lloyd on each dataset, a rule of thumb in public
quantities, and how much of a form's gain is accounting. Everything is computed from the
leaderboard (``data/results/leaderboard.csv``), never typed.

A *contender* is one algorithm in one form (``dplloyd-impr (gaussian)``): its pure form at
delta = 0, and at delta > 0 each form the catalogue builds at that delta
(:func:`dpkmeans.api.catalogue.forms`), all calibrated to the same (epsilon, delta). The forms
are ranked as separate contenders because they are separate choices a reader makes: the same
algorithm with another mechanism or another accountant adds other noise, and pooling them
would hide which choice earns the rank. Only rows that are comparable (add/remove adjacency)
are ranked; a row under replace adjacency has another epsilon.

Closeness to non-private Lloyd is read from the upper end of the 95% interval of the relative
NICV, ``rel_nicv_ci_high``: a contender is *within 10%* at a point when even that bound is at
most 0.10, so that a reader who runs it can expect to lose no more than 10% with 95%
confidence, not just on average.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpkmeans.synthesis import ranking

__all__ = [
    "BOUND",
    "THRESHOLDS",
    "accounting_gain",
    "contenders",
    "deltas",
    "leader_at_points",
    "privacy_definition",
    "regime_advice",
    "rule_of_thumb",
    "signal_needed",
    "smallest_epsilon",
    "winner_changes",
]

#: The closeness levels to non-private Lloyd: relative NICV at most 10% and at most 50%.
THRESHOLDS = (0.10, 0.50)
#: The column compared with a threshold: the upper end of the 95% interval.
BOUND = "rel_nicv_ci_high"
#: A point of the leaderboard.
POINT = ["case", "epsilon"]


def deltas(results: pd.DataFrame) -> tuple[float, ...]:
    """The deltas of the leaderboard's comparable rows, smallest first.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.

    Returns
    -------
    tuple of float
    """
    rows = results[results["comparable"].astype(bool)]
    return tuple(sorted(float(d) for d in rows["delta"].unique()))


def contenders(results: pd.DataFrame, delta: float) -> pd.DataFrame:
    """The comparable rows at ``delta``, with ``algorithm`` holding the contender's name (the
    catalogue's name is kept as ``base_algorithm``), so that the ranking rule of
    :mod:`dpkmeans.synthesis.ranking` ranks contenders.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    delta : float
        The delta of the rows kept (0 for the pure forms).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        If no comparable row has that delta, or a contender appears twice at a point.
    """
    rows = results[results["comparable"].astype(bool)
                   & np.isclose(results["delta"].astype(float), delta, rtol=0, atol=1e-15)]
    if rows.empty:
        raise ValueError(f"no comparable row of the leaderboard has delta = {delta:g}")
    if rows.duplicated(POINT + ["contender"]).any():
        raise ValueError("a contender appears twice at a point")
    return rows.assign(base_algorithm=rows["algorithm"],
                       algorithm=rows["contender"]).reset_index(drop=True)


def privacy_definition(rows: pd.DataFrame, contender: str) -> str:
    """The privacy definition of ``contender``'s rows: 'δ = 0, add/remove, basic'.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of :func:`contenders`.
    contender : str
        A contender's name.

    Returns
    -------
    str
        Its delta, neighbour relation and accounting; a contender whose rows disagree on one
        of them is refused.
    """
    own = rows[rows["algorithm"] == contender]
    parts = []
    for column in ("delta", "neighbour", "accounting"):
        values = own[column].unique()
        if len(values) != 1:
            raise ValueError(f"{contender!r} has several values of {column}: {list(values)}")
        parts.append(values[0])
    delta = float(parts[0])
    return f"δ = {0 if delta == 0 else f'{delta:.0e}'.replace('e-0', 'e-')}, " \
           f"{parts[1]}, {parts[2]}"


def regime_advice(results: pd.DataFrame, delta: float,
                  level: float = ranking.LEVEL) -> pd.DataFrame:
    """:func:`dpkmeans.synthesis.ranking.recommendations` of the contenders at ``delta``, with
    the privacy definition of the winner (or, where there is none, of the leader) in the same
    row.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    delta : float
        The delta of the contenders.
    level : float, default ranking.LEVEL
        The family-wise level of the winner tests.

    Returns
    -------
    pandas.DataFrame
        The recommendations' columns, and ``delta``, ``definition`` (delta, relation,
        accounting), ``winner_algorithm`` and ``leader_algorithm`` (the catalogue names).
    """
    rows = contenders(results, delta)
    advice = ranking.recommendations(rows, level)
    base = rows.drop_duplicates("algorithm").set_index("algorithm")["base_algorithm"]
    named = [w or lead for w, lead in zip(advice["winner"], advice["leader"])]
    return advice.assign(
        delta=float(delta),
        definition=[privacy_definition(rows, c) for c in named],
        winner_algorithm=[base[w] if w else "" for w in advice["winner"]],
        leader_algorithm=[base[lead] for lead in advice["leader"]])


def winner_changes(results: pd.DataFrame, low: float = 0.0, high: float | None = None, *,
                   computed: dict[float, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Each regime's answer at delta = ``low`` and at delta = ``high`` (default: the
    leaderboard's largest delta), side by side, and whether it changes.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    low, high : float
        The two deltas compared.
    computed : dict of float to DataFrame, optional
        :func:`regime_advice` of ``results`` already computed, by delta.

    Returns
    -------
    pandas.DataFrame
        One row per regime present at both deltas: the winner, leader and their algorithms at
        each (suffixes ``_low`` and ``_high``), ``winner_changes`` (the winning algorithm
        differs, a clear winner at one delta only included) and ``leader_changes`` (the
        leading algorithm differs, forms aside).
    """
    high = deltas(results)[-1] if high is None else high
    keys = ["signal_regime", "d_regime"]
    columns = keys + ["winner", "leader", "winner_algorithm", "leader_algorithm", "points"]
    computed = computed or {}

    def at(delta: float) -> pd.DataFrame:
        found = computed.get(delta)
        return regime_advice(results, delta) if found is None else found

    both = at(low)[columns].merge(at(high)[columns], on=keys, suffixes=("_low", "_high"))
    return both.assign(
        winner_changes=both["winner_algorithm_low"] != both["winner_algorithm_high"],
        leader_changes=both["leader_algorithm_low"] != both["leader_algorithm_high"])


def smallest_epsilon(results: pd.DataFrame, thresholds: Sequence[float] = THRESHOLDS,
                     bound: str = BOUND, stay: bool = True) -> pd.DataFrame:
    """For each dataset (case), delta and contender, the smallest epsilon of the grid at which
    ``bound`` (the upper end of the 95% interval of the relative NICV) is at most each
    threshold.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    thresholds : sequence of float, default THRESHOLDS
        The closeness levels (0.10: within 10% of non-private Lloyd).
    bound : str, default BOUND
        The column compared with the thresholds (``rel_nicv_mean`` for the mean).
    stay : bool, default True
        Require the contender to stay within at every larger epsilon of the grid, so that
        more budget never takes it out again.

    Returns
    -------
    pandas.DataFrame
        One row per (case, delta, contender) of the comparable rows, with ``dataset``, ``N``,
        ``d``, ``k``, ``algorithm`` (catalogue name), ``contender`` and one column
        ``eps_<threshold>`` per threshold: the epsilon, NaN when none of the grid reaches it.
    """
    rows = results[results["comparable"].astype(bool)]
    out = []
    keys = ["case", "delta", "contender"]
    for (case, delta, contender), group in rows.groupby(keys, sort=False):
        group = group.sort_values("epsilon")
        row = {"case": case, "dataset": group["dataset"].iloc[0], "N": int(group["N"].iloc[0]),
               "d": int(group["d"].iloc[0]), "k": int(group["k"].iloc[0]),
               "delta": float(delta), "algorithm": group["algorithm"].iloc[0],
               "contender": contender}
        eps = group["epsilon"].to_numpy(float)
        values = group[bound].to_numpy(float)
        for threshold in thresholds:
            within = values <= threshold
            if stay:  # within here and at every larger epsilon
                within = np.flip(np.logical_and.accumulate(np.flip(within)))
            row[f"eps_{threshold:g}"] = float(eps[within][0]) if within.any() else np.nan
        out.append(row)
    return pd.DataFrame(out)


def leader_at_points(results: pd.DataFrame, delta: float, level: float = ranking.LEVEL,
                     *, computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every point at ``delta`` with its signal N epsilon / k, its regime, and the relative
    NICV of the contender the advice names for that regime (the winner, or the leader where
    there is none): what a reader who follows the advice gets.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    delta : float
        The delta of the contenders.
    level : float, default ranking.LEVEL
        The family-wise level of the winner tests.
    computed : pandas.DataFrame, optional
        :func:`regime_advice` of ``results`` at ``delta`` and ``level``, already computed.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``case``, ``dataset``, ``epsilon``, ``N``, ``d``, ``k``,
        ``signal``, ``signal_regime``, ``d_regime``, ``contender`` and its ``rel_nicv_mean``
        and ``rel_nicv_ci_high``.
    """
    rows = ranking.ranked_points(contenders(results, delta))
    advice = regime_advice(results, delta, level) if computed is None else computed
    named = {(r.signal_regime, r.d_regime): r.winner or r.leader for r in advice.itertuples()}
    pick = [named[(s, d)] == a for s, d, a in zip(rows["signal_regime"], rows["d_regime"],
                                                   rows["algorithm"])]
    chosen = rows[pick].drop(columns="contender").rename(columns={"algorithm": "contender"})
    return chosen[["case", "dataset", "epsilon", "N", "d", "k", "signal", "signal_regime",
                   "d_regime", "contender", "rel_nicv_mean", "rel_nicv_ci_high"]] \
        .sort_values(["d_regime", "signal"]).reset_index(drop=True)


def signal_needed(points: pd.DataFrame, threshold: float = THRESHOLDS[0],
                  bound: str = BOUND) -> pd.DataFrame:
    """Per d regime, the threshold of N epsilon / k above which every point is within
    ``threshold``: the smallest signal such that the points at or above it all have
    ``bound`` at most ``threshold``, with the largest signal of a point that is not within.

    Parameters
    ----------
    points : pandas.DataFrame
        Rows of :func:`leader_at_points`.
    threshold : float, default 0.10
        The closeness level.
    bound : str, default BOUND
        The column compared with it.

    Returns
    -------
    pandas.DataFrame
        One row per d regime: ``points``, ``within`` (how many are within), ``signal_from``
        (the threshold; NaN when the point of largest signal is not within), ``last_miss``
        (the largest signal not within; NaN when every point is within) and ``above`` (the
        points at or above ``signal_from``).
    """
    out = []
    for d_regime, group in points.groupby("d_regime", sort=True):
        group = group.sort_values("signal")
        within = group[bound].to_numpy(float) <= threshold
        signal = group["signal"].to_numpy(float)
        misses = signal[~within]
        last_miss = float(misses.max()) if len(misses) else np.nan
        above = signal > last_miss if len(misses) else np.ones_like(within)
        out.append({"d_regime": d_regime, "points": int(len(group)),
                    "within": int(within.sum()),
                    "signal_from": float(signal[above].min()) if above.any() else np.nan,
                    "last_miss": last_miss, "above": int(above.sum())})
    return pd.DataFrame(out)


def rule_of_thumb(points: pd.DataFrame, thresholds: Sequence[float] = THRESHOLDS,
                  bound: str = BOUND) -> pd.DataFrame:
    """The evidence for a rule in N epsilon / k and d: per regime (signal bin x d), how many of
    its points the advised contender brings within each threshold.

    Parameters
    ----------
    points : pandas.DataFrame
        Rows of :func:`leader_at_points`.
    thresholds : sequence of float, default THRESHOLDS
        The closeness levels.
    bound : str, default BOUND
        The column compared with them.

    Returns
    -------
    pandas.DataFrame
        One row per regime, smallest signal first: ``signal_regime``, ``d_regime``,
        ``points``, the contenders advised there, and ``within_<threshold>`` (a count) per
        threshold.
    """
    out = []
    for (signal, d_regime), group in points.groupby(["signal_regime", "d_regime"]):
        row = {"signal_regime": signal, "d_regime": d_regime, "points": int(len(group)),
               "contender": ", ".join(sorted(group["contender"].unique()))}
        for threshold in thresholds:
            row[f"within_{threshold:g}"] = int((group[bound] <= threshold).sum())
        out.append(row)
    table = pd.DataFrame(out)
    order = table["signal_regime"].map(ranking.SIGNAL_REGIMES.index)
    return table.assign(_order=order).sort_values(["_order", "d_regime"]).drop(
        columns="_order").reset_index(drop=True)


def accounting_gain(results: pd.DataFrame, algorithm: str, form: str,
                    against: str = "pure", delta: float | None = None) -> dict[str, object]:
    """How much one form of ``algorithm`` gains over another form of it, point by point.

    With ``against="pure"`` (delta = 0) and ``form="laplace"`` (the same Laplace noise,
    calibrated by privacy-loss distributions at delta) the gain is accounting alone; from
    ``"laplace"`` to ``"gaussian"`` it is the mechanism; for an (epsilon, delta) algorithm,
    from ``"basic"`` to ``"gaussian"`` it is accounting again.

    Parameters
    ----------
    results : pandas.DataFrame
        The leaderboard.
    algorithm : str
        The catalogue's name.
    form, against : str
        The two forms compared (members of :data:`dpkmeans.api.catalogue.FORMS`).
    delta : float or None, default None
        The delta of the forms other than "pure" (default: the largest on the board).

    Returns
    -------
    dict
        ``algorithm``, ``form``, ``against``, ``points`` (shared), ``median_ratio`` of the
        NICV (1 + rel_form) / (1 + rel_against) over the points (below 1: the form is
        better), ``better`` and ``worse`` (points where the 95% intervals are apart).
    """
    delta = deltas(results)[-1] if delta is None else delta
    rows = results[results["comparable"].astype(bool) & (results["algorithm"] == algorithm)]

    def side(which: str) -> pd.DataFrame:
        at = 0.0 if which == "pure" else delta
        own = rows[(rows["form"] == which) & np.isclose(rows["delta"], at, rtol=0, atol=1e-15)]
        return own.set_index(POINT)

    a, b = side(form), side(against)
    shared = a.index.intersection(b.index)
    a, b = a.loc[shared], b.loc[shared]
    ratio = (1.0 + a["rel_nicv_mean"]) / (1.0 + b["rel_nicv_mean"])
    return {"algorithm": algorithm, "form": form, "against": against,
            "points": int(len(shared)),
            "median_ratio": float(np.median(ratio)) if len(shared) else np.nan,
            "better": int((a["rel_nicv_ci_high"] < b["rel_nicv_ci_low"]).sum()),
            "worse": int((a["rel_nicv_ci_low"] > b["rel_nicv_ci_high"]).sum())}
