"""Chapter 7's assignment: DP-KCCM (Ni et al. 2021) on your own data, as published and corrected.

Each student runs DP-KCCM with their own dataset, epsilon, k and merge factor. The references
are computed by the library: the noise scale is read from the ledger of the student's run, the
leak of the paper's min-max scaling from the ledger of the as-published configuration
(:func:`dpkmeans.papers.dpkccm.study.study_config` with ``bounds="paper"``), the overspend of
the chapter's "forgot to split" copy from its ledger, and the schedules from
:mod:`dpkmeans.engine.schedules`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.compute.metrics import nicv
from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.engine.schedules import dpkccm_stepped, uniform
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.dpkccm.study import Point, study_config
from dpkmeans.papers.dpkccm.variants import allocation_nk
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

#: DP-KCCM's number of iterations (the paper's max_clustering).
T = 12

SETUP = """\
import warnings

import numpy as np

from dpkmeans.compute import metrics
from dpkmeans.engine import schedules
from dpkmeans.data import load
from dpkmeans.engine.loop import run
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.dpkccm.study import Point, study_config
from dpkmeans.papers.dpkccm.variants import allocation_nk

raw = load(DATASET)  # original units; raw.bounds are the public bounds of the registry
X = raw.scaled((-1, 1)).X  # clipped to the public bounds, then scaled to [-1, 1]^d
N, d = X.shape
box = (-np.ones(d), np.ones(d))
with warnings.catch_warnings():  # deliberate: the paper's scaling, to study its leak
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    paper = raw.with_paper_bounds()  # the data's own min and max as the bounds
X_paper = paper.scaled((-1, 1)).X
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, k = {K}, epsilon = {EPSILON}, "
      f"n = {MERGE_FACTOR}, iteration {ITERATION}, m = {CLUSTER_SIZE}")"""

#: The noise ratios (stepped over uniform) that the options of ``versus_uniform`` name.
VERSUS_UNIFORM = (2.0, 1.0, 2.0 / 3.0, 0.5)

#: The answer options of ``paper_ledger``, in the order the notebook numbers them.
PAPER_LEDGER_CHOICES = (
    "It composes to more than `EPSILON`: reading the data's range costs extra budget, and "
    "the ledger charges it.",
    "It composes to exactly `EPSILON` and `is_private` is true: the scaling is "
    "post-processing.",
    "It composes to exactly `EPSILON`, but it records a leak and `is_private` is false: no "
    "epsilon covers a box read off the data.",
    "It composes to less than `EPSILON`: the narrower box lowers the sensitivity.",
)


def _box(d: int) -> tuple[np.ndarray, np.ndarray]:
    return -np.ones(d), np.ones(d)


def _paper_data(raw: Any) -> Any:
    """The paper's min-max scaled copy of ``raw`` (its PrivacyLeakWarning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return raw.with_paper_bounds()


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The student's data, their DP-KCCM run, the as-published run and the broken copy."""
    raw = load(p["DATASET"])
    paper = _paper_data(raw)
    X = raw.scaled((-1, 1)).X
    n, d = X.shape
    k, eps, factor, seed = p["K"], p["EPSILON"], p["MERGE_FACTOR"], p["SEED"]
    dpkccm = run(X, allocation_nk(k, eps, _box(d), n=factor), seed)
    published = run(paper.scaled((-1, 1)).X,
                     study_config(Point("allocation_nk", k, eps, n=factor, bounds="paper"),
                                  _box(d), n), seed)
    forgot = allocation_nk(k, T * eps, _box(d), n=factor, schedule=np.full(T, eps))
    return {"raw": raw, "paper": paper, "X": X, "dpkccm": dpkccm, "published": published,
            "forgot": run(X, forgot, seed)}


def _iteration_entries(c: Mapping[str, Any], iteration: int) -> list[Any]:
    """The Laplace releases of one iteration in the ledger of the student's DP-KCCM run."""
    return [e for e in c["dpkccm"].ledger.entries
            if e.scope.startswith(f"iteration {iteration} ") and e.mechanism.startswith("Laplace")]


def _noise_scale(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    scales = {e.scale for e in _iteration_entries(c, p["ITERATION"])}
    if len(scales) != 1:
        raise ValueError(f"iteration {p['ITERATION']}: expected one noise scale, got {scales}")
    return scales.pop()


def _centroid_sd(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # first order, centroid at the origin: sigma_t = sqrt(2) b_t / m (chapter 7, the schedule)
    return float(np.sqrt(2.0) * _noise_scale(p, c) / p["CLUSTER_SIZE"])


def _nicv(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(nicv(c["X"], c["dpkccm"].centroids[0]))


def _minmax_shrink(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    public = np.ptp(np.asarray(c["raw"].bounds, dtype=float), axis=1)
    data = np.ptp(np.asarray(c["paper"].bounds, dtype=float), axis=1)
    return float(np.max(public / data))


def _paper_ledger(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    ledger = c["published"].ledger
    spent, eps = ledger.total().epsilon, p["EPSILON"]
    if spent > eps * (1 + 1e-9):
        return 1
    if spent < eps * (1 - 1e-9):
        return 4
    return 2 if ledger.is_private else 3


def _forgot_split_total(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["forgot"].ledger.total().epsilon


def _merge_vs_single(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # fixed by the first-order argument of "Why merging can cancel noise": the pooled sum holds
    # n independent draws, so its error is sqrt(n) times that of one release of the group
    return 3


def _versus_uniform(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    t = p["ITERATION"] - 1
    ratio = uniform(p["EPSILON"], T)[t] / dpkccm_stepped(p["EPSILON"], T)[t]  # sigma ratio
    for option, value in enumerate(VERSUS_UNIFORM, start=1):
        if np.isclose(ratio, value, rtol=1e-9):
            return option
    raise ValueError(f"iteration {t + 1}: noise ratio {ratio} is not an option")


ASSIGNMENT = Assignment(
    chapter=7,
    slug="dpkccm",
    title="DP-KCCM on your own data, as published and corrected (chapter 7)",
    introduction=(
        "You run DP-KCCM, the k-means with cluster merging of Ni et al. (2021), on your own "
        "dataset with your own budget `EPSILON`, number of clusters `K`, merge factor "
        "`MERGE_FACTOR` (the run holds `MERGE_FACTOR * K` clusters and merges them to `K`) "
        "and seed `SEED`, and answer eight questions about its noise, its privacy ledger and "
        "what the paper's version leaks. `ITERATION` and `CLUSTER_SIZE` are yours too. "
        "Chapter 7 of the book (*DP-KCCM: cluster merging and an adaptive budget*) has "
        "everything you need.\n\n"
        "The setup cell loads your data twice: `X` is clipped to the public bounds of the "
        "dataset's documentation and scaled to $[-1, 1]^d$, as in the book; `X_paper` is "
        "scaled by the data's own minimum and maximum, as in the paper. DP-KCCM runs "
        f"$T = {T}$ iterations with the stepped schedule, and adjacency is add/remove."),
    pools={"DATASET": ("iris", "wine", "blood", "heart"), "EPSILON": (0.25, 0.5, 1.0, 2.0),
           "K": (2, 3, 4), "MERGE_FACTOR": (2, 3, 4), "ITERATION": tuple(range(1, T + 1)),
           "CLUSTER_SIZE": (50, 100, 200, 500)},
    setup=SETUP,
    questions=(
        Question(
            "noise_scale",
            "DP-KCCM adds Laplace noise $\\mathrm{Lap}(b_t)$ to each of the $d + 1$ "
            "coordinates of every cluster's $(S_j, n_j)$ in iteration $t$. What is the scale "
            "$b_t$ in iteration `ITERATION` on your data's box $[-1, 1]^d$?",
            _noise_scale,
            "Chapter 7, 'The budget schedule' ('What it does to the noise'): the Laplace "
            "scale is the query's L1 sensitivity on your box (chapter 5) over the budget of "
            "that iteration (schedules.dpkccm_stepped); a run's ledger records it ('Privacy').",
            solution=("eps_t = schedules.dpkccm_stepped(EPSILON, 12)[ITERATION - 1]\n"
                      "noise_scale = (d + 1) / eps_t")),
        Question(
            "centroid_sd",
            "To first order, what is the standard deviation $\\sigma_t$ of the noise on one "
            "coordinate of the centroid of a cluster of $m$ = `CLUSTER_SIZE` records whose "
            "centroid is at the origin, in iteration `ITERATION` of DP-KCCM on your data?",
            _centroid_sd,
            "Chapter 7, 'The budget schedule' ('What it does to the noise'): the first-order "
            "formula for sigma_t, "
            "with the centroid coordinate c_i = 0 and the Laplace scale of the previous "
            "question (a Laplace variable of scale b has standard deviation sqrt(2) b).",
            solution="centroid_sd = np.sqrt(2) * noise_scale / CLUSTER_SIZE"),
        Question(
            "nicv",
            "Run DP-KCCM on `X`: `run(X, allocation_nk(K, EPSILON, box, n=MERGE_FACTOR), "
            "SEED)`, and report the NICV (`metrics.nicv`) of its released centroids, "
            "`result.centroids[0]`, on `X`. The same seed gives the same centroids, so your "
            "number can be checked exactly.",
            _nicv,
            "Run exactly the configuration in the question with your SEED on the X of the "
            "setup cell (chapter 7, 'Privacy' runs allocation_nk the same way), and pass the "
            "first replica's released centroids to metrics.nicv.",
            points=2.0,
            solution=("result = run(X, allocation_nk(K, EPSILON, box, n=MERGE_FACTOR), SEED)\n"
                      "nicv = metrics.nicv(X, result.centroids[0])")),
        Question(
            "minmax_shrink",
            "The paper scales every attribute by its minimum and maximum in the data "
            "(`paper.bounds`) instead of public bounds (`raw.bounds`). For each attribute, "
            "divide the width of the public interval by the width of the data's range: by "
            "how many times at most (over your attributes) is the paper's box narrower than "
            "the public one? On that attribute the same noise on the scaled data is that many "
            "times smaller in the original units.",
            _minmax_shrink,
            "Chapter 7, 'Privacy' ('What the theorem does not cover') and, in 'Ablations', "
            "'Public bounds "
            "versus the paper's min-max scaling': compare the widths of raw.bounds and "
            "paper.bounds attribute by attribute (each row is a lower and an upper bound).",
            solution=("widths = np.ptp(raw.bounds, axis=1) / np.ptp(paper.bounds, axis=1)\n"
                      "minmax_shrink = float(widths.max())")),
        Question(
            "paper_ledger",
            "Run DP-KCCM as the paper did, on `X_paper`, with the library's configuration of "
            "that setting:\n\n```python\npoint = Point(\"allocation_nk\", K, EPSILON, "
            "n=MERGE_FACTOR, bounds=\"paper\")\npublished = run(X_paper, study_config(point, "
            "box, N), SEED)\n```\n\nWhat does its ledger (`published.ledger`: `total()`, "
            "`is_private`, `to_frame()`) say?",
            _paper_ledger,
            "Chapter 7, 'Privacy' (the theorem needs a public box) and 'What the theorem does "
            "not cover'; read published.ledger.total(), published.ledger.is_private and the "
            "rows of published.ledger.to_frame() whose epsilon is 0.",
            choices=PAPER_LEDGER_CHOICES,
            solution=("point = Point(\"allocation_nk\", K, EPSILON, n=MERGE_FACTOR, "
                      "bounds=\"paper\")\n"
                      "published = run(X_paper, study_config(point, box, N), SEED)\n"
                      "print(published.ledger.total(), published.ledger.is_private)\n"
                      "paper_ledger = 3")),
        Question(
            "forgot_split_total",
            "The chapter audits a copy of DP-KCCM that declares `EPSILON` but \"forgot to "
            f"split\": it gives each of the {T} iterations the whole `EPSILON`. Build it as "
            f"`allocation_nk(K, {T} * EPSILON, box, n=MERGE_FACTOR, schedule=np.full({T}, "
            "EPSILON))`, run it on `X` with `SEED`, and report the epsilon its ledger composes "
            "(`ledger.total().epsilon`): what it really spends.",
            _forgot_split_total,
            "Chapter 7, 'Auditing DP-KCCM' (the copy that forgot to split) and 'Privacy': the "
            "iterations compose sequentially, and the clusters of one iteration in parallel.",
            solution=(f"forgot = allocation_nk(K, {T} * EPSILON, box, n=MERGE_FACTOR,\n"
                      f"                       schedule=np.full({T}, EPSILON))\n"
                      "forgot_split_total = run(X, forgot, SEED).ledger.total().epsilon")),
        Question(
            "merge_vs_single",
            "A group of $m$ records is split into $n$ = `MERGE_FACTOR` equal sub-clusters, "
            "each released once at the same budget, and the $n$ noisy centroids are merged "
            "with summed counts. Compared with one cluster holding all $m$ records released "
            "once at that budget, the merged centroid's error is, to first order:",
            _merge_vs_single,
            "Chapter 7, 'Why merging can cancel noise', and the proposition 'Merging pools "
            "the noisy statistics': count the independent noise draws in the pooled sum.",
            choices=(
                "About $1/\\sqrt{n}$ times as large: the $n$ independent noises cancel.",
                "About the same: the pooled noisy sum over the pooled noisy count is what one "
                "cluster would release.",
                "About $\\sqrt{n}$ times as large: the pooled sum carries $n$ independent "
                "noise draws instead of one.",
                "About $n$ times as large: each sub-centroid is $n$ times noisier."),
            solution="merge_vs_single = 3  # n independent draws: error ~ sqrt(n) x one release"),
        Question(
            "versus_uniform",
            "`average_nk` runs the same $n k$ clusters with the uniform schedule "
            f"$\\varepsilon/{T}$ per iteration. In iteration `ITERATION`, how does the noise "
            "standard deviation $\\sigma_t$ of a centroid coordinate under DP-KCCM's stepped "
            "schedule compare with the uniform schedule's, for the same cluster?",
            _versus_uniform,
            "Chapter 7, 'The budget schedule' ('What it does to the noise'): sigma_t is "
            "inversely proportional to the iteration's budget; compare "
            "schedules.dpkccm_stepped and schedules.uniform in your iteration.",
            choices=("Twice as large.", "The same.", "Two thirds as large.", "Half as large."),
            solution=("# stepped eps/24, eps/12, eps/8 in blocks of 4 against eps/12: sigma ratio\n"
                      "# 2, 1, 2/3 (sigma_t is proportional to 1 / eps_t)\n"
                      "versus_uniform = 1 if ITERATION <= 4 else 2 if ITERATION <= 8 else 3")),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
