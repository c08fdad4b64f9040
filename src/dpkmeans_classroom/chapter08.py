"""Chapter 8's assignment: silhouette-weighted budgets (Zhang, Liu and Wang 2018), as published
and corrected, on your own data.

The references are computed by the library: the overspend of the as-published method from its
ledger (iteration 1's charge and the composed total), its leak through the shared noise draw
from the equal splits of :class:`dpkmeans.papers.silhouette.variants.EqualSplitInitialRelease`,
and the corrected method's silhouette release and total from its configuration and ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.papers.silhouette.variants import as_published, corrected, equal_split_sums
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

#: The paper's cap on the number of iterations.
T = 10

SETUP = """\
import numpy as np

from dpkmeans.engine import schedules
from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.compute.lloyd import block_silhouette, local_map_reduce
from dpkmeans.papers.silhouette.variants import as_published, corrected

X = load(DATASET, scale=(0, 1)).X  # clipped to the public bounds, then scaled to [0, 1]^d
N, d = X.shape
box = (np.zeros(d), np.ones(d))
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, k = {K}, epsilon = {EPSILON}, "
      f"iteration {ITERATION}")"""

PUBLISHED = "as_published(K, EPSILON, box, data_derived_bounds=False)"


def _box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(d), np.ones(d)


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The student's data and the two runs the questions ask about (computed once)."""
    X = load(p["DATASET"], scale=(0, 1)).X
    box = _box(X.shape[1])
    published = as_published(p["K"], p["EPSILON"], box, data_derived_bounds=False)
    fixed = corrected(p["K"], p["EPSILON"], box)
    return {"X": X, "published_config": published, "corrected_config": fixed,
            "published": run(X, published, p["SEED"]), "corrected": run(X, fixed, p["SEED"])}


def _published_spent(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["published"].ledger.total().epsilon


def _first_multiplier(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # iteration 1 is charged its share eps/2 times the largest weight (parallel composition)
    charged = max(e.epsilon for e in c["published"].ledger.entries
                  if e.scope.startswith("iteration 1 ") or e.scope == "iteration 1")
    return charged / c["published_config"].schedule[0]


def _overspend_bound(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    ran = int(c["published"].iterations_run[0])
    shares = c["published_config"].schedule[:ran]
    return float(1.0 + 2.0 * shares.sum() / p["EPSILON"])  # eps for the start, 2x each step


def _overspend_cap(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # fixed by the lemma 'The centre silhouette lies in [0, 1]': the weights lie in [1, 2]
    return 2


def _shared_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    X = c["X"]
    sums, counts = equal_split_sums(X, 0, X.shape[0], p["K"])
    n, V = counts[0], sums[0]
    return float((n - V[0]) / (n - V[1]))


def _silhouette_scale(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    config = c["corrected_config"]
    return 2.0 / config.allocation.epsilon(config.schedule[p["ITERATION"] - 1])


def _corrected_spent(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["corrected"].ledger.total().epsilon


ASSIGNMENT = Assignment(
    chapter=8,
    slug="silhouette",
    title="Silhouette-weighted budgets, as published and corrected (chapter 8)",
    introduction=(
        "You run the silhouette-weighted DP k-means of Zhang, Liu and Wang (2018) twice on "
        "your own dataset, with your own budget `EPSILON`, number of clusters `K` and seed "
        "`SEED`: as published, and corrected. You read from the privacy ledger what the "
        "published version really spends, find the quantity its shared noise draw releases "
        "exactly, and check the corrected version's accounting; `ITERATION` is yours too. "
        "Chapter 8 of the book (*Silhouette-weighted budgets on MapReduce*) has everything "
        "you need.\n\n"
        "Records are clipped to the public bounds of the dataset's documentation and scaled "
        "to $[0, 1]^d$ (the setup cell), so the as-published runs below use public bounds "
        "(`data_derived_bounds=False`): their ledgers show the paper's other flaws alone. "
        "Adjacency is add/remove."),
    pools={"DATASET": ("iris", "wine", "blood", "heart"), "EPSILON": (0.25, 0.5, 1.0, 2.0, 4.0),
           "K": (2, 3, 4), "ITERATION": tuple(range(1, T + 1))},
    setup=SETUP,
    questions=(
        Question(
            "published_spent",
            f"Run the method as published on `X`: `published = run(X, {PUBLISHED}, SEED)`. "
            "It declares `EPSILON`. What epsilon does its ledger compose "
            "(`published.ledger.total().epsilon`), that is, what does it really spend?",
            _published_spent,
            "Chapter 8, 'The allocation rule, and why its budget claim is false': run exactly "
            "the configuration in the question with your SEED and read the composed total of "
            "its ledger.",
            points=2.0,
            solution=(f"published = run(X, {PUBLISHED}, SEED)\n"
                      "published_spent = published.ledger.total().epsilon")),
        Question(
            "first_multiplier",
            "Iteration 1 of your as-published run has the share $\\varepsilon/2$ and weights "
            "cluster $j$'s budget by $(1 + S_j)/(1 + \\min_l S_l)$, with $S_j$ the exact "
            "centre silhouette of cluster $j$ around the initial centres "
            "(`published.initial_centroids[0]`; an empty cluster has $S_j = 0$). By what "
            "factor does iteration 1 really cost more than its share? Compute it from the "
            "silhouettes (`local_map_reduce(X, block_silhouette, centres)` returns each "
            "cluster's sum of $S(x)$ and its count); the ledger charges the same.",
            _first_multiplier,
            "Chapter 8, 'The silhouette and its centre form' (the sums and counts per cluster) "
            "and 'The allocation rule, and why its budget claim is false': under parallel "
            "composition an iteration costs its "
            "largest per-cluster budget.",
            solution=("sums, counts = local_map_reduce(X, block_silhouette,\n"
                      "                                published.initial_centroids[:1])\n"
                      "S = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0)[0]\n"
                      "first_multiplier = (1 + S.max()) / (1 + S.min())")),
        Question(
            "overspend_bound",
            "Your as-published run ran `published.iterations_run[0]` iterations, with shares "
            "$\\varepsilon/2^t$, and the ledger charges its initial centres $\\varepsilon$. "
            "Using only that the centre silhouettes lie in $[0, 1]$, what is the upper bound on "
            "its total spend, as a multiple of `EPSILON`, for that many iterations? (Compare "
            "your answer to the first question divided by `EPSILON`.)",
            _overspend_bound,
            "Chapter 8, 'Exercises' (the as-published overspend) and the lemma 'The centre "
            "silhouette lies in [0, 1]': bound each iteration's multiplier, then compose "
            "sequentially over the iterations that ran, plus the initial release.",
            solution=("ran = published.iterations_run[0]\n"
                      "overspend_bound = 1 + 2 * (1 - 2.0 ** -ran)")),
        Question(
            "overspend_cap",
            "With the centre silhouettes that the paper computes, what can one as-published "
            "iteration cost, compared with its share $\\varepsilon/2^t$?",
            _overspend_cap,
            "Chapter 8, the lemma 'The centre silhouette lies in [0, 1]' and the table of "
            "multipliers in 'The allocation rule, and why its budget claim is false'.",
            choices=(
                "At most its share, as the paper claims: the multipliers are at most 1.",
                "At most twice its share: the multipliers lie in [1, 2].",
                "Any multiple of its share: the multiplier grows without bound as the "
                "smallest silhouette approaches -1.",
                "Exactly its share: parallel composition averages the clusters' budgets."),
            solution="overspend_cap = 2  # S_j in [0, 1]: (1 + S_j) / (1 + min S) in [1, 2]"),
        Question(
            "shared_ratio",
            "As published, the initial centres are the noisy means of `K` equal splits of the "
            "records in file order (row $i$, counting from 0, is in split "
            "$\\lfloor i K / N \\rfloor$), and one Laplace draw $\\eta$ is added to a split's "
            "sum $V$ and to its count $n$. For the first split of `X`, compute "
            "$(n - V_1)/(n - V_2)$ from the data, with $V_1, V_2$ the sums of its first two "
            "attributes. The released centre satisfies $(1 - c_1)/(1 - c_2) = "
            "(n - V_1)/(n - V_2)$ whatever $\\eta$ is, unless it was clipped to the box (or "
            "replaced by the box's midpoint, when the noisy count is below 1).",
            _shared_ratio,
            "Chapter 8, 'Auditing': the shared draw cancels in 1 - c_i = (n - V_i) / (n + "
            "eta); select the rows of the first split by the rule in the question.",
            solution=("first = np.arange(N) * K // N == 0\n"
                      "n, V = first.sum(), X[first].sum(axis=0)\n"
                      "shared_ratio = (n - V[0]) / (n - V[1])")),
        Question(
            "silhouette_scale",
            "The corrected method releases every cluster's $(\\Sigma_j, n_j)$, its silhouette "
            "sum and count, with Laplace noise at the budget $\\beta e_t$, with $\\beta = 0.1$ "
            f"and $e_t = \\varepsilon\\, 2^{{-t}} / (1 - 2^{{-{T}}})$. What is the scale of that "
            "noise in iteration `ITERATION`?",
            _silhouette_scale,
            "Chapter 8, 'The corrected rule' and the proof of its theorem: the L1 sensitivity "
            "of (Sigma_j, n_j) under add/remove, over the budget; schedules.halving gives e_t.",
            solution=("e_t = schedules.halving(EPSILON, 10)[ITERATION - 1]\n"
                      "silhouette_scale = 2 / (0.1 * e_t)")),
        Question(
            "corrected_spent",
            "Run the corrected method on `X`: `fixed = run(X, corrected(K, EPSILON, box), "
            "SEED)`. What epsilon does its ledger compose? (It may stop before "
            f"{T} iterations: `fixed.iterations_run[0]`.)",
            _corrected_spent,
            "Chapter 8, 'The corrected rule': the cost of each step is fixed before the data "
            "are seen, and stopping early only removes steps; read the ledger's total.",
            solution=("fixed = run(X, corrected(K, EPSILON, box), SEED)\n"
                      "corrected_spent = fixed.ledger.total().epsilon")),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
