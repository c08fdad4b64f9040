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
# # One cell of FastLloyd's audit
#
# Papermill runs this notebook once per cell of `notebooks/sweeps/fastlloyd_audit.yaml`
# (`python -m dpkmeans sweep notebooks/sweeps/fastlloyd_audit.yaml`): one form of FastLloyd
# (Diaa, Humphries and Kerschbaum 2025) audited by the transcript audit of chapter 6 on the
# outside algorithms' neighbouring pair, with planted overspends, and the form "as in the
# authors' code" by the statistic its shared noise seed makes exact. All the work is
# `dpkmeans.synthesis.fastlloyd_audit.audit_rows`; every run derives its seed from `base_seed` and
# the point itself, so the cell layout never changes the numbers.

# %% tags=["parameters"]
variant = "as-published"  # "fastlloyd", "fastlloyd-laplace" or "as-published"
base_seed = 20261129
trials = 500  # fits per side and factor (the sweep: 50,000)
seed = None  # the sweep's per-cell seed; unused (runs derive theirs from base_seed)
output_csv = None  # where the sweep collects the rows (None: do not write)

# %%
from dpkmeans.synthesis.fastlloyd_audit import COMBINATION, EPSILON, audit_rows

rows = audit_rows(str(variant), trials=int(trials), base_seed=int(base_seed))
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
assert (rows["lower_bound"] >= 0).all()
assert (rows["ledger_is_private"] == (variant != "as-published")).all()
flaw = rows[rows["statistic"] == COMBINATION]
if variant == "as-published":  # the shared seed makes the statistic exact: caught
    assert (flaw["lower_bound"] > EPSILON).all(), "the audit missed the shared seed"
shown = rows.drop(columns=["pair", "start", "seconds", "confidence", "claimed_epsilon"])
print(f"claim: epsilon = {EPSILON:g}; confidence {rows['confidence'].iloc[0]:g}")
print(shown.to_string(float_format=lambda v: f"{v:.4g}"))
