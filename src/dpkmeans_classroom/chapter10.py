"""Chapter 10's assignment: budget schedules, APDPk-means's progression and its branches.

Every reference is computed by the library for the student's parameters: Su's minimum
epsilon_m with :func:`dpkmeans.engine.schedules.su_epsilon_m`, APDP's plans with
:func:`dpkmeans.papers.apdp.variants.plan`, the published method's spend from a seeded run of
the engine (:func:`dpkmeans.engine.loop.run`), and the planned noise with
:func:`dpkmeans.papers.apdp.noise_profile.centroid_noise_sd`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.papers.apdp import variants
from dpkmeans.papers.apdp.noise_profile import centroid_noise_sd
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.engine import schedules
from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.papers.apdp.noise_profile import centroid_noise_sd
from dpkmeans.papers.apdp import variants

T_M, RHO = variants.MAX_ITERATIONS, variants.RHO  # the note's cap t_m = 10 and rho = 0.45
data = load(DATASET, scale=(0, 1))  # clipped to the public bounds, then scaled to [0, 1]^d
X = np.asarray(data.X)
N, d = data.public_n_records, X.shape[1]  # the record count is public here
box = (np.zeros(d), np.ones(d))
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, K = {K}, epsilon = {EPSILON}; "
      f"survey of N_SURVEY = {N_SURVEY} records")"""

PUBLISHED = ("variants.as_published(K, EPSILON, box, n_records=N, "
             "data_derived_bounds=False)")

#: The model solution's plan of the survey, shared by the questions that need it.
SURVEY_PLAN = "survey = variants.plan(EPSILON, N_SURVEY, K, d, corrected=True)\n"


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset's plans, one seeded run of the published method, the survey's plan."""
    data = load(p["DATASET"], scale=(0, 1))
    X = np.asarray(data.X)
    n, d, k, eps = data.public_n_records, X.shape[1], p["K"], p["EPSILON"]
    published = variants.plan(eps, n, k, d, corrected=False)
    if published.branch != "fallback":  # the prompt says so: keep the pools small-data
        raise ValueError(f"chapter 10: the published progression runs on {p['DATASET']} at "
                         f"epsilon = {eps}; the fallback question needs the fallback")
    box = (np.zeros(d), np.ones(d))
    config = variants.as_published(k, eps, box, n_records=n, data_derived_bounds=False)
    spent = float(run(X, config, p["SEED"]).spent[0])
    return {"d": d, "published": published, "spent": spent,
            "survey": variants.plan(eps, p["N_SURVEY"], k, d, corrected=True)}


def _first_last(schedule: np.ndarray) -> float:
    """A schedule's first share over its last (its last noise over its first)."""
    return float(schedule[0] / schedule[-1])


def _epsilon_m(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["published"].epsilon_m


def _fallback_fraction(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(c["published"].schedule[0] / c["published"].epsilon_m)


def _published_spent(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["spent"]


def _published_verdict(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return 2 if c["spent"] <= p["EPSILON"] * (1 + 1e-9) else 4


def _corrected_iterations(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["survey"].iterations


def _first_noise_sd(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    d = c["d"]
    config = variants.corrected(p["K"], p["EPSILON"], (np.zeros(d), np.ones(d)),
                                n_records=p["N_SURVEY"])
    return float(centroid_noise_sd(config, p["N_SURVEY"] / p["K"], offset=p["OFFSET"])[0])


def _noise_growth(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return _first_last(c["survey"].schedule)


def _sawtooth(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    raised = variants.plan(p["RAISE"] * p["EPSILON"], p["N_SURVEY"], p["K"], c["d"],
                           corrected=True)
    before, after = _first_last(c["survey"].schedule), _first_last(raised.schedule)
    if after > before * (1 + 1e-9):
        return 1
    return 2 if after < before * (1 - 1e-9) else 3


ASSIGNMENT = Assignment(
    chapter=10,
    slug="schedules",
    title="Budget schedules and APDPk-means (chapter 10)",
    introduction=(
        "You plan APDPk-means's budget schedule, as published and corrected, for your own "
        "dataset `DATASET`, number of clusters `K` and budget `EPSILON`, run the published "
        "method once with your `SEED` and read what its ledger charges, then plan the "
        "corrected method for a larger survey of `N_SURVEY` records with the same $d$ "
        "attributes and `K`. Six answers are numbers that you compute in this notebook, "
        "with the library or by hand; two are multiple choice.\n\n"
        "Chapter 10 of the book (*Budget schedules: APDPk-means and every way to split "
        "epsilon over iterations*) has everything you need. Records are clipped to the public "
        "bounds and scaled to $[0, 1]^d$ (the setup cell), adjacency is add/remove, the "
        "record counts are public, and Su et al.'s (2016) $\\rho$ is 0.45 throughout."),
    pools={"DATASET": ("iris", "wine", "blood", "heart"), "K": (2, 3, 4),
           "EPSILON": (0.5, 1.0, 2.0), "N_SURVEY": (10_000, 20_000, 50_000)},
    # RAISE = 1.3: no two iteration counts <= 10 are in that ratio, so a raised budget never
    # keeps the first/last ratio 2r/T - 1 exactly (as 1.25 does from T = 4 to T = 5).
    fixed={"OFFSET": 0.25, "RAISE": 1.3},
    setup=SETUP,
    questions=(
        Question(
            "epsilon_m",
            "What is Su et al.'s minimum per-iteration budget $\\varepsilon_m$ for your "
            "dataset ($N$ and $d$ of the setup cell) with `K` clusters and $\\rho = 0.45$?",
            _epsilon_m,
            "Chapter 10, 'The schedules', the definition of Su's rule (DPLloyd-Impr): "
            "schedules.su_epsilon_m with rho=RHO.",
            solution="epsilon_m = schedules.su_epsilon_m(N, K, d, rho=RHO)"),
        Question(
            "fallback_fraction",
            "As published, APDPk-means runs its progression over $t_m = 10$ iterations only "
            "if $\\varepsilon / \\varepsilon_m > t_m$; otherwise it falls back to "
            "$\\varepsilon / t_m$ in each of the $t_m$ iterations. On a dataset as small as "
            "yours, at your `EPSILON`, the fallback runs (check it with `variants.plan`). "
            "Its per-iteration share is what fraction of $\\varepsilon_m$?",
            _fallback_fraction,
            "Chapter 10, 'Which branch runs': the published branch condition and the "
            "fallback's share, as variants.plan(..., corrected=False) returns them.",
            solution=("plan = variants.plan(EPSILON, N, K, d, corrected=False)\n"
                      "assert plan.branch == \"fallback\"\n"
                      "fallback_fraction = plan.schedule[0] / plan.epsilon_m")),
        Question(
            "published_spent",
            f"Run APDPk-means as published once on `X`: the configuration `{PUBLISHED}` "
            "(given the public bounds, so that only the note's other flaws remain), run with "
            "`run(X, config, SEED)`. What $\\varepsilon$ did the run spend, as its ledger "
            "charges it (`result.spent`)? The same seed gives the same run, so your number "
            "can be checked exactly.",
            _published_spent,
            "Chapter 10, 'The published method, audited': run exactly the configuration of "
            "the question with your SEED and one replica, and read result.spent.",
            points=2.0,
            solution=("config = variants.as_published(K, EPSILON, box, n_records=N,\n"
                      "                               data_derived_bounds=False)\n"
                      "result = run(X, config, SEED)\n"
                      "published_spent = float(result.spent[0])")),
        Question(
            "published_verdict",
            "Compare what your published run spent with `EPSILON` (up to floating-point "
            "rounding). Which statement is right?",
            _published_verdict,
            "Chapter 10, 'The published method, audited': what the stopping test decides, "
            "what the noisy-record initial centres cost, and what a leak in the ledger means.",
            choices=(
                "It spent at most `EPSILON`, so the run is `EPSILON`-DP.",
                "It spent at most `EPSILON`, because the stopping test, which reads the "
                "private partition, ended the run early; the run is still not private, "
                "since the ledger records leaks.",
                "It spent more than `EPSILON` because the schedule's shares add up to more "
                "than `EPSILON`.",
                "It spent more than `EPSILON`: the noisy-record initial centres are charged "
                "on top of the schedule, and the run is not private anyway, since the "
                "ledger records leaks."),
            solution=("print(result.ledger.is_private, result.iterations_run)\n"
                      "published_verdict = 2 if published_spent <= EPSILON * (1 + 1e-9) else 4")),
        Question(
            "corrected_iterations",
            "Now a survey collects the same $d$ attributes from a public `N_SURVEY` records. "
            "How many iterations $T$ does the *corrected* APDPk-means run there, with `K` "
            "clusters at `EPSILON`?",
            _corrected_iterations,
            "Chapter 10, 'Which branch runs' and the corollary on the sawtooth: the branches "
            "of schedules.apdp_plan, through variants.plan(..., corrected=True).",
            rtol=0.0,
            solution=SURVEY_PLAN + "corrected_iterations = survey.iterations"),
        Question(
            "first_noise_sd",
            "For that corrected run on $[0, 1]^d$, what is the planned first-order standard "
            "deviation of the noise on one centroid coordinate after the *first* iteration, "
            "for a cluster of $N_{\\text{survey}}/K$ records whose coordinate lies `OFFSET` "
            "from the box's midpoint?",
            _first_noise_sd,
            "Chapter 10, 'How much noise a budget buys': the proposition on the first-order "
            "noise of a centroid coordinate (joint Laplace release, Δ = d/2 + 1), or "
            "centroid_noise_sd on variants.corrected(K, EPSILON, box, n_records=N_SURVEY).",
            solution=("config_survey = variants.corrected(K, EPSILON, box, "
                      "n_records=N_SURVEY)\n"
                      "profile = centroid_noise_sd(config_survey, N_SURVEY / K, "
                      "offset=OFFSET)\n"
                      "first_noise_sd = profile[0]")),
        Question(
            "noise_growth",
            "In that corrected run, how many times as noisy as the first iteration is the "
            "last one (the ratio of their planned noise standard deviations)?",
            _noise_growth,
            "Chapter 10, 'APDP's arithmetic progression': the noise of an iteration is the "
            "reciprocal of its budget, and item 3 of the theorem on the reversed "
            "progression gives the first/last ratio.",
            solution=SURVEY_PLAN + ("noise_growth = survey.schedule[0] "
                                    "/ survey.schedule[-1]")),
        Question(
            "sawtooth",
            "A colleague raises the survey's budget to `RAISE` × `EPSILON`, with the same "
            "$N_{\\text{survey}}$, $d$ and `K`. What happens to the corrected schedule's "
            "first/last ratio?",
            _sawtooth,
            "Chapter 10, the corollary 'The corrected progression is a sawtooth': compare "
            "the plans at the two budgets (Su's T can step up with epsilon).",
            choices=("It rises: the schedule gets steeper.",
                     "It falls: the schedule gets flatter, although the budget grew.",
                     "It stays the same."),
            solution=(SURVEY_PLAN
                      + "raised = variants.plan(RAISE * EPSILON, N_SURVEY, K, d, "
                      "corrected=True)\n"
                      "before = survey.schedule[0] / survey.schedule[-1]\n"
                      "after = raised.schedule[0] / raised.schedule[-1]\n"
                      "if np.isclose(after, before, rtol=1e-9):\n"
                      "    sawtooth = 3\n"
                      "else:\n"
                      "    sawtooth = 1 if after > before else 2")),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
