"""Chapter 11's assignment: differential identifiability on your own rho, m and data.

The student converts between rho and epsilon, composes DI mechanisms exactly and by Shang
et al.'s Proposition 2, reads the noise of the corrected DI k-means from its ledger, judges the
paper's printed per-iteration rule, and fits DI k-prototypes on Heart. Every reference is
computed by the library (:mod:`dpkmeans.privacy.identifiability`,
:mod:`dpkmeans.papers.di.variants`, ``DPKMeans(algorithm="di")`` and ``DPKPrototypes``) for
the student's parameters, on the data of the setup cell: ``prepare`` runs that same cell
(:func:`~dpkmeans_classroom.spec.run_setup`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.api.mixed_estimator import DPKPrototypes
from dpkmeans.compute.metrics import nicv
from dpkmeans.papers.di import variants
from dpkmeans.privacy.identifiability import (
    compose_rho_exact,
    compose_rho_published,
    epsilon_from_rho,
)
from dpkmeans_classroom.spec import Assignment, Question, run_setup

__all__ = ["ASSIGNMENT"]

#: Worlds of a binary categorical attribute (the paper's m_c on Heart).
M_CATEGORICAL = 2

SETUP = """\
import numpy as np
import pandas as pd

from dpkmeans import DPKPrototypes
from dpkmeans.compute import metrics
from dpkmeans.engine import schedules
from dpkmeans.data import load
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.privacy.identifiability import (compose_rho_exact, compose_rho_published,
                                      epsilon_from_rho, rho_from_epsilon)
from dpkmeans.papers.di import variants

data = load(DATASET, scale=(-1, 1))  # numeric records in the public box [-1, 1]^d
X = data.X
N, d = X.shape
T = variants.ITERATIONS  # the halving iterations of DI k-means (the book's choice)

# Heart: numeric columns scaled to [0, 1] by the registry's public bounds (no data is read
# for them, so no PrivacyLeakWarning), categorical ones named
heart = load(MIXED, paper="di")
heart_X = np.asarray(heart.scaled((0.0, 1.0)).X)
frame = pd.DataFrame(heart_X, columns=heart.feature_names)
for j, name in enumerate(heart.categorical_names):
    frame[name] = pd.Categorical.from_codes(heart.categorical[:, j], heart.levels[j])
categorical = list(heart.categorical_names)
categories = [list(levels) for levels in heart.levels]
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, K = {K}; rho = {RHO} over m = {M} "
      f"worlds, rho_c = {RHO_C} over {M_C}; Heart: {len(frame)} records")"""

DI_FIT = ('DPKMeans(n_clusters=K, rho=RHO, m=M, bounds=(-1, 1), algorithm="di", '
          "random_state=SEED)")
KP_FIT = ("DPKPrototypes(n_clusters=2, rho=(RHO, RHO_C), m=(M, M_C), "
          "categorical=categorical, bounds=(0.0, 1.0), categories=categories, "
          "gamma=variants.GAMMA, random_state=SEED)")


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The setup cell's names (its ``X`` and Heart's ``frame``, ``categorical`` and
    ``categories``), the DI k-means fit and the DI k-prototypes fit (computed once)."""
    c = run_setup(SETUP, p)
    c["di"] = DPKMeans(n_clusters=p["K"], rho=p["RHO"], m=p["M"], bounds=(-1, 1),
                       algorithm="di", random_state=p["SEED"]).fit(c["X"])
    c["kp"] = DPKPrototypes(n_clusters=2, rho=(p["RHO"], p["RHO_C"]), m=(p["M"], p["M_C"]),
                            categorical=c["categorical"], bounds=(0.0, 1.0),
                            categories=c["categories"], gamma=variants.GAMMA,
                            random_state=p["SEED"]).fit(c["frame"])
    c["rule"] = variants.printed_rule(p["RHO"], p["M"], variants.ITERATIONS)
    return c


def _epsilon_rho(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return epsilon_from_rho(p["RHO"], p["M"])


def _rho_sequential(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return compose_rho_exact((p["RHO"], p["RHO"]), p["M"])


def _proposition_2(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    rhos = (p["RHO"], p["RHO"])
    bound, exact = compose_rho_published(rhos, p["M"]), compose_rho_exact(rhos, p["M"])
    if bound < exact * (1 - 1e-12):
        return 1  # never: the chapter proves the bound is never below the exact value (n = 2)
    return 3 if bound > 1 else 2


def _scale_first(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    noisy = [e for e in c["di"].ledger_.entries if e.scale > 0]
    return noisy[0].scale


def _nicv_di(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(nicv(c["X"], c["di"].cluster_centers_))


def _literal_rule(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    rho_1 = float(c["rule"].literal[0])
    if rho_1 > 1:
        return 1
    if rho_1 > p["RHO"]:
        return 2
    return 3 if rho_1 > 1 / p["M"] else 4


def _epsilon_kprototypes(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["kp"].epsilon_


def _rho_kprototypes(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["kp"].rho_


ASSIGNMENT = Assignment(
    chapter=11,
    slug="identifiability",
    title="Differential identifiability on your own rho and m (chapter 11)",
    introduction=(
        "Lee and Clifton's (2012) adversary knows every record but one and holds a uniform "
        "prior over `M` possible worlds; a mechanism is $\\rho$-DI when its posterior on the "
        "true world stays at most $\\rho$. You convert your own `RHO` to $\\varepsilon$ and "
        "back, compose DI mechanisms the right way and the way Shang et al. (2021) state it, "
        "read the noise of the corrected DI k-means on your dataset `DATASET` with `K` "
        "clusters, judge the paper's printed per-iteration rule, and fit DI k-prototypes on "
        "Heart with your `RHO` and categorical `RHO_C` (over `M_C` = 2 worlds). Every random "
        "draw comes from your `SEED`. Chapter 11 of the book (*Differential identifiability: "
        "DI k-means and k-prototypes*) has everything you need; chapter 3 defines DI.\n\n"
        "Adjacency is replace-one throughout, as DI assumes."),
    pools={"DATASET": ("iris", "wine", "blood"), "K": (2, 3, 4), "M": (21, 101, 1001, 10001),
           "RHO": (0.06, 0.1, 0.15, 0.2), "RHO_C": (0.6, 0.7, 0.8)},  # every RHO > 1 / M
    fixed={"M_C": M_CATEGORICAL, "MIXED": "heart"},
    setup=SETUP,
    questions=(
        Question(
            "epsilon_rho",
            "A mechanism is `RHO`-DI over your `M` possible worlds. Under Lee and Clifton's "
            "assumptions, it is $\\varepsilon$-DP under replace-one adjacency for which "
            "$\\varepsilon$?",
            _epsilon_rho,
            "Chapter 11, 'DI is DP with a change of variable': solve the theorem's "
            "rho(epsilon) for epsilon (identifiability.epsilon_from_rho). Mind m - 1, not m.",
            solution="epsilon_rho = epsilon_from_rho(RHO, M)"),
        Question(
            "rho_sequential",
            "You run two mechanisms, each `RHO`-DI over `M` worlds, on the same data. What is "
            "the exact DI guarantee $\\rho$ of the pair?",
            _rho_sequential,
            "Chapter 11, 'Composition done right': compose in epsilon (sequential composition "
            "adds the epsilons) and map back to rho once (compose_rho_exact).",
            solution="rho_sequential = rho_from_epsilon(2 * epsilon_rho, M)"),
        Question(
            "proposition_2",
            "Shang et al. (2021), Proposition 2, bound the same pair by "
            "$m^{n-1}\\prod_i \\rho_i$ (here $n = 2$). For your `RHO` and `M`, what is that "
            "bound worth?",
            _proposition_2,
            "Chapter 11, 'Composition done right' and its first exercise: compare "
            "compose_rho_published with the exact composition and with 1.",
            choices=("It is below the exact guarantee: it promises more privacy than the pair "
                     "has.",
                     "It is at least the exact guarantee and below 1: valid, but looser.",
                     "It is above 1: as a bound on a probability it says nothing."),
            solution=("bound = compose_rho_published((RHO, RHO), M)\n"
                      "proposition_2 = 1 if bound < rho_sequential else 3 if bound > 1 else 2")),
        Question(
            "scale_first",
            f"The corrected DI k-means, `{DI_FIT}`, converts `RHO` to $\\varepsilon$ once, "
            "spreads it over `T` iterations by the normalised halving schedule, and adds "
            "Laplace noise to every cluster's sum and count with the $L_1$ sensitivity of "
            "replace adjacency on $[-1, 1]^d$, $2(d + 1)$. What is the scale of the noise in "
            "its first iteration?",
            _scale_first,
            "Chapter 11, 'DI k-means and its per-iteration rule' and the table of the corrected "
            "algorithm: the scale is the sensitivity over the first iteration's share of "
            "epsilon (schedules.halving, normalised). You can check it in the fit's ledger_.",
            # the default rtol covers the ledger's scale, rounded to the discrete sampler's
            # grid (a relative change of about 1e-9)
            solution="scale_first = 2 * (d + 1) / schedules.halving(epsilon_rho, T)[0]"),
        Question(
            "nicv_di",
            f"Fit `{DI_FIT}` on `X` and report the NICV of its centroids on `X` "
            "(`metrics.nicv`). The same seed gives the same centroids, so your number can be "
            "checked exactly.",
            _nicv_di,
            "Fit exactly the estimator in the question, with your SEED, on the X of the setup "
            "cell, and pass its cluster_centers_ to metrics.nicv.",
            points=2.0,
            solution=("model = DPKMeans(n_clusters=K, rho=RHO, m=M, bounds=(-1, 1),\n"
                      "                 algorithm=\"di\", random_state=SEED).fit(X)\n"
                      "nicv_di = metrics.nicv(X, model.cluster_centers_)")),
        Question(
            "literal_rule",
            "The paper's printed per-iteration rule starts with "
            "$\\rho_1 = \\tfrac12 \\ln\\frac{(m-1)\\rho}{1-\\rho}$. Read literally, at your "
            "`RHO` and `M`, what is this $\\rho_1$?",
            _literal_rule,
            "Chapter 11, 'DI k-means and its per-iteration rule': rho_1 is epsilon / 2, a "
            "log-odds; compare it with 1, with rho and with the prior 1/m "
            "(variants.printed_rule gives it).",
            choices=("Above 1: not a probability, and no Laplace scale exists for it.",
                     "Between `RHO` and 1: a probability, but a weaker guarantee than the whole "
                     "fit is meant to give.",
                     "Between the prior $1/m$ and `RHO`: a usable first iteration.",
                     "At or below the prior $1/m$: it asks for infinite noise, or for none "
                     "that exists."),
            solution=("rho_1 = epsilon_rho / 2\n"
                      "literal_rule = (1 if rho_1 > 1 else 2 if rho_1 > RHO\n"
                      "                else 3 if rho_1 > 1 / M else 4)")),
        Question(
            "epsilon_kprototypes",
            f"Fit DI k-prototypes on Heart, `{KP_FIT}`, on `frame`. Shang et al. state the "
            "privacy of their k-prototypes as the numeric part's alone, treating the numeric "
            "and categorical parts as disjoint. What total $\\varepsilon$ is the corrected "
            "fit budgeted to satisfy (its `epsilon_`)?",
            _epsilon_kprototypes,
            "Chapter 11, 'DI k-prototypes' and its ledgers: both parts read the same records, "
            "so they compose sequentially; convert each rho with its own m.",
            solution=("kp = DPKPrototypes(n_clusters=2, rho=(RHO, RHO_C), m=(M, M_C),\n"
                      "                   categorical=categorical, bounds=(0.0, 1.0),\n"
                      "                   categories=categories, gamma=variants.GAMMA,\n"
                      "                   random_state=SEED).fit(frame)\n"
                      "epsilon_kprototypes = kp.epsilon_")),
        Question(
            "rho_kprototypes",
            "Report the guarantee of the whole k-prototypes fit of the previous question as a "
            "posterior bound $\\rho$ over your `M` worlds (its `rho_`).",
            _rho_kprototypes,
            "Chapter 11, 'Using it: DPKPrototypes': map the fit's total epsilon back with the "
            "numeric m (rho_from_epsilon). It cannot be smaller than the numeric part's RHO.",
            solution="rho_kprototypes = rho_from_epsilon(epsilon_kprototypes, M)"),
    ),
    prepare=_prepare,
    datasets=("DATASET", "MIXED"),
)
