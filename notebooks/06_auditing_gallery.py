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
# (sec-audit-gallery)=
# # A gallery of real bugs
#
# :::{admonition} Learning objectives
# :class: tip
# After this section you can
# - name the privacy bugs of this gallery, found in published code and libraries, and say
#   for each what leaks and which neighbouring pair and statistic expose it;
# - find the smallest audit that catches a bug with a doubling ladder of trials, and read
#   what it costs;
# - say why a bug that makes some output certain under one dataset and impossible under its
#   neighbour is caught with a few dozen trials, and why a small overspend is not;
# - explain why two fits with one fixed `random_state` charged to one accountant are not
#   private together, whatever the accountant adds up, and what the library does about it.
#
# **Prerequisites:** {doc}`06_auditing` (the split-sample audit, its Clopper–Pearson bound,
# the broken variants and the floating-point attack); {doc}`06_auditing_algorithms` (privacy
# loss statistics); the DP-Lloyd loop and its ledger ({doc}`05_dplloyd`). The algorithms whose
# code the bugs come from are described in their own chapters; this section needs only their
# names.
# :::
#
# An auditor that has only ever said `consistent` has shown nothing: it may be unable to see
# a violation at all. This section collects bugs that real code has shipped, each kept
# in the library as a deliberately broken variant whose configuration or ledger records the
# flaw, and asks of each the practical question: what is the *smallest* audit that catches
# it, and what does it cost to run? Beside every broken variant runs its corrected
# counterpart, audited at the same number of trials: it must not be accused (the false-alarm
# control). The gallery's numbers come from the committed sweep `audit_gallery`
# (`python -m dpkmeans sweep notebooks/sweeps/audit_gallery.yaml`), whose code is
# `dpkmeans.synthesis.gallery`.

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
GALLERY = "data/results/audit_gallery.csv"  # make reproduce
PITFALL_SEEDS = 30  # seeds of the live membership attack (case g)
PITFALL_SEED = 7  # the fixed random_state of the live demonstration

# %% tags=["hide-input"]
import textwrap

import numpy as np
import pandas as pd
from myst_nb import glue

from dpkmeans.errors import SeedReuseError
from dpkmeans.papers.su.study import diffprivlib_epsilon_factor
from dpkmeans.study.audit import log_ratio_bound
from dpkmeans.study.committed import committed_file
from dpkmeans.study.reading import count_of, join_names, number, table, yes_no
from dpkmeans.synthesis import gallery

# %% [markdown]
# ## The smallest audit that catches a bug
#
# Every case is audited with the split-sample audit of {doc}`06_auditing`: half of the trials
# choose a threshold event on the statistic, the other half bound its log ratio with exact
# Clopper–Pearson intervals at 99% confidence. The smallest audit is found by a doubling
# ladder: $n = 16, 32, 64, \dots$ trials per side, each rung with its own seed (derived from
# the case's name and $n$, so that no rung reuses another's luck), until a rung reports the
# violation; the ladder stops at $2^{22}$ trials a side. The corrected counterpart is
# then audited at the rung where the ladder stopped.
#
# ```{literalinclude} ../src/dpkmeans/synthesis/gallery.py
# :language: python
# :pyobject: ladder
# :lines: 1-3,39-
# ```
#
# Most of the bugs below do not overspend by a factor: they make some output *certain* on one
# dataset and *impossible* on its neighbour. For those, the audit's cost has a closed form.
#
# ```{prf:theorem} The cheapest audit of a certain leak
# :label: thm-certain-leak-audit
#
# Let an event $E$ have $\Pr[E \mid D] = 1$ and $\Pr[E \mid D'] = 0$, and let the split-sample
# audit at confidence $1 - \alpha$ judge $E$ on $m$ held-out trials per side. Its lower bound
# is
#
# $$
# \underline{\varepsilon}(m) = \ln \frac{(\alpha/2)^{1/m}}{1 - (\alpha/2)^{1/m}}
#   = \ln \frac{m}{\ln(2/\alpha)} + O(1/m),
# $$
#
# so it exceeds a claim $\varepsilon$ exactly when $m$ is at least the smallest integer with
# $\underline{\varepsilon}(m) > \varepsilon$, about $e^{\varepsilon} \ln(2/\alpha)$.
# ```
#
# ```{prf:proof}
# The audit bounds $\Pr[E \mid D]$ from below and $\Pr[E \mid D']$ from above, each with
# error probability $\alpha/2$, so that both hold with probability at least $1 - \alpha$.
# With all $m$ trials in $E$ on $D$, the Clopper–Pearson lower bound is the $\alpha/2$
# quantile of $\mathrm{Beta}(m, 1)$, whose distribution function is $p^m$: it is
# $(\alpha/2)^{1/m}$. With none in $E$ on $D'$, the upper bound is the $1 - \alpha/2$ quantile
# of $\mathrm{Beta}(1, m)$, whose distribution function is $1 - (1 - p)^m$: it is
# $1 - (\alpha/2)^{1/m}$. The bound is the log of their ratio. With
# $q = (\alpha/2)^{1/m} = e^{-\ln(2/\alpha)/m}$, $1 - q = \ln(2/\alpha)/m + O(1/m^2)$ and
# $q = 1 + O(1/m)$, which gives the expansion; the bound increases with $m$, so it passes
# $\varepsilon$ once and stays above it.
# ```
#
# With the split, $m$ is half of the trials per side. The library's own bound
# (`log_ratio_bound`) gives the rungs at which a certain leak is caught:

# %% tags=["hide-input"]
ALPHA = 1 - gallery.CONFIDENCE


def certain_leak_bound(trials: int) -> float:
    """The split-sample bound of a certain leak at ``trials`` per side."""
    m = trials // 2
    return float(log_ratio_bound(m, m, 0, m, 0.0, ALPHA))


rungs = [gallery.FIRST_TRIALS * 2**i for i in range(6)]
certain = pd.DataFrame({"trials a side": rungs,
                        "bound": [certain_leak_bound(n) for n in rungs]})


def first_rung(claim: float) -> int:
    """The first rung at which a certain leak beats ``claim``."""
    return next(n for n in rungs if certain_leak_bound(n) > claim)


table(certain, name="gallery-certain-leak",
      formats={"trials a side": "{:,}".format})

# %% tags=["remove-cell"]
glue("gal_rung_1", first_rung(1.0), display=False)
glue("gal_rung_2", first_rung(2.0), display=False)
m_approx = int(np.ceil(np.exp(4.0) * np.log(2 / ALPHA)))
m_exact = next(m for m in range(1, 10**4) if certain_leak_bound(2 * m) > 4.0)
rung4 = next(n for n in (16 * 2**i for i in range(20)) if n >= 2 * m_exact)
glue("gal_ex_m", m_approx, display=False)
glue("gal_ex_m_exact", m_exact, display=False)
glue("gal_ex_n", f"{2 * m_exact:,}", display=False)
glue("gal_ex_rung4", f"{rung4:,}", display=False)

# %% [markdown]
# A certain leak against a claim of $\varepsilon = 1$ is caught at {glue:text}`gal_rung_1`
# trials a side, and against $\varepsilon = 2$ at {glue:text}`gal_rung_2`: no fewer trials
# can do it, whatever the statistic. That is the floor of the tables below.
#
# ## The gallery
#
# The bugs, where each comes from, and what the broken variant's ledger records for it:

# %% tags=["hide-input"]
rows = pd.read_csv(committed_file(GALLERY)).sort_values("case")
caught = rows[rows["detected"]]
missed = rows[~rows["detected"]]
assert not rows["control_detected"].any(), "a corrected counterpart was accused"


def ledger_says(row: pd.Series) -> str:
    """The broken variant's ledger, in words."""
    if not row["ledger_is_private"]:
        return "not private (a leak)"
    return f"overspends: ε = {number(row['ledger_epsilon'])}"


bugs = pd.DataFrame({
    "case": rows["case"], "bug": rows["name"], "from": rows["source"],
    "recorded flaw": rows["flaws"], "ledger": rows.apply(ledger_says, axis=1),
    "claimed ε": rows["claimed_epsilon"]})
table(bugs, name="gallery-bugs", wide=True)

# %% [markdown]
# And how each was audited: the statistic, the trials a side of the rung that caught it, the
# lower bound there against the claim, and the same audit of the corrected counterpart (the
# control).

# %% tags=["hide-input"]
audits = pd.DataFrame({
    "case": rows["case"], "audit": rows["access"], "statistic": rows["statistic"],
    "trials a side": rows["trials"], "lower bound": rows["lower_bound"],
    "bound / claim": rows["ratio"], "caught": rows["detected"],
    "seconds": rows["seconds"], "control bound": rows["control_lower_bound"],
    "control caught": rows["control_detected"]})
table(audits, name="gallery-audits", wide=True,
      formats={"trials a side": "{:,}".format, "caught": yes_no,
               "control caught": yes_no})

# %% tags=["remove-cell"]
by_case = rows.set_index("case")
glue("gal_caught", count_of(len(caught), len(rows)), display=False)
glue("gal_missed", join_names(f"({c})" for c in missed["case"]) or "none",
     display=False)
glue("gal_max_seconds", number(caught["seconds"].max(), 2), display=False)
glue("gal_max_trials", f"{int(caught['trials'].max()):,}", display=False)
for letter, row in by_case.iterrows():
    glue(f"gal_{letter}_trials", f"{int(row['trials']):,}", display=False)
    glue(f"gal_{letter}_bound", number(row["lower_bound"], 3), display=False)
    glue(f"gal_{letter}_ratio", number(row["ratio"], 2), display=False)
    glue(f"gal_{letter}_control", number(row["control_lower_bound"], 3), display=False)
c_row = by_case.loc["c"]
glue("gal_c_ledger", number(c_row["ledger_epsilon"], 3), display=False)
glue("gal_c_claim", number(c_row["claimed_epsilon"]), display=False)
glue("gal_c_factor", number(c_row["ledger_epsilon"] / c_row["claimed_epsilon"], 3),
     display=False)
glue("gal_c_d", gallery.SWAP_D, display=False)
glue("gal_c_needed", f"{gallery.swap_trials_needed():,}", display=False)
glue("gal_c_caught", "caught" if c_row["detected"] else "not caught", display=False)
overspends = next(d for d in range(1, 50) if diffprivlib_epsilon_factor(d) > 1)
glue("gal_c_overspends", overspends, display=False)
glue("gal_g_claim", number(by_case.loc["g", "claimed_epsilon"]), display=False)

# %% [markdown]
# {glue:text}`gal_caught` bugs are caught, each at the smallest rung of its ladder, the
# costliest in {glue:text}`gal_max_trials` trials a side and at most
# {glue:text}`gal_max_seconds` seconds; not caught within the cap:
# {glue:text}`gal_missed`. No corrected counterpart is accused. The cases:
#
# - **(a) One seed for two noises.** FastLloyd's published code {cite}`diaa2025fastlloyd`
#   seeds the count noise and the sum noise of an iteration with the same value, so a
#   cluster's count noise is, in the released whitened vector, exactly the noise of one sum
#   coordinate. Their difference is exact: one value on $D$, another on $D'$, a certain leak,
#   caught at {glue:text}`gal_a_trials` trials (bound {glue:text}`gal_a_bound`; the corrected
#   release, two independent noises, {glue:text}`gal_a_control`).
# - **(b) Seed 0 in the first iteration.** The same code seeds iteration $i$ with
#   $\text{seed} \times i$ and counts iterations from 0 (`iteration_seed` in
#   `dpkmeans.papers.fastlloyd.flaws`), so every run's first release carries the same noise,
#   which anybody can regenerate. An auditor need not even regenerate it: the first release is
#   the same in every run on $D$, and another on $D'$. Caught at {glue:text}`gal_b_trials`
#   trials.
# - **(c) The swapped split.** diffprivlib 0.6.6 {cite}`holohan2019diffprivlib` hands the
#   count's budget share to each of the $d$ sum coordinates and one coordinate's share to the
#   count. At $d =$ {glue:text}`gal_c_d` and a claim of {glue:text}`gal_c_claim` the ledger
#   charges the true spend, {glue:text}`gal_c_ledger`. The audit uses the strongest statistic
#   there is, the exact privacy loss of the released sums and count, and is
#   {glue:text}`gal_c_caught` at {glue:text}`gal_c_trials` trials (bound
#   {glue:text}`gal_c_bound`, ratio {glue:text}`gal_c_ratio`): the overspend lives in outputs
#   where every coordinate is pushed the same way, and the exact loss distribution says that
#   {glue:text}`gal_c_needed` trials a side are needed for a 90% chance. $d$ is chosen where
#   that number is smallest: below $d =$ {glue:text}`gal_c_overspends` the swap does not
#   overspend at all, and for larger $d$ the exposing outputs get rarer faster than the
#   overspend grows.
# - **(d) Empty clusters skipped.** diffprivlib 0.6.6 gives an empty cluster no noise and
#   keeps its centre. A record added near an empty cluster's start then decides whether that
#   centre moves at all: caught at {glue:text}`gal_d_trials` trials.
# - **(e) Bounds from the data.** The code of several papers scales the data by its own
#   minimum and maximum (and `DPKMeans(bounds=None)` does the same, with a warning). One record
#   outside the others' range moves the box, and a centre outside $D$'s box is impossible on
#   $D$: caught at {glue:text}`gal_e_trials` trials.
# - **(f) A covariance fitted to the data.** CEDS, the code of Ravi, Scaglione and Peisert
#   {cite}`ravi2021colored`, shapes its noise by the leave-one-out shifts of the centroids on
#   the private data. Where the records agree the shifts, and the noise, are nearly zero: a
#   centre released almost exactly on $D$ and with noise on $D'$, caught at
#   {glue:text}`gal_f_trials` trials.
# - **(g) One `random_state` for two fits on one accountant**, the pitfall of the next
#   section: caught at {glue:text}`gal_g_trials` trials against the accountant's claim of
#   {glue:text}`gal_g_claim`.
# - **(h) Floating-point Laplace.** numpy's textbook sampler can only reach some doubles from
#   a given value {cite}`mironov2012significance`; an output that the neighbour's value
#   cannot produce reveals it. The exact sampler's outputs lie on a public grid that every
#   value reaches: its control bound is {glue:text}`gal_h_control`. Caught at
#   {glue:text}`gal_h_trials` trials.
#
# The leaks cost what {prf:ref}`thm-certain-leak-audit` says, or one rung more where the
# exposing event is likely rather than certain: {glue:text}`gal_rung_1` trials a side against
# a claim of 1, {glue:text}`gal_rung_2` against 2, and seconds at most. The overspend is the
# opposite: its ledger says at once that the fit spends more than it claims, while even the
# strongest audit of its outputs needs millions of trials. A ledger that charges every
# release at its true cost tests the code against the proof; an audit tests the outputs
# against the claim. The gallery needs both.
#
# ## The seed pitfall
#
# A fixed `random_state` is the habit of reproducible machine learning. Applied to private
# fits that share one accountant it voids the accountant: two fits with one seed draw the
# same noise, and on neighbouring data the difference of their outputs is exact.
#
# ```{prf:theorem} Fits that share their noise are not private together
# :label: thm-shared-seed-fits
#
# Let $M_1$ and $M_2$ release $f(Z) + \eta$ and $f(Z \setminus \{x\}) + \eta$ with the same
# noise $\eta$ (one seed), where $f(Z) - f(Z \setminus \{x\})$ is $c \ne 0$ when $x \in Z$
# and $0$ otherwise. Then the pair $(M_1, M_2)$ is not $(\varepsilon, \delta)$-DP for any
# $\varepsilon$ and any $\delta < 1$, whatever the budgets of $M_1$ and $M_2$.
# ```
#
# ```{prf:proof}
# Take $D \ni x$ and $D' = D \setminus \{x\}$, neighbours under add/remove. The difference of
# the two releases is $f(D) - f(D \setminus \{x\}) = c$ on $D$ and
# $f(D') - f(D') = 0$ on $D'$, since $D' \setminus \{x\} = D'$: the noise cancels. The event
# "the difference is $c$" has probability 1 under $D$ and 0 under $D'$, and
# $1 \le e^{\varepsilon} \cdot 0 + \delta$ fails for every $\varepsilon$ when $\delta < 1$.
# ```
#
# `DPKMeans` releases a noisy record count (`n_records_used_`), so the theorem applies with
# $c = 1$. The accountant (`PrivacyLedger`) therefore keeps the seed material of every fit it
# is charged with, and by default refuses a fit that repeats it, before the fit draws
# anything:

# %%
D, D_prime = gallery.seed_reuse_pair()  # D' is D without its last record
try:
    gallery.refit_difference(D, (PITFALL_SEED, PITFALL_SEED), seed_reuse="refuse")
except SeedReuseError as error:
    print(type(error).__name__ + ":")
    print(textwrap.fill(str(error), 80))

# %% [markdown]
# For demonstrations and tests the switch `seed_reuse="record"` lets the second fit run and
# records a leak in the accountant, whose verdict is then "not private":

# %%
difference, accountant = gallery.refit_difference(D, (PITFALL_SEED, PITFALL_SEED))
leaks = [e.label for e in accountant.entries if e.mechanism.startswith("LEAK")]
print("n_records_used_ of the fit on D minus that on D without x:", difference)
print("accountant is private:", accountant.is_private)
print(textwrap.fill("its leak: " + leaks[0].split(":")[0], 80))

# %% [markdown]
# And the membership attack of the theorem succeeds: over many seeds the difference is
# exactly 1 when the target is in the data and exactly 0 when it is not.

# %%
seeds = range(PITFALL_SEEDS)
on_d = [gallery.refit_difference(D, (s, s))[0] for s in seeds]
on_d_prime = [gallery.refit_difference(D_prime, (s, s))[0] for s in seeds]
print("difference 1 with the target:", sum(v == 1 for v in on_d), "of", len(on_d))
print("difference 0 without it:", sum(v == 0 for v in on_d_prime), "of",
      len(on_d_prime))

# %% tags=["remove-cell"]
assert set(on_d) == {1} and set(on_d_prime) == {0}
glue("gal_pitfall_seeds", PITFALL_SEEDS, display=False)

# %% [markdown]
# In all {glue:text}`gal_pitfall_seeds` seeds the attacker reads the membership off the two
# fits, while each fit alone is private and the accountant, without the seed check, would
# report a total of {glue:text}`gal_g_claim`. Case (g) of the gallery turns this into an
# audit verdict at {glue:text}`gal_g_trials` trials a side (bound {glue:text}`gal_g_bound`);
# with one seed per fit (the corrected counterpart) the bound is {glue:text}`gal_g_control`.
# To refit with a fixed seed and keep the accountant's guarantee, give each fit its own seed,
# for instance one child of `numpy.random.SeedSequence(seed).spawn(n)` per fit, or
# `random_state=None` for fresh entropy.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - Bugs from published code and libraries are kept as broken variants whose
#   configuration or ledger records the flaw; each is audited beside its corrected
#   counterpart, which is never accused.
# - A bug that makes an output certain on one dataset and impossible on its neighbour is
#   caught by the first rung at which the split-sample bound of a certain event beats the
#   claim: a few dozen trials ({prf:ref}`thm-certain-leak-audit`). Every bug of the gallery
#   but the overspend is of this kind.
# - A small overspend (diffprivlib's swapped split, {glue:text}`gal_c_factor` times the
#   claim) hides in rare outputs: even the exact privacy loss as the statistic needs
#   millions of trials. Its ledger, which charges each release at its true budget, shows it
#   at once.
# - Two fits with one seed share their noise and are not private together
#   ({prf:ref}`thm-shared-seed-fits`). The accountant refuses a repeated seed by default;
#   `seed_reuse="record"` runs the fit and records the leak.
# :::
#
# ## Exercises
#
# ```{exercise}
# :label: ex-gallery-certain-rung
# :class: pen-and-paper
#
# Use {prf:ref}`thm-certain-leak-audit` with $\alpha = 0.01$. (a) About how many held-out
# trials per side does a certain leak need against a claim of $\varepsilon = 4$, and how many
# trials per side does the split-sample audit then run? (b) The floating-point case (h) has
# $\Pr[E \mid D] < 1$. Does the bound need more or fewer trials than for a certain leak, and
# why?
# ```
#
# ```{solution} ex-gallery-certain-rung
# :class: dropdown
#
# (a) The bound passes $\varepsilon$ once $m / \ln(2/\alpha) \gtrsim e^{\varepsilon}$, that is
# $m \approx e^4 \ln 200 \approx$ {glue:text}`gal_ex_m` held-out trials (the exact bound
# needs {glue:text}`gal_ex_m_exact`), so about {glue:text}`gal_ex_n` trials per side with the
# split; the doubling ladder stops at the first rung above, {glue:text}`gal_ex_rung4`.
# (b) More: with $\Pr[E \mid D] = p < 1$, about $pm$ of the held-out trials on $D$ fall in
# $E$, the lower Clopper–Pearson bound is about $p$ times smaller, and the bound loses
# $\ln(1/p)$; it needs about $1/p$ times as many trials.
# ```
#
# ```{exercise}
# :label: ex-gallery-ladder
#
# Run the ladder of case (e) from another study seed, `gallery.ladder(gallery.case("e"),
# base_seed=1)`. At which rung is it caught, and what is the control's bound there? Is it
# the rung in the table of audits, and should it be?
# ```

# %% tags=["remove-cell"]
rung, was_caught, _ = gallery.ladder(gallery.case("e"), base_seed=1)
glue("gal_ex_rung", f"{rung.trials:,}", display=False)
glue("gal_ex_control", number(rung.control.lower_bound, 3), display=False)
glue("gal_ex_caught", "caught" if was_caught else "not caught", display=False)

# %% [markdown]
# ```{solution} ex-gallery-ladder
# :class: dropdown
#
# From seed 1 the bug is {glue:text}`gal_ex_caught` at {glue:text}`gal_ex_rung` trials a
# side, with a control bound of {glue:text}`gal_ex_control` (the rung in the table of audits:
# {glue:text}`gal_e_trials`). The rung need not be the same: each rung is a random audit, and
# near the threshold of {prf:ref}`thm-certain-leak-audit` a different seed can put one
# held-out trial more or fewer in the event. What does not change is the order of
# magnitude, which the theorem fixes, and the control, which stays below the claim.
# ```
