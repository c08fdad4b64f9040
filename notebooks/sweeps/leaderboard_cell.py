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
# # One cell of the leaderboard
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/leaderboard.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/leaderboard.yaml`): one dataset, every corrected
# algorithm of the book at every epsilon of the grid. All the work is
# `dpkmeans.synthesis.leaderboard.evaluate_cell`; every point derives its seed from `base_seed`
# and the point itself, so the cell layout never changes the numbers.

# %% tags=["parameters"]
case = "blood"  # one of dpkmeans.synthesis.leaderboard.CASES
base_seed = 20261125
runs = 3  # independent runs per point (the leaderboard: 50)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis.leaderboard import evaluate_cell

rows = evaluate_cell(case, base_seed=base_seed, runs=runs)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert rows["is_private"].all(), "every leaderboard algorithm is a corrected one"
assert (rows["epsilon_spent_max"] <= rows["epsilon"] * (1 + 1e-9)).all(), "a run overspent"
print(f"{len(rows)} rows; {rows['algorithm'].nunique()} algorithms")
