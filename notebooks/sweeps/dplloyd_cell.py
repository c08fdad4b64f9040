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
# # One cell of a DP-Lloyd sweep
#
# Papermill runs this notebook once per grid cell of a sweep file
# (`python -m dpkmeans sweep notebooks/sweeps/NAME.yaml`). The `parameters` cell below holds a
# fast default cell; the sweep overrides it. All the work is `dpkmeans.papers.su.study.evaluate`.

# %% tags=["parameters"]
case = "synthetic"  # the case name in the sweep file (informational)
dataset = "synthetic"  # a registry name, or "synthetic" for a Gaussian mixture
paper = None  # whose columns to use (e.g. "dpkccm")
n = 2000  # synthetic data only: rows,
d = 3  # dimensions,
data_seed = 0  # the seed of the mixture,
separation = 4.0  # and the distance between centres (in standard deviations)
k = 4
algorithm = "dplloyd-impr"  # "dplloyd", "dplloyd-impr" or "diffprivlib"
epsilon = 0.5
iterations = 5  # DPLloyd only
replicas = 5
seed = 1
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.papers.su.study import evaluate

rows = evaluate(dataset=dataset, paper=paper, n=n, d=d, data_seed=data_seed,
                separation=separation, k=k, algorithm=algorithm, epsilon=epsilon,
                iterations=iterations, replicas=replicas, seed=seed)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
print(f"{len(rows)} replicas, mean NICV {rows['nicv'].mean():.4f}")
