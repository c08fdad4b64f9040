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
# # One cell of the outside algorithms' studies
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/home_ground.yaml`
# (`study = "home_ground"`: every algorithm at one k on the 64-Gaussian mixture,
# `dpkmeans.synthesis.home_ground`) and of `notebooks/sweeps/outside_audit.yaml`
# (`study = "audit"`: one outside algorithm's audit with planted overspends,
# `dpkmeans.synthesis.outside_audit`). Every draw derives its seed from `base_seed` and the
# point itself, so the cell layout never changes the numbers, nor does an audit cell's split
# into `parts` (each a block of its factors; the sweep joins their rows in order).

# %% tags=["parameters"]
study = "audit"  # "home_ground" or "audit"
target = "lsh"  # home_ground: k; audit: an algorithm ("lsh" or "balcan")
base_seed = 20261126
runs = 20  # home_ground: runs per algorithm (20); audit: fits per side and factor (2000)
seed = None  # the sweep's per-cell seed; unused (points derive theirs from base_seed)
part = 0  # audit: this part of the cell, a block of its factors (home_ground runs whole)
parts = 1  # the cell's number of parts (a sweep file's `parts` splits a long cell)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis import home_ground, outside_audit

if study == "home_ground":
    assert parts == 1, "a home-ground cell runs whole: every row's ratio needs the reference"
    rows = home_ground.evaluate_cell(int(target), base_seed=base_seed, runs=runs)
    private = rows[rows["is_private"].astype(bool)]
    assert (private["epsilon_spent_max"] <= home_ground.EPSILON * (1 + 1e-9)).all()
elif study == "audit":
    rows = outside_audit.audit_rows(str(target), trials=runs, base_seed=base_seed,
                                    part=part, parts=parts)
    assert (rows["lower_bound"] >= 0).all()
else:
    raise ValueError(f"study must be 'home_ground' or 'audit', got {study!r}")
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
timings = ("pair", "event", "seconds", "run_s")  # the point's text and its timings
print(rows.drop(columns=[c for c in timings if c in rows]).round(4).to_string())
