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
# # Silhouette-weighted budgets on MapReduce
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - compute the silhouette in its $O(nk)$ centre form and say why it lies in $[0, 1]$;
# - show with numbers that the paper's per-cluster budget rule spends more than its budget,
#   compute the true spend from the ledger, and state a corrected rule with its proof;
# - write DP k-means as MapReduce (map = exact statistics of a block, reduce = sums, noise once
#   on the client) and run it on Dask, bit for bit the same as in memory;
# - read the reproduction: where the paper's four claims hold, where they fail, and why the
#   halving schedule, not the silhouette, decides the outcome.
# :::
#
# Zhang, Liu and Wang {cite}`zhang2018contour` (seed 001) give each cluster its own share of an
# iteration's budget, weighted by how well separated the cluster is (its *silhouette*, the
# paper's "contour coefficient"), halve the budget from one iteration to the next, and run the
# whole thing on Hadoop. The book implements it twice, as two configurations of the one DP-Lloyd
# loop (chapter 5) with two new engine hooks, an *initial release* and an *allocation rule*
# (`dpkmeans.hooks`):
#
# | | as published (reference §5.2) | corrected (reference §5.6) |
# |---|---|---|
# | scaling | min-max on the data (a leak) | public bounds to $[0, 1]^d$ |
# | initial centres | noisy means of $K$ equal splits in file order, budget undefined | sphere packing (public) |
# | budget of iteration $t$ | $\varepsilon / 2^t$, $t = 1..10$ | the same halving, normalised to spend $\varepsilon$; 10% of each step pays for the silhouettes |
# | cluster weight $w_k$ | $(1 + S_k)/(1 + \min_j S_j) \ge 1$, $S_k$ exact | $(1 + \tilde S_k)/(1 + \max_j \tilde S_j) \le 1$, $\tilde S_k$ from noisy releases |
# | noise | one draw shared by the sum and the count | independent draws |
# | stop | no centroid moves by $10^{-3}\sqrt d$, or 10 iterations | the same |
#
# The chapter's code runs from the fast defaults in the next cell (tagged `parameters`).

# %% tags=["parameters"]
SEED = 2026  # every random draw below comes from this seed
EPSILON = 1.0  # the total budget of the examples and of the audit
SILHOUETTE_CHECK_ROWS = 2_000  # rows of the brute-force silhouette check
DASK_ROWS = 150_000  # rows of the Dask demonstration (three blocks of the plan)
AUDIT_TRIALS = (100, 200, 400, 1000)  # replicas per dataset of each audit
AUDIT_GROUP_SIZE = 500  # records in each of the two groups of the audit dataset
RESULTS = "../data/results/silhouette.csv"  # notebooks/sweeps/silhouette.yaml writes it
CLAIMS_FILE = "../data/results/silhouette_claims.csv"  # python -m dpkmeans.papers.silhouette.claims
TIMING = "../benchmarks/silhouette_reproduction.json"  # python -m benchmarks.silhouette_reproduction
SCALING = "../benchmarks/dask_scaling.json"  # python -m benchmarks.dask_scaling

# %%
import json
from itertools import count
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from myst_nb import glue

from dpkmeans.blocks import BLOCK_ROWS, plan
from dpkmeans.claims import VERDICTS
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine import run
from dpkmeans.lloyd import block_silhouette, local_map_reduce
from dpkmeans.papers.silhouette import claims as sil_claims
from dpkmeans.papers.silhouette.audit import run_audits
from dpkmeans.papers.silhouette.study import ALGORITHMS, PAPER_DATASETS
from dpkmeans.papers.silhouette.variants import as_published, corrected
from dpkmeans.plotting import PALETTE, plot_curves, use_book_style

use_book_style()
next_seed = count(SEED).__next__  # every experiment gets its own seed: SEED, SEED + 1, ...

# %% [markdown]
# ## The silhouette and its centre form
#
# The silhouette of a record $x$ in a clustering compares its distance to its own cluster, $a$,
# with its distance to the nearest other cluster, $b$: $S(x) = (b - a)/\max(a, b)$. The classical
# definition averages the distances to every *record* of a cluster, which costs $O(n^2)$. The
# paper replaces the records by the centres (its "improvement of the calculation"; reference
# §2.4): $a = \lVert x - u_{j(x)} \rVert$ is the distance to the record's own centre and
# $b = \min_{j \ne j(x)} \lVert x - u_j \rVert$ the distance to the next one. That is one pass
# over the data, $O(nkd)$, the same cost as the Lloyd step, and a cluster's silhouette is
# $S_k = \sum_{x \in k} S(x) / n_k$.
#
# ```{prf:lemma} The centre silhouette lies in [0, 1]
# :label: lem-centre-silhouette
#
# If every record belongs to its nearest centre, then $0 \le S(x) \le 1$ for every record.
# ```
#
# ```{prf:proof}
# The own centre is the nearest, so $a \le b$ and $\max(a, b) = b$. Hence
# $S(x) = 1 - a/b \in [0, 1]$ (and $S(x) = 0$ when $a = b$, including the tie of two equal
# centres; the library sets $S(x) = 0$ when $b = 0$).
# ```
#
# The library computes the per-cluster sums $\sum_{x \in k} S(x)$ and counts block by block
# (`dpkmeans.lloyd.block_silhouette`): a map-reduce step like the Lloyd statistics. Checked
# against a brute-force computation, record by record:

# %%
rng = np.random.default_rng(next_seed())
X_check = rng.random((SILHOUETTE_CHECK_ROWS, 3))
C_check = rng.random((4, 5, 3))  # four replicas of five centres
C_check[0, 1] = C_check[0, 0]  # a duplicated centre: every tie has S = 0
sums, counts = local_map_reduce(X_check, block_silhouette, C_check)
dist = np.linalg.norm(X_check[None, :, None, :] - C_check[:, None, :, :], axis=3)  # (R, n, k)
order = np.sort(dist, axis=2)
a, b = order[..., 0], order[..., 1]
s = np.where(b > 0, (b - a) / np.maximum(b, 1e-300), 0.0)
own = dist.argmin(axis=2)
brute_sums = np.stack([np.bincount(own[r], weights=s[r], minlength=5) for r in range(4)])
silhouette_gap = float(np.abs(brute_sums - sums).max())
print(f"largest difference from brute force: {silhouette_gap:.1e}; S(x) in "
      f"[{s.min():.3f}, {s.max():.3f}]")
glue("ch8_sil_gap", f"{silhouette_gap:.1e}", display=False)
glue("ch8_sil_rows", SILHOUETTE_CHECK_ROWS, display=False)

# %% [markdown]
# ## The allocation rule, and why its budget claim is false
#
# In iteration $t$ the paper gives cluster $k$ the budget
#
# $$\varepsilon_k^t = \frac{\varepsilon}{2^t} \cdot \frac{1 + S_k}{1 + \min_j S_j},$$
#
# and argues that "as $S_k$ is in $[-1, 1]$, apparently $\varepsilon_k^t \le \varepsilon/2^t$".
# The multiplier is the other way round: $S_k \ge \min_j S_j$, so $(1 + S_k)/(1 + \min_j S_j) \ge 1$,
# with equality only for the worst-separated cluster. Under parallel composition (each record is
# in one cluster) an iteration costs the *largest* per-cluster budget,
#
# $$\max_k \varepsilon_k^t = \frac{\varepsilon}{2^t} \cdot \frac{1 + \max_j S_j}{1 + \min_j S_j}.$$
#
# Numbers (reference §5.6, item 1-1):

# %%
def multipliers(S):
    S = np.asarray(S, dtype=float)
    return (1 + S) / (1 + S.min())


examples = {"classical silhouette, S = (0.8, -0.5, 0.3)": [0.8, -0.5, 0.3],
            "classical silhouette, S = (0.9, -0.95)": [0.9, -0.95],
            "centre form, S = (0.9, 0.0)": [0.9, 0.0]}
for name, S in examples.items():
    w = multipliers(S)
    print(f"{name}: multipliers {np.round(w, 2)}, the iteration costs {w.max():.1f} x eps/2^t")
glue("ch8_counter_max", f"{multipliers([0.8, -0.5, 0.3]).max():.1f}", display=False)
glue("ch8_counter_big", f"{multipliers([0.9, -0.95]).max():.0f}", display=False)

# %% [markdown]
# With the classical silhouette the factor is unbounded ({glue:text}`ch8_counter_max` in the
# first example, {glue:text}`ch8_counter_big` in the second). With the centre form that the
# paper computes, $S_k \in [0, 1]$ ({prf:ref}`lem-centre-silhouette`), so the factor is at most 2
# per iteration: bounded, but still an overspend. Two more costs are missing from the paper's
# total. Its initial centres are noisy means of $K$ equal splits of the data with a budget
# $\varepsilon_k^0$ that is never defined (read at $t = 0$ the formula gives $\varepsilon$ itself,
# so the book charges $\varepsilon$), and the silhouettes $S_k$ that set the noise scales are
# computed from the data without noise: the scale of the noise, which the output reveals, is a
# function of the data (a leak, with no finite $\varepsilon$).
#
# The book does not write the overspend down as prose: the as-published configuration records
# each cost in its ledger, and the ledger computes the total. One run on a small mixture:

# %%
mix = gaussian_mixture_dataset(3_000, 3, 2, rng=np.random.default_rng(next_seed()),
                               separation=5.0)
X_mix = np.asarray(mix.scaled((0.0, 1.0)).X)
box2 = (np.zeros(2), np.ones(2))
published = run(X_mix, as_published(3, EPSILON, box2, data_derived_bounds=False), next_seed())
fixed = run(X_mix, corrected(3, EPSILON, box2), next_seed())
ledger = published.ledger.to_frame()
notes = ledger[ledger["epsilon"] == 0]
print("Recorded flaws:")
for row in notes[notes["mechanism"] != "post-processing"].itertuples():
    print(f"  {row.mechanism}: {row.label}")
spend = ledger[ledger["epsilon"] > 0].groupby("scope", sort=False)["epsilon"].agg(["count", "max"])
print(spend.rename(columns={"count": "charges", "max": "eps charged (max over clusters)"})
      .round(4).to_string())
print(f"As published: total {published.ledger.total().epsilon:.3f} for a declared "
      f"eps = {EPSILON:g}, private: {published.ledger.is_private}")
print(f"Corrected: total {fixed.ledger.total().epsilon:.3f}, private: {fixed.ledger.is_private}")
glue("ch8_demo_spent", round(float(published.spent[0]), 2), display=False)
glue("ch8_demo_fixed", round(float(fixed.spent[0]), 3), display=False)

# %% [markdown]
# The as-published run spent {glue:text}`ch8_demo_spent` for a declared $\varepsilon = 1$: the
# initial release's $\varepsilon$, plus iterations that each cost up to twice their share. Its
# ledger also lists the leaks (the exact silhouettes, the shared draw, the file-order splits), so
# `is_private` is False whatever the total. Over the whole reproduction below, the largest
# overspend factor of an as-published run is {glue:text}`ch8_overspend_max` (a run's true spend
# over its declared $\varepsilon$).
#
# ## The corrected rule
#
# Three changes make the method $\varepsilon$-DP, and none needs a new idea:
#
# 1. normalise by the **maximum**, $w_k = (1 + \tilde S_k)/(1 + \max_j \tilde S_j)$, so that
#    $\max_k w_k = 1$ and an iteration costs exactly its share;
# 2. compute the silhouettes from **released** quantities: in iteration $t$, release every
#    cluster's $(\sum_{x \in k} S(x), n_k)$ with Laplace noise, then
#    $\tilde S_k = \mathrm{clip}(\widetilde{\Sigma}_k / \max(\tilde n_k, 1), 0, 1)$;
# 3. start from **public** sphere-packing centres, and draw the sum's and the count's noise
#    independently.
#
# Let $T = 10$, $s = 0.1$ the silhouettes' share and $e_t = \varepsilon\, 2^{-t} / (1 - 2^{-T})$,
# so that $\sum_{t=1}^T e_t = \varepsilon$. Iteration $t$ releases the silhouette statistics at
# $s\, e_t$ and cluster $k$'s $(S_k, n_k)$ at $(1 - s)\, e_t\, w_k$.
#
# ```{prf:theorem} The corrected method is $\varepsilon$-DP
# :label: thm-silhouette-corrected
#
# On public bounds, under add/remove neighbours, the corrected method's released centroids
# (and every intermediate release) are $\varepsilon$-DP, however many iterations it runs before
# it stops.
# ```
#
# ```{prf:proof}
# Fix iteration $t$ and the centroids released before it (the adaptive composition argument of
# chapter 3 conditions on them). Adding or removing one record $x$ changes one cluster's
# $(\sum S, n)$ by $(S(x), 1)$, whose $L_1$ norm is at most 2 ({prf:ref}`lem-centre-silhouette`),
# and no other cluster's; the Laplace release with scale $2/(s e_t)$ per cluster is therefore
# $s e_t$-DP by parallel composition ({prf:ref}`thm-parallel`). The weights $w_k$ are a function of
# that release and of public values (post-processing, {prf:ref}`thm-post-processing`), and
# $0 < w_k \le 1$. The record changes one cluster's $(S_k, n_k)$ by at most $\Delta_1$
# ({prf:ref}`thm-lloyd-sensitivity`), so cluster $k$'s release at $(1 - s) e_t w_k$ costs at most
# $(1 - s) e_t w_k \le (1 - s) e_t$, and in parallel over the clusters the iteration's centroids
# cost at most $(1 - s) e_t$. The iteration costs $e_t$ whatever the weights, so the cost of each
# step is fixed before the data are seen, and sequential composition over at most $T$ steps
# gives $\sum_t e_t = \varepsilon$ ({prf:ref}`thm-sequential`). Stopping early is a function of
# released centroids and only removes steps. The initial centres are public.
# ```
#
# The corrected allocation rule, as the engine calls it in every iteration (it records its own
# release in the ledger before drawing any noise):
#
# ```{literalinclude} ../src/dpkmeans/papers/silhouette/variants.py
# :language: python
# :pyobject: NoisySilhouetteWeights
# ```
#
# The ledger of the corrected run above totals {glue:text}`ch8_demo_fixed`, and the test
# suite checks, for every run of the reproduction, that no replica of a corrected run spends
# more than its $\varepsilon$.
#
# ## MapReduce, on Dask
#
# The paper's MapReduce job is the DP-Lloyd query split over the data: a **map** computes, for
# its share of the records, the exact per-cluster sums and counts (and, here, the silhouette
# sums); a **reduce** adds the shares; the noise is added once, to the totals. Nothing about
# the noise is distributed, and it must not be: a worker that drew its own noise would add
# noise once per partition, and a recomputed partition would draw it twice.
#
# The library's `backend="dask"` does exactly this on `dask.distributed`
# (`dpkmeans.backends.dask`). Both backends cut the rows into one **public block plan**: blocks
# of {glue:text}`ch8_block_rows` rows, whatever the input's partitioning, added in one fixed
# pairwise order (`dpkmeans.blocks.tree_reduce`). On Dask the data sit on the workers as a
# persisted `dask.array` whose chunks are runs of $2^m$ aligned blocks (fewer, larger tasks: the
# scheduler charges per task); a chunk of $2^m$ aligned blocks is exactly one node of the
# pairwise tree, so one task per chunk computes its blocks' exact statistics with the same
# function as the in-memory path and adds them in the same order, a tree of tasks adds the
# chunks, and only the $(R, k, d + 1)$ total comes back to the client, where the engine draws
# the noise. Because the blocks, the function and the order of the additions are the same, the
# Dask path gives the **same bits** as the in-memory path for the same seed: not close, equal. The test suite checks it on four partitionings,
# three configurations and the estimators, and kills a worker in the middle of a fit: Dask
# recomputes the lost blocks, and the result and the ledger are unchanged, because the noise is
# drawn only after the reduction has returned.

# %% tags=["nbval-ignore-output"]
from dpkmeans.backends.dask import DaskBackend

big = gaussian_mixture_dataset(DASK_ROWS, 4, 3, rng=np.random.default_rng(next_seed()),
                               separation=4.0)
X_big = np.asarray(big.scaled((0.0, 1.0)).X)
box3 = (np.zeros(3), np.ones(3))
config = corrected(4, EPSILON, box3)
seed = next_seed()
in_memory = run(X_big, config, seed, replicas=4)
with DaskBackend() as dask_backend:  # a LocalCluster of two worker processes
    print(dask_backend.client)
    on_dask = run(X_big, config, seed, replicas=4, backend=dask_backend)
same_bits = bool(np.array_equal(in_memory.centroids, on_dask.centroids)
                 and in_memory.ledger.entries == on_dask.ledger.entries)
print(f"{len(plan(DASK_ROWS))} blocks; centroids and ledger bit-identical: {same_bits}")

# %%
glue("ch8_block_rows", f"{BLOCK_ROWS:,d}", display=False)
glue("ch8_same_bits", str(same_bits), display=False)

# %% [markdown]
# The map task of one chunk, and the submission of one map-reduce as a single graph:
#
# ```{literalinclude} ../src/dpkmeans/backends/dask.py
# :language: python
# :pyobject: _chunk_reduce
# ```
#
# ```{literalinclude} ../src/dpkmeans/backends/dask.py
# :language: python
# :pyobject: DaskBackend.submit
# ```
#
# Bit-identical: **{glue:text}`ch8_same_bits`**. On a real cluster, only the client changes:
#
# ```python
# from distributed import Client
# client = Client("tcp://scheduler.example.org:8786")   # the cluster's scheduler
# DPKMeans(n_clusters=7, epsilon=1.0, bounds=(lower, upper), backend="dask",
#          client=client).fit(X)                         # X: a dask array or dataframe
# ```
#
# An iteration then costs one round trip to the scheduler (submit the chunk tasks, gather one
# small total), plus the arithmetic of $\lceil N / {\rm block} \rceil$ blocks spread over the
# workers, plus the client's noise and update, which do not depend on $N$. A larger cluster
# divides only the second term; the round trip is fixed (measured below), and a block is the
# unit of parallelism, so data of fewer than {glue:text}`ch8_block_rows` rows run as one task on
# one worker however many there are. Persist the data once in the backend's chunks
# (`client.persist(backend.as_chunks(X))`), or every fit rechunks them and moves them between
# workers.
#
# ### Speed-up (the paper's Fig 7)
#
# The paper reports the speed-up $S(m) = T_1/T_m$ on up to 5 Hadoop nodes and finds that it
# grows with the data size. The book measures it with 1 and 2 worker processes on this 2-core
# machine, on synthetic mixtures of the sizes of the paper's four datasets, for both versions of
# the method (`python -m benchmarks.dask_scaling`, which writes `benchmarks/dask_scaling.json`):

# %%
scaling = json.loads(Path(SCALING).read_text())
speed = pd.DataFrame([{"method": r["method"], "data (rows x attributes)":
                       f"{r['dataset']} ({r['n']:,} x {r['d']})", "blocks": r["blocks"],
                       "iterations": r["iterations"],
                       "1 worker (s)": round(r["seconds"]["1 worker"], 3),
                       "2 workers (s)": round(r["seconds"]["2 workers"], 3),
                       "speed-up": round(r["speedup_mean"], 2)}
                      for r in scaling["fig7_speedup"].values()])
print(speed.to_string(index=False))
overhead = scaling["overhead"]
trip = scaling["round_trip"]
glue("ch8_overhead", round(overhead["ratio_dask2_over_memory"], 2), display=False)
glue("ch8_overhead1", round(overhead["ratio_dask1_over_memory"], 2), display=False)
glue("ch8_overhead_met", "met" if overhead["met"] else "missed", display=False)
glue("ch8_overhead20", round(overhead["replicas=20"]["ratio_dask2_over_memory"], 2),
     display=False)
glue("ch8_trip_ms", round(1000 * trip["2 workers"]["median_s"], 1), display=False)
covtype_rows = speed[speed["data (rows x attributes)"].str.startswith("covtype")]
glue("ch8_covtype_speedup", f"{covtype_rows['speed-up'].min():.2f} to "
     f"{covtype_rows['speed-up'].max():.2f}", display=False)

# %% [markdown]
# The shape of Fig 7 reproduces: below one block (blood, abalone, gamma) there is nothing to
# split and the speed-up is 1; at covtype's size (9 blocks, in 5 chunks for two workers) two
# workers are {glue:text}`ch8_covtype_speedup` times faster than one. Two worker processes
# share this machine's two cores with the scheduler and the client, so the speed-up stays well
# below 2; the paper's five nodes had a core each. The fixed cost of a map-reduce round
# trip is {glue:text}`ch8_trip_ms` ms; it is why a gamma-sized fit takes a quarter of a second on
# Dask however many workers it has. At $N = 10^6$ ($d = 10$, $k = 8$, one DPLloyd fit) the Dask
# path with two workers takes {glue:text}`ch8_overhead` times the in-memory path's time (one
# worker: {glue:text}`ch8_overhead1`); the target of at most 1.5 was
# **{glue:text}`ch8_overhead_met`**. Most of the difference is the round trip, once per
# iteration. For a batch of 20 replicas, the shape of the sweep, the arithmetic dominates and
# two workers take {glue:text}`ch8_overhead20` times the in-memory time. One setting matters on
# a real machine too: with `distributed`'s default allocator setting
# (`MALLOC_TRIM_THRESHOLD_=65536`) every per-block temporary is a fresh `mmap`, and a worker's
# CPU time for the same pass grew from 0.4 s to 2 s over consecutive calls; the backend's own
# `LocalCluster` keeps freed memory in the heap (`WORKER_MALLOC_ENV`), which holds it at 0.4 s.
#
# ## Reproduction
#
# The paper's experiments (reference §5.4-5.5): blood ($k = 2$), abalone ($k = 3$), gamma
# (`magic`, 19,020 rows; the paper prints 19,200; $k = 2$) and covtype (the registry's
# 10,000-row sample, $k = 7$; the loader downloads the full file for users with the network);
# the paper states no $k$, so the book uses the number of classes. The paper's $\varepsilon$
# values are lost with its figures; the book sweeps $\varepsilon \in \{0.05, 0.1, 0.2, 0.5, 1,
# 2, 5\}$. The paper averages 10 runs; the book runs **200 independent runs per point**, so that
# the verdicts have power. Each run is scored by the F-measure (Hungarian matching, reference
# §2.3) against non-private Lloyd from **the same initial centres** (10 iterations), and by
# squared NICV in the public scaling. Six algorithms:
#
# - `as_published` (on the paper's min-max scaling; not private), `corrected`;
# - `corrected_stop_one`: the corrected method with the paper's literal stopping threshold,
#   "lower than one" (reference §5.6, item 1-6);
# - `equal_weights`: the corrected method without silhouettes (the same halving, equal weights),
#   the ablation that isolates what the weights do;
# - `dplloyd`: DPLloyd with a uniform budget over $T = 5$ (the paper's baseline [7] is a uniform
#   DP k-means, whose settings the paper does not give);
# - `dplloyd-impr`: Su et al.'s DPLloyd-Impr (chapter 5).

# %%
results = pd.read_csv(RESULTS)
timing = json.loads(Path(TIMING).read_text())
glue("ch8_points", int(len(results)), display=False)
glue("ch8_runs", int(results["runs"].sum()), display=False)
glue("ch8_wall_min", round(timing["wall_s"] / 60, 1), display=False)
glue("ch8_target_met", "met" if timing["met"] else "missed", display=False)
glue("ch8_overspend_max", round(float(results["overspend_max"][~results["is_private"]].max()), 2),
     display=False)
private = results[results["is_private"]]
glue("ch8_private_ok", bool((private["epsilon_spent_max"] <= private["epsilon"] * (1 + 1e-9)).all()),
     display=False)
order = list(PAPER_DATASETS)


def figure(metric: str, ylabel: str):
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.6), constrained_layout=True)
    for ax, dataset in zip(axes, order):
        rows = results[results["dataset"] == dataset]
        plot_curves(ax, rows, "epsilon", metric)
        ax.set(xscale="log", title=f"{dataset} (d = {rows['d'].iloc[0]}, k = {rows['k'].iloc[0]})",
               xlabel=r"$\varepsilon$")
    axes[0].set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=6)
    return fig


# %% mystnb={"figure": {"caption": "F-measure against non-private Lloyd from the same starts (higher is better), mean of 200 runs per point with 95% intervals. `as_published` runs on the paper's min-max scaling and is not private.", "name": "fig-silhouette-f"}} tags=["hide-input"]
figure("f", "F-measure")
plt.show()

# %% mystnb={"figure": {"caption": "Squared NICV in the public scaling (lower is better), 200 runs per point with 95% intervals.", "name": "fig-silhouette-nicv"}} tags=["hide-input"]
figure("nicv", "squared NICV")
plt.show()

# %%
iterations = results.pivot_table(index=["dataset", "epsilon"], columns="algorithm",
                                 values="iterations_mean").round(1)[list(ALGORITHMS)]
print("mean iterations per run")
print(iterations.loc[["blood", "magic"]].to_string())
def by_point(algorithm: str) -> pd.DataFrame:
    return results[results["algorithm"] == algorithm].set_index(["dataset", "epsilon"]).sort_index()


stop_one, halving, impr = by_point("corrected_stop_one"), by_point("corrected"), by_point("dplloyd-impr")
best = results.groupby(["dataset", "epsilon"])["f_mean"].max().reindex(impr.index)
glue("ch8_stop_one_better", int((stop_one["f_ci_low"] > halving["f_ci_high"]).sum()), display=False)
glue("ch8_stop_one_points", int(len(stop_one)), display=False)
glue("ch8_impr_best", int((impr["f_mean"] >= best).sum()), display=False)

# %% [markdown]
# {glue:text}`ch8_points` points, {glue:text}`ch8_runs` runs. The sweep took
# {glue:text}`ch8_wall_min` minutes on this 2-core machine (`python -m
# benchmarks.silhouette_reproduction`; the target of 10 minutes was
# **{glue:text}`ch8_target_met`**). No private run spent more than its $\varepsilon$
# ({glue:text}`ch8_private_ok`).
#
# What the figures show is decided by the **halving schedule**, not by the silhouettes. With
# $\varepsilon_t = \varepsilon / 2^t$, iteration 10 holds $\varepsilon/1024$: its noise is
# hundreds of times that of the first iteration, and the released centroids are the last
# iteration's. With a stopping threshold of $10^{-3}\sqrt d$ the noise itself keeps the centres
# moving, so nearly every run goes to 10 iterations and publishes its noisiest centres. The
# corrected method and its equal-weights ablation are close everywhere: the weights move budget
# between clusters within an iteration, but cannot repair the last iteration. The paper's
# literal threshold of 1 (`corrected_stop_one`) stops after one or two iterations, while the
# budget is still large, and is significantly better than the same method with the small
# threshold at {glue:text}`ch8_stop_one_better` of {glue:text}`ch8_stop_one_points` points. The
# paper's threshold, read by reference §5.6 as a typo, may be what made its method work.
# DPLloyd-Impr has the best mean F-measure at {glue:text}`ch8_impr_best` of the 28
# (dataset, $\varepsilon$) pairs.
#
# ### The claims ledger
#
# Four claims (reference §5.5), each for the as-published and for the corrected method, judged
# against uniform DPLloyd with Welch's test over the 200 runs of each point and the four verdicts
# of chapter 7 (`dpkmeans.papers.silhouette.claims`; the rules are in its docstring and were fixed
# before the results were read). The table is `data/results/silhouette_claims.csv`, which a test
# recomputes from the committed results.

# %%
ledger = pd.read_csv(CLAIMS_FILE)
summary = sil_claims.claims_summary(ledger)
print(summary[["claim", "method", "text", "verdict", *VERDICTS]].to_string(index=False))
for row in summary.itertuples():
    glue(f"ch8_claim{row.claim}_{row.method}", row.verdict, display=False)

# %%
pd.set_option("display.max_colwidth", 160)
print(ledger[["claim", "method", "dataset", "verdict", "evidence"]].to_string(index=False))

# %% [markdown]
# 1. **Higher F-measure than uniform DPLloyd at small $\varepsilon$**: as published
#    *{glue:text}`ch8_claim1_as_published`*, corrected *{glue:text}`ch8_claim1_corrected`*.
#    Uniform DPLloyd is better or no worse at every small $\varepsilon$ on blood and gamma.
# 2. **Uniform as good or better at large $\varepsilon$**: as published
#    *{glue:text}`ch8_claim2_as_published`*, corrected *{glue:text}`ch8_claim2_corrected`*. It
#    holds, but because uniform DPLloyd is better everywhere, not because of a crossover.
# 3. **Fewer iterations, so faster**: as published *{glue:text}`ch8_claim3_as_published`*,
#    corrected *{glue:text}`ch8_claim3_corrected`*. With the small threshold the silhouette
#    methods run close to the cap of 10 iterations against DPLloyd's 5, and each iteration makes
#    two passes over the data (statistics and silhouettes), so a run is many times slower.
# 4. **Speed-up grows with data size**: as published *{glue:text}`ch8_claim4_as_published`*,
#    corrected *{glue:text}`ch8_claim4_corrected`* (the table above).
#
# ## Auditing
#
# The as-published method adds **one** Laplace draw $\eta$ to a cluster's sum and to its count
# (the paper's $Noise_k^t$ appears in both). Then every released coordinate is
# $c_i = (S_i + \eta)/(n + \eta)$, and
#
# $$\frac{1 - c_1}{1 - c_2} = \frac{n - S_1}{n - S_2}$$
#
# has no noise in it at all. The audit's dataset exposes it (`dpkmeans.papers.silhouette.audit`):
# $D$ holds {glue:text}`ch8_audit_group` identical records at $(0.2, 0.3)$ and as many at
# $(0.8, 0.7)$, in that file order, so the paper's equal splits are the two groups; $D'$ adds
# one record at the corner $(0, 0)$. On $D$ the first cluster's ratio is $8/7$ exactly; on $D'$
# the added record moves it. The event "some cluster's ratio is $8/7$ to rounding" is likely on
# $D$ and nearly impossible on $D'$, so the audit's lower bound on $\varepsilon$ grows with the
# trials, whatever $\varepsilon$ is claimed. The same audit of the corrected method (independent
# draws) finds nothing. Both at a claimed $\varepsilon = 1$, 99% confidence:

# %% tags=["nbval-ignore-output"]
audit_rows = []
for trials in AUDIT_TRIALS:
    for report in run_audits(EPSILON, trials, group_size=AUDIT_GROUP_SIZE, seed=next_seed()):
        audit_rows.append({"method": report.name, "trials per dataset": trials,
                           "lower bound on eps": round(report.lower_bound, 2),
                           "verdict": report.verdict, "seconds": round(report.seconds, 1)})
audits = pd.DataFrame(audit_rows)
print(audits.to_string(index=False))

# %%
detected = audits[audits["verdict"] == "violation detected"]
first = detected.sort_values("trials per dataset").iloc[0] if len(detected) else None
glue("ch8_audit_group", AUDIT_GROUP_SIZE, display=False)
glue("ch8_audit_first", int(first["trials per dataset"]) if first is not None else "none",
     display=False)
glue("ch8_audit_corrected_ok", bool((audits.loc[audits["method"].str.startswith("corrected"),
                                                "verdict"] == "consistent").all()), display=False)

# %% [markdown]
# The as-published method's violation is detected from {glue:text}`ch8_audit_first` trials per
# dataset on; every audit of the corrected method is consistent with its claim
# ({glue:text}`ch8_audit_corrected_ok`), which is all an audit can say. The shared draw is the
# easiest of the paper's flaws to catch; the overspend of the min-normalised weights (at most a
# factor 2 per iteration) and the unaccounted initial budget are not audited here: with
# independent draws they raise the privacy loss by a bounded factor, which chapter 6's trial
# counts show to need far more runs. The ledger computes them instead.
#
# ## Exercises
#
# ```{exercise}
# :label: ex-silhouette-papermill
#
# Run the chapter's sweep cell on a dataset the paper did not use, with papermill, and decide
# whether the halving schedule still decides the outcome there.
# ```
#
# ````{solution} ex-silhouette-papermill
# :class: dropdown
#
# The cell notebook takes any registry dataset and a $k$:
#
# ```bash
# papermill notebooks/sweeps/silhouette_cell.ipynb iris.ipynb \
#     -p dataset iris -p k 3 -p runs 100 -p base_seed 1 -p output_csv iris.csv
# ```
#
# Then read `iris.csv` with pandas and compare `corrected`, `equal_weights` and
# `corrected_stop_one` at each $\varepsilon$ (`f_mean`, `f_ci_low`, `f_ci_high`,
# `iterations_mean`). That run gives a different picture from the paper's data: on 150
# records the halving runs stop earlier (6.5 to 9.6 iterations on average), the threshold of
# one helps only from $\varepsilon = 0.5$ on, and uniform DPLloyd has a higher mean F than all
# three only at $\varepsilon = 5$. Small data make the centre shift small sooner; check it
# with the confidence intervals before drawing a conclusion.
# ````
#
# ```{exercise}
# :label: ex-silhouette-client
#
# Run the Dask demonstration of this chapter against a cluster you start yourself, with
# `distributed.LocalCluster(n_workers=3)` and a `Client`, and check that the centroids are
# still the in-memory bits. Then time one iteration with 1, 2 and 3 workers on covtype-sized
# data and explain the numbers with the cost model of the section on MapReduce.
# ```
#
# ````{solution} ex-silhouette-client
# :class: dropdown
#
# ```python
# from distributed import Client, LocalCluster
# with LocalCluster(n_workers=3, threads_per_worker=1) as cluster, Client(cluster) as client:
#     on_three = run(X_big, config, seed, replicas=4, backend="dask", client=client)
# assert np.array_equal(on_three.centroids, in_memory.centroids)
# ```
#
# The block plan does not depend on the number of workers, so the bits do not either. The time
# of an iteration is about one round trip plus the blocks' arithmetic divided among the
# workers: on a 2-core machine a third worker adds no core, so it does not help; on covtype's
# 9 blocks three workers on three cores take about a third of the arithmetic each.
# ````
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - The centre silhouette costs one pass and lies in $[0, 1]$; the paper's min-normalised
#   weights are $\ge 1$, so its budget claim is false, and the ledger computes the true spend
#   (up to {glue:text}`ch8_overspend_max` times the declared $\varepsilon$ in the reproduction).
# - Normalising by the maximum, releasing the silhouettes with noise, public initial centres and
#   independent draws make it $\varepsilon$-DP ({prf:ref}`thm-silhouette-corrected`).
# - MapReduce is map = exact statistics of a block, reduce = a fixed tree of sums, noise once on
#   the client; on Dask it gives the in-memory bits and survives a lost worker.
# - The halving schedule publishes the noisiest iteration; with a small stopping threshold
#   neither version beats uniform DPLloyd, and DPLloyd-Impr is the method to use.
# :::
