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
# # The Gaussian mechanism, $(\varepsilon, \delta)$-DP and probabilistic DP
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - state $(\varepsilon, \delta)$-DP and explain what $\delta$ buys;
# - derive the privacy-loss random variable of the Gaussian mechanism,
#   $\mathcal L \sim \mathcal N(s^2/2, s^2)$ with $s = \Delta_2 / \sigma$;
# - calibrate $\sigma$ with the classic formula, know when it is valid, and replace it with the
#   exact (analytic) calibration of Balle and Wang;
# - define probabilistic DP (PDP) and show that it implies $(\varepsilon, \delta)$-DP, but not
#   the converse.
# :::
#
# The Gaussian mechanism matters for this book because one of the five papers, the colored
# noise mechanism {cite}`ravi2021colored`, publishes centroids with (correlated) Gaussian
# noise, calibrated through the privacy-loss variable studied here.

# %% tags=["parameters"]
SEED = 2026  # every random draw below comes from this seed
N_SAMPLES = 400_000  # Monte-Carlo draws
DELTA = 1e-5  # the delta of the calibration comparisons

# %%
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from myst_nb import glue
from scipy import stats

from dpkmeans.mechanisms import (
    gaussian_delta,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from dpkmeans.privacy_loss import gaussian_pdp_delta, gaussian_pdp_sigma, gaussian_privacy_loss
from dpkmeans.plotting import PALETTE, new_figure, use_book_style

use_book_style()
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## Approximate differential privacy
#
# ```{prf:definition} $(\varepsilon, \delta)$-differential privacy
# :label: def-approx-dp
#
# A mechanism $M$ is $(\varepsilon, \delta)$-DP if for all neighbours $D \simeq D'$ and all
# measurable sets $S$,
# $\Pr[M(D) \in S] \le e^{\varepsilon} \Pr[M(D') \in S] + \delta.$
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
# $\mathcal L = \frac{\lVert Y - \mu' \rVert^2 - \lVert Y - \mu \rVert^2}{2\sigma^2}
#   = \frac{\lVert Z + v \rVert^2 - \lVert Z \rVert^2}{2 \sigma^2}
#   = \frac{\lVert v \rVert^2 + 2 \langle Z, v \rangle}{2 \sigma^2}.$
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
# For any set $S$,
# $\Pr[M(D) \in S] - e^{\varepsilon}\Pr[M(D') \in S] = \int_S (p_D - e^{\varepsilon} p_{D'})$,
# which is largest for $S^* = \{y : \mathcal L(y) > \varepsilon\}$. Hence the smallest valid
# $\delta$ is $\Pr_{Y \sim M(D)}[\mathcal L > \varepsilon] - e^{\varepsilon}
# \Pr_{Y \sim M(D')}[\mathcal L > \varepsilon]$. By {prf:ref}`lem-gaussian-loss`,
# $\mathcal L \sim \mathcal N(s^2/2, s^2)$ under $D$; under $D'$ the same statistic is
# $\mathcal N(-s^2/2, s^2)$ (exchange the roles of $\mu$ and $\mu'$). Standardising,
# $\Pr[\mathcal N(s^2/2, s^2) > \varepsilon] = \Phi(s/2 - \varepsilon/s)$ and
# $\Pr[\mathcal N(-s^2/2, s^2) > \varepsilon] = \Phi(-s/2 - \varepsilon/s)$. The profile does
# not depend on the direction of $v$, only on its length, so the worst neighbours are those
# with $\lVert v \rVert_2 = \Delta_2$, where $s$ is largest.
# ```
#
# The library computes $\delta(\varepsilon)$ in log space, so that it stays accurate when both
# terms are tiny:
#
# ```{literalinclude} ../src/dpkmeans/mechanisms.py
# :language: python
# :pyobject: gaussian_delta
# ```
#
# ### Checking the lemma and the theorem by simulation
#
# We release a count ($\Delta_2 = 1$) with the analytic calibration at $\varepsilon = 1$,
# $\delta = 10^{-2}$ (a large $\delta$, so that the tail event is frequent enough to count),
# compute the privacy loss of every draw, and compare it with $\mathcal N(s^2/2, s^2)$ and its
# tail with $\delta(\varepsilon)$. The lemma is about the continuous Gaussian, so we ask for
# numpy's float sampler (`sampler="continuous"`); the library's default is the exact *discrete*
# Gaussian on a public grid, calibrated through zero-concentrated DP, which chapter 6 explains.

# %%
eps_check, delta_check = 1.0, 1e-2
sigma = gaussian_sigma_analytic(1.0, eps_check, delta_check)
s = 1.0 / sigma
y_D = gaussian_mechanism(np.zeros(N_SAMPLES), 1.0, eps_check, delta_check, rng, ledger=None,
                         sampler="continuous")
y_Dprime = 1.0 + gaussian_mechanism(np.zeros(N_SAMPLES), 1.0, eps_check, delta_check, rng,
                                    ledger=None, sampler="continuous")
loss_D = gaussian_privacy_loss(y_D, 0.0, 1.0, sigma)
loss_Dprime = gaussian_privacy_loss(y_Dprime, 0.0, 1.0, sigma)
ks = stats.kstest(loss_D, stats.norm(loc=s**2 / 2, scale=s).cdf)
empirical_delta = np.mean(loss_D > eps_check) - np.exp(eps_check) * np.mean(loss_Dprime > eps_check)
print(f"sigma = {sigma:.4f}, s = {s:.4f}")
print(f"privacy loss: mean {loss_D.mean():.4f} (theory {s**2 / 2:.4f}), "
      f"std {loss_D.std():.4f} (theory {s:.4f}); KS p-value > 0.01: {ks.pvalue > 0.01}")
print(f"delta(eps): simulated {empirical_delta:.5f}, exact {gaussian_delta(eps_check, sigma):.5f}")

# %% tags=["hide-input"] mystnb={"figure": {"caption": "Histogram of the privacy loss of simulated Gaussian releases (analytic calibration, $\\varepsilon = 1$, $\\delta = 10^{-2}$) against the density of $\\mathcal N(s^2/2, s^2)$. The shaded tail beyond $\\varepsilon$ is where $\\delta$ is spent.", "name": "fig-gaussian-loss"}}
fig, ax = new_figure()
ax.hist(loss_D, bins=120, density=True, alpha=0.6, color=PALETTE[0], label="simulated loss")
grid = np.linspace(loss_D.min(), loss_D.max(), 400)
ax.plot(grid, stats.norm(loc=s**2 / 2, scale=s).pdf(grid), color=PALETTE[1],
        label=r"$\mathcal{N}(s^2/2, s^2)$")
ax.axvspan(eps_check, grid[-1], color="0.85", label=r"$\mathcal{L} > \varepsilon$")
ax.set_xlabel(r"privacy loss $\mathcal{L}$")
ax.set_ylabel("density")
ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# ## Classic versus analytic calibration
#
# ```{prf:theorem} Classic Gaussian mechanism (Dwork and Roth, Thm. A.1)
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
# ```{literalinclude} ../src/dpkmeans/mechanisms.py
# :language: python
# :pyobject: gaussian_sigma_classic
# ```
#
# The **analytic Gaussian mechanism** {cite}`balle2018improving` instead solves
# $\delta(\varepsilon) = \delta$ of {prf:ref}`thm-gaussian-exact` for $\sigma$, numerically. It
# is exact for every $\varepsilon$: the smallest $\sigma$ that is private, and no smaller one is.
#
# ```{literalinclude} ../src/dpkmeans/mechanisms.py
# :language: python
# :pyobject: gaussian_sigma_analytic
# ```
#
# The table compares the two at $\delta = 10^{-5}$. The last column is the *true* $\delta$
# that the classic $\sigma$ achieves, computed with {prf:ref}`thm-gaussian-exact`; past
# $\varepsilon = 1$ we extrapolate the classic formula to show what happens to those who do.

# %%
def classic_formula(eps: float, delta: float) -> float:
    """The classic formula evaluated without its epsilon < 1 guard (for illustration only)."""
    return np.sqrt(2 * np.log(1.25 / delta)) / eps


eps_table = [0.1, 0.5, 0.9, 2.0, 5.0, 10.0, 20.0]
rows = []
for eps in eps_table:
    classic = classic_formula(eps, DELTA)
    rows.append({
        "epsilon": eps,
        "sigma classic": classic,
        "sigma analytic": gaussian_sigma_analytic(1.0, eps, DELTA),
        "true delta of classic / target": gaussian_delta(eps, classic) / DELTA,
    })
calibration = pd.DataFrame(rows)
print(calibration.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
assert all(gaussian_sigma_classic(1.0, e, DELTA) == classic_formula(e, DELTA) for e in (0.1, 0.5))

breaks = calibration.loc[calibration["true delta of classic / target"] > 1, "epsilon"]
glue("ch2_first_break", float(breaks.min()), display=False)
glue("ch2_saving_eps05", round(float(1 - rows[1]["sigma analytic"] / rows[1]["sigma classic"]), 2),
     display=False)

# %% tags=["remove-cell"]
# Where exactly the extrapolated classic formula stops being private (quoted in a solution).
from scipy.optimize import brentq

break_root = brentq(lambda e: gaussian_delta(e, classic_formula(e, DELTA)) - DELTA, 1.0, 20.0)
glue("ch2_break_root", round(break_root, 1), display=False)

# %% tags=["hide-input"] mystnb={"figure": {"caption": "Noise scale $\\sigma$ (for $\\Delta_2 = 1$, $\\delta = 10^{-5}$) against $\\varepsilon$. The classic formula is valid only for $\\varepsilon < 1$ (solid); extrapolated beyond (dashed), it first wastes noise and then, where the shaded region starts, falls below the analytic curve and is no longer $(\\varepsilon, \\delta)$-DP.", "name": "fig-gaussian-calibration"}}
eps_grid = np.geomspace(0.05, 30, 200)
classic_curve = classic_formula(eps_grid, DELTA)
analytic_curve = np.array([gaussian_sigma_analytic(1.0, e, DELTA) for e in eps_grid])
pdp_curve = np.array([gaussian_pdp_sigma(1.0, e, DELTA) for e in eps_grid])
fig, ax = new_figure()
valid = eps_grid < 1
ax.plot(eps_grid[valid], classic_curve[valid], color=PALETTE[0], label="classic (valid)")
ax.plot(eps_grid[~valid], classic_curve[~valid], "--", color=PALETTE[0],
        label="classic (extrapolated)")
ax.plot(eps_grid, analytic_curve, color=PALETTE[1], label="analytic (exact DP)")
ax.plot(eps_grid, pdp_curve, ":", color=PALETTE[2], label="exact PDP")
unsafe = eps_grid[classic_curve < analytic_curve]
if unsafe.size:
    ax.axvspan(unsafe.min(), eps_grid[-1], color="0.9", label="classic not private")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"$\varepsilon$")
ax.set_ylabel(r"$\sigma$")
ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# At $\varepsilon = 0.5$ the analytic calibration needs {glue}`ch2_saving_eps05` less noise
# (as a fraction of the classic $\sigma$) for the same guarantee. Extrapolated past
# $\varepsilon = 1$, the classic formula is first wasteful and then unsafe: in the table its
# true $\delta$ exceeds the target from $\varepsilon =$ {glue}`ch2_first_break` on. This is not
# academic: the colored-noise paper's code calibrates with a classic-style formula after
# multiplying $\varepsilon$ by $k d$, which lands in that region (see the colored-noise chapter).
#
# ## Probabilistic differential privacy
#
# ```{prf:definition} Probabilistic DP
# :label: def-pdp
#
# $M$ is $(\varepsilon, \delta)$-**probabilistically DP** {cite}`machanavajjhala2008privacy,meiser2018approximate`
# if for all neighbours $D \simeq D'$, $\Pr_{Y \sim M(D)}\big[|\mathcal L_{D,D'}(Y)| > \varepsilon\big] \le \delta$:
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
# complement $p_D(y) \le e^{\varepsilon} p_{D'}(y)$. For any $S$,
# $\Pr[M(D) \in S] = \Pr[M(D) \in S \setminus B] + \Pr[M(D) \in S \cap B]
#   \le e^{\varepsilon} \Pr[M(D') \in S \setminus B] + \delta
#   \le e^{\varepsilon} \Pr[M(D') \in S] + \delta.$
# ```
#
# The converse fails: $(\varepsilon, \delta)$-DP allows a loss above $\varepsilon$ with
# probability more than $\delta$, as long as those outputs are also fairly likely under $D'$.
# For the Gaussian mechanism the PDP tail is
# $\Pr[|\mathcal L| > \varepsilon] = \Phi(s/2 - \varepsilon/s) + \Phi(-s/2 - \varepsilon/s)$:
#
# ```{literalinclude} ../src/dpkmeans/privacy_loss.py
# :language: python
# :pyobject: gaussian_pdp_delta
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
grid = pd.DataFrame(grid_rows)
print(f"PDP implies DP on all {len(grid)} grid points: "
      f"{bool((grid['dp delta'] <= grid['pdp delta'] * (1 + 1e-12)).all())}")

converse = []
for eps in (0.5, 1.0, 2.0):
    sigma_dp = gaussian_sigma_analytic(1.0, eps, DELTA)
    converse.append({"epsilon": eps, "sigma (DP-calibrated)": sigma_dp,
                     "its PDP tail / delta": gaussian_pdp_delta(eps, sigma_dp) / DELTA,
                     "sigma (PDP-calibrated)": gaussian_pdp_sigma(1.0, eps, DELTA)})
print(pd.DataFrame(converse).to_string(index=False, float_format=lambda v: f"{v:.4g}"))

# %% [markdown]
# The theorem holds on every grid point. The converse fails by a large factor: the
# DP-calibrated mechanism exceeds the loss bound $\varepsilon$ with probability several times
# $\delta$, and PDP needs a somewhat larger $\sigma$. We can also see the theorem directly in
# samples: for the worst set $S^* = \{\mathcal L > \varepsilon\}$, the simulated
# $\Pr[M(D) \in S^*] - e^{\varepsilon} \Pr[M(D') \in S^*]$ (computed above as
# "simulated delta") stays below the PDP tail.

# %%
pdp_tail = gaussian_pdp_delta(eps_check, sigma)
print(f"simulated DP delta {empirical_delta:.5f} <= PDP tail {pdp_tail:.5f}: "
      f"{empirical_delta <= pdp_tail}")

# %% [markdown]
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - $(\varepsilon, \delta)$-DP allows a small additive slack $\delta$; the Gaussian mechanism
#   needs it because its privacy loss, $\mathcal N(s^2/2, s^2)$ with $s = \Delta_2/\sigma$, is
#   unbounded.
# - The exact privacy profile $\delta(\varepsilon) = \Phi(s/2 - \varepsilon/s) -
#   e^{\varepsilon}\Phi(-s/2-\varepsilon/s)$ gives the analytic calibration: the smallest private
#   $\sigma$ for any $\varepsilon$.
# - The classic formula holds only for $\varepsilon < 1$; there it wastes noise, and extrapolated
#   to large $\varepsilon$ it stops being private. The library refuses $\varepsilon \ge 1$.
# - PDP ($\Pr[|\mathcal L| > \varepsilon] \le \delta$) implies $(\varepsilon, \delta)$-DP but
#   is strictly stronger; calibrating for PDP costs a little more noise.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-ch2-l2
#
# For the DP-Lloyd query on $[-1, 1]^{24}$ (the Review-ratings data of the DP-KCCM paper) under
# add/remove, compare the Laplace scale for $\varepsilon = 1$ with the Gaussian $\sigma$ for
# $(\varepsilon, \delta) = (1, 10^{-5})$. Which adds less noise per coordinate?
# ```
#
# ```{solution} ex-ch2-l2
# :class: dropdown
#
# $\Delta_1 = d + 1 = 25$, so the Laplace scale is $25$ and its standard deviation
# $25\sqrt 2 \approx 35.4$. $\Delta_2 = \sqrt{24 + 1} = 5$, and
# `gaussian_sigma_analytic(5.0, 1.0, 1e-5)` gives $\sigma \approx 18.7$. The Gaussian adds
# about half the noise per coordinate, at the price of $\delta = 10^{-5}$.
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
# 5 and 10; the root is {glue}`ch2_break_root`. Below it, the extrapolated formula happens to be
# private but is still not covered by the theorem.
# ```
#
# ```{exercise}
# :label: ex-ch2-pdp
#
# Show that for the Laplace mechanism, $\varepsilon$-DP and $(\varepsilon, 0)$-PDP are the same
# guarantee. Why is this not true for the Gaussian mechanism?
# ```
#
# ```{solution} ex-ch2-pdp
# :class: dropdown
#
# The Laplace privacy loss is bounded by $\Delta_1/b = \varepsilon$ everywhere, so
# $\Pr[|\mathcal L| > \varepsilon] = 0$ and both definitions hold with $\delta = 0$. The Gaussian
# loss is a non-degenerate normal variable, so $\Pr[|\mathcal L| > \varepsilon] > 0$ for every
# $\varepsilon$: the Gaussian mechanism is never pure DP or $(\varepsilon, 0)$-PDP.
# ```
