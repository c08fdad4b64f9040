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
# (datasets-page)=
# # Datasets
#
# This is a reference page: the datasets the five papers cluster, where each comes from,
# how each paper used it, and the public bounds the book scales it by. Come back to it when
# a chapter loads a dataset, or when you bring your own.
#
# The papers cluster {glue:text}`datasets_n` public datasets. This page is generated from
# the registry `data/datasets.toml`, the single place where the book records, for every
# dataset, its file and sha256, where it comes from and under which licence, how to parse
# it, its **public bounds**, and which columns each paper used. Every chapter asks for a
# paper's data by name:
#
# ```python
# from dpkmeans.data import load
# ds = load("blood", paper="dpkccm", scale=(-1, 1))  # DP-KCCM's columns, on [-1, 1]
# ```
#
# The returned dataset carries the numeric matrix `ds.X` with its feature names and public
# bounds, categorical columns as integer codes with their levels (for k-prototypes), the
# target, and its provenance: which file was read, its verified sha256, and every row that
# was dropped and why. Nothing is repaired or dropped silently.
#
# **Where the files come from.** The data files are not part of the repository. `load` looks
# in `$DPKMEANS_DATA/<name>/`, then in the user's cache (`~/.cache/dpkmeans/<name>/`), then in
# a checkout's `data/raw/<name>/` (ignored by git), and only then downloads from the address
# in the registry into the cache, checking the sha256 before the file is put in place. Two
# files are hosted nowhere and are derived from their public originals instead, and one has
# no public address at all: {ref}`datasets-obtain` says how a reader gets each. The command
# `python -m dpkmeans datasets verify` re-hashes every file it finds;
# `python -m dpkmeans datasets info NAME` prints everything the registry knows about one
# dataset.
#
# **Public bounds.** Differential privacy needs bounds on every attribute that do not depend
# on the data: they set the sensitivity of a sum. The registry takes them from the
# attribute's documentation (ratings 0 to 4 on TripAdvisor), from physical or legal ranges (a
# week has 168 hours), or from an explicit assumption when nothing is documented. Scaling by
# public bounds clips values outside them and counts the clipped values. The papers instead
# rescaled each attribute by the data's own minimum and maximum;
# `load(..., bounds="paper")` reproduces that and raises a `PrivacyLeakWarning`, because
# those extremes are private.

# %% tags=["remove-cell", "launch"]
# Colab, or any Jupyter without the library: this cell installs `dpkmeans` from
# the book's repository (a few minutes). Where the library is installed already
# (`make install`, Binder), it does nothing. A chapter downloads the papers'
# datasets it reads from UCI the first time. How it works: docs/launch.md.
import importlib.util
import runpy
import subprocess
from pathlib import Path

if importlib.util.find_spec("dpkmeans") is None:
    repository, branch = "", "main"
    if not repository:
        raise ModuleNotFoundError(
            "dpkmeans is not installed, and this notebook names no repository to "
            "install it from: download the book's source (linked under the chapter's "
            "title), run `make install` in it and open the notebook there")
    source = Path("private-kmeans-reproduced").resolve()
    if not source.is_dir():
        subprocess.run(["git", "clone", "--quiet", "--depth=1", f"--branch={branch}",
                        repository, str(source)], check=True)
    runpy.run_path(str(source / "binder" / "install_library.py"))

# %% tags=["hide-input"]
import html
import re
import warnings
from urllib.parse import urlsplit

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from dpkmeans.data import DataError, gaussian_mixture_dataset, get_registry, load
from dpkmeans.data.report import availability_frame, bounds_frame, obtain_frame
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.papers.registry import paper as paper_record
from dpkmeans.study.plotting import new_figure, use_book_style
from dpkmeans.study.reading import number, table

use_book_style()


registry = get_registry()
availability = availability_frame(registry)
available = set(availability.loc[availability["status"].str.endswith("verified"),
                                 "dataset"])

# %% tags=["remove-cell"]
def paper_link(key: str) -> str:
    """The paper ``key``, as a link to its chapter."""
    record = paper_record(key)
    return f"{{doc}}`{record.cite} <{record.chapter}>`"


def stated(value: int | None) -> str:
    return "?" if value is None else number(value)


def code(text: str, breaks: bool = False) -> str:
    """``text`` as code; with ``breaks``, it may break anywhere (long file names)."""
    if not text or text == "-":
        return "–"
    wrap = "anywhere" if breaks else "normal"
    return f'<code style="overflow-wrap: {wrap}">{html.escape(text)}</code>'


glue("datasets_n", len(registry.datasets), display=False)
glue("datasets_available", len(available), display=False)

# %% [markdown]
# ## How each paper used each dataset
#
# Rows and dimensions as each paper states them and as `load(name, paper=...)` returns them
# (each cell: paper / ours). *exact* means both numbers match with an unambiguous choice of columns;
# *interpreted* means the numbers match under a reading the paper does not spell out;
# *mismatch* means they cannot match. The study notes on APDPk-means ({doc}`10_schedules`)
# name no dataset at all.

# %% tags=["remove-input"]
uses = []
for spec in registry.datasets.values():
    for key, use in spec.papers.items():
        uses.append({"dataset": spec.name, "paper": paper_record(key).cite,
                     "rows": f"{stated(use.stated_rows)} / {number(use.rows)}",
                     "dims": f"{stated(use.stated_dims)} / {number(use.dims)}",
                     "match": use.match})
for key, paper in registry.papers.items():
    if paper.datasets_unknown:
        uses.append({"dataset": "unknown", "paper": paper_record(key).cite, "rows": "? / –",
                     "dims": "? / –", "match": "unknown"})
table(pd.DataFrame(uses), name="datasets-uses")

# %% tags=["remove-cell"]
notes = [f"- **{spec.name}**, {paper_link(key)} ({use.match}): {use.how}"
         for spec in registry.datasets.values() for key, use in spec.papers.items()]
glue("datasets_notes", Markdown("\n".join(n.replace("$", "\\$") for n in notes)),
     display=False)

# %% [markdown]
# How each count was matched, and what could not be:
#
# ```{glue:md} datasets_notes
# :format: myst
# ```
#
# ## Sources and licences
#
# Some licences and UCI identifiers were recorded from memory and not checked against the
# live UCI pages; `python -m dpkmeans datasets info NAME` shows the note for each. The
# credit-card file is a CSV export of the UCI spreadsheet, and covtype's file holds the first
# 10,000 of its 581,012 records: its checksum is the sample's, and the published checksum of
# the full file is recorded too.

# %% tags=["remove-input"]
def source_link(spec) -> str:
    where = f"UCI {spec.uci_id}" if "archive.ics.uci.edu" in spec.page else "Kaggle"
    return f'<a href="{html.escape(spec.page)}">{where}</a>'


sources = pd.DataFrame([{"dataset": s.name, "title": html.escape(s.title),
                         "fidelity": s.fidelity, "source": source_link(s),
                         "licence": html.escape(s.licence)}
                        for s in registry.datasets.values()])
table(sources, name="datasets-sources")

# %% [markdown]
# (datasets-obtain)=
# ## How a reader obtains each file
#
# Every file is checked against its sha256, however it arrives. Most are downloaded as
# published. Two are hosted nowhere, but are made from a public original by a fixed rule
# recorded in the registry: `python -m dpkmeans datasets fetch NAME` (and `load`, when the
# file is missing and downloads are allowed) downloads the original, checks its sha256,
# converts or samples it, and checks the sha256 of the result, keeping nothing if either
# differs. The credit-card CSV is the UCI spreadsheet written out as Excel writes a "CSV
# UTF-8" file; reading the spreadsheet needs the `xls` extra (`pip install
# "dpkmeans[xls]"`). The covtype sample is the first 10,000 records of the full UCI file,
# under a header line of the column names. The marketing campaign has no public address:
# Kaggle's downloads need an account, and the table says what to use instead.

# %% tags=["remove-input"]
def link(url: str) -> str:
    """``url`` as a link that shows its host."""
    return f'<a href="{html.escape(url)}">{html.escape(urlsplit(url).netloc)}</a>'


obtaining = obtain_frame(registry)
table(obtaining.assign(file=[code(f, breaks=True) for f in obtaining["file"]],
                       **{"from": obtaining["from"].map(link),
                          "detail": obtaining["detail"].map(html.escape)}),
      name="datasets-obtain", wide=True)

# %% tags=["remove-cell"]
HOW = {"downloaded": "downloaded as published",
       "derived": "derived from a public original",
       "no public address": "no public address"}


def obtained(row: dict) -> str:
    """One dataset in the summary: its name, and where a derived one comes from."""
    if row["how"] == "derived":
        source = registry.dataset(row["dataset"]).derive.source
        return f"`{row['dataset']}` (from `{source.name}`)"
    if row["how"] == "no public address":
        return (f"`{row['dataset']}` (from {urlsplit(row['from']).netloc}; what to use "
                f"instead: {row['detail'].rstrip('.')})")
    return f"`{row['dataset']}`"


ways = [f"- **{HOW[how]}**: "
        + ", ".join(obtained(row) for row in group.to_dict("records")) + "."
        for how, group in obtaining.groupby("how", sort=False)]
glue("datasets_obtain", Markdown("\n".join(ways)), display=False)

# %% [markdown]
# ## Availability here
#
# The status of each file in this build of the book ({glue:text}`datasets_available` of
# {glue:text}`datasets_n` available): "verified" means it was found and its sha256 matches
# the registry. A missing file is not an error for this page; `load` would say what to do.

# %% tags=["remove-input"]
shown = availability.assign(file=[code(f, breaks=True) for f in availability["file"]],
                            **{"found in": availability["found in"].map(code),
                               "rows x cols": availability["rows x cols"].map(
                                   lambda v: " × ".join(number(int(x))
                                                        for x in v.split(" x ")))})
table(shown.rename(columns={"rows x cols": "rows × columns"}),
      name="datasets-availability")

# %% [markdown]
# ## Rows dropped, and why
#
# Two datasets lose rows before clustering, and `load` reports each one. The review-ratings
# file has two malformed lines in the UCI original; dropping them gives the 5,454 rows of the
# DP-KCCM paper. For the marketing campaign, the colored-noise paper's clusters add up to
# 2,212 of 2,240 customers: removing the 24 customers without an income, the 3 born in 1900
# or earlier and the one with an income of 666,666 gives exactly 2,212. The paper does not
# say so; this is the cleaning of a widely copied Kaggle notebook, and our reconstruction.

# %%
drops = []
for name, paper in (("review_ratings", "dpkccm"),
                    ("marketing_campaign", "colored")):
    if name not in available:
        continue  # the file is not in this build: nothing to report
    ds = load(name, paper=paper, download=False)
    for drop in ds.provenance.dropped:
        drops.append({"dataset": name, "rows in the file": ds.provenance.rows_in_file,
                      "dropped": drop.count,
                      "reason": re.sub(r"^paper '[^']+': ", "", drop.reason),
                      "rows used": ds.n_samples})
table(pd.DataFrame(drops), name="datasets-dropped")

# %% [markdown]
# ## Public bounds
#
# Every numeric column, with its public bounds and the reason for them; runs of columns with
# the same bounds (such as covtype's 40 soil-type indicators) are folded into one line.
# Categorical columns list their levels. None of these numbers was computed from a data file.

# %% tags=["remove-input"]
for spec in registry.datasets.values():
    bounds = bounds_frame(spec)
    display(Markdown(f"**{spec.name}**: {spec.title}"))
    display(table(bounds.map(html.escape), name=f"datasets-bounds-{spec.name}"))

# %% [markdown]
# ## Public bounds against paper mode
#
# Scaling by public bounds clips what lies outside and counts it. The marketing campaign has
# three birth years before 1901 and one income above the assumed 200,000 maximum:

# %%
if "marketing_campaign" in available:
    public = load("marketing_campaign", scale=(0, 1), download=False)
    clipped = public.metadata["scaling"]["clipped_per_column"]
    print(f"{public.n_clipped} values clipped to the public bounds: "
          + ", ".join(f"{count} in {column}" for column, count in clipped.items()))
else:
    print("the marketing campaign's file is not available in this build")

# %% [markdown]
# Paper mode takes the bounds from the data instead. It always warns, and the dataset
# records the mode; the scikit-learn copy of iris shows it without any file:

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    paper_mode = load("iris", bounds="paper", scale=(-1, 1))
assert issubclass(caught[0].category, PrivacyLeakWarning)
print(f"bounds mode: {paper_mode.metadata['bounds_mode']}; "
      f"warning raised: {caught[0].category.__name__}")
print("smallest scaled value of each column:",
      ", ".join(number(v) for v in paper_mode.X.min(axis=0)))
print("values the public bounds clip:", load("iris", scale=(-1, 1)).n_clipped)

# %% [markdown]
# ## Synthetic data
#
# Tests and live demos also use Gaussian mixtures with known centres, whose public bounds
# come from the generator's parameters. `GaussianMixture.iter_chunks` streams tens of
# millions of rows in bounded memory, and the same seed gives the same rows whatever the
# chunk size.

# %%
demo = gaussian_mixture_dataset(2000, k=3, d=2, rng=np.random.default_rng(2024),
                                separation=5.0)
print(f"{demo.n_samples:,} rows, {demo.n_features} columns, "
      f"{demo.bounds_mode} bounds (from the generator's parameters)")
print("true centres:", ", ".join(f"({', '.join(number(v) for v in np.round(c, 2))})"
                                 for c in demo.metadata["true_centers"]))

# %% [markdown]
# ## An overview
#
# Each dataset as the first paper listed for it used it, scaled to $[-1, 1]$ by its public
# bounds and projected on its first two principal components (at most 1,500 points,
# coloured by the target where there is one). A projection this crude only shows how much,
# or how little, cluster structure each dataset offers. It also shows what the papers'
# choices of "dimensions" do to a Euclidean clustering: where the class label is counted as
# a column (blood, credit card) or a category is coded as a number (abalone's sex, the
# marketing campaign's education and marital status), that column spans the whole box while
# the measured attributes, scaled by generous public bounds, occupy a small part of theirs,
# so the label or the code dominates.


# %% mystnb={"figure": {"caption": "The datasets of the five papers, each on its first two principal components after scaling to $[-1, 1]$ by its public bounds, coloured by the target where there is one. Missing files are marked.", "name": "fig-datasets-overview"}} tags=["hide-input"]
def projection(ds, rng, limit=1500):
    """First two principal components of at most ``limit`` rows of the scaled data."""
    rows = rng.choice(ds.n_samples, size=min(limit, ds.n_samples), replace=False)
    X = ds.X[rows] - ds.X[rows].mean(axis=0)
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    colour = ds.target[rows] if ds.target is not None else np.zeros(len(rows))
    return X @ vt[:2].T, colour


rng = np.random.default_rng(0)
fig, axes = new_figure(ncols=len(registry.datasets), nrows=4, height=2.0)
for ax, spec in zip(axes, registry.datasets.values(), strict=True):
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    paper = next(iter(spec.papers))
    ax.set_title(spec.name)
    try:
        ds = load(spec.name, paper=paper, scale=(-1, 1), download=False)
    except DataError:
        ax.text(0.5, 0.5, "file not available", ha="center", va="center",
                transform=ax.transAxes)
        continue
    points, colour = projection(ds, rng)
    ax.scatter(points[:, 0], points[:, 1], c=colour, s=3, cmap="viridis", alpha=0.6,
               linewidths=0)
plt.show()

# %% [markdown]
# ## Summary
#
# - One registry, `data/datasets.toml`, records every dataset's file, checksum, source,
#   licence, parse options, public bounds with their reasons, and the columns each paper
#   used.
# - `load(name, paper=...)` returns exactly those columns, verified against the checksum,
#   with every dropped row counted and explained.
# - Public bounds are never computed from data; paper mode reproduces the papers' min/max
#   normalisation and always raises a `PrivacyLeakWarning`.
# - Where a paper's numbers cannot be matched (the silhouette paper's MAGIC row count, the
#   covtype sample) or can only be matched by interpretation (labels counted as dimensions,
#   the marketing-campaign cleaning), the tables above say so.
#
# How a reader obtains each dataset, its sha256 checked every time:
#
# ```{glue:md} datasets_obtain
# :format: myst
# ```
