"""Chapter 12's assignment: choosing a private k-means, a shared budget and a small leaderboard.

The student places a data holder in the chapter's regimes of $N\\varepsilon/k$, shares one
budget across fits with a ``PrivacyLedger``, and builds a small leaderboard of their own: four
corrected algorithms of the catalogue on their dataset, ``RUNS`` seeded runs each, ranked with
ties by the chapter's rule (:func:`dpkmeans.synthesis.ranking.point_ranks`). Nothing is read
from the committed results: every reference is computed by the library with the student's
seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.metrics import nicv
from dpkmeans.data import load
from dpkmeans.errors import BudgetExceededError
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.study.shared import summarise
from dpkmeans.synthesis import ranking
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

#: The corrected algorithms of the small leaderboard (the fast ones of the catalogue).
ALGORITHMS = ("dplloyd", "dplloyd-impr", "apdp", "di")
#: Seeded runs per algorithm: SEED, SEED + 1, ..., SEED + RUNS - 1.
RUNS = 8

SETUP = f"""\
import numpy as np
import pandas as pd

from dpkmeans.compute import metrics
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.data import load
from dpkmeans.errors import BudgetExceededError
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.study.shared import summarise
from dpkmeans.synthesis import ranking

X = load(DATASET, scale=(0, 1)).X  # clipped to the public bounds, scaled to [0, 1]^d
N, d = X.shape
ALGORITHMS = {ALGORITHMS!r}  # your leaderboard
RUNS = {RUNS}  # seeded runs per algorithm: SEED, SEED + 1, ..., SEED + RUNS - 1


def fit(algorithm, epsilon, seed, **options):
    \"\"\"One DPKMeans fit on X (the public N goes to the rules that read it).\"\"\"
    if CATALOGUE[algorithm].needs_n_records:
        options["n_records"] = N
    return DPKMeans(K, epsilon=epsilon, bounds=(0, 1), algorithm=algorithm,
                    random_state=seed, **options).fit(X)


print(f"{{STUDENT}}: {{DATASET}}, N = {{N}}, d = {{d}}, K = {{K}}, epsilon = {{EPSILON}}")"""


def _fit(p: Mapping[str, Any], X: Any, algorithm: str, epsilon: float, seed: int,
         **options: Any) -> Any:
    """The setup cell's ``fit``: one DPKMeans fit on X with the public N where it is read."""
    if CATALOGUE[algorithm].needs_n_records:
        options["n_records"] = X.shape[0]
    return DPKMeans(p["K"], epsilon=epsilon, bounds=(0, 1), algorithm=algorithm,
                    random_state=seed, **options).fit(X)


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The leaderboard runs, the shared accountant and the holder's regime (computed once)."""
    X = load(p["DATASET"], scale=(0, 1)).X
    eps, seed = p["EPSILON"], p["SEED"]
    models = {a: [_fit(p, X, a, eps, seed + r) for r in range(RUNS)]
              for a in ALGORITHMS}
    nicvs = {a: np.array([float(nicv(X, m.cluster_centers_)) for m in fits])
             for a, fits in models.items()}
    board = pd.DataFrame([{"case": p["DATASET"], "epsilon": eps, "algorithm": a,
                           **summarise(v, 1, "rel_nicv")} for a, v in nicvs.items()])
    ranks = ranking.point_ranks(board).set_index("algorithm")

    accountant = PrivacyLedger(budget=p["BUDGET"])
    _fit(p, X, "dplloyd", eps / 4, seed, accountant=accountant)
    _fit(p, X, "apdp", eps / 4, seed + 1, accountant=accountant)
    left = accountant.remaining().epsilon
    try:
        _fit(p, X, "dplloyd", eps, seed + 2, accountant=accountant)
        refused = False
    except BudgetExceededError:
        refused = True

    regime = ranking.regime_of(np.array([p["HOLDER_N"]]), np.array([eps]),
                               np.array([p["HOLDER_K"]]), np.array([p["HOLDER_D"]])).iloc[0]
    return {"nicvs": nicvs, "ranks": ranks, "di": models["di"][0], "left": left,
            "refused": refused, "regime": regime}


def _regime(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return ranking.SIGNAL_REGIMES.index(c["regime"]["signal_regime"]) + 1


def _epsilon_top(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return ranking.SIGNAL_BINS[-1] * p["HOLDER_K"] / p["HOLDER_N"]


def _left(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["left"]


def _third_fit(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return 3 if c["refused"] else 2


def _nicv_mean(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(c["nicvs"][p["ALGORITHM"]].mean())


def _n_first(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return int(c["ranks"]["first"].sum())


def _noise_growth(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    scales = [e.scale for e in c["di"].ledger_.entries if e.scale > 0]
    return scales[-1] / scales[0]


#: The chapter's signal regimes, as the options of a multiple choice (ranking.SIGNAL_REGIMES).
REGIME_CHOICES = ("$N\\varepsilon/k < 100$", "$100 \\le N\\varepsilon/k < 1000$",
                  "$1000 \\le N\\varepsilon/k < 10^4$", "$N\\varepsilon/k \\ge 10^4$")

ASSIGNMENT = Assignment(
    chapter=12,
    slug="synthesis",
    title="Choosing a private k-means (chapter 12)",
    introduction=(
        "You use the book's corrected algorithms the way its last chapter does: you place a "
        "data holder in the regimes of $N\\varepsilon/k$ that the advice is organised by, you "
        "share one privacy budget `BUDGET` across several fits, and you build a small "
        "leaderboard of your own, four algorithms `ALGORITHMS` on your dataset `DATASET` "
        "with `K` clusters at your `EPSILON`, `RUNS` seeded runs each, ranked with ties. "
        "Every random draw comes from your `SEED`, so your numbers can be checked. Chapter 12 "
        "of the book (*Which private k-means should you use?*) has everything you need.\n\n"
        "The setup cell loads your data, scaled to $[0, 1]^d$ by its public bounds as in the "
        "leaderboard, and defines `fit(algorithm, epsilon, seed, **options)`: one "
        "`DPKMeans` fit on `X` with your `K`, giving the public $N$ to the algorithms whose "
        "rule reads it."),
    pools={"DATASET": ("iris", "wine", "blood"), "K": (3, 4), "EPSILON": (0.5, 1.0, 2.0),
           "BUDGET": (1.0, 1.5, 2.0), "HOLDER_N": (500, 2_000, 20_000, 200_000),
           "HOLDER_K": (5, 10), "ALGORITHM": ALGORITHMS},
    fixed={"HOLDER_D": 12},
    setup=SETUP,
    questions=(
        Question(
            "regime",
            "A data holder has `HOLDER_N` records with `HOLDER_D` numeric attributes, wants "
            "`HOLDER_K` clusters and allows your `EPSILON`. In which regime of the signal "
            "$N\\varepsilon/k$ does it fall?",
            _regime,
            "Chapter 12, 'Choosing an algorithm': compute N epsilon / k and find its bin "
            "(ranking.regime_of does it; bins are closed on the left).",
            choices=REGIME_CHOICES,
            solution=("signal = HOLDER_N * EPSILON / HOLDER_K\n"
                      "regime = 1 + sum(signal >= edge for edge in ranking.SIGNAL_BINS)")),
        Question(
            "epsilon_top",
            "Keeping its `HOLDER_N` and `HOLDER_K`, what is the smallest $\\varepsilon$ at "
            "which the same data holder reaches the top regime, $N\\varepsilon/k \\ge 10^4$?",
            _epsilon_top,
            "Chapter 12, 'Choosing an algorithm' and the exercise on the hospital: solve "
            "N epsilon / k = 10^4 for epsilon.",
            solution="epsilon_top = 10_000 * HOLDER_K / HOLDER_N"),
        Question(
            "left",
            "Open one accountant, `accountant = PrivacyLedger(budget=BUDGET)`. Fit "
            "`fit(\"dplloyd\", EPSILON / 4, SEED, accountant=accountant)`, then "
            "`fit(\"apdp\", EPSILON / 4, SEED + 1, accountant=accountant)`. How much "
            "$\\varepsilon$ is left (`accountant.remaining().epsilon`)?",
            _left,
            "Chapter 12, 'One budget across fits': the accountant composes the fits "
            "sequentially; read remaining() after both fits.",
            atol=1e-9,  # the reference can be 0 (all spent): allow BUDGET - spent's rounding
            solution=("accountant = PrivacyLedger(budget=BUDGET)\n"
                      "fit(\"dplloyd\", EPSILON / 4, SEED, accountant=accountant)\n"
                      "fit(\"apdp\", EPSILON / 4, SEED + 1, accountant=accountant)\n"
                      "left = accountant.remaining().epsilon")),
        Question(
            "third_fit",
            "With the same accountant you then ask for "
            "`fit(\"dplloyd\", EPSILON, SEED + 2, accountant=accountant)`. What happens?",
            _third_fit,
            "Chapter 12, 'One budget across fits' and its theorem on the shared accountant: "
            "compare what the fit asks for with what is left.",
            choices=("It runs, and the accountant records that its budget was exceeded.",
                     "It runs: what is left covers it.",
                     "It is refused with `BudgetExceededError` before any noise is drawn.",
                     "It runs with only what is left of the budget."),
            solution=("try:\n"
                      "    fit(\"dplloyd\", EPSILON, SEED + 2, accountant=accountant)\n"
                      "    third_fit = 2\n"
                      "except BudgetExceededError:\n"
                      "    third_fit = 3")),
        Question(
            "nicv_mean",
            "Your small leaderboard: for each algorithm `a` in `ALGORITHMS` and each run "
            "`r` in `range(RUNS)`, fit `fit(a, EPSILON, SEED + r)` and compute the NICV of its "
            "centroids on `X` (`metrics.nicv`). What is the mean NICV of your `ALGORITHM` over "
            "its `RUNS` runs?",
            _nicv_mean,
            "Fit exactly as the question says, run r with random_state SEED + r, on the X of "
            "the setup cell, and average metrics.nicv over the runs of your ALGORITHM.",
            points=2.0,
            solution=("nicvs = {a: np.array([metrics.nicv(X, fit(a, EPSILON, SEED + r)\n"
                      "                                     .cluster_centers_)\n"
                      "                        for r in range(RUNS)])\n"
                      "         for a in ALGORITHMS}\n"
                      "nicv_mean = nicvs[ALGORITHM].mean()")),
        Question(
            "n_first",
            "Rank your four algorithms by the chapter's rule, ranks with ties: an algorithm's "
            "rank is one plus the number of algorithms whose 95% interval of the NICV lies "
            "entirely below its own. Take each interval from "
            "`summarise(values, 1, \"rel_nicv\")` (the leaderboard's t interval) and rank "
            "with `ranking.point_ranks`. (The leaderboard ranks the NICV relative to Lloyd's; "
            "one reference for all shifts and scales every interval alike, so the ranks are "
            "the same.) How many algorithms are ranked first, alone or tied?",
            _n_first,
            "Chapter 12, 'Ranks with ties': one row per algorithm with the case (your "
            "DATASET), the EPSILON and summarise's columns; point_ranks adds 'rank' and "
            "'first'.",
            rtol=0.0,
            solution=("board = pd.DataFrame([{\"case\": DATASET, \"epsilon\": EPSILON,\n"
                      "                       \"algorithm\": a, **summarise(v, 1, \"rel_nicv\")}\n"
                      "                      for a, v in nicvs.items()])\n"
                      "n_first = int(ranking.point_ranks(board)[\"first\"].sum())")),
        Question(
            "noise_growth",
            "The chapter explains why `di` ranks low even at large budgets: it halves its "
            "budget every iteration and releases its last centroids. Take its fit of run 0, "
            "`fit(\"di\", EPSILON, SEED)`, and read the noise scales of its releases in "
            "`ledger_.entries` (the entries with a positive `scale`, in order). How many "
            "times larger than the first iteration's noise scale is the last one's?",
            _noise_growth,
            "Chapter 12, 'The leaderboard' and chapter 10: each halving step doubles the "
            "scale; the fit stops once its centroids stop moving, so count the iterations "
            "its ledger actually shows.",
            solution=("scales = [e.scale for e in fit(\"di\", EPSILON, SEED).ledger_.entries\n"
                      "          if e.scale > 0]\n"
                      "noise_growth = scales[-1] / scales[0]")),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
