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
# # One cell of FastLloyd's protocol
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/fastlloyd_protocol.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/fastlloyd_protocol.yaml`): one dataset of FastLloyd's
# experiments (Diaa, Humphries and Kerschbaum 2025) at its k, scaled from its public bounds to
# [-1, 1]^d, every algorithm of the protocol at each of the paper's epsilons, the (epsilon,
# delta) forms at delta = 1 / (N ln N), and the NICV of the released centres over `runs` runs.
# All the work is `dpkmeans.synthesis.fastlloyd_protocol.run_dataset`; every point derives its seed
# from `base_seed` and the point itself, so the cell layout never changes the numbers, nor
# does a split of a long cell into `parts` (each computes a block of the points; the sweep
# joins their rows in order).

# %% tags=["parameters"]
dataset = "iris"  # a registry name of dpkmeans.synthesis.fastlloyd_protocol.datasets()
base_seed = 20261129
runs = 3  # runs per point (the paper: 100)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # this part of the cell's points (a sweep file's `parts` splits a long cell)
parts = 1  # the cell's number of parts; 1: every point
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.study.parts import part_block
from dpkmeans.synthesis.fastlloyd_protocol import CONTENDERS, EPSILONS, run_dataset

rows = run_dataset(dataset, runs=runs, base_seed=base_seed, part=part, parts=parts)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert len(rows) == len(part_block(range(len(CONTENDERS) * len(EPSILONS)), part, parts))
assert rows["is_private"].all(), "every algorithm of the protocol is a corrected one"
# every run spends its epsilon at its delta (a tight form within the calibration's tolerance)
assert (rows["epsilon_at_delta"] <= rows["epsilon"] * (1 + 1e-6)).all(), "a run overspent"
print(f"{dataset}: {len(rows)} rows, N = {rows['N'].iloc[0]}, d = {rows['d'].iloc[0]}, "
      f"k = {rows['k'].iloc[0]}, delta = {rows['protocol_delta'].iloc[0]:.3g}")
