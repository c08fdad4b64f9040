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
# (ch-schedules)=
# # Budget schedules: APDPk-means and every way to split epsilon over iterations
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - write down every per-iteration budget schedule of the book's papers and derive, to first
#   order, the noise each one puts on a centroid coordinate in each iteration;
# - prove that APDP's reversed arithmetic progression spends exactly $\varepsilon$, and that
#   every term is at least Su's minimum $\varepsilon_m$ exactly when
#   $\varepsilon \ge T \varepsilon_m$;
# - check the claim "the smaller $\varepsilon$, the flatter the progression", and show that
#   the corrected method, which takes Su's $T$, breaks it: its first/last ratio is a
#   sawtooth in $\varepsilon$;
# - compute on which of the book's ten cases the published progression ever runs, and what the
#   published fallback does instead;
# - read the ledger of the published method: its leaks, and the overspend of its noisy-record
#   initial centres.
#
# **Prerequisites:** sequential and parallel composition and the privacy ledger
# ({doc}`03_composition`); DPLloyd, Su et al.'s rule for the number of iterations, sphere
# packing and the centred release ({doc}`05_dplloyd`); the flaws an audit records
# ({doc}`06_auditing`); DP-KCCM's stepped schedule and the claims ledger with its verdicts
# ({doc}`07_dpkccm`); the silhouette allocation ({doc}`08_silhouette`). Background:
# arithmetic and geometric series, and the variance of a Laplace variable.
# :::
#
# The APDPk-means paper {cite}`apdpkmeans` splits the total budget over the iterations as a
# *decreasing arithmetic progression*. The first iteration gets the largest share and the
# last gets $\varepsilon_m$, the minimum per-iteration budget of {cite:t}`su2016differentially`.
# The argument is that large early budgets make the first iterations converge fast.
#
# :::{admonition} Where the method comes from
# :class: warning
# Everything the book knows about APDPk-means comes from a **secondary source**: study notes
# in Chinese, blog-style, that summarise the paper ("the note" below). **The original paper
# could not be found**, so its authors, venue, datasets, experiments and results are unknown.
# The note names no dataset, gives no $\varepsilon$ and reports no result. There is therefore
# no number of the paper to reproduce. The chapter tests what the note does state: the
# algebra of the progression, its branch condition and two qualitative "properties". The note
# uses $N$ both for the iteration cap and for the record count, and $d$ both for the dimension
# and for the common difference; below, $t_m$ is the cap, $N$ the record count, $d$ the
# dimension and $d_{AP}$ the difference.
# :::
#
# Since the note names no data, the book runs the method on the six datasets of DP-KCCM
# ({cite:t}`ni_dpkccm`, {numref}`chapter %s <ch-dpkccm>`) and the four of the silhouette paper
# ({cite:t}`zhang2018contour`, {numref}`chapter %s <ch-silhouette>`), at the $k$ those papers used: ten cases
# (`dpkmeans.papers.apdp.study.CASES`, with blood twice, at $k = 4$ and $k = 2$). In the same
# engine and from the same starts, it compares the progression with every other schedule of
# the book's papers. The book implements the method twice, as published (the note's steps)
# and corrected (`dpkmeans.papers.apdp.variants`, whose docstring holds this comparison as a
# table):
#
# - **Scaling.** As published: min-max on the data to $[0, 1]^d$ (a leak). Corrected: public
#   bounds to $[0, 1]^d$.
# - **The minimum $\varepsilon_m$** (the note's eq. 4). As published: from the exact record
#   count (a leak). Corrected: from a public record count.
# - **Initial centres.** As published: one random record from each of $k$ equal splits in
#   file order, plus Laplace noise of undefined budget, read here as $\Lap(d/\varepsilon_0)$
#   with $\varepsilon_0 = \varepsilon/t_m$ and charged on top of $\varepsilon$ (an
#   overspend). Corrected: sphere packing (public, free).
# - **Schedule.** Both run the progression over $t_m$ iterations if
#   $\varepsilon/\varepsilon_m > t_m$. Otherwise, as published, every iteration gets
#   $\varepsilon/t_m$, below $\varepsilon_m$ (the "fallback"); corrected, Su's rule gives
#   $T = \lfloor \mathrm{clip}(\varepsilon/\varepsilon_m, 2, 7) \rfloor$ iterations, with the
#   progression if $T \ge 3$ and equal shares if $T = 2$.
# - **Noise.** As published: $\Lap((d+1)/\varepsilon_t)$ on every sum and count coordinate
#   ($\Delta = d + 1$). Corrected: the same joint release, centred on the box
#   ($\Delta = d/2 + 1$ on $[0, 1]^d$).
# - **Stop.** As published: when the partition no longer changes (read from the private
#   data: a leak). Corrected: after the schedule's last iteration (all of the budget is
#   spent).
# - **Privacy.** As published: none, by the leaks above, and at least
#   $\varepsilon(1 + 1/t_m)$ is spent. Corrected: $\varepsilon$-DP, given a public $N$.
# - **Configuration.** `variants.as_published(k, eps, bounds, n_records=N)` and
#   `variants.corrected(k, eps, bounds, n_records=N)`.
#
# The note's base algorithm, "DPk-means", also comes with three comparison schedules (uniform,
# dichotomy, series-sum). They run in the same two variants: as published they are
# open-ended over $t_m$ iterations; corrected they are normalised to spend $\varepsilon$ over
# the corrected APDP's $T$, so that only the shape differs. The note does not give $t_m$; the
# book uses {glue:text}`ch10_t_m`, the cap of the silhouette paper
# (`variants.MAX_ITERATIONS`).
#
# The chapter's code runs from the fast defaults in the next cell (tagged `parameters`).

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

# %% tags=["parameters", "hide-input"]
SEED = 2026  # every random draw below comes from this seed
EPSILON = 2.0  # the total budget of the examples, the audit and the figure
CASE = "adult"  # the case of the audit and the figure (the progression runs there)
REPLICAS = 50  # replicas of each audit run
OFFSET = 0.25  # a centroid coordinate, from the box's midpoint (the noise profiles)
MC_DRAWS = 200_000  # Monte-Carlo draws of the first-order noise check
NOTE_EPSILON = 2.0  # the note's worked example: its total budget
NOTE_EPSILON_M = 0.1  # and its epsilon_m (so t_m is 10)
RESULTS = "data/results/apdp.csv"  # the sweep notebooks/sweeps/apdp.yaml writes it
CLAIMS_FILE = "data/results/apdp_claims.csv"  # python -m dpkmeans.papers.apdp.claims
TIMING = "benchmarks/apdp_reproduction.json"  # the sweep's measured time

# %% tags=["hide-input"]
import json
from itertools import count

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from myst_nb import glue

from dpkmeans.engine import schedules
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.papers.apdp import claims, study, variants
from dpkmeans.papers.apdp.noise_profile import centroid_noise_sd
from dpkmeans.papers.apdp.study import CASES, EPSILONS, Point
from dpkmeans.papers.silhouette.variants import SILHOUETTE_SHARE
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans.study.committed import committed_file
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import (
    count_of,
    join_names,
    number,
    percent,
    table,
    yes_no,
)
from dpkmeans.study.reading import machine as machine_text
from dpkmeans.synthesis.tightness import fit_at, strongest_audits

use_book_style()


def plain(value, _position):
    """A log-axis tick label as a person writes it: 0.05, 0.2, 1, 5."""
    return f"{value:g}"


next_seed = count(SEED).__next__  # each experiment its own seed: SEED, SEED + 1, ...
T_M, RHO = variants.MAX_ITERATIONS, variants.RHO  # the note's cap t_m and its rho

data = study.load_case(CASE)  # "public": public bounds; "paper": the note's min-max
K = CASES[CASE][1]
N_PUBLIC, DIM = data["public"].public_n_records, data["public"].X.shape[1]
CLUSTER_SIZE = N_PUBLIC / K  # the n of the noise profiles: a cluster of average size
print(f"{CASE}: N = {number(N_PUBLIC)} records (public), d = {DIM}, k = {K}, "
      f"cluster size N/k = {number(CLUSTER_SIZE)}")

# %% tags=["remove-cell"]
glue("ch10_t_m", T_M, display=False)
glue("ch10_rho", f"{RHO:g}", display=False)
glue("ch10_case", CASE, display=False)
glue("ch10_eps", f"{EPSILON:g}", display=False)
glue("ch10_n_cases", len(CASES), display=False)

# %% [markdown]
# ## How much noise a budget buys
#
# Every schedule below is a list of per-iteration budgets $\varepsilon_1, \dots, \varepsilon_T$
# whose sum is the run's $\varepsilon$ (sequential composition, {prf:ref}`thm-sequential`;
# inside an iteration the clusters compose in parallel, {prf:ref}`thm-parallel`). To compare
# schedules we need what a budget does to a centroid. One proposition covers all of them.
#
# ```{prf:proposition} First-order noise of a centroid coordinate
# :label: prop-schedule-noise
#
# A cluster of $n$ records has sum $S$ and count $n$, both measured as the release measures them
# (for the centred release of {numref}`chapter %s <ch-dplloyd>`, $S$ is the sum of $x - m$ with $m$ the box's midpoint).
# One iteration releases $S' = S + \eta_S$ and $n' = n + \eta_n$ with independent zero-mean
# noise, and sets $c' = S'/n'$ (plus $m$ when centred). Let $c = S/n$. To first order in the
# noise,
#
# $$c'_i - c_i \approx \frac{\eta_{S,i} - c_i\, \eta_n}{n}, \qquad
#   \operatorname{sd}(c'_i) \approx \frac{\sqrt{\operatorname{sd}(\eta_{S,i})^2
#   + c_i^2 \operatorname{sd}(\eta_n)^2}}{n}.$$
#
# For the joint Laplace release of $(S_j, n_j)$ on $[0, 1]^d$, centred, every coordinate gets
# $\Lap(b)$ noise with $b = \Delta/\varepsilon_t$ and $\Delta = d/2 + 1$
# ({prf:ref}`prop-centred-release`), so
#
# $$\operatorname{sd}(c'_i) \approx \frac{\kappa}{\varepsilon_t}, \qquad
#   \kappa = \frac{\sqrt 2\, \Delta \sqrt{1 + c_i^2}}{n}.$$
# ```
#
# ```{prf:proof}
# Exactly, $c' - c = \frac{S + \eta_S}{n + \eta_n} - \frac{S}{n}
# = \frac{n \eta_S - S \eta_n}{n (n + \eta_n)} = \frac{\eta_S - c\, \eta_n}{n}
# \Big(1 + \frac{\eta_n}{n}\Big)^{-1}$, and the last factor is $1 + O(\eta_n / n)$. The
# first-order term $(\eta_{S,i} - c_i \eta_n)/n$ has mean 0 and, the two noises being
# independent, variance $(\operatorname{Var}\eta_{S,i} + c_i^2 \operatorname{Var}\eta_n)/n^2$.
# A $\Lap(b)$ variable has variance $\int z^2 e^{-|z|/b}/(2b)\, dz = 2b^2$, so standard
# deviation $\sqrt 2\, b$. With $b = \Delta/\varepsilon_t$ for both noises the formula follows.
# ```
#
# The approximation needs $|\eta_n| \ll n$, that is $n \varepsilon_t \gg \Delta$: a cluster
# of a few thousand records at budgets of a tenth or more. Its consequence is simple. **A
# schedule's noise is the reciprocal of its budget.** The noise of iteration $t$ relative to
# iteration $s$ is $\varepsilon_s / \varepsilon_t$, whatever the data. Under Su's count/sum
# split ({prf:ref}`def-sched-su`) the two noises differ, and the first formula applies with
# each one. The library computes the planned noise from a configuration alone:
# `dpkmeans.papers.apdp.noise_profile.centroid_noise_sd(config, cluster_size, offset=..., weight=...)`.
# Its loop reads the calibrations the engine would draw with, so Su's split, colored noise and
# per-cluster weights are covered too:
#
# ```{literalinclude} ../src/dpkmeans/papers/apdp/noise_profile.py
# :language: python
# :pyobject: centroid_noise_sd
# :lines: 11, 16-28
# :dedent: 4
# ```
#
# A check: DPLloyd's uniform schedule ($\varepsilon/5$) on a cluster of average size of
# the chosen case. The formula, `centroid_noise_sd` and a simulation of the release with the
# exact ratio $S'/n'$ (continuous Laplace noise, {glue:text}`ch10_mc_draws` draws) should
# agree.

# %%
box = (np.zeros(DIM), np.ones(DIM))
delta_centred = lloyd_query_sensitivity(box, centred=True).per_cluster
assert np.isclose(delta_centred, DIM / 2 + 1)
uniform_config = study.study_config(Point(CASE, "dplloyd", EPSILON), DIM, N_PUBLIC)
eps_t = float(uniform_config.schedule[0])
b = delta_centred / eps_t
kappa = np.sqrt(2) * delta_centred * np.sqrt(1 + OFFSET**2) / CLUSTER_SIZE
formula = kappa / eps_t
library = float(centroid_noise_sd(uniform_config, CLUSTER_SIZE, offset=OFFSET)[0])
rng = np.random.default_rng(next_seed())
S_centred = CLUSTER_SIZE * OFFSET  # one coordinate of the centred sum: c_i = OFFSET
c_noisy = ((S_centred + rng.laplace(0.0, b, MC_DRAWS))
           / (CLUSTER_SIZE + rng.laplace(0.0, b, MC_DRAWS)))
simulated = float(c_noisy.std())
print(f"Δ = d/2 + 1 = {delta_centred:g}, ε_t = {eps_t:g}, b = {b:g}")
print("sd of a centroid coordinate:")
print(f"  formula           {formula:.6f}\n  centroid_noise_sd {library:.6f}\n"
      f"  simulated         {simulated:.6f}")
assert np.isclose(formula, library, rtol=1e-9)
assert abs(simulated / formula - 1) < 0.02

# %% tags=["remove-cell"]
glue("ch10_mc_gap", percent(abs(simulated / formula - 1), 2), display=False)
glue("ch10_mc_draws", number(MC_DRAWS), display=False)

# %% [markdown]
# The library matches the formula to rounding, and the simulation is within
# {glue:text}`ch10_mc_gap` of it ({glue:text}`ch10_mc_draws` draws): at this cluster size
# the first order is the whole story.
#
# ## The schedules
#
# Each definition gives the budget $\varepsilon_t$ of iteration $t = 1, \dots, T$ and the noise
# it plans, $\operatorname{sd}_t \approx \kappa / \varepsilon_t$ with $\kappa$ of
# {prf:ref}`prop-schedule-noise` (joint release) unless it says otherwise. "Open-ended" means
# the schedule as first written, for an unknown $T$; it leaves budget unspent when $T$ is fixed.
# "Normalised" rescales the same shape to spend $\varepsilon$ exactly (the library's default).
#
# ```{prf:definition} Uniform (DPLloyd)
# :label: def-sched-uniform
#
# $\varepsilon_t = \varepsilon / T$ for a fixed $T$; DPLloyd uses $T = 5$
# ({numref}`chapter %s <ch-dplloyd>`), and the
# note's base DPk-means uses it over its iteration cap, $\varepsilon/t_m$. Noise:
# $\operatorname{sd}_t \approx \kappa T / \varepsilon$, the same in every iteration.
# ```
#
# ```{prf:definition} Halving ("dichotomy")
# :label: def-sched-halving
#
# Open-ended, $\varepsilon_t = \varepsilon\, 2^{-t}$; over $T$ iterations it spends
# $\varepsilon (1 - 2^{-T})$. Normalised, $\varepsilon_t = \varepsilon\, 2^{-t} / (1 - 2^{-T})$.
# Noise: $\operatorname{sd}_t \approx \kappa\, 2^t / \varepsilon$ (open-ended; times
# $1 - 2^{-T}$ normalised). It doubles every iteration, so the last iteration is $2^{T-1}$ times
# as noisy as the first.
# ```
#
# ```{prf:definition} Series-sum
# :label: def-sched-series
#
# Open-ended, $\varepsilon_t = \varepsilon / (t(t+1))$. Since
# $\frac{1}{t(t+1)} = \frac1t - \frac{1}{t+1}$ the sum telescopes:
# $\sum_{t=1}^T \frac{1}{t(t+1)} = 1 - \frac{1}{T+1}$, so $T$ iterations spend
# $\varepsilon\, T/(T+1)$ and the infinite series spends $\varepsilon$. Normalised,
# $\varepsilon_t = \varepsilon (T+1) / (T\, t (t+1))$. Noise:
# $\operatorname{sd}_t \approx \kappa\, t (t+1) / \varepsilon$ (open-ended); the last iteration
# is $T(T+1)/2$ times as noisy as the first.
# ```
#
# ```{prf:definition} Su's rule (DPLloyd-Impr)
# :label: def-sched-su
#
# With $N$ records (public), $k$ clusters, dimension $d$ and $\gamma = \sqrt[3]{4 d \rho^2}$,
# the minimum per-iteration budget is
#
# $$\varepsilon_m = \sqrt{\frac{500\, k^3}{N^2} (d + \gamma)^3},$$
#
# the number of iterations $T = \lfloor \mathrm{clip}(\varepsilon/\varepsilon_m, 2, 7) \rfloor$
# and $\varepsilon_t = \varepsilon / T$. Each iteration's budget is split between the count,
# $\varepsilon_C = \gamma \varepsilon_t / (d + \gamma)$, and each sum coordinate,
# $\varepsilon_S = \varepsilon_t / (d + \gamma)$ ({prf:ref}`prop-su-split`). Centred on
# $[0, 1]^d$ a sum coordinate has sensitivity $1/2$ and the count 1, so
# $\operatorname{sd}(\eta_{S,i}) = \sqrt 2 (d + \gamma) / (2 \varepsilon_t)$,
# $\operatorname{sd}(\eta_n) = \sqrt 2 (d + \gamma) / (\gamma \varepsilon_t)$ and
# $\operatorname{sd}_t \approx \sqrt 2 (d + \gamma) \sqrt{1/4 + c_i^2/\gamma^2} / (n \varepsilon_t)$,
# constant over the $T$ iterations.
# ```
#
# $\varepsilon_m$ is the per-iteration budget at which Su et al.'s first-order estimate of the
# total squared error of the $k$ centroids, in units of the box's squared half-width,
# $2 k^3 (d + \gamma)^3 / (N^2 \varepsilon_t^2)$, falls to $2/500$. The estimate is the error
# at the best count/sum split ({prf:ref}`prop-su-split`), with clusters of $N/k$ records; the
# 500 is Su et al.'s empirical constant. $\rho$ is the typical centroid coordinate relative to
# the box: $0.225$ on $[-1, 1]^d$, and the note's {glue:text}`ch10_rho` on $[0, 1]^d$, which
# the book uses throughout this chapter.
#
# ```{prf:definition} DP-KCCM's stepped schedule
# :label: def-sched-stepped
#
# $T = 12$ iterations in three blocks of four: $\varepsilon_t = \varepsilon/24$ for
# $t = 1..4$, $\varepsilon/12$ for $t = 5..8$ and $\varepsilon/8$ for $t = 9..12$
# ($4/24 + 4/12 + 4/8 = 1$; {numref}`chapter %s <ch-dpkccm>`). Noise: $24\kappa/\varepsilon$, $12\kappa/\varepsilon$ and
# $8\kappa/\varepsilon$, so it *decreases* over the run.
# ```
#
# ```{prf:definition} APDP's reversed arithmetic progression
# :label: def-sched-ap
#
# With $T$ terms and minimum $\varepsilon_m$, put
# $d_{AP} = 2(\varepsilon - T \varepsilon_m) / (T(T-1))$ and
# $\varepsilon_t = \varepsilon_m + (T - t)\, d_{AP}$, $t = 1, \dots, T$: the increasing
# progression $\varepsilon_m, \varepsilon_m + d_{AP}, \dots$ of the note's eq. 5-7, reversed.
# The first iteration gets $\varepsilon_1 = 2\varepsilon/T - \varepsilon_m$ and the last
# $\varepsilon_T = \varepsilon_m$. Noise: from $\kappa / (2\varepsilon/T - \varepsilon_m)$ up
# to $\kappa / \varepsilon_m$. Which $T$ runs, and what runs instead, is the method's *branch*
# ({prf:ref}`thm-ap-schedule` and after).
# ```
#
# ```{prf:definition} Silhouette allocation (Zhang, Liu and Wang, corrected)
# :label: def-sched-silhouette
#
# The normalised halving $e_t = \varepsilon\, 2^{-t} / (1 - 2^{-T})$ with $T = 10$. A share
# $s = 0.1$ of each $e_t$ pays for noisy silhouettes, and cluster $j$'s statistics get
# $(1 - s)\, e_t\, w_j$ with $w_j = (1 + \tilde S_j)/(1 + \max_i \tilde S_i)$. Since every
# $\tilde S_i \in [0, 1]$, $w_j \in [1/2, 1]$ ({numref}`chapter %s <ch-silhouette>`,
# {prf:ref}`thm-silhouette-corrected`).
# Noise: between $\kappa / ((1 - s) e_t)$ ($w_j = 1$) and twice that ($w_j = 1/2$); the weights
# depend on released silhouettes, so a plan can only give this band.
# ```
#
# The library's configurations of these schedules (`study.study_config`), at the chosen case
# and $\varepsilon$, are in the next table. The corrected note schedules (APDP, uniform,
# halving, series-sum) all run over the corrected APDP's $T$. `plan_ledger` composes what a
# run would charge from the configuration alone (the "ledger total"); the silhouette rule
# decides its weights from the data, so it has no plan (its ledger comes from a run,
# {numref}`chapter %s <ch-silhouette>`).

# %% tags=["hide-input"]
ALGORITHM_LABELS = {
    "apdp": "APDP, reversed AP",
    "uniform": "uniform (APDP's T)",
    "dichotomy": "halving, normalised",
    "series_sum": "series-sum, normalised",
    "dplloyd": "DPLloyd, ε/5",
    "dplloyd_impr": "DPLloyd-Impr (Su)",
    "dpkccm_stepped": "DP-KCCM stepped",
    "silhouette": "silhouette allocation",
}
configs = {a: study.study_config(Point(CASE, a, EPSILON), DIM, N_PUBLIC)
           for a in study.CORRECTED + study.OTHERS}
rows = []
for algorithm, config in configs.items():
    eps_t = config.schedule
    if config.allocation.public:
        planned = plan_ledger(config).total().epsilon
        assert np.isclose(planned, EPSILON) and np.isclose(eps_t.sum(), EPSILON)
        planned = number(planned)
    else:  # silhouette rule: (1 - s) of each step to the centroids, s to silhouettes
        planned = "from a run"
        assert np.isclose(eps_t.sum() / (1 - SILHOUETTE_SHARE), EPSILON)
    rows.append({"schedule": ALGORITHM_LABELS[algorithm], "T": config.iterations,
                 "first share": eps_t[0], "last share": eps_t[-1], "sum": eps_t.sum(),
                 "ledger total": planned})
table(pd.DataFrame(rows), name="ch10-configs")

# %% tags=["remove-cell"]
open_halving = schedules.halving(EPSILON, T_M, normalise=False)
open_series = schedules.series_sum(EPSILON, T_M, normalise=False)
assert np.isclose(open_halving.sum(), EPSILON * (1 - 2.0**-T_M))
assert np.isclose(open_series.sum(), EPSILON * T_M / (T_M + 1))
glue("ch10_open_series", f"{open_series.sum():.4f}", display=False)
glue("ch10_open_halving", f"{open_halving.sum():.4f}", display=False)
glue("ch10_silhouette_share", f"{SILHOUETTE_SHARE:g}", display=False)

# %% [markdown]
# At {glue:text}`ch10_case` and $\varepsilon$ = {glue:text}`ch10_eps`, every schedule with a
# plan spends exactly $\varepsilon$; the silhouette rule spends $(1 - s)\varepsilon$ on the
# centroids (the "sum" column, $s$ = {glue:text}`ch10_silhouette_share`) and $s\varepsilon$
# on the silhouettes. The open-ended forms leave budget on the table: over
# {glue:text}`ch10_t_m` iterations, halving spends {glue:text}`ch10_open_halving` and
# series-sum {glue:text}`ch10_open_series` of {glue:text}`ch10_eps`.

# %% [markdown]
# ## APDP's arithmetic progression
#
# ```{prf:theorem} The reversed progression
# :label: thm-ap-schedule
#
# Let $T \ge 2$, $\varepsilon > 0$, $\varepsilon_m > 0$ and $\varepsilon_t$ as in
# {prf:ref}`def-sched-ap`. Then
#
# 1. $\sum_{t=1}^T \varepsilon_t = \varepsilon$, whatever $\varepsilon$ and $\varepsilon_m$;
# 2. every term is at least $\varepsilon_m$ if and only if $\varepsilon \ge T\varepsilon_m$
#    (then $d_{AP} \ge 0$ and the terms do not increase);
# 3. $\varepsilon_1 / \varepsilon_T = 2\varepsilon / (T \varepsilon_m) - 1$. For fixed $T$ and
#    $\varepsilon_m$, this ratio and $d_{AP}$ both increase with $\varepsilon$.
#
# In particular APDP's branch condition $\varepsilon / \varepsilon_m > t_m$, with $T = t_m$,
# gives $d_{AP} > 0$: a strictly decreasing schedule whose every term but the last exceeds
# $\varepsilon_m$. The condition is the right one: it is exactly what item 2 needs.
# ```
#
# ```{prf:proof}
# 1. Since $\sum_{t=1}^T (T - t) = T(T-1)/2$,
#
#    $$\sum_{t=1}^T \varepsilon_t = T\varepsilon_m + d_{AP}\, \frac{T(T-1)}{2}
#      = T\varepsilon_m + (\varepsilon - T\varepsilon_m) = \varepsilon.$$
#
# 2. The terms form a progression, so the smallest is an end term. If $d_{AP} \ge 0$ it is
#    $\varepsilon_T = \varepsilon_m$; if $d_{AP} < 0$ it is
#    $\varepsilon_1 = \varepsilon_m + (T-1)\, d_{AP} < \varepsilon_m$. And $d_{AP} \ge 0$
#    if and only if $\varepsilon \ge T\varepsilon_m$.
# 3. $\varepsilon_1 = \varepsilon_m + (T-1) \cdot 2(\varepsilon - T\varepsilon_m)/(T(T-1))
#    = 2\varepsilon/T - \varepsilon_m$; divide by $\varepsilon_T = \varepsilon_m$. The ratio
#    and $d_{AP}$ are affine in $\varepsilon$, with positive slopes $2/(T\varepsilon_m)$ and
#    $2/(T(T-1))$.
# ```
#
# Item 3 is the note's property "the smaller the total budget, the smaller the difference
# between two rounds". For the published method, where $T = t_m$ is fixed, it is true by
# algebra. The library's progression, `dpkmeans.engine.schedules.arithmetic_progression`, refuses
# $\varepsilon < T\varepsilon_m$ (item 2):
#
# ```{literalinclude} ../src/dpkmeans/engine/schedules.py
# :language: python
# :pyobject: arithmetic_progression
# :lines: 1-2, 37-
# ```
#
# The note's example, then each item on a grid of $T$, $\varepsilon_m$ and $\varepsilon$:

# %%
note_ap = schedules.arithmetic_progression(NOTE_EPSILON, T_M, NOTE_EPSILON_M)
print(f"ε = {NOTE_EPSILON:g}, ε_m = {NOTE_EPSILON_M:g}, t_m = {T_M}:")
print("  " + ", ".join(f"{e:.3f}" for e in note_ap) + f"  (sum {note_ap.sum():.12g})")
assert np.isclose(note_ap.sum(), NOTE_EPSILON, rtol=1e-12, atol=0)
first = 2 * NOTE_EPSILON / T_M - NOTE_EPSILON_M
assert np.allclose(note_ap, np.linspace(first, NOTE_EPSILON_M, T_M))

# %% tags=["hide-input"]
checked = refused = 0
for T in range(2, 13):
    for eps_m in (0.01, 0.1, 0.5, 4.0):
        for factor in (0.5, 0.99, 1.0, 1.01, 2.0, 7.3):  # eps = factor * T * eps_m
            eps = factor * T * eps_m
            if factor < 1:
                try:
                    schedules.arithmetic_progression(eps, T, eps_m)
                except ValueError:
                    refused += 1
                    continue
                raise AssertionError("the progression ran below T eps_m")
            ap = schedules.arithmetic_progression(eps, T, eps_m)
            assert np.isclose(ap.sum(), eps, rtol=1e-12, atol=0)  # item 1
            assert ap.min() >= eps_m * (1 - 1e-9)  # item 2
            assert np.all(np.diff(ap) <= 1e-12)  # item 2: the terms do not increase
            assert np.isclose(ap[0] / ap[-1], 2 * eps / (T * eps_m) - 1)  # item 3
            checked += 1
print(f"{checked} progressions checked (sum, minimum, ratio); "
      f"{refused} refused below T ε_m")

eps_m = NOTE_EPSILON_M
grid = np.round(np.arange(2.0, 14.0 + 1e-9, 0.01), 2)  # epsilon / eps_m
published_plans = [schedules.apdp_plan(r * eps_m, T_M, eps_m, corrected=False)
                   for r in grid]
published_ratio = np.array([p.schedule[0] / p.schedule[-1] for p in published_plans])
assert np.all(np.diff(published_ratio) >= -1e-12)  # item 3: never falls with epsilon

# %% tags=["remove-cell"]
glue("ch10_note_first", f"{note_ap[0]:.3f}", display=False)
glue("ch10_note_second", f"{note_ap[1]:.3f}", display=False)
glue("ch10_note_last", f"{note_ap[-1]:.3f}", display=False)
glue("ch10_note_ratio", f"{note_ap[0] / note_ap[-1]:.3g}", display=False)
glue("ch10_grid_points", number(len(grid)), display=False)

# %% [markdown]
# The example gives {glue:text}`ch10_note_first`, {glue:text}`ch10_note_second`, ...,
# {glue:text}`ch10_note_last`: the first iteration gets {glue:text}`ch10_note_ratio` times
# the last. Over {glue:text}`ch10_grid_points` budgets from $2\varepsilon_m$ to
# $14\varepsilon_m$ the published first/last ratio never decreases (equal shares below
# $t_m\varepsilon_m$, then the progression).
#
# The corrected method keeps the progression above $t_m\varepsilon_m$. Below it, it takes
# Su's $T$ and runs the progression over $T$ terms. These are the branches of
# `dpkmeans.engine.schedules.apdp_plan`:
#
# ```{literalinclude} ../src/dpkmeans/engine/schedules.py
# :language: python
# :pyobject: apdp_plan
# :lines: 43-
# :dedent: 4
# ```
#
# Then $T$ depends on $\varepsilon$, and item 3 no longer describes how the shape changes
# with the budget.
#
# ```{prf:corollary} The corrected progression is a sawtooth
# :label: cor-ap-sawtooth
#
# Let $r = \varepsilon/\varepsilon_m$ and $t_m \ge 7$. The corrected plan's first/last ratio
# is 1 for $r < 3$ (two equal shares), $2r/\lfloor r \rfloor - 1$ for $3 \le r < 7$,
# $2r/7 - 1$ for $7 \le r \le t_m$, and $2r/t_m - 1$ for $r > t_m$. It equals 1 at
# $r = 3, 4, 5, 6, 7$ and tends to 1 as $r \downarrow t_m$, while it approaches $1 + 2/q$ just
# below each integer $q + 1$ ($q = 3, \dots, 6$) and reaches $2t_m/7 - 1$ at $r = t_m$. It is
# not monotone in $\varepsilon$.
# ```
#
# ```{prf:proof}
# Put the plan's number of terms in {prf:ref}`thm-ap-schedule`, item 3: Su's
# $T = \lfloor \mathrm{clip}(r, 2, 7) \rfloor$ for $r \le t_m$, and $t_m$ above. On
# $[q, q+1)$, $3 \le q \le 6$, the ratio $2r/q - 1$ rises from 1 towards $1 + 2/q$; at
# $r = q + 1$ the number of terms steps up and the ratio falls back to 1. On $[7, t_m]$ it
# rises to $2t_m/7 - 1$, and above $t_m$ it restarts from $2r/t_m - 1 \to 1$.
# ```
#
# So for the corrected method the note's property fails: a *larger* budget can give a
# *flatter* schedule. Numerically, on the same grid:

# %%
corrected_plans = [schedules.apdp_plan(r * eps_m, T_M, eps_m, corrected=True)
                   for r in grid]
corrected_ratio = np.array([p.schedule[0] / p.schedule[-1] for p in corrected_plans])
drops = grid[1:][np.diff(corrected_ratio) < -1e-9]
print("the corrected ratio falls at ε/ε_m =", ", ".join(f"{r:g}" for r in drops))
expected_drops = [4.0, 5.0, 6.0, 7.0, round(T_M + 0.01, 2)]
assert np.allclose(drops, expected_drops)  # at 4, 5, 6, 7 and just above t_m

# %% tags=["hide-input"]
BRANCH_LABELS = {"ap": "progression over tₘ", "fallback": "fallback, ε/tₘ each",
                 "su-ap": "progression over Su's T",
                 "su-uniform": "two equal shares (Su's T = 2)"}


def schedule_text(plan: schedules.ApdpPlan) -> str:
    """A plan's branch and its number of iterations, in words."""
    kind = {"ap": "progression", "su-ap": "progression", "fallback": "fallback",
            "su-uniform": "equal shares"}[plan.branch]
    return f"{kind}, T = {plan.iterations}"


show = [2.5, 2.99, 3.0, 3.5, 3.99, 4.0, 6.99, 7.0, 8.5, 9.99, 10.0, 10.01, 12.0, 14.0]
idx = [int(np.flatnonzero(np.isclose(grid, r))[0]) for r in show]
table(pd.DataFrame({
    "ε/εₘ": grid[idx],
    "published schedule": [schedule_text(published_plans[i]) for i in idx],
    "first/last": published_ratio[idx],
    "corrected schedule": [schedule_text(corrected_plans[i]) for i in idx],
    "first/last\u00a0": corrected_ratio[idx],  # the same header, the corrected ratio
}), formats={"ε/εₘ": lambda v: f"{v:g}"}, name="ch10-sawtooth")

# %% tags=["remove-cell"]
i_below, i_above = (int(np.flatnonzero(np.isclose(grid, r))[0])
                     for r in (T_M, T_M + 0.01))
assert np.isclose(corrected_ratio[i_below], 2 * T_M / 7 - 1)
glue("ch10_saw_below", f"{corrected_ratio[i_below]:.3f}", display=False)
glue("ch10_saw_above", f"{corrected_ratio[i_above]:.3f}", display=False)
glue("ch10_saw_drops", ", ".join(f"{r:g}" for r in drops), display=False)

# %% [markdown]
# The ratio falls at $\varepsilon/\varepsilon_m$ = {glue:text}`ch10_saw_drops`. The largest
# fall is at the top: at $\varepsilon = t_m\varepsilon_m$ the corrected method runs 7 terms with
# ratio {glue:text}`ch10_saw_below`, and the next point of the grid gives
# {glue:text}`ch10_saw_above` over {glue:text}`ch10_t_m` terms. Nothing here is wrong with the
# corrected method: the sawtooth is the price of choosing $T$ from the budget, and
# {prf:ref}`thm-ap-schedule` holds for every fixed $T$. It does mean that the shape of the
# corrected schedule is not a smooth function of $\varepsilon$, and the results half of the
# chapter has to be read with that in mind.
#
# ## Which branch runs
#
# The published progression runs only when $\varepsilon > t_m \varepsilon_m$, and
# $\varepsilon_m$ grows like $k^{3/2} d^{3/2} / N$. The next table gives, for the ten cases,
# $\varepsilon_m$ from the public record count
# (`schedules.su_epsilon_m(N, k, d, rho=0.45)`), the smallest budget at which the published
# progression runs ($\varepsilon > t_m\varepsilon_m$), and the smallest at which the
# corrected one does ($\varepsilon \ge 3\varepsilon_m$, Su's $T \ge 3$).

# %% tags=["hide-input"]
def case_label(case: str) -> str:
    """A case as a reader names it: its dataset, and k if the dataset has two."""
    dataset, k = CASES[case][0], CASES[case][1]
    twice = sum(name == dataset for name, *_ in CASES.values()) > 1
    return dataset.replace("_", " ") + (f" (k = {k})" if twice else "")


cases = {case: study.load_case(case)["public"] for case in CASES}
branch_rows, grid_rows = [], []
for case, public in cases.items():
    k, (N, d) = CASES[case][1], (public.public_n_records, public.X.shape[1])
    floor = schedules.su_epsilon_m(N, k, d, rho=RHO)
    assert np.isclose(floor, variants.plan(1.0, N, k, d, corrected=True).epsilon_m)
    branch_rows.append({"case": case, "N": N, "d": d, "k": k, "eps_m": floor,
                        "published from": T_M * floor, "corrected from": 3 * floor})
    for eps in EPSILONS:
        pub = variants.plan(eps, N, k, d, corrected=False)
        cor = variants.plan(eps, N, k, d, corrected=True)
        grid_rows.append({"case": case, "epsilon": eps, "eps_m": floor,
                          "published": pub.branch, "corrected": cor.branch,
                          "corrected T": cor.iterations,
                          "published share / eps_m": pub.schedule[-1] / floor})
branches = pd.DataFrame(branch_rows)
study_grid = pd.DataFrame(grid_rows)
table(branches.assign(case=branches["case"].map(case_label)).rename(columns={
    "eps_m": "εₘ", "published from": "published AP if ε >",
    "corrected from": "corrected AP if ε ≥"}), name="ch10-branches")

# %% [markdown]
# The branch at each $\varepsilon$ of the study, as published / corrected: **AP**, the
# progression over $t_m$ = {glue:text}`ch10_t_m` iterations; **F**, the published fallback
# ($\varepsilon/t_m$ in each of them); **AP(T)**, the corrected progression over Su's $T$;
# **E**, Su's $T = 2$ with two equal shares.

# %% tags=["hide-input"]
CODES = {"ap": "AP", "fallback": "F", "su-uniform": "E"}
cells = [f"{CODES[p]} / " + (f"AP({t})" if c == "su-ap" else CODES[c])
         for p, c, t in zip(study_grid["published"], study_grid["corrected"],
                            study_grid["corrected T"])]
branch_grid = (study_grid.assign(cell=cells)
               .pivot(index="case", columns="epsilon", values="cell")
               .loc[list(CASES)])
branch_grid.columns = [f"ε = {e:g}" for e in branch_grid.columns]
table(branch_grid.reset_index().assign(case=lambda f: f["case"].map(case_label)),
      name="ch10-branch-grid")

# %% tags=["remove-cell"]
published_ap = sorted(set(study_grid.loc[study_grid["published"] == "ap", "case"]))
assert published_ap == ["adult", "magic"]  # at every epsilon <= 5 of the study
glue("ch10_published_ap_cases", " and ".join(published_ap), display=False)
glue("ch10_eps_max", f"{max(EPSILONS):g}", display=False)
for _, row in branches.iterrows():
    glue(f"ch10_eps_m_{row['case']}", f"{row['eps_m']:.3g}", display=False)
    glue(f"ch10_pub_ap_from_{row['case']}", f"{row['published from']:.3g}", display=False)
    glue(f"ch10_cor_ap_from_{row['case']}", f"{row['corrected from']:.3g}", display=False)
glue("ch10_covtype_n", number(cases["covtype"].public_n_records), display=False)
glue("ch10_covtype_d", cases["covtype"].X.shape[1], display=False)
glue("ch10_covtype_k", CASES["covtype"][1], display=False)
fallback = study_grid[study_grid["published"] == "fallback"]
glue("ch10_fallback_points", len(fallback), display=False)
glue("ch10_grid_total", len(study_grid), display=False)
share = fallback["published share / eps_m"]
glue("ch10_fallback_share_lo", f"{number(100 * share.min(), 2)}%", display=False)
glue("ch10_fallback_share_hi", f"{number(100 * share.max(), 2)}%", display=False)
below_two = study_grid[study_grid["epsilon"] < 2 * study_grid["eps_m"]]
glue("ch10_below_two_points", len(below_two), display=False)
glue("ch10_su_gain", f"{T_M / 2:g}", display=False)
glue("ch10_corrected_ap_points", int(study_grid["corrected"].isin(["ap", "su-ap"]).sum()),
     display=False)

# %% [markdown]
# **Up to $\varepsilon$ = {glue:text}`ch10_eps_max`, the published progression runs only on
# {glue:text}`ch10_published_ap_cases`.** These are the two cases with many records per
# cluster and few dimensions ($\varepsilon_m$ = {glue:text}`ch10_eps_m_adult` and
# {glue:text}`ch10_eps_m_magic`, so the progression starts above
# {glue:text}`ch10_pub_ap_from_adult` and {glue:text}`ch10_pub_ap_from_magic`). On blood
# ($k = 4$) it would need $\varepsilon >$ {glue:text}`ch10_pub_ap_from_blood`. Everywhere else,
# {glue:text}`ch10_fallback_points` of the {glue:text}`ch10_grid_total` points of the study
# grid, APDPk-means *as published* is not an arithmetic-progression method at all. It is the
# fallback: $\varepsilon/t_m$ in each of $t_m$ iterations, which is between
# {glue:text}`ch10_fallback_share_lo` and {glue:text}`ch10_fallback_share_hi` of
# $\varepsilon_m$, the minimum the method is built on. The note's own rationale for
# $\varepsilon_m$ (below it "the added noise affects the centroid update") condemns that
# branch, and it is the one that runs. (The covtype case is the
# {glue:text}`ch10_covtype_n`-record sample available here, with $d$ =
# {glue:text}`ch10_covtype_d` and $k$ = {glue:text}`ch10_covtype_k`, hence its large
# $\varepsilon_m$.)
#
# The corrected method runs a progression at {glue:text}`ch10_corrected_ap_points` points,
# from $\varepsilon \ge 3\varepsilon_m$ (e.g. {glue:text}`ch10_cor_ap_from_adult` on adult,
# {glue:text}`ch10_cor_ap_from_blood` on blood). Below $2\varepsilon_m$
# ({glue:text}`ch10_below_two_points` points) Su's rule is at its floor of two iterations, and
# each share $\varepsilon/2$ is below $\varepsilon_m$ too. But it is $t_m/2$ =
# {glue:text}`ch10_su_gain` times the fallback's share: fewer, less noisy iterations, which is
# Su et al.'s point.

# %% [markdown]
# ## The published method, audited
#
# The variants record what the note's steps release. The audit runs the chapter's case and
# budget in both variants, {glue:text}`ch10_replicas` replicas each: as published on the
# note's min-max scaling (`load_case(case)["paper"]`), with $\varepsilon_m$ from the exact
# $N$; corrected on the public bounds.

# %%
paper, public = data["paper"], data["public"]
audit_configs = {
    "as published": (
        variants.as_published(K, EPSILON, box, n_records=paper.X.shape[0]), paper),
    "corrected": (variants.corrected(K, EPSILON, box, n_records=N_PUBLIC), public),
}
audit_results = {
    name: run(np.asarray(source.X), config, next_seed(), replicas=REPLICAS)
    for name, (config, source) in audit_configs.items()}

# %% tags=["remove-cell"]
published_flaws = audit_configs["as published"][0].flaws
assert {"partition-stop", "record-initialisation"} <= {f.name for f in published_flaws}
flaw_items = [("Overspend, charged" if f.overspends else "Leak") + f": {f.text}."
              for f in published_flaws]
glue("ch10_flaws", Markdown("\n".join(f"- {item}" for item in flaw_items)), display=False)

# %% [markdown]
# The flaws of the published configuration, each recorded by the ledger as a leak (no
# $\varepsilon$ covers the release) or as an overspend (charged at its true cost):
#
# ```{glue:md} ch10_flaws
# :format: myst
# ```

# %% [markdown]
# What the two runs spent and released:

# %% tags=["hide-input"]
audit_columns = {}
for name, (config, source) in audit_configs.items():
    result = audit_results[name]
    leaks = [e for e in result.ledger.entries if e.mechanism.startswith("LEAK")]
    spent = float(result.spent.max())
    plan = variants.plan(EPSILON, N_PUBLIC, K, DIM, corrected=name == "corrected")
    audit_columns[name] = [
        "min-max on the data" if source is paper else "public bounds",
        schedule_text(plan), number(len(leaks)), yes_no(result.ledger.is_private),
        number(spent), number(spent / EPSILON),
        number(float(result.iterations_run.mean()))]
rows = ["scaling", "schedule", "leaks recorded", "private", "ε spent (largest run)",
        "spent / ε", "iterations run (mean)"]
table(pd.DataFrame({"": rows, **audit_columns}), name="ch10-audit")

# %% tags=["remove-cell"]
published_run, corrected_run = audit_results["as published"], audit_results["corrected"]
published_leaks = [e for e in published_run.ledger.entries
                   if e.mechanism.startswith("LEAK")]
assert len(published_leaks) == sum(not f.overspends for f in published_flaws)
init_entries = [e for e in published_run.ledger.entries
                if e.scope == "initialisation" and e.epsilon > 0]
assert not published_run.ledger.is_private and corrected_run.ledger.is_private
assert np.isclose(published_run.spent.max(), EPSILON * (1 + 1 / T_M))
assert np.isclose(corrected_run.spent.max(), EPSILON)
glue("ch10_replicas", REPLICAS, display=False)
glue("ch10_audit_leaks", len(published_leaks), display=False)
glue("ch10_audit_spent", f"{published_run.spent.max():.3g}", display=False)
glue("ch10_audit_factor", f"{published_run.spent.max() / EPSILON:.3g}", display=False)
glue("ch10_audit_init_eps", f"{init_entries[0].epsilon:.3g}", display=False)
glue("ch10_audit_init_sens", f"{init_entries[0].sensitivity:g}", display=False)
glue("ch10_audit_iters", f"{published_run.iterations_run.mean():.3g}", display=False)
glue("ch10_audit_corrected_spent", f"{corrected_run.spent.max():.3g}", display=False)

# %% [markdown]
# The published run's ledger records {glue:text}`ch10_audit_leaks` leaks, so it is not private
# whatever its total: the min-max box, $\varepsilon_m$ (hence the schedule) from the exact
# $N$, the file-order splits of the initialisation (adding a record moves later records to
# another split), and the stopping test, which reads the exact partition. At this budget the
# noise keeps changing the partition, and the runs use {glue:text}`ch10_audit_iters` of the
# {glue:text}`ch10_t_m` iterations on average. The test still reads the private partition
# after every iteration, and where the partition settles it decides how much of the schedule
# runs (and is spent).
#
# The initial centres are the overspend. Publishing a noisy *record* costs privacy: its
# sensitivity is $d$ (one record replaced moves it by at most 1 in each of $d$ coordinates),
# in parallel over the $k$ disjoint splits, and nothing in $\sum_t \varepsilon_t =
# \varepsilon$ pays for it. The note gives the noise no budget. The ledger charges the most
# favourable reading, $\varepsilon_0 = \varepsilon/t_m$ = {glue:text}`ch10_audit_init_eps`
# for one noisy record per split (sensitivity {glue:text}`ch10_audit_init_sens`), on top of
# the declared $\varepsilon$. The run spends {glue:text}`ch10_audit_spent`,
# {glue:text}`ch10_audit_factor` times its $\varepsilon$. Any other reading of "add noise"
# needs a budget that the note does not give, and a smaller one gives noisier starting
# centres. The corrected run has no leak and spends
# {glue:text}`ch10_audit_corrected_spent`, its $\varepsilon$ exactly.

# %% [markdown]
# ### The strongest audit of the corrected APDPk-means
#
# {numref}`Section {number} ({name}) <ch-auditing-algorithms>` audits every mechanism and
# every corrected algorithm with its worst-case neighbouring pair and the privacy loss of
# the whole released transcript as the statistic, at every point of its privacy curve: its
# own $\delta$ (0 when it is pure) and $\delta = 10^{-2}$ and $10^{-3}$, each against the
# accountant's $\varepsilon$ at that $\delta$ for the same releases; the bounds of a row's
# points hold together at 99%. Its rows for the corrected APDPk-means follow, on the pair in
# one dimension: the first iteration's release ("release") and the whole run ("fit"). The
# targets are a bound of at least $0.9$ of the accountant's $\varepsilon$ for a release, at
# every point, and for a fit $0.5$ at $\delta = 0$ and $0.8$ at $\delta = 10^{-3}$; a fit's
# other points have none ("no target"). {ref}`sec-audit-curve` says why a fit is audited at
# $\delta > 0$ and why a row that misses its target misses it.

# %% tags=["hide-input"]
table(strongest_audits(["apdp"]),
      name="ch10-strongest-audit")

# %% tags=["remove-cell"]
# accounted by its elements, which the corner pair moves at once: the pair attains the claim
for key, value in fit_at("apdp", 1e-3).items():
    glue(f"ch10_fit_{key}", f"{value:.3f}", display=False)

# %% [markdown]
# The accountant of the corrected APDPk-means composes each cluster's $(S_j, n_j)$ by its
# elements ({prf:ref}`thm-element-composition`), and the audited pair, a record at a corner
# of the box, moves every element by its bound at once, so at $\delta > 0$ the accountant's
# $\varepsilon$ is the pair's exact $\varepsilon$, the most any audit of the pair can show:
# at $\delta = 10^{-3}$ the fit is charged {glue:text}`ch10_fit_claim`, the pair's exact
# $\varepsilon$ is {glue:text}`ch10_fit_pair`, and the audit's bound reaches
# {glue:text}`ch10_fit_ratio` of the charge.

# %% [markdown]
# ## The noise each schedule plans
#
# {prf:ref}`prop-schedule-noise` turns each configuration into its planned noise per iteration:
# `centroid_noise_sd` on a cluster of average size $N/k$, with a centroid coordinate
# {glue:text}`ch10_offset` from the box's midpoint. Every schedule of the study's private
# algorithms is included, at the chosen case and budget ("sd": the standard deviation of the
# coordinate's noise).

# %% tags=["hide-input"]
profiles = {a: centroid_noise_sd(config, CLUSTER_SIZE, offset=OFFSET)
            for a, config in configs.items()}
silhouette_low_weight = centroid_noise_sd(configs["silhouette"], CLUSTER_SIZE,
                                          offset=OFFSET, weight=0.5)
noise_table = pd.DataFrame(
    [{"algorithm": a, "schedule": ALGORITHM_LABELS[a], "T": sd.size,
      "first sd": sd[0], "last sd": sd[-1], "last / first": sd[-1] / sd[0],
      "mean sd": sd.mean()}
     for a, sd in profiles.items()]).set_index("algorithm")
T_half = configs["dichotomy"].iterations
assert np.isclose(noise_table.loc["dichotomy", "last / first"], 2.0 ** (T_half - 1))
assert np.isclose(noise_table.loc["silhouette", "last / first"], 2.0 ** (T_half - 1))
assert np.isclose(noise_table.loc["series_sum", "last / first"],
                  T_half * (T_half + 1) / 2)
ap = configs["apdp"].schedule
assert np.isclose(noise_table.loc["apdp", "last / first"], ap[0] / ap[-1])
table(noise_table, name="ch10-noise")

# %% tags=["remove-cell"]
glue("ch10_offset", f"{OFFSET:g}", display=False)
for a in profiles:
    glue(f"ch10_ratio_{a}", f"{noise_table.loc[a, 'last / first']:.3g}", display=False)
    glue(f"ch10_last_{a}", f"{noise_table.loc[a, 'last sd']:.3g}", display=False)
    glue(f"ch10_first_{a}", f"{noise_table.loc[a, 'first sd']:.3g}", display=False)
stepped_fall = 1 / noise_table.loc["dpkccm_stepped", "last / first"]
glue("ch10_fall_dpkccm_stepped", f"{stepped_fall:.3g}", display=False)
for a in ("uniform", "dplloyd", "dplloyd_impr"):
    glue(f"ch10_T_{a}", configs[a].iterations, display=False)
glue("ch10_sil_low_last", f"{silhouette_low_weight[-1]:.3g}", display=False)

# %% mystnb={"figure": {"caption": "Planned noise (first-order standard deviation) of one centroid coordinate after each iteration, for every private schedule of the study, on adult at $\\varepsilon = 2$ (a cluster of $N/k$ records, a coordinate 0.25 from the box's midpoint; log scale). The shaded band is the silhouette allocation between weight $w = 1$ (its line) and $w = 1/2$.", "name": "fig-apdp-noise"}} tags=["hide-input"]
fig, ax = new_figure(height=5.2)
for i, (algorithm, sd) in enumerate(profiles.items()):
    t_axis = np.arange(1, sd.size + 1)
    style = series_style(i)
    ax.plot(t_axis, sd, label=ALGORITHM_LABELS[algorithm], **style)
    if algorithm == "silhouette":
        ax.fill_between(t_axis, sd, silhouette_low_weight, color=style["color"],
                        alpha=0.15)
ax.set(yscale="log", xlabel="iteration $t$",
       ylabel="noise sd of a centroid coordinate",
       xticks=range(1, max(sd.size for sd in profiles.values()) + 1))
fig.legend(loc="outside lower center", ncol=2)
plt.show()

# %% [markdown]
# {numref}`fig-apdp-noise` sorts the schedules by which iterations they starve.
#
# - **Halving and the silhouette allocation** starve the late iterations. Their noise doubles
#   every step, so the last iteration is {glue:text}`ch10_ratio_dichotomy` times as noisy as
#   the first ($2^{T-1}$, {prf:ref}`def-sched-halving`). Its sd is
#   {glue:text}`ch10_last_dichotomy` (halving) and {glue:text}`ch10_last_silhouette` to
#   {glue:text}`ch10_sil_low_last` (silhouette, $w = 1$ to $1/2$) on a coordinate of
#   $[0, 1]$, against {glue:text}`ch10_first_uniform` for uniform shares: the last centroids
#   these runs release are mostly noise.
# - **Series-sum** starves them less, by a factor {glue:text}`ch10_ratio_series_sum`
#   ($T(T+1)/2$), to {glue:text}`ch10_last_series_sum`.
# - **APDP's progression** is mild. Its last iteration is {glue:text}`ch10_ratio_apdp` times
#   as noisy as its first ({prf:ref}`thm-ap-schedule`, item 3): it crosses the uniform line
#   mid-run, a little less noise early and a little more late.
# - **DP-KCCM's stepped schedule** does the opposite: its noise *falls*, by a factor
#   {glue:text}`ch10_fall_dpkccm_stepped` from the first block to the last. It spends the
#   budget where the final positions are decided.
# - **Uniform** (over APDP's $T$, and DPLloyd's $\varepsilon/5$) and **DPLloyd-Impr** are flat.
#   DPLloyd's {glue:text}`ch10_T_dplloyd` iterations each get less noise than the
#   {glue:text}`ch10_T_uniform` of the uniform schedule, in proportion to their number; Su's
#   {glue:text}`ch10_T_dplloyd_impr`, with the count/sum split, sit in between.
#
# For a given final iteration the noise is what it is; which profile gives the best centroids
# depends on how much each iteration moves them, and that is an empirical question. The
# results half of the chapter answers it on the ten cases.

# %% [markdown]
# ## Results: the note's claims on ten cases
#
# The sweep `notebooks/sweeps/apdp.yaml` runs every schedule of the study at every
# $\varepsilon$ in {glue:text}`ch10_eps_grid` on the ten cases: {glue:text}`ch10_points`
# points of {glue:text}`ch10_runs` runs each ({glue:text}`ch10_inits` sets of initial
# centroids $\times$ {glue:text}`ch10_runs_per_init` runs, as in DP-KCCM), written to
# `data/results/apdp.csv`. Every private schedule starts from the same
# {glue:text}`ch10_inits` sphere-packing draws of a case; the published family draws its own
# starts from the data, so its {glue:text}`ch10_runs` runs are independent. The primary
# metric is the squared NICV on the public $[0, 1]$ scaling ({numref}`chapter %s <ch-kmeans>`). The
# note's SSE is
# written without the square: the sum of plain distances, which the results keep as
# `sse_note_*`. It orders {glue:text}`ch10_sse_agree` pairs of private schedules at the same
# point the same way as the squared NICV. The chapter reads the committed results; it runs
# nothing heavy.

# %%
results = pd.read_csv(committed_file(RESULTS))
ran = results[results["family"] != "reference"]
private = ran[ran["is_private"]]
assert (private["epsilon_spent_max"] <= private["epsilon"] * (1 + 1e-9)).all()

# %% tags=["remove-cell"]
glue("ch10_eps_grid", ", ".join(f"{e:g}" for e in EPSILONS), display=False)
glue("ch10_points", number(len(ran)), display=False)
glue("ch10_runs", number(int(ran["replicas"].iloc[0])), display=False)
glue("ch10_inits", study.PAPER_INITS, display=False)
glue("ch10_runs_per_init", study.PAPER_RUNS, display=False)
assert int(ran["replicas"].iloc[0]) == study.PAPER_INITS * study.PAPER_RUNS
# does the note's unsquared SSE order each pair of private schedules like the squared NICV?
pairs = agree = 0
for _, group in private.groupby(["case", "epsilon"]):
    a, b = group["nicv_mean"].to_numpy(), group["sse_note_mean"].to_numpy()
    upper = np.triu_indices(a.size, 1)
    same = np.sign(a[:, None] - a[None, :])[upper] == np.sign(b[:, None] - b[None, :])[upper]
    pairs, agree = pairs + same.size, agree + int(same.sum())
glue("ch10_sse_agree", f"{count_of(agree, pairs)} ({percent(agree / pairs)})",
     display=False)

# %% [markdown]
# ### Which branch ran
#
# Every row of the results says which branch of APDP's schedule produced it
# (`schedules.APDP_BRANCHES`). The table counts them over the {glue:text}`ch10_grid_total`
# (case, $\varepsilon$) points.

# %% tags=["hide-input"]
METHOD_LABELS = {"as_published": "as published", "corrected": "corrected"}
counts = claims.branch_counts(results)
table(counts.assign(method=counts["method"].map(METHOD_LABELS),
                    branch=counts["branch"].map(BRANCH_LABELS)),
      name="ch10-branch-counts")

# %% tags=["remove-cell"]
by_branch = counts.set_index(["method", "branch"])["points"]
glue("ch10_pub_ap_points", int(by_branch.get(("as_published", "ap"), 0)), display=False)
glue("ch10_pub_fallback_points", int(by_branch.get(("as_published", "fallback"), 0)),
     display=False)
glue("ch10_cor_ap_points", int(by_branch.get(("corrected", "ap"), 0)
                               + by_branch.get(("corrected", "su-ap"), 0)), display=False)
glue("ch10_cor_uniform_points", int(by_branch.get(("corrected", "su-uniform"), 0)),
     display=False)

# %% [markdown]
# As published, the progression ran at {glue:text}`ch10_pub_ap_points` points and the fallback
# at {glue:text}`ch10_pub_fallback_points`: on most of the book's data, "APDPk-means" *is*
# DPk-means with uniform shares below the minimum it was designed around. Corrected, the
# progression ran at {glue:text}`ch10_cor_ap_points` points (over $t_m$ or over Su's $T$), and
# Su's $T = 2$ with equal shares at {glue:text}`ch10_cor_uniform_points`. The claims below are
# judged only where the progression ran: elsewhere the AP and the uniform schedule are the same
# configuration, and comparing them would test the noise of two seeds.
#
# ### The claims ledger
#
# `dpkmeans.papers.apdp.claims` computes the verdicts from the committed results, with
# Welch's test at 5% per comparison and the test rule and claim rule that
# {numref}`section %s defines <claims-verdicts>` ("in all cases"), and
# `data/results/apdp_claims.csv` stores the tests' verdicts; a test recomputes them from the
# results. {numref}`apdp-claims-verdicts` puts the claim verdicts of the method as published
# and corrected side by side, each with its tests' counts.

# %% tags=["remove-cell"]
ledger = pd.read_csv(committed_file(CLAIMS_FILE), dtype={"claim": str})
summary = claims.claims_summary(ledger)
for row in summary.itertuples():  # the claim rule's verdict, its tests' counts
    glue(f"ch10_v{row.claim}_{row.method}", f"{row.verdict} ({row.evidence})",
         display=False)
    glue(f"ch10_n{row.claim}_{row.method}", row.ap_points, display=False)
COMPARATOR_KEYS = {"-": "plan", "dichotomy, series-sum": "decreasing"}
for row in ledger.itertuples():
    comparator = COMPARATOR_KEYS.get(row.comparator, row.comparator)
    key = f"ch10_e{row.claim}_{row.method}_{comparator.replace('-', '_').replace(' ', '_')}"
    glue(key, row.evidence, display=False)
claim_1 = summary[summary["claim"] == "1"].set_index("method")["verdict"]
glue("ch10_claim1_differs", "differ" if claim_1["as_published"] != claim_1["corrected"]
     else "agree", display=False)

# %% [markdown]
# :::{table} The note's claims and their verdicts ({numref}`as section %s defines them <claims-verdicts>`), for the method as published and corrected, over the points where the progression ran. Claim 2 is tested against each of its three comparators, and its verdict combines the three tests.
# :name: apdp-claims-verdicts
#
# | claim | as published | corrected |
# |---|---|---|
# | 1. the AP converges faster than uniform early on | {glue:text}`ch10_v1_as_published` | {glue:text}`ch10_v1_corrected` |
# | 2. the AP beats uniform, dichotomy and series-sum | {glue:text}`ch10_v2_as_published` | {glue:text}`ch10_v2_corrected` |
# | 3a. the smaller $\varepsilon$, the flatter the AP | {glue:text}`ch10_v3a_as_published` | {glue:text}`ch10_v3a_corrected` |
# | 3b. at its flattest, the AP beats dichotomy and series-sum | {glue:text}`ch10_v3b_as_published` | {glue:text}`ch10_v3b_corrected` |
# :::
#
# The two versions' verdicts {glue:text}`ch10_claim1_differs` on claim 1, the note's headline:
# {glue:text}`ch10_v1_as_published` as published, at the {glue:text}`ch10_n1_as_published`
# points where the published progression ran, and {glue:text}`ch10_v1_corrected` corrected, at
# {glue:text}`ch10_n1_corrected` points. The published verdict rests on a method that is not
# private, run on {glue:text}`ch10_published_ap_cases` only; the corrected verdict is the one
# that describes a private APDPk-means. The evidence, as the ledger words it:
#
# - **Claim 1, as published:** {glue:text}`ch10_e1_as_published_uniform`.
#   **Corrected:** {glue:text}`ch10_e1_corrected_uniform`.
# - **Claim 2 against uniform, as published:** {glue:text}`ch10_e2_as_published_uniform`.
#   **Corrected:** {glue:text}`ch10_e2_corrected_uniform`. Against dichotomy:
#   {glue:text}`ch10_e2_as_published_dichotomy` (as published),
#   {glue:text}`ch10_e2_corrected_dichotomy` (corrected). Against series-sum:
#   {glue:text}`ch10_e2_as_published_series_sum` (as published),
#   {glue:text}`ch10_e2_corrected_series_sum` (corrected).
# - **Claim 3a** is a property of the schedules, read off the plans at the AP points. As
#   published: {glue:text}`ch10_e3a_as_published_plan`. Corrected:
#   {glue:text}`ch10_e3a_corrected_plan` ({prf:ref}`cor-ap-sawtooth`).
# - **Claim 3b, as published:** {glue:text}`ch10_e3b_as_published_decreasing`.
#   **Corrected:** {glue:text}`ch10_e3b_corrected_decreasing`.

# %% [markdown]
# ### Convergence, iteration by iteration
#
# Claim 1 is about the path, not the end point. The engine records the exact SSE of the
# centroids entering every iteration from the statistics it computes anyway (an evaluation aid,
# never released), so every row carries the mean NICV after $0, 1, \dots, T$ iterations.
# {numref}`fig-apdp-curves` shows them at the case and budget where the published progression
# is steepest ({glue:text}`ch10_curve_case` at $\varepsilon$ = {glue:text}`ch10_curve_eps`).

# %% tags=["remove-cell"]
steep = ran[(ran["algorithm"] == "ap_published") & (ran["branch"] == "ap")]
CURVE_CASE, CURVE_EPS = steep.sort_values("epsilon").iloc[-1][["case", "epsilon"]]
glue("ch10_curve_case", CURVE_CASE, display=False)
glue("ch10_curve_eps", f"{CURVE_EPS:g}", display=False)
at = ran[(ran["case"] == CURVE_CASE) & (ran["epsilon"] == CURVE_EPS)].set_index("algorithm")

# %% mystnb={"figure": {"caption": "Mean squared NICV after each iteration (0: the initial centres) of the note's four schedules, as published (left, on the note's min-max scaling; 1000 independent runs) and corrected (right, on the public scaling; 20 starts $\\times$ 50 runs), at the case and budget where the published progression is steepest. Error bars: 95% intervals.", "name": "fig-apdp-curves"}} tags=["hide-input"]
NOTE_SCHEDULES = ("APDP's progression", "uniform", "halving", "series-sum")
fig, axes = new_figure(ncols=2, height=3.4)
for ax, family, title in zip(axes, (study.PUBLISHED, study.CORRECTED),
                             ("as published", "corrected")):
    for i, (algorithm, label) in enumerate(zip(family, NOTE_SCHEDULES)):
        mean = np.array(json.loads(at.loc[algorithm, "curve_nicv_mean"]))
        se = np.array(json.loads(at.loc[algorithm, "curve_nicv_se"]))
        ax.errorbar(np.arange(mean.size), mean, yerr=1.96 * se, capsize=2,
                    label=label if ax is axes[0] else None, **series_style(i))
    ax.set(yscale="log", xlabel="iterations run", title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0), numticks=6))
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.yaxis.set_minor_formatter(NullFormatter())
axes[0].set_ylabel("mean squared NICV")
fig.legend(loc="outside lower center", ncol=2)
plt.show()

# %% [markdown]
# ### Which schedule should a user pick?
#
# {numref}`fig-apdp-ranking` plots the final NICV of the eight private schedules against
# $\varepsilon$ on every case, with 95% intervals over the {glue:text}`ch10_inits` starts,
# and the non-private Lloyd from the same starts. `claims.ranking` orders them at every
# (case, $\varepsilon$) and marks those not significantly worse than the best (the table after
# the figure: the best schedule and how many others tie with it); `claims.recommendations`
# counts, in two regimes of $\varepsilon/\varepsilon_m$, how often each is among the best.

# %% mystnb={"figure": {"caption": "Final squared NICV (log scale) of the eight private schedules against $\\varepsilon$ on the ten cases, 20 starts $\\times$ 50 runs per point, with 95% intervals; thick grey line: non-private Lloyd from the same starts. The dotted vertical line marks $3\\varepsilon_m$, where Su's rule first gives $T = 3$ and the corrected APDP its first progression.", "name": "fig-apdp-ranking"}} tags=["hide-input"]
reference = results[results["family"] == "reference"].set_index("case")["nicv_mean"]
fig, axes = new_figure(ncols=len(CASES), height=2.45, sharex=True)
for ax, case in zip(axes, CASES):
    mine = private[private["case"] == case]
    for i, algorithm in enumerate(study.CORRECTED + study.OTHERS):
        rows = mine[mine["algorithm"] == algorithm].sort_values("epsilon")
        ax.errorbar(rows["epsilon"], rows["nicv_mean"],
                    yerr=[rows["nicv_mean"] - rows["nicv_ci_low"],
                          rows["nicv_ci_high"] - rows["nicv_mean"]],
                    capsize=1.5, lw=1.2, markersize=4,
                    label=ALGORITHM_LABELS[algorithm] if ax is axes[0] else None,
                    **series_style(i))
    ax.axhline(reference[case], color="grey", lw=2.5, alpha=0.6,
               label="non-private Lloyd" if ax is axes[0] else None)
    floor = mine["epsilon_m"].iloc[0]
    if 3 * floor <= max(EPSILONS):
        ax.axvline(3 * floor, color="dimgrey", lw=1.2, ls=":")
    dataset, k = CASES[case][:2]
    ax.set(xscale="log", yscale="log", title=f"{dataset.replace('_', ' ')}, k = {k}")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0), numticks=6))
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks([0.05, 0.2, 1, 5])
    ax.xaxis.set_major_formatter(FuncFormatter(plain))
    ax.xaxis.set_minor_formatter(NullFormatter())
for ax in axes[-2:]:
    ax.set_xlabel(r"$\varepsilon$")
for ax in axes[::2]:
    ax.set_ylabel("squared NICV")
fig.legend(loc="outside upper center", ncol=2)
plt.show()

# %% [markdown]
# The best schedule at each (case, $\varepsilon$), and after "+" how many others are not
# significantly worse. APDP is the corrected APDPk-means (below $3\varepsilon_m$ it is two
# equal shares), Su is DPLloyd-Impr, stepped is DP-KCCM's schedule and silhouette the
# silhouette allocation.

# %% tags=["hide-input"]
SHORT = {"apdp": "APDP", "uniform": "uniform", "dichotomy": "halving",
         "series_sum": "series-sum", "dplloyd": "DPLloyd", "dplloyd_impr": "Su",
         "dpkccm_stepped": "stepped", "silhouette": "silhouette"}
ranks = claims.ranking(results)
best = ranks[ranks["rank"] == 1].set_index(["case", "epsilon"])["algorithm"]
tied = ranks.groupby(["case", "epsilon"])["among_best"].sum() - 1
ranking_table = (best.map(SHORT) + " +" + tied.astype(str)).unstack("epsilon")
ranking_table.columns = [f"ε = {e:g}" for e in ranking_table.columns]
table(ranking_table.loc[list(CASES)].reset_index()
      .assign(case=lambda f: f["case"].map(case_label)), name="ch10-ranking")

# %% [markdown]
# How often each schedule is among the best, in each regime: at how many of the points where
# it was ranked. Below $3\varepsilon_m$ the corrected uniform schedule is the corrected APDP,
# and is ranked once, as APDP.

# %% tags=["hide-input"]
advice = claims.recommendations(results)
low_label, high_label = (label for *_, label in claims.REGIMES)
columns = {}
for label, name in ((low_label, "ε < 3εₘ"), (high_label, "ε ≥ 3εₘ")):
    part = advice[advice["regime"] == label].set_index("algorithm")
    columns[f"among the best, {name}"] = [
        count_of(r.among_best, r.ranked) if r.ranked else "(as APDP)"
        for r in part.itertuples()]
    columns[f"mean rank, {name}"] = part["mean_rank"].to_numpy()
advice_table = pd.DataFrame({"schedule": [ALGORITHM_LABELS[a] for a in part.index],
                             **columns})
table(advice_table, name="ch10-advice")

# %% tags=["remove-cell"]
SENTENCE_NAMES = {"apdp": "the corrected APDP", "uniform": "uniform shares",
                  "dichotomy": "halving", "series_sum": "series-sum", "dplloyd": "DPLloyd",
                  "dplloyd_impr": "DPLloyd-Impr", "dpkccm_stepped": "DP-KCCM's steps",
                  "silhouette": "the silhouette allocation"}
for regime, part in advice.groupby("regime", sort=False):
    tag = "low" if regime == low_label else "high"
    top = part[part["ranked"] > 0].sort_values(["among_best", "mean_rank"],
                                               ascending=[False, True])
    glue(f"ch10_regime_{tag}_points", int(part["points"].iloc[0]), display=False)
    glue(f"ch10_regime_{tag}_top", ", ".join(
        f"{SENTENCE_NAMES[r.algorithm]} ({r.among_best})" for r in top.head(3).itertuples()),
        display=False)
    glue(f"ch10_regime_{tag}_last", " and ".join(
        f"{SENTENCE_NAMES[r.algorithm]} ({r.among_best})" for r in top.tail(2).itertuples()),
        display=False)
# the low regime's exceptions: points where Su's rule is not among the best
ratio = claims._ratio(results)
ranks["ratio"] = [ratio[(c, e)] for c, e in zip(ranks["case"], ranks["epsilon"])]
su_low = ranks[(ranks["algorithm"] == "dplloyd_impr") & (ranks["ratio"] < 3)]
misses = su_low[~su_low["among_best"]]
glue("ch10_su_low", count_of(int(su_low["among_best"].sum()), len(su_low)), display=False)
phrases = []
for case, group in misses.groupby("case", sort=False):
    eps = sorted(group["epsilon"])
    winners = {best[(case, e)] for e in eps}
    assert winners == {"dplloyd"}  # the prose names DPLloyd as the winner there
    alone = [e for e in eps if tied[(case, e)] == 0]
    text = f"{case_label(case)} at ε = " + join_names([f"{e:g}" for e in eps])
    if alone == eps:
        text += " (alone)"
    elif alone:
        text += " (alone at " + join_names([f"ε = {e:g}" for e in alone]) + ")"
    phrases.append(text)
glue("ch10_su_misses", join_names(phrases), display=False)
timing = json.loads(committed_file(TIMING).read_text())
glue("ch10_sweep_min", f"{timing['wall_s'] / 60:.0f}", display=False)
glue("ch10_sweep_jobs", timing["jobs"], display=False)
glue("ch10_sweep_machine", machine_text(timing["machine"]), display=False)

# %% [markdown]
# Below $3\varepsilon_m$ ({glue:text}`ch10_regime_low_points` points) Su's rule gives $T = 2$,
# and the corrected APDP *is* the uniform schedule over two iterations (ranked once, as APDP).
# The schedules most often among the best there, with the count of points, are
# {glue:text}`ch10_regime_low_top`; the least often, {glue:text}`ch10_regime_low_last`. From
# $3\varepsilon_m$ up ({glue:text}`ch10_regime_high_points` points) they are
# {glue:text}`ch10_regime_high_top`, and the least often {glue:text}`ch10_regime_high_last`.
#
# What the numbers say about the note's three claims:
#
# - **The progression rarely runs.** As published it needs $\varepsilon > t_m\varepsilon_m$,
#   which on the book's data at $\varepsilon \le$ {glue:text}`ch10_eps_max` happens only on
#   {glue:text}`ch10_published_ap_cases`, the two largest low-dimensional cases. Everywhere
#   else the published "APDPk-means" is its own base algorithm with uniform shares below
#   $\varepsilon_m$.
# - **Where it runs, it does not beat uniform shares.** As published the AP is ahead of
#   uniform after the first iterations at most comparisons (claim 1 is
#   {glue:text}`ch10_v1_as_published`, never the reverse), but its final NICV is not
#   consistently better ({glue:text}`ch10_e2_as_published_uniform`). Corrected, with both
#   schedules on the same starts, the two are indistinguishable at every AP point, early and
#   late: at most of those points Su's $T$ makes the progression nearly flat (claim 3a's
#   ratios), so it is close to uniform, and its early lead is smaller than the run-to-run
#   noise.
# - **It beats dichotomy and series-sum as published**, because those two, open-ended, leave
#   part of $\varepsilon$ unspent and starve the last of the $t_m$ iterations
#   ({numref}`fig-apdp-noise`). Normalised over the corrected $T$, they are much closer: the
#   corrected AP is better than halving at some AP points and never significantly worse, and
#   nearly always indistinguishable from series-sum (the evidence above).
# - **"The smaller $\varepsilon$, the flatter"** is algebra for the published progression
#   (fixed $T = t_m$), and a sawtooth for the corrected one, whose $T$ moves with
#   $\varepsilon$ ({prf:ref}`cor-ap-sawtooth`). Whether the flattening helps could be tested
#   only on the published method's two cases, where the flat AP beats the steep schedules;
#   corrected, it makes no significant difference.
#
# **Which schedule to pick.** In the low regime the number of iterations matters more than
# their shape: Su's rule, which stops at $T = 2$ and splits each budget between the count and
# the sums, is among the best at {glue:text}`ch10_su_low` points, and the schedules that
# spread a small budget over many iterations (DP-KCCM's 12 steps, the silhouette allocation's
# 10) are among the worst. The exceptions sit at the top of that regime, where a few more
# iterations pay: on {glue:text}`ch10_su_misses`, DPLloyd's five uniform iterations are best
# (the table above), so Su's $T = 2$ is a safe choice there rather than the best one. In the
# high regime most reasonably flat schedules tie (APDP, uniform, DPLloyd, DPLloyd-Impr,
# DP-KCCM's stepped), and halving and the silhouette allocation, which starve the late
# iterations, fall behind. The progression is never needed: where it differs from uniform it
# is not significantly better.
#
# :::{admonition} The sweep's time
# :class: note
# The whole sweep took {glue:text}`ch10_sweep_min` minutes with
# {glue:text}`ch10_sweep_jobs` parallel jobs on the machine that made the committed run
# ({glue:text}`ch10_sweep_machine`; `benchmarks/apdp_reproduction.json`). Most of it is the silhouette
# allocation's second pass per iteration, and the as-published family on adult: its
# noisy-record starts are clipped to corners of the box, many records then sit at exactly
# equal distances from two corner centroids, and the exact assignment settles each of those
# ties in integer arithmetic (`benchmarks/README.md` says more).
# :::
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - APDPk-means is known only from secondary study notes; the original paper could not be
#   found, and the notes name no data and report no result. The book tests what they state.
# - The reversed progression spends exactly $\varepsilon$, and every term is at least
#   $\varepsilon_m$ exactly when $\varepsilon \ge T\varepsilon_m$ ({prf:ref}`thm-ap-schedule`);
#   its first/last ratio $2\varepsilon/(T\varepsilon_m) - 1$ grows with $\varepsilon$ for fixed
#   $T$, and saws when $T$ follows Su's rule ({prf:ref}`cor-ap-sawtooth`).
# - As published the method is not private: min-max scaling, $\varepsilon_m$ from the exact
#   count, record-order splits and a stop that reads the partition are leaks, and the noisy
#   records that start it cost $\varepsilon/t_m$ on top of $\varepsilon$ (the ledger computes
#   both). Corrected: sphere packing, public bounds, Su's $T$ below the minimum, all $T$
#   iterations.
# - On the book's ten cases the published progression ran at {glue:text}`ch10_pub_ap_points`
#   of {glue:text}`ch10_grid_total` points; the corrected one at
#   {glue:text}`ch10_cor_ap_points`. Claims ({numref}`apdp-claims-verdicts`): early
#   convergence {glue:text}`ch10_v1_as_published` as published,
#   {glue:text}`ch10_v1_corrected` corrected; beats the three other schedules
#   {glue:text}`ch10_v2_as_published` / {glue:text}`ch10_v2_corrected`; flatter at small
#   $\varepsilon$ {glue:text}`ch10_v3a_as_published` / {glue:text}`ch10_v3a_corrected`; and
#   that helps {glue:text}`ch10_v3b_as_published` / {glue:text}`ch10_v3b_corrected`.
# - Per-iteration noise is $\propto 1/\varepsilon_t$ ({prf:ref}`prop-schedule-noise`):
#   halving and the silhouette allocation multiply the last iteration's noise by $2^{T-1}$,
#   the progression by its first/last ratio, and the stepped schedule divides it by 3.
# - A user should pick the number of iterations first (Su's rule) and a flat schedule; the
#   progression's shape adds nothing measurable here.
# :::

# %% tags=["remove-cell"]
# Numbers quoted in the exercises' solutions.
note_dap = float(-np.diff(note_ap)[0])
assert np.isclose(note_dap, 2 * (NOTE_EPSILON - T_M * NOTE_EPSILON_M) / (T_M * (T_M - 1)))
glue("ch10_ex_dap", f"{note_dap:.4f}", display=False)
glue("ch10_ex_max_floor", f"{NOTE_EPSILON / T_M:g}", display=False)
adult_floor = float(branches.set_index("case").loc["adult", "eps_m"])
flat = [T * adult_floor for T in range(3, 8)]
for eps in flat:  # the corrected plan is flat at eps = T eps_m (d_AP = 0)
    plan_flat = schedules.apdp_plan(eps * (1 + 1e-12), T_M, adult_floor, corrected=True)
    assert np.allclose(plan_flat.schedule, plan_flat.schedule[0])
glue("ch10_ex_flat", ", ".join(f"{e:.3f}" for e in flat), display=False)
glue("ch10_ex_top", f"{T_M * adult_floor:.3f}", display=False)
glue("ch10_ex_top_ratio", f"{2 * T_M / 7 - 1:.3f}", display=False)
unspent = EPSILON - schedules.halving(EPSILON, T_M, normalise=False).sum()
assert np.isclose(unspent, EPSILON * 2.0**-T_M)
glue("ch10_ex_unspent", f"{unspent:.6f}", display=False)
glue("ch10_ex_power", number(2**T_M), display=False)

# %% [markdown]
# ## Exercises
#
# ```{exercise}
# :label: ex-apdp-dap
# :class: pen-and-paper
#
# The note writes the progression with first term $\varepsilon_m$ and last term
# $\varepsilon'$ as $\varepsilon = (\varepsilon_m + \varepsilon')\, T/2$ and
# $\varepsilon_i = \varepsilon_m + (i - 1)\, d_{AP}$ (its eq. 5-6). Derive its common
# difference $d_{AP}$ (eq. 7), and compute it for the note's example ($\varepsilon = 2$,
# $\varepsilon_m = 0.1$, $t_m = 10$ terms). What is the largest $\varepsilon_m$ for which this
# example's progression is defined?
# ```
#
# ```{solution} ex-apdp-dap
# :class: dropdown
#
# The last term is $\varepsilon' = \varepsilon_m + (T - 1)\, d_{AP}$. Substituting in the sum,
# $\varepsilon = (2\varepsilon_m + (T-1)\, d_{AP})\, T/2$, so
# $d_{AP} = 2(\varepsilon - T\varepsilon_m)/(T(T-1))$. For the example,
# $d_{AP} = 2(2 - 1)/90$ = {glue:text}`ch10_ex_dap`, the step between consecutive shares of
# the printed schedule. Every term is at least $\varepsilon_m$ exactly when $d_{AP} \ge 0$
# ({prf:ref}`thm-ap-schedule`), that is $\varepsilon_m \le \varepsilon/T$ =
# {glue:text}`ch10_ex_max_floor`. At that $\varepsilon_m$ the schedule is flat, and above it
# the progression would increase: APDP's branch condition sends it to the fallback instead.
# ```
#
# ```{exercise}
# :label: ex-apdp-flat
#
# On adult ($\varepsilon_m$ = {glue:text}`ch10_eps_m_adult`), for which budgets between
# $2\varepsilon_m$ and $t_m\varepsilon_m$ is the *corrected* schedule exactly flat (all shares
# equal)? What is its first/last ratio just below $t_m\varepsilon_m$, and just above? Check with
# `schedules.apdp_plan(..., corrected=True)`.
# ```
#
# ```{solution} ex-apdp-flat
# :class: dropdown
#
# Below $3\varepsilon_m$, Su's $T = 2$ gives two equal shares: flat. Between $3\varepsilon_m$
# and $t_m\varepsilon_m$ the progression runs over $T = \lfloor \min(r, 7) \rfloor$ terms,
# $r = \varepsilon/\varepsilon_m$, and is flat when $d_{AP} = 0$, that is
# $\varepsilon = T\varepsilon_m$ ({prf:ref}`cor-ap-sawtooth`): $\varepsilon$ =
# {glue:text}`ch10_ex_flat` for $T = 3, \dots, 7$. Just below
# $t_m\varepsilon_m$ = {glue:text}`ch10_ex_top` the plan still has 7 terms, and the ratio is
# close to $2t_m/7 - 1$ = {glue:text}`ch10_ex_top_ratio`. Just above it the plan has $t_m$
# terms and the ratio $2r/t_m - 1$ is close to 1. In floating point, pass a budget a hair above
# $T\varepsilon_m$: `apdp_plan` takes the floor of $\varepsilon/\varepsilon_m$, and
# $T\varepsilon_m/\varepsilon_m$ can round to just below $T$.
# ```
#
# ```{exercise}
# :label: ex-apdp-halving
# :class: pen-and-paper
#
# Show that the open-ended halving schedule over $T$ iterations leaves $\varepsilon\, 2^{-T}$
# of the budget unspent, and compute it for $\varepsilon$ = {glue:text}`ch10_eps` and
# $T = t_m$ = {glue:text}`ch10_t_m`. How much noisier is its last iteration than the
# normalised schedule's?
# ```
#
# ```{solution} ex-apdp-halving
# :class: dropdown
#
# The geometric sum is $\sum_{t=1}^T 2^{-t} = 1 - 2^{-T}$, so the schedule spends
# $\varepsilon(1 - 2^{-T})$ and leaves $\varepsilon\, 2^{-T}$. That is
# {glue:text}`ch10_ex_unspent` for $\varepsilon$ = {glue:text}`ch10_eps` and $T$ =
# {glue:text}`ch10_t_m`, as `EPSILON - schedules.halving(EPSILON, 10, normalise=False).sum()`
# confirms. The normalised schedule multiplies every share by $1/(1 - 2^{-T})$, so its noise is
# smaller by the factor $1 - 2^{-T}$ in every iteration, the last included: one part in
# {glue:text}`ch10_ex_power`. The unspent budget is negligible. The real cost of halving is the
# shape: the last iteration is $2^{T-1}$ times as noisy as the first ({numref}`fig-apdp-noise`).
# ```
