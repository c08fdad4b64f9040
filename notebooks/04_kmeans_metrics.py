# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,mystnb,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# (ch-kmeans)=
# # k-means and how to measure it
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - state the k-means objective and Lloyd's algorithm, and prove that a Lloyd step never
#   increases the sum of squared errors;
# - define SSE, NICV (squared, the book's primary metric), the unsquared NICV printed by
#   Ni et al. (2021) and the relative NICV, and say why the unsquared form measures a
#   different objective;
# - compute the F-measure of a clustering against a reference, name the two choices the
#   papers leave open (which side supplies the weights, how clusters are matched), and show
#   how much they change the number;
# - explain why only data-independent initial centroids can be used in a private run, and
#   what they cost even without noise.
#
# **Prerequisites:** the DP-Lloyd query and its sensitivity ({doc}`01_dp_laplace`) and
# sequential composition ({doc}`03_composition`); the rest needs only vectors, means and
# squared distances.
# :::
#
# Part I built the privacy tools. Before any noise is added, this chapter fixes the
# non-private algorithm and the yardsticks every later chapter uses to score a private run.
# The code runs from the fast defaults in the next cell (tagged `parameters`).

# %% tags=["remove-cell", "launch"]
# Colab, or any Jupyter without the library: this cell installs `dpkmeans` from
# the book's repository (a few minutes). Where the library is installed already
# (`make install`, Binder), it does nothing. A chapter downloads the papers'
# datasets it reads from UCI the first time. How it works: docs/launch.md.
import importlib.util
import runpy
import subprocess
from pathlib import Path

if importlib.util.find_spec("dpkmeans") is None:
    repository, branch = "", "main"
    if not repository:
        raise ModuleNotFoundError(
            "dpkmeans is not installed, and this notebook names no repository to "
            "install it from: download the book's source (linked under the chapter's "
            "title), run `make install` in it and open the notebook there")
    source = Path("private-kmeans-reproduced").resolve()
    if not source.is_dir():
        subprocess.run(["git", "clone", "--quiet", "--depth=1", f"--branch={branch}",
                        repository, str(source)], check=True)
    runpy.run_path(str(source / "binder" / "install_library.py"))

# %% tags=["parameters", "hide-input"]
SEED = 2026  # every random draw below comes from this seed
N_POINTS = 2000  # rows of the synthetic Gaussian mixture
N_CLUSTERS = 5  # k: components of the mixture and clusters fitted
DIM = 4  # d: dimension of the mixture
SEPARATION = 4.0  # distance of neighbouring true centres, in standard deviations
N_STARTS = 40  # initial centroid sets per initialiser in the experiment
ITERATIONS = 30  # Lloyd iterations per run
TRACE_STARTS = 6  # starts whose SSE is traced iteration by iteration
TRACE_ITERATIONS = 12  # iterations traced

# %%
from fractions import Fraction
from itertools import permutations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue
from sklearn.metrics import f1_score

from dpkmeans.compute.lloyd import batched_stats, lloyd_reference
from dpkmeans.compute.metrics import (
    adjusted_rand_index,
    f_measure,
    nicv,
    nicv_unsquared,
    relative_nicv,
    sse,
)
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine.init import kmeans_plusplus, sphere_packing, uniform_box
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import count_of, number, share, table

use_book_style()
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## The k-means objective
#
# ```{prf:definition} The k-means objective
# :label: def-kmeans-objective
#
# Let $D = \{x_1, \dots, x_N\} \subset \R^d$ and let $C = (c_1, \dots, c_k)$ be $k$ centroids.
# The **sum of squared errors** of $C$ is
#
# $$\operatorname{SSE}(C) = \sum_{x \in D} \min_{1 \le j \le k} \lVert x - c_j \rVert_2^2 .$$
#
# The k-means problem asks for centroids that minimise it. Every $C$ induces a partition
# $C_1, \dots, C_k$ of $D$, each record going to its nearest centroid (lowest index on ties).
# ```
#
# Minimising the SSE exactly is NP-hard in general, so everyone, the five papers included,
# uses a local search: Lloyd's algorithm, which alternates the two halves of the problem.
#
# ```{prf:algorithm} Lloyd's algorithm
# :label: alg-lloyd
#
# **Inputs** records $x_1, \dots, x_N \in \R^d$; initial centroids $c^{(0)}_1, \dots,
# c^{(0)}_k$; a number of iterations $T$ (or another stopping rule).
#
# **Output** centroids $c^{(T)}_1, \dots, c^{(T)}_k$.
#
# For $t = 1, \dots, T$:
# 1. **Assign.** $j(x) = \argmin_j \lVert x - c^{(t-1)}_j \rVert_2$ for every record.
# 2. **Count and sum.** $n_j = |\{x : j(x) = j\}|$ and $S_j = \sum_{j(x) = j} x$.
# 3. **Update.** $c^{(t)}_j = S_j / n_j$ if $n_j > 0$; an empty cluster keeps
#    $c^{(t)}_j = c^{(t-1)}_j$.
# ```
#
# Steps 1 and 2 are exactly the query that DP-Lloyd releases with noise
# ({prf:ref}`alg-dp-lloyd-iteration`); step 3 is post-processing. The papers stop in different
# ways: {cite:t}`ni_dpkccm` run a fixed number of iterations; {cite:t}`zhang2018contour` and
# {cite:t}`shang2021di` stop when the centroids move less than a threshold or after an
# iteration cap; the APDPk-means paper {cite}`apdpkmeans` stops when the partition stops
# changing. The library's non-private reference runs a fixed number of iterations, since a
# private run must fix (and pay for) its iterations in advance.
#
# ```{prf:lemma} The mean minimises the squared distance
# :label: lem-mean-minimises
#
# For a finite non-empty set $G \subset \R^d$ with mean $\mu = \frac{1}{|G|}\sum_{x \in G} x$
# and any $c \in \R^d$,
# $\sum_{x \in G} \lVert x - c \rVert_2^2 = \sum_{x \in G} \lVert x - \mu \rVert_2^2 +
# |G|\, \lVert \mu - c \rVert_2^2 .$
# ```
#
# ```{prf:proof}
# Write $x - c = (x - \mu) + (\mu - c)$ and expand the square:
# $\lVert x - c \rVert^2 = \lVert x - \mu \rVert^2 + 2 (x - \mu)\cdot(\mu - c) +
# \lVert \mu - c \rVert^2$. Summed over $G$, the middle term vanishes because
# $\sum_{x \in G} (x - \mu) = 0$.
# ```
#
# ```{prf:theorem} A Lloyd step never increases the SSE
# :label: thm-lloyd-monotone
#
# Let $C'$ be the centroids after one iteration of {prf:ref}`alg-lloyd` started from $C$.
# Then $\operatorname{SSE}(C') \le \operatorname{SSE}(C)$. Hence the SSE of Lloyd's iterates
# is non-increasing and converges.
# ```
#
# ```{prf:proof}
# For a labelling $\sigma: D \to \{1, \dots, k\}$ write
# $\Phi(C, \sigma) = \sum_{x} \lVert x - c_{\sigma(x)} \rVert^2$, so that
# $\operatorname{SSE}(C) = \min_\sigma \Phi(C, \sigma) = \Phi(C, \sigma_C)$ where $\sigma_C$ is the
# nearest-centroid labelling. The update changes only the centroids: for each non-empty
# cluster $G_j = \sigma_C^{-1}(j)$, {prf:ref}`lem-mean-minimises` gives
# $\sum_{x \in G_j} \lVert x - c'_j \rVert^2 \le \sum_{x \in G_j} \lVert x - c_j \rVert^2$
# because $c'_j$ is the mean of $G_j$; an empty cluster contributes nothing to either side.
# Summing, $\Phi(C', \sigma_C) \le \Phi(C, \sigma_C) = \operatorname{SSE}(C)$. The next assignment can
# only help: $\operatorname{SSE}(C') = \min_\sigma \Phi(C', \sigma) \le \Phi(C', \sigma_C)$. A
# non-increasing sequence bounded below by $0$ converges.
# ```
#
# The theorem says nothing about *which* value the SSE converges to: Lloyd stops at a local
# optimum that depends on the initial centroids, which is why the last section of this chapter
# compares initialisers. It also depends on the square. For
# $\sum_{x \in G} \lVert x - c \rVert_2$ (no square) the minimiser is the geometric median,
# not the mean, so the update step can *increase* the unsquared cost; we will see it happen.
#
# The library computes steps 1 and 2 for many centroid sets at once (one matrix product and
# segment sums, no loop over points):
#
# ```{literalinclude} ../src/dpkmeans/compute/lloyd.py
# :language: python
# :pyobject: batched_stats
# ```
#
# and Lloyd's algorithm is three lines on top of it:
#
# ```{literalinclude} ../src/dpkmeans/compute/lloyd.py
# :language: python
# :pyobject: lloyd_reference
# ```
#
# ### Checking the theorem
#
# A synthetic Gaussian mixture with $k$ well-separated components, scaled to the public box
# $[-1, 1]^d$, is the test bed for the whole chapter. We start Lloyd from several sets of
# centroids drawn uniformly in the box and record the SSE, and the unsquared cost, after
# every iteration.

# %%
mixture = gaussian_mixture_dataset(N_POINTS, N_CLUSTERS, DIM, rng=rng,
                                   separation=SEPARATION).scaled((-1, 1))
X, truth = mixture.X, mixture.target
bounds = (-np.ones(DIM), np.ones(DIM))
print(f"{X.shape[0]:,} points in [-1, 1]^{DIM}, {N_CLUSTERS} components, "
      f"{mixture.n_clipped} coordinates clipped to the box")

trace_sse, trace_unsq = {}, {}
for s in range(TRACE_STARTS):
    C = uniform_box(bounds, N_CLUSTERS, rng)
    values, unsquared = [sse(X, C)], [nicv_unsquared(X, C)]
    for _ in range(TRACE_ITERATIONS):
        C = lloyd_reference(X, C, 1)
        values.append(sse(X, C))
        unsquared.append(nicv_unsquared(X, C))
    trace_sse[f"start {s + 1}"] = values
    trace_unsq[f"start {s + 1}"] = unsquared
trace = pd.DataFrame(trace_sse).rename_axis("iteration")

# %% [markdown]
# The SSE of each start after each iteration (iteration 0 is the start itself):

# %%
two_decimals = {column: "{:.2f}".format for column in trace.columns}
table(trace.reset_index(), formats=two_decimals, name="ch4-trace")

# %%
steps = np.diff(trace.to_numpy(), axis=0)
assert (steps <= 1e-9 * trace.to_numpy()[:-1]).all(), "a Lloyd step increased the SSE"
unsq_steps = np.diff(pd.DataFrame(trace_unsq).to_numpy(), axis=0)
rising = int((unsq_steps > 1e-12).any(axis=0).sum())
worst = pd.DataFrame(trace_unsq).iloc[:, int(np.argmax(unsq_steps.max(axis=0)))]
worst = worst.rename_axis("iteration").rename(f"unsquared NICV, {worst.name}")
print(f"largest SSE increase over all steps: {number(max(steps.max(), 0.0))}")
print(f"starts in which the unsquared cost rose at some step: "
      f"{count_of(rising, TRACE_STARTS)}")

# %% tags=["remove-cell"]
glue("ch4_trace_starts", TRACE_STARTS, display=False)
glue("ch4_unsq_rising", rising, display=False)

# %% [markdown]
# Every column is non-increasing, as {prf:ref}`thm-lloyd-monotone` requires, and the columns
# end at different values: different starts, different local optima. The unsquared cost, in
# contrast, rose at some step in {glue}`ch4_unsq_rising` of the {glue}`ch4_trace_starts`
# starts. Here is one of those starts (the one with the largest single rise), unsquared cost
# per iteration:

# %%
table(worst.reset_index(), formats={worst.name: "{:.4f}".format},
      name="ch4-unsquared-rise")

# %% [markdown]
# ## Measuring a clustering
#
# The papers score a private clustering in two ways: by a cost of its centroids on the data
# (SSE, NICV) and by its agreement with a reference clustering (F-measure). Both hide choices
# that the papers leave implicit.
#
# ### SSE and NICV
#
# ```{prf:definition} NICV, squared and unsquared
# :label: def-nicv
#
# With every record assigned to its nearest *output* centroid,
#
# $$\operatorname{NICV}(C) = \frac{1}{N} \sum_{j=1}^k \sum_{x \in C_j}
#   \lVert x - c_j \rVert_2^2 = \frac{\operatorname{SSE}(C)}{N},$$
#
# $$\operatorname{NICV}_{1}(C) = \frac{1}{N} \sum_{j=1}^k \sum_{x \in C_j}
#   \lVert x - c_j \rVert_2 .$$
#
# $\operatorname{NICV}$ is the normalised intra-cluster variance of
# {cite:t}`su2016differentially`, the book's primary metric. $\operatorname{NICV}_1$ is what
# eq. 5 of {cite:t}`ni_dpkccm` prints.
# ```
#
# Ni et al. cite Su et al. for NICV and call it "the objective function", so the missing
# square is almost surely a typesetting slip. It matters all the same: $\operatorname{NICV}_1$
# is the **k-median** objective, which Lloyd's algorithm does not minimise (its update is the
# mean, not the geometric median), so it scores a k-means run against the wrong target. The
# book reports NICV, computes $\operatorname{NICV}_1$ only to compare with Ni et al.'s curves,
# and computes both on the data scaled to $[-1, 1]^d$, as Ni et al. do: rescaling the data by $s$
# multiplies NICV by $s^2$ and $\operatorname{NICV}_1$ by $s$, so neither is comparable across
# scalings.
#
# ```{literalinclude} ../src/dpkmeans/compute/metrics.py
# :language: python
# :pyobject: nicv
# ```
#
# The two forms differ in scale, and they can also disagree on which of two centroid sets
# is better. Take two tight groups of 300 points and a small far group of 30, and two
# candidate pairs of centroids: **A** puts the second centroid at the mean of the second group
# *and* the far group (what k-means does); **B** puts it at the mean of the second group alone,
# ignoring the far group (what a median-like, outlier-robust fit does).

# %%
small_rng = np.random.default_rng(rng.integers(2**32))
toy = np.vstack([small_rng.normal([-0.6, 0.0], 0.1, size=(300, 2)),
                 small_rng.normal([0.6, 0.0], 0.1, size=(300, 2)),
                 small_rng.normal([0.6, 0.9], 0.05, size=(30, 2))])
group = np.repeat([0, 1, 2], [300, 300, 30])
first = toy[group == 0].mean(0)
candidates = {
    "A (mean of groups 2 and 3)": np.array([first, toy[group >= 1].mean(0)]),
    "B (mean of group 2 only)": np.array([first, toy[group == 1].mean(0)]),
}
toy_table = pd.DataFrame({
    "centroids": list(candidates),
    "NICV (squared)": [nicv(toy, c) for c in candidates.values()],
    "NICV₁ (unsquared)": [nicv_unsquared(toy, c) for c in candidates.values()],
})
better_sq = toy_table["centroids"][toy_table["NICV (squared)"].idxmin()]
better_unsq = toy_table["centroids"][toy_table["NICV₁ (unsquared)"].idxmin()]
print(f"better by NICV: {better_sq[0]}; better by NICV₁: {better_unsq[0]}")
assert better_sq != better_unsq
table(toy_table, digits=3, name="ch4-squared-unsquared")

# %% [markdown]
# The squared NICV prefers A, the unsquared one prefers B: the far group pulls the k-means
# centroid, and the unsquared cost, which weighs far points less, would rather leave it alone.
# A method can therefore look better under Ni et al.'s metric and worse under Su et al.'s, or
# the other way round. The values also differ in scale by a factor of about three here, so
# numbers from the two are never comparable.
#
# ```{prf:definition} Relative NICV
# :label: def-relative-nicv
#
# Let $C^{\mathrm{dp}}$ be the output of a private run from initial centroids $C^{(0)}$, and
# $C^{\mathrm{np}}$ the output of non-private Lloyd from the *same* $C^{(0)}$ with the same
# number of iterations. The relative NICV is
# $\big(\operatorname{NICV}(C^{\mathrm{dp}}) - \operatorname{NICV}(C^{\mathrm{np}})\big) /
# \operatorname{NICV}(C^{\mathrm{np}})$.
# ```
#
# Starting both runs from the same centroids removes the luck of the initialisation from the
# comparison, so the relative NICV measures what the noise costs. It is usually positive, but
# not always: a noisy run can escape a poor local optimum that the exact run is stuck in. As an
# illustration, perturb the output of a non-private run with Gaussian noise of increasing
# size, a stand-in for the noise of the private runs of later chapters:

# %%
start = sphere_packing(bounds, N_CLUSTERS, rng)
reference = lloyd_reference(X, start, ITERATIONS)
rel_rows = []
for sigma in (0.01, 0.03, 0.1, 0.3):
    perturbed = reference + sigma * rng.standard_normal(reference.shape)
    rel_rows.append({"noise std. dev.": sigma, "NICV": nicv(X, perturbed),
                     "relative NICV": relative_nicv(X, perturbed, reference)})
print(f"non-private NICV from this start: {number(nicv(X, reference))}")
table(pd.DataFrame(rel_rows), name="ch4-relative-nicv")

# %% [markdown]
# ### The F-measure, its weights, and the missing matching step
#
# {cite:t}`zhang2018contour` and {cite:t}`shang2021di` compare the private
# clustering $\{V_j\}$ with a reference clustering $\{U_i\}$, the non-private run, with an
# F-measure. Each pairs a reference cluster with a private one, computes precision
# $P = |U \cap V| / |V|$ and recall $R = |U \cap V| / |U|$, and averages the harmonic means
# $2PR/(P + R)$. Substituting the two ratios gives a simpler form:
#
# ```{prf:definition} F-measure of a pair of clusters
# :label: def-f-pair
#
# For non-empty sets $U$ and $V$,
# $F(U, V) = \dfrac{2 PR}{P + R} = \dfrac{2 \lvert U \cap V \rvert}{\lvert U \rvert + \lvert V
# \rvert}$, the Dice coefficient. It is 1 exactly when $U = V$ and 0 when they are disjoint.
# ```
#
# The papers then take $F = \sum_i w_i F(U_i, V_i)$, and differ in the weights: Zhang, Liu and
# Wang use the reference sizes, $w_i = |U_i| / N$, Shang et al. the sizes of their own
# clusters, $w_i = |V_i| / N$. Neither says how $V_i$ is chosen for $U_i$; both simply use
# "the $i$-th cluster" of each. But cluster labels are arbitrary: a private run's centroids can
# cross each other, an empty cluster can be re-seeded, and Ni et al.'s DP-KCCM merges $nk$
# clusters down to $k$, so the $i$-th private cluster need not correspond to the $i$-th reference cluster at all. An
# explicit matching is needed, and there are two standard ones.
#
# ```{prf:definition} Matched F-measures
# :label: def-f-matched
#
# Let the weighted side be $\{A_i\}$ (the reference clusters for Zhang, Liu and Wang's
# weights, the private clusters for Shang et al.'s) and the other side $\{B_j\}$, with
# $w_i = |A_i| / N$.
# - **Hungarian matching**: choose the one-to-one matching $\pi$ that maximises the total
#   overlap $\sum_i |A_i \cap B_{\pi(i)}|$; then $F = \sum_i w_i F(A_i, B_{\pi(i)})$, an
#   unmatched cluster scoring 0.
# - **Larsen–Aone**, the classical clustering F-measure: $F = \sum_i w_i \max_j F(A_i, B_j)$.
#   Several $A_i$ may pick the same $B_j$, so it is never below the Hungarian value.
# ```
#
# Both give $F = 1$ exactly when the two partitions coincide up to relabelling. They differ
# when clusters are split or merged, which is what noise does. The library implements both,
# with both weightings, as `f_measure(labels_true, labels_pred, matching="hungarian",
# weights="reference")` of `dpkmeans.compute.metrics` (`matching="larsen-aone"`,
# `weights="predicted"` for the others). It counts the contingency table
# $|A_i \cap B_j|$ once and computes every $F(A_i, B_j) = 2|A_i \cap B_j| / (|A_i| + |B_j|)$
# from it; the Hungarian matching is scipy's `linear_sum_assignment` on the overlaps, with
# ties in total overlap broken in favour of the larger $F$, so that the value does not depend
# on the order of the labels. The code is `src/dpkmeans/compute/metrics.py` in
# {source-archive}`the book's source`.
#
# Take $N = 10$ records and a reference $U_1 = \{0, 1, 2, 3\}$, $U_2 = \{4, 5, 6\}$,
# $U_3 = \{7, 8, 9\}$. The private clustering merges the first two and splits the third:
# $V_1 = U_1 \cup U_2$, $V_2 = \{7, 8\}$, $V_3 = \{9\}$.

# %%
reference_labels = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])  # U1, U2, U3
# V1 = U1 u U2, V2 = {7, 8}, V3 = {9}
merged_split = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 2])
expected = {("reference", "hungarian"): Fraction(146, 275),
            ("reference", "larsen-aone"): Fraction(391, 550),
            ("predicted", "hungarian"): Fraction(184, 275),
            ("predicted", "larsen-aone"): Fraction(791, 1100)}
WEIGHTS = {"reference": "reference sizes", "predicted": "own sizes"}
MATCHINGS = {"hungarian": "Hungarian", "larsen-aone": "Larsen–Aone"}
f_rows = []
for (weights, matching), exact in expected.items():
    value = f_measure(reference_labels, merged_split, matching=matching,
                      weights=weights)
    assert abs(value - float(exact)) < 1e-12, (weights, matching, value)
    f_rows.append({"weights": WEIGHTS[weights], "matching": MATCHINGS[matching],
                   "F": value,
                   "as a fraction": str(Fraction(value).limit_denominator(2000))})
ari_merge_split = adjusted_rand_index(reference_labels, merged_split)
print(f"adjusted Rand index: {number(ari_merge_split, 4)}")
table(pd.DataFrame(f_rows), digits=4, name="ch4-f-measures")

# %% tags=["remove-cell"]
for (weights, matching), exact in expected.items():
    glue(f"ch4_f_{weights}_{matching.replace('-', '_')}", round(float(exact), 4), display=False)
glue("ch4_ari_merge_split", round(ari_merge_split, 4), display=False)
glue("ch4_f_spread", round(float(max(expected.values()) - min(expected.values())), 4),
     display=False)

# %% [markdown]
# The same clustering scores anywhere from {glue}`ch4_f_reference_hungarian` (reference
# weights, Hungarian) to {glue}`ch4_f_predicted_larsen_aone` (own weights, Larsen–Aone). With
# reference weights and Hungarian matching, $U_2$ has no partner left, because $V_1$ is taken
# by the larger $U_1$ and scores 0: the merge is penalised in full. Larsen–Aone lets $U_1$ and
# $U_2$ both claim $V_1$, so the merge costs less. Shang et al.'s own-size weights make the
# large merged cluster $V_1$ count for 70% of the score, and the split-off singleton $V_3$ for
# only 10%: a private run that merges clusters looks better under them. The four forms span
# {glue}`ch4_f_spread` on this ten-record example, so a reproduction must say which one it
# uses; the library's default, and the book's unless it reproduces a specific figure, is
# reference weights with Hungarian matching.
#
# Why the matching step is not optional: here is the reference clustering itself, under every
# relabelling of its three clusters. "Unmatched" is the papers' formula read literally
# (cluster $i$ against cluster $i$), which is what `sklearn.metrics.f1_score` with
# `average="weighted"` computes if cluster labels are passed as if they were class labels.

# %%
relabel_rows = []
for perm in permutations(range(3)):
    relabelled = np.array(perm)[reference_labels]  # the same partition, other names
    relabel_rows.append({
        "labels of U₁, U₂, U₃": ", ".join(map(str, perm)),
        "unmatched": f1_score(reference_labels, relabelled, average="weighted"),
        "Hungarian": f_measure(reference_labels, relabelled),  # the default matching
        "Larsen–Aone": f_measure(reference_labels, relabelled,
                                 matching="larsen-aone"),
        "ARI": adjusted_rand_index(reference_labels, relabelled),
    })
relabel_table = pd.DataFrame(relabel_rows)
assert (relabel_table[["Hungarian", "Larsen–Aone", "ARI"]] == 1.0).all().all()
table(relabel_table, digits=4, name="ch4-relabelled")

# %% tags=["remove-cell"]
glue("ch4_unmatched_min", number(relabel_table["unmatched"].min(), 4), display=False)

# %% [markdown]
# A perfect clustering, merely renamed, drops to as little as {glue:text}`ch4_unmatched_min`
# without matching, while both matched forms (and the ARI) stay at 1.
#
# A label-free alternative avoids matching altogether: the **adjusted Rand index** (ARI,
# Hubert and Arabie) counts the pairs of records that the two clusterings put together or
# apart, corrected for chance. It is 1 for identical partitions, about 0 for independent ones,
# and on the merge-and-split example it is {glue}`ch4_ari_merge_split`. It makes a useful
# companion to the F-measure, because it cannot be inflated by a choice of weights or
# matching.
#
# ## Where to start: initial centroids
#
# Lloyd's local optimum depends on its start. The non-private default is
# **k-means++**, which samples the initial centroids *from the records*, each with probability
# proportional to its squared distance to the centroids already chosen. That releases actual
# records, so it cannot be used in a private run without paying for it. A private run must
# start from centroids that depend only on the public bounds:
# - **uniform**: $k$ points drawn uniformly in the box;
# - **sphere packing** ({cite:t}`su2016differentially`, used by Ni et al.): points
#   drawn in the box shrunk by a radius $a$ and accepted only if they are at least $2a$ from
#   the ones already accepted, with $a$ halved after repeated failures.
#
# The library's `dpkmeans.engine.init.sphere_packing`, without its docstring and argument checks:
#
# ```{literalinclude} ../src/dpkmeans/engine/init.py
# :language: python
# :pyobject: sphere_packing
# :lines: 1-8,56-57,61-65
# ```
#
# An attempt proposes uniform points in the shrunk box and keeps each one that is at least
# $2a$ from every centre kept so far (it finds the nearby centres through a grid of cells,
# with the same draws and decisions as comparing against all of them); it gives up after
# `max_failures` rejections in a row, and the loop halves $a$.
#
# How much does the choice cost before any noise is added? We run non-private Lloyd
# ({glue}`ch4_iterations` iterations) from {glue}`ch4_n_starts` starts of each kind on the
# mixture, and compare the final NICV with the NICV of Lloyd started at the true component
# means (an oracle no real run has).

# %% tags=["remove-cell"]
glue("ch4_iterations", ITERATIONS, display=False)
glue("ch4_n_starts", N_STARTS, display=False)

# %%
initialisers = {
    "k-means++ (not private)": lambda: kmeans_plusplus(X, N_CLUSTERS, rng),
    "sphere packing": lambda: sphere_packing(bounds, N_CLUSTERS, rng),
    "uniform": lambda: uniform_box(bounds, N_CLUSTERS, rng),
}
oracle_start = np.array([X[truth == j].mean(axis=0) for j in range(N_CLUSTERS)])
oracle_nicv = nicv(X, lloyd_reference(X, oracle_start, ITERATIONS))

runs = []
for name, draw in initialisers.items():
    starts = np.stack([draw() for _ in range(N_STARTS)])  # (R, k, d)
    final = lloyd_reference(X, starts, ITERATIONS)  # all R runs at once
    _, counts = batched_stats(X, final)
    runs.append(pd.DataFrame({"initialiser": name, "NICV": nicv(X, final),
                              "empty cluster": (counts == 0).any(axis=1)}))
runs = pd.concat(runs, ignore_index=True)
init_table = runs.groupby("initialiser", sort=False).agg(
    median=("NICV", "median"), mean=("NICV", "mean"),
    p90=("NICV", lambda v: v.quantile(0.9)),
    within_1pct=("NICV", lambda v: (v <= 1.01 * oracle_nicv).mean()),
    empty_cluster=("empty cluster", "mean"))
print(f"oracle NICV (Lloyd from the true component means): {number(oracle_nicv)}")

# %% tags=["hide-input"]
shown = init_table.reset_index().rename(columns={
    "median": "median NICV", "mean": "mean NICV", "p90": "NICV, upper decile",
    "within_1pct": "runs within 1% of the oracle",
    "empty_cluster": "runs with an empty cluster"})
table(shown, name="ch4-initialisers", formats={"runs within 1% of the oracle": share,
                                               "runs with an empty cluster": share})

# %% tags=["remove-cell"]
glue("ch4_oracle_nicv", number(oracle_nicv), display=False)
for key, name in (("kpp", "k-means++ (not private)"), ("sp", "sphere packing"),
                  ("unif", "uniform")):
    glue(f"ch4_within_{key}", share(init_table.loc[name, "within_1pct"]), display=False)
    glue(f"ch4_mean_{key}", number(init_table.loc[name, "mean"]), display=False)

# %% mystnb={"figure": {"caption": "Final NICV of non-private Lloyd from three kinds of initial centroids, one dot per start, on a Gaussian mixture scaled to $[-1, 1]^d$. The dashed line is the NICV reached from the true component means. Only sphere packing and uniform starts can be used in a private run.", "name": "fig-ch4-init-nicv"}} tags=["hide-input"]
fig, ax = new_figure()
order = list(initialisers)
sns.boxplot(data=runs, x="initialiser", y="NICV", order=order, ax=ax, color="0.92",
            showfliers=False, width=0.5)
for i, name in enumerate(order):
    values = np.sort(runs.loc[runs["initialiser"] == name, "NICV"].to_numpy())
    spread = np.linspace(-0.15, 0.15, len(values))  # spread the dots sideways
    style = {**series_style(i), "linestyle": "none"}
    ax.plot(i + spread, values, alpha=0.8, **style)
ax.axhline(oracle_nicv, ls="--", color="0.4", lw=1)
ax.text(-0.45, oracle_nicv, "oracle", va="bottom", ha="left", color="0.3")
ax.set_xlabel("")
ax.set_ylabel("final NICV (squared)")
plt.show()

# %% [markdown]
# With k-means++, {glue:text}`ch4_within_kpp` of the runs end within 1% of the oracle NICV
# ({glue:text}`ch4_oracle_nicv`); with sphere packing {glue:text}`ch4_within_sp`, with uniform
# starts {glue:text}`ch4_within_unif`. The mean final NICV is {glue:text}`ch4_mean_kpp`,
# {glue:text}`ch4_mean_sp` and {glue:text}`ch4_mean_unif` respectively. The runs that miss the oracle are stuck in a local
# optimum in which one centroid covers two components while another splits a component in two
# or holds only a handful of stray points; uniform starts, drawn in a box that is mostly empty
# space, most often leave a cluster with no points at all. So the private algorithms start at
# a disadvantage that has nothing to do with noise, and it shows up in their absolute NICV.
# This is one reason the book reports the relative NICV against non-private Lloyd *from the
# same start*: it separates the cost of privacy from the luck of the start.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - k-means minimises the SSE, $\sum_x \min_j \lVert x - c_j \rVert^2$. Lloyd's algorithm
#   alternates nearest-centroid assignment with the mean update; each step never increases the
#   SSE (the mean minimises the squared distance), so it converges, but only to a local
#   optimum that depends on the start. The check above confirms it on every traced start.
# - NICV $=$ SSE$/N$ (squared) is the primary metric. Ni et al.'s unsquared form is the
#   k-median objective: Lloyd can increase it, it has a different scale, and it can rank two
#   centroid sets the other way round.
# - Relative NICV compares a private run with non-private Lloyd from the same initial
#   centroids, so it isolates the cost of the noise.
# - The papers' F-measure is a weighted Dice coefficient. Zhang, Liu and Wang weight by the
#   reference clusters, Shang et al. by their own; neither matches labels, and without matching a mere
#   relabelling ruins a perfect score. With Hungarian or Larsen–Aone matching the four
#   variants still differ when clusters merge or split, so a reproduction must name its choice.
#   The ARI needs no matching.
# - Only data-independent initialisers (sphere packing, uniform) are private; even without
#   noise they reach the best local optimum less often than k-means++.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch4-unsquared-rise
#
# Find a one-dimensional dataset and a single centroid ($k = 1$) for which one Lloyd step
# *increases* the unsquared NICV. Check it with `nicv_unsquared` and `lloyd_reference`.
# ```
#
# ```{solution} ex-ch4-unsquared-rise
# :class: dropdown
#
# Take $D = \{0, 0, 0, 3\}$ and $c = 0$ (the median). The unsquared NICV is
# $(0 + 0 + 0 + 3)/4 = 0.75$. One Lloyd step moves $c$ to the mean, $0.75$, where the unsquared
# NICV is $(3 \cdot 0.75 + 2.25)/4 = 1.125$. The squared NICV falls from $9/4 = 2.25$ to
# $1.6875$, as {prf:ref}`thm-lloyd-monotone` requires. In code:
# `X = np.array([[0.], [0.], [0.], [3.]])`, then compare `nicv_unsquared(X, [[0.]])` with
# `nicv_unsquared(X, lloyd_reference(X, np.array([[0.]]), 1))`.
# ```
#
# ```{exercise}
# :label: ex-ch4-collapse
# :class: pen-and-paper
#
# A badly noised private run puts all $N$ records in one cluster (the other $k - 1$ centroids
# receive no records). The reference has $k$ clusters of $N/k$ records each. Compute the
# F-measure for both weightings and both matchings, and the ARI. Which forms hide the
# collapse best?
# ```
#
# ```{solution} ex-ch4-collapse
# :class: dropdown
#
# The only non-empty private cluster $V$ has $|V| = N$, and $F(U_i, V) = 2 (N/k) / (N/k + N) =
# 2/(k + 1)$ for every $i$. Reference weights, Hungarian: one $U_i$ is matched to $V$, the
# others score 0, so $F = \frac{1}{k}\cdot\frac{2}{k+1}$. Reference weights, Larsen–Aone:
# every $U_i$ picks $V$, so $F = 2/(k + 1)$. Predicted weights (either matching): the only
# private cluster has weight 1 and $F = 2/(k + 1)$. For $k = 3$: $1/6$ against $1/2$. The ARI
# is 0, since one cluster carries no information about the partition. Larsen–Aone and
# Shang et al.'s weights hide the collapse best. Check with
# `f_measure(np.repeat(np.arange(3), 10), np.zeros(30, dtype=int), ...)`.
# ```
#
# ```{exercise}
# :label: ex-ch4-kpp-cost
#
# Why can k-means++ not be made private simply by running it on noisy data, and why does
# sphere packing cost no budget at all? What would you have to release, and pay for, to use
# data-dependent starts privately?
# ```
#
# ```{solution} ex-ch4-kpp-cost
# :class: dropdown
#
# k-means++ outputs records of the dataset (its first centroid is a uniformly random record),
# so its output changes completely when that record is removed: no finite $\varepsilon$
# covers it. Sphere packing and uniform starts are functions of the public bounds and of
# fresh randomness only; they are independent of the data, so by post-processing (or
# trivially) they cost nothing. A data-dependent start must itself be a DP release, for
# example a few DP-Lloyd iterations on a coarse grid, or a DP estimate of dense regions, and
# its $\varepsilon$ must be added to the run's total by sequential composition, as in
# {prf:ref}`thm-sequential`. The APDPk-means paper's initialisation, which adds noise to
# records drawn from the data ({doc}`10_schedules`), is an example that forgets to do so.
# ```
