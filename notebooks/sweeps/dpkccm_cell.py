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
# # One cell of the DP-KCCM reproduction
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/dpkccm.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/dpkccm.yaml`): one dataset and one axis
# (`"epsilon"`, `"k"` or `"ablations"`). The `parameters` cell holds a fast default; the sweep
# overrides it. All the work is `dpkmeans.papers.dpkccm.study.evaluate_cell`; every point derives its
# seed from `base_seed` and the point itself, so the cell layout never changes the numbers.
# A sweep file's `parts` may split a long cell: each part computes one block of the points
# (`part` of `parts`), and the sweep joins the parts' rows in order.

# %% tags=["parameters"]
case = "blood"  # the case name in the sweep file (informational)
dataset = "blood"  # one of dpkmeans.papers.dpkccm.study.PAPER_SETTINGS
axis = "epsilon"  # "epsilon" (figures 3-8), "k" (figures 9-14) or "ablations"
base_seed = 20261122
inits = 2  # initial-centroid sets (paper: 20)
runs = 3  # runs per set (paper: 50)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.papers.dpkccm.study import evaluate_cell

rows = evaluate_cell(dataset, axis, base_seed=base_seed, inits=inits, runs=runs,
                     part=part, parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert rows["ledger_equals_epsilon"].dropna().all(), "a ledger total differs from epsilon"
print(f"{len(rows)} points; NICV from {rows['nicv_mean'].min():.3f} to {rows['nicv_mean'].max():.3f}")
