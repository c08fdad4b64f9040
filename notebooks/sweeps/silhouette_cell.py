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
# # One cell of the silhouette-budget reproduction
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/silhouette.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/silhouette.yaml`): one dataset, every algorithm
# at every epsilon. The `parameters` cell holds a fast default; the sweep overrides it. All the
# work is `dpkmeans.papers.silhouette.study.evaluate_cell`; every point derives its seed from
# `base_seed` and the point itself, so the cell layout never changes the numbers.
# A sweep file's `parts` may split a long cell: each part computes one block of the points
# (`part` of `parts`), and the sweep joins the parts' rows in order. Any dataset
# of the registry works with an explicit `k` (chapter 8, exercise 1).

# %% tags=["parameters"]
case = "blood"  # the case name in the sweep file (informational)
dataset = "blood"  # a registry name; the paper's are in study.PAPER_DATASETS
k = None  # None: the paper dataset's k (its number of classes)
base_seed = 20261123
runs = 4  # independent runs per point (the study: 200; the paper: 10)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.papers.silhouette.study import evaluate_cell

rows = evaluate_cell(dataset, base_seed=base_seed, runs=runs, k=k, part=part,
                     parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
honest = rows[rows["is_private"]]
assert (honest["epsilon_spent_max"] <= honest["epsilon"] * (1 + 1e-9)).all(), "a private run overspent"
print(f"{len(rows)} points; F-measure from {rows['f_mean'].min():.3f} to {rows['f_mean'].max():.3f}")
