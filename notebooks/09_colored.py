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
# # Colored Gaussian noise for centroids
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - derive the privacy loss of a release $y = f(X) + w$ with *correlated* Gaussian noise
#   $w \sim \mathcal N(0, \Sigma)$, and calibrate it exactly for probabilistic DP with
#   $\gamma^*(\varepsilon, \delta)$;
# - say where the authors' constant $\gamma_c = \varepsilon^2 / (2 \ln(2/\delta))$ stops being
#   conservative, and why multiplying $\varepsilon$ by $Kd$ puts it there;
# - explain why the paper's "possible $\Delta$'s" are a *local* sensitivity, and why noise
#   fitted to them is not differentially private;
# - write the optimal-covariance problem as a semidefinite program, read its KKT conditions,
#   and show with numbers that the paper's Lemma 5 picks the wrong active set;
# - derive the optimal covariance of the corrected mechanism (colored noise on DP-Lloyd's
#   statistics over a public box) in closed form, and compute what it gains over white noise.
# :::
#
# Ravi, Scaglione and Peisert {cite}`ravi2021colored` (seed 002) publish the centroids of
# k-means with Gaussian noise whose covariance is not a multiple of the identity. The noise is
# *colored*: it is shaped to the directions in which the centroids can actually change. They
# cluster the data without privacy and then add noise once, to the $K$ converged centroids
# stacked as one vector of $\mathbb R^{Kd}$ ("the proposed method is not iterative"). The
# covariance minimises the expected squared error, $\operatorname{tr}\Sigma$, under one
# privacy constraint for each "possible $\Delta$", the change of the centroid vector when a
# record is removed. The paper reports that this noise beats white Gaussian noise and the
# high-dimensional method of Balcan et al. {cite}`balcan2017differentially`.
#
# :::{admonition} Where the formulas come from
# :class: note
# The paper's equations did not survive in the copy available to us: the prose, the theorem
# and lemma statements and the equation numbers (1)-(22) did, the mathematics did not. The
# formulas of this chapter are the reconstruction of reference §6 (`algorithms.md`): the math
# that matches the surviving prose, cross-checked against the authors' code (CEDS), whose
# docstrings cite "eq. 11", "eq. 13" and "eq. 22". Where the chapter says "the paper's
# Lemma 5", it means that statement, quoted, with its symbols filled in by the reconstruction.
# :::
#
# The chapter finds three things wrong, one of which is fatal. The set of $\Delta$'s is
# computed from the private data itself, so it is a local sensitivity, and the mechanism is not
# DP whatever its constraints say. The lemma that gives the optimal covariance picks the
# smallest $\Delta$'s as the binding constraints where the largest bind. The closed form the
# authors coded violates nearly all of its own constraints, by factors of thousands. The fix
# keeps the idea, colored noise shaped by an optimal covariance, and applies it where the set
# of $\Delta$'s is public: to DP-Lloyd's per-cluster statistics over the public box. There the
# optimum has a closed form, and its gain over white noise is modest, and zero on a cube. The
# book implements the method twice (`dpkmeans.papers.colored.variants`):
#
# | | as published (CEDS, reference §6.6) | corrected (reference §6.9) |
# |---|---|---|
# | query | the $K$ converged centroids, once (output perturbation) | each DP-Lloyd iteration's centred $(S_j, n_j)$, every cluster |
# | initial centres | k-means++ on the private records (a leak) | sphere packing (public) |
# | iterations | exact Lloyd to convergence, at most 300, without noise (a leak) | $T = 5$ noisy iterations, $\varepsilon/T$ and $\delta/T$ each |
# | set of $\Delta$'s | leave-one-out shifts of *this* dataset's centroids, labels frozen: local | any record of the public box added or removed: global |
# | covariance | CEDS's closed form of Lemma 5 (violates its constraints) | the box optimum $\operatorname{diag}(r_1, \dots, r_d, 1)(\sum_i r_i + 1)/\gamma$ |
# | calibration | $\gamma_c(\varepsilon K d, \delta) = (\varepsilon K d)^2 / (2 \ln(2/\delta))$ | the engine's Gaussian calibration of the whitened release at $(\varepsilon/T, \delta/T)$ |
# | privacy | none: no $(\varepsilon, \delta)$ holds | $(\varepsilon, \delta)$-DP |
# | configuration | `variants.as_published(K, eps, delta, bounds)` | `variants.corrected(K, eps, delta, bounds)`; `variants.white(...)` is its white twin |
#
# The chapter's code runs from the fast defaults in the next cell (tagged `parameters`).

# %% tags=["parameters"]
SEED = 2026  # every random draw below comes from this seed
EPSILON = 1.0  # the (epsilon, delta) of the examples
DELTA = 1e-5
N_RECORDS = 200  # records of each example dataset
K = 3  # clusters of the examples
DIM = 3  # attributes of the examples (the centroid vector has K * DIM coordinates)
TABLE_DATASETS = 3  # seeded example datasets in the violation table
MC_DRAWS = 200_000  # Monte-Carlo draws of the privacy-loss check
MC_DELTA = 0.01  # the tail of that check (large, so that the event is frequent enough to count)
FIGURE_DELTAS = (1e-2, 1e-5, 1e-8)  # the deltas of the gamma_c / gamma* figure
BOX_HALF_WIDTHS = (1.0, 0.5, 0.1)  # the uneven public box of the engine demonstration
REPLICAS = 20  # replicas of each engine run
FIGURE_DELTA = 1e-5  # the delta of the reproduction's figures
AUDIT_TRIALS = 300  # replicas per dataset of the chapter's live audit (committed: 1000)
AUDIT_GROUP_SIZE = 500  # records in each ring of the audit dataset
RESULTS = "../data/results/colored.csv"  # notebooks/sweeps/colored.yaml writes it
CLAIMS_FILE = "../data/results/colored_claims.csv"  # python -m dpkmeans.papers.colored.claims
AUDIT_FILE = "../data/results/colored_audit.csv"  # python -m dpkmeans.papers.colored.audit
TIMING = "../benchmarks/colored_reproduction.json"  # python -m benchmarks.colored_reproduction
SDP_BENCHMARK = "../benchmarks/colored_sdp.json"  # python -m benchmarks.colored_sdp

# %%
import json
import re
from itertools import count
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from myst_nb import glue
from scipy import stats
from scipy.optimize import brentq, nnls

from dpkmeans import colored
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine import run
from dpkmeans.init import kmeans_plusplus
from dpkmeans.lloyd import lloyd_reference
from dpkmeans.papers.colored import claims as co_claims
from dpkmeans.papers.colored import variants
from dpkmeans.papers.colored.audit import run_audits
from dpkmeans.papers.colored.study import DP_LLOYD, ONE_SHOT
from dpkmeans.plotting import PALETTE, new_figure, plot_curves, use_book_style

use_book_style()
next_seed = count(SEED).__next__  # every experiment gets its own seed: SEED, SEED + 1, ...
GAMMA = colored.gamma_pdp(EPSILON, DELTA)  # gamma*(eps, delta), defined below
table_format = {"float_format": lambda v: f"{v:.4g}", "index": False}

# %% [markdown]
# ## Probabilistic DP, recalled
#
# The query is $f(X) = \operatorname{vec}(c_1, \dots, c_K) \in \mathbb R^{Kd}$, the centroids
# of the (non-private) k-means solution of the records $X = \{x_n\}_{n \in [N]} \subset
# \mathbb R^d$. Neighbours differ by one record; the paper removes one ($X'$ "is missing one
# feature vector relative to $X$"). The mechanism is $y = f(X) + w$ with $w \sim \mathcal N(0,
# \Sigma)$, $\Sigma \succ 0$; the paper writes it with the precision $\Psi = \Sigma^{-1}$.
#
# The paper's "privacy leakage function" (eq. 1) is the privacy-loss variable of chapter 2,
# $\mathcal L_{X,X'}(y) = \ln p(y \mid X) / p(y \mid X')$, and its privacy definition (eq. 2)
# is probabilistic DP, {prf:ref}`def-pdp`: $\Pr_{y \sim M(X)}[|\mathcal L_{X, X'}(y)| >
# \varepsilon] \le \delta$ for all neighbours. Its Theorem 2 ("PDP implies DP") is
# {prf:ref}`thm-pdp-implies-dp`. Both are correct, and PDP is the stronger of the two, so a
# mechanism that meets the paper's definition is $(\varepsilon, \delta)$-DP. What remains to
# check is whether the mechanism meets the definition.
#
# ## The privacy loss of a colored Gaussian release
#
# ```{prf:lemma} Privacy loss of colored Gaussian noise
# :label: lem-colored-loss
#
# Let $M(X) = f(X) + w$ with $w \sim \mathcal N(0, \Sigma)$, $\Sigma \succ 0$ fixed, let
# $X \simeq X'$ with $\Delta = f(X) - f(X')$, and put $s^2 = \Delta^\top \Sigma^{-1} \Delta$.
# If $y \sim M(X)$, then $\mathcal L_{X, X'}(y) \sim \mathcal N(s^2/2, s^2)$.
# ```
#
# ```{prf:proof}
# Write $\Psi = \Sigma^{-1}$, $\mu = f(X)$, $\mu' = f(X') = \mu - \Delta$ and $y = \mu + w$.
# The Gaussian densities share their normalising constant (the same $\Sigma$ under both
# hypotheses), so
#
# $$\mathcal L = \tfrac12\big[(y - \mu')^\top \Psi (y - \mu') - (y - \mu)^\top \Psi (y - \mu)\big]
#   = \tfrac12\big[(w + \Delta)^\top \Psi (w + \Delta) - w^\top \Psi w\big]
#   = \Delta^\top \Psi w + \tfrac12 \Delta^\top \Psi \Delta .$$
#
# $\Delta^\top \Psi w$ is a linear function of a Gaussian vector, hence Gaussian, with mean 0
# and variance $\Delta^\top \Psi \Sigma \Psi \Delta = \Delta^\top \Psi \Delta = s^2$. (Equivalently:
# $\Sigma^{-1/2}$ whitens the noise, and {prf:ref}`lem-gaussian-loss` applies to the whitened
# change $\Sigma^{-1/2}\Delta$, whose length is $s$, with $\sigma = 1$.)
# ```
#
# Only one number of the pair matters, $s^2$, the squared length of $\Delta$ in the metric of
# the precision. White noise is the case $\Sigma = \sigma^2 I$, $s = \lVert \Delta \rVert /
# \sigma$. The lemma needs the *same* $\Sigma$ under $X$ and $X'$; we come back to that. A
# check by simulation: a random covariance and change in $\mathbb R^{Kd}$, scaled so that the
# tail $\Pr[|\mathcal L| > \varepsilon]$ is `MC_DELTA`; noise drawn with
# `colored.draw_colored`; the loss computed from the two Gaussian log-densities (scipy), not
# from the formula of the lemma; the tail compared with `colored.pdp_tail`.

# %%
rng = np.random.default_rng(next_seed())
m = K * DIM
Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
Sigma_mc = (Q * np.geomspace(0.1, 3.0, m)) @ Q.T  # a covariance with condition number 30
Delta_mc = rng.standard_normal(m)
s2_target = colored.gamma_pdp(EPSILON, MC_DELTA)  # the s^2 whose tail is MC_DELTA
Delta_mc *= np.sqrt(s2_target / (Delta_mc @ np.linalg.solve(Sigma_mc, Delta_mc)))
s2_mc = float(Delta_mc @ np.linalg.solve(Sigma_mc, Delta_mc))
mu = rng.normal(0.0, 2.0, m)  # f(X); f(X') = mu - Delta
y = mu + colored.draw_colored(Sigma_mc, rng, size=MC_DRAWS)
loss = (stats.multivariate_normal.logpdf(y, mu, Sigma_mc)
        - stats.multivariate_normal.logpdf(y, mu - Delta_mc, Sigma_mc))
tail_hat = float(np.mean(np.abs(loss) > EPSILON))
tail_se = np.sqrt(MC_DELTA * (1 - MC_DELTA) / MC_DRAWS)
print(f"s^2 = {s2_mc:.4f}")
print(f"mean of L: simulated {loss.mean():.4f}, lemma s^2/2 = {s2_mc / 2:.4f}")
print(f"variance of L: simulated {loss.var():.4f}, lemma s^2 = {s2_mc:.4f}")
print(f"P[|L| > {EPSILON:g}]: simulated {tail_hat:.5f} (standard error {tail_se:.5f}), "
      f"pdp_tail {colored.pdp_tail(EPSILON, s2_mc):.5f}")
glue("ch9_mc_draws", f"{MC_DRAWS:,}", display=False)
glue("ch9_mc_z", f"{abs(tail_hat - MC_DELTA) / tail_se:.1f}", display=False)

# %% mystnb={"figure": {"caption": "The privacy loss of a colored Gaussian release, simulated (histogram) and as the lemma says, N(s^2/2, s^2) (line). The dashed lines are -epsilon and epsilon: the mass outside them is the PDP tail.", "name": "fig-colored-loss"}} tags=["hide-input"]
fig, ax = new_figure()
ax.hist(loss, bins=120, density=True, color=PALETTE[0], alpha=0.6, label="simulated")
grid = np.linspace(loss.min(), loss.max(), 400)
ax.plot(grid, stats.norm.pdf(grid, s2_mc / 2, np.sqrt(s2_mc)), color="black",
        label=r"$\mathcal{N}(s^2/2, s^2)$")
for e in (-EPSILON, EPSILON):
    ax.axvline(e, color=PALETTE[3], linestyle="--")
ax.set(xlabel=r"privacy loss $\mathcal{L}$", ylabel="density")
ax.legend()
plt.show()

# %% [markdown]
# Mean, variance and tail agree with the lemma; the simulated tail is
# {glue:text}`ch9_mc_z` standard errors from `pdp_tail` ({glue:text}`ch9_mc_draws` draws).
#
# ## Calibration: $\gamma^*$ and the authors' $\gamma_c$
#
# By {prf:ref}`lem-colored-loss`, the tail of one neighbour pair is
#
# $$\Pr\big[|\mathcal L| > \varepsilon\big] = Q\Big(\frac{\varepsilon - s^2/2}{s}\Big)
#   + Q\Big(\frac{\varepsilon + s^2/2}{s}\Big), \qquad Q = 1 - \Phi, \tag{eq. 9}$$
#
# a function of $s^2$ alone (`colored.pdp_tail`).
#
# ```{prf:lemma} The tail grows with $s$
# :label: lem-tail-monotone
#
# For $\varepsilon > 0$ the tail (eq. 9) increases strictly in $s > 0$, from 0 (as $s \to 0$)
# to 1 (as $s \to \infty$). So for $\delta \in (0, 1)$ there is exactly one
# $\gamma^*(\varepsilon, \delta)$ with tail $\delta$ at $s^2 = \gamma^*$, and the tail is at
# most $\delta$ if and only if $s^2 \le \gamma^*(\varepsilon, \delta)$.
# ```
#
# ```{prf:proof}
# Put $a = \varepsilon/s - s/2$ and $b = \varepsilon/s + s/2$; the tail is $Q(a) + Q(b)$. Then
# $a' = -\varepsilon/s^2 - 1/2$, $b' = -\varepsilon/s^2 + 1/2$, and $b^2 - a^2 = (b - a)(b + a)
# = 2\varepsilon$, so $\varphi(b) = e^{-\varepsilon}\varphi(a)$ ($\varphi$ the normal density).
# The derivative is
#
# $$-\varphi(a) a' - \varphi(b) b' = \varphi(a)\Big[\frac{\varepsilon}{s^2}\big(1 + e^{-\varepsilon}\big)
#   + \frac12\big(1 - e^{-\varepsilon}\big)\Big] > 0 .$$
#
# As $s \to 0$, $a, b \to +\infty$ and the tail tends to 0; as $s \to \infty$, $a \to -\infty$
# and $Q(a) \to 1$, $Q(b) \to 0$. The tail is continuous, so the intermediate value theorem
# gives the root, and monotonicity its uniqueness and the equivalence.
# ```
#
# `colored.gamma_pdp` computes $\gamma^*$ as $1/\sigma^2$ of chapter 2's exact PDP calibration
# at sensitivity 1, which is this root. With it the paper's Theorem 4 becomes exact:
#
# ```{prf:theorem} The colored mechanism (paper's Theorem 4, made exact)
# :label: thm-colored-pdp
#
# Let $\Sigma \succ 0$ be fixed, independent of the data, and let $\mathcal D = \{f(X) - f(X')
# : X \simeq X'\}$ be the set of all changes between neighbours. Then $y = f(X) + w$, $w \sim
# \mathcal N(0, \Sigma)$, is $(\varepsilon, \delta)$-PDP if and only if
#
# $$\Delta^\top \Sigma^{-1} \Delta \le \gamma^*(\varepsilon, \delta) \quad \text{for every } \Delta \in \mathcal D,$$
#
# and then it is $(\varepsilon, \delta)$-DP.
# ```
#
# ```{prf:proof}
# For an ordered pair $(X, X')$ the tail is $\Pr[|\mathcal L| > \varepsilon]$ at $s^2 =
# \Delta^\top\Sigma^{-1}\Delta$ ({prf:ref}`lem-colored-loss`); the pair $(X', X)$ has $-\Delta$ and
# the same $s^2$. By {prf:ref}`lem-tail-monotone` every pair's tail is at most $\delta$ if and
# only if every $s^2$ is at most $\gamma^*$: that is {prf:ref}`def-pdp`.
# {prf:ref}`thm-pdp-implies-dp` gives DP.
# ```
#
# The authors' code does not use $\gamma^*$. It uses
# $\gamma_c = \varepsilon^2 / (2 \ln(2/\delta))$ (`colored.gamma_ceds`), the Chernoff bound
# $\Pr[|\mathcal N(0, s^2)| > \varepsilon] \le 2 e^{-\varepsilon^2 / 2s^2}$ applied to the loss
# *without its mean* $s^2/2$. For small $\varepsilon$ the mean is negligible and the slack of
# the Chernoff bound makes $\gamma_c$ conservative. For large $\varepsilon$ the mean wins. At
# $s^2 = \gamma_c$ the larger term of the tail is $Q(\sqrt c - \varepsilon/(2\sqrt c))$ with
# $c = 2\ln(2/\delta)$, whose argument falls as $\varepsilon$ grows and reaches 0 at
# $\varepsilon = 2c = 4 \ln(2/\delta)$. There the mean of the loss *is* $\varepsilon$, and the
# tail is at least $1/2$ whatever $\delta$ was asked for.

# %%
rows = []
for eps in (0.1, 1.0, 2.0, 5.0, 10.0, 20.0):
    g_star, g_c = colored.gamma_pdp(eps, DELTA), colored.gamma_ceds(eps, DELTA)
    rows.append({"epsilon": eps, "gamma*": g_star, "gamma_c": g_c, "gamma_c / gamma*": g_c / g_star,
                 "tail at gamma_c": colored.pdp_tail(eps, g_c),
                 "tail at gamma_c / delta": colored.pdp_tail(eps, g_c) / DELTA})
print(f"delta = {DELTA:g}")
print(pd.DataFrame(rows).to_string(**table_format))
fails = {dlt: colored.ceds_gamma_fails_from(dlt) for dlt in FIGURE_DELTAS}
for dlt, eps_fail in fails.items():
    print(f"delta = {dlt:g}: gamma_c is anti-conservative from epsilon = {eps_fail:.3f}; "
          f"the tail reaches 1/2 at epsilon = 4 ln(2/delta) = {4 * np.log(2 / dlt):.1f}")
glue("ch9_fail_delta", f"{fails[DELTA]:.2f}" if DELTA in fails else
     f"{colored.ceds_gamma_fails_from(DELTA):.2f}", display=False)
glue("ch9_fail_range", f"{min(fails.values()):.1f} to {max(fails.values()):.1f}", display=False)
glue("ch9_gamma_star", f"{GAMMA:.4f}", display=False)
glue("ch9_gamma_c", f"{colored.gamma_ceds(EPSILON, DELTA):.4f}", display=False)

# %% mystnb={"figure": {"caption": "The authors' gamma_c over the exact gamma* (the largest s^2 that is (epsilon, delta)-PDP). Above 1 (the grey line) gamma_c allows more than the guarantee permits; the dots mark where that starts (colored.ceds_gamma_fails_from).", "name": "fig-colored-gamma"}} tags=["hide-input"]
eps_grid = np.geomspace(0.01, 100.0, 160)
fig, ax = new_figure()
for colour, dlt in zip(PALETTE, FIGURE_DELTAS):
    ratio = [colored.gamma_ceds(e, dlt) / colored.gamma_pdp(e, dlt) for e in eps_grid]
    ax.plot(eps_grid, ratio, color=colour, label=rf"$\delta = 10^{{{int(np.log10(dlt))}}}$")
    ax.plot([fails[dlt]], [1.0], "o", color=colour)
ax.axhline(1.0, color="grey", linewidth=1)
ax.set(xscale="log", yscale="log", xlabel=r"$\varepsilon$ (as given to $\gamma$)",
       ylabel=r"$\gamma_c / \gamma^*$")
ax.legend()
plt.show()

# %% [markdown]
# At $\varepsilon = 1$, $\delta = 10^{-5}$ the authors' constant is slightly conservative
# ($\gamma_c$ = {glue:text}`ch9_gamma_c` against $\gamma^*$ = {glue:text}`ch9_gamma_star`), and
# it stays so up to $\varepsilon \approx$ {glue:text}`ch9_fail_delta`. Past that point
# ({glue:text}`ch9_fail_range` for the three $\delta$'s of the figure) it is anti-conservative.
# That would be a footnote, except that CEDS does not call it with the user's $\varepsilon$:
# it computes `dp_epsilon * n_clusters * n_features`, so the $\gamma$ of a release is
# $\gamma_c(\varepsilon K d, \delta)$. With $K = 4$ and the 28 attributes of the Marketing data
# (the book's encoding), CEDS's default $\varepsilon = 0.1$ becomes $11.2$:

# %%
settings = [("CEDS defaults, Marketing", 0.1, 0.1, 4, 28),
            ("CEDS README, Marketing", 0.1, 1e-5, 4, 28),
            ("this chapter's examples", EPSILON, DELTA, K, DIM),
            ("Marketing at eps = 1", 1.0, 1e-5, 4, 28)]
rows = []
for name, eps, dlt, k, d in settings:
    g_used = colored.gamma_ceds(eps * k * d, dlt)
    rows.append({"setting": name, "epsilon": eps, "delta": dlt, "eps K d": eps * k * d,
                 "gamma used / gamma*(eps, delta)": g_used / colored.gamma_pdp(eps, dlt),
                 "P[|L| > eps K d]": colored.pdp_tail(eps * k * d, g_used),
                 "P[|L| > eps]": colored.pdp_tail(eps, g_used)})
ceds_settings = pd.DataFrame(rows)
print(ceds_settings.to_string(**table_format))
glue("ch9_default_tail", f"{ceds_settings['P[|L| > eps K d]'].iloc[0]:.2f}", display=False)
glue("ch9_default_factor", f"{ceds_settings['gamma used / gamma*(eps, delta)'].iloc[0]:,.0f}",
     display=False)

# %% [markdown]
# With CEDS's defaults ($\varepsilon = 0.1$, $\delta = 0.1$) a neighbour pair at the
# constraint has $\Pr[|\mathcal L| > 11.2]$ = {glue:text}`ch9_default_tail`: even the
# inflated $\varepsilon$ does not hold with the stated $\delta$. Measured against the
# $\varepsilon$ the user asked for, the constraint allows an $s^2$ that is
# {glue:text}`ch9_default_factor` times $\gamma^*(0.1, 0.1)$, and the loss exceeds
# $\varepsilon$ almost surely (last column). The engine's as-published configuration charges
# $\varepsilon K d$ in its ledger (the budget that $\gamma$ buys, flaw `epsilon-times-Kd`), and
# the book calibrates every corrected release with the exact $\gamma^*$ or the engine's own
# Gaussian calibration.
#
# ## The paper's "possible $\Delta$'s" are a local sensitivity
#
# {prf:ref}`thm-colored-pdp` needs every $\Delta \in \mathcal D$: all changes of $f$ between
# *any* two neighbouring datasets. The paper's Lemma 5 takes "all possible $\Delta$" to be the
# columns of a matrix $\mathbf D$, and CEDS builds them from the dataset at hand (reference
# §6.5): remove record $n$, keep every label, and recompute its cluster's mean,
#
# $$\Delta_n = f(X) - f(X \setminus \{x_n\}) = e_{k(n)} \otimes \frac{x_n - c_{k(n)}}{|C_{k(n)}| - 1}
#   \in \mathbb R^{Kd}, \qquad n = 1, \dots, N,$$
#
# (`colored.leave_one_out_deltas`; `variants.local_deltas` labels the records first). The
# examples of this chapter are seeded Gaussian mixtures ({glue:text}`ch9_n` records, $K$ =
# {glue:text}`ch9_k`, $d$ = {glue:text}`ch9_d`), clustered as CEDS does: k-means++ on the
# records, then Lloyd without noise until nothing moves. One row of $\mathbf D$, checked by
# removing the record and recomputing the means:

# %%
def example(seed: int):
    """A seeded mixture clustered without privacy as CEDS does (k-means++ on the records, Lloyd
    to convergence); returns the dataset, records, labels, centroids and leave-one-out Delta's."""
    gen = np.random.default_rng(seed)
    ds = gaussian_mixture_dataset(N_RECORDS, K, DIM, rng=gen, separation=4.0)
    X = np.asarray(ds.X, dtype=float)
    C = lloyd_reference(X, kmeans_plusplus(X, K, gen), 100)
    labels, D = variants.local_deltas(X, C)
    C = np.stack([X[labels == k].mean(axis=0) for k in range(K)])
    return ds, X, labels, C, D


ds, X, labels, C, D = example(next_seed())
n = int(np.argmax(np.linalg.norm(D, axis=1)))  # the record whose removal moves most
keep = np.arange(len(X)) != n
C_without = np.stack([X[keep & (labels == k)].mean(axis=0) for k in range(K)])
print(f"cluster sizes {np.bincount(labels, minlength=K).tolist()}; D has shape {D.shape}")
print(f"record {n}: |Delta_n - (f(X) - f(X without x_n))| = "
      f"{np.abs(D[n] - (C - C_without).ravel()).max():.1e}")
glue("ch9_n", N_RECORDS, display=False)
glue("ch9_k", K, display=False)
glue("ch9_d", DIM, display=False)

# %% [markdown]
# These $N$ vectors are not $\mathcal D$. They are the changes that *this* dataset undergoes
# when one of *its* records leaves, under *its* clustering: a **local** sensitivity. Three
# things separate them from what {prf:ref}`thm-colored-pdp` needs.
#
# 1. **The covariance depends on the data.** $\Sigma$ is computed from $\mathbf D(X)$, and
#    the neighbour $X'$ gets $\Sigma(X') \ne \Sigma(X)$. The two output distributions differ in
#    their covariance, not only in their mean, so {prf:ref}`lem-colored-loss` does not apply.
#    Noise scaled to a local sensitivity is the textbook example of a mechanism that is not DP
#    {cite}`nissim2007smooth`: the scale itself reveals the data. Smooth sensitivity or
#    propose-test-release are the known repairs.
# 2. **Added records are not covered.** A neighbour may also have one record *more*, anywhere
#    in the domain (the relation is symmetric: $X$ is $X \cup \{x^*\}$ with a record
#    removed, and the guarantee must hold for that pair too). Such a record $x^*$ moves its
#    cluster's mean by $(x^* - c_k)/(|C_k| + 1)$, which can be far larger than every
#    leave-one-out shift.
# 3. **The labels are frozen.** Removing a record can change the k-means partition, and then
#    every centroid moves (exercise {ref}`ex-colored-labels`). The global sensitivity of
#    "the centroids of converged k-means" is of the order of the domain's diameter.
#
# Numbers for the first two, on the example. Here $\Sigma$ is the optimal covariance of the
# paper's own problem (eq. 11, solved exactly below), computed on $X$ and on $X$ without the
# record that moves most, re-clustered by Lloyd from the centroids of $X$:

# %%
sol = colored.optimal_covariance(D, GAMMA, blocks=K)
X_minus = X[keep]
C_minus = lloyd_reference(X_minus, C, 100)
_, D_minus = variants.local_deltas(X_minus, C_minus)
sol_minus = colored.optimal_covariance(D_minus, GAMMA, blocks=K)
moved = np.linalg.norm(sol.covariance - sol_minus.covariance) / np.linalg.norm(sol.covariance)
print(f"Sigma(X) vs Sigma(X'): relative change {moved:.3f} (Frobenius); traces "
      f"{np.trace(sol.covariance):.4f} and {np.trace(sol_minus.covariance):.4f}")

upper = ds.bounds[:, 1]  # a corner of the public box (the generator's bounds)
k_star = int(np.argmin(np.linalg.norm(C - upper, axis=1)))
n_k = int(np.sum(labels == k_star))
Delta_add = np.zeros((K, DIM))
Delta_add[k_star] = (C[k_star] - upper) / (n_k + 1)  # f(X) - f(X + x*), labels frozen
add_check = colored.constraint_check(Delta_add.reshape(1, -1), sol.covariance, GAMMA)
print(f"adding a record at the box corner {np.round(upper, 2).tolist()}: "
      f"s^2 / gamma* = {add_check.worst:.2f}, tail {add_check.worst_tail(EPSILON):.2e} "
      f"(target delta {DELTA:g})")
glue("ch9_sigma_moved", f"{100 * moved:.0f}%", display=False)
glue("ch9_add_ratio", f"{add_check.worst:.1f}", display=False)
glue("ch9_add_tail", f"{add_check.worst_tail(EPSILON):.1e}", display=False)

# %% [markdown]
# Removing one record changes the optimal covariance by {glue:text}`ch9_sigma_moved` (relative
# Frobenius norm), and a single added record at a corner of the public box has $s^2$ =
# {glue:text}`ch9_add_ratio` $\gamma^*$: even with $\Sigma$ held fixed, a tail of
# {glue:text}`ch9_add_tail` where $10^{-5}$ was promised. This is flaw 2-1 of reference §6.8,
# and it alone makes the published mechanism not DP for any $(\varepsilon, \delta)$; the
# engine's as-published configuration records it as a leak (`local-sensitivity`). The rest of
# this part studies the paper's optimisation on its own terms, because the same problem, with a
# public set of $\Delta$'s, is the corrected mechanism.
#
# ## The optimal covariance and the paper's Lemma 5
#
# Given the $\Delta_n$'s, the paper chooses the covariance of least error that meets every
# constraint of {prf:ref}`thm-colored-pdp` (eq. 11):
#
# $$\min_{\Psi \succ 0}\ \operatorname{tr}(\Psi^{-1}) \quad \text{s.t.} \quad
#   \Delta_n^\top \Psi \Delta_n \le \gamma, \quad n = 1, \dots, N .$$
#
# The objective is convex in $\Psi$ and the constraints are linear, so this is a convex
# problem. Its Lagrangian is $\operatorname{tr}(\Psi^{-1}) + \sum_n \lambda_n
# (\Delta_n^\top \Psi \Delta_n - \gamma)$ with $\lambda \ge 0$, and setting its gradient in
# $\Psi$ to zero, $-\Psi^{-2} + \sum_n \lambda_n \Delta_n \Delta_n^\top = 0$, gives the
# optimum's form (eq. 13/17):
#
# $$\Sigma^\star = (\Psi^\star)^{-1} = R(\lambda^\star)^{1/2}, \qquad
#   R(\lambda) = \sum_n \lambda_n \Delta_n \Delta_n^\top = \mathbf D \operatorname{diag}(\lambda)\, \mathbf D^\top,$$
#
# where the columns of $\mathbf D$ are the $\Delta_n$'s (the library stores them as rows), with
# complementary slackness: $\lambda_n > 0$ only where the constraint is tight. Putting
# $\Psi = R(\lambda)^{-1/2}$ back into the Lagrangian gives the dual function
# $g(\lambda) = 2 \operatorname{tr} R(\lambda)^{1/2} - \gamma \sum_n \lambda_n$, a lower bound on
# the optimum for every $\lambda \ge 0$. The stationarity condition is in the paper (eq.
# 15-18, as reconstructed), which also notes that an invertible $\Psi^\star$ needs at least
# $Kd$ non-zero multipliers. The paper then states:
#
# ```{prf:lemma} The paper's Lemma 5, as stated (false)
# :label: lem-ravi5-as-stated
#
# Let $\mathbf D$ contain as its columns all possible $\Delta$, and let it have full row rank.
# Let the first $Kd$ columns of $\mathbf D$, forming the set $S$, have the **smallest norms**
# and be linearly independent. Then eq. 11 has a unique solution, and $\lambda^\star$ has only
# $Kd$ non-zero entries, those of the constraints in $S$.
# ```
#
# Its proof argues from the form of $\lambda$ that "the non-zero multipliers (those for which
# the constraint is tight) should be the smallest columns of $\mathbf D$ in terms of
# $\ell_2$-norm". The opposite holds.
#
# ```{prf:proposition} Small $\Delta$'s do not bind
# :label: prop-active-set
#
# (i) If $\Delta_n$ lies in the convex hull of $\{\pm \Delta_m : m \ne n\}$, its constraint is
# implied by the others: it never binds, and removing it does not change the optimum.
# (ii) For any subset $S$ of the constraints, the optimum of eq. 11 restricted to $S$ is at
# most the true optimum, and equal to it only if the restricted solution meets every
# constraint.
# ```
#
# ```{prf:proof}
# (i) $\Delta \mapsto \Delta^\top \Psi \Delta$ is convex, so on a convex hull it is at most
# its largest value at the points that span the hull; those are at most $\gamma$ by the other
# constraints. (ii) Dropping constraints enlarges the feasible set, so the minimum can only
# fall; if the restricted minimiser is feasible for all constraints, it is optimal for the
# full problem.
# ```
#
# A small $\Delta$ sits deep inside the hull of the others, so by (i) its constraint is slack.
# By (ii), every subset of constraints gives a lower bound. Keeping only the smallest
# $\Delta$'s makes the restricted problem as easy as it can be, so its optimum is among the
# *smallest* of these bounds, and its solution breaks the constraints it ignored. The true
# optimum is the *largest* such bound, reached by the tight constraints, which are the
# outermost $\Delta$'s.
#
# The check on the example: the exact optimum of eq. 11 (`colored.optimal_covariance`, next
# section) and the norm ranks of its tight constraints (rank 1 = the smallest $\Delta$).
# Because every $\Delta_n$ changes one centroid, the $Kd$ smallest linearly independent
# $\Delta$'s of Lemma 5 are, for data in general position, the $d$ smallest of each cluster.

# %%
norms = np.linalg.norm(D, axis=1)
rank = np.argsort(np.argsort(norms, kind="stable"), kind="stable") + 1  # 1 = smallest
S = np.concatenate([np.flatnonzero(labels == k)[np.argsort(norms[labels == k])[:DIM]]
                    for k in range(K)])
assert np.linalg.matrix_rank(D[S]) == K * DIM
print(f"the SDP's tight constraints ({sol.active.size} of {len(D)}) at norm ranks "
      f"{np.sort(rank[sol.active]).tolist()}")
print(f"Lemma 5's set S ({S.size} Delta's) at norm ranks {np.sort(rank[S]).tolist()}")

# KKT: Sigma*^2 = sum over the tight constraints of lambda_n Delta_n Delta_n', lambda >= 0
A = sol.active
iu = np.triu_indices(K * DIM)
target = (sol.covariance @ sol.covariance)[iu]
lam, residual = nnls(np.stack([np.outer(D[i], D[i])[iu] for i in A], axis=1), target)
w_R, V_R = np.linalg.eigh((D[A].T * lam) @ D[A])
dual = 2 * np.sum(np.sqrt(np.clip(w_R, 0, None))) - GAMMA * lam.sum()
trace_star = np.trace(sol.covariance)
print(f"KKT: Sigma*^2 = R(lambda) with lambda >= 0 on the tight set, relative residual "
      f"below 1e-4: {residual / np.linalg.norm(target) < 1e-4}; positive multipliers: "
      f"{int(np.sum(lam > 1e-6 * lam.max()))} (Kd = {K * DIM})")
print(f"dual bound g(lambda) = {dual:.5f}, tr Sigma* = {trace_star:.5f}, relative gap below "
      f"1e-6: {abs(trace_star - dual) / trace_star < 1e-6}")
glue("ch9_active_lowest", int(rank[sol.active].min()), display=False)
glue("ch9_active_count", int(sol.active.size), display=False)
glue("ch9_S_highest", int(rank[S].max()), display=False)

# %% [markdown]
# Every tight constraint of the optimum is among the largest $\Delta$'s (the lowest rank is
# {glue:text}`ch9_active_lowest` of {glue:text}`ch9_n`); Lemma 5's set lies at the other end
# (ranks up to {glue:text}`ch9_S_highest`). There are {glue:text}`ch9_active_count` tight
# constraints, not $Kd$, so the lemma's count of non-zero multipliers is wrong too. The
# multipliers that reproduce $\Sigma^{\star 2} = R(\lambda)$ on the tight set are non-negative,
# and the dual bound $g(\lambda)$ equals $\operatorname{tr}\Sigma^\star$: a certificate,
# independent of the solver, that $\Sigma^\star$ is optimal.
#
# How far off are the other covariances? The **violation table** checks each against all $N$
# constraints at $\gamma^*(\varepsilon, \delta)$ (`colored.constraint_check`): white noise on
# the same $\Delta$'s ($\sigma^2 = \max_n \lVert\Delta_n\rVert^2 / \gamma$), the authors'
# closed form (`colored.ceds_covariance`, reference §6.6), the exact optimum of the problem
# restricted to Lemma 5's set $S$, and the exact optimum. The ratios $s^2/\gamma$ do not depend
# on $\gamma$ (every covariance here scales as $1/\gamma$), so the table is the same at
# CEDS's $\gamma_c(\varepsilon K d, \delta)$.

# %%
datasets = {1: (D, labels, sol)}
for i in range(2, TABLE_DATASETS + 1):
    _, _, labels_i, _, D_i = example(next_seed())
    datasets[i] = (D_i, labels_i, colored.optimal_covariance(D_i, GAMMA, blocks=K))
rows = []
for i, (D_i, labels_i, sol_i) in datasets.items():
    norms_i = np.linalg.norm(D_i, axis=1)
    S_i = np.concatenate([np.flatnonzero(labels_i == k)[np.argsort(norms_i[labels_i == k])[:DIM]]
                          for k in range(K)])
    covariances = {"white": colored.white_covariance(D_i, GAMMA),
                   "CEDS closed form": colored.ceds_covariance(D_i, GAMMA),
                   "optimum on Lemma 5's S": colored.optimal_covariance(D_i[S_i], GAMMA,
                                                                        blocks=K).covariance,
                   "optimum (SDP)": sol_i.covariance}
    for name, cov in covariances.items():
        check = colored.constraint_check(D_i, cov, GAMMA)
        rows.append({"dataset": i, "covariance": name, **check.as_row(),
                     "trace / SDP trace": np.trace(cov) / np.trace(sol_i.covariance)})
violations = pd.DataFrame(rows)
print(violations.to_string(**table_format))
ceds_rows = violations[violations["covariance"] == "CEDS closed form"]
white_rows = violations[violations["covariance"] == "white"]
glue("ch9_ceds_fraction", f"{100 * ceds_rows['fraction violated'].min():.1f}% to "
     f"{100 * ceds_rows['fraction violated'].max():.1f}%", display=False)
glue("ch9_ceds_worst", f"{ceds_rows['worst s2/gamma'].min():,.0f} to "
     f"{ceds_rows['worst s2/gamma'].max():,.0f}", display=False)
glue("ch9_ceds_trace", f"{1 / ceds_rows['trace / SDP trace'].max():.0f} to "
     f"{1 / ceds_rows['trace / SDP trace'].min():.0f}", display=False)
lemma_rows = violations[violations["covariance"] == "optimum on Lemma 5's S"]
glue("ch9_S_others", f"{lemma_rows['violated'].min()} to {lemma_rows['violated'].max()} "
     f"of {len(D) - K * DIM}" if lemma_rows['violated'].nunique() > 1
     else f"{lemma_rows['violated'].iloc[0]} of {len(D) - K * DIM}", display=False)
glue("ch9_white_trace", f"{white_rows['trace / SDP trace'].min():.2f} to "
     f"{white_rows['trace / SDP trace'].max():.2f}", display=False)

# CEDS on its own set S: are its constraints there at least tight?
own = colored.constraint_check(D[S], colored.ceds_covariance(D, GAMMA), GAMMA)
print(f"CEDS closed form on its own set S (dataset 1): s^2/gamma from {own.ratios.min():.2f} "
      f"to {own.ratios.max():.2f} (tight would be 1)")
glue("ch9_ceds_own", f"{own.ratios.min():.2f} to {own.ratios.max():.2f}", display=False)

# %% [markdown]
# The authors' closed form violates {glue:text}`ch9_ceds_fraction` of the constraints, the
# worst by a factor {glue:text}`ch9_ceds_worst` in $s^2$; even on the set it was built from, its
# ratios run from {glue:text}`ch9_ceds_own` instead of being 1. Its trace is
# {glue:text}`ch9_ceds_trace` times smaller than the optimum's. That is the apparent gain of
# the colored mechanism in the paper: less noise, bought by breaking the constraints. The
# exact optimum of Lemma 5's set alone is no better: it meets the $Kd$ constraints it was
# given and breaks the others ({glue:text}`ch9_S_others` violated), as
# {prf:ref}`prop-active-set` says. Against white
# noise *on the same $\Delta$'s* the exact optimum's gain is real but modest: white noise's
# trace is {glue:text}`ch9_white_trace` times the optimum's.
#
# ## Solving eq. 11 as a semidefinite program
#
# ```{prf:lemma} Schur complement
# :label: lem-schur
#
# For $\Sigma \succ 0$, $\gamma > 0$ and $\Delta \in \mathbb R^m$:
# $\Delta^\top \Sigma^{-1} \Delta \le \gamma$ if and only if
# $\begin{bmatrix} \Sigma & \Delta \\ \Delta^\top & \gamma \end{bmatrix} \succeq 0$.
# ```
#
# ```{prf:proof}
# With $P = \begin{bmatrix} I & 0 \\ -\Delta^\top \Sigma^{-1} & 1 \end{bmatrix}$ (invertible),
# $P \begin{bmatrix} \Sigma & \Delta \\ \Delta^\top & \gamma \end{bmatrix} P^\top =
# \begin{bmatrix} \Sigma & 0 \\ 0 & \gamma - \Delta^\top\Sigma^{-1}\Delta \end{bmatrix}$, which is
# positive semidefinite if and only if $\gamma - \Delta^\top\Sigma^{-1}\Delta \ge 0$.
# ```
#
# So eq. 11 is the semidefinite program $\min_\Sigma \operatorname{tr}\Sigma$ subject to one
# $(m+1) \times (m+1)$ matrix inequality per $\Delta_n$ (reference §6.9). The library solves an
# equivalent form with one matrix inequality instead of $N$: in the precision, the constraints
# $\Delta_n^\top \Psi \Delta_n \le \gamma$ are linear, and
# $\begin{bmatrix} \Psi & I \\ I & Z \end{bmatrix} \succeq 0$ says $Z \succeq \Psi^{-1}$ (the
# same lemma, blockwise), so minimising $\operatorname{tr} Z$ minimises
# $\operatorname{tr}\Psi^{-1}$. It is written in cvxpy and solved by Clarabel, an
# interior-point solver:
#
# ```{literalinclude} ../src/dpkmeans/colored.py
# :language: python
# :pyobject: _solve_working_set
# ```
#
# Around that solve, `colored.optimal_covariance` does four things the chapter relies on:
#
# - **constraint generation**: it solves on a working set of $\Delta$'s (the largest, and
#   those that the KKT form above predicts to be tight), adds the most violated of the others,
#   and repeats until none is violated;
# - **block split** (`blocks=K`): every leave-one-out $\Delta$ changes one centroid, so a
#   block-diagonal $\Psi$ is optimal and the problem splits into $K$ problems of size $d$;
# - **span**: directions that no $\Delta$ reaches need no noise, so it solves on the span of
#   the $\Delta$'s;
# - **post-check**: it recomputes $s^2$ for *every* $\Delta$ and, if the solver left any above
#   $\gamma$, scales the precision down by that factor, so that every constraint holds
#   (`rescaled` records the factor).
#
# On the example:

# %%
print(f"status {sol.status}; constraint-generation rounds {sol.rounds}; "
      f"Delta's in the working sets {sol.constraints} of {len(D)}; "
      f"post-check factor {sol.rescaled:.6f}")
final = colored.constraint_check(D, sol.covariance, GAMMA)
print(f"after the post-check: {final.violated} of {len(D)} constraints violated, "
      f"worst s^2/gamma = {final.worst:.6f}")

# %% [markdown]
# ## The corrected mechanism: colored noise on DP-Lloyd's statistics
#
# Everything that went wrong above came from the set of $\Delta$'s, not from the idea of
# colored noise. DP-Lloyd (chapter 5) has a query whose changes are public. In each iteration
# the clusters are fixed by the previous, released centroids, and cluster $j$ releases its
# centred statistics $(S_j - n_j m, n_j) \in \mathbb R^{d+1}$, with $m$ the midpoint of the
# public box $\prod_i [m_i - r_i, m_i + r_i]$ ($r_i > 0$ the half-widths). Adding or removing a
# record $x$ changes one cluster's vector by $\pm(x - m, 1)$ and no other
# ({prf:ref}`thm-lloyd-sensitivity`). So the set of changes is
# $\{\pm(x - m, 1) : x \in \text{box}\}$: data-independent, and given by the box alone. Since
# $s^2$ is convex in $x$, the $2^d$ vertices of the box are the binding ones
# (`colored.box_deltas`).
#
# ```{prf:theorem} Optimal covariance over a public box
# :label: thm-box-optimum
#
# Let $\mathcal D = \{(x - m, 1) : x \in \prod_i [m_i - r_i, m_i + r_i]\}$ and $\gamma > 0$,
# and write $r_0 = 1$ for the count. Among all $\Sigma \succ 0$ with
# $\Delta^\top\Sigma^{-1}\Delta \le \gamma$ for every $\Delta \in \mathcal D$, the trace is
# smallest for
#
# $$\Sigma^\star = \frac{\sum_{i=0}^d r_i}{\gamma}\,\operatorname{diag}(r_1, \dots, r_d, 1),
#   \qquad \operatorname{tr}\Sigma^\star = \frac{\big(\sum_{i=0}^d r_i\big)^2}{\gamma}.$$
#
# Every vertex of the box is tight.
# ```
#
# ```{prf:proof}
# *Diagonal covariances suffice.* Let $F = \operatorname{diag}(f_1, \dots, f_d, 1)$ with
# $f_i \in \{-1, 1\}$, a sign flip of the attributes. $F$ maps the box (centred at $m$) onto
# itself, so $F\mathcal D = \mathcal D$, and if $\Sigma$ is feasible so is $F\Sigma F$:
# $\Delta^\top (F\Sigma F)^{-1} \Delta = (F\Delta)^\top \Sigma^{-1} (F\Delta) \le \gamma$. The
# feasible set is an intersection of linear matrix inequalities ({prf:ref}`lem-schur`), hence
# convex, so the average $\bar\Sigma$ of $F\Sigma F$ over the $2^d$ flips is feasible, with the
# same trace. Its off-diagonal entries vanish: $(F\Sigma F)_{ij} = f_i f_j \Sigma_{ij}$, and
# $f_i f_j$ (or $f_i$ alone, in the count's row and column) averages to 0 over the flips. So
# every feasible $\Sigma$ has a diagonal feasible $\bar\Sigma$ with the same trace, and it is
# enough to bound the trace of the diagonal ones.
#
# *The best diagonal.* For $\Sigma = \operatorname{diag}(v_1, \dots, v_d, v_0)$,
# $s^2(x) = \sum_{i \ge 1} (x_i - m_i)^2 / v_i + 1/v_0$, largest at the vertices, where it is
# $\sum_{i=0}^d r_i^2 / v_i$. By Cauchy-Schwarz,
#
# $$\Big(\sum_{i=0}^d r_i\Big)^2 = \Big(\sum_{i=0}^d \frac{r_i}{\sqrt{v_i}}\sqrt{v_i}\Big)^2
#   \le \sum_{i=0}^d \frac{r_i^2}{v_i} \sum_{i=0}^d v_i \le \gamma \operatorname{tr}\Sigma,$$
#
# so $\operatorname{tr}\Sigma \ge (\sum_i r_i)^2/\gamma$, with equality if and only if
# $v_i \propto r_i$ and the constraint is tight. That gives $v_i = r_i \sum_j r_j / \gamma$.
# The Lagrange conditions give the same: $1 = \lambda r_i^2 / v_i^2$. At every vertex $s^2 =
# \sum_i r_i^2/v_i = \gamma$.
# ```
#
# ```{literalinclude} ../src/dpkmeans/colored.py
# :language: python
# :pyobject: box_covariance
# ```
#
# White noise on the same query has $\sigma^2 = \max \lVert\Delta\rVert^2/\gamma =
# \sum_{i=0}^d r_i^2 / \gamma$ on each of the $d + 1$ coordinates.
#
# ```{prf:corollary} The gain of colored noise over a box
# :label: cor-box-gain
#
# $$\frac{\operatorname{tr}\Sigma^\star}{\operatorname{tr}\Sigma_{\text{white}}} =
#   \frac{\big(\sum_{i=1}^d r_i + 1\big)^2}{(d+1)\big(\sum_{i=1}^d r_i^2 + 1\big)} \in
#   \Big(\frac{1}{d+1}, 1\Big],$$
#
# with 1 if and only if every half-width is 1 (the cube $[-1, 1]^d$ up to translation).
# ```
#
# ```{prf:proof}
# Divide the two traces. Cauchy-Schwarz on $(r_0, \dots, r_d)$ and $(1, \dots, 1)$ gives
# $(\sum_i r_i)^2 \le (d+1)\sum_i r_i^2$, with equality if and only if all $r_i$ are equal,
# that is equal to $r_0 = 1$. For the lower bound, $(\sum_i r_i)^2 > \sum_i r_i^2$ because
# the $r_i$ are positive and there are at least two of them.
# ```
#
# The count has sensitivity 1 whatever the box, so the cube $[-1, 1]^d$ is exactly the case
# where all coordinates are alike and there is nothing to shape: colored noise *is* white
# noise there. The check against the SDP on the box vertices (`colored.optimal_covariance` on
# `colored.box_deltas`), and the gain:

# %%
boxes = [(1.0, 1.0), (1.0, 1.0, 1.0), (2.0, 2.0), (1.0, 0.1), BOX_HALF_WIDTHS,
         (3.0, 1.0, 0.2)]
rows = []
for half in boxes:
    half = np.asarray(half, dtype=float)
    bounds = (-half, half)
    D_box = colored.box_deltas(bounds)
    closed = colored.box_covariance(bounds, GAMMA)
    sdp = colored.optimal_covariance(D_box, GAMMA).covariance
    white = colored.white_covariance(D_box, GAMMA)
    r = np.append(half, 1.0)
    rows.append({"half-widths": str(tuple(half.tolist())),
                 "tr closed form / tr SDP": np.trace(closed) / np.trace(sdp),
                 "closed form = SDP (to 1e-4)": bool(np.abs(closed - sdp).max()
                                                     < 1e-4 * np.abs(closed).max()),
                 "worst s2/gamma (closed form)":
                     colored.constraint_check(D_box, closed, GAMMA).worst,
                 "tr colored / tr white": np.trace(closed) / np.trace(white),
                 "(sum r + 1)^2 / ((d+1)(sum r^2 + 1))": r.sum() ** 2 / (r.size * (r @ r))})
gains = pd.DataFrame(rows)
print(gains.to_string(float_format=lambda v: f"{v:.4f}", index=False))
glue("ch9_gain_cube", f"{gains['tr colored / tr white'].iloc[0]:.3f}", display=False)
glue("ch9_gain_demo", f"{gains['tr colored / tr white'].iloc[4]:.3f}", display=False)
glue("ch9_gain_min", f"{gains['tr colored / tr white'].min():.3f}", display=False)

# %% [markdown]
# The closed form matches the SDP to the solver's accuracy (every entry within $10^{-4}$ of
# the largest), and every vertex is tight. On the cube the ratio is
# {glue:text}`ch9_gain_cube`: no gain. On the uneven boxes it falls, to
# {glue:text}`ch9_gain_min` for half-widths $(3, 1, 0.2)$. How the gain is made is worth
# seeing per coordinate, on the box $[-1, 1] \times [-0.1, 0.1]$:

# %%
half = np.array([1.0, 0.1])
D_box = colored.box_deltas((-half, half))
per_coordinate = pd.DataFrame({
    "coordinate": ["S_1 (r = 1)", "S_2 (r = 0.1)", "n (count)"],
    "white variance x gamma": np.diag(colored.white_covariance(D_box, GAMMA)) * GAMMA,
    "colored variance x gamma": np.diag(colored.box_covariance((-half, half), GAMMA)) * GAMMA})
print(per_coordinate.to_string(float_format=lambda v: f"{v:.3f}", index=False))

# %% mystnb={"figure": {"caption": "The trace of the box-optimal colored noise over that of white noise (the corollary above) when one half-width is a and the others are 1. At a = 1 (a cube) the two are the same; the dashed lines are the lower bounds 1/(d+1).", "name": "fig-colored-gain"}} tags=["hide-input"]
a_grid = np.geomspace(0.01, 100.0, 200)
fig, ax = new_figure()
for colour, d in zip(PALETTE, (2, 3, 8)):
    ax.plot(a_grid, (a_grid + d) ** 2 / ((d + 1) * (a_grid**2 + d)), color=colour,
            label=f"d = {d}")
    ax.axhline(1 / (d + 1), color=colour, linestyle="--", linewidth=1)
ax.set(xscale="log", xlabel="half-width a of one attribute (the others 1)",
       ylabel="tr colored / tr white", ylim=(0, 1.05))
ax.legend()
plt.show()

# %% [markdown]
# Colored noise adds slightly *more* noise than white noise to the wide attribute and to the
# count, and much less to the narrow one; the trace falls because white noise must pay the
# largest $\lVert\Delta\rVert$ in every direction. Whether that helps the *centroids* depends
# on how they weigh the coordinates. A centroid is $c_j = m + (S_j - n_j m)/n_j$, so its error
# counts the sums' noise divided by $n_j^2$, plus the count's noise times
# $\lVert c_j - m \rVert^2 / n_j^2$. The trace is the paper's objective, not the centroids'
# error; the reproduction measures the latter.
#
# ```{prf:theorem} Colored DP-Lloyd is $(\varepsilon, \delta)$-DP
# :label: thm-colored-dplloyd
#
# Under add/remove adjacency, with records clipped to a public box and data-independent
# initial centroids, $T$ iterations of DP-Lloyd that release every cluster's centred
# $(S_j - n_j m, n_j)$ with noise $\mathcal N(0, c_t \operatorname{diag}(r_1, \dots, r_d, 1))$,
# where $c_t$ calibrates a Gaussian release of $L_2$ sensitivity $\sqrt{\sum_i r_i + 1}$ and
# unit covariance to $(\varepsilon_t, \delta_t)$-DP, are
# $(\sum_t \varepsilon_t, \sum_t \delta_t)$-DP.
# ```
#
# ```{prf:proof}
# Let $W = \operatorname{diag}(r_1, \dots, r_d, 1)^{-1/2}$. Releasing $W v + \mathcal N(0, c_t I)$
# for $v = (S_j - n_j m, n_j)$ and multiplying by $W^{-1}$ gives the stated noise
# (post-processing, {prf:ref}`thm-post-processing`). A record changes $Wv$ by
# $W(x - m, 1)$, of squared length $\sum_i (x_i - m_i)^2 / r_i + 1 \le \sum_i r_i + 1$, so
# the whitened vector has $L_2$ sensitivity at most $\sqrt{\sum_i r_i + 1}$, and by the
# definition of $c_t$ its release is $(\varepsilon_t, \delta_t)$-DP. The rest is the proof
# of {prf:ref}`thm-dplloyd-private`: parallel composition over the clusters
# ({prf:ref}`thm-parallel`; its proof gives $(\max_j \varepsilon_j, \max_j \delta_j)$ for
# approximate DP), post-processing for the
# update, and sequential composition over the iterations ({prf:ref}`thm-sequential`), which
# adds the $\varepsilon_t$ and the $\delta_t$.
# ```
#
# At $c_t = (\sum_i r_i + 1)/\gamma$ this is exactly the box optimum $\Sigma^\star$ of
# {prf:ref}`thm-box-optimum`. The engine implements it as `noise="colored"`. It whitens the
# centred statistics, draws white Gaussian noise with its usual calibration for the $L_2$
# sensitivity $\sqrt{\sum_i r_i + 1}$ (by default the exact discrete Gaussian with zCDP
# accounting {cite}`canonne2020discrete`, chapter 6), and scales back. The configurations are
# `variants.corrected(K, eps, delta, bounds)` and its white twin `variants.white(K, eps,
# delta, bounds)`, with $T = 5$ and $(\varepsilon/T, \delta/T)$ per iteration. Both are run by
# `dpkmeans.engine.run(X, config, seed, replicas=...)`, and the result's `ledger` shows the
# spend. On a mixture scaled into the uneven box with half-widths `BOX_HALF_WIDTHS`:

# %%
half = np.asarray(BOX_HALF_WIDTHS, dtype=float)
box = (-half, half)
mixture = gaussian_mixture_dataset(N_RECORDS, K, half.size, rng=np.random.default_rng(next_seed()),
                                   separation=4.0)
X_box = np.asarray(mixture.scaled((-1.0, 1.0)).X) * half
seed = next_seed()
runs = {"colored": run(X_box, variants.corrected(K, EPSILON, DELTA, box), seed, replicas=REPLICAS),
        "white": run(X_box, variants.white(K, EPSILON, DELTA, box), seed, replicas=REPLICAS)}
columns = ["scope", "mechanism", "epsilon", "delta", "sensitivity", "scale"]
for name, result in runs.items():
    ledger = result.ledger.to_frame()
    print(f"{name}: {int((ledger['epsilon'] > 0).sum())} noisy releases, total "
          f"{result.ledger.total()}, private: {result.ledger.is_private}; the first:")
    print(ledger[columns].iloc[:1].to_string(float_format=lambda v: f"{v:.4g}", index=False))
# the traces of the two noises per cluster, from the ledgers' scales
first = {name: result.ledger.to_frame().iloc[0] for name, result in runs.items()}
r = np.append(half, 1.0)
ratio_ledger = (first["colored"]["scale"] ** 2 * r.sum()) / (first["white"]["scale"] ** 2 * r.size)
print(f"tr colored / tr white from the ledgers: {ratio_ledger:.4f}; corollary: "
      f"{r.sum() ** 2 / (r.size * (r @ r)):.4f}")

# %% [markdown]
# Each iteration releases every cluster at $(\varepsilon/5, \delta/5)$, and the totals are the
# declared $(\varepsilon, \delta)$. The colored release's "scale" is the standard deviation on
# the whitened vector; scaled back, its covariance is $\text{scale}^2 \operatorname{diag}(r, 1)$.
# The two ledgers' traces are in the ratio of {prf:ref}`cor-box-gain`, here
# {glue:text}`ch9_gain_demo`: the engine spends the same calibration on both, and only the
# shape differs.

# %% [markdown]
# ## Reproduction
#
# The paper's experiment (reference §6.7): the Marketing Campaign data (2,212 records after the
# cleaning the data layer reconstructs, 28 attributes), $K = 4$, noise added to the centroids
# "for various $(\varepsilon, \delta)$ pairs". The pairs and the figure's metric are lost; the
# book sweeps $\varepsilon \in \{0.1, 0.5, 1, 2, 5, 10\}$ and $\delta \in \{10^{-5}, 10^{-3},
# 0.1\}$ (CEDS's defaults are $(0.1, 0.1)$) and measures three things, each over **1000
# independent draws per point**: the centroid MSE against the non-private centroids, the
# adjusted Rand index of the labels against the non-private labels, and squared NICV. Four
# datasets (`dpkmeans.papers.colored.study.DATASETS`): Marketing with every attribute's public
# range mapped onto $[-1, 1]$ (the box is a cube); the same data in its own relative units
# (`marketing_units`: one common factor maps the widest range, income, onto $[-1, 1]$, so the
# box is very uneven); and two Gaussian mixtures ($N = 2000$, $K = 4$, $d = 2$ and $8$) whose
# true centres are known. Two families of algorithms:
#
# - **one-shot**, the paper's setting: the data are clustered once without privacy (KMeans, as
#   CEDS), and noise is added to those centroids. `ceds` is the published closed form at
#   $\gamma_c(\varepsilon K d, \delta)$; `ceds_exact_gamma` the same closed form at
#   $\gamma^*(\varepsilon, \delta)$; `sdp_local` the exact optimum of eq. 11 on the same
#   $\Delta$'s; `white_local` white noise on the same $\Delta$'s; `analytic_local` white noise
#   with the analytic-Gaussian $\sigma$ (Balle and Wang) for the same $L_2$ sensitivity. All of
#   them use the paper's local $\Delta$'s: **none is private**, whatever its constraints say.
# - **DP-Lloyd**, the corrected mechanism: $T = 5$ iterations from the public sphere-packing
#   start. `colored_dplloyd` (the box optimum), `white_dplloyd` (white noise, the same discrete
#   sampler and calibration) and `white_analytic_dplloyd` (analytic calibration with numpy's
#   sampler, the papers' floating-point leak). The reference of the MSE and the labels is
#   non-private Lloyd from the same start for the same $T$.
#
# Every one-shot covariance scales as $1/\gamma$, so each dataset's SDP is solved once.

# %%
results = pd.read_csv(RESULTS)
timing = json.loads(Path(TIMING).read_text())
sdp_bench = json.loads(Path(SDP_BENCHMARK).read_text())
glue("ch9_points", int(len(results)), display=False)
glue("ch9_draws", int(results["draws"].sum()), display=False)
glue("ch9_wall_s", round(timing["wall_s"]), display=False)
glue("ch9_sweep_met", "met" if timing["met"] else "missed", display=False)
sdp28 = next(r for r in sdp_bench["results"] if r["d"] == 28)
glue("ch9_sdp28_s", f"{sdp28['median_s']:.1f}", display=False)
glue("ch9_sdp_met", "met" if sdp_bench["met"] else "missed", display=False)
private = results[results["is_private"]]
glue("ch9_private_ok", bool((private["epsilon_spent"] <= private["epsilon"] * (1 + 1e-9)).all()),
     display=False)
DATASET_ORDER = ["marketing", "marketing_units", "mixture_d8", "mixture_d2"]


def panels(rows: pd.DataFrame, algorithms: tuple[str, ...], metric: str, ylabel: str,
           log_y: bool = True):
    """One panel per dataset at delta = FIGURE_DELTA: the metric against epsilon."""
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.6), constrained_layout=True)
    for ax, dataset in zip(axes, DATASET_ORDER):
        part = rows[(rows["dataset"] == dataset) & (rows["delta"] == FIGURE_DELTA)
                    & rows["algorithm"].isin(algorithms)]
        plot_curves(ax, part, "epsilon", metric)
        ax.set(xscale="log", yscale="log" if log_y else "linear", xlabel=r"$\varepsilon$",
               title=f"{dataset} (d = {part['d'].iloc[0]})")
    axes[0].set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(algorithms))
    return fig


# %% mystnb={"figure": {"caption": "One-shot release (the paper's setting, none of them private): centroid MSE against the non-private centroids, mean of 1000 draws per point at delta = 1e-5 (95% intervals are smaller than the markers). `ceds` (the published closed form) sits orders of magnitude below everything else because it violates its own constraints; `sdp_local` is the honest optimum on the same Delta's.", "name": "fig-colored-one-shot"}} tags=["hide-input"]
panels(results, ONE_SHOT, "mse", "centroid MSE")
plt.show()

# %% [markdown]
# The one-shot figure is the paper's Fig. 2 as far as it can be rebuilt, and it "shows" what
# the paper says: the colored noise of CEDS is far below white noise. It is below everything
# because it hardly adds noise at all. The violation table at $(\varepsilon, \delta) = (1,
# 10^{-5})$ says why, for every dataset of the sweep: the fraction of the paper's own
# constraints $\Delta_n^\top\Sigma^{-1}\Delta_n \le \gamma^*$ that each covariance violates,
# the worst ratio $s^2/\gamma^*$, and the worst tail $\Pr[|\mathcal L| > \varepsilon]$, which
# PDP requires to be at most $\delta$.

# %%
violations = results[(results["family"] == "one-shot") & (results["epsilon"] == 1.0)
                     & (results["delta"] == 1e-5)]
table = violations[["dataset", "algorithm", "trace", "violated_fraction", "worst_ratio",
                    "worst_tail", "pdp_on_local_deltas"]]
print(table.to_string(**table_format))
ceds_rows = results[results["algorithm"] == "ceds"]
glue("ch9_sweep_ceds_violated", f"{100 * ceds_rows['violated_fraction'].min():.1f}%",
     display=False)
analytic = table[table["algorithm"] == "analytic_local"]["worst_tail"]
glue("ch9_analytic_tail", f"{analytic.max():.2g}", display=False)

# %% [markdown]
# CEDS's closed form violates at least {glue:text}`ch9_sweep_ceds_violated` of its
# constraints at every point of the sweep; on Marketing its covariance is singular in
# directions where $\Delta$'s lie, so the worst ratio is infinite. Taken at its word
# ($\gamma_c(\varepsilon K d, \delta)$ against $\gamma^*(\varepsilon K d, \delta)$) it still
# fails (the claims ledger below). White noise and the SDP meet every constraint;
# the analytic Gaussian, calibrated for $(\varepsilon, \delta)$-DP rather than PDP, exceeds
# the PDP tail (its worst tail is at most {glue:text}`ch9_analytic_tail`, against
# $\delta = 10^{-5}$):
# $(\varepsilon, \delta)$-DP is weaker than PDP, so a DP calibration may fail PDP. The ratio of the SDP's error to white noise's on the
# same $\Delta$'s is the honest version of the paper's comparison:

# %%
ratios = pd.concat({setting: co_claims.error_ratios(results, setting)
                    for setting in co_claims.SETTINGS}, names=["setting"]).reset_index(0)
ratio_table = ratios.groupby(["setting", "dataset"], sort=False)["ratio"].agg(
    ["median", "min", "max"])
print("centroid MSE, colored / white, over the 18 (epsilon, delta) points")
print(ratio_table.to_string(float_format=lambda v: f"{v:.3g}"))
local = ratios[ratios["setting"] == "local Delta's, optimal"].groupby("dataset")["ratio"].median()
published = ratios[ratios["setting"] == "as published"]["ratio"]
glue("ch9_ceds_factor_lo", f"{1 / published.max():.1g}", display=False)
glue("ch9_ceds_factor_hi", f"{1 / published.min():.1g}", display=False)
glue("ch9_sdp_ratio_marketing", f"{local['marketing']:.3f}", display=False)
glue("ch9_sdp_ratio_units", f"{local['marketing_units']:.4f}", display=False)
glue("ch9_sdp_ratio_d2", f"{local['mixture_d2']:.2f}", display=False)
glue("ch9_sdp_ratio_d8", f"{local['mixture_d8']:.2f}", display=False)

# %% [markdown]
# On the same local $\Delta$'s the exact optimum has {glue:text}`ch9_sdp_ratio_d2` and
# {glue:text}`ch9_sdp_ratio_d8` of white noise's error on the mixtures,
# {glue:text}`ch9_sdp_ratio_marketing` on Marketing and {glue:text}`ch9_sdp_ratio_units` on
# Marketing in its own units: the leave-one-out $\Delta$'s of real data are far from isotropic
# (a few attributes, such as income, carry nearly all of the spread), and an optimal covariance
# follows them. That gain is real for the problem the paper wrote down. But the problem is the
# wrong one: those $\Delta$'s are a local sensitivity, so none of these releases is private.
#
# The corrected mechanism is private, and on it the comparison looks different:

# %% mystnb={"figure": {"caption": "DP-Lloyd (T = 5, (epsilon, delta)-DP but for the analytic variant's floating-point sampler): squared NICV, mean of 1000 runs per point at delta = 1e-5 with 95% intervals. Colored and white noise coincide on a cube (`marketing`, the mixtures) and differ only on the uneven box of `marketing_units`.", "name": "fig-colored-dplloyd"}} tags=["hide-input"]
panels(results, DP_LLOYD, "nicv", "squared NICV")
plt.show()

# %%
corrected_nicv = co_claims.error_ratios(results, "corrected", "nicv")
units = corrected_nicv[corrected_nicv["dataset"] == "marketing_units"]["ratio"]
glue("ch9_units_nicv_ratio", f"{units.median():.2f}", display=False)
glue("ch9_units_nicv_best", f"{units.min():.2f}", display=False)
corrected_mse = co_claims.error_ratios(results, "corrected", "mse")
glue("ch9_corrected_mse_lo", f"{corrected_mse['ratio'].min():.2f}", display=False)
glue("ch9_corrected_mse_hi", f"{corrected_mse['ratio'].max():.2f}", display=False)
claims_ledger = pd.read_csv(CLAIMS_FILE)  # read once, for this and the next section
units_row = claims_ledger[(claims_ledger["claim"] == 1)
                          & (claims_ledger["setting"] == "corrected")
                          & (claims_ledger["metric"] == "nicv")
                          & (claims_ledger["dataset"] == "marketing_units")]
glue("ch9_units_nicv_points", units_row["evidence"].iloc[0].split(" points")[0], display=False)

# %% [markdown]
# On the cube ({numref}`fig-colored-dplloyd`, `marketing` and the mixtures) the box optimum
# *is* white noise ({prf:ref}`cor-box-gain` with every $r_i = 1$), and the curves coincide. On
# the uneven box of `marketing_units`, colored noise lowers squared NICV to a median
# {glue:text}`ch9_units_nicv_ratio` of white noise's (down to {glue:text}`ch9_units_nicv_best`):
# less noise on the many narrow attributes, which is what NICV, measured over all of them,
# rewards. The centroid MSE against non-private Lloyd is another matter: its colored / white
# ratio stays between {glue:text}`ch9_corrected_mse_lo` and {glue:text}`ch9_corrected_mse_hi`
# everywhere, because at these budgets the MSE is dominated by the wide coordinates and by
# runs that end in another partition than non-private Lloyd's, and colored noise does not
# reduce the noise on the wide coordinates (it adds slightly more there). A user who scales
# every attribute to a common range, as the book does by default, gets nothing from colored
# noise on DP-Lloyd; a user who keeps uneven units gets a modest gain in NICV.
#
# The sweep ran {glue:text}`ch9_points` points, {glue:text}`ch9_draws` draws or runs, in
# {glue:text}`ch9_wall_s` s on this 2-core machine (`python -m benchmarks.colored_reproduction`;
# the target of 5 minutes was **{glue:text}`ch9_sweep_met`**). The SDP for $K = 4$ on all 28
# attributes of Marketing takes {glue:text}`ch9_sdp28_s` s (`python -m benchmarks.colored_sdp`;
# the target of 10 s was **{glue:text}`ch9_sdp_met`**). No private run spent more than its
# budget ({glue:text}`ch9_private_ok`).

# %% [markdown]
# ### The claims ledger
#
# Three claims (reference §6.7; `dpkmeans.papers.colored.claims`, whose docstring fixes the
# rules before the results are read). Claim 1 compares colored with white noise in three
# settings, with Welch's test over the 1000 draws of each point and the four verdicts of
# chapter 7, per dataset, on the centroid MSE (primary) and on squared NICV. Claim 3 is judged
# by the constraint check of CEDS's covariance on its own $\Delta$'s (exact, not sampled), at
# the claimed $\varepsilon$ and generously at $\varepsilon K d$, and by the audit of the next
# section. The table is `data/results/colored_claims.csv`, which a test recomputes from the
# committed results.

# %%
summary = co_claims.claims_summary(claims_ledger)
print(summary.to_string(index=False))
for row in summary.itertuples():  # e.g. ch9_claim1_corrected_nicv, ch9_claim3_audit
    name = f"ch9 claim{row.claim} {row.setting} {row.metric}".lower().replace("'", "")
    key = re.sub(r"[^a-z0-9]+", "_", name)
    glue(key.strip("_"), row.verdict, display=False)

# %%
pd.set_option("display.max_colwidth", 200)
print(claims_ledger[["claim", "setting", "metric", "dataset", "verdict", "evidence"]]
      .to_string(index=False))

# %% [markdown]
# 1. **Colored noise has lower error than white noise at the same $(\varepsilon, \delta)$.**
#    As published: *{glue:text}`ch9_claim1_as_published_mse`* on the MSE, on every dataset, by
#    factors of {glue:text}`ch9_ceds_factor_lo` to {glue:text}`ch9_ceds_factor_hi`: the
#    closed form adds almost no noise because it violates
#    its constraints (claim 3), so this "win" is the privacy failure, measured. On the paper's
#    problem solved exactly (the SDP on the same local $\Delta$'s):
#    *{glue:text}`ch9_claim1_local_deltas_optimal_mse`* on the MSE and
#    *{glue:text}`ch9_claim1_local_deltas_optimal_nicv`* on NICV; a real gain of the optimal
#    covariance, but for a mechanism that is not private. Corrected (both private):
#    *{glue:text}`ch9_claim1_corrected_mse`* on the MSE (no significant difference at nearly
#    every point), *{glue:text}`ch9_claim1_corrected_nicv`* on NICV: colored is significantly
#    better on the uneven box of `marketing_units` at {glue:text}`ch9_units_nicv_points`
#    points and indistinguishable on
#    the cubes, as {prf:ref}`cor-box-gain` predicts. "No difference" is not "white is better".
# 2. **Lower error than Balcan et al. (2017).** *{glue:text}`ch9_claim2_papers_fig_2`*: the
#    baseline's curve fixes a parameter whose value is lost with the paper's footnote, the
#    figure's metric is lost, and the book does not implement Balcan et al.'s algorithm, so no
#    verdict is computed and none is claimed.
# 3. **The published mechanism is $(\varepsilon, \delta)$-PDP, hence DP.** The constraint
#    check at the claimed $\varepsilon$: *{glue:text}`ch9_claim3_constraint_check_claimed_eps`*;
#    at $\varepsilon K d$: *{glue:text}`ch9_claim3_constraint_check_eps_k_d`*; the audit:
#    *{glue:text}`ch9_claim3_audit`*. Even a constraint check that held would prove nothing:
#    the $\Delta$'s are local. The audit is the direct evidence.

# %% [markdown]
# ## Auditing the published mechanism
#
# An audit needs a neighbouring pair on which the two output distributions differ more than
# $(\varepsilon, \delta)$ allows (chapter 6). Local sensitivity makes one easy to build
# (`dpkmeans.papers.colored.audit`). $D$ holds two tight rings of
# {glue:text}`ch9_audit_group` records each, of radius $10^{-3}$ around $A = (0.2, 0.3)$ and
# $B = (0.8, 0.7)$, in the public box $[0, 1]^2$: every leave-one-out $\Delta$ has norm about
# $10^{-3}/G$, so the published release adds noise of that order. $D'$ adds one record at the
# corner $(0, 0)$. It joins $A$'s cluster and moves its centroid by $|A|/(G + 1)$, hundreds
# of times that noise. The statistic is the distance from $A$ to the nearest released
# centroid; the auditor picks a threshold on half the trials and bounds $\varepsilon$ on the
# other half. The whole published pipeline runs (`variants.as_published`: k-means++ on the
# data, exact Lloyd, the closed-form release), and so does the corrected one, on the same pair.

# %%
audit_reports = run_audits(EPSILON, DELTA, AUDIT_TRIALS, group_size=AUDIT_GROUP_SIZE,
                           seed=next_seed())
audit_live = pd.DataFrame([r.as_row() for r in audit_reports]).drop(columns="seconds")
print(audit_live[["name", "claimed_epsilon", "delta", "lower_bound", "trials", "verdict"]]
      .to_string(**table_format))
glue("ch9_audit_group", AUDIT_GROUP_SIZE, display=False)
glue("ch9_audit_live_lb", f"{audit_reports[0].lower_bound:.2f}", display=False)
committed_audit = pd.read_csv(AUDIT_FILE)
glue("ch9_audit_lb_min", f"{committed_audit[committed_audit['name'].str.startswith('as published')]['lower_bound'].min():.2f}",
     display=False)

# %% [markdown]
# With {glue:text}`ch9_audit_live_lb` as the lower bound from this cell's trials, the audit
# shows with 99% confidence that the published release is not $(1, 10^{-5})$-DP; the committed
# run (`data/results/colored_audit.csv`, 1000 trials per dataset, at $(1, 10^{-5})$ and at
# CEDS's defaults $(0.1, 0.1)$) bounds $\varepsilon$ below by
# {glue:text}`ch9_audit_lb_min`, above the claimed $\varepsilon$ and above the
# $\varepsilon K d = 4$ and $0.4$ that CEDS computes with. The bound only grows with the
# trials: on $D$ the release is almost exact. The corrected mechanism, audited on the same pair,
# is consistent with its claim.

# %%
print(committed_audit[["name", "claimed_epsilon", "delta", "lower_bound", "estimate", "trials",
                       "verdict"]].to_string(**table_format))

# %% tags=["remove-cell"]
# Numbers quoted in the exercises' solutions.
eps_ex, delta_ex = 0.5, 1e-6
root = brentq(lambda s2: colored.pdp_tail(eps_ex, s2) - delta_ex, 1e-8, 10.0, xtol=1e-14)
glue("ch9_ex_root", f"{root:.6f}", display=False)
glue("ch9_ex_gamma_pdp", f"{colored.gamma_pdp(eps_ex, delta_ex):.6f}", display=False)
glue("ch9_ex_gamma_c", f"{colored.gamma_ceds(eps_ex, delta_ex):.6f}", display=False)

points = np.array([0.0, 0.0, 6.0, 6.0, 13.0, 13.0])


def best_split(x):
    """The optimal 2-means partition of sorted 1-D data (its clusters are intervals)."""
    costs = [((x[:i] - x[:i].mean()) ** 2).sum() + ((x[i:] - x[i:].mean()) ** 2).sum()
             for i in range(1, len(x))]
    i = int(np.argmin(costs)) + 1
    return np.array([x[:i].mean(), x[i:].mean()])


before, after = best_split(points), best_split(points[:-1])
glue("ch9_ex_before", f"({before[0]:g}, {before[1]:g})", display=False)
glue("ch9_ex_after", f"({after[0]:g}, {after[1]:.2f})", display=False)
glue("ch9_ex_true_change", f"{np.linalg.norm(before - after):.2f}", display=False)

r_ex = np.array([50.0, 0.5, 1.0])  # [0, 100] x [0, 1] and the count
glue("ch9_ex_box_gain", f"{r_ex.sum() ** 2 / (r_ex.size * (r_ex @ r_ex)):.4f}", display=False)

# %% [markdown]
# ## Exercises
#
# ```{exercise}
# :label: ex-colored-gamma
#
# Compute $\gamma^*(0.5, 10^{-6})$ from its definition, by solving
# $\Pr[|\mathcal L| > \varepsilon] = \delta$ for $s^2$ with `colored.pdp_tail` and
# `scipy.optimize.brentq`, and compare it with `colored.gamma_pdp` and with the authors'
# $\gamma_c$. Is $\gamma_c$ conservative here?
# ```
#
# ````{solution} ex-colored-gamma
# :class: dropdown
#
# The tail increases in $s^2$ ({prf:ref}`lem-tail-monotone`), so any bracket with opposite
# signs holds the one root:
#
# ```python
# root = brentq(lambda s2: colored.pdp_tail(0.5, s2) - 1e-6, 1e-8, 10.0, xtol=1e-14)
# ```
#
# It gives $\gamma^*$ = {glue:text}`ch9_ex_root`, the same as `colored.gamma_pdp(0.5, 1e-6)` =
# {glue:text}`ch9_ex_gamma_pdp`. The authors' $\gamma_c = 0.25 / (2 \ln(2 \cdot 10^6))$ =
# {glue:text}`ch9_ex_gamma_c` is smaller, hence conservative: $\varepsilon = 0.5$ is far below
# the point where $\gamma_c$ fails ({numref}`fig-colored-gamma`).
# ````
#
# ```{exercise}
# :label: ex-colored-labels
#
# Take the 1-D records $\{0, 0, 6, 6, 13, 13\}$ and $K = 2$. Find the optimal k-means
# partition and its centroids, then remove one record at 13 and cluster again. Compare the
# paper's frozen-label $\Delta$ for that record with the true change of the centroid vector.
# ```
#
# ````{solution} ex-colored-labels
# :class: dropdown
#
# In 1-D the clusters of an optimal partition are intervals, so it is enough to try the five
# splits of the sorted records. $\{0, 0, 6, 6\}, \{13, 13\}$ costs 36 and beats
# $\{0, 0\}, \{6, 6, 13, 13\}$ (49): the centroids are {glue:text}`ch9_ex_before`. With the
# labels frozen, removing a 13 leaves the second cluster at 13, so the paper's
# $\Delta = (0, 0)$: by its own constraint this record needs no noise at all. Clustered again,
# $\{0, 0\}, \{6, 6, 13\}$ costs 32.7 and beats $\{0, 0, 6, 6\}, \{13\}$ (36): the centroids
# are {glue:text}`ch9_ex_after`, a true change of length {glue:text}`ch9_ex_true_change`.
# Duplicated records make it blatant, but any record whose removal moves the cluster boundary
# does the same.
# ````
#
# ```{exercise}
# :label: ex-colored-box
#
# A dataset has two attributes with public ranges $[0, 100]$ (an age) and $[0, 1]$ (a
# fraction). Compute the trace ratio of the box-optimal colored noise to white noise for the
# DP-Lloyd statistics, and give the per-coordinate variances of both at a given $\gamma$. Then
# show that the ratio is always above $1/(d+1)$, and explain why it approaches $1/3$ here.
# ```
#
# ````{solution} ex-colored-box
# :class: dropdown
#
# The half-widths are $r = (50, 0.5)$ and $r_0 = 1$, so $\sum_i r_i = 51.5$ and
# $\sum_i r_i^2 = 2501.25$. The ratio is $51.5^2 / (3 \cdot 2501.25)$ =
# {glue:text}`ch9_ex_box_gain`. White noise has variance $2501.25/\gamma$ on each of the three
# coordinates. Colored noise has $51.5 \cdot (50, 0.5, 1)/\gamma = (2575, 25.75, 51.5)/\gamma$:
# 3% more on the age sum, about a hundred times less on the fraction and fifty times less on
# the count. The lower bound: $(\sum_i r_i)^2 > \sum_i r_i^2$ for two or more positive terms,
# so the ratio exceeds $1/(d+1)$. When one half-width dominates, both sums are nearly that one
# term, $r_1$ and $r_1^2$, so the ratio tends to $1/(d+1) = 1/3$. This is
# the most colored noise can gain over white noise on a box: a factor $d + 1$ in the trace.
# ````
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - A colored Gaussian release has privacy loss $\mathcal N(s^2/2, s^2)$ with
#   $s^2 = \Delta^\top\Sigma^{-1}\Delta$; it is $(\varepsilon, \delta)$-PDP, hence DP, exactly
#   when $s^2 \le \gamma^*(\varepsilon, \delta)$ for every possible $\Delta$, with $\Sigma$ fixed
#   independently of the data ({prf:ref}`thm-colored-pdp`).
# - The authors' $\gamma_c$ drops the loss's mean and is anti-conservative from
#   $\varepsilon \approx$ {glue:text}`ch9_fail_delta` ($\delta = 10^{-5}$); CEDS evaluates it
#   at $\varepsilon K d$, which lands there.
# - The paper's $\Delta$'s are this dataset's leave-one-out shifts with frozen labels: a local
#   sensitivity. The published mechanism is not DP for any $(\varepsilon, \delta)$.
# - Lemma 5 picks the smallest $\Delta$'s as the active set; the largest bind
#   ({prf:ref}`prop-active-set`). The authors' closed form violates
#   {glue:text}`ch9_ceds_fraction` of its constraints. The exact optimum is an SDP (Schur
#   complement), solved with cvxpy and Clarabel and post-checked.
# - The corrected mechanism puts colored noise on DP-Lloyd's centred $(S_j, n_j)$ over the
#   public box. Its optimal covariance is $\operatorname{diag}(r, 1)(\sum_i r_i + 1)/\gamma$
#   ({prf:ref}`thm-box-optimum`), and its trace gain over white noise,
#   $(\sum_i r_i + 1)^2/((d+1)(\sum_i r_i^2 + 1))$, is none on a cube and at most a factor
#   $d + 1$ on very uneven boxes.
# :::
