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
# # One cell of FastLloyd's home ground
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/fastlloyd_home.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/fastlloyd_home.yaml`): a mixture of k Gaussians
# in d dimensions (10^4 records scaled to [-1, 1]^d), non-private Lloyd from shared
# sphere-packing starts, and every contender of `dpkmeans.synthesis.fastlloyd_home` at each
# epsilon, with the NICV of the released centres and its ratio to Lloyd's over `runs` runs. All
# the work is `home_ground.evaluate_cell`; every point derives its seed from `base_seed` and the
# point itself, so the cell layout never changes the numbers.

# %% tags=["parameters"]
k = 2  # clusters (and the mixture's components)
d = 2  # dimension
base_seed = 20261129
runs = 2  # runs per point (the sweep: 20)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis import fastlloyd_home as home_ground

rows = home_ground.evaluate_cell(int(k), int(d), base_seed=base_seed, runs=runs)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert len(rows) == 1 + len(home_ground.CONTENDERS) * len(home_ground.EPSILONS)
private = rows[rows["is_private"].astype(bool)]
assert len(private) == len(rows) - 1, "every contender is a corrected algorithm"
# every run spends its epsilon at its delta (a tight form within the calibration's tolerance)
assert (private["epsilon_at_delta"] <= private["epsilon"] * (1 + 1e-6)).all(), "overspent"
print(rows[["contender", "epsilon", "iterations", "nicv_mean", "ratio_mean", "ratio_ci_low",
            "ratio_ci_high"]].round(4).to_string())
