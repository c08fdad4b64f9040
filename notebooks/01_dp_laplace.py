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
# (ch-laplace)=
# # Differential privacy and the Laplace mechanism
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - state $\varepsilon$-differential privacy under the two neighbour relations the book uses,
#   add/remove one record and replace one record;
# - prove that the Laplace mechanism is $\varepsilon$-DP and check it numerically from samples;
# - use the exponential mechanism to pick one of finitely many options privately;
# - derive the sensitivity of the query that every DP-Lloyd iteration asks: the sum and the
#   count of each cluster, for records in a public box $[-r, r]^d$.
#
# **Prerequisites:** basic probability (densities, independence, the Laplace distribution) and
# reading Python with numpy.
# :::
#
# The chapter's code runs from the fast defaults in the next cell (tagged `parameters`;
# open it to see them).

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
N_SAMPLES = 200_000  # Monte-Carlo draws per distribution
EPSILON = 1.0  # the privacy parameter of the numerical checks

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter
from myst_nb import glue

from dpkmeans.compute.lloyd import lloyd_query
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.privacy.loss import estimate_log_ratios, laplace_privacy_loss
from dpkmeans.privacy.mechanisms import (
    exponential_probabilities,
    laplace_mechanism,
    laplace_scale,
)
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import join_names, number, table
from dpkmeans.synthesis.ledger import papers, papers_with_flaw

use_book_style()
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## Neighbouring datasets and the definition
#
# Differential privacy {cite}`dwork2006calibrating,dwork2014algorithmic` compares what a
# mechanism does on two datasets that differ in one person. *Which* two datasets count as
# neighbours is part of the definition, and the book always names it.
#
# ```{prf:definition} Neighbouring datasets
# :label: def-neighbours
#
# Let $D$ and $D'$ be finite multisets of records.
# - **Add/remove** (unbounded DP): $D \simeq D'$ if one is obtained from the other by adding
#   or removing a single record, $D' = D \cup \{x\}$ or $D = D' \cup \{x\}$. The number of
#   records is itself private.
# - **Replace** (bounded DP): $D \simeq_r D'$ if $|D| = |D'|$ and they differ in exactly one
#   record, $D' = D \setminus \{x\} \cup \{x'\}$. The number of records is public.
#
# A replacement is a removal followed by an addition, so a mechanism that is
# $\varepsilon$-DP under add/remove is $2\varepsilon$-DP under replace.
# ```
#
# ```{prf:definition} Differential privacy
# :label: def-dp
#
# A randomised mechanism $M$ is **$\varepsilon$-differentially private** if for all
# neighbouring $D \simeq D'$ and every measurable set $E$ of outputs,
#
# $$\Pr[M(D) \in E] \le e^{\varepsilon} \Pr[M(D') \in E].$$
# ```
#
# When $M(D)$ and $M(D')$ have densities $p_D$ and $p_{D'}$, the definition holds exactly
# when the **privacy loss** $\mathcal L_{D,D'}(y) = \ln \frac{p_D(y)}{p_{D'}(y)}$ lies in
# $[-\varepsilon, \varepsilon]$ for (almost) every output $y$ and every neighbouring pair.
#
# ## The Laplace mechanism
#
# ```{prf:definition} $L_1$ sensitivity
# :label: def-sensitivity
#
# The $L_1$ sensitivity of a query $f$ mapping datasets to $\R^m$ is
# $\Delta_1 f = \max_{D \simeq D'} \lVert f(D) - f(D') \rVert_1$, the maximum over the chosen
# neighbour relation.
# ```
#
# ```{prf:theorem} Laplace mechanism
# :label: thm-laplace
#
# Let $f$ have $L_1$ sensitivity $\Delta_1 f$ and let $b = \Delta_1 f / \varepsilon$. The
# mechanism $M(D) = f(D) + (Y_1, \dots, Y_m)$ with $Y_i$ independent $\Lap(b)$ is
# $\varepsilon$-DP.
# ```
#
# ```{prf:proof}
# Fix neighbours $D \simeq D'$ and write $\mu = f(D)$, $\mu' = f(D')$. The density of
# $M(D)$ at $y$ is $\prod_i \frac{1}{2b} e^{-|y_i - \mu_i| / b}$, so
#
# $$
# \begin{aligned}
# \mathcal L_{D,D'}(y) &= \frac{1}{b}\sum_{i=1}^m \big(|y_i - \mu'_i| - |y_i - \mu_i|\big)\\
#   &\le \frac{1}{b} \sum_{i=1}^m |\mu_i - \mu'_i| \le \frac{\Delta_1 f}{b} = \varepsilon,
# \end{aligned}
# $$
#
# by the triangle inequality and the definition of sensitivity. The same bound holds with
# $D$ and $D'$ exchanged. Integrating $p_D \le e^{\varepsilon} p_{D'}$ over any set $E$ gives
# {prf:ref}`def-dp`.
# ```
#
# The library implements the theorem in two functions. The scale:
#
# ```{literalinclude} ../src/dpkmeans/privacy/mechanisms.py
# :language: python
# :pyobject: laplace_scale
# :lines: 1, 27-
# ```
#
# and the mechanism, which records the draw in a privacy ledger ({numref}`chapter %s
# <ch-composition>`) *before* drawing:
#
# ```{literalinclude} ../src/dpkmeans/privacy/mechanisms.py
# :language: python
# :pyobject: laplace_mechanism
# :lines: 1-13, 80-
# ```
#
# By default the noise is drawn *exactly*: the value is rounded to a fine public grid (a power
# of two, about $2^{-30}$ of the sensitivity) and an integer number of grid steps is added,
# drawn from the discrete Laplace distribution with only integer arithmetic.
# {numref}`Chapter %s <ch-auditing>` shows why textbook floating-point Laplace noise leaks and how
# this closes the hole; for the reasoning of this chapter the two are indistinguishable, and
# the rounding only ever adds noise (by a few parts in a billion).
#
# ### Checking the theorem from samples
#
# Take a counting query ("how many records have income over 50K?"): adding or removing one
# record changes it by at most one, so $\Delta_1 f = 1$. Suppose $f(D) = 412$ and
# $f(D') = 413$. We draw many outputs of $M(D)$ and $M(D')$, histogram them, and estimate the
# privacy loss bin by bin as the log ratio of the two histograms. A point estimate from a
# finite sample is noisy, and it can land a little above $\varepsilon$ by chance; so we also
# compute simultaneous 99.9% Clopper-Pearson confidence intervals for every bin, and from them
# a *lower confidence bound* on the largest privacy loss. The theorem says that bound cannot
# exceed $\varepsilon$.

# %%
count_D, count_Dprime = 412.0, 413.0
out_D = laplace_mechanism(count_D, 1.0, EPSILON, rng, ledger=None, repeats=N_SAMPLES)
out_Dprime = laplace_mechanism(count_Dprime, 1.0, EPSILON, rng, ledger=None,
                               repeats=N_SAMPLES)

edges = np.linspace(count_D - 6 / EPSILON, count_Dprime + 6 / EPSILON, 61)
loss = estimate_log_ratios(out_D, out_Dprime, edges, min_count=100)
exact = laplace_privacy_loss(loss.centres, count_D, count_Dprime,
                             laplace_scale(1.0, EPSILON))
estimate, lower = loss.max_abs_estimate(), loss.epsilon_lower_bound()
print(f"epsilon = {number(EPSILON)}, {loss.centres.size} bins")
print(f"largest |log ratio|, point estimate:          {estimate:.3f}")
print(f"99.9% lower confidence bound on that maximum: {lower:.3f}")
print(f"largest |exact privacy loss| at bin centres:  {np.max(np.abs(exact)):.3f}")

# %% tags=["remove-cell"]
glue("ch1_max_estimate", round(estimate, 3), display=False)
glue("ch1_lower_bound", round(lower, 3), display=False)
glue("ch1_bins", int(loss.centres.size), display=False)

# %% mystnb={"figure": {"caption": "Left: histograms of the Laplace mechanism's output on neighbouring datasets with true counts 412 and 413 ($\\varepsilon = 1$). Right: the privacy loss estimated from the histograms (dots, with simultaneous 99.9% confidence intervals) against the exact privacy loss (line); the grey band is $[-\\varepsilon, \\varepsilon]$.", "name": "fig-laplace-privacy-loss"}} tags=["hide-input"]
fig, (ax0, ax1) = new_figure(ncols=2, height=3.6)
for i, (sample, label) in enumerate([(out_D, "$M(D)$"), (out_Dprime, "$M(D')$")]):
    style = series_style(i)
    ax0.hist(sample, bins=edges, histtype="step", linewidth=1.6, label=label,
             color=style["color"], linestyle=style["linestyle"])
ax0.set_xlabel("released count")
ax0.set_ylabel("draws per bin")
ax0.legend(loc="upper left")
ax1.axhspan(-EPSILON, EPSILON, color="0.9", label=r"$[-\varepsilon, \varepsilon]$")
grid = np.linspace(edges[0], edges[-1], 400)
ax1.plot(grid, laplace_privacy_loss(grid, count_D, count_Dprime, 1.0 / EPSILON),
         label="exact", **{**series_style(2), "marker": None})
dots = {**series_style(3), "linestyle": "none"}
ax1.errorbar(loss.centres, loss.estimate,
             yerr=[loss.estimate - loss.lower, loss.upper - loss.estimate],
             ms=3, lw=1, label="estimated", **dots)
ax1.set_xlabel("released count $y$")
ax1.set_ylabel(r"$\ln p_D(y) / p_{D'}(y)$")
ax1.legend(loc="upper right")
plt.show()

# %% [markdown]
# Over {glue}`ch1_bins` bins the largest point estimate of the log ratio is
# {glue}`ch1_max_estimate` (sampling noise in the sparse tails), but the lower confidence
# bound is {glue}`ch1_lower_bound`, within $\varepsilon = 1$. The exact loss reaches
# $\pm\varepsilon$ in the tails, where an output is exactly $e^{\varepsilon}$ times as likely
# under one dataset as under the other, and goes no further.
#
# The check is only worth something if it can fail. Here is a *mis-calibrated* mechanism that
# claims $\varepsilon = 1$ but uses half the noise; the same estimate exposes it.

# %%
too_little = 0.5 * laplace_scale(1.0, EPSILON)
bad_D = count_D + rng.laplace(0.0, too_little, N_SAMPLES)
bad_Dprime = count_Dprime + rng.laplace(0.0, too_little, N_SAMPLES)
bad = estimate_log_ratios(bad_D, bad_Dprime, edges, min_count=100)
print(f"claimed epsilon = {number(EPSILON)}, with half the noise")
print(f"99.9% lower confidence bound on the privacy loss: "
      f"{bad.epsilon_lower_bound():.3f}")
assert bad.epsilon_lower_bound() > EPSILON

# %% [markdown]
# The same measurement across privacy levels: for each $\varepsilon$ we release the two counts
# again, estimate the largest privacy loss from the histograms, and plot it against
# $\varepsilon$. For a correct mechanism the lower confidence bound sits on or below the
# diagonal; a mechanism with too little noise would push it above. The point estimate, a
# maximum over many noisy bins, is biased upwards, most visibly at small $\varepsilon$ where
# the two histograms nearly coincide.

# %%
sweep_rows = []
for eps in (0.1, 0.25, 0.5, 1.0, 2.0, 4.0):
    out0 = laplace_mechanism(count_D, 1.0, eps, rng, ledger=None,
                             repeats=N_SAMPLES)
    out1 = laplace_mechanism(count_Dprime, 1.0, eps, rng, ledger=None,
                             repeats=N_SAMPLES)
    sweep_edges = np.linspace(count_D - 6 / eps, count_Dprime + 6 / eps, 61)
    est = estimate_log_ratios(out0, out1, sweep_edges, min_count=100)
    sweep_rows.append({"epsilon": eps, "point estimate": est.max_abs_estimate(),
                       "99.9% lower bound": est.epsilon_lower_bound()})
sweep = pd.DataFrame(sweep_rows)
assert (sweep["99.9% lower bound"] <= sweep["epsilon"]).all()
three_decimals = {c: "{:.3f}".format for c in ("point estimate", "99.9% lower bound")}
table(sweep.rename(columns={"epsilon": "calibrated ε"}), formats=three_decimals,
      name="ch1-epsilon-sweep")

# %% mystnb={"figure": {"caption": "Largest privacy loss observed in samples of the Laplace mechanism (point estimate and 99.9% lower confidence bound) against the $\\varepsilon$ it was calibrated for. The dotted grey line is $y = \\varepsilon$.", "name": "fig-laplace-epsilon-sweep"}} tags=["hide-input"]
fig, ax = new_figure(height=3.6)
ax.plot(sweep["epsilon"], sweep["epsilon"], ":", color="0.4",
        label=r"$y = \varepsilon$")
ax.plot(sweep["epsilon"], sweep["point estimate"], label="point estimate",
        **series_style(0))
ax.plot(sweep["epsilon"], sweep["99.9% lower bound"], label="99.9% lower bound",
        **series_style(1))
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xticks(sweep["epsilon"])
ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
ax.set_xlabel(r"calibrated $\varepsilon$")
ax.set_ylabel("largest observed privacy loss")
ax.legend()
plt.show()

# %% [markdown]
# ## The exponential mechanism
#
# Some outputs are not numbers: a category, a centroid out of a finite candidate set. The
# exponential mechanism {cite}`mcsherry2007mechanism` scores each candidate $z$ with a
# utility $q(D, z)$ whose sensitivity is
# $\Delta q = \max_z \max_{D \simeq D'} |q(D,z) - q(D',z)|$.
#
# ```{prf:theorem} Exponential mechanism
# :label: thm-exponential
#
# The mechanism that outputs $z$ with probability proportional to
# $\exp\big(\varepsilon\, q(D, z) / (2 \Delta q)\big)$ is $\varepsilon$-DP.
# ```
#
# ```{prf:proof}
# For neighbours $D \simeq D'$, the numerator changes by a factor of at most
# $e^{\varepsilon/2}$, since $|q(D,z) - q(D',z)| \le \Delta q$. The normaliser
# $\sum_{z'} \exp(\varepsilon q(D,z')/(2\Delta q))$ changes by at most the same factor, for
# the same reason, term by term. The ratio of probabilities is therefore at most
# $e^{\varepsilon/2} \cdot e^{\varepsilon/2} = e^{\varepsilon}$.
# ```
#
# ```{literalinclude} ../src/dpkmeans/privacy/mechanisms.py
# :language: python
# :pyobject: exponential_probabilities
# :lines: 1-2, 32-
# ```
#
# A numerical check: pick a utility vector, shift every utility by up to $\Delta q = 1$ in the
# worst direction for each candidate, and compare the largest probability ratio with
# $e^{\varepsilon}$.

# %%
utility = np.array([3.0, 1.0, 0.0, 2.5, -1.0])
worst = 0.0
for z in range(utility.size):  # raise candidate z by 1, lower every other one by 1
    shifted = utility - 1.0
    shifted[z] += 2.0
    ratio = (exponential_probabilities(shifted, 1.0, EPSILON)
             / exponential_probabilities(utility, 1.0, EPSILON))
    worst = max(worst, float(np.max(np.abs(np.log(ratio)))))
print(f"largest |log probability ratio| = {worst:.3f} <= epsilon = {number(EPSILON)}")

# %% tags=["remove-cell"]
# the papers whose published method reads its box off the data (the book-wide privacy ledger)
scaled_by_data = [p.title for p in papers_with_flaw(DATA_DERIVED_BOUNDS.name)]
glue("ch1_scaling_count", f"{len(scaled_by_data)} of the {len(papers())}",
     display=False)
glue("ch1_scaling_papers", join_names(scaled_by_data), display=False)

# %% [markdown]
# ## The sensitivity of the DP-Lloyd query
#
# Every algorithm in this book runs some version of one loop (DP-Lloyd,
# {cite}`blum2005sulq,su2016differentially`): with the current centroids *public*, assign
# each record to its nearest centroid, then release the per-cluster statistics
#
# $$f(D) = (S_1, n_1, \dots, S_k, n_k), \qquad S_j = \sum_{x \in C_j} x, \quad n_j = |C_j|,$$
#
# with noise, and set each new centroid to $S'_j / n'_j$. For the noise to be finite the
# records must lie in a **public** box $[\ell, u] \subset \R^d$, given by the user (data
# outside it is clipped). Bounds computed from the data themselves would leak. This
# normalisation flaw is in {glue:text}`ch1_scaling_count` papers that the book reproduces
# ({glue:text}`ch1_scaling_papers`: each min-max scales its data with the data's own minimum
# and maximum), and their chapters fix it.
#
# ```{prf:algorithm} One DP-Lloyd iteration
# :label: alg-dp-lloyd-iteration
#
# **Inputs** records $x_1, \dots, x_N$ clipped to public bounds $[\ell, u]$; public centroids
# $c_1, \dots, c_k$; a budget $\varepsilon_t$.
#
# **Output** new centroids $c'_1, \dots, c'_k$.
#
# 1. Assign every record to its nearest centroid, $a(x) = \argmin_j \lVert x - c_j \rVert_2$.
# 2. For each cluster $j$ compute $S_j = \sum_{a(x) = j} x$ and $n_j = |\{x : a(x) = j\}|$.
# 3. For each cluster $j$, *including empty ones*, release
#    $(S'_j, n'_j) = (S_j, n_j) + \Lap(\Delta_1 / \varepsilon_t)^{d+1}$.
# 4. Set $c'_j = S'_j / \max(n'_j, 1)$, clipped to $[\ell, u]$ (post-processing).
# ```
#
# ```{prf:theorem} Sensitivity of the DP-Lloyd query
# :label: thm-lloyd-sensitivity
#
# Let every record lie in $[\ell, u]$, and let $H = \sum_i \max(|\ell_i|, |u_i|)$ (the largest
# $L_1$ norm of a record) and $W = \sum_i (u_i - \ell_i)$ (the largest $L_1$ distance between
# two records). With the assignment fixed by public centroids:
# 1. Under add/remove, $\Delta_1 f = H + 1$, and one record touches one cluster only. On
#    $[-r, r]^d$ this is $dr + 1$.
# 2. Under replace, $\Delta_1 f = \max(W, 2(H + 1))$, and one record can touch two clusters.
#    On $[-r, r]^d$ this is $2(dr + 1)$.
# ```
#
# ```{prf:proof}
# (1) Adding a record $x$ that the public centroids assign to cluster $j$ changes $S_j$ by $x$
# and $n_j$ by one and leaves every other cluster alone, so
# $\lVert f(D') - f(D)\rVert_1 = \lVert x \rVert_1 + 1 \le H + 1$, with equality at the corner
# of the box farthest from the origin. Removal is symmetric.
# (2) Replacing $x$ by $x'$: if both are assigned to the same cluster, only $S_j$ changes, by
# $\lVert x - x' \rVert_1 \le W$. If $x$ was in cluster $g$ and $x'$ lands in cluster
# $g' \ne g$, then $(S_g, n_g)$ loses $(x, 1)$ and $(S_{g'}, n_{g'})$ gains $(x', 1)$, a
# change of $\lVert x\rVert_1 + \lVert x' \rVert_1 + 2 \le 2(H + 1)$. On $[-r, r]^d$, $H = dr$ and
# $W = 2dr \le 2(dr+1)$.
# ```
#
# ```{literalinclude} ../src/dpkmeans/privacy/sensitivity.py
# :language: python
# :pyobject: lloyd_query_sensitivity
# :lines: 1-4, 51-
# ```
#
# We check the theorem by brute force: random datasets in $[-1, 1]^d$, random public
# centroids, and candidate neighbours that include all the corners of the box. For each
# neighbour we recompute $f$ exactly and record the largest $L_1$ change.

# %%
def largest_change(d: int, k: int, n: int, neighbour: str,
                   gen: np.random.Generator) -> float:
    """Largest ||f(D) - f(D')||_1 over neighbours made of corners of [-1, 1]^d."""
    X = gen.uniform(-1, 1, size=(n, d))
    centroids = gen.uniform(-1, 1, size=(k, d))  # public
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * d)).reshape(d, -1).T
    if neighbour == "add/remove":  # D = X, D' = X plus one corner record
        pairs = [(X, np.vstack([X, z])) for z in corners]
    else:  # D = X plus corner z, D' = X plus corner z2: one record replaced
        pairs = [(np.vstack([X, z]), np.vstack([X, z2]))
                 for z in corners for z2 in corners]
    changes = [lloyd_query(a, centroids) - lloyd_query(b, centroids)
               for a, b in pairs]
    return max(float(np.abs(change).sum()) for change in changes)


rows = []
for d in (1, 2, 3, 5):
    for neighbour in ("add/remove", "replace"):
        bound = lloyd_query_sensitivity((-np.ones(d), np.ones(d)), neighbour).joint
        observed = max(largest_change(d, 3, 40, neighbour, rng) for _ in range(20))
        rows.append({"d": d, "neighbours": neighbour, "bound Δ₁": bound,
                     "largest observed": observed})
sensitivities = pd.DataFrame(rows)
assert (sensitivities["largest observed"] <= sensitivities["bound Δ₁"] + 1e-9).all()
table(sensitivities, name="ch1-lloyd-sensitivity")

# %% [markdown]
# The observed changes never exceed the bound. Under add/remove the bound is met exactly:
# the corner $(1, \dots, 1)$ has the largest norm, wherever it is assigned. Under replace it
# is met when the two corners are opposite *and* fall in different clusters, which random
# public centroids usually allow; where they do not, the observed change stays below.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - $\varepsilon$-DP bounds the privacy loss $\ln p_D(y)/p_{D'}(y)$ by $\varepsilon$, for a
#   stated neighbour relation: add/remove (the default here) or replace.
# - The Laplace mechanism adds $\Lap(\Delta_1 f / \varepsilon)$ noise; its privacy loss, seen
#   in samples, reaches $\pm\varepsilon$ and, once sampling error is accounted for with
#   confidence bounds, never passes it. A mechanism with too little noise is caught by the
#   same measurement.
# - The exponential mechanism picks from a finite set with probabilities
#   $\propto e^{\varepsilon q / (2 \Delta q)}$.
# - One DP-Lloyd iteration releases per-cluster sums and counts. On $[-r, r]^d$ their $L_1$
#   sensitivity is $dr + 1$ under add/remove and $2(dr + 1)$ under replace, where one record can
#   move between two clusters.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch1-loss-by-hand
# :class: pen-and-paper
#
# The Laplace mechanism releases a count ($\Delta_1 f = 1$, scale $b = 1/\varepsilon$) on
# neighbours with $f(D) = 0$ and $f(D') = 1$.
# 1. Write the privacy loss $\mathcal L_{D,D'}(y)$ on each of the three intervals $y \le 0$,
#    $0 < y < 1$ and $y \ge 1$.
# 2. With what probability does an output of $M(D)$ have the largest possible loss,
#    $\varepsilon$?
# ```
#
# ```{solution} ex-ch1-loss-by-hand
# :class: dropdown
#
# The densities are $\frac{1}{2b}e^{-|y|/b}$ and $\frac{1}{2b}e^{-|y-1|/b}$, so
# $\mathcal L_{D,D'}(y) = (|y - 1| - |y|)/b = \varepsilon\,(|y - 1| - |y|)$.
# 1. For $y \le 0$: $|y - 1| - |y| = (1 - y) - (-y) = 1$, so $\mathcal L = \varepsilon$.
#    For $0 < y < 1$: $(1 - y) - y = 1 - 2y$, so $\mathcal L = \varepsilon(1 - 2y)$, falling
#    linearly from $\varepsilon$ to $-\varepsilon$. For $y \ge 1$: $(y - 1) - y = -1$, so
#    $\mathcal L = -\varepsilon$.
# 2. The loss equals $\varepsilon$ exactly when $y \le 0$. Under $D$ the output is Laplace
#    noise centred at $0$, which is symmetric, so $\Pr[M(D) \le 0] = 1/2$: half of all outputs
#    carry the full loss $\varepsilon$. This is the flat left tail of the exact loss in
#    {numref}`fig-laplace-privacy-loss`: the bound of {prf:ref}`thm-laplace` is attained, not
#    just approached.
# ```
#
# ```{exercise}
# :label: ex-ch1-noisy-mean
#
# A dataset of ages lies in the public range $[0, 120]$ and has a public size $N = 1000$
# (replace adjacency). What is the $L_1$ sensitivity of the mean age? Release it with
# `laplace_mechanism` at $\varepsilon = 0.5$ and state the standard deviation of the noise.
# ```
#
# ```{solution} ex-ch1-noisy-mean
# :class: dropdown
#
# Replacing one age changes the sum by at most $120$ and the mean by at most $120 / N = 0.12$,
# so $\Delta_1 = 0.12$ and the Laplace scale is $b = 0.12 / 0.5 = 0.24$. A Laplace variable
# has standard deviation $\sqrt{2}\, b \approx 0.34$ years. In code:
# `laplace_mechanism(mean_age, 0.12, 0.5, rng, ledger=ledger)` with a ledger created as
# `PrivacyLedger(neighbour="replace")`.
# ```
#
# ```{exercise}
# :label: ex-ch1-unbounded
#
# Why does the DP-Lloyd sensitivity become infinite if the data are not clipped to public
# bounds? And why is it not enough to clip to the minimum and maximum *observed* in the data?
# ```
#
# ```{solution} ex-ch1-unbounded
# :class: dropdown
#
# Without a bound, an added record can be arbitrarily far from the origin, so $S_j$ can change
# by any amount and no finite Laplace scale bounds the privacy loss. Clipping to the observed
# minimum and maximum makes the bounds themselves a function of the data: a neighbour with a
# more extreme record changes the bounds, hence every clipped or rescaled record, and the
# change in $f$ is no longer bounded by $H + 1$. The bounds must be public (or bought with
# budget, e.g. by a private quantile).
# ```
#
# ```{exercise}
# :label: ex-ch1-replace-two
# :class: pen-and-paper
#
# Under replace adjacency, a mechanism that adds $\Lap((dr+1)/\varepsilon)$ noise to each
# cluster's $(S_j, n_j)$ is not $\varepsilon$-DP. What guarantee does it have, and what two
# fixes restore $\varepsilon$?
# ```
#
# ```{solution} ex-ch1-replace-two
# :class: dropdown
#
# A replaced record can change two clusters by $dr + 1$ each, so the joint sensitivity is
# $2(dr+1)$ and the mechanism is $2\varepsilon$-DP. Either double the noise scale to
# $2(dr+1)/\varepsilon$, or give each cluster's release half the budget. The function
# `lloyd_query_sensitivity(bounds, "replace").joint` returns $2(dr+1)$.
# ```
