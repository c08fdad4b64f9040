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
# # One cell of the audits with power
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/audit_tightness.yaml`
# (`study = "tightness"`: the rows of one mechanism or one corrected algorithm in the tightness
# table, at every point of its privacy curve) and of `notebooks/sweeps/audit_power.yaml`
# (`study = "power"`: one algorithm's power study). All the work is
# `dpkmeans.synthesis.tightness`; every draw derives its seed from the target's name, so the
# cell layout never changes the numbers, nor does a split of a long cell into `parts` (each
# computes a block of the levels or factors; the sweep joins their rows in order).

# %% tags=["parameters"]
study = "tightness"  # "tightness" or "power"
target = "apdp"  # a mechanism or algorithm of dpkmeans.synthesis.tightness.targets()
trials = 2000  # trials per side (0: the committed table's; power: 0 runs the audits too)
seed = None  # the sweep's per-cell seed; unused (draws derive theirs from the target)
part = 0  # this part of the cell: a block of its levels (tightness) or factors (power)
parts = 1  # the cell's number of parts (a sweep file's `parts` splits a long cell)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis.tightness import power_rows, tightness_rows

if study == "tightness":
    rows = tightness_rows(target, trials, part=part, parts=parts)
elif study == "power":  # a smoke run (trials > 0): the trials needed only
    rows = power_rows(target, detect=trials == 0, part=part, parts=parts)
else:
    raise ValueError(f"study must be 'tightness' or 'power', got {study!r}")
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
bounds = rows.filter(like="lower_bound")  # NaN: no black-box audit of a release
assert (bounds.isna() | (bounds >= 0)).all().all()
timing = ("seconds", "audit_minutes")  # the machine's, not the study's
print(rows.drop(columns=[c for c in (*timing, "statistic", "pair") if c in rows]).to_string())
