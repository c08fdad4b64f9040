"""Chapter 5's assignment: DPLloyd on your own dataset, epsilon, k and T.

Each reference is computed by the library on the student's data: the sensitivity and the
noise scale are read from the ledger of the fit the student is asked to run, T from Su's rule
and diffprivlib's overspend from :func:`dpkmeans.papers.su.study.diffprivlib_epsilon_factor`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.metrics import nicv
from dpkmeans.data import load
from dpkmeans.engine.schedules import su_iterations
from dpkmeans.papers.su.study import diffprivlib_epsilon_factor
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.compute import metrics
from dpkmeans.engine import schedules
from dpkmeans.data import load
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.papers.su.study import diffprivlib_epsilon_factor
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

data = load(DATASET, scale=(-1, 1))  # clipped to the public bounds, then scaled to [-1, 1]^d
X = data.X
N, d = X.shape
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, k = {K}, epsilon = {EPSILON}, T = {ITERATIONS}")"""

FIT = ("DPKMeans(n_clusters=K, epsilon=EPSILON, bounds=(-1, 1), algorithm=\"dplloyd\", "
       "max_iter=ITERATIONS, random_state=SEED)")


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The student's data and the DPLloyd fit the questions ask about (computed once)."""
    X = load(p["DATASET"], scale=(-1, 1)).X
    model = DPKMeans(n_clusters=p["K"], epsilon=p["EPSILON"], bounds=(-1, 1), algorithm="dplloyd",
                     max_iter=p["ITERATIONS"], random_state=p["SEED"]).fit(X)
    first = [e for e in model.ledger_.entries if e.scope.startswith("iteration 1 ")]
    return {"X": X, "model": model, "first_iteration": first}


def _sensitivity(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["first_iteration"][0].sensitivity


def _epsilon_per_iteration(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["first_iteration"][0].epsilon


def _noise_scale(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["first_iteration"][0].scale


def _su_iterations(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    n, d = c["X"].shape
    return su_iterations(p["EPSILON"], n, p["K"], d)


def _diffprivlib_factor(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return diffprivlib_epsilon_factor(c["X"].shape[1])


def _more_iterations(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return 3  # the scale (d + 1) T / epsilon doubles with T


def _nicv(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(nicv(c["X"], c["model"].cluster_centers_))


ASSIGNMENT = Assignment(
    chapter=5,
    slug="dplloyd",
    title="DPLloyd on your own data (chapter 5)",
    introduction=(
        "You run DPLloyd, the textbook private Lloyd's algorithm, on your own dataset with your "
        "own privacy budget `EPSILON`, number of clusters `K`, number of iterations "
        "`ITERATIONS` and seed `SEED`, and answer seven questions about it. Six answers are "
        "numbers that you compute in this notebook, with the library or by hand; one is a "
        "multiple choice. Chapter 5 of "
        "the book (*DPLloyd and DPLloyd-Impr*) has everything you need.\n\n"
        "Records are clipped and scaled to the public box $[-1, 1]^d$ (the setup cell), and "
        "adjacency is add/remove."),
    pools={"DATASET": ("iris", "wine", "blood"), "EPSILON": (0.25, 0.5, 1.0, 2.0),
           "K": (3, 4, 5), "ITERATIONS": (4, 5, 6)},
    setup=SETUP,
    questions=(
        Question(
            "sensitivity",
            "What is the $L_1$ sensitivity of DP-Lloyd's query (every cluster's coordinate sums "
            "and its count) on your data's box $[-1, 1]^d$?",
            _sensitivity,
            "One record is in one cluster: it moves that cluster's d sums by at most its largest "
            "L1 norm, and its count by 1 (chapter 5, 'DPLloyd'; chapter 1, the sensitivity of "
            "the DP-Lloyd query).",
            solution="sensitivity = lloyd_query_sensitivity((-np.ones(d), np.ones(d))).joint"),
        Question(
            "epsilon_per_iteration",
            "DPLloyd spends `EPSILON` equally over its `ITERATIONS` iterations. What is the "
            "budget of one iteration?",
            _epsilon_per_iteration,
            "The iterations compose sequentially, so their budgets add up to epsilon "
            "(chapter 3).",
            solution="epsilon_per_iteration = EPSILON / ITERATIONS"),
        Question(
            "noise_scale",
            "What is the scale $b$ of the Laplace noise added to each coordinate of a "
            "cluster's sum in one DPLloyd iteration?",
            _noise_scale,
            "The Laplace mechanism's scale is the query's L1 sensitivity divided by the "
            "budget spent on it (chapter 1).",
            solution="noise_scale = (d + 1) / (EPSILON / ITERATIONS)"),
        Question(
            "iterations_impr",
            "DPLloyd-Impr chooses the number of iterations by Su et al.'s rule from epsilon, "
            "$N$ (public here), $k$ and $d$. How many iterations would it run on your data?",
            _su_iterations,
            "Use `schedules.su_iterations` with your EPSILON, N, K and d (chapter 5, "
            "'How many iterations').",
            rtol=0.0,
            solution="iterations_impr = schedules.su_iterations(EPSILON, N, K, d)"),
        Question(
            "diffprivlib_factor",
            "diffprivlib's KMeans swaps Su et al.'s count and sum shares. For your $d$, what is "
            "its true spend per iteration divided by the budget it declares?",
            _diffprivlib_factor,
            "Chapter 5, 'diffprivlib's split is the wrong way round': the true spend is the "
            "count's share plus d times the per-dimension share, after the swap.",
            solution="diffprivlib_factor = diffprivlib_epsilon_factor(d)"),
        Question(
            "nicv",
            f"Fit `{FIT}` on `X`, and report the NICV of its centroids on `X` "
            "(`metrics.nicv`). The same seed gives the same centroids, so your number can be "
            "checked exactly.",
            _nicv,
            "Fit exactly the estimator in the question, with your SEED, on the X of the setup "
            "cell, and pass its cluster_centers_ to metrics.nicv.",
            points=2.0,
            solution=("model = DPKMeans(n_clusters=K, epsilon=EPSILON, bounds=(-1, 1),\n"
                      "                 algorithm=\"dplloyd\", max_iter=ITERATIONS,\n"
                      "                 random_state=SEED).fit(X)\n"
                      "nicv = metrics.nicv(X, model.cluster_centers_)")),
        Question(
            "more_iterations",
            "Keep your `EPSILON` and run DPLloyd for twice as many iterations. What happens to "
            "the Laplace noise added to each cluster's sums in one iteration?",
            _more_iterations,
            "The budget of one iteration is EPSILON / T, and the noise scale is the sensitivity "
            "divided by that budget (chapter 5, 'DPLloyd').",
            choices=("Its scale halves: more iterations average the noise away.",
                     "Its scale stays the same: the sensitivity does not depend on T.",
                     "Its scale doubles: each iteration gets half the budget."),
            solution="more_iterations = 3  # b = (d + 1) T / EPSILON grows linearly with T"),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
