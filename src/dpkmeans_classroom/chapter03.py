"""Chapter 3's assignment: sequential and parallel composition, the privacy ledger, budget
schedules over DP-Lloyd's iterations and composition under differential identifiability, for
your own budgets, T, k, d and seeded per-cluster budgets.

The per-cluster budgets are drawn in the setup cell from the student's ``SEED``; ``prepare``
runs that same cell (:func:`dpkmeans_classroom.spec.run_setup`). The references are
computed with the library: :class:`dpkmeans.privacy.accounting.PrivacyLedger` for the
composed costs, :mod:`dpkmeans.engine.schedules` for the splits,
:func:`dpkmeans.privacy.mechanisms.laplace_scale` with
:func:`dpkmeans.privacy.sensitivity.lloyd_query_sensitivity` for the noise, and
:mod:`dpkmeans.privacy.identifiability` for the posterior bounds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.engine import schedules
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.identifiability import compose_rho_exact, compose_rho_published
from dpkmeans.privacy.mechanisms import laplace_scale
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans_classroom.spec import Assignment, Question, run_setup

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.engine import schedules
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.identifiability import compose_rho_exact, compose_rho_published
from dpkmeans.privacy.mechanisms import laplace_scale
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

# The budget of each cluster's count in one iteration (drawn from your SEED).
eps_clusters = np.random.default_rng(SEED).choice([0.1, 0.2, 0.25, 0.4, 0.5], size=K)
print(f"{STUDENT}: T = {ITERATIONS}, k = {K}, d = {DIM}, total epsilon = {EPSILON_TOTAL}")
print("eps_clusters =", eps_clusters)"""

RUN_LEDGER = """\
ledger = PrivacyLedger()
for t in range(1, ITERATIONS + 1):
    with ledger.sequential(f"iteration {t}"), ledger.parallel("clusters"):
        for j in range(K):
            with ledger.part(f"cluster {j}"):
                ledger.charge("Laplace", epsilon=EPS_SUM, sensitivity=DIM,
                              scale=laplace_scale(DIM, EPS_SUM), label="sum")
                ledger.charge("Laplace", epsilon=EPS_COUNT, sensitivity=1,
                              scale=laplace_scale(1, EPS_COUNT), label="count")
run_cost = ledger.total().epsilon"""


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The setup cell's per-cluster budgets."""
    return run_setup(SETUP, p)


def _run_cost(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    ledger = PrivacyLedger()
    releases = (("sum", p["EPS_SUM"], p["DIM"]), ("count", p["EPS_COUNT"], 1))
    for t in range(1, p["ITERATIONS"] + 1):
        with ledger.sequential(f"iteration {t}"), ledger.parallel("clusters"):
            for j in range(p["K"]):
                with ledger.part(f"cluster {j}"):
                    for label, eps, sensitivity in releases:
                        ledger.charge("Laplace", epsilon=eps, sensitivity=sensitivity,
                                      scale=laplace_scale(sensitivity, eps), label=label)
    return ledger.total().epsilon


def _parallel_cost(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    ledger = PrivacyLedger()
    with ledger.parallel("clusters"):
        for j, eps in enumerate(c["eps_clusters"]):
            with ledger.part(f"cluster {j}"):
                ledger.charge("Laplace", epsilon=eps, sensitivity=1.0,
                              scale=laplace_scale(1.0, eps))
    return ledger.total().epsilon


def _replace_cost(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # A record that stays in its cluster leaves every count alone; one that moves from
    # cluster h to cluster h' changes both counts by one: the worst pair costs eps_h + eps_h'.
    return float(max(a + b for a, b in itertools.combinations(c["eps_clusters"], 2)))


def _schedule(p: Mapping[str, Any], *, normalise: bool) -> np.ndarray:
    split = {"halving": schedules.halving, "series_sum": schedules.series_sum}[p["SCHEDULE"]]
    return split(p["EPSILON_TOTAL"], p["ITERATIONS"], normalise=normalise)


def _unspent(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    ledger = PrivacyLedger(budget=p["EPSILON_TOTAL"])
    for t, eps in enumerate(_schedule(p, normalise=False), start=1):
        with ledger.sequential(f"iteration {t}"):
            ledger.charge("Laplace", epsilon=eps, sensitivity=1.0, scale=1.0 / eps)
    return ledger.remaining().epsilon


def _last_noise_std(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    box = (-np.ones(p["DIM"]), np.ones(p["DIM"]))
    scale = laplace_scale(lloyd_query_sensitivity(box).per_cluster,
                          _schedule(p, normalise=True)[-1])
    return math.sqrt(2.0) * scale / p["CLUSTER_SIZE"]


def _later_budget(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    eps, T = p["EPSILON_TOTAL"], p["ITERATIONS"]
    halving = schedules.halving(eps, T, normalise=False)[-1]
    series = schedules.series_sum(eps, T, normalise=False)[-1]
    return 1 if halving > series else 2 if series > halving else 3


def _rhos(p: Mapping[str, Any]) -> list[float]:
    return [p["RHO"]] * p["N_MECHANISMS"]


def _composed_rho(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return compose_rho_exact(_rhos(p), p["M_WORLDS"])


def _published_verdict(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    published = compose_rho_published(_rhos(p), p["M_WORLDS"])
    if published >= 1.0:
        return 2
    # Never option 3: the published bound is at least the composed one (the chapter's
    # exercise proves it for two mechanisms).
    return 1 if published >= compose_rho_exact(_rhos(p), p["M_WORLDS"]) else 3


ASSIGNMENT = Assignment(
    chapter=3,
    slug="composition",
    title="Composition, post-processing and the privacy ledger (chapter 3)",
    introduction=(
        "You account for DP-Lloyd runs with your own number of iterations `ITERATIONS`, "
        "clusters `K`, dimension `DIM` (records in $[-1, 1]^d$) and budgets, split a total "
        "budget `EPSILON_TOTAL` with your schedule `SCHEDULE`, and compose differential "
        "identifiability guarantees. The setup cell draws from your `SEED` the budgets "
        "`eps_clusters` of the clusters' counts in one iteration. You answer eight "
        "questions: six numbers that you compute in this notebook, with the library "
        "(`PrivacyLedger`, `schedules`) or by hand, and two multiple choices. Chapter 3 of "
        "the book (*Composition, post-processing and the privacy ledger*) has everything "
        "you need.\n\n"
        "Adjacency is add/remove unless a question says replace."),
    pools={"ITERATIONS": (3, 4, 5, 6, 8, 10), "K": (3, 4, 5), "DIM": (2, 3, 5, 8),
           "EPS_SUM": (0.04, 0.05, 0.08), "EPS_COUNT": (0.01, 0.02),
           "EPSILON_TOTAL": (0.5, 1.0, 2.0), "SCHEDULE": ("halving", "series_sum"),
           "CLUSTER_SIZE": (100, 200, 500), "M_WORLDS": (2, 3),
           "RHO": (0.55, 0.6, 0.65, 0.7), "N_MECHANISMS": (2, 3, 4)},
    setup=SETUP,
    questions=(
        Question(
            "run_cost",
            "A DP-Lloyd run on $[-1, 1]^d$ has `ITERATIONS` iterations and `K` clusters. In "
            "each iteration, each cluster releases its sum with the Laplace mechanism at "
            "budget `EPS_SUM` (sensitivity $d$) and its count at budget `EPS_COUNT` "
            "(sensitivity 1), as two separate releases. Record the run in a `PrivacyLedger` "
            "with the scopes it needs, and report its composed total $\\varepsilon$.",
            _run_cost,
            "Chapter 3, 'The privacy ledger' and the exercise on a split budget: iterations "
            "are sequential scopes, the clusters of one iteration a parallel scope with one "
            "part per cluster, and the two releases of one cluster compose sequentially.",
            points=2.0,
            solution=RUN_LEDGER),
        Question(
            "parallel_cost",
            "In one iteration, cluster $j$ releases only its count (sensitivity 1) with the "
            "Laplace mechanism at budget `eps_clusters[j]`. What does the iteration cost "
            "under add/remove adjacency?",
            _parallel_cost,
            "Chapter 3, 'Three rules', parallel composition: one added or removed record "
            "touches one cluster only.",
            solution=("ledger = PrivacyLedger()\n"
                      "with ledger.parallel(\"clusters\"):\n"
                      "    for j, e in enumerate(eps_clusters):\n"
                      "        with ledger.part(f\"cluster {j}\"):\n"
                      "            ledger.charge(\"Laplace\", epsilon=e, sensitivity=1,\n"
                      "                          scale=laplace_scale(1, e))\n"
                      "parallel_cost = ledger.total().epsilon")),
        Question(
            "replace_cost",
            "The same iteration, under **replace** adjacency: what is its true cost "
            "$\\varepsilon$, the largest privacy loss one replaced record can cause?",
            _replace_cost,
            "Chapter 3, 'Parallel composition, and why it needs add/remove': a replaced "
            "record can leave one cluster and join another; which two clusters are worst?",
            solution="replace_cost = np.sort(eps_clusters)[-2:].sum()"),
        Question(
            "unspent",
            "Split `EPSILON_TOTAL` over `ITERATIONS` iterations with the classic open-ended "
            "form of your `SCHEDULE` (`normalise=False`) and charge each iteration's budget to "
            "a `PrivacyLedger(budget=EPSILON_TOTAL)`. How much of the budget is left "
            "unspent?",
            _unspent,
            "Chapter 3, 'Allocating a budget over iterations': the schedules cell and "
            "PrivacyLedger.remaining(); the open-ended forms never spend the whole budget.",
            solution=("split = getattr(schedules, SCHEDULE)\n"
                      "unspent = EPSILON_TOTAL - split(EPSILON_TOTAL, ITERATIONS,\n"
                      "                                normalise=False).sum()")),
        Question(
            "last_noise_std",
            "Now use the library's default, normalised form of your `SCHEDULE` (it spends "
            "`EPSILON_TOTAL` exactly). In the last iteration, each cluster's (sum, count) is "
            "released with the Laplace mechanism at that iteration's budget, with the "
            "add/remove sensitivity of one cluster on $[-1, 1]^d$. What is the standard "
            "deviation of the noise on one coordinate of the sum, divided by a cluster size "
            "of `CLUSTER_SIZE` records (the noise of one centroid coordinate)?",
            _last_noise_std,
            "Chapter 3, 'Allocating a budget over iterations' (the figure's right panel): "
            "take the last budget of the normalised schedule, the Laplace scale "
            "sensitivity / budget, and a Laplace variable's standard deviation sqrt(2) b.",
            solution=("eps_last = getattr(schedules, SCHEDULE)(EPSILON_TOTAL, ITERATIONS)[-1]\n"
                      "box = (-np.ones(DIM), np.ones(DIM))\n"
                      "delta1 = lloyd_query_sensitivity(box).per_cluster\n"
                      "noise_scale = laplace_scale(delta1, eps_last)\n"
                      "last_noise_std = np.sqrt(2) * noise_scale / CLUSTER_SIZE")),
        Question(
            "later_budget",
            "Compare the classic open-ended halving ($\\varepsilon / 2^t$) and series-sum "
            "($\\varepsilon / (t(t+1))$) schedules at your `ITERATIONS` $= T$. Which gives "
            "the last iteration, $t = T$, the larger budget?",
            _later_budget,
            "Chapter 3, 'Allocating a budget over iterations': compute both last budgets "
            "for your T (schedules.halving and schedules.series_sum with normalise=False) "
            "rather than trusting how the two decay in the long run.",
            choices=("Halving.", "Series-sum.", "Both give the same budget."),
            solution=("h = schedules.halving(EPSILON_TOTAL, ITERATIONS, normalise=False)[-1]\n"
                      "s = schedules.series_sum(EPSILON_TOTAL, ITERATIONS, normalise=False)[-1]\n"
                      "later_budget = 1 if h > s else 2 if s > h else 3")),
        Question(
            "composed_rho",
            "`N_MECHANISMS` mechanisms are each `RHO`-differentially identifiable with "
            "`M_WORLDS` possible worlds. Compose them in $\\varepsilon$ (map each "
            "$\\rho_i$ to its $\\varepsilon$, add, map back): what bound on the adversary's "
            "posterior do you get?",
            _composed_rho,
            "Chapter 3, 'Composition under differential identifiability': the theorem from "
            "epsilon to rho and sequential composition (compose_rho_exact).",
            solution="composed_rho = compose_rho_exact([RHO] * N_MECHANISMS, M_WORLDS)"),
        Question(
            "published_verdict",
            "Shang et al. (2021) bound the same composition by $m^{q-1} \\prod_i \\rho_i$. "
            "For your `M_WORLDS`, `RHO` and `N_MECHANISMS`, what is that published bound?",
            _published_verdict,
            "Chapter 3, 'Composition under differential identifiability': compute "
            "compose_rho_published and compare it with 1 and with your previous answer.",
            choices=(("Below 1 and at least the bound from composing in $\\varepsilon$: valid, "
                      "but looser."),
                     "At least 1: valid, but it says nothing about the posterior.",
                     ("Below the bound from composing in $\\varepsilon$: it overstates the "
                      "privacy.")),
            solution=("published = compose_rho_published([RHO] * N_MECHANISMS, M_WORLDS)\n"
                      "published_verdict = 2 if published >= 1 else 1")),
    ),
    prepare=_prepare,
)
