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
# # One cell of the gallery of real bugs
#
# Papermill runs this notebook once per bug of `notebooks/sweeps/audit_gallery.yaml`: the
# doubling ladder of one deliberately broken variant, up to `max_trials` per side, and the
# audit of its corrected counterpart at the trials where the ladder stopped. All the work is
# `dpkmeans.synthesis.gallery`; every rung derives its seed from the case's name and its
# trials, so the cell layout never changes the numbers.

# %% tags=["parameters"]
bug = "e"  # a case of dpkmeans.synthesis.gallery.CASES (its letter)
max_trials = 256  # the ladder's cap (trials per side)
seed = None  # the sweep's per-cell seed; unused (the rungs derive theirs from the case)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis.gallery import gallery_rows

rows = gallery_rows(bug, max_trials=int(max_trials))
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert not rows["control_detected"].any(), "the corrected counterpart reported a violation"
print(rows.drop(columns=["source", "statistic", "pair", "event", "note"]).T.to_string())
