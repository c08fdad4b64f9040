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
# (ch-composition)=
# # Composition, post-processing and the privacy ledger
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - prove sequential composition, parallel composition and post-processing, and say which
#   neighbour relation each proof needs;
# - record every noise draw of an algorithm in a privacy ledger and read its composed total;
# - check each composition rule numerically from samples;
# - compose releases tightly at $\delta > 0$: Gaussian DP ($\mu^2$ adds), zCDP ($\rho$
#   adds) and privacy-loss distributions (their convolution), and check the accountant;
# - split a total budget over the iterations of DP-Lloyd (uniform, halving, series-sum) and see
#   what each split does to the noise.
#
# **Prerequisites:** {numref}`chapter %s <ch-laplace>` (differential privacy, the Laplace
# mechanism, the DP-Lloyd iteration) and {numref}`chapter %s <ch-gaussian>`
# ($(\varepsilon, \delta)$-DP); basic probability and reading Python. The recap below
# restates what this chapter uses.
# :::
#
# **Recap.** A *dataset* $D$ is a finite collection of records, one per person. Two datasets
# are *neighbours*, $D \simeq D'$, if they differ in one person: under **add/remove**
# adjacency one has an extra record, under **replace** adjacency one record has been swapped
# for another. A *mechanism* $M$ is a randomised algorithm; $M$ is
# **$\varepsilon$-differentially private** ($\varepsilon$-DP) if for every pair of neighbours
# and every set $E$ of outputs, $\Pr[M(D) \in E] \le e^{\varepsilon} \Pr[M(D') \in E]$, and
# **$(\varepsilon, \delta)$-DP** if the same holds with $+\,\delta$ added on the right. When
# the outputs have densities $p_D$ and $p_{D'}$, the **privacy loss** of an output $y$ is
# $\mathcal L(y) = \ln p_D(y) / p_{D'}(y)$, and $\varepsilon$-DP says
# $|\mathcal L(y)| \le \varepsilon$. The **Laplace mechanism** adds noise of scale
# $b = \Delta_1 / \varepsilon$ to a query whose value one person can change by at most
# $\Delta_1$ in $L_1$ norm (its *sensitivity*), and is $\varepsilon$-DP. The smaller
# $\varepsilon$, the stronger the guarantee and the larger the noise; the total $\varepsilon$
# an analysis may spend is its **budget**.
#
# **$k$-means** clustering splits numeric records into $k$ clusters, each summarised by its
# *centroid*, the mean of its records. Lloyd's algorithm finds them by repetition: assign
# every record to its nearest centroid, then move each centroid to the mean of the records
# assigned to it. **DP-Lloyd** is the private version that every chapter builds on. Records
# have $d$ numeric attributes and lie in a public box, such as $[-r, r]^d$, and each
# iteration $t$ starts from $k$ public centroids: it assigns every record to its nearest
# centroid, which splits the data into $k$ clusters, releases each cluster's sum $S_j$ and
# count $n_j$ with Laplace noise at a budget $\varepsilon_t$, and takes the noisy sum
# divided by the noisy count as the new centroid $j$. Under add/remove adjacency one record
# changes one cluster's sum and count by at most $dr + 1$ in $L_1$ norm, the sensitivity
# the noise is scaled to ({prf:ref}`thm-lloyd-sensitivity`). A run of $T$ iterations therefore releases noisy numbers $T \times k$ times; this
# chapter says what the whole run costs.

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
EPSILON_TOTAL = 1.0  # the total budget of the allocation examples
ITERATIONS = 10  # DP-Lloyd iterations in the allocation examples

# %%
import textwrap
from collections import Counter
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from dp_accounting.pld import privacy_loss_distribution as pld
from matplotlib.ticker import FuncFormatter
from myst_nb import glue

from dpkmeans.api.catalogue import FitInputs, choice
from dpkmeans.engine import schedules
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.errors import BudgetExceededError
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.loss import estimate_log_ratios, laplace_privacy_loss
from dpkmeans.privacy.mechanisms import (
    gaussian_sigma_analytic,
    laplace_mechanism,
    laplace_scale,
)
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans.privacy.tight import (
    ACCOUNTINGS,
    Release,
    epsilon_at,
    gdp_epsilon,
    gdp_mu,
)
from dpkmeans.study.loss_distribution import loss_distribution
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import number, table, yes_no
from dpkmeans.synthesis.noise_table import noise_per_coordinate

use_book_style()
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## Three rules
#
# Three theorems turn the cost of each release into the cost of a whole run. The first says
# what happens when releases follow one another, each possibly depending on the earlier
# outputs.
#
# ```{prf:theorem} Sequential composition
# :label: thm-sequential
#
# If $M_1$ is $\varepsilon_1$-DP and $M_2(\cdot, y_1)$ is $\varepsilon_2$-DP for every output
# $y_1$ of $M_1$, then $D \mapsto (y_1, y_2)$ with $y_1 \sim M_1(D)$, $y_2 \sim M_2(D, y_1)$ is
# $(\varepsilon_1 + \varepsilon_2)$-DP. More generally, $(\varepsilon_i, \delta_i)$-DP
# mechanisms compose to $(\sum_i \varepsilon_i, \sum_i \delta_i)$-DP.
# ```
#
# ```{prf:proof}
# (Pure case, with densities.) Write $p^{(1)}_D$ for the density of $M_1(D)$ and
# $p^{(2)}_D(\cdot \mid y_1)$ for that of $M_2(D, y_1)$. The joint density factorises as
# $p_D(y_1, y_2) = p^{(1)}_D(y_1)\, p^{(2)}_D(y_2 \mid y_1)$, so the privacy loss of the pair
# is the sum of the two losses, each bounded by its $\varepsilon_i$:
#
# $$
# \begin{aligned}
# \ln \frac{p_D(y_1, y_2)}{p_{D'}(y_1, y_2)}
#   &= \ln\frac{p^{(1)}_D(y_1)}{p^{(1)}_{D'}(y_1)} +
#      \ln\frac{p^{(2)}_D(y_2 \mid y_1)}{p^{(2)}_{D'}(y_2 \mid y_1)} \\
#   &\le \varepsilon_1 + \varepsilon_2 .
# \end{aligned}
# $$
#
# The second mechanism may depend on $y_1$ (it is *adaptive*), which is exactly what DP-Lloyd
# does: iteration $t$ assigns records with the centroids released at $t - 1$. The approximate
# case is Theorem 3.16 of {cite}`dwork2014algorithmic`.
# ```
#
# The second rule is about releases that each look at a different, non-overlapping group of
# records, such as the $k$ clusters of one DP-Lloyd iteration.
#
# ```{prf:theorem} Parallel composition
# :label: thm-parallel
#
# Let a rule that does not depend on the data partition the record domain into disjoint parts
# $P_1, \dots, P_k$, and let $M_j$ be $\varepsilon_j$-DP and applied to $D \cap P_j$ only.
# Under **add/remove** adjacency, $D \mapsto (M_1(D \cap P_1), \dots, M_k(D \cap P_k))$ is
# $\max_j \varepsilon_j$-DP.
# ```
#
# ```{prf:proof}
# Adding or removing one record $x$ changes only the part $P_j$ that contains $x$, so the
# releases of all other parts have the same distribution under $D$ and $D'$, and the joint
# privacy loss equals the loss of $M_j$ alone, at most
# $\varepsilon_j \le \max_i \varepsilon_i$. (The mechanisms draw independent noise, so the
# joint density factorises.)
# ```
#
# Under **replace** adjacency one record can leave part $P_h$ while its replacement joins part
# $P_{h'}$: two parts change, and the cost is $\varepsilon_h + \varepsilon_{h'}$, not the
# maximum.
# In DP-Lloyd the parts are the clusters, and the rule, "nearest public centroid", does not
# depend on the data. {cite:t}`shang2021di` apply parallel composition under replace
# adjacency, which undercounts the cost in exactly this way ({numref}`chapter %s
# <ch-identifiability>` audits their algorithm).
#
# The third rule says that what is computed from a private output, without looking at the
# data again, is just as private.
#
# ```{prf:theorem} Post-processing
# :label: thm-post-processing
#
# If $M$ is $(\varepsilon, \delta)$-DP and $g$ is any (possibly randomised) map that does not
# look at the data, then $g \circ M$ is $(\varepsilon, \delta)$-DP.
# ```
#
# ```{prf:proof}
# For deterministic $g$ and any set $E$ of outputs,
#
# $$
# \begin{aligned}
# \Pr[g(M(D)) \in E] &= \Pr[M(D) \in g^{-1}(E)]
#   \le e^{\varepsilon}\Pr[M(D') \in g^{-1}(E)] + \delta \\
#   &= e^{\varepsilon}\Pr[g(M(D')) \in E] + \delta .
# \end{aligned}
# $$
#
# A randomised $g$ is a mixture of deterministic maps (fix its random seed), and the
# inequality survives averaging.
# ```
#
# Dividing a noisy sum by a noisy count, clamping a count at 1, keeping the previous centroid
# when a cluster's noisy count is tiny: all of this is post-processing and costs nothing, *as
# long as it only looks at noisy outputs and public inputs*.
#
# ## The privacy ledger
#
# The library turns the three rules into bookkeeping. A **privacy ledger**
# (`dpkmeans.privacy.accounting.PrivacyLedger`) is a record of every noise draw an algorithm makes:
# which mechanism, at which $\varepsilon$ and $\delta$, with which sensitivity and noise
# scale. Every mechanism of the library records its draw in the ledger *before* drawing.
# Entries are grouped into **scopes** that say how they compose: entries in a `sequential`
# scope (the default, or a named one such as one iteration) add up by
# {prf:ref}`thm-sequential`; a `parallel` scope holds one `part` per disjoint group of
# records and costs its most expensive part, by {prf:ref}`thm-parallel`. Post-processing is
# written down at zero cost, so that the ledger tells the whole story. A ledger created with
# a **budget** refuses a draw that would take the composed total past it.
#
# A scope's cost follows from its children's costs by the two rules. If the children cost
# $(\varepsilon_1, \delta_1), \dots, (\varepsilon_m, \delta_m)$, a sequential scope and a
# parallel one cost
#
# $$
# \Bigl(\sum_{i=1}^m \varepsilon_i,\ \min\Bigl(1, \sum_{i=1}^m \delta_i\Bigr)\Bigr)
# \quad\text{and}\quad
# \Bigl(\max_{i} \varepsilon_i,\ \max_{i} \delta_i\Bigr).
# $$
#
# The ledger's total, `ledger.total()`, is the cost of the sequential scope that holds
# everything. A draw is recorded by `PrivacyLedger.charge(mechanism, *, epsilon, delta=0,
# sensitivity, scale, label="")`, which every mechanism of the library calls when it is given
# `ledger=`: it computes the total the draw would give and, if that exceeds the budget,
# raises `BudgetExceededError` and records nothing. The two rules are the two methods of
# `PrivacyCost`, the $(\varepsilon, \delta)$ pair: `then` (sequential)
#
# ```{literalinclude} ../src/dpkmeans/privacy/accounting.py
# :language: python
# :pyobject: PrivacyCost.then
# :start-at: return
# :dedent: 8
# ```
#
# and `alongside` (parallel):
#
# ```{literalinclude} ../src/dpkmeans/privacy/accounting.py
# :language: python
# :pyobject: PrivacyCost.alongside
# :start-at: return
# :dedent: 8
# ```
#
# The whole ledger is `src/dpkmeans/privacy/accounting.py` in
# {source-archive}`the book's source`.
#
# Here is the ledger of one DP-Lloyd iteration on $[-1, 1]^2$ with $k = 3$ clusters: each
# cluster's (sum, count) vector is released with the Laplace mechanism at
# $\varepsilon = 0.5$, in parallel over clusters, and the centroid is computed by
# post-processing.

# %%
bounds = (-np.ones(2), np.ones(2))
delta1 = lloyd_query_sensitivity(bounds).per_cluster  # d r + 1 = 3
true_stats = np.array([[12.0, -3.0, 40.0],  # one row per cluster: (S_j, n_j)
                       [-20.0, 5.0, 55.0],
                       [4.0, 30.0, 61.0]])
ledger = PrivacyLedger(budget=0.5)
with ledger.sequential("iteration 1"), ledger.parallel("clusters"):
    for j, row in enumerate(true_stats):
        with ledger.part(f"cluster {j}"):
            noisy = laplace_mechanism(row, delta1, 0.5, rng, ledger=ledger,
                                      label="(S_j, n_j)")
            ledger.post_process("centroid = S'_j / max(n'_j, 1)")
print(f"composed total: epsilon = {number(ledger.total().epsilon)}; "
      f"budget fully spent: {yes_no(ledger.is_fully_spent())}")

# %% tags=["hide-input"]
entries = ledger.to_frame()
free = entries["mechanism"] == "post-processing"
entries.loc[free, ["sensitivity", "scale"]] = np.nan  # shown as a dash
prefix = "iteration 1 > clusters[parallel] > "  # the scope every entry shares
assert entries["scope"].str.startswith(prefix).all()
entries["part"] = entries["scope"].str.removeprefix(prefix)
table(entries[["part", "mechanism", "label", "epsilon", "sensitivity", "scale"]]
      .rename(columns={"label": "what", "epsilon": "ε", "sensitivity": "Δ₁"}),
      name="ch3-ledger")

# %% [markdown]
# Every entry's scope is `iteration 1 > clusters[parallel] > cluster j`: the sequential
# scope of the iteration, the parallel scope over clusters, and the part of cluster $j$; the
# table shows the last step. The three releases cost $\varepsilon = 0.5$ each, but they sit
# in the three parts of one parallel scope, so the iteration costs $0.5$, and the ledger's
# budget of $0.5$ is spent exactly.
#
# ## Checking the rules from samples
#
# As in {numref}`chapter %s <ch-laplace>`, we check a guarantee by simulation: draw many
# outputs on $D$ and on $D'$, histogram them, and estimate the privacy loss in each bin as the
# log ratio of the two histograms. Each bin gets a simultaneous 99.9% confidence interval
# (Clopper-Pearson intervals for the two bin frequencies, corrected for the number of bins),
# and from them we get a *lower confidence bound* on the largest privacy loss: with 99.9%
# confidence the true loss exceeds it somewhere. A correct accounting says this bound is at
# most the $\varepsilon$ the ledger reports.
#
# Several releases at once give a vector of outputs, which we cannot histogram finely. But we
# can compute, for each simulated output vector $y$, its exact privacy loss
# $\mathcal L(y) = \ln p_D(y) / p_{D'}(y)$ (for independent Laplace releases, the sum of the
# per-release losses), and histogram that single number. Nothing is lost: where this
# statistic takes the value $v$, its own densities under $D$ and $D'$ differ by exactly the
# factor $e^{v}$, so the privacy loss measured on the statistic is the privacy loss of the
# whole output.
#
# ### Sequential composition
#
# Release the same count twice, at $\varepsilon_1 = 0.3$ and $\varepsilon_2 = 0.7$, on
# neighbours whose counts are 100 and 101.

# %%
def joint_loss(outputs: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
               scales: np.ndarray) -> np.ndarray:
    """Exact privacy loss of independent Laplace releases (one column per release)."""
    return sum(laplace_privacy_loss(outputs[:, i], mu0[i], mu1[i], scales[i])
               for i in range(outputs.shape[1]))


def observed_epsilon(out_D: np.ndarray, out_Dprime: np.ndarray, mu0, mu1,
                     scales) -> tuple[float, float]:
    """(point estimate, 99.9% lower bound) of the largest privacy loss of a joint
    release, measured on the histogram of its exact privacy loss."""
    mu0, mu1, scales = np.asarray(mu0), np.asarray(mu1), np.asarray(scales)
    stat_D = joint_loss(out_D, mu0, mu1, scales)
    stat_Dp = joint_loss(out_Dprime, mu0, mu1, scales)
    edges = np.linspace(min(stat_D.min(), stat_Dp.min()) - 1e-9,
                        max(stat_D.max(), stat_Dp.max()) + 1e-9, 41)
    est = estimate_log_ratios(stat_D, stat_Dp, edges, min_count=50)
    return est.max_abs_estimate(), est.epsilon_lower_bound()


eps_pair = np.array([0.3, 0.7])
seq_ledger = PrivacyLedger()  # the ledger of one run: two releases of the same count
for e in eps_pair:
    laplace_mechanism(100.0, 1.0, e, rng, ledger=seq_ledger)
# Many independent runs on D and on D' (not accounted: this simulates the attacker).
draws_D = [laplace_mechanism(100.0, 1.0, e, rng, ledger=None, repeats=N_SAMPLES)
           for e in eps_pair]
draws_Dp = [laplace_mechanism(101.0, 1.0, e, rng, ledger=None, repeats=N_SAMPLES)
            for e in eps_pair]
scales = np.array([laplace_scale(1.0, e) for e in eps_pair])
ledger_total = seq_ledger.total().epsilon
estimate, lower = observed_epsilon(np.column_stack(draws_D),
                                   np.column_stack(draws_Dp),
                                   [100.0, 100.0], [101.0, 101.0], scales)
print(f"ledger (one run): {ledger_total:.3f}")
print(f"observed loss: estimate {estimate:.3f}, 99.9% lower bound {lower:.3f}")

# %% tags=["remove-cell"]
glue("ch3_seq_estimate", round(estimate, 3), display=False)

# %% [markdown]
# The largest observed loss, {glue}`ch3_seq_estimate`, sits at
# $\varepsilon_1 + \varepsilon_2 = 1$: when both outputs fall on the same side of the two
# true counts, the two losses add up and the bound is attained. Sequential composition is
# tight here.
#
# ### Parallel composition, and why it needs add/remove
#
# Four clusters, counts released with $\varepsilon = 0.5$ each, in parallel. Under add/remove
# the neighbour has one extra record in cluster 2; under replace, one record moves from
# cluster 1 to cluster 2. (Clusters are numbered from 0.)

# %%
eps_cluster = 0.5
counts_D = np.array([40.0, 55.0, 61.0, 20.0])
neighbours = {
    "add/remove": counts_D + np.array([0, 0, 1, 0]),
    "replace": counts_D + np.array([0, -1, 1, 0]),
}
b = laplace_scale(1.0, eps_cluster)
rows = []
for relation, counts_Dp in neighbours.items():
    par_ledger = PrivacyLedger(neighbour=relation)
    try:
        with par_ledger.parallel("clusters"):
            for j in range(4):
                with par_ledger.part(f"cluster {j}"):
                    par_ledger.charge("Laplace", epsilon=eps_cluster, sensitivity=1.0,
                                      scale=b)
        ledger_says = "accepted"
    except ValueError:
        ledger_says = "refused"
    out_D = counts_D + rng.laplace(0.0, b, size=(N_SAMPLES, 4))
    out_Dp = counts_Dp + rng.laplace(0.0, b, size=(N_SAMPLES, 4))
    estimate, lower = observed_epsilon(out_D, out_Dp, counts_D, counts_Dp,
                                       np.full(4, b))
    rows.append({"relation": relation, "claimed ε": eps_cluster,
                 "ledger": ledger_says, "estimate": estimate,
                 "99.9% lower bound": lower})
three_decimals = {c: "{:.3f}".format for c in ("estimate", "99.9% lower bound")}
table(pd.DataFrame(rows), formats=three_decimals, name="ch3-parallel")

# %% [markdown]
# Under add/remove the observed loss matches the ledger's $\max_j \varepsilon_j = 0.5$. Under
# replace the lower confidence bound is well above 0.5: the parallel rule *undercounts* when
# one record can touch two parts. A ledger whose neighbour relation is replace therefore
# refuses parallel scopes (it raises a `ValueError`, as above): charge the touched clusters
# sequentially, or release all clusters at once with the *joint* sensitivity, the
# sensitivity of all clusters' statistics together ($2(dr + 1)$ on $[-r, r]^d$ under
# replace, by {prf:ref}`thm-lloyd-sensitivity`), which is what the library's DP-Lloyd does
# under replace adjacency.
#
# ### Post-processing
#
# Clamp and round a noisy count, $g(y) = \max(\operatorname{round}(y), 1)$, as DP-Lloyd does
# before dividing. The output is now discrete, so we compare frequencies of each value
# directly.

# %%
raw_D = laplace_mechanism(3.0, 1.0, 1.0, rng, ledger=None, repeats=N_SAMPLES)
raw_Dp = laplace_mechanism(4.0, 1.0, 1.0, rng, ledger=None, repeats=N_SAMPLES)
post_D = np.maximum(np.round(raw_D), 1.0)
post_Dp = np.maximum(np.round(raw_Dp), 1.0)
edges = np.arange(0.5, 12.5, 1.0)  # one bin per integer value 1..11
post = estimate_log_ratios(post_D, post_Dp, edges, min_count=50)
print("epsilon = 1; after post-processing, the largest |log ratio|:")
print(f"estimate {post.max_abs_estimate():.3f}, "
      f"99.9% lower bound {post.epsilon_lower_bound():.3f}")

# %% [markdown]
# Post-processing cannot increase the privacy loss. Here it does not decrease it either: the
# clamped value 1 collects the whole left tail and the largest values the right tail, where the
# two Laplace densities differ by exactly $e^{\pm\varepsilon}$, so the loss still reaches
# $\pm 1$, and the lower confidence bound stays within it.
#
# ### The ledger refuses to overspend
#
# A ledger with a declared budget checks every draw *before* any noise is drawn. Here three
# iterations each ask for $\varepsilon = 0.4$ from a budget of 1:

# %%
strict = PrivacyLedger(budget=1.0)
for t in range(1, 4):
    try:
        laplace_mechanism(np.zeros(3), 3.0, 0.4, rng, ledger=strict,
                          label=f"iteration {t}")
        print(f"iteration {t}: released, total now {number(strict.total().epsilon)}")
    except BudgetExceededError as err:
        print(f"iteration {t}: refused, with the message")
        print(textwrap.fill(str(err), width=80, initial_indent="  ",
                            subsequent_indent="  "))

# %% [markdown]
# The third draw would have taken the total past the budget; the ledger refused it,
# recorded nothing, and no noise was drawn.
#
# (sec-tight-composition)=
# ## Tight composition
#
# Sequential composition charges every release its *worst* privacy loss and adds the worst
# cases. For pure $\varepsilon$-DP that is the right answer: the simulation above attained
# it. But a privacy loss near its worst case is rare, and at $\delta > 0$ we may ignore
# outputs of total probability about $\delta$; the sum of many losses then stays far below
# the sum of their maxima. Advanced composition {cite}`dwork2010boosting` turns this
# into a formula, $T$ releases at $\varepsilon_0$ costing about
# $\varepsilon_0\sqrt{2T\ln(1/\delta')} + T\varepsilon_0(e^{\varepsilon_0} - 1)$ at
# $\delta'$, and {cite:t}`kairouz2015composition` found the optimal bound for mechanisms
# known only by $(\varepsilon, \delta)$. When we know *what* each release is (Laplace noise
# of a given scale, Gaussian noise of a given $\sigma$), three accountings do better still.
# Each gives a valid upper bound on $\varepsilon(\delta)$ of the whole run; the library's
# ledger reports each and uses the smallest.
#
# ### Gaussian DP composes exactly
#
# ```{prf:theorem} Composition of Gaussian DP
# :label: thm-gdp-composition
#
# If $M_i$ is $\mu_i$-GDP for $i = 1, \dots, T$ (each possibly chosen after seeing the
# earlier outputs), the sequence is $\mu$-GDP with $\mu^2 = \sum_i \mu_i^2$. For Gaussian
# mechanisms ($\mu_i = \Delta_{2,i}/\sigma_i$) the result is exact: the sequence has the
# privacy profile of one Gaussian release with noise multiplier $\mu$
# ({cite:t}`dong2022gaussian`, Corollary 3.3).
# ```
#
# ```{prf:proof}
# (Sketch, for Gaussian mechanisms.) By {prf:ref}`lem-gaussian-loss`, the privacy loss of
# release $i$ is $\mathcal N(\mu_i^2/2, \mu_i^2)$ under $D$ and $\mathcal N(-\mu_i^2/2,
# \mu_i^2)$ under $D'$, whatever the earlier outputs were (they only choose the query, whose
# sensitivity bounds $\mu_i$). The noises are independent and the joint density factorises,
# so, as in the proof of {prf:ref}`thm-sequential`, the losses add: the total loss is
# $\mathcal N(\mu^2/2, \mu^2)$ under $D$ and $\mathcal N(-\mu^2/2, \mu^2)$ under $D'$, the
# losses of a single Gaussian release with multiplier $\mu$. The smallest $\delta$ at each
# $\varepsilon$ depends on the two loss distributions only (proof of
# {prf:ref}`thm-gaussian-exact`), so the sequence has the profile $\delta_\mu(\varepsilon)$ of
# {prf:ref}`thm-gdp-to-dp`. For general $\mu_i$-GDP mechanisms the proof composes trade-off
# functions instead of losses ({cite:t}`dong2022gaussian`, section 3).
# ```
#
# So $T$ Gaussian releases with equal $\mu_i$ cost $\mu = \mu_i\sqrt T$: the noise must grow
# like $\sqrt T$, where basic composition, splitting $\varepsilon$ and $\delta$ into $T$
# parts, makes it grow nearly like $T$.
#
# ### zCDP: ρ adds
#
# ```{prf:theorem} Composition of zCDP
# :label: thm-zcdp-composition
#
# If $M_i$ is $\rho_i$-zCDP, the (adaptive) sequence is $\sum_i \rho_i$-zCDP (Bun and
# Steinke 2016, Lemma 2.3). An $\varepsilon$-DP mechanism is $\varepsilon^2/2$-zCDP (their
# Proposition 1.4), and the Gaussian mechanism is $\mu^2/2$-zCDP ({numref}`chapter %s
# <ch-gaussian>`). A $\rho$-zCDP mechanism is $(\varepsilon, \delta)$-DP for
#
# $$\delta = \inf_{a > 1} \frac{e^{(a - 1)(a\rho - \varepsilon)}}{a - 1}
#   \Big(1 - \frac 1a\Big)^{a}$$
#
# ({cite:t}`canonne2020discrete`, Corollary 13).
# ```
#
# ```{prf:proof}
# (Sketch of the composition.) For independent releases the density of the pair factorises,
# so $\int p^a q^{1-a}$ factorises and the Rényi divergence of order $a$ of the pair is the
# sum of the two divergences, each at most $\rho_i a$. An adaptive second release has this
# bound for every value of the first output, which is enough (integrate the second release
# out first).
# ```
#
# zCDP is the accounting that covers both kinds of noise: a run mixing Laplace and Gaussian
# releases adds $\varepsilon_i^2/2$ and $\mu_j^2/2$. Its conversion to $(\varepsilon, \delta)$
# is valid but not exact (for Gaussian noise it lies above the exact $\varepsilon$, as in
# {numref}`chapter %s <ch-gaussian>`), and for a few Laplace releases it can be worse than
# adding the epsilons: the $\varepsilon^2/2$ bound forgets that a Laplace loss is bounded.
#
# ### Privacy-loss distributions
#
# ```{prf:definition} Privacy-loss distribution
# :label: def-pld
#
# The **privacy-loss distribution** (PLD) of $M$ on the neighbours $(D, D')$ is the
# distribution of $\mathcal L(Y) = \ln p_D(Y)/p_{D'}(Y)$ for $Y \sim M(D)$. A pair whose
# PLD bounds every other pair's (for Laplace or Gaussian noise: the two values at the
# sensitivity's distance) is a *dominating pair*, and its PLD is *the* PLD of $M$.
# ```
#
# ```{prf:theorem} Privacy profile and composition from the PLD
# :label: thm-pld
#
# (a) The smallest $\delta$ for which $M$ is $(\varepsilon, \delta)$-DP on the pair is
# $\delta(\varepsilon) = \mathbb E\big[(1 - e^{\varepsilon - \mathcal L})_+\big]$,
# the expectation over the PLD. (b) The PLD of a sequence of independent releases is the
# convolution of their PLDs.
# ```
#
# ```{prf:proof}
# (a) As in the proof of {prf:ref}`thm-gaussian-exact`, the worst set is
# $E^* = \{\mathcal L > \varepsilon\}$ and $\delta(\varepsilon) = \Pr_{M(D)}[E^*] -
# e^{\varepsilon}\Pr_{M(D')}[E^*]$. Since $p_{D'} = e^{-\mathcal L} p_D$,
# $\Pr_{M(D')}[E^*] = \mathbb E_{M(D)}[e^{-\mathcal L}\,\mathbb 1\{\mathcal L > \varepsilon\}]$,
# and the difference is $\mathbb E[(1 - e^{\varepsilon - \mathcal L})\,\mathbb 1\{\mathcal L >
# \varepsilon\}]$. (b) The losses of independent releases add (proof of
# {prf:ref}`thm-sequential`), and the law of a sum of independent variables is the
# convolution of their laws.
# ```
#
# Basic composition replaces each loss by its maximum $\varepsilon_i$ and adds the maxima.
# The PLD keeps the whole distribution: a Laplace loss has mean about $\varepsilon_i^2/2$
# and equals its maximum $\varepsilon_i$ only with probability one half, so the sum of many
# such losses concentrates well below $\sum_i \varepsilon_i$, and part (a) charges the rare
# large sums only by their probability. The convolution has no closed form for Laplace noise;
# accountants compute it numerically on a grid of loss values, rounding every value up so
# that the result is an upper bound, and convolving with fast Fourier transforms
# {cite}`koskela2020computing,doroshenko2022connect` (the latter's "connect the dots"
# rounding is tighter). The library's PLD accounting is Google's `dp-accounting`
# {cite}`google2026dpaccounting`, a maintained accountant.
#
# {numref}`fig-pld` shows the total privacy loss of one run of DPLloyd-Impr on
# $[0, 1]^{10}$ with $T = 7$ and $k = 5$ (the algorithm of {cite:t}`su2016differentially`,
# {numref}`chapter %s <ch-dplloyd>`, in the library's form that releases each sum
# coordinate and the count separately: $T(d + 1) = 77$ Laplace releases, parallel over
# clusters, at budget $\varepsilon = 1$), simulated on the dominating pair of every
# release.

# %%
dim, iters, target_delta = 10, 7, 1e-6
impr_inputs = FitInputs(5, 1.0, (np.zeros(dim), np.ones(dim)), max_iter=iters,
                        n_records=10**5)
impr_ledger = plan_ledger(choice("dplloyd-impr").build(impr_inputs))
impr_releases = impr_ledger.releases()
assert len(impr_releases) == iters * (dim + 1)
assert all(r.kind == "laplace" for r in impr_releases)
total_loss = np.zeros(N_SAMPLES)
for r in impr_releases:  # loss of Laplace noise, scale 1/eps_i, on centres 0 and 1
    y = rng.laplace(0.0, 1.0 / r.epsilon, size=N_SAMPLES)
    total_loss += laplace_privacy_loss(y, 0.0, 1.0, 1.0 / r.epsilon)
impr_basic = impr_ledger.epsilon_at(target_delta, "basic")
impr_pld = impr_ledger.epsilon_at(target_delta, "pld")
print(f"{len(impr_releases)} releases; basic composition: {impr_basic:.4f}, "
      f"PLD at delta = 1e-6: {impr_pld:.4f}")
print(f"simulated total loss: mean {total_loss.mean():.4f}, largest "
      f"{total_loss.max():.4f} in {N_SAMPLES:,} runs")
# part (a) of the theorem: delta(0.2) from the samples and from dp-accounting's PLD
hinge = np.maximum(0.0, 1 - np.exp(0.2 - total_loss))
delta_sim, delta_se = hinge.mean(), hinge.std() / np.sqrt(N_SAMPLES)
composed = None
for eps_r, count in Counter(r.epsilon for r in impr_releases).items():
    one = pld.from_laplace_mechanism(1.0 / eps_r, sensitivity=1.0,
                                     value_discretization_interval=1e-4)
    one = one.self_compose(count)
    composed = one if composed is None else composed.compose(one)
delta_pld = composed.get_delta_for_epsilon(0.2)
print(f"delta(0.2) from the samples: {delta_sim:.5f} "
      f"(standard error {delta_se:.5f}), from the PLD: {delta_pld:.5f}")
assert abs(delta_sim - delta_pld) < 4 * delta_se

# %% mystnb={"figure": {"caption": "Histogram of the total privacy loss of one DPLloyd-Impr run ($d = 10$, $T = 7$, 77 Laplace releases, $\\varepsilon = 1$ by basic composition), simulated on each release's dominating pair. Basic composition charges the largest possible loss (right line); the PLD accountant's $\\varepsilon$ at $\\delta = 10^{-6}$ (middle line) is well inside.", "name": "fig-pld"}} tags=["hide-input"]
fig, ax = new_figure()
ax.hist(total_loss, bins=60, density=True, histtype="stepfilled", alpha=0.35,
        color=series_style(0)["color"], label="simulated total loss")
ax.axvline(impr_basic, label="basic composition",
           **{**series_style(1), "marker": None})
ax.axvline(impr_pld, label=r"PLD, $\varepsilon$ at $\delta = 10^{-6}$",
           **{**series_style(2), "marker": None})
ax.set_xlabel(r"total privacy loss $\mathcal{L}$")
ax.set_ylabel("density")
ax.legend()
plt.show()

# %% [markdown]
# The run's loss averages {glue:text}`ch3_impr_mean_loss` and never came near the basic
# bound in {glue:text}`ch3_n_samples` simulated runs. At $\delta = 10^{-6}$ the accountant
# certifies $\varepsilon =$ {glue:text}`ch3_impr_pld` for the budget that basic composition
# calls $\varepsilon = 1$.
#
# ### Checking the accountant
#
# The ledger records what each release is (`release=` on every entry: Laplace noise with
# $\varepsilon_i = \Delta_1/b$, Gaussian noise with $\mu_i = \Delta_2/\sigma$), and
# `ledger.epsilon_at(delta, accounting)` composes them by one accounting. Three runs, each
# with budget $(\varepsilon, \delta) = (1, 10^{-6})$ by basic composition:
#
# - **7 Gaussian releases**, each calibrated with the analytic Gaussian to
#   $(1/7, 10^{-6}/7)$, the split basic composition asks for;
# - **7 Laplace releases** at $\varepsilon_i = 1/7$;
# - **DPLloyd-Impr**, the 77 Laplace releases above (its planned ledger).
#
# We check that Gaussian DP and the PLD agree for the Gaussian releases (both are exact up to
# the PLD's rounding) and that the PLD is never above basic composition.

# %%
def gaussian_run(releases: int, epsilon: float, delta: float) -> PrivacyLedger:
    """The ledger of ``releases`` Gaussian releases of a count, each calibrated
    (analytic Gaussian) to its equal basic-composition share of (epsilon, delta)."""
    eps_i, delta_i = epsilon / releases, delta / releases
    sigma_i = gaussian_sigma_analytic(1.0, eps_i, delta_i)
    ledger = PrivacyLedger()
    for _ in range(releases):
        ledger.charge("Gaussian", epsilon=eps_i, delta=delta_i, sensitivity=1.0,
                      scale=sigma_i,
                      release=Release("gaussian", eps_i, delta_i, mu=1.0 / sigma_i))
    return ledger


def laplace_run(releases: int, epsilon: float) -> PrivacyLedger:
    """The ledger of ``releases`` Laplace releases of a count, each at
    epsilon / releases."""
    eps_i = epsilon / releases
    ledger = PrivacyLedger()
    for _ in range(releases):
        ledger.charge("Laplace", epsilon=eps_i, sensitivity=1.0,
                      scale=laplace_scale(1.0, eps_i),
                      release=Release("laplace", epsilon=eps_i))
    return ledger


runs = {"7 Gaussian releases": gaussian_run(7, 1.0, target_delta),
        "7 Laplace releases": laplace_run(7, 1.0),
        "DPLloyd-Impr, 77 Laplace releases": impr_ledger}
accountant_rows = []
for name, ledger_run in runs.items():
    row = {"run": name}
    for accounting in ACCOUNTINGS:
        eps = ledger_run.epsilon_at(target_delta, accounting)
        row[accounting] = eps if np.isfinite(eps) else np.nan  # nan: does not apply
    row["ledger's best"] = ledger_run.epsilon_at(target_delta)
    accountant_rows.append(row)
accountant = pd.DataFrame(accountant_rows).set_index("run")
gauss = accountant.loc["7 Gaussian releases"]
gdp_vs_pld = abs(gauss["gdp"] - gauss["pld"]) / gauss["gdp"]
print(f"7 Gaussian releases: GDP {gauss['gdp']:.6f}, PLD {gauss['pld']:.6f}, "
      f"relative difference {gdp_vs_pld:.1e}")
assert gdp_vs_pld < 1e-3
assert (accountant["pld"] <= accountant["basic"]).all()

# %% tags=["hide-input"]
shown_names = {"zcdp": "zCDP", "gdp": "Gaussian DP", "pld": "PLD"}
four_digits = {shown_names.get(c, c): lambda v: "–" if np.isnan(v) else f"{v:.4f}"
               for c in accountant.columns}
table(accountant.reset_index().rename(columns=shown_names), formats=four_digits,
      name="ch3-accountant")

# %% tags=["remove-cell"]
glue("ch3_impr_mean_loss", number(total_loss.mean()), display=False)
glue("ch3_n_samples", number(N_SAMPLES), display=False)
glue("ch3_impr_pld", number(impr_pld), display=False)
glue("ch3_gdp_vs_pld", number(gdp_vs_pld, digits=2), display=False)
glue("ch3_gauss_gdp", number(gauss["gdp"]), display=False)
lap7 = accountant.loc["7 Laplace releases"]
glue("ch3_lap7_pld", f"{lap7['pld']:.4f}", display=False)
glue("ch3_lap7_zcdp", number(lap7["zcdp"]), display=False)
glue("ch3_impr_zcdp", number(accountant.loc[
    "DPLloyd-Impr, 77 Laplace releases", "zcdp"]), display=False)

# %% [markdown]
# The table's dashes are accountings that do not apply (Gaussian DP needs every release to
# be Gaussian). For the Gaussian releases, Gaussian DP and the PLD agree to a relative
# {glue:text}`ch3_gdp_vs_pld`, and both certify $\varepsilon =$
# {glue:text}`ch3_gauss_gdp` where basic composition says 1, for the same noise. For 7 Laplace releases the PLD gains almost nothing
# ({glue:text}`ch3_lap7_pld`): with few releases the sum of losses reaches its maximum with
# probability $2^{-7}$, far above $\delta$, and zCDP ({glue:text}`ch3_lap7_zcdp`) is worse than
# adding. With 77 smaller releases the concentration pays: the PLD certifies
# {glue:text}`ch3_impr_pld`, and zCDP ({glue:text}`ch3_impr_zcdp`) comes close.
#
# (sec-element-composition)=
# ### A vector, composed by its elements
#
# DP-Lloyd does not release its numbers one at a time: each cluster's $(S_j, n_j)$ is one
# Laplace release of $d + 1$ numbers at $\varepsilon_t = \Delta_1 / b$. Accounted as one
# release, it is charged as if one number moved by the whole $\Delta_1$, and the
# concentration that helped DPLloyd-Impr's 77 releases never starts. But the record that
# attains $\Delta_1$ spreads it over the elements, and the noise of each element is
# independent.
#
# ```{prf:theorem} A Laplace vector, composed by its elements
# :label: thm-element-composition
#
# Let $M(D) = f(D) + Z$ release $f(D) \in \mathbb R^m$ with independent $\Lap(b)$ noise on
# every element, and let $a_1, \dots, a_m \ge 0$ bound the elements together: for every pair
# of neighbours $D \simeq D'$ and every element $e$, $|f_e(D) - f_e(D')| \le a_e$, with
# $\sum_e a_e = \Delta_1$, the $L_1$ sensitivity of $f$. Then on every pair of neighbours,
# at every $\varepsilon$, the $\delta(\varepsilon)$ of $M$ is at most that of the composition
# of $m$ Laplace releases at $\varepsilon_e = a_e / b$: $M$ is dominated by the composition of
# its elements. Its pure $\varepsilon$, $\sum_e \varepsilon_e = \Delta_1 / b$, is the
# release's own, and a pair that moves every element by its bound at once attains the bound.
# ```
#
# ```{prf:proof}
# Fix neighbours $D, D'$ and write $v_e = f_e(D') - f_e(D)$, so $|v_e| \le a_e$. The noise
# is independent per element, so $M(D)$ and $M(D')$ are the products of their elements'
# laws $\Lap(f_e(D), b)$ and $\Lap(f_e(D'), b)$, and the privacy loss is the sum of the
# elements' losses (as in the proof of {prf:ref}`thm-sequential`). One element is a pair of
# Laplace laws at distance $|v_e|$. Its likelihood ratio is monotone in the output, so the
# most powerful tests between the two laws are thresholds, and at type I error $\alpha$ the
# smallest type II error is $F\big(F^{-1}(1 - \alpha) - |v_e|\big)$, with $F$ the
# distribution function of $\Lap(0, b)$: it falls as the shift grows. The element's loss is
# therefore monotone in its shift, and the pair at distance $|v_e|$ is dominated by the pair
# at distance $a_e$, its worst case: by Blackwell's theorem some Markov kernel $K_e$ maps
# $\Lap(0, b)$ and $\Lap(a_e, b)$ to the element's two laws ({cite:t}`dong2022gaussian`,
# section 2). Applying $K_1, \dots, K_m$ element by element maps the composition of the worst
# cases onto $(M(D), M(D'))$, and post-processing does not increase $\delta(\varepsilon)$
# (an event of the output pulls back to a randomised event of the input). The pure
# $\varepsilon$ adds up to $\sum_e a_e / b = \Delta_1 / b$. Finally, a pair with
# $|v_e| = a_e$ for every $e$ at once *is* the composition of the worst cases, each element
# shifted and possibly reflected, so its $\delta(\varepsilon)$ equals the composition's.
# ```
#
# The hypothesis that the bounds add up to $\Delta_1$ is what makes the theorem worth having:
# since $\sum_e |v_e| \le \Delta_1$ for every pair, it says that the bounds can be reached
# together, by a record that moves the vector by its whole sensitivity. The library records a
# release's elements with it (`Release(..., parts=...)`, the $\varepsilon_e$). The PLD
# accounting then takes the smaller of the vector's $\varepsilon$ and its elements' composed
# $\varepsilon$ (both are upper bounds), and zCDP adds $\varepsilon_e^2 / 2$ over the
# elements, at most the vector's $\varepsilon_t^2 / 2$.
#
# - **Where it applies.** A cluster's centred $(S_j, n_j)$ under add/remove adjacency, the
#   release of DPLloyd, DP-KCCM and APDPk-means: a record added to cluster $j$ moves sum
#   coordinate $i$ by at most the half-width $r_i$ of the box (by $\max(|\ell_i|, |u_i|)$ when
#   the sums are not centred) and the count by 1, a record at a corner of the box does all of
#   that at once, and the bounds add up to $\Delta_1$ ({prf:ref}`thm-lloyd-sensitivity`).
#   Likewise the silhouette rule's noisy $(\Sigma_j, n_j)$
#   ({numref}`chapter %s <ch-silhouette>`): a record adds its silhouette, at most 1, and 1 to
#   the count.
# - **Where it does not.** Under replace adjacency (DI k-means, DPKPrototypes) a record that
#   stays in its cluster moves one sum by up to twice its bound and the count not at all,
#   while one that changes cluster moves two clusters by one bound each: no one set of
#   element bounds is reached at once by every replacement and adds up to the sensitivity, so
#   these releases are accounted as whole vectors. Nor does it cover a release whose
#   elements' bounds cannot all be reached at once: FastLloyd's offsets lie in a ball of
#   radius $r_t$ ({numref}`chapter %s <ch-fastlloyd>`), each coordinate moves by up to $r_t$
#   but not all of them together, and their bounds add up to $d\, r_t$, more than the $L_1$
#   sensitivity $\sqrt d\, r_t$ (the library refuses parts that add up to more than the
#   release's $\varepsilon$). DPLloyd-Impr needs no theorem: its elements are separate
#   releases already.
#
# The audits of the whole privacy curve found this ({ref}`sec-audit-curve`): at
# $\delta > 0$ the exact $\varepsilon$ of the audited pair, a record at a corner of
# $[-1, 1]^d$, the most any audit of it can show, lay well below what the accountant claimed
# for the vector as one release. We check the theorem on a 5-iteration DPLloyd fit at
# $\varepsilon = 1$ on $[-1, 1]^d$, from its planned ledger: the accountant's $\varepsilon$ at
# $\delta$ with the vector as one release and with its elements
# (`dpkmeans.privacy.tight.epsilon_at`), beside the exact $\varepsilon$ at $\delta$ of the
# corner pair, whose loss is the sum of the elements' Laplace losses
# (`dpkmeans.study.loss_distribution`, on a grid of step $2 \times 10^{-5}$; the accountant's
# PLD rounds up, the grid merges outputs, so the first is an upper bound and the second a
# lower one).

# %%
element_rows = []
for dim in (1, 10):
    fit_inputs = FitInputs(3, 1.0, (-np.ones(dim), np.ones(dim)), max_iter=5,
                           n_records=10**4)
    fit_releases = plan_ledger(choice("dplloyd").build(fit_inputs)).releases()
    assert all(abs(sum(r.parts) - r.epsilon) < 1e-12 for r in fit_releases)
    whole_vectors = [replace(r, parts=()) for r in fit_releases]
    element_budgets = [e.epsilon for r in fit_releases for e in r.expanded()
                       for _ in range(e.times)]
    # the corner record's loss: the sum of its elements' Laplace losses, exactly
    corner_pair = loss_distribution(np.array(element_budgets))
    for delta in (1e-2, 1e-3, target_delta):
        element_rows.append({
            "d": dim, "δ": delta,
            "ε, one release per vector": epsilon_at(whole_vectors, delta)[0],
            "ε, by elements": epsilon_at(fit_releases, delta)[0],
            "exact ε of the corner pair": corner_pair.epsilon_at(delta)})
elements = pd.DataFrame(element_rows)
element_gap = elements["ε, by elements"] - elements["exact ε of the corner pair"]
print(f"largest |accountant - exact|: {element_gap.abs().max():.1e}")
assert (element_gap >= 0).all() and element_gap.max() < 1e-3
assert (elements["ε, by elements"] < elements["ε, one release per vector"]).all()
assert elements.groupby("δ")["ε, one release per vector"].nunique().eq(1).all()
four_places = {c: "{:.4f}".format for c in elements.columns[2:]}
table(elements, formats={"δ": number, **four_places}, name="ch3-element-composition")

# %% tags=["remove-cell"]
at_1e3 = elements[elements["δ"] == 1e-3].set_index("d")
glue("ch3_elem_whole", f"{at_1e3.loc[1, 'ε, one release per vector']:.3f}",
     display=False)
glue("ch3_elem_d1", f"{at_1e3.loc[1, 'ε, by elements']:.3f}", display=False)
glue("ch3_elem_d10", f"{at_1e3.loc[10, 'ε, by elements']:.3f}", display=False)
glue("ch3_elem_gap", number(element_gap.abs().max(), digits=1), display=False)

# %% [markdown]
# Accounted as one release per vector, the fit costs {glue:text}`ch3_elem_whole` at
# $\delta = 10^{-3}$ in both dimensions. By its elements it costs {glue:text}`ch3_elem_d1` in
# one dimension and {glue:text}`ch3_elem_d10` in ten, and the exact $\varepsilon$ of the
# corner pair agrees with the accountant to {glue:text}`ch3_elem_gap`: the bound is attained
# by the corner pair, so it is the most an audit of DPLloyd can show at that $\delta$, and
# what the audits of {numref}`Section {number} ({name}) <ch-auditing-algorithms>` aim at.
# The more elements a vector has, the more its loss concentrates, exactly as for
# DPLloyd-Impr's separate releases.

# %% [markdown]
# ### Exact samplers and the continuous model
#
# The library draws Laplace noise exactly, as a *discrete* Laplace on a public grid of step
# $g = 2^{-30}$ ({numref}`chapter %s <ch-auditing>`), and its pure $\varepsilon$ is exact.
# For $\delta > 0$ the ledger accounts such a release as the *continuous* Laplace mechanism of
# the same scale: the PLD of a discrete Laplace with a sensitivity of $2^{30}$ grid steps
# has about $2^{31}$ loss values, too many to enumerate. We check the model where the exact
# computation is feasible: `dp-accounting` builds the PLD of the discrete Laplace
# (`from_discrete_laplace_mechanism(parameter, sensitivity=s)`, noise
# $\Pr[k] \propto e^{-\text{parameter}\,|k|}$ on the integers) for a sensitivity of $s$ grid
# steps and parameter $\varepsilon_i / s$, so that its pure $\varepsilon$ is $\varepsilon_i$
# for every $s$, and we compare with `from_laplace_mechanism` for $s = 2^4, \dots, 2^{12}$:
# seven releases at $\varepsilon_i = 1/7$, read at $\delta = 10^{-6}$.

# %%
STEP_EXPONENTS = range(4, 13, 2)  # sensitivity of 2^4 ... 2^12 grid steps
eps_i, interval = 1.0 / 7, 1e-5
continuous = pld.from_laplace_mechanism(1.0 / eps_i, sensitivity=1.0,
                                        value_discretization_interval=interval)
eps_continuous = continuous.self_compose(7).get_epsilon_for_delta(target_delta)
sampler_rows = []
for exponent in STEP_EXPONENTS:
    steps = 2**exponent
    discrete = pld.from_discrete_laplace_mechanism(
        eps_i / steps, sensitivity=steps, value_discretization_interval=interval,
        use_connect_dots=True)
    eps_discrete = discrete.self_compose(7).get_epsilon_for_delta(target_delta)
    sampler_rows.append({"sensitivity in grid steps": steps,
                         "ε, discrete": eps_discrete, "ε, continuous": eps_continuous,
                         "discrete − continuous": eps_discrete - eps_continuous})
samplers = pd.DataFrame(sampler_rows)
gaps = samplers["discrete − continuous"]
assert (gaps > 0).all() and gaps.is_monotonic_decreasing
assert gaps.iloc[-1] < 1e-8
# the gap shrinks at least as fast as 1/s: s times the gap does not grow
assert (gaps * samplers["sensitivity in grid steps"]).is_monotonic_decreasing
table(samplers, formats={"ε, discrete": "{:.10f}".format,
                         "ε, continuous": "{:.10f}".format,
                         "discrete − continuous": lambda v: number(v, digits=2)},
      name="ch3-samplers")

# %% tags=["remove-cell"]
glue("ch3_gap_first", number(gaps.iloc[0], digits=2), display=False)
glue("ch3_gap_last", number(gaps.iloc[-1], digits=2), display=False)
glue("ch3_gap_steps_last", number(samplers["sensitivity in grid steps"].iloc[-1]),
     display=False)

# %% [markdown]
# The discrete curve lies *above* the continuous one, by {glue:text}`ch3_gap_first` at
# $2^4$ steps and {glue:text}`ch3_gap_last` at {glue:text}`ch3_gap_steps_last` steps:
# the discrete noise puts a little more mass where the loss takes its largest value, so the
# continuous model is slightly optimistic, and the gap shrinks at least as fast as
# $1/s$. What this does and does not show:
#
# - it shows, with a maintained accountant, that the discrete profile converges to the
#   continuous one as the grid refines, and how fast, on grids up to $2^{12}$ steps per unit
#   of sensitivity;
# - it does *not* compute the profile at the library's grid (about $2^{30}$ steps): there the
#   gap is an extrapolation of the trend, many orders of magnitude below the $10^{-3}$
#   relative tolerance the ledger allows itself and below the accountant's own rounding of
#   the loss, but not a proof;
# - the pure $\varepsilon$ of the discrete sampler needs no model: it is exact, and basic
#   composition of it is exact too. The rounding of the query to the grid is accounted
#   separately, by rounding the sensitivity up to whole grid steps
#   ({numref}`chapter %s <ch-auditing>`).
#
# ### Noise per coordinate at equal privacy
#
# What the tighter accounting buys a clustering run is less noise at the same guarantee.
# `noise_per_coordinate` in `dpkmeans.synthesis.noise_table` builds three forms of DPLloyd
# and DPLloyd-Impr at $(\varepsilon, \delta) = (1, 10^{-6})$ on $[0, 1]^d$, $k = 5$, $T = 7$:
# the pure algorithm with Laplace noise, its budget spent by basic composition; the same
# algorithm with its schedule scaled up until the PLD of its Laplace releases reaches the
# target; and its Gaussian twin, each cluster's $(S_j, n_j)$ released with (colored)
# Gaussian noise, calibrated by Gaussian DP. The table gives the standard deviation of the
# noise on one coordinate of a cluster's sum in the first iteration, computed from the
# planned calibrations (no data, no draws).

# %%
noise_table = noise_per_coordinate(dims=(2, 10, 50), epsilon=1.0, delta=target_delta,
                                   iterations=iters)
assert (noise_table["Laplace PLD / pure"] <= 1).all()
assert (noise_table["Gaussian / pure"] < 1).all()
ratio_digits = {c: "{:.4f}".format for c in ("Laplace PLD / pure", "Gaussian / pure")}
table(noise_table, formats=ratio_digits, name="ch3-noise-table", wide=True)

# %% tags=["remove-cell"]
at10 = noise_table.set_index(["algorithm", "d"])
glue("ch3_gauss_ratio_d10", number(at10.loc[("dplloyd", 10), "Gaussian / pure"]),
     display=False)
glue("ch3_gauss_ratio_d50", number(at10.loc[("dplloyd", 50), "Gaussian / pure"]),
     display=False)
glue("ch3_impr_t50", int(at10.loc[("dplloyd-impr", 50), "T"]), display=False)
glue("ch3_impr_lap_d10", number(at10.loc[("dplloyd-impr", 10), "Laplace PLD / pure"]),
     display=False)
glue("ch3_dplloyd_lap_d10", number(at10.loc[("dplloyd", 10), "Laplace PLD / pure"]),
     display=False)
glue("ch3_dplloyd_lap_d2", number(at10.loc[("dplloyd", 2), "Laplace PLD / pure"]),
     display=False)
lloyd_pld = at10.loc["dplloyd", "Laplace PLD / pure"]
assert lloyd_pld.is_monotonic_decreasing and lloyd_pld.iloc[0] < 0.95
assert (noise_table["Gaussian / pure"] < noise_table["Laplace PLD / pure"]).all()
# the exercise: releases of a count with sigma = 20 inside (1, 1e-6)
t_gdp = int(np.floor((20 * gdp_mu(1.0, target_delta)) ** 2))
assert gdp_epsilon(np.sqrt(t_gdp) / 20, target_delta) <= 1.0
t_basic = 1
while (t_basic + 1) * gdp_epsilon(1 / 20, target_delta / (t_basic + 1)) <= 1.0:
    t_basic += 1
glue("ch3_ex_t_gdp", t_gdp, display=False)
glue("ch3_ex_t_basic", t_basic, display=False)

# %% [markdown]
# DPLloyd's 7 releases of $(S_j, n_j)$ are accounted by their $7(d + 1)$ elements
# ({prf:ref}`thm-element-composition`), so the PLD helps it as it helps DPLloyd-Impr, whose
# elements are separate releases: a ratio of {glue:text}`ch3_dplloyd_lap_d2` at $d = 2$ and
# {glue:text}`ch3_dplloyd_lap_d10` at $d = 10$ (DPLloyd-Impr: {glue:text}`ch3_impr_lap_d10`),
# and the more elements, the more it helps. The Gaussian twin's noise is smaller still,
# {glue:text}`ch3_gauss_ratio_d10` of the pure noise at $d = 10$ and
# {glue:text}`ch3_gauss_ratio_d50` at $d = 50$: Gaussian noise is scaled to the $L_2$
# sensitivity, which grows like $\sqrt d$ where the $L_1$ sensitivity grows like $d$. At
# $d = 50$ DPLloyd-Impr chooses
# $T =$ {glue:text}`ch3_impr_t50` iterations itself, which is why its column $T$ differs.
# {numref}`Chapter %s <ch-synthesis>` compares all algorithms this way.

# %% [markdown]
# ## Composition under differential identifiability
#
# One of the five papers this book reproduces, {cite:t}`shang2021di`, states its guarantees in
# *differential identifiability* (DI) {cite}`lee2012differential` rather than in
# $\varepsilon$, and gives its own composition rule. We meet DI properly in
# {numref}`chapter %s <ch-identifiability>`; here we check that rule.
#
# DI asks how well an adversary can identify one person. Suppose the adversary knows every
# record but one, the set $D_0$, and knows that the missing record is one of $m$ candidates
# $x_1, \dots, x_m$, each equally likely before the release. That gives $m$ *possible
# worlds*, the datasets $D_0 \cup \{x_i\}$. After seeing the output of $M$, the adversary's
# *posterior* is the probability, given the output, that each world is the true one.
#
# ```{prf:definition} $\rho$-differential identifiability
# :label: def-di
#
# $M$ is $\rho$-DI if, for every $D_0$, every set of $m$ candidates and every output, the
# adversary's posterior probability of the true world is at most $\rho$. Since a blind guess
# is right with probability $1/m$, the guarantee is meaningful for $1/m < \rho < 1$.
# ```
#
# ```{prf:theorem} From $\varepsilon$ to $\rho$
# :label: thm-di-epsilon
#
# Under replace adjacency, an $\varepsilon$-DP mechanism is $\rho$-DI with
# $\rho = e^{\varepsilon} / (m - 1 + e^{\varepsilon})$; equivalently
# $\varepsilon = \ln\frac{(m-1)\rho}{1-\rho}$.
# ```
#
# ```{prf:proof}
# Any two possible worlds differ by replacing one record, so they are neighbours and their
# output densities differ by a factor of at most $e^{\varepsilon}$: $p_w(y) \ge
# e^{-\varepsilon} p_{w^*}(y)$ for every world $w$, where $w^*$ is the true world. With a
# uniform prior, the posterior of $w^*$ given the output $y$ is
#
# $$
# \begin{aligned}
# \frac{p_{w^*}(y)}{\sum_w p_w(y)}
#   &\le \frac{p_{w^*}(y)}{p_{w^*}(y) + (m-1)\,e^{-\varepsilon} p_{w^*}(y)} \\
#   &= \frac{1}{1 + (m-1)\,e^{-\varepsilon}} = \frac{e^{\varepsilon}}{m - 1 + e^{\varepsilon}}.
# \end{aligned}
# $$
#
# Solving $\rho = e^{\varepsilon}/(m - 1 + e^{\varepsilon})$ for $\varepsilon$ gives the
# inverse map.
# ```
#
# {cite:t}`shang2021di` compose $q$ mechanisms that are $\rho_i$-DI into one that is
# $m^{q-1}\prod_i \rho_i$-DI (their Proposition 2). Composing in $\varepsilon$ instead, by
# mapping each $\rho_i$ to its $\varepsilon(\rho_i)$, adding them up
# ({prf:ref}`thm-sequential`) and mapping the total back with {prf:ref}`thm-di-epsilon`,
# gives the posterior bound $\rho\big(\sum_i \varepsilon(\rho_i)\big)$. The library has both,
# as `compose_rho_published(rhos, m)` (computed in log space) and
# `compose_rho_exact(rhos, m)` in `dpkmeans.privacy.identifiability`. We compare them for $q = 1$ to
# $6$ mechanisms, first with two candidates and $\rho_i = 0.6$, then with 10,001 candidates
# and $\rho_i = 0.0005$.

# %%
from dpkmeans.privacy.identifiability import (
    compose_rho_exact,
    compose_rho_published,
    epsilon_from_rho,
)

di_rows = []
for m, rho_i in ((2, 0.6), (10001, 0.0005)):
    for q in range(1, 7):
        di_rows.append({"m": m, "ρ of each": rho_i, "mechanisms": q,
                        "total ε": q * epsilon_from_rho(rho_i, m),
                        "published bound": compose_rho_published([rho_i] * q, m),
                        "composed in ε": compose_rho_exact([rho_i] * q, m)})
di_table = pd.DataFrame(di_rows)
assert (di_table["published bound"] >= di_table["composed in ε"] * (1 - 1e-12)).all()
table(di_table, name="ch3-di-composition")

# %% tags=["remove-cell"]
m2 = di_table[di_table["m"] == 2]
first_vacuous = m2[m2["published bound"] >= 1].iloc[0]
glue("ch3_di_vacuous_m2", int(first_vacuous["mechanisms"]), display=False)
glue("ch3_di_exact_there", number(first_vacuous["composed in ε"]), display=False)

# %% [markdown]
# The published bound is never below the posterior bound from $\varepsilon$ composition, so
# it is a valid upper bound ({numref}`ex-ch3-di-gap` proves it for two mechanisms). But it is
# loose, and it grows past 1, where it says nothing: with $m = 2$ and $\rho_i = 0.6$ it is
# vacuous from {glue}`ch3_di_vacuous_m2` mechanisms on, while composing in $\varepsilon$
# still bounds the posterior by {glue:text}`ch3_di_exact_there` there.
# {numref}`Chapter %s <ch-identifiability>` therefore composes in $\varepsilon$ and maps back
# once at the end.
#
# ## Allocating a budget over iterations
#
# Sequential composition turns "how private is DP-Lloyd?" into "how is the budget
# $\varepsilon$ split over the $T$ iterations?". A *schedule* is that split,
# $\varepsilon_1, \dots, \varepsilon_T$ with $\sum_t \varepsilon_t \le \varepsilon$. Three
# classic answers, each a function of the library's `dpkmeans.engine.schedules`:
#
# - **uniform**, $\varepsilon_t = \varepsilon / T$: the baseline of
#   {cite:t}`su2016differentially`;
# - **halving**, $\varepsilon_t = \varepsilon / 2^t$: works when $T$ is not known in advance,
#   but front-loads the budget and never spends all of it;
# - **series-sum**, $\varepsilon_t = \varepsilon / (t(t+1))$: a telescoping series
#   ($\sum_{t \le T} \varepsilon_t = \varepsilon\, T/(T+1)$) that decays polynomially, so late
#   iterations keep more budget than under halving.
#
# The later chapters study the papers' own schedules: the stepped budget of
# {cite:t}`ni_dpkccm` ({numref}`chapter %s <ch-dpkccm>`), the silhouette-weighted split of
# {cite:t}`zhang2018contour` ({numref}`chapter %s <ch-silhouette>`) and the reversed arithmetic
# progression of the APDPk-means paper ({numref}`chapter %s <ch-schedules>`). Here we run each
# classic schedule through a ledger, exactly as a DP-Lloyd run would spend it (parallel over
# $k = 3$ clusters inside each iteration), and look at the noise each iteration receives: the
# standard deviation of one coordinate of the noisy sum, divided by a cluster size of 200
# records, for data in $[-1, 1]^2$ ($\Delta_1 = 3$).

# %%
allocations = {  # the classic, open-ended forms
    "uniform": schedules.uniform(EPSILON_TOTAL, ITERATIONS),
    "halving": schedules.halving(EPSILON_TOTAL, ITERATIONS, normalise=False),
    "series-sum": schedules.series_sum(EPSILON_TOTAL, ITERATIONS, normalise=False),
}
budgets, summary_rows = {}, []
for name, eps_t in allocations.items():
    run_ledger = PrivacyLedger(budget=EPSILON_TOTAL)
    for t, e in enumerate(eps_t, start=1):
        with run_ledger.sequential(f"iteration {t}"), run_ledger.parallel("clusters"):
            for j in range(3):
                with run_ledger.part(f"cluster {j}"):
                    run_ledger.charge("Laplace", epsilon=e, sensitivity=delta1,
                                      scale=laplace_scale(delta1, e))
    budgets[name] = eps_t
    summary_rows.append({"schedule": name, "ε, first iteration": eps_t[0],
                         "ε, last iteration": eps_t[-1],
                         "ledger total": run_ledger.total().epsilon,
                         "unspent": run_ledger.remaining().epsilon})

# %% tags=["hide-input"]
schedule_table = pd.DataFrame(summary_rows)
rounded = {c: lambda v: number(round(v, 12))  # 1.1e-16 of rounding error is 0
           for c in schedule_table.columns[1:]}
table(schedule_table, formats=rounded, name="ch3-schedules")

# %% mystnb={"figure": {"caption": "Left: per-iteration budget $\\varepsilon_t$ of three schedules ($\\varepsilon = 1$, $T = 10$). Right: the resulting noise standard deviation of one centroid coordinate for a cluster of 200 records in $[-1, 1]^2$ (Laplace, $\\Delta_1 = 3$). Both on a log scale.", "name": "fig-budget-schedules"}} tags=["hide-input"]
fig, (ax0, ax1) = new_figure(ncols=2, height=3.4)
t_axis = np.arange(1, ITERATIONS + 1)
for i, (name, eps_t) in enumerate(budgets.items()):
    ax0.plot(t_axis, eps_t, label=name, **series_style(i))
    ax1.plot(t_axis, np.sqrt(2) * delta1 / eps_t / 200, label=name, **series_style(i))
ax0.set_xlabel("iteration $t$")
ax0.set_ylabel(r"$\varepsilon_t$")
ax0.set_yscale("log")
ax0.legend()
ax1.set_xlabel("iteration $t$")
ax1.set_ylabel("noise std of a coordinate")
ax1.set_yscale("log")
for ax in (ax0, ax1):
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
plt.show()

# %% [markdown]
# Halving gives the first iteration half of the budget and leaves the last with
# $\varepsilon/2^T$: its centroids are almost pure noise, and another $\varepsilon/2^T$ is
# never spent. Uniform spends everything evenly. Series-sum leaves $\varepsilon/(T+1)$ unspent,
# and its last iteration gets $\varepsilon/(T(T+1))$: more than halving's $\varepsilon/2^T$ from
# $T = 5$ on, less for $T \le 4$. With a fixed $T$ there is no reason to leave budget unused, so
# the library's `halving` and `series_sum` default to `normalise=True`: the same shape,
# rescaled to spend $\varepsilon$ exactly (the table above uses `normalise=False`). Which is
# best depends on how quickly Lloyd's iterations converge, which is exactly what the papers'
# adaptive schedules try to exploit.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - Sequential composition adds epsilons (and deltas), even when each step adapts to the
#   previous outputs; for repeated Laplace releases the bound is attained.
# - Parallel composition over parts chosen by a data-independent rule costs the *maximum*,
#   but only under add/remove adjacency; under replace, a record touches two parts and the
#   cost is their sum, which the samples confirm.
# - Post-processing of noisy outputs is free.
# - At $\delta > 0$ composition is tighter than adding worst cases: Gaussian releases
#   compose exactly by $\mu^2 = \sum_i \mu_i^2$, zCDP adds $\rho$ (also for pure
#   releases, $\rho = \varepsilon^2/2$), and the privacy-loss distribution of a run is the
#   convolution of its releases' distributions, computed by a maintained accountant. The
#   ledger reports each and uses the smallest; at the same guarantee the Gaussian twin of
#   DP-Lloyd needs a fraction of the pure algorithm's noise, the smaller the larger $d$.
# - A Laplace release of a vector whose elements' bounds a record reaches at once, such as a
#   cluster's $(S_j, n_j)$ under add/remove adjacency, is dominated by the composition of
#   one Laplace release per element, and the corner record attains it: accounted so, its
#   $\varepsilon$ at $\delta > 0$ falls the more elements it has.
# - The privacy ledger records every draw with its scope, composes them by these rules, and
#   refuses a draw that would exceed a declared budget before any noise is drawn.
# - Differential identifiability maps to $\varepsilon$ via
#   $\varepsilon = \ln\frac{(m-1)\rho}{1-\rho}$. The composition bound
#   $m^{q-1}\prod_i\rho_i$ of {cite:t}`shang2021di` is valid but loose and soon vacuous, so
#   compose in $\varepsilon$ and map back once.
# - How a budget is split over iterations changes the noise by orders of magnitude late in a
#   run; uniform, halving and series-sum are the three baselines for the papers' schedules.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch3-split
#
# A DP-Lloyd run on $[-1, 1]^d$ has $T = 5$ iterations and $k = 4$ clusters. Each iteration
# releases each cluster's sum with budget $\varepsilon_s$ and its count with budget
# $\varepsilon_c$, as two separate Laplace releases. What is the total cost under add/remove?
# Write the ledger code that confirms it.
# ```
#
# ```{solution} ex-ch3-split
# :class: dropdown
#
# Within a cluster the two releases compose sequentially ($\varepsilon_s + \varepsilon_c$);
# clusters are parallel (maximum, all equal); iterations are sequential. Total
# $T(\varepsilon_s + \varepsilon_c) = 5(\varepsilon_s + \varepsilon_c)$. In code: for each
# iteration open `ledger.sequential(...)` and `ledger.parallel("clusters")`; in each
# `ledger.part(...)` call `laplace_mechanism` twice (sensitivity $d$ for the sum, 1 for the
# count); then `ledger.total()` returns $5(\varepsilon_s + \varepsilon_c)$.
# ```
#
# ```{exercise}
# :label: ex-ch3-halving
#
# Modify the halving schedule so that it spends exactly $\varepsilon$ in $T$ iterations while
# keeping $\varepsilon_{t+1} \le \varepsilon_t$. Check the total with
# `PrivacyLedger.is_fully_spent`.
# ```
#
# ```{solution} ex-ch3-halving
# :class: dropdown
#
# Give the last iteration what halving leaves over: $\varepsilon_t = \varepsilon/2^t$ for
# $t < T$ and $\varepsilon_T = \varepsilon/2^{T-1}$. Then
# $\sum_t \varepsilon_t = \varepsilon(1 - 2^{-(T-1)}) + \varepsilon 2^{-(T-1)} = \varepsilon$,
# and $\varepsilon_T = \varepsilon_{T-1}$, so the sequence is still non-increasing. Charging
# these budgets to a ledger with `budget=epsilon`, as in the schedules cell above, makes
# `is_fully_spent()` return true.
# ```
#
# ```{exercise}
# :label: ex-ch3-replace
# :class: pen-and-paper
#
# Under replace adjacency, a run releases each cluster's (sum, count) at $\varepsilon_t$ per
# iteration with the add/remove sensitivity $dr+1$. What is its true cost over $T$ iterations,
# and what does a ledger that (wrongly) uses parallel scopes report?
# ```
#
# ```{solution} ex-ch3-replace
# :class: dropdown
#
# A replaced record can change two clusters by up to $dr + 1$ each, so each iteration costs
# $2\varepsilon_t$ and the run $2\sum_t \varepsilon_t$. A ledger with parallel scopes over
# clusters reports $\sum_t \varepsilon_t$: half the true cost. This is the error in the
# parallel-composition argument of {cite:t}`shang2021di`.
# ```
#
# ```{exercise}
# :label: ex-ch3-di-gap
# :class: pen-and-paper
#
# Take two mechanisms with $\varepsilon_1$ and $\varepsilon_2$, so that
# $\rho_i = e^{\varepsilon_i}/(m - 1 + e^{\varepsilon_i})$. Show that the published bound
# $m \rho_1 \rho_2$ is never below the posterior bound
# $e^{\varepsilon_1 + \varepsilon_2}/(m - 1 + e^{\varepsilon_1 + \varepsilon_2})$ from
# composing in $\varepsilon$, and find the difference of the two after cross-multiplying.
# ```
#
# ```{solution} ex-ch3-di-gap
# :class: dropdown
#
# Write $a = e^{\varepsilon_1}$ and $c = e^{\varepsilon_2}$. The published bound is
# $m\,ac / \big((m - 1 + a)(m - 1 + c)\big)$ and the composed one is $ac / (m - 1 + ac)$.
# Dividing both by $ac > 0$ and cross-multiplying, the published bound is at least the
# composed one exactly when $m(m - 1 + ac) \ge (m - 1 + a)(m - 1 + c)$. Expanding,
#
# $$
# \begin{aligned}
# m(m - 1 + ac) - (m - 1 + a)(m - 1 + c)
#   &= (m - 1)\big(m - (m - 1) - a - c + ac\big) \\
#   &= (m - 1)(a - 1)(c - 1) \ge 0,
# \end{aligned}
# $$
#
# since $m \ge 2$ and $a, c \ge 1$. The two agree only when one of the mechanisms has
# $\varepsilon_i = 0$, and the gap grows with both epsilons, which is why the published bound
# soon exceeds 1.
# ```
#
# ```{exercise}
# :label: ex-ch3-gdp-count
#
# A count ($\Delta_2 = 1$) is released again and again with Gaussian noise of
# $\sigma = 20$. How many releases fit in $(\varepsilon, \delta) = (1, 10^{-6})$ by
# {prf:ref}`thm-gdp-composition`? How many if each release is instead charged its own
# $(\varepsilon_i, \delta_i)$ and the charges are added, with $\delta_i = 10^{-6}/T$?
# Use `gdp_mu` and `gdp_epsilon` of `dpkmeans.privacy.tight`.
# ```
#
# ```{solution} ex-ch3-gdp-count
# :class: dropdown
#
# Gaussian DP: $T$ releases cost $\mu = \sqrt T/\sigma$, so $T$ is the largest integer
# with $\sqrt T / 20 \le$ `gdp_mu(1, 1e-6)`, that is
# $T = \lfloor (20\,\mu_{\max})^2 \rfloor =$ {glue:text}`ch3_ex_t_gdp`. Basic composition:
# each release costs `gdp_epsilon(1 / 20, 1e-6 / T)`, and the largest $T$ with $T$ times
# that at most 1 is {glue:text}`ch3_ex_t_basic`.
# ```
#
# ```{exercise}
# :label: ex-ch3-pld-gaussian
# :class: pen-and-paper
#
# Using {prf:ref}`thm-pld`, show that the PLD of $T$ Gaussian releases with multipliers
# $\mu_1, \dots, \mu_T$ is the PLD of one Gaussian release with
# $\mu^2 = \sum_i \mu_i^2$, and deduce from {prf:ref}`thm-gaussian-exact` the
# $\delta(\varepsilon)$ of the sequence.
# ```
#
# ```{solution} ex-ch3-pld-gaussian
# :class: dropdown
#
# By {prf:ref}`lem-gaussian-loss` the PLD of release $i$ is $\mathcal N(\mu_i^2/2,
# \mu_i^2)$. The convolution of independent normals is normal, with the means and variances
# added: $\mathcal N(\sum_i \mu_i^2/2, \sum_i \mu_i^2) = \mathcal N(\mu^2/2, \mu^2)$,
# the PLD of one release with multiplier $\mu$. Part (a) of {prf:ref}`thm-pld` then gives
# the same $\delta(\varepsilon)$ as for that release, which {prf:ref}`thm-gaussian-exact`
# computes: $\Phi(\mu/2 - \varepsilon/\mu) - e^{\varepsilon}\Phi(-\mu/2 -
# \varepsilon/\mu)$.
# ```
