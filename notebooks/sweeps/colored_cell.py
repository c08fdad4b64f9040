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
# # One cell of the colored-noise reproduction
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/colored.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/colored.yaml`): one dataset, every algorithm at
# every (epsilon, delta). The `parameters` cell holds a fast default (a synthetic mixture, so
# it runs without the data files); the sweep overrides it. All the work is
# `dpkmeans.papers.colored.study.evaluate_cell`; every point derives its seed from `base_seed`
# and the point itself, so the cell layout never changes the numbers.
# A sweep file's `parts` may split a long cell: each part computes one block of the points
# (`part` of `parts`), and the sweep joins the parts' rows in order.

# %% tags=["parameters"]
case = "mixture_d2"  # the case name in the sweep file (informational)
dataset = "mixture_d2"  # one of dpkmeans.papers.colored.study.DATASETS
base_seed = 20261123
draws = 20  # independent draws per point (the study: 1000)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.papers.colored.study import evaluate_cell

rows = evaluate_cell(dataset, base_seed=base_seed, draws=draws, part=part,
                     parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
private = rows[rows["is_private"]]
assert (private["epsilon_spent"] <= private["epsilon"] * (1 + 1e-9)).all(), "a private run overspent"
print(f"{len(rows)} points; SDP {rows['sdp_status'].iloc[0]}, "
      f"post-check factor {rows['sdp_rescaled'].iloc[0]:.6f}")
