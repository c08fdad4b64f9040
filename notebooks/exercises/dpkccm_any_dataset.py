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
# This notebook re-runs the comparison of {numref}`chapter %s <ch-dpkccm>` (figures 3-8 of
# {cite:t}`ni_dpkccm`: NICV against $\varepsilon$ for the paper's four variants and for the
# DPLloyd-Impr of {cite:t}`su2016differentially`) on any dataset the data layer can load. It is
# parametrized for papermill; the stored run uses the bundled `iris` data, so it works
# offline. Point it at another dataset from the command line. Papermill's second argument is
# the path where it writes the executed copy of this notebook; any path outside the book will
# do, here one in `/tmp`:
#
# ```bash
# papermill notebooks/exercises/dpkccm_any_dataset.ipynb /tmp/dpkccm-wine.ipynb \
#     -p dataset wine -p k 3
# papermill notebooks/exercises/dpkccm_any_dataset.ipynb /tmp/dpkccm-magic.ipynb \
#     -p dataset magic -p paper silhouette -p k 2 -p inits 20 -p runs 50
# ```
#
# (`python -m dpkmeans datasets list` shows the names; the UCI files need `DPKMEANS_DATA` or a
# download.) The data are scaled to $[-1, 1]^d$ with the registry's **public** bounds, so
# every run is $\varepsilon$-DP; the notebook checks every run's ledger and stops if a total
# differs from its $\varepsilon$.

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
dataset = "iris"  # a registry or bundled dataset name
paper = None  # whose columns to use (e.g. "dpkccm"); None: every numeric one
k = 3  # clusters
epsilons = [0.1, 0.2, 0.4, 0.6, 0.8, 1.0]  # the privacy budgets compared
inits = 5  # sets of initial centroids (the paper: 20)
runs = 20  # runs per set (the paper: 50)
base_seed = 7  # every draw below comes from this seed

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd

from dpkmeans.data import load
from dpkmeans.papers.dpkccm.claims import head_to_head
from dpkmeans.papers.dpkccm.study import (ALGORITHMS, BOX, REFERENCE, Point,
                                          evaluate_points)
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import table

use_book_style()
data = {"public": load(dataset, paper=paper).scaled(BOX)}
N, d = data["public"].X.shape
print(f"{dataset}: {N:,} records, {d} numeric attributes, each scaled to [−1, 1]")

# %%
todo = [Point(a, k, e, n=3 if a.endswith("_nk") else 1)
        for a in ALGORITHMS for e in epsilons]
results = evaluate_points(data, todo, dataset=dataset, base_seed=base_seed,
                          inits=inits, runs=runs, reference_ks=[k])
assert results["ledger_equals_epsilon"].dropna().all(), "a ledger total is not ε"
print(f"{len(todo)} points × {inits * runs} runs; every ledger total equals its ε")

# %% mystnb={"figure": {"caption": "Squared NICV (lower is better) against $\\varepsilon$ of the paper's four variants and of DPLloyd-Impr on the dataset of the parameters cell (the stored run: iris, $k = 3$, 5 starts $\\times$ 20 runs per point), with 95% intervals. Grey, dashed: non-private Lloyd from the same starts.", "name": "fig-dpkccm-any-dataset"}} tags=["hide-input"]
# the styles of the chapter's figures: DP-KCCM in black, non-private Lloyd grey
STYLES = {"average_k": series_style(0), "allocation_k": series_style(1),
          "average_nk": series_style(2), "allocation_nk": series_style(7),
          "dplloyd-impr": series_style(4)}
LABELS = {"allocation_nk": "allocation_nk (DP-KCCM)", "dplloyd-impr": "DPLloyd-Impr"}
fig, ax = new_figure(height=3.4)
for algorithm, style in STYLES.items():
    curve = results[results["algorithm"] == algorithm].sort_values("epsilon")
    mean = curve["nicv_mean"]
    ax.errorbar(curve["epsilon"], mean, yerr=[mean - curve["nicv_ci_low"],
                                              curve["nicv_ci_high"] - mean],
                label=LABELS.get(algorithm, algorithm), **style)
ax.axhline(results.loc[results["algorithm"] == REFERENCE, "nicv_mean"].iloc[0],
           color="0.45", linestyle="--", label="non-private Lloyd")
ax.set(xlabel=r"$\varepsilon$", ylabel="squared NICV", title=f"{dataset}, $k = {k}$")
fig.legend(loc="outside lower center", ncol=3)
plt.show()

# %% [markdown]
# The paper's pairwise claims on this dataset, point by point (Welch's $t$ test on the means
# of the per-initialisation averages, 5% level; `dpkmeans.papers.dpkccm.claims.head_to_head`):

# %%
claims = {"1: allocation_k worse than average_k": ("average_k", "allocation_k"),
          "2: average_nk better than average_k": ("average_nk", "average_k"),
          "3: allocation_nk better than average_nk": ("allocation_nk", "average_nk"),
          "DP-KCCM against DPLloyd-Impr": ("allocation_nk", "dplloyd-impr")}
summary = []
for name, (a, b) in claims.items():
    counts = head_to_head(results, dataset, a, b)
    summary.append({"claim": name, "first": a, "second": b,
                    "first better": counts["a better"],
                    "second better": counts["b better"],
                    "no difference": counts["no difference"]})
table(pd.DataFrame(summary), name="dpkccm-any-claims")

# %% [markdown]
# **Exercise.** Run this notebook on two datasets of different dimension (e.g. `wine`,
# $d = 13$, and `iris`, $d = 4$) with the paper's 20 starts of 50 runs each. Do the three
# claims get the same verdict on both? Which of the five methods would you choose, and does the
# answer depend on $\varepsilon$? Compare with the chapter's claims ledger
# ({ref}`claims-verdicts`).
