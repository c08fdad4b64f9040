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
# (ch-gaussian)=
# # The Gaussian mechanism, (ε, δ)-DP and probabilistic DP
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - state $(\varepsilon, \delta)$-DP and explain what $\delta$ buys;
# - derive the privacy-loss random variable of the Gaussian mechanism,
#   $\mathcal L \sim \mathcal N(s^2/2, s^2)$ with $s = \Delta_2 / \sigma$;
# - calibrate $\sigma$ with the classic formula, know when it is valid, and replace it with the
#   exact (analytic) calibration of Balle and Wang;
# - define Gaussian DP through the trade-off function of a hypothesis test, show that the
#   Gaussian mechanism is $\mu$-GDP with $\mu = \Delta_2/\sigma$, and read $\mu$ as an exact
#   $(\varepsilon, \delta)$ profile and as zero-concentrated DP with $\rho = \mu^2/2$;
# - define probabilistic DP (PDP) and show that it implies $(\varepsilon, \delta)$-DP, but not
#   the converse.
#
# **Prerequisites:** {numref}`chapter %s <ch-laplace>` (neighbouring datasets,
# $\varepsilon$-DP, the privacy loss, sensitivity); the normal distribution and its
# cumulative distribution function $\Phi$.
# :::
#
# The Gaussian mechanism matters for this book because one of the five papers it reproduces,
# the colored-noise mechanism of {cite:t}`ravi2021colored`, publishes centroids with
# (correlated) Gaussian noise, calibrated through the privacy-loss variable studied here.

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
N_SAMPLES = 400_000  # Monte-Carlo draws
DELTA = 1e-5  # the delta of the calibration comparisons

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter
from myst_nb import glue
from scipy import stats
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

from dpkmeans.privacy.loss import (
    gaussian_pdp_delta,
    gaussian_pdp_sigma,
    gaussian_privacy_loss,
)
from dpkmeans.privacy.mechanisms import (
    gaussian_delta,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from dpkmeans.privacy.tight import gdp_epsilon, gdp_mu, zcdp_epsilon
from dpkmeans.study.plotting import new_figure, series_style, use_book_style
from dpkmeans.study.reading import count_of, number, percent, table

use_book_style()
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## Approximate differential privacy
#
# ```{prf:definition} $(\varepsilon, \delta)$-differential privacy
# :label: def-approx-dp
#
# A mechanism $M$ is $(\varepsilon, \delta)$-DP if for all neighbours $D \simeq D'$ and all
# measurable sets $E$ of outputs,
#
# $$\Pr[M(D) \in E] \le e^{\varepsilon} \Pr[M(D') \in E] + \delta.$$
# ```
#
# ```{prf:definition} $L_2$ sensitivity
# :label: def-l2-sensitivity
#
# $\Delta_2 f = \max_{D \simeq D'} \lVert f(D) - f(D') \rVert_2$. For the DP-Lloyd query on
# $[-r, r]^d$ under add/remove, $\Delta_2 = \sqrt{d r^2 + 1}$, much smaller than
# $\Delta_1 = dr + 1$ when $d$ is large; this is why Gaussian noise pays off in high dimension.
# ```
#
# ## The privacy-loss random variable
#
# ```{prf:lemma} Privacy loss of the Gaussian mechanism
# :label: lem-gaussian-loss
#
# Let $M(D) = f(D) + Z$ with $Z \sim \mathcal N(0, \sigma^2 I)$, let $D \simeq D'$ with
# $\lVert f(D) - f(D') \rVert_2 = \Delta$ and put $s = \Delta / \sigma$. If $Y \sim M(D)$, the
# privacy loss $\mathcal L = \ln p_D(Y) / p_{D'}(Y)$ is distributed $\mathcal N(s^2/2, s^2)$.
# ```
#
# ```{prf:proof}
# Write $\mu = f(D)$, $\mu' = f(D')$, $v = \mu - \mu'$ and $Y = \mu + Z$. Then
#
# $$
# \mathcal L = \frac{\lVert Y - \mu' \rVert^2 - \lVert Y - \mu \rVert^2}{2\sigma^2}
#   = \frac{\lVert Z + v \rVert^2 - \lVert Z \rVert^2}{2 \sigma^2}
#   = \frac{\lVert v \rVert^2 + 2 \langle Z, v \rangle}{2 \sigma^2}.
# $$
#
# Since $\langle Z, v\rangle \sim \mathcal N(0, \sigma^2 \Delta^2)$, $\mathcal L$ is Gaussian
# with mean $\Delta^2 / (2\sigma^2) = s^2/2$ and variance $\Delta^2/\sigma^2 = s^2$.
# ```
#
# The loss is unbounded, so no finite $\sigma$ makes the Gaussian mechanism $\varepsilon$-DP
# with $\delta = 0$; $\delta$ absorbs the rare outputs with a large loss. Exactly how much
# $\delta$ is needed is the next theorem.
#
# ```{prf:theorem} Exact privacy profile of the Gaussian mechanism
# :label: thm-gaussian-exact
#
# The Gaussian mechanism with noise multiplier $s = \Delta_2 / \sigma$ is
# $(\varepsilon, \delta)$-DP if and only if
#
# $$\delta \ge \delta(\varepsilon) = \Phi\Big(\frac{s}{2} - \frac{\varepsilon}{s}\Big)
#    - e^{\varepsilon}\, \Phi\Big(-\frac{s}{2} - \frac{\varepsilon}{s}\Big).$$
# ```
#
# ```{prf:proof}
# For any set $E$,
# $\Pr[M(D) \in E] - e^{\varepsilon}\Pr[M(D') \in E] = \int_E (p_D - e^{\varepsilon} p_{D'})$,
# which is largest for $E^* = \{y : \mathcal L(y) > \varepsilon\}$. Hence the smallest valid
# $\delta$ is
#
# $$\Pr_{Y \sim M(D)}[\mathcal L > \varepsilon]
#   - e^{\varepsilon} \Pr_{Y \sim M(D')}[\mathcal L > \varepsilon].$$
#
# By {prf:ref}`lem-gaussian-loss`, $\mathcal L \sim \mathcal N(s^2/2, s^2)$ under $D$; under
# $D'$ the same statistic is $\mathcal N(-s^2/2, s^2)$ (exchange the roles of $\mu$ and
# $\mu'$). Standardising,
# $\Pr[\mathcal N(s^2/2, s^2) > \varepsilon] = \Phi(s/2 - \varepsilon/s)$ and
# $\Pr[\mathcal N(-s^2/2, s^2) > \varepsilon] = \Phi(-s/2 - \varepsilon/s)$. The profile does
# not depend on the direction of $v$, only on its length, so the worst neighbours are those
# with $\lVert v \rVert_2 = \Delta_2$, where $s$ is largest.
# ```
#
# The library computes $\delta(\varepsilon)$ in log space, so that it stays accurate when both
# terms are tiny:
#
# ```{literalinclude} ../src/dpkmeans/privacy/gaussian.py
# :language: python
# :pyobject: gaussian_delta
# :lines: 1, 36-
# ```
#
# ### Checking the lemma and the theorem by simulation
#
# We release a count ($\Delta_2 = 1$) with the analytic calibration at $\varepsilon = 1$,
# $\delta = 10^{-2}$ (a large $\delta$, so that the tail event is frequent enough to count),
# compute the privacy loss of every draw, and compare it with $\mathcal N(s^2/2, s^2)$ and its
# tail with $\delta(\varepsilon)$. The lemma is about the continuous Gaussian, so we ask for
# numpy's float sampler (`sampler="continuous"`); the library's default is the exact *discrete*
# Gaussian on a public grid, calibrated through zero-concentrated DP, which
# {numref}`chapter %s <ch-auditing>` explains.

# %%
eps_check, delta_check = 1.0, 1e-2
sigma = gaussian_sigma_analytic(1.0, eps_check, delta_check)
s = 1.0 / sigma
y_D = gaussian_mechanism(np.zeros(N_SAMPLES), 1.0, eps_check, delta_check, rng,
                         ledger=None, sampler="continuous")
y_Dprime = 1.0 + gaussian_mechanism(np.zeros(N_SAMPLES), 1.0, eps_check, delta_check,
                                    rng, ledger=None, sampler="continuous")
loss_D = gaussian_privacy_loss(y_D, 0.0, 1.0, sigma)
loss_Dprime = gaussian_privacy_loss(y_Dprime, 0.0, 1.0, sigma)
ks = stats.kstest(loss_D, stats.norm(loc=s**2 / 2, scale=s).cdf)
empirical_delta = (np.mean(loss_D > eps_check)
                   - np.exp(eps_check) * np.mean(loss_Dprime > eps_check))
print(f"sigma = {sigma:.4f}, s = {s:.4f}")
print(f"privacy loss: mean {loss_D.mean():.4f} (theory {s**2 / 2:.4f}), "
      f"std {loss_D.std():.4f} (theory {s:.4f})")
print(f"Kolmogorov-Smirnov test against N(s^2/2, s^2): p-value {ks.pvalue:.2f}")
print(f"delta(eps): simulated {empirical_delta:.5f}, "
      f"exact {gaussian_delta(eps_check, sigma):.5f}")
assert ks.pvalue > 0.01

# %% mystnb={"figure": {"caption": "Histogram of the privacy loss of simulated Gaussian releases (analytic calibration, $\\varepsilon = 1$, $\\delta = 10^{-2}$) against the density of $\\mathcal N(s^2/2, s^2)$. The shaded tail beyond $\\varepsilon$ is where $\\delta$ is spent.", "name": "fig-gaussian-loss"}} tags=["hide-input"]
fig, ax = new_figure()
first = series_style(0)
ax.hist(loss_D, bins=120, density=True, histtype="stepfilled", alpha=0.35,
        color=first["color"], label="simulated loss")
grid = np.linspace(loss_D.min(), loss_D.max(), 400)
ax.plot(grid, stats.norm(loc=s**2 / 2, scale=s).pdf(grid), markevery=40,
        label=r"$\mathcal{N}(s^2/2, s^2)$", **series_style(1))
ax.axvspan(eps_check, grid[-1], color="0.88", zorder=0,
           label=r"$\mathcal{L} > \varepsilon$")
ax.set_xlim(grid[0], grid[-1])
ax.set_xlabel(r"privacy loss $\mathcal{L}$")
ax.set_ylabel("density")
ax.legend()
plt.show()

# %% [markdown]
# ## Classic versus analytic calibration
#
# ```{prf:theorem} Classic Gaussian mechanism, Theorem A.1 of Dwork and Roth
# :label: thm-gaussian-classic
#
# For $\varepsilon \in (0, 1)$ and
# $\sigma \ge \Delta_2 \sqrt{2 \ln(1.25/\delta)} / \varepsilon$, the Gaussian mechanism is
# $(\varepsilon, \delta)$-DP.
# ```
#
# The proof {cite}`dwork2014algorithmic` bounds the Gaussian tail with inequalities that need
# $\varepsilon < 1$; outside that range the theorem says nothing. The library refuses to
# extrapolate:
#
# ```{literalinclude} ../src/dpkmeans/privacy/gaussian.py
# :language: python
# :pyobject: gaussian_sigma_classic
# :lines: 1, 37-
# ```
#
# The **analytic Gaussian mechanism** {cite}`balle2018improving` instead solves
# $\delta(\varepsilon) = \delta$ of {prf:ref}`thm-gaussian-exact` for $\sigma$, numerically. It
# is exact for every $\varepsilon$: the smallest $\sigma$ that is private, and no smaller one is.
#
# ```{literalinclude} ../src/dpkmeans/privacy/gaussian.py
# :language: python
# :pyobject: gaussian_sigma_analytic
# :lines: 1-2, 37-
# ```
#
# The table compares the two at $\delta = 10^{-5}$. The last column is the *true* $\delta$
# that the classic $\sigma$ achieves, computed with {prf:ref}`thm-gaussian-exact`, as a
# multiple of the target $\delta$; past $\varepsilon = 1$ we extrapolate the classic formula
# to show what happens to those who do.

# %%
def classic_formula(eps: float, delta: float) -> float:
    """The classic formula without its epsilon < 1 guard (for illustration only)."""
    return np.sqrt(2 * np.log(1.25 / delta)) / eps


eps_table = [0.1, 0.5, 0.9, 2.0, 5.0, 10.0, 20.0]
rows = []
for eps in eps_table:
    classic = classic_formula(eps, DELTA)
    rows.append({
        "epsilon": eps,
        "sigma classic": classic,
        "sigma analytic": gaussian_sigma_analytic(1.0, eps, DELTA),
        "true delta / target": gaussian_delta(eps, classic) / DELTA,
    })
calibration = pd.DataFrame(rows)
assert all(gaussian_sigma_classic(1.0, e, DELTA) == classic_formula(e, DELTA)
           for e in (0.1, 0.5))

# %% tags=["hide-input"]
table(calibration.rename(columns={
    "epsilon": "ε", "sigma classic": "σ, classic", "sigma analytic": "σ, analytic",
    "true delta / target": "true δ of classic σ ÷ target δ"}),
    name="ch2-calibration")

# %% tags=["remove-cell"]
breaks = calibration.loc[calibration["true delta / target"] > 1, "epsilon"]
glue("ch2_first_break", number(float(breaks.min())), display=False)
saving = 1 - rows[1]["sigma analytic"] / rows[1]["sigma classic"]
glue("ch2_saving_eps05", percent(saving), display=False)

# %% tags=["remove-cell"]
# Where exactly the extrapolated classic formula stops being private (quoted in a solution).
from scipy.optimize import brentq

break_root = brentq(lambda e: gaussian_delta(e, classic_formula(e, DELTA)) - DELTA,
                    1.0, 20.0)
glue("ch2_break_root", number(break_root, digits=2), display=False)
# The Gaussian sigma of an exercise: Delta_2 = 5, (epsilon, delta) = (1, 10^-5).
glue("ch2_ex_sigma", number(gaussian_sigma_analytic(5.0, 1.0, 1e-5)), display=False)

# %% mystnb={"figure": {"caption": "Noise scale $\\sigma$ (for $\\Delta_2 = 1$, $\\delta = 10^{-5}$) against $\\varepsilon$. The classic formula is valid only for $\\varepsilon < 1$ (solid); extrapolated beyond (dotted), it first wastes noise and then, where the shaded region starts, falls below the analytic curve and is no longer $(\\varepsilon, \\delta)$-DP.", "name": "fig-gaussian-calibration"}} tags=["hide-input"]
eps_grid = np.geomspace(0.05, 30, 200)
classic_curve = classic_formula(eps_grid, DELTA)
analytic_curve = np.array([gaussian_sigma_analytic(1.0, e, DELTA) for e in eps_grid])
pdp_curve = np.array([gaussian_pdp_sigma(1.0, e, DELTA) for e in eps_grid])
fig, ax = new_figure()
valid = eps_grid < 1
classic_style = series_style(0)
ax.plot(eps_grid[valid], classic_curve[valid], markevery=25, label="classic (valid)",
        **classic_style)
dotted = {**classic_style, "linestyle": (0, (1, 1.5))}
ax.plot(eps_grid[~valid], classic_curve[~valid], markevery=25,
        label="classic (extrapolated)", **dotted)
ax.plot(eps_grid, analytic_curve, markevery=(12, 25), label="analytic (exact DP)",
        **series_style(1))
ax.plot(eps_grid, pdp_curve, markevery=(6, 25), label="exact PDP", **series_style(2))
unsafe = eps_grid[classic_curve < analytic_curve]
if unsafe.size:
    ax.axvspan(unsafe.min(), eps_grid[-1], color="0.9", label="classic not private")
ax.set_xscale("log")
ax.set_yscale("log")
for axis in (ax.xaxis, ax.yaxis):
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
ax.set_xlabel(r"$\varepsilon$")
ax.set_ylabel(r"$\sigma$", rotation=0, labelpad=12)
ax.legend()
plt.show()

# %% [markdown]
# At $\varepsilon = 0.5$ the analytic calibration needs {glue:text}`ch2_saving_eps05` less
# noise than the classic $\sigma$ for the same guarantee. Extrapolated past $\varepsilon = 1$,
# the classic formula is first wasteful and then unsafe: in the table its true $\delta$
# exceeds the target from $\varepsilon =$ {glue:text}`ch2_first_break` on. This is not
# academic: the code of {cite:t}`ravi2021colored` calibrates with a classic-style formula after
# multiplying $\varepsilon$ by $k d$, which lands in that region ({numref}`chapter %s
# <ch-colored>`).
#
# (sec-gdp)=
# ## Gaussian differential privacy
#
# An $(\varepsilon, \delta)$ pair describes a Gaussian release by one point of its privacy
# profile; by {prf:ref}`thm-gaussian-exact` the whole profile depends on one number,
# $s = \Delta_2 / \sigma$. Gaussian differential privacy makes that number the guarantee. It
# reads privacy as a hypothesis test: an adversary sees the output and tests
# "the data are $D$" against "the data are $D'$". A test is a rejection rule $\phi$ (the
# probability of answering $D'$ given the output); its type I error is
# $\alpha_\phi = \mathbb E_{M(D)}[\phi]$ and its type II error
# $\beta_\phi = 1 - \mathbb E_{M(D')}[\phi]$.
#
# ```{prf:definition} Trade-off function
# :label: def-tradeoff
#
# For two distributions $P$ and $Q$ of the output, the **trade-off function** is
#
# $$T(P, Q)(\alpha) = \inf\{\beta_\phi : \alpha_\phi \le \alpha\}, \qquad \alpha \in [0, 1]:$$
#
# the smallest type II error of a test of $P$ against $Q$ whose type I error is at most
# $\alpha$. The larger $T(P, Q)$, the harder the two are to tell apart; $T(P, P)(\alpha) =
# 1 - \alpha$ (the test can only guess).
# ```
#
# ```{prf:definition} Gaussian differential privacy
# :label: def-gdp
#
# Let $G_\mu = T(\mathcal N(0, 1), \mathcal N(\mu, 1))$, that is
# $G_\mu(\alpha) = \Phi\big(\Phi^{-1}(1 - \alpha) - \mu\big)$. A mechanism $M$ is
# **$\mu$-Gaussian DP** ($\mu$-GDP) if $T(M(D), M(D')) \ge G_\mu$ pointwise for all
# neighbours $D \simeq D'$ {cite}`dong2022gaussian`: telling $D$ from $D'$ is at least as hard
# as telling apart two unit normals whose means are $\mu$ apart.
# ```
#
# ```{prf:theorem} The Gaussian mechanism is Gaussian DP
# :label: thm-gaussian-gdp
#
# The Gaussian mechanism $M(D) = f(D) + \mathcal N(0, \sigma^2 I)$ for a query of $L_2$
# sensitivity $\Delta$ is $(\Delta/\sigma)$-GDP, and for a pair of neighbours at distance
# $\Delta$ the trade-off function is exactly $G_{\Delta/\sigma}$.
# ```
#
# ```{prf:proof}
# Fix neighbours, let $v = f(D') - f(D)$ and $s = \lVert v \rVert_2/\sigma \le \Delta/\sigma$.
# By the Neyman-Pearson lemma the most powerful tests threshold the likelihood ratio, which by
# the proof of {prf:ref}`lem-gaussian-loss` depends on the output $Y$ only through the
# statistic $X = \langle Y - f(D), v\rangle / (\sigma \lVert v \rVert_2)$. Under $D$,
# $X \sim \mathcal N(0, 1)$; under $D'$, $X \sim \mathcal N(s, 1)$. So
# $T(M(D), M(D')) = T(\mathcal N(0, 1), \mathcal N(s, 1)) = G_s$: rejecting when $X > t$
# gives $\alpha = \Phi(-t)$ and $\beta = \Phi(t - s)$, and eliminating $t$ gives the formula
# for $G_s$. Finally $G_s \ge G_{\Delta/\sigma}$ because $G_\mu(\alpha)$ decreases in $\mu$.
# ```
#
# The next theorem says that for the Gaussian mechanism nothing is lost by describing it with
# $\mu$: $\mu$-GDP holds exactly when the $(\varepsilon, \delta)$ profile of
# {prf:ref}`thm-gaussian-exact` holds with $s = \mu$, that is, exactly when the analytic
# Gaussian of {cite:t}`balle2018improving` certifies it.
#
# ```{prf:theorem} From $\mu$ to $(\varepsilon, \delta)$
# :label: thm-gdp-to-dp
#
# A mechanism is $\mu$-GDP if and only if it is $(\varepsilon, \delta_\mu(\varepsilon))$-DP
# for every $\varepsilon \ge 0$, where
#
# $$\delta_\mu(\varepsilon) = \Phi\Big(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)
#   - e^{\varepsilon}\,\Phi\Big(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)$$
#
# ({cite:t}`dong2022gaussian`, Corollary 2.13).
# ```
#
# ```{prf:proof}
# (Sketch.) $(\varepsilon, \delta)$-DP for the pair $(D, D')$ says that every test has
# $1 - \beta \le e^{\varepsilon}\alpha + \delta$, i.e. that the trade-off function lies above
# the line $\beta = 1 - \delta - e^{\varepsilon}\alpha$ (and above its mirror image, which
# the symmetric pair gives). The smallest such $\delta$ for the curve $G_\mu$ is
# $\delta_\mu(\varepsilon) = \sup_\alpha \big(1 - e^{\varepsilon}\alpha - G_\mu(\alpha)\big)$.
# With $\alpha = \Phi(-t)$, $1 - G_\mu(\alpha) = \Phi(\mu - t)$; setting the derivative in $t$
# to zero gives $t = \varepsilon/\mu + \mu/2$ and the formula. Conversely, $G_\mu$ is convex,
# so it is the upper envelope of its tangent lines, one for each slope $-e^{\varepsilon}$:
# a trade-off function above all these lines is above $G_\mu$.
# ```
#
# The library gives both directions: `gdp_epsilon(mu, delta)` is the smallest $\varepsilon$
# with $\delta_\mu(\varepsilon) \le \delta$, and `gdp_mu(epsilon, delta)` the largest $\mu$
# that is $(\varepsilon, \delta)$-DP, both in `dpkmeans.privacy.tight`. We check them three
# ways: the supremum in the proof, computed numerically from $G_\mu$ itself, against the
# closed form `gaussian_delta`; `gdp_epsilon` against that closed form; and `gdp_mu` against
# the analytic calibration `gaussian_sigma_analytic`, for a query with $\Delta_2 = 3$.

# %%
def tradeoff(alpha: np.ndarray, mu: float) -> np.ndarray:
    """G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)."""
    return stats.norm.cdf(stats.norm.isf(alpha) - mu)


def delta_from_tradeoff(mu: float, eps: float) -> float:
    """sup over alpha of 1 - e^eps alpha - G_mu(alpha), over the threshold t."""
    gap = minimize_scalar(
        lambda t: -(stats.norm.cdf(mu - t) - np.exp(eps) * stats.norm.cdf(-t)),
        bounds=(-20.0, 20.0 + eps / mu), method="bounded",
        options={"xatol": 1e-12})
    return -gap.fun


gdp_rows = []
for mu in (0.25, 0.5, 1.0, 2.0, 4.0):
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
        exact = gaussian_delta(eps, 1.0 / mu)
        if exact < 1e-8:
            continue  # too small to read from a difference of two probabilities
        gdp_rows.append({
            "mu": mu, "epsilon": eps, "delta, exact profile": exact,
            "delta from G_mu": delta_from_tradeoff(mu, eps),
            "gdp_epsilon at that delta": gdp_epsilon(mu, exact),
            "gdp_mu at (eps, delta)": gdp_mu(eps, exact),
            "3 / analytic sigma": 3.0 / gaussian_sigma_analytic(3.0, eps, exact),
        })
gdp_check = pd.DataFrame(gdp_rows)
rel = {
    "G_mu vs closed form": (gdp_check["delta from G_mu"]
                            / gdp_check["delta, exact profile"] - 1).abs().max(),
    "gdp_epsilon vs epsilon": (gdp_check["gdp_epsilon at that delta"]
                               / gdp_check["epsilon"] - 1).abs().max(),
    "gdp_mu vs mu": (gdp_check["gdp_mu at (eps, delta)"]
                     / gdp_check["mu"] - 1).abs().max(),
    "gdp_mu vs analytic": (gdp_check["gdp_mu at (eps, delta)"]
                           / gdp_check["3 / analytic sigma"] - 1).abs().max(),
}
for what, value in rel.items():
    print(f"{what}: largest relative difference {value:.1e} "
          f"over {len(gdp_check)} (mu, epsilon) pairs")
assert max(rel.values()) < 1e-6

# %% tags=["remove-cell"]
glue("ch2_gdp_pairs", len(gdp_check), display=False)
glue("ch2_gdp_maxrel", number(max(rel.values()), digits=2), display=False)

# %% [markdown]
# On all {glue:text}`ch2_gdp_pairs` pairs the four comparisons agree to a relative
# {glue:text}`ch2_gdp_maxrel` or better: the supremum over tests of
# {prf:ref}`thm-gdp-to-dp` is the analytic Gaussian's $\delta(\varepsilon)$, and $\mu$ and
# the analytic $\sigma$ are one parameter read two ways ($\mu = \Delta_2/\sigma$).
#
# We can also watch {prf:ref}`thm-gaussian-gdp` in samples. A two-dimensional query with
# $\Delta_2 = 1$ is released with the analytic calibration at $(\varepsilon, \delta) = (1,
# 10^{-2})$ on neighbours whose values differ by $v = (0.6, 0.8)$, $\lVert v \rVert_2 = 1$.
# The test rejects $D$ when $X$ of the proof exceeds a threshold $t$; sweeping $t$ traces the
# empirical trade-off curve, which should lie on $G_{1/\sigma}$ (left panel of
# {numref}`fig-gdp`). The right panel is the privacy profile, $\varepsilon$ against $\delta$,
# of two Gaussian releases: exact by {prf:ref}`thm-gdp-to-dp`, and as zero-concentrated DP
# (below) bounds it.

# %%
v = np.array([0.6, 0.8])
sigma_2d = gaussian_sigma_analytic(1.0, eps_check, delta_check)
mu_2d = 1.0 / sigma_2d
out_D = gaussian_mechanism(np.zeros((N_SAMPLES, 2)), 1.0, eps_check, delta_check, rng,
                           ledger=None, sampler="continuous")
out_Dprime = v + gaussian_mechanism(np.zeros((N_SAMPLES, 2)), 1.0, eps_check,
                                    delta_check, rng, ledger=None,
                                    sampler="continuous")
x_D, x_Dprime = out_D @ v / sigma_2d, out_Dprime @ v / sigma_2d
thresholds = np.linspace(-2.5, 2.5 + mu_2d, 15)
alpha_emp = np.array([np.mean(x_D > t) for t in thresholds])
beta_emp = np.array([np.mean(x_Dprime <= t) for t in thresholds])
tradeoff_gap = np.max(np.abs(beta_emp - tradeoff(alpha_emp, mu_2d)))
print(f"mu = 1 / sigma = {mu_2d:.4f}; largest |beta - G_mu(alpha)| over "
      f"{len(thresholds)} thresholds: {tradeoff_gap:.4f}")
assert tradeoff_gap < 0.005

# %% mystnb={"figure": {"caption": "Left: the trade-off function $G_\\mu$ of a Gaussian release ($\\mu = \\Delta_2/\\sigma$ for the analytic calibration at $\\varepsilon = 1$, $\\delta = 10^{-2}$), with the type I and type II errors of simulated threshold tests (dots); the diagonal is random guessing. Right: $\\varepsilon(\\delta)$ of Gaussian releases with $\\mu = 0.5$ and $\\mu = 1$, exact (Gaussian DP, the analytic Gaussian) and through zCDP with $\\rho = \\mu^2/2$.", "name": "fig-gdp"}} tags=["hide-input"]
fig, (ax0, ax1) = new_figure(ncols=2, height=3.4)
alpha_grid = np.linspace(0.0, 1.0, 400)
ax0.plot(alpha_grid, tradeoff(alpha_grid, mu_2d), markevery=50,
         label=rf"$G_\mu$, $\mu = {mu_2d:.2f}$", **series_style(0))
ax0.plot(alpha_grid, 1 - alpha_grid, color="0.6", linewidth=1.0, label="guessing")
ax0.scatter(alpha_emp, beta_emp, s=18, zorder=3, color=series_style(1)["color"],
            label="simulated tests")
ax0.set_xlabel(r"type I error $\alpha$")
ax0.set_ylabel(r"type II error $\beta$")
ax0.set_aspect("equal")
ax0.legend()
delta_grid = np.geomspace(1e-10, 1e-2, 60)
for i, mu in enumerate((0.5, 1.0)):
    exact_eps = [gdp_epsilon(mu, d) for d in delta_grid]
    zcdp_eps = [zcdp_epsilon(mu**2 / 2, d) for d in delta_grid]
    ax1.plot(delta_grid, exact_eps, markevery=10, label=rf"$\mu = {mu:g}$, exact",
             **series_style(2 * i))
    dotted = {**series_style(2 * i), "linestyle": (0, (1, 1.5))}
    ax1.plot(delta_grid, zcdp_eps, markevery=(5, 10),
             label=rf"$\mu = {mu:g}$, via zCDP", **dotted)
ax1.set_xscale("log")
ax1.set_xlabel(r"$\delta$")
ax1.set_ylabel(r"$\varepsilon$", rotation=0, labelpad=12)
ax1.set_ylim(0, 1.75 * ax1.get_ylim()[1])
ax1.legend(fontsize="small", loc="upper right")
plt.show()

# %% [markdown]
# ### Zero-concentrated DP
#
# A third description of the same noise bounds the Rényi divergences of the output
# distributions, $D_a(P \Vert Q) = \frac{1}{a - 1}\ln \int p^{a} q^{1 - a}$ for orders
# $a > 1$.
#
# ```{prf:definition} Zero-concentrated DP
# :label: def-zcdp
#
# $M$ is **$\rho$-zCDP** if $D_a(M(D) \Vert M(D')) \le \rho\, a$ for all neighbours and all
# $a > 1$ {cite}`bun2016concentrated`.
# ```
#
# For two normals, $D_a(\mathcal N(0, \sigma^2) \Vert \mathcal N(\Delta, \sigma^2)) =
# a \Delta^2 / (2\sigma^2)$ (complete the square in the integral), so the Gaussian mechanism
# is $\rho$-zCDP with
#
# $$\rho = \frac{\Delta_2^2}{2 \sigma^2} = \frac{\mu^2}{2}.$$
#
# We check the divergence by numerical integration, then convert: $\rho$-zCDP gives
# $(\varepsilon, \delta)$-DP by Corollary 13 of {cite:t}`canonne2020discrete`
# (`zcdp_epsilon(rho, delta)`), a valid bound but not the exact profile, because a few
# Rényi divergences do not determine the trade-off function.

# %%
def renyi_normal(a: float, mu: float) -> float:
    """D_a(N(0, 1) || N(mu, 1)) by numerical integration (log space)."""
    def integrand(x):
        return np.exp(a * stats.norm.logpdf(x) + (1 - a) * stats.norm.logpdf(x, mu))
    value, _ = quad(integrand, -40.0, 40.0 + mu, limit=200, points=[0.0, mu])
    return np.log(value) / (a - 1)


renyi_rows = [{"mu": mu, "order a": a, "D_a / a": renyi_normal(a, mu) / a,
               "mu^2 / 2": mu**2 / 2}
              for mu in (0.5, 1.0) for a in (1.5, 2.0, 5.0, 10.0)]
renyi = pd.DataFrame(renyi_rows)
renyi_err = (renyi["D_a / a"] / renyi["mu^2 / 2"] - 1).abs().max()
print(f"D_a / a against mu^2/2: largest relative difference {renyi_err:.1e}")
assert renyi_err < 1e-8

conversion = pd.DataFrame([
    {"μ": mu, "ρ = μ²/2": mu**2 / 2, "ε exact (GDP)": gdp_epsilon(mu, 1e-6),
     "ε via zCDP": zcdp_epsilon(mu**2 / 2, 1e-6)}
    for mu in (0.1, 0.25, 0.5, 1.0, 2.0)])
conversion["zCDP ÷ exact"] = conversion["ε via zCDP"] / conversion["ε exact (GDP)"]
assert (conversion["zCDP ÷ exact"] >= 1).all()
table(conversion, name="ch2-zcdp-conversion")

# %% tags=["remove-cell"]
glue("ch2_zcdp_worst", percent(conversion["zCDP ÷ exact"].max() - 1), display=False)
glue("ch2_zcdp_best", percent(conversion["zCDP ÷ exact"].min() - 1), display=False)
ex_mu = 1.0 / 4.0  # the exercise: Delta_2 = 1, sigma = 4
glue("ch2_ex_gdp_rho", number(ex_mu**2 / 2), display=False)
glue("ch2_ex_gdp_eps", number(gdp_epsilon(ex_mu, 1e-6)), display=False)
glue("ch2_ex_zcdp_eps", number(zcdp_epsilon(ex_mu**2 / 2, 1e-6)), display=False)

# %% [markdown]
# At $\delta = 10^{-6}$ the zCDP conversion overstates $\varepsilon$ by
# {glue:text}`ch2_zcdp_best` to {glue:text}`ch2_zcdp_worst` on these noise levels. For one
# Gaussian release, or a sequence of them, the exact $\mu$ is therefore the accounting to use.
# zCDP earns its place in {numref}`chapter %s <ch-composition>`: unlike Gaussian DP it also
# covers pure $\varepsilon$-DP releases ($\varepsilon$-DP implies $\varepsilon^2/2$-zCDP), and
# $\rho$ adds under composition.

# %% [markdown]
# ## Probabilistic differential privacy
#
# ```{prf:definition} Probabilistic DP
# :label: def-pdp
#
# $M$ is $(\varepsilon, \delta)$-**probabilistically DP**
# {cite}`machanavajjhala2008privacy,meiser2018approximate` if for all neighbours
# $D \simeq D'$,
#
# $$\Pr_{Y \sim M(D)}\big[|\mathcal L_{D,D'}(Y)| > \varepsilon\big] \le \delta:$$
#
# outside an event of probability $\delta$, the privacy loss is bounded by $\varepsilon$.
# ```
#
# ```{prf:theorem} PDP implies DP
# :label: thm-pdp-implies-dp
#
# If $M$ is $(\varepsilon, \delta)$-PDP then it is $(\varepsilon, \delta)$-DP.
# ```
#
# ```{prf:proof}
# Let $B = \{y : \mathcal L(y) > \varepsilon\}$, so $\Pr_{M(D)}[B] \le \delta$, and on the
# complement $p_D(y) \le e^{\varepsilon} p_{D'}(y)$. For any $E$,
#
# $$
# \begin{aligned}
# \Pr[M(D) \in E] &= \Pr[M(D) \in E \setminus B] + \Pr[M(D) \in E \cap B] \\
#   &\le e^{\varepsilon} \Pr[M(D') \in E \setminus B] + \delta
#   \le e^{\varepsilon} \Pr[M(D') \in E] + \delta.
# \end{aligned}
# $$
# ```
#
# The converse fails: $(\varepsilon, \delta)$-DP allows a loss above $\varepsilon$ with
# probability more than $\delta$, as long as those outputs are also fairly likely under $D'$.
# For the Gaussian mechanism the PDP tail is
#
# $$\Pr[|\mathcal L| > \varepsilon] = \Phi(s/2 - \varepsilon/s) + \Phi(-s/2 - \varepsilon/s):$$
#
# ```{literalinclude} ../src/dpkmeans/privacy/loss.py
# :language: python
# :pyobject: gaussian_pdp_delta
# :lines: 1-2, 33-
# ```
#
# We check both directions on a grid of noise levels and $\varepsilon$: the exact DP $\delta$
# never exceeds the PDP $\delta$ (the theorem), while the $\sigma$ calibrated for DP has a PDP
# tail well above its $\delta$ (the converse fails).

# %%
grid_rows = []
for s_val in (0.1, 0.5, 1.0, 2.0, 4.0):
    for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
        sigma_val = 1.0 / s_val
        grid_rows.append({"s": s_val, "epsilon": eps,
                          "dp delta": gaussian_delta(eps, sigma_val),
                          "pdp delta": gaussian_pdp_delta(eps, sigma_val)})
pdp_grid = pd.DataFrame(grid_rows)
holds = pdp_grid["dp delta"] <= pdp_grid["pdp delta"] * (1 + 1e-12)
print(f"DP delta <= PDP delta at {count_of(holds.sum(), len(pdp_grid))} grid points")

converse = []
for eps in (0.5, 1.0, 2.0):
    sigma_dp = gaussian_sigma_analytic(1.0, eps, DELTA)
    converse.append({"ε": eps, "σ calibrated for DP": sigma_dp,
                     "its PDP tail ÷ δ": gaussian_pdp_delta(eps, sigma_dp) / DELTA,
                     "σ calibrated for PDP": gaussian_pdp_sigma(1.0, eps, DELTA)})
table(pd.DataFrame(converse), name="ch2-pdp-converse")

# %% [markdown]
# The theorem holds on every grid point. The converse fails by a large factor: the
# DP-calibrated mechanism exceeds the loss bound $\varepsilon$ with probability many times
# $\delta$ (the table's third column), and PDP needs a somewhat larger $\sigma$. We can also see the theorem directly in
# samples: for the worst set $E^* = \{\mathcal L > \varepsilon\}$, the simulated
# $\Pr[M(D) \in E^*] - e^{\varepsilon} \Pr[M(D') \in E^*]$ (computed above as the simulated
# $\delta(\varepsilon)$) stays below the PDP tail.

# %%
pdp_tail = gaussian_pdp_delta(eps_check, sigma)
print(f"simulated DP delta {empirical_delta:.5f}, PDP tail {pdp_tail:.5f}")
assert empirical_delta <= pdp_tail

# %% [markdown]
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - $(\varepsilon, \delta)$-DP allows a small additive slack $\delta$; the Gaussian mechanism
#   needs it because its privacy loss, $\mathcal N(s^2/2, s^2)$ with $s = \Delta_2/\sigma$, is
#   unbounded.
# - The exact privacy profile
#   $\delta(\varepsilon) = \Phi(s/2 - \varepsilon/s) - e^{\varepsilon}\Phi(-s/2-\varepsilon/s)$
#   gives the analytic calibration: the smallest private $\sigma$ for any $\varepsilon$.
# - The classic formula holds only for $\varepsilon < 1$; there it wastes noise, and extrapolated
#   to large $\varepsilon$ it stops being private. The library refuses $\varepsilon \ge 1$.
# - Gaussian DP describes a Gaussian release by one number, $\mu = \Delta_2/\sigma$: its
#   trade-off function is $G_\mu$, and $\mu$-GDP is exactly the analytic Gaussian's profile
#   $\delta_\mu(\varepsilon)$. The same noise is $\mu^2/2$-zCDP, whose conversion to
#   $(\varepsilon, \delta)$ is valid but looser.
# - PDP ($\Pr[|\mathcal L| > \varepsilon] \le \delta$) implies $(\varepsilon, \delta)$-DP but
#   is strictly stronger; calibrating for PDP costs a little more noise.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch2-l2
#
# For the DP-Lloyd query on $[-1, 1]^{24}$ (the dimension of the Review-ratings data that
# {cite:t}`ni_dpkccm` cluster) under add/remove, compare the Laplace scale for
# $\varepsilon = 1$ with the Gaussian $\sigma$ for $(\varepsilon, \delta) = (1, 10^{-5})$.
# Which adds less noise per coordinate?
# ```
#
# ```{solution} ex-ch2-l2
# :class: dropdown
#
# $\Delta_1 = d + 1 = 25$, so the Laplace scale is $25$ and its standard deviation
# $25\sqrt 2 \approx 35.4$. $\Delta_2 = \sqrt{24 + 1} = 5$, and
# `gaussian_sigma_analytic(5.0, 1.0, 1e-5)` gives $\sigma \approx$ {glue:text}`ch2_ex_sigma`.
# The Gaussian adds about half the noise per coordinate, at the price of $\delta = 10^{-5}$.
# ```
#
# ```{exercise}
# :label: ex-ch2-break
#
# Using `gaussian_delta`, find (to two digits) the smallest $\varepsilon$ at which the
# extrapolated classic formula stops being $(\varepsilon, 10^{-5})$-DP.
# ```
#
# ```{solution} ex-ch2-break
# :class: dropdown
#
# Solve `gaussian_delta(eps, sqrt(2 * log(1.25e5)) / eps) == 1e-5` for `eps`, for example with
# `scipy.optimize.brentq` on the interval $[1, 20]$. The table above brackets the answer between
# 5 and 10; the root is {glue:text}`ch2_break_root`. Below it, the extrapolated formula happens
# to be private but is still not covered by the theorem.
# ```
#
# ```{exercise}
# :label: ex-ch2-pdp
# :class: pen-and-paper
#
# Show that for the Laplace mechanism, $\varepsilon$-DP and $(\varepsilon, 0)$-PDP are the same
# guarantee. Why is this not true for the Gaussian mechanism?
# ```
#
# ```{solution} ex-ch2-pdp
# :class: dropdown
#
# In general the two definitions agree when $\delta = 0$: $\varepsilon$-DP holds exactly when
# the privacy loss lies in $[-\varepsilon, \varepsilon]$ for almost every output (the remark
# after {prf:ref}`def-dp`), which says $\Pr[|\mathcal L| > \varepsilon] = 0$, i.e.
# $(\varepsilon, 0)$-PDP; and {prf:ref}`thm-pdp-implies-dp` with $\delta = 0$ gives the other
# direction. For the Laplace mechanism both hold at once: the proof of {prf:ref}`thm-laplace`
# shows $|\mathcal L(y)| \le \Delta_1 / b = \varepsilon$ for *every* output $y$. For the
# Gaussian mechanism the loss is $\mathcal N(s^2/2, s^2)$ by {prf:ref}`lem-gaussian-loss`, a
# normal variable with positive variance, so $\Pr[|\mathcal L| > \varepsilon] > 0$ for every
# $\varepsilon$: the Gaussian mechanism is never $(\varepsilon, 0)$-PDP, nor, by
# {prf:ref}`thm-gaussian-exact` (whose $\delta(\varepsilon)$ is positive), $\varepsilon$-DP.
# ```
#
# ```{exercise}
# :label: ex-ch2-two-sided
# :class: pen-and-paper
#
# For the Gaussian mechanism with noise multiplier $s$, write the PDP tail
# $\Pr[|\mathcal L| > \varepsilon]$ and the exact DP profile $\delta(\varepsilon)$ with $\Phi$,
# and show directly, without {prf:ref}`thm-pdp-implies-dp`, that the first is never smaller
# than the second.
# ```
#
# ```{solution} ex-ch2-two-sided
# :class: dropdown
#
# With $\mathcal L \sim \mathcal N(s^2/2, s^2)$, standardising gives
# $\Pr[\mathcal L > \varepsilon] = \Phi(s/2 - \varepsilon/s)$ and
# $\Pr[\mathcal L < -\varepsilon] = \Phi(-s/2 - \varepsilon/s)$, so the PDP tail is
# $\Phi(s/2 - \varepsilon/s) + \Phi(-s/2 - \varepsilon/s)$. The DP profile is
# $\Phi(s/2 - \varepsilon/s) - e^{\varepsilon}\Phi(-s/2 - \varepsilon/s)$. Their difference is
# $(1 + e^{\varepsilon})\,\Phi(-s/2 - \varepsilon/s) > 0$: the PDP tail *adds* the lower tail
# where the DP profile *subtracts* a multiple of it.
# ```
#
# ```{exercise}
# :label: ex-ch2-gdp
#
# A count ($\Delta_2 = 1$) is released with Gaussian noise of standard deviation
# $\sigma = 4$. Give its $\mu$ and its zCDP $\rho$, and its $\varepsilon$ at
# $\delta = 10^{-6}$ exactly and through zCDP, with `gdp_epsilon` and `zcdp_epsilon`.
# ```
#
# ```{solution} ex-ch2-gdp
# :class: dropdown
#
# $\mu = \Delta_2/\sigma = 0.25$ ({prf:ref}`thm-gaussian-gdp`) and
# $\rho = \mu^2/2 =$ {glue:text}`ch2_ex_gdp_rho`. `gdp_epsilon(0.25, 1e-6)` gives the exact
# $\varepsilon \approx$ {glue:text}`ch2_ex_gdp_eps` ({prf:ref}`thm-gdp-to-dp`), while
# `zcdp_epsilon(0.03125, 1e-6)` gives {glue:text}`ch2_ex_zcdp_eps`: a valid but larger
# bound.
# ```
