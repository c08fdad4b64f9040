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
# # Exercise notebook: DP-KCCM on a dataset of your choice
#
# This notebook re-runs the comparison of the DP-KCCM chapter (figures 3-8: NICV against
# $\varepsilon$ for seed 000's four variants and Su et al.'s DPLloyd-Impr) on any dataset the
# data layer can load. It is parametrized for papermill; the stored run uses the bundled
# `iris` data, so it works offline. Point it at another dataset from the command line:
#
# ```bash
# papermill notebooks/exercises/dpkccm_any_dataset.ipynb wine.ipynb -p dataset wine -p k 3
# papermill notebooks/exercises/dpkccm_any_dataset.ipynb magic.ipynb \
#     -p dataset magic -p paper silhouette -p k 2 -p inits 20 -p runs 50
# ```
#
# (`python -m dpkmeans datasets list` shows the names; the UCI files need `DPKMEANS_DATA` or a
# download.) The data are scaled to $[-1, 1]^d$ with the registry's **public** bounds, so
# every run is $\varepsilon$-DP; the ledger check at the end says so for each point.

# %% tags=["parameters"]
dataset = "iris"  # a registry or bundled dataset name
paper = None  # whose column choice to use (e.g. "dp-kccm"); None = every numeric column
k = 3  # clusters
epsilons = [0.1, 0.2, 0.4, 0.6, 0.8, 1.0]
inits = 5  # sets of initial centroids (the paper: 20)
runs = 20  # runs per set (the paper: 50)
base_seed = 7  # every draw below comes from this seed

# %%
import matplotlib.pyplot as plt
import pandas as pd

from dpkmeans.data import load
from dpkmeans.papers.dpkccm.claims import head_to_head
from dpkmeans.papers.dpkccm.study import ALGORITHMS, BOX, REFERENCE, Point, evaluate_points
from dpkmeans.plotting import new_figure, plot_curves, use_book_style

use_book_style()
data = {"public": load(dataset, paper=paper).scaled(BOX)}
print(data["public"])

# %%
todo = [Point(a, k, e, n=3 if a.endswith("_nk") else 1) for a in ALGORITHMS for e in epsilons]
results = evaluate_points(data, todo, dataset=dataset, base_seed=base_seed, inits=inits,
                          runs=runs, reference_ks=[k])
assert results["ledger_equals_epsilon"].dropna().all(), "a ledger total differs from epsilon"
print(f"{len(todo)} points x {inits * runs} runs; every ledger total equals its epsilon")

# %%
fig, ax = new_figure()
plot_curves(ax, results, "epsilon", reference=REFERENCE)
ax.set(xlabel=r"$\varepsilon$", ylabel="squared NICV", title=f"{dataset}, k = {k}")
ax.legend()
plt.show()

# %% [markdown]
# Seed 000's pairwise claims on this dataset, point by point (Welch's t test on the means of
# the per-initialisation averages, 5% level; see `dpkmeans.claims`):

# %%
claims = {"1: allocation_k worse than average_k": ("average_k", "allocation_k"),
          "2: average_nk better than average_k": ("average_nk", "average_k"),
          "3: allocation_nk better than average_nk": ("allocation_nk", "average_nk"),
          "DP-KCCM vs DPLloyd-Impr": ("allocation_nk", "dplloyd-impr")}
summary = []
for name, (a, b) in claims.items():
    counts = head_to_head(results, dataset, a, b)
    summary.append({"claim": name, "first": a, "second": b, "first better": counts["a better"],
                    "second better": counts["b better"], "no difference": counts["no difference"]})
pd.DataFrame(summary).set_index("claim")

# %% [markdown]
# **Exercise.** Run this notebook on two datasets of different dimension (e.g. `wine`, $d = 13$,
# and `iris`, $d = 4$) with the paper's 20 x 50 runs. Do the three claims get the same verdict
# on both? Which of the five methods would you choose, and does the answer depend on
# $\varepsilon$? Compare with the chapter's claims ledger.
