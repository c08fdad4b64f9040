"""Chapter 4's assignment: Lloyd's algorithm and its metrics on your own dataset and start.

The student runs non-private Lloyd from a data-independent start (uniform or sphere packing,
drawn from their seed) and measures the result the way chapter 4 (*k-means and how to measure
it*) does: SSE, NICV and the unsquared NICV, empty clusters, the relative NICV of a perturbed
copy, and the four F-measures against the dataset's known classes. Every reference is computed
by :mod:`dpkmeans.compute.lloyd` and :mod:`dpkmeans.compute.metrics` on the student's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.compute.lloyd import assign, batched_stats, lloyd_reference
from dpkmeans.compute.metrics import f_measure, nicv, nicv_unsquared, relative_nicv, sse
from dpkmeans.data import load
from dpkmeans.engine.init import sphere_packing, uniform_box
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

SETUP = """\
import numpy as np

from dpkmeans.data import load
from dpkmeans.engine.init import sphere_packing, uniform_box
from dpkmeans.compute.lloyd import assign, batched_stats, lloyd_reference
from dpkmeans.compute.metrics import f_measure, nicv, nicv_unsquared, relative_nicv, sse

data = load(DATASET, scale=(-1, 1))  # clipped to the public bounds, then scaled to [-1, 1]^d
X, classes = data.X, data.target  # the records and their known classes
N, d = X.shape
bounds = (-np.ones(d), np.ones(d))
rng = np.random.default_rng(SEED)
if INIT == "sphere packing":
    start = sphere_packing(bounds, K, rng)  # your initial centroids, shape (K, d)
else:
    start = uniform_box(bounds, K, rng)
noise = rng.standard_normal((K, d))  # a fixed perturbation, for the relative NICV
print(f"{STUDENT}: {DATASET}, N = {N}, d = {d}, {len(np.unique(classes))} classes; K = {K}, "
      f"{INIT} start, T = {ITERATIONS}, SIGMA = {SIGMA}")"""

#: The four F-measures of chapter 4: (weights, matching).
F_FORMS = (("reference", "hungarian"), ("reference", "larsen-aone"),
           ("predicted", "hungarian"), ("predicted", "larsen-aone"))


def _start(p: Mapping[str, Any], d: int, rng: np.random.Generator) -> np.ndarray:
    """The student's initial centroids, drawn as the setup cell draws them."""
    bounds = (-np.ones(d), np.ones(d))
    if p["INIT"] == "sphere packing":
        return sphere_packing(bounds, p["K"], rng)
    return uniform_box(bounds, p["K"], rng)


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The student's data, start, Lloyd output, its partition and the four F-measures."""
    data = load(p["DATASET"], scale=(-1, 1))
    X = data.X
    rng = np.random.default_rng(p["SEED"])
    start = _start(p, X.shape[1], rng)
    noise = rng.standard_normal((p["K"], X.shape[1]))
    final = lloyd_reference(X, start, p["ITERATIONS"])
    labels = assign(X, final)
    f = {form: f_measure(data.target, labels, weights=form[0], matching=form[1])
         for form in F_FORMS}
    return {"X": X, "start": start, "noise": noise, "final": final, "f": f}


def _sse_drop(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    X, start = c["X"], c["start"]
    return sse(X, start) - sse(X, lloyd_reference(X, start, 1))


def _nicv_lloyd(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return nicv(c["X"], c["final"])


def _nicv1_lloyd(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return nicv_unsquared(c["X"], c["final"])


def _nicv_rescaled(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # Lloyd commutes with x -> (x + 1) / 2, so the output is the rescaled output
    return nicv((c["X"] + 1) / 2, (c["final"] + 1) / 2)


def _empty_clusters(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    _, counts = batched_stats(c["X"], c["final"])
    return int((counts == 0).sum())


def _relative(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return relative_nicv(c["X"], c["final"] + p["SIGMA"] * c["noise"], c["final"])


def _f_spread(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    values = c["f"].values()
    return max(values) - min(values)


def _la_vs_hungarian(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # option 1 is never right (each class takes its best cluster, so Larsen-Aone is never
    # below Hungarian); 2 or 3 depends on the student's partition
    f = c["f"]
    return 3 if f[("reference", "larsen-aone")] > f[("reference", "hungarian")] + 1e-9 else 2


SECTION_F = "Chapter 4, 'The F-measure, its weights, and the missing matching step'"

ASSIGNMENT = Assignment(
    chapter=4,
    slug="kmeans-metrics",
    title="Lloyd's algorithm and how to measure it (chapter 4)",
    introduction=(
        "You run non-private Lloyd's algorithm on your own dataset `DATASET` with `K` "
        "clusters and `ITERATIONS` iterations, from data-independent initial centroids "
        "(`INIT`, drawn from your `SEED` in the setup cell), and measure the result with "
        "the yardsticks of chapter 4 of the book (*k-means and how to measure it*): SSE, "
        "NICV and its unsquared form, the relative NICV and the F-measure. Six answers are "
        "numbers you compute in this notebook; one is a count and one a multiple choice.\n\n"
        "Records are clipped and scaled to the public box $[-1, 1]^d$ (the setup cell). The "
        "setup cell also draws `noise`, a fixed $K \\times d$ array of standard normal "
        "numbers used in one question. The questions need no other random numbers: leave "
        "`rng` alone, and your start and noise stay the ones your answers are checked on."),
    pools={"DATASET": ("iris", "wine", "heart"), "K": (3, 4, 5),
           "INIT": ("uniform", "sphere packing"), "ITERATIONS": (5, 10, 20),
           "SIGMA": (0.03, 0.1, 0.3)},
    setup=SETUP,
    questions=(
        Question(
            "sse_drop",
            "Run one iteration of Lloyd's algorithm from `start` (an empty cluster keeps its "
            "centroid). By how much does the SSE fall, $\\operatorname{SSE}(C) - "
            "\\operatorname{SSE}(C')$, where $C$ is `start` and $C'$ the centroids after the "
            "iteration?",
            _sse_drop,
            "Chapter 4, 'The k-means objective': use lloyd_reference for the iteration and "
            "metrics.sse on X for both sets of centroids; the theorem says the drop is >= 0.",
            solution="sse_drop = sse(X, start) - sse(X, lloyd_reference(X, start, 1))"),
        Question(
            "nicv_lloyd",
            "Run `ITERATIONS` iterations of Lloyd's algorithm from `start` and call the "
            "result `final`. What is its NICV (squared, Su et al. (2016)) on `X`?",
            _nicv_lloyd,
            "Chapter 4, 'SSE and NICV': NICV is SSE / N with every record at its nearest "
            "output centroid; run lloyd_reference from start for exactly ITERATIONS steps.",
            points=2.0,
            solution=("final = lloyd_reference(X, start, ITERATIONS)\n"
                      "nicv_lloyd = nicv(X, final)")),
        Question(
            "nicv1_lloyd",
            "What is the unsquared NICV of `final`, the form printed by Ni et al. (2021)?",
            _nicv1_lloyd,
            "Chapter 4, 'SSE and NICV', the definition of NICV and NICV_1: the distance to "
            "the nearest centroid, not squared, averaged over the records.",
            solution="nicv1_lloyd = nicv_unsquared(X, final)"),
        Question(
            "nicv_rescaled",
            "Suppose you had scaled the data to $[0, 1]^d$ instead of $[-1, 1]^d$ (the map "
            "$x \\mapsto (x + 1)/2$) and run the same Lloyd iterations from the start mapped "
            "the same way. What NICV would you have reported for the result?",
            _nicv_rescaled,
            "Chapter 4, 'SSE and NICV': how does rescaling the data by a factor s change "
            "NICV (squared), as opposed to NICV_1? A translation changes neither.",
            solution="nicv_rescaled = nicv_lloyd / 4  # NICV scales with the square, s = 1/2"),
        Question(
            "empty_clusters",
            "How many of the `K` centroids of `final` have no record for which they are the "
            "nearest centroid (empty clusters)?",
            _empty_clusters,
            "Chapter 4, 'Where to start: initial centroids': count the clusters whose count "
            "in the Lloyd query (batched_stats) of final is zero.",
            rtol=0.0,
            solution=("_, counts = batched_stats(X, final)\n"
                      "empty_clusters = int((counts == 0).sum())")),
        Question(
            "relative",
            "Perturb `final` with Gaussian noise, `final + SIGMA * noise`, as a stand-in for "
            "a private run from the same start. What is its relative NICV against `final`?",
            _relative,
            "Chapter 4, the definition of the relative NICV: (NICV of the perturbed "
            "centroids - NICV of final) / NICV of final (metrics.relative_nicv).",
            solution="relative = relative_nicv(X, final + SIGMA * noise, final)"),
        Question(
            "f_spread",
            "Take the dataset's known classes (`classes`) as the reference clustering "
            "$\\{U_i\\}$ and the partition of `X` by `final` (each record at its nearest "
            "centroid) as $\\{V_j\\}$. Compute the F-measure with both weightings (Zhang, "
            "Liu and Wang (2018): reference sizes; Shang et al. (2021): own sizes) and both "
            "matchings (Hungarian and Larsen–Aone). Report the largest of the four values "
            "minus the smallest.",
            _f_spread,
            f"{SECTION_F}: metrics.f_measure with weights='reference' or 'predicted' and "
            "matching='hungarian' or 'larsen-aone', on the labels from lloyd.assign.",
            points=2.0,
            atol=1e-9,  # the spread can be 0: an absolute tolerance for float round-off
            solution=("labels = assign(X, final)\n"
                      "forms = [f_measure(classes, labels, weights=w, matching=m)\n"
                      "         for w in (\"reference\", \"predicted\")\n"
                      "         for m in (\"hungarian\", \"larsen-aone\")]\n"
                      "f_spread = max(forms) - min(forms)")),
        Question(
            "la_vs_hungarian",
            "With Zhang, Liu and Wang's weights (the sizes of the classes), how does the "
            "Larsen–Aone F-measure of your clustering compare with the Hungarian one?",
            _la_vs_hungarian,
            f"{SECTION_F}, the definition of the matched F-measures: compute both on your "
            "labels and compare; think about what Larsen-Aone allows that Hungarian does not.",
            choices=("The Larsen–Aone value is smaller.", "The two values are equal.",
                     "The Larsen–Aone value is larger."),
            solution=("f_hungarian = f_measure(classes, labels)\n"
                      "f_larsen = f_measure(classes, labels, matching=\"larsen-aone\")\n"
                      "la_vs_hungarian = 3 if f_larsen > f_hungarian + 1e-9 else 2")),
    ),
    prepare=_prepare,
    datasets=("DATASET",),
)
