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
# # One cell of the differential-identifiability reproduction
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/di.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/di.yaml`): one case of
# `dpkmeans.papers.di.study.CELLS`, or any other registry dataset with categorical columns
# (`-p case adult`: DI and DP k-prototypes at the paper's setting). The `parameters` cell holds a fast default; the sweep
# overrides it. All the work is `dpkmeans.papers.di.study.evaluate_cell`; every point derives
# its seed from `base_seed` and the point itself, so the cell layout never changes the numbers.
# A sweep file's `parts` may split a long cell: each part computes one block of the points
# (`part` of `parts`), and the sweep joins the parts' rows in order.

# %% tags=["parameters"]
case = "gamma"  # one of dpkmeans.papers.di.study.CELLS, or a mixed dataset such as "adult"
base_seed = 20261125
runs = 3  # runs per point (None: the study's 500 on magic, 1000 on heart, 200 elsewhere)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.papers.di.study import evaluate_cell

rows = evaluate_cell(case, base_seed=base_seed, runs=runs, part=part, parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
honest = rows[rows["is_private"]]
if "epsilon_spent_max" in rows:
    assert (honest["epsilon_spent_max"] <= honest["epsilon"] * (1 + 1e-9)).all(), "overspent"
print(f"{len(rows)} rows of case {case!r}")
