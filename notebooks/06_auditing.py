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
# (ch-auditing)=
# # Auditing a mechanism
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - read differential privacy as a limit on how well any hypothesis test can tell two
#   neighbouring datasets apart, and turn a test into a lower bound on $\varepsilon$;
# - explain why an audit can only ever give a *lower* bound on $\varepsilon$ while a proof gives
#   an *upper* bound, and why the distinguishing event must be chosen on held-out trials;
# - audit a mechanism, or a small DP-Lloyd configuration, with `dpkmeans.study.audit` and read
#   its verdict;
# - say what it took to expose four broken variants, and why one of them (diffprivlib's swapped
#   budget split) escapes every feasible audit that sees only outputs, while the ledger records
#   it exactly;
# - measure the floating-point weakness of textbook Laplace sampling, and check that the
#   library's default sampler, which draws exact discrete noise, closes it.
#
# The second part of the chapter, {doc}`06_auditing_algorithms`, audits whole k-means fits
# with the strongest tools: the privacy loss of the whole output, a bound valid for every
# threshold at once, worst-case pairs, and audits of a single run.
#
# **Prerequisites:** the Laplace and exponential mechanisms ({doc}`01_dp_laplace`),
# $(\varepsilon, \delta)$-DP and the Gaussian mechanism ({doc}`02_gaussian_pdp`),
# composition and post-processing ({doc}`03_composition`), DPLloyd, DPLloyd-Impr and
# diffprivlib's swapped budget split ({doc}`05_dplloyd`); binomial proportions and the idea of
# a confidence interval.
# :::
#
# A proof on paper can be wrong, and so can the code that implements it.
# {numref}`Chapter %s <ch-dplloyd>` showed that a
# widely used DP k-means swaps its two budget shares while its tests pass. This chapter tests
# privacy *from the outside*: run a randomised algorithm many times on two neighbouring
# datasets and ask whether the outputs differ more than the claimed $\varepsilon$ allows. Such
# an audit is **black-box**: it sees only outputs. A **white-box** check reads the code or its
# records instead, as the ledger of {numref}`chapter %s <ch-composition>` does. The chapter's code
# runs from the fast
# defaults in the next cell (tagged `parameters`).

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
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)  # the claimed budgets of the audits
DELTA = 1e-3  # the delta of the Gaussian mechanisms
CONFIDENCE = 0.99  # confidence level of every lower bound
MECHANISM_TRIALS = 400_000  # trials per dataset for the single mechanisms
KMEANS_TRIALS = 20_000  # batched DP-Lloyd replicas per dataset
SWAP_TRIALS = 40_000  # replicas per dataset for the swapped-split attempt
SWAP_D = 24  # dimension of the swapped-split audit (diffprivlib overspends 1.62x)
FLOAT_OUTPUTS = 10_000  # Laplace outputs per dataset, floating-point measurement
SAMPLER_BENCHMARK = "benchmarks/sampler.json"  # python -m benchmarks.sampler
# chapter 7's full sweep, timed:
REPRODUCTION_BENCHMARK = "benchmarks/dpkccm_reproduction.json"

# %% tags=["hide-input"]
import dataclasses
import json
import math
import re
import time
from fractions import Fraction
from itertools import count

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display
from myst_nb import glue

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.engine.strategies import PublicStart, SuSplit
from dpkmeans.papers.di.flaws import EXACT_COUNTS, ExactCounts
from dpkmeans.papers.su.flaws import (
    SKIP_EMPTY_CLUSTERS,
    SWAPPED_SPLIT,
    SkipEmptyClusters,
    SwappedSplit,
)
from dpkmeans.papers.su.study import diffprivlib_epsilon_factor
from dpkmeans.papers.su.variants import dplloyd, dplloyd_impr
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy import noise
from dpkmeans.privacy.floating_point import (
    grid_output_possible,
    laplace_output_possible,
)
from dpkmeans.privacy.loss import laplace_loss_tails, laplace_privacy_loss
from dpkmeans.study import audit
from dpkmeans.study.committed import committed_file
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import number, percent, share, table

use_book_style()

# %% tags=["hide-input"]
next_seed = count(SEED).__next__  # every audit gets its own seed: SEED, SEED + 1, ...
REPORTS = []  # every AuditReport of the chapter, for the closing table
#: The columns of an audit report a reader reads, and their headers.
COLUMNS = {"name": "audited", "claimed_epsilon": "claimed ε",
           "lower_bound": "lower bound", "estimate": "estimate", "trials": "trials",
           "verdict": "verdict"}


def record(group: str, report: audit.AuditReport, **extra) -> audit.AuditReport:
    """Keep a report (with the chapter's grouping) for the closing table."""
    REPORTS.append({"group": group, **report.as_row(), **extra})
    return report


def show(reports, name: str):
    """Audit reports as a table to read (no timings: they differ from run to run)."""
    frame = pd.DataFrame([r.as_row() for r in reports])[list(COLUMNS)]
    return table(frame.rename(columns=COLUMNS), name=name)



# %% [markdown]
# ## Privacy as a hypothesis test
#
# Suppose an adversary sees one output of $M$ and must decide whether the data was $D$ or its
# neighbour $D'$. Whatever rule it uses, the rule is an event $E$ in the output space: "say $D$
# if the output lands in $E$".
#
# ```{prf:definition} A distinguishing test
# :label: def-distinguishing-test
#
# Let $D \simeq D'$ be neighbours and $E$ a measurable set of outputs of $M$. The test "decide
# $D$ when $M(\cdot) \in E$" has **power** $b = \Pr[M(D) \in E]$ and **false-positive rate**
# $a = \Pr[M(D') \in E]$.
# ```
#
# ```{prf:theorem} DP limits every test
# :label: thm-test-bound
#
# If $M$ is $(\varepsilon, \delta)$-DP ({prf:ref}`def-approx-dp`; $\delta = 0$ is pure DP),
# every test of {prf:ref}`def-distinguishing-test` satisfies $b \le e^{\varepsilon} a + \delta$.
# Hence a test with $b > \delta$ certifies
#
# $$\varepsilon \;\ge\; \ln \frac{b - \delta}{a}.$$
# ```
#
# ```{prf:proof}
# Apply the definition of $(\varepsilon, \delta)$-DP to the set $S = E$:
# $b = \Pr[M(D) \in E] \le e^{\varepsilon}\Pr[M(D') \in E] + \delta = e^{\varepsilon} a + \delta$.
# If $b > \delta$, divide by $a$ (if $a = 0$ no finite $\varepsilon$ satisfies the inequality)
# and take logarithms. Neighbourhood is symmetric, so the same holds with $D$ and $D'$ exchanged.
# ```
#
# This is why an audit and a proof bound $\varepsilon$ from opposite sides. Let
# $\varepsilon^\star$ be the smallest $\varepsilon$ for which $M$ is $(\varepsilon,\delta)$-DP. A
# proof shows the inequality for *every* pair of neighbours and *every* event, so
# $\varepsilon^\star \le \varepsilon_{\text{claimed}}$: an upper bound. An audit exhibits *one*
# pair and *one* event, so it shows $\varepsilon^\star \ge \ln\frac{b-\delta}{a}$: a lower bound.
# When the lower bound exceeds the claim, the claim is false. When it does not, the audit is
# merely **consistent** with the claim: a weaker pair or a weaker event may have been chosen.
#
# An audit does not know $a$ and $b$; it estimates them from $n$ runs on each dataset. To keep
# the guarantee it uses exact binomial confidence bounds.
#
# ```{prf:definition} Clopper–Pearson bounds
# :label: def-clopper-pearson
#
# For $h$ successes in $n$ independent Bernoulli($p$) trials and a level $\gamma \in (0, 1)$,
# the lower bound is $\underline{p} = \operatorname{Beta}^{-1}(\gamma;\, h, n - h + 1)$ ($0$ if
# $h = 0$) and the upper bound is $\overline{p} = \operatorname{Beta}^{-1}(1 - \gamma;\, h + 1,
# n - h)$ ($1$ if $h = n$). For every $p$, $\Pr[\underline{p} > p] \le \gamma$ and
# $\Pr[\overline{p} < p] \le \gamma$.
# ```
#
# ```{prf:theorem} A sound audit
# :label: thm-audit-bound
#
# Fix an event $E$ before the evaluation trials are drawn. Run $M$ $n_0$ times on $D$ and $n_1$
# times on $D'$ and count the outputs in $E$: $h_0$ and $h_1$. Let $\underline{b}$ be the
# Clopper–Pearson lower bound of $h_0/n_0$ and $\overline{a}$ the upper bound of $h_1/n_1$, each
# at level $\gamma/2$, and report
# $\hat\varepsilon = \ln\big((\underline{b} - \delta)/\overline{a}\big)$ (or $0$ when $\underline{b} \le \delta$). If $M$ is $(\varepsilon, \delta)$-DP, then
# $\Pr[\hat\varepsilon > \varepsilon] \le \gamma$: with confidence $1 - \gamma$, an audit never
# reports a violation of a true claim.
# ```
#
# ```{prf:proof}
# By {prf:ref}`def-clopper-pearson` and the union bound, with probability at least $1 - \gamma$
# both $\underline{b} \le b$ and $\overline{a} \ge a$. On that event, if $\underline{b} > \delta$,
# {prf:ref}`thm-test-bound` gives
# $\underline{b} - \delta \le b - \delta \le e^{\varepsilon} a \le e^{\varepsilon}\overline{a}$,
# so $\hat\varepsilon \le \varepsilon$; if $\underline{b} \le \delta$, $\hat\varepsilon = 0 \le
# \varepsilon$.
# ```
#
# The theorem needs the event to be fixed *before* the counts it is judged by. An auditor who
# tries a thousand thresholds and keeps the one with the most extreme counts on the same trials
# picks, among other things, the luckiest noise: the winner's curse. `dpkmeans.study.audit` therefore
# splits each sample at random in two: the event is chosen on the first halves and judged on
# the second. The candidate events are thresholds $s \le \tau$ or $s > \tau$ on each statistic of the
# output (at 256 quantiles of the pooled sample), in both directions ($D$ versus $D'$ and back);
# the chosen one is the candidate with the best bound on the selection half:
#
# ```{literalinclude} ../src/dpkmeans/study/audit.py
# :language: python
# :pyobject: choose_event
# ```
#
# ```{literalinclude} ../src/dpkmeans/study/audit.py
# :language: python
# :pyobject: epsilon_lower_bound
# ```
#
# `audit_mechanism(name, release, claimed_epsilon, trials=...)` calls `release(which, n, rng)`
# for $D$ (`which = 0`) and $D'$ (`which = 1`), each with its own generator, and returns an
# `AuditReport`: the lower bound, the point estimate $\ln\frac{h_0/n_0 - \delta}{h_1/n_1}$ on
# the held-out half, the event, and the verdict `consistent` or `violation detected`.
#
# **A numerical check of {prf:ref}`thm-audit-bound`.** Audit the Laplace mechanism with
# $\varepsilon = 1$ (counts $0$ and $1$, sensitivity $1$) many times over with small samples. Every
# event of this mechanism has a true log ratio of at most $1$, so each bound above $1$ is a false
# alarm; the theorem allows at most $1\%$ of them.

# %%
check_rng = np.random.default_rng(next_seed())
repetitions, small_n = 400, 4_000
bounds = []
for _ in range(repetitions):
    on_d = mech.laplace_mechanism(0.0, 1.0, 1.0, check_rng, ledger=None,
                                  repeats=small_n)
    on_d_prime = mech.laplace_mechanism(1.0, 1.0, 1.0, check_rng, ledger=None,
                                        repeats=small_n)
    bounds.append(audit.epsilon_lower_bound(on_d, on_d_prime, confidence=CONFIDENCE,
                                            rng=check_rng)[0])
bounds = np.array(bounds)
print(f"{repetitions} audits of {small_n:,} trials per dataset")
print(f"false alarms (bound > 1): {percent(np.mean(bounds > 1.0), 2)}; median bound "
      f"{number(np.median(bounds))}; largest {number(bounds.max())}")
assert np.mean(bounds > 1.0) <= 1.0 - CONFIDENCE

# %% tags=["remove-cell"]
glue("ch6_check_reps", repetitions, display=False)
glue("ch6_check_n", f"{small_n:,}", display=False)
glue("ch6_check_alarms", percent(np.mean(bounds > 1.0), 2), display=False)
glue("ch6_check_median", number(np.median(bounds), 2), display=False)

# %% [markdown]
# In {glue:text}`ch6_check_reps` audits of {glue:text}`ch6_check_n` trials per dataset, the
# fraction of false alarms is {glue:text}`ch6_check_alarms`, within the allowed $1\%$; the
# typical bound, {glue:text}`ch6_check_median`, shows what the price of soundness is at this
# sample size: the bound sits below the true $\varepsilon = 1$ by the width of the confidence
# intervals.
#
# ## Auditing correct mechanisms
#
# Each audit needs a pair of neighbours and a statistic of the output. For a single mechanism
# the worst-case pair is known from its proof; for a whole k-means run we choose a pair that
# moves the released centroid as much as one record can.
#
# One of the audited mechanisms, the library's discrete Gaussian, is calibrated through
# **zero-concentrated differential privacy (zCDP)**: $M$ is $\rho$-zCDP when, for every order
# $\alpha > 1$, the Rényi divergence of order $\alpha$ between $M(D)$ and $M(D')$ is at most
# $\rho\alpha$. A Gaussian release with $L_2$ sensitivity $\Delta_2$ and noise $\sigma$ is
# $\Delta_2^2/(2\sigma^2)$-zCDP, and a formula converts $\rho$ to an
# $(\varepsilon, \delta)$ guarantee valid in every dimension {cite}`canonne2020discrete`.
#
# | audited | $D$ vs $D'$ | statistic |
# |---|---|---|
# | Laplace, sensitivity 1 (the library's exact discrete sampler) | value $0$ vs $1$ | the output |
# | Gaussian: discrete (zCDP calibration, the default), continuous classic ($\varepsilon < 1$ only) and continuous analytic, $\delta = 10^{-3}$ | value $0$ vs $1$, $\Delta_2 = 1$ | the output |
# | exponential mechanism, $\Delta u = 1$ | $u = (0, 0, \dots, 0)$ vs $(1, -1, \dots, -1)$ over 101 options | the chosen index |
# | DPLloyd ($T = 5$) and DPLloyd-Impr, $k = 1$, $d = 1$ | 100 records at $-1$ vs the same plus one at $+1$ | the sum of the centroids of all iterations |
#
# The exponential mechanism's pair is its worst case: one option gains the full sensitivity and
# all others lose it, so the option's probability ratio approaches $e^{\varepsilon}$ as the
# number of options grows ({prf:ref}`thm-exponential`).
#
# For k-means we take $k = 1$: every record is in the one cluster whatever the centroids, so the
# (public) initialisation is irrelevant and we fix it, which also saves the time of drawing
# $20\,000$ random initialisations. The extra record at $+1$ raises the cluster's sum and count by
# one each; with the other records at $-1$ the released centroid is
# $\frac{-N + 1 + Z}{N + 1 + W} \approx -1 + \frac{2 + Z + W}{N}$, so both noises reach the
# output. With $k = 1$, though, the *final* centroid shows only the last iteration's noise, at
# most $\varepsilon/T$ of the budget. The proof of {prf:ref}`thm-dplloyd-private` covers the
# **transcript** of the run, the sequence of every iteration's released statistics (here, its
# centroids), so we audit the transcript: the statistic is the sum over iterations of the
# centroid (the engine keeps them with `record_history=True`). A small helper, in the folded
# cell below with the releases of the other mechanisms, turns a configuration into the
# `release` function that `audit_mechanism` calls; the audits are these calls.

# %% tags=["hide-input"]
def gaussian_release(epsilon: float, calibration: str | None,
                     sampler: str = "continuous"):
    def release(which, n, rng):
        return mech.gaussian_mechanism(float(which), 1.0, epsilon, DELTA, rng,
                                       ledger=None, calibration=calibration,
                                       repeats=n, sampler=sampler)
    return release


N_OPTIONS = 101
UTILITY_D = np.zeros(N_OPTIONS)
# option 0 gains 1, all others lose 1:
UTILITY_D_PRIME = np.r_[1.0, -np.ones(N_OPTIONS - 1)]


def exponential_release(epsilon: float):
    def release(which, n, rng):
        utility = UTILITY_D if which == 0 else UTILITY_D_PRIME
        return mech.exponential_mechanism(utility, 1.0, epsilon, rng, ledger=None,
                                          repeats=n)
    return release


N_RECORDS = 100
BOX1 = (-np.ones(1), np.ones(1))
# D' adds a record at +1:
KM_D, KM_D_PRIME = audit.corner_pair(-np.ones((N_RECORDS, 1)), BOX1)


def fixed_origin(bounds, k, rng):
    """A public, data-independent initialisation (irrelevant when k = 1)."""
    return np.zeros((k, bounds[0].size))


def transcript_release(config: DPLloydConfig, X0: np.ndarray, X1: np.ndarray):
    """Run the configuration on X0 (D) or X1 (D') in one batch; return, per replica,
    the sum over iterations of the (k = 1, d = 1) centroid: the transcript the proof
    covers."""
    def release(which, n, rng):
        seed = np.random.SeedSequence(int(rng.integers(2**63 - 1)))
        result = run(X0 if which == 0 else X1, config, seed, replicas=n,
                     record_history=True)
        return np.stack(result.history, axis=1)[:, :, 0, 0].sum(axis=1)
    return release


def audit_one(name: str, release, eps: float, **options) -> audit.AuditReport:
    """One audit with the chapter's next seed."""
    return audit.audit_mechanism(name, release, eps, seed=next_seed(), **options)


# %%
gaussian = {"delta": DELTA, "trials": MECHANISM_TRIALS}
correct = []
for eps in EPSILONS:
    correct.append(audit_one("Laplace", audit.laplace_count_release(eps), eps,
                             trials=MECHANISM_TRIALS))
    if eps < 1:
        correct.append(audit_one("Gaussian (classic)",
                                 gaussian_release(eps, "classic"), eps, **gaussian))
    correct.append(audit_one("Gaussian (analytic)", gaussian_release(eps, "analytic"),
                             eps, **gaussian))
    correct.append(audit_one("Gaussian (discrete)",
                             gaussian_release(eps, None, sampler="discrete"),
                             eps, **gaussian))
    correct.append(audit_one("exponential", exponential_release(eps), eps,
                             trials=MECHANISM_TRIALS))
    for label, config in [("DPLloyd (T = 5)", dplloyd(1, eps, BOX1, iterations=5)),
                          ("DPLloyd-Impr",
                           dplloyd_impr(1, eps, BOX1, n_records=N_RECORDS))]:
        config = dataclasses.replace(config, start=PublicStart(fixed_origin))
        name = (f"{label}, T = {config.iterations}" if label == "DPLloyd-Impr"
                else label)
        correct.append(audit_one(name, transcript_release(config, KM_D, KM_D_PRIME),
                                 eps, trials=KMEANS_TRIALS))
for report in correct:
    record("correct", report)
assert all(r.verdict == "consistent" for r in correct)

# %% tags=["hide-input"]
frame = pd.DataFrame([r.as_row() for r in correct])
frame["family"] = frame["name"].str.replace(r", T = \d+", "", regex=True)
frame["ratio"] = frame["lower_bound"] / frame["claimed_epsilon"]
tightness = frame.groupby("family", sort=False)["ratio"].agg(["min", "max"])
print("lower bound / claimed ε, by mechanism:")
table(tightness.reset_index().rename(columns={"family": "mechanism",
                                              "min": "lowest", "max": "highest"}),
      digits=2, name="ch6-tightness")

# %% tags=["remove-cell"]
glue("ch6_n_correct", len(correct), display=False)
for key, family, which in (("laplace", "Laplace", "min"), ("expo", "exponential", "min"),
                           ("gauss", "Gaussian (analytic)", "max"),
                           ("dgauss", "Gaussian (discrete)", "max"),
                           ("dplloyd", "DPLloyd (T = 5)", "max"),
                           ("impr", "DPLloyd-Impr", "max")):
    glue(f"ch6_{key}_tight", number(tightness.loc[family, which], 2), display=False)


# %% mystnb={"figure": {"caption": "Audits of correct mechanisms: the 99% lower bound on $\\varepsilon$ (filled) and the point estimate (open) against the claimed $\\varepsilon$, both axes logarithmic. A point above the diagonal would be a violation; the shaded area is where the claim is false. Gaussian audits are at $\\delta = 10^{-3}$; the k-means audits see the whole transcript of a $k = 1$ run. A bound of 0 is drawn at the bottom edge.", "name": "fig-audit-correct"}} tags=["hide-input"]
def plot_audits(ax, frame, families, floor=0.02):
    """Lower bound (filled) and point estimate (open) per family, dodged along x."""
    offsets = np.linspace(-0.12, 0.12, len(families))
    styles = [0, 1, 2, 3, 4, 5, 7]  # skip the palette's yellow: too pale for markers
    for i, (family, offset) in zip(styles, zip(families, offsets)):
        style = series_style(i)
        colour, marker = style["color"], style["marker"]
        part = frame[frame["family"] == family]
        x = part["claimed_epsilon"] * 2.0**offset
        low = np.maximum(part["lower_bound"], floor)
        estimate = np.maximum(part["estimate"], floor)
        ax.vlines(x, low, estimate, color=colour, lw=1)
        ax.plot(x, low, marker, color=colour, ms=6, label=family)
        ax.plot(x, estimate, marker, mfc="none", color=colour, ms=6)
    grid = np.array([0.15, 12.0])
    ax.plot(grid, grid, ls="--", color="0.3", lw=1, label="lower bound = claim")
    ax.fill_between(grid, grid, 40, color="tab:red", alpha=0.07, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(0.18, 5.5)
    ax.set_ylim(floor * 0.9, 16)
    ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
    ticks = [2.0**j for j in range(-6, 5) if 2.0**j >= floor]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(r"claimed $\varepsilon$")
    ax.set_ylabel(r"audited $\varepsilon$")


fig, ax = new_figure(height=4.2)
plot_audits(ax, frame, ["Laplace", "Gaussian (classic)", "Gaussian (analytic)",
                        "Gaussian (discrete)", "exponential", "DPLloyd (T = 5)",
                        "DPLloyd-Impr"])
fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3)
plt.show()

# %% [markdown]
# All {glue:text}`ch6_n_correct` audits are `consistent` ({numref}`fig-audit-correct`). They are
# also *tight* where they should be: for Laplace the bound is at least
# {glue:text}`ch6_laplace_tight` of the claim at every $\varepsilon$, so an under-noised Laplace
# could not hide, and for the exponential mechanism at least {glue:text}`ch6_expo_tight`. The
# analytic Gaussian bounds reach {glue:text}`ch6_gauss_tight` of the claim: at $\delta > 0$ the
# audit bounds $\ln\frac{b - \delta}{a}$, and threshold events on the output capture most of
# it. The classic calibration stays far below its claim because it adds more noise than
# $(\varepsilon, \delta)$ requires ({numref}`chapter %s <ch-gaussian>`), which an audit sees as
# slack, and so, less
# so, does the discrete Gaussian (at most {glue:text}`ch6_dgauss_tight`): its $\sigma$ comes from
# a zCDP bound that is valid in every dimension but not tight for one. The k-means
# bounds are looser (at most {glue:text}`ch6_dplloyd_tight` of the claim for DPLloyd and
# {glue:text}`ch6_impr_tight` for DPLloyd-Impr): each iteration's release is a sum of two
# Laplace noises whose loss only approaches its budget far in the tail, and $20\,000$
# replicas do not reach far enough. That is the normal state of an audit: a
# consistent verdict, with a gap that says how much the audit could *not* see.
# {doc}`06_auditing_algorithms` closes most of that gap.
#
# ## Four broken variants
#
# An auditor that never says "violation" proves nothing. The engine reproduces three published
# flaws on request: a configuration names the flaws it reproduces (`DPLloydConfig(flaws=...)`),
# each kept with the code of the paper or library that has it (diffprivlib's skipped empty
# clusters and swapped split, Shang et al.'s exact counts). The first broken variant is a
# single mechanism:
#
# 1. a Laplace mechanism with half the correct scale;
# 2. DPLloyd that skips the noise on empty clusters (diffprivlib 0.6.6);
# 3. DPLloyd-Impr with the count and per-dimension budget shares swapped (diffprivlib 0.6.6);
# 4. DPLloyd that releases exact cluster sizes (the differential-identifiability k-means of
#    Shang et al., as published; {doc}`11_identifiability`).
#
# For the k-means variants `audit_configuration` audits a configuration in one call: it runs
# `trials` replicas of it on each dataset in one batched pass and applies a statistic of the
# result.
#
# ```{literalinclude} ../src/dpkmeans/study/audit.py
# :language: python
# :pyobject: audit_configuration
# :lines: 1-13,24-34
# ```
#
# (The docstring, left out here, says that the claimed $\varepsilon$ defaults to the
# configuration's declared budget and the claimed $\delta$ to $T$ times its per-iteration
# $\delta$.)
#
# Besides the book-size audit we record, for each variant, the smallest number of trials in the
# ladder $250, 500, 1000, \dots$ at which the (seeded) audit already reports the violation.
# The audit of the skipped empty clusters, in full (the other variants are in the folded
# cells around it):

# %% tags=["hide-input"]
def first_detection(make_report, largest: int) -> int | None:
    """The smallest n in 250, 500, 1000, ... (up to largest) whose audit detects a
    violation."""
    n = 250
    while n <= largest:
        if make_report(n).verdict == "violation detected":
            return n
        n *= 2
    return None


broken, took = [], {}

# (1) Laplace with half the scale, at every claimed epsilon (first detection at 1)
took["Laplace, half scale"] = first_detection(
    lambda n: audit.audit_mechanism(
        "", audit.laplace_count_release(1.0, noise_factor=0.5), 1.0, trials=n,
        seed=SEED),
    MECHANISM_TRIALS)
for eps in EPSILONS:
    half = audit.laplace_count_release(eps, noise_factor=0.5)
    report = audit.audit_mechanism("Laplace, half scale", half, eps,
                                   trials=MECHANISM_TRIALS, seed=next_seed())
    first = took["Laplace, half scale"] if eps == 1.0 else None
    broken.append(record("broken", report, first_detection=first))

# %%
# skipping the noise on empty clusters: D' adds a point to an empty cluster
BOX2 = (-np.ones(2), np.ones(2))
INIT2 = np.array([[-0.5, -0.5], [0.5, 0.5]])


def fixed_two(bounds, k, rng):
    """Public initial centroids: one near the data, one far from it."""
    return INIT2.copy()


def second_centroid_moved(result):
    """How far the second centroid moved from its initial position."""
    moved = result.centroids[:, 1] - result.initial_centroids[:, 1]
    return np.linalg.norm(moved, axis=1)


near = np.clip(np.random.default_rng(next_seed()).normal(-0.5, 0.05, (20, 2)), -1, 1)
EMPTY_D, EMPTY_D_PRIME = audit.empty_cluster_pair(near, [0.6, 0.6])
skip_config = DPLloydConfig(n_clusters=2, bounds=BOX2,
                            schedule=schedules.uniform(1.0, 3),
                            start=PublicStart(fixed_two), step=SkipEmptyClusters(),
                            flaws=(SKIP_EMPTY_CLUSTERS,))
report = audit.audit_configuration("DPLloyd, skips empty clusters", skip_config,
                                   EMPTY_D, EMPTY_D_PRIME, second_centroid_moved,
                                   trials=KMEANS_TRIALS, seed=next_seed())

# %% tags=["hide-input"]
took["DPLloyd, skips empty clusters"] = first_detection(
    lambda n: audit.audit_configuration("", skip_config, EMPTY_D, EMPTY_D_PRIME,
                                        second_centroid_moved, trials=n, seed=SEED),
    KMEANS_TRIALS)
broken.append(record("broken", report, first_detection=took[report.name]))

# (4) exact counts: one record vs two at the origin, k = 1, d = 3
BOX3 = (-np.ones(3), np.ones(3))
exact_config = DPLloydConfig(n_clusters=1, bounds=BOX3, schedule=[1.0],
                             start=PublicStart(fixed_origin), step=ExactCounts(),
                             flaws=(EXACT_COUNTS,))
ONE, TWO = np.zeros((1, 3)), np.zeros((2, 3))


def largest_coordinate(result):
    """The largest |coordinate| of the (single) released centroid."""
    return np.abs(result.centroids[:, 0]).max(axis=1)


took["DPLloyd, exact counts"] = first_detection(
    lambda n: audit.audit_configuration("", exact_config, ONE, TWO,
                                        largest_coordinate, trials=n, seed=SEED),
    KMEANS_TRIALS)
report = audit.audit_configuration("DPLloyd, exact counts", exact_config, ONE, TWO,
                                   largest_coordinate, trials=KMEANS_TRIALS,
                                   seed=next_seed())
broken.append(record("broken", report, first_detection=took[report.name]))
assert all(r.verdict == "violation detected" for r in broken)
display(show(broken, "ch6-broken"))
designs = pd.DataFrame([
    {"variant": "Laplace, half scale", "pair": "value 0 vs 1",
     "statistic": "the output"},
    {"variant": "DPLloyd, skips empty clusters",
     "pair": "20 records near c₁ vs the same plus 1 near c₂",
     "statistic": "distance c₂ moved"},
    {"variant": "DPLloyd, exact counts", "pair": "1 vs 2 records at the origin",
     "statistic": "largest |coordinate|"},
])
designs["smallest detecting trials"] = designs["variant"].map(
    lambda v: f"{took[v]:,}" if took[v] else "not within the ladder")
table(designs, name="ch6-designs")

# %% [markdown]
# Three of the four variants fall easily. The second table gives the smallest number of trials
# in the ladder at which each audit already reports the violation. The designs:
#
# - **Half-scale Laplace.** The same pair and statistic as for the correct mechanism. The bound
#   is about twice the claim at every $\varepsilon$, as it must be: half the scale is twice the
#   privacy loss.
# - **Skipping empty clusters.** Two fixed initial centroids, 20 records near the first, and
#   $D'$ adds one record near the second, which is empty on $D$. The statistic is how far the
#   second centroid moved. On $D$ the flawed run leaves it exactly where it started unless the
#   first centroid's noise makes the cluster non-empty; on $D'$ it gets noise, and "moved by
#   exactly 0" then happens only when its noisy count falls below 1 (post-processing). The
#   event $\{\text{moved} \le 0\}$ is many times likelier on $D$.
# - **Exact counts.** $k = 1$, $d = 3$, one record at the origin versus two. The sums get the
#   right noise but are divided by the exact count, 1 or 2, so the centroid's noise is twice as
#   wide on $D$; the statistic is the largest coordinate in absolute value.
#
# ### The swapped split: what a black-box audit cannot see
#
# diffprivlib gives the count the per-dimension share and each of the $d$ sum coordinates the
# count's share ({numref}`chapter %s <ch-dplloyd>`). Its true spend per iteration is a factor of the
# declared one
# that grows with $d$ (`diffprivlib_epsilon_factor(d)`). The engine reproduces the flaw on
# request, and its ledger does not lie: it records each release at its true budget, so the
# composed total *is* the true spend.

# %%
BOX_SWAP = (-np.ones(SWAP_D), np.ones(SWAP_D))
EPS_SWAP = max(EPSILONS)
swap_configs = {
    flawed: DPLloydConfig(n_clusters=1, bounds=BOX_SWAP, schedule=[EPS_SWAP],
                          start=PublicStart(fixed_origin),
                          step=SwappedSplit() if flawed else SuSplit(),
                          flaws=(SWAPPED_SPLIT,) if flawed else ())
    for flawed in (False, True)
}
ledger_total = run(np.zeros((1, SWAP_D)), swap_configs[True], 0).ledger.total()
factor = diffprivlib_epsilon_factor(SWAP_D)
eps_count, eps_dim = schedules.su_split(EPS_SWAP, SWAP_D)
print(f"d = {SWAP_D}, declared ε = {EPS_SWAP:g}: Su's split gives the count "
      f"{number(eps_count, 4)}")
print(f"and each dimension {number(eps_dim, 4)}; swapped, each dimension gets "
      f"{number(eps_count, 4)}")
print(f"ledger of the swapped run: ε = {number(ledger_total.epsilon, 4)}; "
      f"declared ε × factor = {number(EPS_SWAP * factor, 4)}")
assert math.isclose(ledger_total.epsilon, EPS_SWAP * factor)

# %% tags=["remove-cell"]
glue("ch6_swap_factor", number(factor), display=False)
glue("ch6_swap_factor54", number(diffprivlib_epsilon_factor(54)), display=False)
glue("ch6_swap_true", number(ledger_total.epsilon), display=False)
glue("ch6_swap_eps", number(EPS_SWAP), display=False)
glue("ch6_swap_d", SWAP_D, display=False)

# %% [markdown]
# Can an auditor who sees only the released centroids catch it? We give it every advantage:
# the largest claimed budget in our grid, $\varepsilon = ${glue:text}`ch6_swap_eps` (the true
# spend is {glue:text}`ch6_swap_true`), one cluster, one iteration, a fixed initialisation,
# $N = 1000$ records at the origin, and $D'$ adds the corner $(1, \dots, 1)$. Then the sums move
# by $1$ in every coordinate, the released centroid is $S'/n' \approx S'/N$, and $N$ times the
# centroid is, up to the small relative noise of the count, the vector of noisy sums, each a
# Laplace release with budget $\beta = \varepsilon_C$ (the count's share, which the flaw hands to
# every dimension). We try three statistics on the same replicas:
#
# - the *family* of all $d$ coordinates (the event is a threshold on the best one);
# - the *projection* onto the diagonal, the sum of the coordinates;
# - the *likelihood-ratio* statistic $\sum_i (|y_i - 1| - |y_i|)$ with $y = N \times$ centroid:
#   the privacy loss of $d$ Laplace coordinates ({prf:ref}`thm-laplace`) up to the factor $\beta$,
#   which by the Neyman–Pearson lemma orders the outputs the way the most powerful tests do. It
#   does not depend on the noise scale, so the auditor need not know it.
#
# The same audit of the *correct* split serves as a control.

# %%
N_SWAP = 1000
SWAP_D0, SWAP_D1 = audit.corner_pair(np.zeros((N_SWAP, SWAP_D)), BOX_SWAP)
origin, corner = np.zeros(SWAP_D), np.ones(SWAP_D)
statistics = {
    "all coordinates": lambda y: y,
    "sum of coordinates": lambda y: y.sum(axis=1),
    "likelihood ratio": lambda y: laplace_privacy_loss(y, origin, corner, 1.0),
}

# %% tags=["hide-input"]
swap_reports, swap_samples = [], {}
for flawed, config in swap_configs.items():
    started = time.perf_counter()
    outputs = [N_SWAP * run(X, config, seed, replicas=SWAP_TRIALS).centroids[:, 0, :]
               for X, seed in ((SWAP_D0, next_seed()), (SWAP_D1, next_seed()))]
    seconds = time.perf_counter() - started
    swap_samples[flawed] = outputs
    label = "DPLloyd-Impr, swapped split" if flawed else "DPLloyd-Impr, correct split"
    for stat_name, stat in statistics.items():
        report = audit.audit_samples(f"{label} [{stat_name}]", stat(outputs[0]),
                                     stat(outputs[1]), EPS_SWAP,
                                     confidence=CONFIDENCE, seed=next_seed(),
                                     seconds=seconds)
        swap_reports.append(record("broken" if flawed else "correct", report,
                                   shares_run=stat_name != "all coordinates"))
lr_report = swap_reports[-1]
show(swap_reports, "ch6-swapped")

# %% tags=["remove-cell"]
glue("ch6_swap_trials", f"{SWAP_TRIALS:,}", display=False)
glue("ch6_swap_lb_family", number(swap_reports[3].lower_bound, 2), display=False)
glue("ch6_swap_lb_sum", number(swap_reports[4].lower_bound, 2), display=False)
glue("ch6_swap_lb_lr", number(lr_report.lower_bound, 2), display=False)
glue("ch6_swap_lb_lr_ok", number(swap_reports[2].lower_bound, 2), display=False)

# %% [markdown]
# With {glue:text}`ch6_swap_trials` replicas per dataset, none of the three statistics
# exposes the flaw: the best lower bound is {glue:text}`ch6_swap_lb_lr` (likelihood ratio),
# against a claim of {glue:text}`ch6_swap_eps`. It is larger than the
# {glue:text}`ch6_swap_lb_lr_ok` of the correct split, a hint that the flawed variant leaks
# more, but a hint is not a violation: the claim survives. A single coordinate can never show
# more than its own budget plus the count's ({ref}`ex-ch6-one-coordinate`):
# {glue:text}`ch6_swap_lb_family` here.
# The overspend is spread thinly over {glue:text}`ch6_swap_d` coordinates, and only outputs in
# which *many* coordinates are pushed the same way reveal it.
#
# **What would it take?** For the likelihood-ratio statistic we can compute the answer
# exactly. Write $\ell(y) = \beta(|y - 1| - |y|)$ for one coordinate's privacy loss between means
# $0$ ($D$) and $1$ ($D'$) with Laplace scale $1/\beta$. Under $D$ it has an atom $\tfrac12$ at $+\beta$
# ($y \le 0$), an atom $\tfrac12 e^{-\beta}$ at $-\beta$ ($y \ge 1$), and density
# $\tfrac14 e^{-(\beta - \ell)/2}$ on $(-\beta, \beta)$; under $D'$ the atoms swap and the density is
# $\tfrac14 e^{-(\beta + \ell)/2}$. Rounding each coordinate's loss to a fine grid (step $\beta/50$)
# gives a statistic whose distribution under $D$ and $D'$ is the $d$-fold convolution of these
# two, computed exactly. We add the count's release too (budget $\varepsilon/(d + \kappa)$, $\kappa = \sqrt[3]{4d\rho^2}$, after the
# swap), as if the auditor saw the noisy sums and the count themselves, which can only help it.
# For each event $\{L \ge \tau\}$ we then find the number of held-out trials $n$ per dataset at
# which its Clopper–Pearson bound (the library's own) exceeds the claim, and take the best
# $\tau$. We do it twice: at the *expected* counts $n\,b$ and $n\,a$, where the audit succeeds
# about half the time, and at the pessimistic 5% and 95% quantiles of the two binomial counts,
# where it succeeds with probability at least 90%. Both assume the threshold is fixed in
# advance; `audit_samples`, which spends half of its trials choosing it, needs at least twice
# as many.

# %% tags=["hide-input"]
rows = []
for d in (SWAP_D, 54):
    c = (4 * d * schedules.SU_RHO["[-1,1]"] ** 2) ** (1 / 3)
    for eps in EPSILONS:
        # swapped: every dimension gets the count's share, the count eps / (d + c)
        a_dim, _ = schedules.su_split(eps, d)
        budgets = [a_dim] * d + [eps / (d + c)]
        tau, tail_d, tail_d_prime = laplace_loss_tails(budgets, a_dim / 50)
        coin_flip = audit.trials_to_expose(tail_d, tail_d_prime, eps, CONFIDENCE)
        reliable = audit.trials_to_expose(tail_d, tail_d_prime, eps, CONFIDENCE,
                                          power=0.9)
        rows.append({"d": d, "claimed ε": eps,
                     "true ε": eps * diffprivlib_epsilon_factor(d),
                     "P[E | D]": coin_flip["P[E | D]"],
                     "P[E | D′]": coin_flip["P[E | D']"],
                     "n, expected counts": coin_flip["n"],
                     "n, 90% power": reliable["n"]})
needed = pd.DataFrame(rows)
# plus the selection half:
needed["audit_samples, 90% power"] = 2 * needed["n, 90% power"]
best_row = needed[needed.d == SWAP_D].sort_values("n, 90% power").iloc[0]
at_swap = needed[(needed.d == SWAP_D) & (needed["claimed ε"] == EPS_SWAP)].iloc[0]
def probability(p: float) -> str:
    """A small probability in decimals: 0.00049."""
    return np.format_float_positional(p, precision=2, unique=False, fractional=False,
                                      trim="-")


table(needed, digits=2, name="ch6-trials-needed",
      formats={"P[E | D]": probability, "P[E | D′]": probability})

# %% tags=["remove-cell"]
def millions(v: float) -> str:
    return f"{v / 1e6:.1f} million"


glue("ch6_need_best", millions(best_row["n, 90% power"]), display=False)
glue("ch6_need_best_eps", number(best_row["claimed ε"]), display=False)
glue("ch6_need_coin", millions(at_swap["n, expected counts"]), display=False)
glue("ch6_need_90", millions(at_swap["n, 90% power"]), display=False)
glue("ch6_need_samples", millions(at_swap["audit_samples, 90% power"]), display=False)
p_on_d, p_on_d_prime = at_swap["P[E | D]"], at_swap["P[E | D′]"]
glue("ch6_need_pd", number(p_on_d, 2), display=False)
glue("ch6_need_pdp", number(p_on_d_prime, 2), display=False)
glue("ch6_need_ratio", int(round(at_swap["audit_samples, 90% power"] / SWAP_TRIALS)),
     display=False)

# %% [markdown]
# Is the exact model the engine? A check: the mean of the likelihood-ratio statistic (times
# $\beta$, so in units of privacy loss) over the engine's replicas, against the model's mean under
# each dataset.

# %% tags=["hide-input"]
a_swap = schedules.su_split(EPS_SWAP, SWAP_D)[0]
tau, tail_d, tail_d_prime = laplace_loss_tails([a_swap] * SWAP_D, a_swap / 50)
pmf_d = -np.diff(np.r_[tail_d, 0.0])
pmf_d_prime = -np.diff(np.r_[tail_d_prime, 0.0])
for which, name in ((0, "D"), (1, "D′")):
    loss = a_swap * statistics["likelihood ratio"](swap_samples[True][which])
    model = float(tau @ (pmf_d if which == 0 else pmf_d_prime))
    error = loss.std() / np.sqrt(loss.size)
    print(f"mean loss under {name}: engine {loss.mean():.3f} "
          f"(standard error {error:.3f}), exact model {model:.3f}")

# %% [markdown]
# The engine and the model agree to within the sampling error of the engine's replicas (the
# model ignores only the count noise in $S'/n'$, which is below one percent here). So the
# answer is: to expose the swapped split at $d = ${glue:text}`ch6_swap_d` and a claimed $\varepsilon = $
# {glue:text}`ch6_swap_eps` with this pair and the optimal statistic, an auditor who fixes the
# threshold in advance needs {glue:text}`ch6_need_90` trials per dataset to succeed with
# probability 90% (with {glue:text}`ch6_need_coin` it is a coin flip), and `audit_samples`
# at least {glue:text}`ch6_need_samples`, some {glue:text}`ch6_need_ratio` times what we ran.
# The exposing event is rare: probability {glue:text}`ch6_need_pd` on $D$ and
# {glue:text}`ch6_need_pdp` on $D'$, so even millions of trials see only dozens of outputs in it
# on $D'$, and the Clopper–Pearson bound must stay conservative about that count. The cheapest
# budget in the grid is $\varepsilon = ${glue:text}`ch6_need_best_eps`; smaller budgets need
# more, because the overspend shrinks in absolute terms, and at $d = 54$, where the factor is
# {glue:text}`ch6_swap_factor54`, the loss is spread over more coordinates and the count rises
# further. That is a job for a dedicated sweep (the engine runs about $10^5$ replicas of this
# configuration in a few seconds, so the audit takes minutes in batches; the section
# "Results" below gives the estimate), not for a book build that must finish in a minute.
#
# The ledger, in contrast, caught the flaw at once and exactly: a *white-box* check that every
# release is charged at the budget it really spends. A black-box audit tests the mechanism
# against the claim; the ledger tests the code against the proof. The book needs both.

# %% mystnb={"figure": {"caption": "Audits of the broken variants: lower bound (filled) and point estimate (open) against the claimed $\\varepsilon$. The half-scale Laplace, the skipped empty clusters and the exact counts lie above the diagonal: violations. The swapped split (three statistics at the largest claimed $\\varepsilon$, $d = 24$) stays below it although its ledger records a true spend above the claim (star).", "name": "fig-audit-broken"}} tags=["hide-input"]
broken_frame = pd.DataFrame([r.as_row() for r in broken + swap_reports[3:]])
broken_frame["family"] = broken_frame["name"].str.replace(r" \[.*\]", "", regex=True)
fig, ax = new_figure(height=4.2)
plot_audits(ax, broken_frame, ["Laplace, half scale", "DPLloyd, skips empty clusters",
                               "DPLloyd, exact counts",
                               "DPLloyd-Impr, swapped split"], floor=0.1)
ax.plot([EPS_SWAP * 2**0.12], [ledger_total.epsilon], "*",
        color=series_style(3)["color"], ms=12,
        label="swapped split: true spend (ledger)")
fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
plt.show()

# %% [markdown]
# ## What an audit cannot show
#
# - **Only violations.** A `consistent` verdict means "no violation found with this pair, this
#   statistic and this many trials". It is not a proof, and the swapped split shows how large a
#   real overspend (a factor {glue:text}`ch6_swap_factor` here) can hide behind it.
# - **The worst case may be missed.** The audit explores the pairs and events we give it. Worst
#   cases can sit in rare events (the swapped split), in pairs nobody thought of, or in a part
#   of the output the statistic ignores (the final centroid of a $k = 1$ run hides all but one
#   iteration). Tools such as DP-Sniper or DP-Auditorium search for pairs and events
#   automatically; they, too, can only find violations.
# - **The bound is statistical.** With confidence $99\%$ a true claim is never called a
#   violation; across the {glue:text}`ch6_n_reports` audits of this chapter, a false alarm is
#   still possible by chance, which is why every audit is seeded: running the chapter again
#   repeats the same audits instead of drawing new chances of a false alarm.
# - **The mathematics is not the machine.** Every audit above treats outputs as real numbers.
#   Computers use floating point, and that opens a hole that no histogram of outputs shows.
#
# ### Floating-point attacks on Laplace sampling
#
# Mironov {cite}`mironov2012significance` showed that textbook Laplace sampling in floating
# point is not differentially private at all: the set of doubles that $x + \text{noise}$ can
# produce depends on $x$, so some outputs are *impossible* under the neighbouring input and
# reveal it with certainty. The textbook sampler is numpy's `Generator.laplace`, which draws
# $U = j/2^{53}$ with $j$ a uniform 53-bit integer and returns $\mu - \lambda\log(2 - 2U)$ if
# $U \ge \tfrac12$ and $\mu + \lambda \log(2U)$ otherwise.
# The library offers that sampler as `sampler="continuous"` (the papers' code draws its noise
# this way), and the ledger records every such draw as a leak.
#
# We measure the exposure directly. For each output $y$ drawn with value $0$ we decide, exactly
# in float64, whether *any* 53-bit $j$ makes the sampler with value $1$ return $y$: invert the
# formula to find the candidate $j$, search a window of 129 integers around it in both
# branches, and recompute each candidate with the same floating-point operations
# (`floating_point.laplace_output_possible`). numpy's vectorised `np.log` differs from the C
# library's `log` (which the sampler uses) in the last bit for a fraction of inputs, so
# candidates are screened with `np.log` and a tolerance of two units in the last place and
# confirmed with `math.log`. A sanity check: every output must be found possible under its
# *own* value.
#
# ### The remedy: exact noise on a public grid
#
# The library's default sampler (`sampler="discrete"`, module `dpkmeans.privacy.noise`) never forms a
# floating-point noise value. A release of a $q$-vector $v$ with $L_1$ sensitivity $\Delta$:
#
# 1. fixes a public grid $g = 2^{\lfloor \log_2 \Delta \rfloor - 30}$ (from $\Delta$ alone);
# 2. rounds the value to it, $z = \operatorname{round}(v / g) \in \mathbb Z^q$ (exact: $g$ is a
#    power of two);
# 3. draws integer noise $Y_i$ from the discrete Laplace distribution,
#    $\Pr[Y = y] \propto e^{-|y|/t}$, exactly, by Canonne, Kamath and Steinke's algorithms
#    {cite}`canonne2020discrete`: only uniform integers and exact Bernoulli trials
#    (`dpkmeans.privacy.discrete`, vectorised over replicas, each replica reading its own generator);
# 4. returns $(z + Y) g$, exact in float64.
#
# ```{prf:proposition} The grid release is $\varepsilon$-DP
# :label: prop-grid-release
#
# Let $\Delta_g = \lceil \Delta / g \rceil + q$ and $t = \lceil \Delta_g / \varepsilon \rceil$ (an
# integer, computed in exact rational arithmetic). For neighbours with
# $\lVert v - v' \rVert_1 \le \Delta$, the release $(\operatorname{round}(v/g) + Y)\,g$ with
# $Y_i$ i.i.d. discrete Laplace of scale $t$ is $\varepsilon$-DP, and every multiple of $g$ has
# positive probability under every input.
# ```
#
# ```{prf:proof}
# Rounding moves each coordinate by at most $g/2$, so
# $|\operatorname{round}(v_i/g) - \operatorname{round}(v'_i/g)| \le |v_i - v'_i|/g + 1$ and the
# integer vectors $z, z'$ differ by at most $\Delta/g + q \le \Delta_g$ in $L_1$. For any output
# $w \in \mathbb Z^q$,
# $\frac{\Pr[z + Y = w]}{\Pr[z' + Y = w]} = \exp\big(\sum_i (|w_i - z'_i| - |w_i - z_i|)/t\big)
# \le e^{\lVert z - z' \rVert_1 / t} \le e^{\Delta_g / t} \le e^{\varepsilon}$ by the triangle
# inequality. Multiplying by $g$ is a bijection onto the grid (post-processing,
# {prf:ref}`thm-post-processing`), and the discrete Laplace charges every integer.
# ```
#
# The rounding only ever adds noise: the effective scale $t g$ exceeds $\Delta/\varepsilon$ by
# about $(q + 1)/2^{30}$ of itself, and the ledger records the grid, the rounded sensitivity
# and that excess with every draw. The discrete Gaussian is the same construction with
# Algorithm 3 of the same paper and a $\sigma$ calibrated through zero-concentrated DP
# (Theorem 14 and Corollary 13 of Canonne, Kamath and Steinke, valid in every dimension). The calibration of the Laplace case:
#
# ```{literalinclude} ../src/dpkmeans/privacy/noise_types.py
# :language: python
# :pyobject: DiscreteLaplace.calibrate
# ```
#
# Now the measurement, for both samplers, through the mechanism and through the engine (a
# one-cluster, one-iteration DPLloyd run whose released count is $N = 50$ against a neighbour
# with $N + 1$; the engine's grid comes from its own calibration).

# %% tags=["hide-input"]
def possible_under(sampler: str, y: np.ndarray, value: float,
                   cal: noise.NoiseCalibration):
    """Is each output reachable from ``value``? Exactly, for the sampler that
    produced it."""
    if sampler == "continuous":
        return laplace_output_possible(y, value, cal.scale)
    return grid_output_possible(y, value, cal.grid)


def laplace_outputs(value: float, eps: float, sampler: str) -> np.ndarray:
    """FLOAT_OUTPUTS outputs of the Laplace mechanism (sensitivity 1) on ``value``."""
    return mech.laplace_mechanism(value, 1.0, eps, float_rng, ledger=None,
                                  repeats=FLOAT_OUTPUTS, sampler=sampler)


float_rows, float_reports = [], []
float_rng = np.random.default_rng(next_seed())
for sampler in ("continuous", "discrete"):
    for eps in EPSILONS:
        cal = noise.calibrate("laplace", 1.0, eps, sampler=sampler)
        started = time.perf_counter()
        y0 = laplace_outputs(0.0, eps, sampler)
        y1 = laplace_outputs(1.0, eps, sampler)
        own = min(possible_under(sampler, y0, 0.0, cal).mean(),
                  possible_under(sampler, y1, 1.0, cal).mean())
        # impossible if the value were 1:
        exposed0 = ~possible_under(sampler, y0, 1.0, cal)
        # always False, since y1 came from value 1:
        exposed1 = ~possible_under(sampler, y1, 1.0, cal)
        seconds = time.perf_counter() - started
        float_rows.append({"sampler": sampler, "path": "mechanism", "claimed ε": eps,
                           "possible under own value": own,
                           "impossible under neighbour": exposed0.mean()})
        report = audit.audit_samples(f"Laplace, {sampler} sampler, exposure event",
                                     exposed0, exposed1, eps, confidence=CONFIDENCE,
                                     seed=next_seed(), seconds=seconds)
        float_reports.append(record("floating point", report))
    # the engine's path: a released count of 50 (one cluster and iteration, eps 0.5)
    config = dataclasses.replace(dplloyd(1, 0.5, BOX1, iterations=1),
                                 start=PublicStart(fixed_origin), sampler=sampler)
    engine_cal = iteration_releases(config, 0.5)[0].calibration
    engine_run = run(-np.ones((50, 1)), config, next_seed(), replicas=FLOAT_OUTPUTS)
    counts = engine_run.noisy_counts[:, 0]
    float_rows.append({
        "sampler": sampler, "path": "engine (DPLloyd run)", "claimed ε": 0.5,
        "possible under own value":
            possible_under(sampler, counts, 50.0, engine_cal).mean(),
        "impossible under neighbour":
            (~possible_under(sampler, counts, 51.0, engine_cal)).mean()})
floats = pd.DataFrame(float_rows)
assert (floats["possible under own value"] == 1.0).all()
display(table(floats, name="ch6-float-exposure",
              formats={"possible under own value": share,
                       "impossible under neighbour": share}))
show(float_reports, "ch6-float-audits")

# %% tags=["remove-cell"]
continuous = floats[floats["sampler"] == "continuous"]
discrete = floats[floats["sampler"] == "discrete"]
exposure = continuous["impossible under neighbour"]
glue("ch6_float_min", round(100 * float(exposure.min())), display=False)
glue("ch6_float_lf_min", round(100 * float(
    exposure[continuous["path"] == "mechanism"].min())), display=False)
glue("ch6_float_max", round(100 * float(exposure.max())), display=False)
glue("ch6_float_lb", round(min(r.lower_bound for r in float_reports
                               if "continuous" in r.name), 1), display=False)
glue("ch6_float_n", f"{FLOAT_OUTPUTS:,}", display=False)
glue("ch6_discrete_impossible",
     int((discrete["impossible under neighbour"] > 0).sum()), display=False)

# %% [markdown]
# **numpy's sampler is exposed.** Between {glue:text}`ch6_float_lf_min`% and
# {glue:text}`ch6_float_max`% of the outputs that the continuous sampler produces on value $0$
# cannot be produced on value $1$ by any random bits, at every scale we tried. Through the
# engine, whose released count is $50$ rather than $0$ (doubles are coarser there, so more of
# them are reachable from both values), the share is smaller, {glue:text}`ch6_float_min`%, but
# not zero. An attacker who knows the sampler and sees
# such an output knows the input with certainty: the privacy loss is infinite, and no
# $\varepsilon$ holds. An audit that uses "impossible under the neighbour" as its event turns
# this into a verdict: with {glue:text}`ch6_float_n` outputs per dataset the lower bound is
# at least {glue:text}`ch6_float_lb`, far above every claim, and grows without limit with more
# trials.
#
# **The exact sampler is not.** Every output of the discrete sampler lies on its public grid,
# and every grid point is reachable from every input: the fraction of outputs impossible under
# the neighbour is exactly 0 at every $\varepsilon$ and on both paths (rows with a non-zero
# fraction: {glue:text}`ch6_discrete_impossible`), so the exposure event never fires and its
# audit is `consistent` with a lower bound of 0. The statistical audits of the previous
# sections already ran on this sampler (it is the default): Laplace, the discrete Gaussian and
# both k-means algorithms are `consistent`, and the Laplace lower bounds still reach
# {glue:text}`ch6_laplace_tight` of the claim, so the rounding to the grid hides nothing.
#
# What it costs, from the committed benchmarks (`python -m benchmarks.sampler` and
# `python -m benchmarks.reproduction dpkccm`):

# %% tags=["hide-input"]
sampler_bench = json.loads(committed_file(SAMPLER_BENCHMARK).read_text())
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def readable(case: str) -> str:
    """'laplace t~2^30, R=1000 x 4500' -> 'Laplace, t ≈ 2³⁰, R = 1000 × 4500'."""
    case = re.sub(r"\^(\d+)", lambda m: m.group(1).translate(SUPERSCRIPTS), case)
    case = (case.replace("sigma2", "σ²").replace("~", " ≈ ").replace(" x ", " × ")
            .replace("R=", "R = "))
    kind, rest = case.split(" ", 1)
    return f"{kind.capitalize()}, {rest}"


rows = [{"case": readable(r["name"]),
         "dpkmeans, ms per 10⁶ draws": r["ms_per_million_draws"]["dpkmeans"],
         "numpy, ms per 10⁶ draws": r["ms_per_million_draws"]["numpy_per_replica"],
         "ratio": r["ratios"]["dpkmeans / numpy_per_replica"]}
        for r in sampler_bench["results"]]
table(pd.DataFrame(rows), name="ch6-sampler-speed")

# %% tags=["remove-cell"]
reproduction = json.loads(committed_file(REPRODUCTION_BENCHMARK).read_text())
glue("ch6_repro_s", round(reproduction["wall_s"]), display=False)
glue("ch6_repro_points", reproduction["points"], display=False)
glue("ch6_repro_float_s", round(reproduction["previous"]["wall_s"]), display=False)


def compared(exact_s: float, float_s: float) -> str:
    """How the exact sampler's time compares with float noise's, in words that also read
    right when the two round to the same second."""
    if round(exact_s) == round(float_s):
        return "the same time, to the second"
    if exact_s > float_s:
        return f"{number(exact_s / float_s, 2)} times as long with the exact sampler"
    return f"{number(float_s / exact_s, 2)} times as long with float noise"


glue("ch6_repro_compared", compared(reproduction["wall_s"],
                                    reproduction["previous"]["wall_s"]), display=False)
glue("ch6_laplace_ms", round(rows[0]["dpkmeans, ms per 10⁶ draws"]), display=False)
glue("ch6_laplace_ratio", number(rows[0]["ratio"], 2), display=False)

# %% [markdown]
# A million exact Laplace draws cost about {glue:text}`ch6_laplace_ms` ms in large batches,
# {glue:text}`ch6_laplace_ratio` times numpy's float draws. Noise is a small part of a DP-Lloyd
# run: the whole DP-KCCM reproduction of {numref}`chapter %s <ch-dpkccm>`
# ({glue:text}`ch6_repro_points` points)
# took {glue:text}`ch6_repro_s` s with the exact sampler and {glue:text}`ch6_repro_float_s` s,
# on the same machine, with a version of the library that draws numpy's float noise:
# {glue:text}`ch6_repro_compared`. (That version also differs in two other ways: it assigns
# records to clusters with rounded distances instead of the exact assignment of
# {numref}`chapter %s <ch-dplloyd>`,
# and it does not share the first iteration of runs that start alike.)
#
# **How others do it.** OpenDP samples the same discrete distributions with the same
# algorithms, one scalar at a time in Rust with arbitrary-precision integers and rationals; its
# floating-point Laplace rounds the input to a grid $2^k$ chosen by the user and keeps the scale
# as an exact rational. diffprivlib 0.6.6 mitigates instead of removing the problem: its Laplace
# combines four float uniforms {cite}`holohan2021secure` so that the set of outputs is denser,
# and its discrete Gaussian draws its Bernoulli coins from float probabilities
# (`np.random.binomial`). Ours is exact like OpenDP's but vectorised in numpy over replicas: it
# rounds the *scale* up to an integer number of steps instead of keeping it rational (the
# excess is in the ledger), ties the grid to the sensitivity ($2^{-30}$ of it) rather than
# asking for it, keeps every integer below $2^{63}$ by factoring large Bernoulli trials into
# products of small ones, and reads each replica's random words in a fixed order, so a
# replica's numbers do not depend on the batch it runs in.
#
# ### The exponential mechanism, exactly
#
# The exponential mechanism {cite}`mcsherry2007mechanism` adds no noise, but its textbook
# sampler is float-bound too: it computes $p_i \propto e^{\varepsilon q_i / (2\Delta)}$ in
# float64, forms the cumulative sums and compares them with one float uniform. A candidate
# whose probability is below about $2^{-53}$ vanishes from the sums and can never be chosen,
# while on the neighbouring dataset, where its utility gap is one smaller, it can: no
# $\varepsilon$ bounds that pair. In k-prototypes ({numref}`chapter %s <ch-identifiability>`) the
# utility of a category is its
# count in the cluster, so a large cluster's minority category is exactly such a candidate.
#
# The library samples it exactly instead (`discrete.exponential_choice`): propose a candidate
# uniformly and accept it with an exact Bernoulli$(e^{-x_i})$ coin, where
# $x_i = \varepsilon (q^* - q_i) / (2\Delta)$ is a ratio of integers; repeat until a proposal is
# accepted. The accepted index has probability exactly proportional to $e^{-x_i}$, and every
# $x_i$ is finite, so every candidate stays possible. The coins are those of the discrete
# Laplace {cite}`canonne2020discrete`; a non-integer utility is first rounded to a public grid
# ($2^{-20}$ of $\Delta$) and its sensitivity rounded up by one step, as for the noise. The
# cell below takes two categories whose counts differ by a gap, at a per-draw $\varepsilon$ of
# {glue:text}`ch6_expo_eps`, and gives the minority's probability under each sampler.

# %%
EXPO_EPS = 0.02981  # a per-draw epsilon; the float threshold sits at a gap of 2465


def float_minority(gap: int, eps: float) -> float:
    """P[minority] of the cumulative-sum sampler: two categories, counts `gap` apart,
    one float uniform u on the 2^-53 grid of [0, 1), the minority when u > cdf[0]."""
    logits = eps * np.array([gap, 0.0]) / 2.0
    p = np.exp(logits - logits.max())
    cdf0 = float(np.cumsum(p / p.sum())[0])
    return max(0, 2**53 - 1 - math.floor(cdf0 * 2**53)) / 2**53


def exact_minority(gap: int, eps: float) -> float:
    """P[minority] of the exponential mechanism itself (the exact sampler's)."""
    return 1.0 / (1.0 + math.exp(eps * gap / 2.0))


gaps = [2000, 2463, 2464, 2465, 2466, 3000]
samplers = {"float sampler": float_minority, "exponential mechanism": exact_minority}
expo = pd.DataFrame({"count gap": gaps,
                     **{name: [f(g, EXPO_EPS) for g in gaps]
                        for name, f in samplers.items()}})
assert float_minority(2465, EXPO_EPS) == 0.0 < float_minority(2464, EXPO_EPS)
table(expo, name="ch6-expo-float", formats={c: "{:.3g}".format for c in samplers})

# %% tags=["remove-cell"]
glue("ch6_expo_eps", f"{EXPO_EPS:g}", display=False)
glue("ch6_expo_p2464", f"{float_minority(2464, EXPO_EPS):.2g}", display=False)

# %% [markdown]
# At a gap of 2465 the float sampler never returns the minority, at 2464 it does with
# probability {glue:text}`ch6_expo_p2464`: a neighbouring pair with an infinite privacy loss,
# in every k-prototypes run that meets such counts. The exponential mechanism's own
# probabilities are positive at every gap and change by a factor of at most
# $e^{\varepsilon}$ between neighbours. The exact sampler draws from them. A check on the
# sampler itself: its picks at a moderate gap, where both samplers work, follow the
# mechanism's probabilities, and at
# the gap of 2465 the minority's coin is a Bernoulli$(e^{-x})$ with $x$ the exact rational
# $\varepsilon' \cdot 2465 / 2$, $\varepsilon'$ the per-draw $\varepsilon$ rounded *down* by less
# than $2^{-39}$ of itself (so the draw is never less private than charged).

# %% tags=["hide-input"]
from scipy import stats as scipy_stats

from dpkmeans.privacy.discrete import exponential_choice, exponential_exponents

check_rng = np.random.default_rng(next_seed())
check_gaps = np.array([0, 2, 5, 9])
picks = exponential_choice(check_gaps, Fraction(0.8) / 2, [4], check_rng,
                          groups=np.zeros(200_000, dtype=np.int64))
pmf = np.exp(-0.8 * check_gaps / 2.0)
pmf /= pmf.sum()
observed = np.bincount(picks, minlength=4)
p_value = scipy_stats.chisquare(observed, pmf * picks.size).pvalue
# the minority's coin at the gap of 2465: x = whole + rem / den, exact integers
whole, rem, den = exponential_exponents(np.array([0, 2465]), Fraction(EXPO_EPS) / 2)
x = int(whole[1]) + Fraction(int(rem[1]), den)
target = Fraction(EXPO_EPS) * 2465 / 2
print(f"chi-square p-value of 200,000 picks against the probabilities: {p_value:.2f}")
print(f"minority's coin at gap 2465: Bernoulli(exp(-x)),\n"
      f"  x = {int(whole[1])} + {int(rem[1])}/2^{den.bit_length() - 1},\n"
      f"  below eps * 2465 / 2 by {float((target - x) / target):.1e} of it")
assert p_value > 1e-3 and 0 <= target - x < target * 2.0**-39

# %% [markdown]
# **What is left.** The statistic itself is computed in float64 and treated as exact; its
# rounding error, about $N 2^{-53}$ times the largest record, is far below a grid step for
# every dataset of the book, but it is an assumption, written into every ledger entry. A value
# beyond $2^{61}$ grid steps ($2^{31}$ times the sensitivity for Laplace noise) is clamped to
# that public range before rounding, so the size of the data never raises an error.
#
# ## Results
#
# The verdicts of the chapter's split-sample audits, by group (the figures and tables above
# give each audit's bound, trials and point estimate; the audits of whole fits, in
# {doc}`06_auditing_algorithms`, have their own tables):

# %% tags=["remove-cell", "nbval-ignore-output"]
results = pd.DataFrame(REPORTS)
swapped = results.name.str.startswith("DPLloyd-Impr, swapped")
per_replica = results.loc[swapped, "seconds"].iloc[0] / (2 * SWAP_TRIALS)
# both datasets:
swap_minutes = at_swap["audit_samples, 90% power"] * 2 * per_replica / 60
glue("ch6_swap_minutes", int(math.ceil(swap_minutes)), display=False)
own_run = results["shares_run"].ne(True)  # the swapped-split statistics share one run
glue("ch6_seconds_total", number(results.loc[own_run, "seconds"].sum()), display=False)

# %% tags=["hide-input"]
verdicts = pd.DataFrame(REPORTS).groupby(["group", "verdict"]).size()
correct_verdicts = pd.DataFrame(REPORTS).query("group == 'correct'")["verdict"]
assert set(correct_verdicts) == {"consistent"}
table(verdicts.rename("audits").reset_index(), name="ch6-verdict-counts")

# %% tags=["remove-cell"]
glue("ch6_n_reports", len(REPORTS), display=False)

# %% [markdown]
# Generating the trials of all {glue:text}`ch6_n_reports` audits took
# {glue:text}`ch6_seconds_total` seconds on the machine that built this page; at the same speed
# the swapped-split audit that would succeed with probability 90% needs at least
# {glue:text}`ch6_swap_minutes` minutes of engine time.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - Differential privacy bounds every test between neighbours: $b \le e^{\varepsilon}a + \delta$.
#   A test with false-positive rate $a$ and power $b$ proves $\varepsilon \ge \ln\frac{b -
#   \delta}{a}$, so an audit gives a *lower* bound on $\varepsilon$; only a proof gives an upper
#   bound.
# - `dpkmeans.study.audit` chooses a threshold event on half of the trials and bounds its log ratio on
#   the other half with exact Clopper–Pearson intervals; with confidence $99\%$ it never calls a
#   true claim a violation.
# - Laplace, the Gaussian (discrete, and continuous with the classic and the analytic
#   calibration, at $\delta = 10^{-3}$), the exponential mechanism, DPLloyd and DPLloyd-Impr
#   are `consistent` at every $\varepsilon$ from $0.25$ to $4$.
# - Half-scale Laplace, skipped empty clusters and exact counts are caught with at most a few
#   thousand trials. diffprivlib's swapped split at $d = 24$ (it spends
#   {glue:text}`ch6_swap_factor` times its claim) is *not* caught by a black-box audit of
#   feasible size: the optimal statistic needs millions of trials per dataset. The ledger
#   records its true spend exactly.
# - Textbook floating-point Laplace sampling leaks: most of its outputs are impossible under
#   the neighbouring input. The library's default sampler rounds the value to a public grid and
#   adds exact discrete Laplace (or Gaussian) noise; none of its outputs is impossible under any
#   input, its audits are consistent, and the float sampler remains only as an option that the
#   ledger records as a leak.
# - The exponential mechanism's textbook sampler loses every candidate below about $2^{-53}$;
#   the library's accepts uniform proposals with exact Bernoulli$(e^{-x})$ coins, so its picks
#   follow the mechanism's own probabilities and no candidate is impossible.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch6-one-coordinate
# :class: pen-and-paper
#
# In the swapped-split audit, the "family" statistic thresholds one centroid coordinate
# $c_i = S'_i / n'$. Show that no event on $c_i$ alone can have a log ratio above
# $\frac{1 + \kappa}{d + \kappa}\,\varepsilon$ with $\kappa = \sqrt[3]{4 d \rho^2}$, and evaluate it for
# $d = 24$, $\varepsilon = 4$. Why is that far below the claim?
# ```
#
# ```{solution} ex-ch6-one-coordinate
# :class: dropdown
#
# $c_i$ is a function (post-processing, {prf:ref}`thm-post-processing`) of the pair
# $(S'_i, n')$. After the swap, $S'_i$ is a Laplace release with budget
# $\varepsilon_C = \frac{\kappa}{d + \kappa}\varepsilon$ and $n'$ one with budget
# $\frac{1}{d + \kappa}\varepsilon$, so by sequential composition ({prf:ref}`thm-sequential`)
# the pair is $\frac{1 + \kappa}{d + \kappa}\varepsilon$-DP, and so is $c_i$. For $d = 24$,
# $\kappa \approx 1.694$,
# this is $\frac{2.694}{25.69} \times 4 \approx 0.42$, a tenth of the claim: a single
# coordinate carries only a tenth of the budget, so thresholds on single coordinates cannot even
# reach the claim, let alone exceed it.
# ```
#
# ```{exercise}
# :label: ex-ch6-gaussian-pure
#
# The analytic Gaussian mechanism with $\varepsilon = 1$, $\delta = 10^{-3}$ is not
# $\varepsilon$-DP for *any* finite $\varepsilon$ when $\delta = 0$. Audit it as if it claimed
# pure $1$-DP: call `audit.audit_mechanism` with `delta=0.0` and the release of this chapter,
# with $2 \times 10^5$ and with $10^6$ trials (seed 9). What do you see, and why does it take
# more trials than for the half-scale Laplace?
# ```
#
# ```{solution} ex-ch6-gaussian-pure
# :class: dropdown
#
# `audit.audit_mechanism("Gaussian as pure DP", gaussian_release(1.0, "analytic"), 1.0,
# delta=0.0, trials=n, seed=9)` gives a lower bound of about $0.93$ (`consistent`) with
# $n = 2 \times 10^5$ and about $1.03$ (`violation detected`) with $n = 10^6$; the chosen
# event is a far tail, $y \le -6.5$ or so ($\sigma \approx 2.57$), with probability about
# $0.006$ on $D$ and $0.0018$ on $D'$. The privacy loss of the Gaussian mechanism is unbounded
# but grows only linearly in $y$, so it exceeds $\varepsilon = 1$ only in such tails, and the
# excess $\Pr[E \mid D] - e\,\Pr[E \mid D'] \approx 0.001$ is exactly the slack $\delta$
# covers. Seeing it means measuring probabilities of a few thousandths to within a fraction of
# $10^{-3}$, hence the million trials. Half-scale Laplace, by contrast, has loss $2\varepsilon$
# on half of its outputs, so a few hundred trials show it.
# ```
#
# ```{exercise}
# :label: ex-ch6-threshold-known
#
# An auditor who has computed the optimal threshold of the swapped-split audit in advance does
# not need the selection half. How many trials per dataset does it need at $d = 24$,
# $\varepsilon = 4$, and what does {prf:ref}`thm-audit-bound` require of that threshold for the
# bound to stay valid?
# ```
#
# ```{solution} ex-ch6-threshold-known
# :class: dropdown
#
# The column "n, 90% power" of the table: {glue:text}`ch6_need_90` per dataset, against at
# least {glue:text}`ch6_need_samples` for `audit_samples`, which first spends half of its trials
# on choosing the threshold (and then chooses it with some noise). The theorem requires only
# that the event be fixed before the evaluation trials are drawn. A threshold computed from the
# exact model, without looking at any trial, qualifies, so the whole sample can be used for
# evaluation.
# ```
