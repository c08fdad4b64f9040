"""Chapter 1's assignment: the Laplace mechanism, the exponential mechanism and the sensitivity
of the DP-Lloyd query, on your own box, dimension, epsilon and seeded synthetic data.

The data (records, public centroids, a corner record, candidate utilities) are drawn in the
setup cell from the student's ``SEED``; ``prepare`` runs that same cell
(:func:`~dpkmeans_classroom.spec.run_setup`), so the references see exactly the student's
arrays. Every reference is computed with the
library: :func:`dpkmeans.privacy.sensitivity.lloyd_query_sensitivity`,
:func:`dpkmeans.compute.lloyd.lloyd_query`, :func:`dpkmeans.privacy.mechanisms.laplace_scale`,
:func:`dpkmeans.privacy.loss.laplace_privacy_loss` and
:func:`dpkmeans.privacy.mechanisms.exponential_probabilities`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.compute.lloyd import assign, lloyd_query
from dpkmeans.privacy.loss import laplace_privacy_loss
from dpkmeans.privacy.mechanisms import exponential_probabilities, laplace_scale
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans_classroom.spec import Assignment, Question, run_setup

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.compute.lloyd import assign, lloyd_query
from dpkmeans.privacy.mechanisms import exponential_probabilities, laplace_scale
from dpkmeans.privacy.loss import laplace_privacy_loss
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

rng = np.random.default_rng(SEED)
lower, upper = np.full(DIM, float(LOWER)), np.full(DIM, float(UPPER))  # the public box
X = rng.uniform(lower, upper, size=(50, DIM))  # your dataset D: 50 records in the box
C = rng.uniform(lower, upper, size=(K, DIM))  # public centroids
x_new = np.where(rng.random(DIM) < 0.5, lower, upper)  # a corner of the box
utility = rng.integers(0, 10, size=6).astype(float)  # 6 candidates' scores, sensitivity 1
print(f"{STUDENT}: box [{LOWER}, {UPPER}]^{DIM}, k = {K}, epsilon = {EPSILON}")
print("x_new =", x_new, " utility =", utility)"""


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The setup cell's arrays, and the replacement of ``X[0]`` by ``x_new`` (computed once)."""
    c = run_setup(SETUP, p)
    replaced = c["X"].copy()
    replaced[0] = c["x_new"]
    c["change"] = lloyd_query(replaced, c["C"]) - lloyd_query(c["X"], c["C"])
    c["same_cluster"] = bool(assign(c["X"][:1], c["C"])[0] == assign(c["x_new"][None], c["C"])[0])
    return c


def _box(c: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    return c["lower"], c["upper"]


def _sensitivity_add_remove(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return lloyd_query_sensitivity(_box(c), "add/remove").joint


def _scale_replace(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return laplace_scale(lloyd_query_sensitivity(_box(c), "replace").joint, p["EPSILON"])


def _replace_change(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(np.abs(c["change"]).sum())


def _clusters_touched(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return 1 if c["same_cluster"] else 2


def _privacy_loss(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(laplace_privacy_loss(p["Y_OUT"], 0.0, 1.0, laplace_scale(1.0, p["EPSILON"])))


def _true_epsilon(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # The proof of the Laplace theorem bounds the loss by Delta_1 / b, and the bound is
    # attained (the flat tails of the exact loss), so Delta_1 / b is the true epsilon.
    return 1.0 / (p["NOISE_FRACTION"] * laplace_scale(1.0, p["EPSILON"]))


def _best_probability(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(exponential_probabilities(c["utility"], 1.0, p["EPSILON"]).max())


def _noise_std(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return math.sqrt(2.0) * laplace_scale(120.0 / p["N_PEOPLE"], p["EPSILON"])


ASSIGNMENT = Assignment(
    chapter=1,
    slug="dp-laplace",
    title="The Laplace mechanism and the DP-Lloyd query (chapter 1)",
    introduction=(
        "You work with your own privacy parameter `EPSILON`, your own public box "
        "$[\\ell, u]^d$ (`LOWER`, `UPPER`, with $d$ = `DIM`), your own number of clusters `K` "
        "and a small synthetic dataset drawn from your `SEED` in the setup cell: 50 records "
        "`X` in the box, public centroids `C`, a corner record `x_new` and the utilities "
        "`utility` of six candidates. You answer eight questions: six numbers that you "
        "compute in this notebook, with the library or by hand, and two multiple choices. "
        "Chapter 1 of the book (*Differential privacy and the Laplace mechanism*) has "
        "everything you need.\n\n"
        "Adjacency is add/remove unless a question says replace."),
    pools={"EPSILON": (0.25, 0.5, 1.0, 2.0), "DIM": (2, 3, 4, 6), "LOWER": (-2, -1, 0),
           "UPPER": (1, 3), "K": (3, 4, 5), "Y_OUT": (-0.5, 0.2, 0.35, 0.7, 1.5),
           "NOISE_FRACTION": (0.25, 0.5, 0.8), "N_PEOPLE": (250, 500, 1000, 2000)},
    setup=SETUP,
    questions=(
        Question(
            "sensitivity_add_remove",
            "What is the $L_1$ sensitivity $\\Delta_1 f$ of the DP-Lloyd query "
            "$f(D) = (S_1, n_1, \\dots, S_k, n_k)$ for records in your public box "
            "$[\\ell, u]^d$ = `[LOWER, UPPER]^DIM`, under add/remove adjacency?",
            _sensitivity_add_remove,
            "Chapter 1, 'The sensitivity of the DP-Lloyd query': one added record is in one "
            "cluster, and H is the largest L1 norm of a record of the box, measured from the "
            "origin (not its width). See lloyd_query_sensitivity.",
            solution=("sensitivity_add_remove = lloyd_query_sensitivity((lower, upper),\n"
                      "                                                 \"add/remove\").joint")),
        Question(
            "scale_replace",
            "Under **replace** adjacency, what Laplace scale $b$ must be added to every "
            "coordinate of the whole query $f(D)$ (all $k$ clusters at once) so that one "
            "release is `EPSILON`-DP?",
            _scale_replace,
            "Chapter 1, 'The sensitivity of the DP-Lloyd query' (part 2 of the theorem: a "
            "replaced record can touch two clusters) and 'The Laplace mechanism' (b = "
            "sensitivity / epsilon).",
            solution=("delta_replace = lloyd_query_sensitivity((lower, upper), \"replace\").joint\n"
                      "scale_replace = laplace_scale(delta_replace, EPSILON)")),
        Question(
            "replace_change",
            "Let $D'$ be `X` with its first record `X[0]` replaced by `x_new`. With the public "
            "centroids `C`, compute $\\lVert f(D') - f(D) \\rVert_1$ for the DP-Lloyd query "
            "(`lloyd_query(X, C)` returns $f$ as a $k \\times (d + 1)$ array).",
            _replace_change,
            "Chapter 1, the brute-force check of the DP-Lloyd sensitivity: replace the record "
            "in a copy of X, call lloyd_query on both datasets with C, and sum the absolute "
            "differences of all entries.",
            points=2.0,
            solution=("X_replaced = X.copy()\n"
                      "X_replaced[0] = x_new\n"
                      "change = lloyd_query(X_replaced, C) - lloyd_query(X, C)\n"
                      "replace_change = np.abs(change).sum()")),
        Question(
            "clusters_touched",
            "In your replacement of the previous question, which statement is true?",
            _clusters_touched,
            "Compare the nearest centroids of X[0] and of x_new (assign), and look at which "
            "rows of the change are non-zero (chapter 1, the proof of the DP-Lloyd "
            "sensitivity theorem, part 2).",
            choices=(("One cluster changed: `X[0]` and `x_new` have the same nearest centroid, "
                      "so only that cluster's sum moved, by $\\lVert x - x' \\rVert_1$."),
                     ("Two clusters changed: one lost `X[0]` (its count fell by one) and "
                      "another gained `x_new` (its count rose by one)."),
                     "All $k$ clusters changed, because the centroids moved."),
            solution=("same = assign(X[:1], C)[0] == assign(x_new[None], C)[0]\n"
                      "clusters_touched = 1 if same else 2")),
        Question(
            "privacy_loss",
            "The Laplace mechanism releases a count ($\\Delta_1 f = 1$, $b = 1/\\varepsilon$ "
            "with $\\varepsilon$ = `EPSILON`) on neighbours with $f(D) = 0$ and $f(D') = 1$. "
            "What is the privacy loss $\\mathcal L_{D,D'}(y) = \\ln p_D(y) / p_{D'}(y)$ of the "
            "output $y$ = `Y_OUT`?",
            _privacy_loss,
            "Chapter 1, the proof of the Laplace mechanism theorem and the exercise on the "
            "privacy loss by hand; mind which dataset is in the numerator "
            "(laplace_privacy_loss).",
            solution=("privacy_loss = laplace_privacy_loss(Y_OUT, 0.0, 1.0,\n"
                      "                                    laplace_scale(1.0, EPSILON))")),
        Question(
            "true_epsilon",
            "A mechanism claims to release a count (sensitivity 1) with `EPSILON`-DP, but its "
            "Laplace noise has only `NOISE_FRACTION` times the scale that the Laplace "
            "mechanism theorem asks for. What is the smallest $\\varepsilon$ for which it is "
            "actually $\\varepsilon$-DP?",
            _true_epsilon,
            "Chapter 1, 'Checking the theorem from samples' (the mis-calibrated mechanism) and "
            "the proof of the Laplace theorem: the largest privacy loss is the sensitivity "
            "divided by the scale actually used, and it is attained.",
            solution="true_epsilon = 1.0 / (NOISE_FRACTION * laplace_scale(1.0, EPSILON))"),
        Question(
            "best_probability",
            "The exponential mechanism picks one of the six candidates scored by `utility` "
            "(sensitivity $\\Delta q = 1$) at your `EPSILON`. With what probability does it "
            "pick a candidate of the highest utility? (If several share the highest "
            "utility, give the probability of one of them.)",
            _best_probability,
            "Chapter 1, 'The exponential mechanism': mind the factor 2 in the exponent "
            "(exponential_probabilities).",
            solution="best_probability = exponential_probabilities(utility, 1.0, EPSILON).max()"),
        Question(
            "noise_std",
            "Ages lie in the public range $[0, 120]$ and the dataset has a public size "
            "$N$ = `N_PEOPLE` (replace adjacency). You release the mean age with the Laplace "
            "mechanism at `EPSILON`. What is the standard deviation of the noise?",
            _noise_std,
            "Chapter 1, the exercise on a noisy mean: first the sensitivity of the mean "
            "under replace, then the Laplace scale, then the standard deviation of a Laplace "
            "variable of that scale.",
            solution="noise_std = np.sqrt(2) * laplace_scale(120 / N_PEOPLE, EPSILON)"),
    ),
    prepare=_prepare,
)
