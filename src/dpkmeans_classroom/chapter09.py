"""Chapter 9's assignment: colored Gaussian noise, its calibration, the paper's local
"possible Delta's" and the optimal covariance over a public box.

Every reference is computed by the library for the student's parameters: gamma* and the
authors' gamma_c with :mod:`dpkmeans.privacy.colored`, the leave-one-out Delta's of a seeded mixture
clustered as the authors' code does with :func:`dpkmeans.papers.colored.variants.local_deltas`,
and the box optimum with :func:`dpkmeans.privacy.colored.box_covariance`. No semidefinite program is
solved: the box optimum has a closed form (chapter 9, "The corrected mechanism"). The mixture
is drawn in the setup cell from the student's ``SEED``; ``prepare`` runs that same cell
(:func:`~dpkmeans_classroom.spec.run_setup`), so the references see the student's very arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.papers.colored import variants
from dpkmeans.privacy import colored
from dpkmeans.privacy.colored import constraint_check, gamma_ceds, gamma_pdp, white_covariance
from dpkmeans_classroom.spec import Assignment, Question, run_setup

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.privacy import colored
from dpkmeans.data import gaussian_mixture_dataset, load
from dpkmeans.engine.init import kmeans_plusplus
from dpkmeans.compute.lloyd import lloyd_reference
from dpkmeans.papers.colored import variants

# The local-sensitivity example: a seeded Gaussian mixture, clustered without privacy as the
# authors' code does (k-means++ on the records, then Lloyd's algorithm until nothing moves).
gen = np.random.default_rng(SEED)
mixture = gaussian_mixture_dataset(N_RECORDS, K, DIM, rng=gen, separation=4.0)
X = np.asarray(mixture.X, dtype=float)
C = lloyd_reference(X, kmeans_plusplus(X, K, gen), 100)  # the converged centroids (K, DIM)
upper = np.asarray(mixture.bounds)[:, 1]  # the upper corner of the mixture's public box

# Your dataset's public box, in the dataset's own units: one row [lower, upper] per attribute.
public_box = np.asarray(load(DATASET).bounds, dtype=float)
print(f"{STUDENT}: epsilon = {EPSILON}, delta = {DELTA}, K = {K}, DIM = {DIM}; "
      f"{DATASET} has d = {len(public_box)} attributes")"""

#: The model solution of the box questions, shared by the two that need the covariances.
BOX_SOLUTION = (
    "half = (public_box[:, 1] - public_box[:, 0]) / 2\n"
    "r = half / half.max()  # one common factor: the widest half-width becomes 1\n"
    "box = (-r, r)\n"
    "colored_cov = colored.box_covariance(box, gamma_star)\n"
    "white_cov = colored.white_covariance(colored.box_deltas(box), gamma_star)\n")


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The setup cell's names (the mixture ``X``, its centroids ``C``, its corner ``upper``,
    ``public_box``), gamma*, the mixture's local Delta's and the dataset's box covariances
    (once)."""
    c = run_setup(SETUP, p)
    c["gamma"] = gamma = colored.gamma_pdp(p["EPSILON"], p["DELTA"])
    c["labels"], c["D"] = variants.local_deltas(c["X"], c["C"])
    box = _own_units_box(c["public_box"])
    c["colored_cov"] = colored.box_covariance(box, gamma)
    c["white_cov"] = colored.white_covariance(colored.box_deltas(box), gamma)
    return c


def _own_units_box(public_box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box centred at 0 with half-widths in the dataset's units, scaled by one common
    factor so that the widest is 1 (the chapter's "Marketing, own units")."""
    half = (public_box[:, 1] - public_box[:, 0]) / 2.0
    r = half / half.max()
    return -r, r


def _gamma_star(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["gamma"]


def _gamma_factor(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return gamma_ceds(p["EPSILON"] * p["K"] * p["DIM"], p["DELTA"]) / c["gamma"]


def _ceds_conservative(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    inflated = p["EPSILON"] * p["K"] * p["DIM"]
    return 2 if gamma_ceds(inflated, p["DELTA"]) <= gamma_pdp(inflated, p["DELTA"]) else 3


def _max_local_delta(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(np.linalg.norm(c["D"], axis=1).max())


def _corner_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    X, labels, upper, K = c["X"], c["labels"], c["upper"], p["K"]
    means = np.stack([X[labels == j].mean(axis=0) for j in range(K)])
    nearest = int(np.argmin(np.linalg.norm(means - upper, axis=1)))
    added = np.zeros_like(means)  # f(X) - f(X + x*), labels frozen
    added[nearest] = (means[nearest] - upper) / (np.sum(labels == nearest) + 1)
    white = white_covariance(c["D"], c["gamma"])
    return constraint_check(added.reshape(1, -1), white, c["gamma"]).worst


def _box_trace_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(np.trace(c["colored_cov"]) / np.trace(c["white_cov"]))


def _narrow_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    narrow = int(np.argmin(np.diag(c["colored_cov"])[:-1]))  # the narrowest attribute's sum
    return float(c["colored_cov"][narrow, narrow] / c["white_cov"][narrow, narrow])


def _lemma5(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return 2  # fixed by theory: the chapter's proposition "Small Delta's do not bind"


ASSIGNMENT = Assignment(
    chapter=9,
    slug="colored",
    title="Colored Gaussian noise for centroids (chapter 9)",
    introduction=(
        "You calibrate colored Gaussian noise for your own `EPSILON` and `DELTA`, compare the "
        "exact calibration $\\gamma^*$ with the constant of the authors' code, show on a "
        "seeded example that the paper's \"possible $\\Delta$'s\" are a local sensitivity, and "
        "compute what the optimal covariance over a public box gains over white noise on your "
        "own dataset `DATASET`. The example dataset is a Gaussian mixture of `N_RECORDS` "
        "records with `K` clusters in `DIM` dimensions, drawn from your `SEED` in the setup "
        "cell, so your numbers can be checked exactly.\n\n"
        "Six answers are numbers, two are multiple choice. Chapter 9 of the book (*Colored "
        "Gaussian noise for centroids*), on Ravi, Scaglione and Peisert (2021), has everything "
        "you need; no semidefinite program has to be solved."),
    pools={"EPSILON": (0.1, 0.25, 0.5, 1.0), "DELTA": (1e-5, 1e-3),
           "K": (3, 4), "DIM": (2, 3, 4), "DATASET": ("iris", "wine", "blood", "heart")},
    fixed={"N_RECORDS": 200},
    setup=SETUP,
    questions=(
        Question(
            "gamma_star",
            "A release $y = f(X) + w$ with $w \\sim \\mathcal N(0, \\Sigma)$ is "
            "$(\\varepsilon, \\delta)$-PDP exactly when $s^2 = \\Delta^\\top \\Sigma^{-1} "
            "\\Delta \\le \\gamma^*(\\varepsilon, \\delta)$ for every possible change "
            "$\\Delta$. Compute $\\gamma^*$ at your `EPSILON` and `DELTA`: the $s^2$ at which "
            "the tail $\\Pr[|\\mathcal L| > \\varepsilon]$ of the privacy loss "
            "$\\mathcal L \\sim \\mathcal N(s^2/2, s^2)$ equals $\\delta$.",
            _gamma_star,
            "Chapter 9, 'Calibration: γ* and the authors' γ_c': the tail is colored.pdp_tail, "
            "it grows with s², and colored.gamma_pdp gives its root (or solve with brentq).",
            solution="gamma_star = colored.gamma_pdp(EPSILON, DELTA)"),
        Question(
            "gamma_factor",
            "The authors' code calibrates with $\\gamma_c = \\varepsilon^2 / (2 \\ln(2/\\delta))"
            "$ and calls it with $\\varepsilon K d$ in place of $\\varepsilon$. With your "
            "`EPSILON`, `DELTA`, `K` and $d$ = `DIM`, the constraint "
            "$s^2 \\le \\gamma_c(\\varepsilon K d, \\delta)$ allows an $s^2$ how many times "
            "$\\gamma^*(\\varepsilon, \\delta)$, the largest that your $(\\varepsilon, \\delta)$ "
            "permits?",
            _gamma_factor,
            "Chapter 9, 'Calibration: γ* and the authors' γ_c', the table of CEDS's settings: "
            "colored.gamma_ceds at the inflated epsilon, divided by γ* at your own epsilon.",
            solution=("gamma_factor = colored.gamma_ceds(EPSILON * K * DIM, DELTA) "
                      "/ gamma_star")),
        Question(
            "ceds_conservative",
            "Judge $\\gamma_c$ at the $\\varepsilon K d$ it is called with: at your "
            "parameters, is $\\gamma_c(\\varepsilon K d, \\delta) \\le "
            "\\gamma^*(\\varepsilon K d, \\delta)$?",
            _ceds_conservative,
            "Chapter 9, 'Calibration: γ* and the authors' γ_c': γ_c is conservative only up to "
            "the ε of colored.ceds_gamma_fails_from(δ); compare your εKd with it.",
            choices=(
                "Yes, always: $\\gamma_c$ drops the mean of the loss, so it is below "
                "$\\gamma^*$ at every $\\varepsilon$.",
                "Yes, here: $\\varepsilon K d$ is below the point where $\\gamma_c$ overtakes "
                "$\\gamma^*$, so $\\gamma_c$ is conservative at the inflated $\\varepsilon$.",
                "No: $\\varepsilon K d$ is past the point where $\\gamma_c$ overtakes "
                "$\\gamma^*$, so even the inflated $\\varepsilon$ does not hold with the "
                "stated $\\delta$."),
            solution=("inflated = EPSILON * K * DIM\n"
                      "conservative = (colored.gamma_ceds(inflated, DELTA)\n"
                      "                <= colored.gamma_pdp(inflated, DELTA))\n"
                      "ceds_conservative = 2 if conservative else 3")),
        Question(
            "max_local_delta",
            "The setup cell clusters the mixture `X` as the authors' code does; `C` are its "
            "centroids. Build the paper's \"possible $\\Delta$'s\": for each record $x_n$, the "
            "change $\\Delta_n = f(X) - f(X \\setminus \\{x_n\\}) \\in \\mathbb R^{Kd}$ of the "
            "stacked centroids when it is removed with every label frozen. What is the "
            "largest norm $\\max_n \\lVert \\Delta_n \\rVert$?",
            _max_local_delta,
            "Chapter 9, 'The paper's \"possible Δ's\" are a local sensitivity': "
            "variants.local_deltas(X, C) labels the records and returns one Δ per row.",
            solution=("labels, D = variants.local_deltas(X, C)\n"
                      "max_local_delta = np.linalg.norm(D, axis=1).max()")),
        Question(
            "corner_ratio",
            "White noise fitted to these local $\\Delta$'s has "
            "$\\sigma^2 = \\max_n \\lVert \\Delta_n \\rVert^2 / \\gamma^*$ "
            "(`colored.white_covariance`, at your $\\gamma^*$). Now *add* one record $x^*$ "
            "at the corner `upper` of the mixture's public box. It joins the cluster $k$ "
            "whose centroid (the mean of its records) is nearest to $x^*$ and, labels frozen, "
            "changes the centroid vector by $\\Delta = e_k \\otimes (c_k - x^*)/(|C_k| + 1)$. "
            "What is $s^2 / \\gamma^*$ for this $\\Delta$ under that white noise? (A value "
            "above 1 breaks $(\\varepsilon, \\delta)$-PDP.)",
            _corner_ratio,
            "Chapter 9, 'The paper's \"possible Δ's\" are a local sensitivity', the record "
            "added at the box corner; colored.constraint_check gives s²/γ for a set of Δ's.",
            points=2.0,
            solution=("means = np.stack([X[labels == j].mean(axis=0) for j in range(K)])\n"
                      "k = int(np.argmin(np.linalg.norm(means - upper, axis=1)))\n"
                      "Delta_add = np.zeros((K, DIM))\n"
                      "Delta_add[k] = (means[k] - upper) / (np.sum(labels == k) + 1)\n"
                      "white = colored.white_covariance(D, gamma_star)\n"
                      "check = colored.constraint_check(Delta_add.reshape(1, -1), white, "
                      "gamma_star)\n"
                      "corner_ratio = check.worst")),
        Question(
            "box_trace_ratio",
            "The corrected mechanism releases each cluster's centred $(S_j - n_j m, n_j)$ over "
            "a public box. Keep your dataset in its own units, with one common factor that "
            "maps the widest attribute to half-width 1: $r_i = w_i / \\max_j w_j$, where "
            "$w_i$ are the half-widths of `public_box`, and $r_0 = 1$ for the count. What is "
            "$\\operatorname{tr} \\Sigma^\\star / \\operatorname{tr} \\Sigma_{\\text{white}}$, "
            "the optimal (box) covariance's trace over white noise's?",
            _box_trace_ratio,
            "Chapter 9, 'The corrected mechanism: colored noise on DPLloyd's statistics': the "
            "theorem on the optimal covariance over a public box and its corollary "
            "(colored.box_covariance, colored.box_deltas, colored.white_covariance).",
            solution=BOX_SOLUTION + ("box_trace_ratio = np.trace(colored_cov) "
                                     "/ np.trace(white_cov)")),
        Question(
            "narrow_ratio",
            "On the same box, take the narrowest attribute (the smallest $r_i$, $i \\ge 1$). "
            "What is the variance of the optimal colored noise on its sum divided by the "
            "variance of white noise on it?",
            _narrow_ratio,
            "Chapter 9, the per-coordinate table after the corollary on the gain of colored "
            "noise: compare the diagonals of the two covariances at the narrowest attribute.",
            solution=BOX_SOLUTION + (
                "narrow = int(np.argmin(r))\n"
                "narrow_ratio = colored_cov[narrow, narrow] / white_cov[narrow, narrow]")),
        Question(
            "lemma5",
            "The paper's Lemma 5 says which constraints $\\Delta_n^\\top \\Psi \\Delta_n \\le "
            "\\gamma$ are tight at the optimum of its eq. 11 (minimal $\\operatorname{tr} "
            "\\Psi^{-1}$). What does the chapter show?",
            _lemma5,
            "Chapter 9, 'The optimal covariance and the paper's Lemma 5': the proposition on "
            "which Δ's bind, and the norm ranks of the tight constraints.",
            choices=(
                "Lemma 5 is right: the $Kd$ smallest $\\Delta$'s bind, because small changes "
                "need the most precise noise.",
                "The outermost, largest $\\Delta$'s bind. A $\\Delta_n$ inside the convex hull "
                "of the others and their negatives never binds, and the optimum on the "
                "smallest $\\Delta$'s breaks the constraints it ignored.",
                "Every one of the $N$ constraints is tight at the optimum, so there are "
                "exactly $N$ non-zero multipliers."),
            solution="lemma5 = 2  # small Δ's lie inside the hull of the others: never tight"),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
