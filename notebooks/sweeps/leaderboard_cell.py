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
# algorithm of the book at every epsilon of the grid, at delta = 0 in its pure form and at
# delta = 1e-6 in each of its forms (Gaussian twin, PLD-calibrated Laplace, tight or basic
# composition), all under add/remove adjacency, and DI also under its own relation. All the
# work is `dpkmeans.synthesis.leaderboard.evaluate_cell`; every point derives its seed from
# `base_seed` and the point itself, so the cell layout never changes the numbers.
# A sweep file's `parts` may split a long cell: each part computes one block of the points
# (`part` of `parts`), and the sweep joins the parts' rows in order.

# %% tags=["parameters"]
case = "blood"  # one of dpkmeans.synthesis.leaderboard.CASES
base_seed = 20261125
runs = 3  # independent runs per point (the leaderboard: 50)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.privacy.accounting import TIGHT_RTOL
from dpkmeans.synthesis.leaderboard import evaluate_cell

rows = evaluate_cell(case, base_seed=base_seed, runs=runs, part=part, parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert rows["is_private"].all(), "every leaderboard algorithm is a corrected one"
# every run spends at most its epsilon (basic rows by basic composition, tight rows at their
# delta); a tight row's ledger epsilon at its delta is the target
basic = rows["accounting"] == "basic"
spent = rows["epsilon_spent_max"] <= rows["epsilon"] * (1 + 1e-9)
assert spent.all(), "a run overspent"
at = rows["epsilon_at_delta"] / rows["epsilon"]
assert (at <= 1 + 1e-9)[basic].all(), "a run overspent at its delta"
assert ((at - 1).abs() <= TIGHT_RTOL)[~basic].all(), "a tight run missed its target"
print(f"{len(rows)} rows; {rows['contender'].nunique()} contenders")
