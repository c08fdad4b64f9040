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
# # Which private k-means should you use?
#
# :::{admonition} Learning objectives
# :class: tip
# After this chapter you can
# - run every corrected algorithm of the book through one estimator,
#   `DPKMeans(algorithm=...)`, and share one privacy budget across several fits;
# - read the leaderboard: every corrected algorithm on every numeric dataset of the papers,
#   on one $\varepsilon$ grid, with 95% intervals and ranks that tie where the intervals
#   overlap;
# - choose an algorithm for your data from $N\varepsilon/k$ and $d$, with the evidence behind
#   the choice;
# - say, for each headline claim of the five papers, whether it held here for the published
#   method and for its corrected version, and for each paper whether its algorithm is
#   private as published.
#
# **Prerequisites:** a practitioner can read this chapter first: it needs only the idea of
# a privacy budget $\varepsilon$ ({doc}`01_dp_laplace`) and of the DP-Lloyd loop
# ({doc}`05_dplloyd`). The verdicts at the end summarise chapters 7 to 11, which hold the
# evidence; sequential composition ({doc}`03_composition`) underlies the shared budget.
# :::
#
# The four paper chapters each reproduced one paper on its own terms. This chapter puts the
# corrected algorithms side by side under the same conditions, turns the comparison into
# advice, and collects the book's verdicts in one place. Every number below is read from the
# committed results (`data/results/` in the book's source), and every table is computed from
# them.

# %% tags=["parameters", "hide-input"]
SEED = 2026  # the estimator examples' seed
RESULTS = "data/results"  # the leaderboard and the papers' claims ledgers
LEADERBOARD = "data/results/leaderboard.csv"  # the leaderboard sweep writes it

# %% tags=["hide-input"]
import textwrap
from dataclasses import replace

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from IPython.display import Markdown
from myst_nb import glue

from dpkmeans.compute import metrics
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.study.committed import committed_file
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine.loop import run
from dpkmeans.errors import BudgetExceededError
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.study.plotting import COLUMN_INCHES, use_book_style
from dpkmeans.study.reading import markdown_table, number, percent, table
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity
from dpkmeans.synthesis import leaderboard, ledger, ranking

use_book_style()
results = pd.read_csv(committed_file(LEADERBOARD))
claims_folder = committed_file(f"{RESULTS}/leaderboard.csv").parent

# %% [markdown]
# ## Every algorithm, one estimator
#
# `DPKMeans` takes the name of any corrected algorithm of the book. Each name maps to the
# configuration its chapter proves private, built by `dpkmeans.api.catalogue`; the
# as-published variants are not offered, because they are not private (see
# {ref}`privacy-claims` below). They remain reachable, for study, through
# `dpkmeans.papers.<paper>.variants`.

# %% tags=["hide-input"]
catalogue = pd.DataFrame([{
    "algorithm": c.name, "chapter": c.chapter, "adjacency": c.neighbour,
    "guarantee": "(ε, δ)-DP" if c.needs_delta else "ε-DP",
    "reads N": "public, or paid for" if c.needs_n_records else "no",
    "what it is": c.summary} for c in CATALOGUE.values()])
table(catalogue, name="catalogue")

# %% [markdown]
# Two of them need more than $\varepsilon$: `colored` is $(\varepsilon, \delta)$-DP and
# takes `delta`, and `di` is proven under replace adjacency and also takes its budget as a
# posterior bound `rho` over `m` possible worlds (chapter 11). `dplloyd-impr` and `apdp`
# read the number of records: give it as `n_records` if it is public, or let the estimator
# spend a share of $\varepsilon$ on a noisy count. Here is each of them fitted once, at
# $\varepsilon = 1$, on a synthetic mixture of four clusters, with what each fit spent:

# %%
data = gaussian_mixture_dataset(5000, 4, 4, rng=np.random.default_rng(SEED))
X = data.scaled((-1, 1)).X
fits = {}
for name, choice in CATALOGUE.items():
    extra = {"delta": 1e-6} if choice.needs_delta else {}
    model = DPKMeans(4, epsilon=1.0, bounds=(-1, 1), algorithm=name,
                     random_state=SEED, **extra)
    fits[name] = model.fit(X)

# %% tags=["hide-input"]
spent = pd.DataFrame([{"algorithm": name, "ε spent": model.privacy_spent_.epsilon,
                       "δ spent": model.privacy_spent_.delta}
                      for name, model in fits.items()])
table(spent, name="spent")

# %% [markdown]
# ### One budget across fits
#
# An analyst rarely fits once. A `PrivacyLedger` with a total budget, passed as `accountant`
# to every fit, composes them: each finished fit is recorded in it (its whole ledger, as one
# part), and a fit that would take it past its budget is refused *before* any noise is drawn.

# %%
accountant = PrivacyLedger(budget=2.0)
DPKMeans(4, epsilon=1.0, bounds=(-1, 1), algorithm="dp-kccm", accountant=accountant,
         random_state=SEED).fit(X)
DPKMeans(4, epsilon=0.5, bounds=(-1, 1), algorithm="apdp", accountant=accountant,
         random_state=SEED).fit(X)
try:
    DPKMeans(4, epsilon=1.0, bounds=(-1, 1), accountant=accountant,
             random_state=SEED).fit(X)
except BudgetExceededError as refused:
    print(textwrap.fill(str(refused), 86))

# %% tags=["remove-cell"]
glue("ch12_spent", number(accountant.total().epsilon), display=False)
glue("ch12_left", number(accountant.remaining().epsilon), display=False)

# %% [markdown]
# Two fits spent {glue:text}`ch12_spent` of the 2.0; the third asked for more than the
# {glue:text}`ch12_left` left and was refused. The refusal itself is safe to show:
#
# ```{prf:theorem} A shared accountant
# :label: thm-shared-accountant
#
# Let fits $M_1, M_2, \dots$ run on the same data, $M_i$ being $\varepsilon_i$-DP (or
# $(\varepsilon_i, \delta_i)$-DP) under one adjacency, and let each fit be run only if
# $\sum_{j \le i} \varepsilon_j \le B$ (and $\sum_{j \le i} \delta_j \le \Delta$). Then the
# sequence of everything released, refusals included, is $(B, \Delta)$-DP.
# ```
#
# ```{prf:proof}
# Whether fit $i$ runs depends only on $\varepsilon_1, \dots, \varepsilon_i$ (and the
# $\delta$'s), which the analyst chose: public inputs, not functions of the data. So a refusal
# reveals nothing about the data, and the fits that run form a sequence whose budgets sum to at
# most $B$ (and $\Delta$). Sequential composition ({prf:ref}`thm-sequential`) bounds the
# sequence by $(\sum_i \varepsilon_i, \sum_i \delta_i) \le (B, \Delta)$. The choice of the next
# fit may depend on earlier *releases* (adaptive composition), which basic composition allows.
# The accountant and a fit must use the same adjacency: under replace adjacency an
# $\varepsilon$ means something else, so the estimator refuses to mix the two.
# ```
#
# The check runs before the fit draws anything:
#
# ```{literalinclude} ../src/dpkmeans/api/estimators.py
# :language: python
# :pyobject: check_accountant
# :lines: 1-2, 38-
# ```

# %% [markdown]
# ## The leaderboard
#
# The sweep `notebooks/sweeps/leaderboard.yaml` runs every corrected algorithm on each numeric
# dataset of the papers (at the $k$ the papers used), at every $\varepsilon$ of one grid, with
# the same number of independent runs a point. Each algorithm runs as the estimator runs it:
# its own initialisation and its own rule for $T$, the public record count where its rule reads
# one, and `colored` at $\delta$ = {glue:text}`ch12_delta`. The measure is the relative
# NICV against non-private Lloyd from shared sphere-packing starts,
# $(\mathrm{NICV}_{dp} - \mathrm{NICV}_{lloyd}) / \mathrm{NICV}_{lloyd}$ (0 is as good as
# Lloyd; it can be negative, since Lloyd's mean over its starts includes poor local optima).

# %%
assert results["is_private"].all()
assert (results["epsilon_spent_max"] <= results["epsilon"] * (1 + 1e-9)).all()
print(f"{results['algorithm'].nunique()} algorithms x {results['dataset'].nunique()} "
      f"datasets x {results['epsilon'].nunique()} budgets, "
      f"{results['replicas'].iloc[0]} runs a point")

# %% tags=["remove-cell"]
n_points = results[["case", "epsilon"]].drop_duplicates().shape[0]
glue("ch12_delta", number(leaderboard.DELTA), display=False)
glue("ch12_runs", int(results["replicas"].iloc[0]), display=False)
glue("ch12_n_algorithms", results["algorithm"].nunique(), display=False)
glue("ch12_n_datasets", results["dataset"].nunique(), display=False)
glue("ch12_n_eps", results["epsilon"].nunique(), display=False)
glue("ch12_n_points", n_points, display=False)

# %% mystnb={"figure": {"caption": "The leaderboard: $\\log_{10}$ of the private NICV over non-private Lloyd's (0: as good as Lloyd; 1: ten times worse), for every corrected algorithm (rows) at every $\\varepsilon$ (columns), one panel per dataset, the smallest first; $N$, $d$ and $k$ under each name.", "name": "fig-synthesis-heatmap"}} tags=["hide-input"]
order = list(CATALOGUE)
cases = (results[["case", "N"]].drop_duplicates().sort_values("N")["case"].tolist())
epsilons = sorted(results["epsilon"].unique())
fig, axes = plt.subplots(3, 3, figsize=(COLUMN_INCHES, 8.4), sharex=True, sharey=True,
                         constrained_layout=True)
ratio = np.log10(np.clip(1 + results["rel_nicv_mean"], 1e-3, None))
vmax = float(np.ceil(ratio.max() * 2) / 2)
for ax, case in zip(axes.flat, cases):
    one = results[results["case"] == case].assign(log_ratio=ratio)
    grid = one.pivot(index="algorithm", columns="epsilon",
                     values="log_ratio").loc[order, epsilons]
    image = ax.imshow(grid.to_numpy(), cmap="viridis", aspect="auto",
                      vmin=min(0.0, float(ratio.min())), vmax=vmax)
    row = one.iloc[0]
    ax.set_title(f"{row['dataset']}\nN={row['N']:,}, d={row['d']}, k={row['k']}",
                 fontsize=10)
    ax.set_xticks(range(len(epsilons)), [f"{e:g}" for e in epsilons], fontsize=9,
                  rotation=90)
    ax.set_yticks(range(len(order)), order, fontsize=10)
    ax.grid(False)
for ax in axes[-1]:
    ax.set_xlabel(r"$\varepsilon$")
fig.colorbar(image, ax=axes, location="bottom", shrink=0.7, aspect=40,
             label=r"$\log_{10}$(NICV / NICV of Lloyd)")
plt.show()

# %% [markdown]
# {numref}`fig-synthesis-heatmap` shows the whole leaderboard: {glue:text}`ch12_n_algorithms`
# algorithms on {glue:text}`ch12_n_datasets` datasets at {glue:text}`ch12_n_eps` budgets,
# {glue:text}`ch12_runs` runs each. Two rows stand out: {glue:text}`ch12_halving` stay far
# from Lloyd even at the largest budget, $\varepsilon$ = {glue:text}`ch12_eps_max` (median
# relative NICV there {glue:text}`ch12_halving_at_max`, against
# {glue:text}`ch12_others_at_max` for the others). Both halve their budget every iteration
# and release the last, noisiest centroids (chapter 10: the last of $T$ halving steps is
# $2^{T-1}$ times as noisy as the first), so their error barely falls with $\varepsilon$.

# %% tags=["remove-cell"]
# dp-kccm and di measure each record from the box's midpoint, as the other algorithms do. On
# the smallest dataset, the same runs (same seeds) measured from the origin: what it changed.
small = results.sort_values("N").iloc[0]
public = leaderboard.apdp_study.load_public(small["case"])
X_small = np.asarray(public.X)
base_seed = int(results["base_seed"].iloc[0])
unit = (np.zeros(X_small.shape[1]), np.ones(X_small.shape[1]))
for name in ("dp-kccm", "di"):
    rows = results[(results["case"] == small["case"]) & (results["algorithm"] == name)]
    origin = []
    for _, row in rows.iterrows():
        point = leaderboard.Point(row["case"], name, float(row["epsilon"]))
        config = leaderboard.config_of(point, X_small.shape[1], public.public_n_records)
        assert config.centred
        fit = run(X_small, replace(config, centred=False),
                  leaderboard.point_seed(base_seed, point), replicas=int(row["replicas"]))
        nicv = np.asarray(metrics.nicv(X_small, fit.centroids))
        origin.append(np.mean((nicv - row["nicv_reference"]) / row["nicv_reference"]))
    glue(f"ch12_{name}_centred", number(rows["rel_nicv_mean"].median()), display=False)
    glue(f"ch12_{name}_origin", number(np.median(origin)), display=False)
    sens = [lloyd_query_sensitivity(unit, CATALOGUE[name].neighbour, centred=c).joint
            for c in (True, False)]
    glue(f"ch12_{name}_delta", f"{number(sens[0])} instead of {number(sens[1])}",
         display=False)
    # the text: centring helps dp-kccm here and hurts di, and says why
    assert (rows["rel_nicv_mean"].median() > np.median(origin)) == (name == "di")
glue("ch12_small", small["dataset"], display=False)
glue("ch12_small_d", int(small["d"]), display=False)
glue("ch12_small_mean", number(float(np.median(X_small.mean(axis=0)))), display=False)

# %% [markdown]
# `dp-kccm` and `di` now measure each record from the midpoint of the box, as the other
# algorithms do ({doc}`05_dplloyd`); the book's earlier leaderboard measured them from the
# origin, as their papers do. On {glue:text}`ch12_small` ($d$ = {glue:text}`ch12_small_d`)
# their sensitivities are {glue:text}`ch12_dp-kccm_delta` and {glue:text}`ch12_di_delta`, and
# their median relative NICV over the grid is {glue:text}`ch12_dp-kccm_centred` and
# {glue:text}`ch12_di_centred`, against {glue:text}`ch12_dp-kccm_origin` and
# {glue:text}`ch12_di_origin` for the same runs measured from the origin. Less noise helped
# `dp-kccm` but not `di`, whose halving schedule leaves its last iterations almost all noise:
# where the noise swamps a cluster's statistics, the released centroids scatter about the
# box's centre instead of its origin corner, and {glue:text}`ch12_small`'s records sit near
# that corner (the median of its column means is {glue:text}`ch12_small_mean` on $[0, 1]$),
# so the old bias happened to favour them.
#
# ### Ranks with ties
#
# At each point (a dataset at an $\varepsilon$), an algorithm's rank is one plus the number of
# algorithms significantly better than it: those whose 95% interval lies entirely below its
# own. Overlapping intervals tie, so several algorithms can share first place. Over all
# points:

# %% tags=["hide-input"]
ranks = ranking.ranking_table(results)
table(ranks[["algorithm", "mean_rank", "first", "points", "median_rel_nicv"]].rename(
    columns={"mean_rank": "mean rank", "first": "first (alone or tied)",
             "points": "points", "median_rel_nicv": "median relative NICV"}),
      name="ranks")

# %% tags=["remove-cell"]
best, worst = ranks.iloc[0], ranks.iloc[-1]
halving = sorted(ranks["algorithm"].iloc[-2:])  # the two worst mean ranks
assert halving == ["di", "silhouette"], "the text explains the halving schedules' last place"
at_max = results[results["epsilon"] == results["epsilon"].max()]
glue("ch12_eps_max", number(results["epsilon"].max()), display=False)
glue("ch12_halving", " and ".join(halving), display=False)
glue("ch12_halving_at_max", " and ".join(
    number(at_max[at_max["algorithm"] == a]["rel_nicv_mean"].median()) for a in halving),
    display=False)
glue("ch12_others_at_max",
     number(at_max[~at_max["algorithm"].isin(halving)]["rel_nicv_mean"].median()),
     display=False)
glue("ch12_best", best["algorithm"], display=False)
glue("ch12_best_rank", f"{best['mean_rank']:.2f}", display=False)
glue("ch12_best_first", f"{int(best['first'])} of {int(best['points'])}", display=False)
glue("ch12_worst", worst["algorithm"], display=False)
glue("ch12_worst_rank", f"{worst['mean_rank']:.2f}", display=False)
glue("ch12_second", ranks.iloc[1]["algorithm"], display=False)
glue("ch12_third", ranks.iloc[2]["algorithm"], display=False)

# %% [markdown]
# Over all {glue:text}`ch12_n_points` points, {glue:text}`ch12_best` has the best mean rank
# ({glue:text}`ch12_best_rank`) and is first, alone or tied, at
# {glue:text}`ch12_best_first` points; {glue:text}`ch12_second` and {glue:text}`ch12_third`
# follow. {glue:text}`ch12_worst` is last (mean rank {glue:text}`ch12_worst_rank`).
#
# (choosing-an-algorithm)=
# ## Choosing an algorithm
#
# The signal a private Lloyd iteration works with is a cluster's sum against noise of scale
# about $1/\varepsilon_t$: roughly $N\varepsilon/k$ records' worth per cluster. So the
# regimes below are bins of $N\varepsilon/k$, crossed with the dimension (the sums' noise
# grows with $d$). In each regime the table lists the three algorithms most often ranked
# first (alone or tied), then by mean rank, with the number of leaderboard points behind the
# advice and the datasets they come from. It is computed from the leaderboard, like the
# advice after it.

# %% tags=["remove-cell"]
#: How a regime's label is written: typeset math, or plain text for a glued phrase.
REGIME_SYMBOLS = {"tex": (r"N\varepsilon/k", r"\le", r"\ge", "10^4"),
                  "text": ("Nε/k", "≤", "≥", "10,000")}


def regime_label(label: str, form: str = "tex") -> str:
    """A regime's label for readers: 'N eps / k < 100' -> $N\\varepsilon/k < 100$ (tex) or
    'Nε/k < 100' (text)."""
    signal, le, ge, ten_thousand = REGIME_SYMBOLS[form]
    text = (label.replace("N eps / k", signal).replace("<=", le).replace(">=", ge)
            .replace("10000", ten_thousand))
    return f"${text}$" if form == "tex" else text


advice = ranking.recommendations(results)
shown = advice.assign(
    regime=[f"{regime_label(s)}, {regime_label(d)}"
            for s, d in zip(advice["signal_regime"], advice["d_regime"])],
    algorithm=[f"`{a}`" for a in advice["algorithm"]],
    first=[percent(f) for f in advice["first_share"]],
    rank=[f"{r:.2f}" for r in advice["mean_rank"]],
    points=[str(p) for p in advice["points"]])
shown.loc[shown["place"] > 1, ["regime", "datasets", "points"]] = ""
glue("ch12_advice_table", Markdown(markdown_table(
    shown[["regime", "place", "algorithm", "first", "rank", "points", "datasets"]].rename(
        columns={"first": "first at", "rank": "mean rank"}),
    align={"points": "right"})), display=False)

top = advice[advice["place"] == 1]
favourite = top["algorithm"].value_counts()
glue("ch12_most_recommended", favourite.index[0], display=False)
glue("ch12_most_recommended_n", f"{favourite.iloc[0]} of {len(top)}", display=False)

# %% [markdown]
# ```{glue:md} ch12_advice_table
# :format: myst
# ```
#
# {glue:text}`ch12_most_recommended` is the first choice in {glue:text}`ch12_most_recommended_n`
# regimes. Where several algorithms are first at every point of a regime they are equally good
# there (the order among them is by mean rank, a weak preference). Two more cautions. The
# leaderboard measures NICV at the papers' own $k$ on their datasets; another loss (the
# F-measure against classes, chapter 8) or another $k$ may order the algorithms differently.
# And a regime with few points gives weak advice: the table says how many points stand
# behind each line.
#
# (privacy-claims)=
# ## The book's verdicts
#
# ### Headline claims
#
# Each paper chapter computed a verdict for every claim the paper makes about its results,
# with the rules defined in chapter 7 ({ref}`claims-verdicts`): *holds*, *refuted* (the
# opposite is significant), *inconclusive* (no significant difference) or *mixed* (the
# verdict differs across datasets or settings). Here they are together; a claim tested on
# several datasets, metrics or readings (each one test) combines its tests' verdicts: the
# same verdict everywhere, or *mixed*.
#
# Four of the papers are flawed as published (next section), and the book runs each of them
# twice: *as published* and *corrected*. Where a chapter also tested a claim on the corrected
# method, the table gives both verdicts side by side; a dash means the claim has no corrected
# counterpart (it is about the published method itself, or the paper needs no correction).
# The two differ where the correction changes what is measured. The published colored
# mechanism owes its gain over white noise to a covariance fitted to the private data, which
# a private release cannot use (chapter 9). The published APDPk-means runs its progression at
# other, fewer points than the corrected one (chapter 10). The corrected silhouette weights
# read noisy silhouettes and never exceed 1 (chapter 8). And the corrected DI conversion is the
# paper's intended rule, not its printed one (chapter 11). Only the corrected verdicts
# describe private algorithms. Each chapter shows its claims' two verdicts side by side with
# the tests behind them: {ref}`chapter 8 <silhouette-claims>`,
# {ref}`chapter 9 <colored-verdicts>`, {ref}`chapter 10 <apdp-claims-verdicts>` and
# {ref}`chapter 11 <di-claims>`.

# %% tags=["remove-cell"]
claims = ledger.headline_claims(claims_folder)
claims_shown = pd.DataFrame({
    "paper": [f"{{doc}}`{row.title} <{row.chapter}>`" for row in claims.itertuples()],
    "claim": [f"{row.claim.split('-', 1)[1]}. {row.text}" for row in claims.itertuples()],
    "as published": claims["verdict"],
    "corrected": claims["corrected"].replace("", "–"),
    "evidence": [f"published: {row.evidence}"
                 + (f"; corrected: {row.corrected_evidence}" if row.corrected else "")
                 for row in claims.itertuples()],
})
claims_shown.loc[claims_shown["paper"].duplicated(), "paper"] = ""
glue("ch12_claims_table", Markdown(markdown_table(claims_shown)), display=False)
counts = claims["verdict"].value_counts()
glue("ch12_n_claims", len(claims), display=False)
for verdict in ("holds", "refuted", "mixed", "inconclusive", "not tested"):
    glue(f"ch12_claims_{verdict.replace(' ', '_')}", int(counts.get(verdict, 0)),
         display=False)
differ = claims[(claims["corrected"] != "") & (claims["corrected"] != claims["verdict"])]
glue("ch12_n_corrected", int((claims["corrected"] != "").sum()), display=False)
glue("ch12_n_differ", len(differ), display=False)
glue("ch12_differ", ", ".join(f"{row.title.split(' (')[0]} claim "
                              f"{row.claim.split('-', 1)[1]}"
                              for row in differ.itertuples()), display=False)

# %% [markdown]
# ```{glue:md} ch12_claims_table
# :format: myst
# ```
#
# Of the {glue:text}`ch12_n_claims` headline claims, judged on the published methods,
# {glue:text}`ch12_claims_holds` hold, {glue:text}`ch12_claims_refuted` are refuted,
# {glue:text}`ch12_claims_mixed` are mixed, {glue:text}`ch12_claims_inconclusive` is
# inconclusive and {glue:text}`ch12_claims_not_tested` could not be tested (the comparator's
# code is not available). {glue:text}`ch12_n_corrected` claims were also tested on the
# corrected method, and {glue:text}`ch12_n_differ` of them get a different verdict there:
# {glue:text}`ch12_differ`. The evidence for each is in its chapter: {doc}`07_dpkccm`,
# {doc}`08_silhouette`, {doc}`09_colored`, {doc}`10_schedules` and
# {doc}`11_identifiability`.
#
# ### Privacy claims
#
# Every paper claims its algorithm is private. The book's engine records each flaw of a
# published configuration in its ledger (a leak, or an overspend it charges at its true
# cost), and two chapters audited the published mechanism empirically (the method of
# {doc}`06_auditing`). The last column links the theorem that proves the corrected
# algorithm private.

# %% tags=["remove-cell"]
privacy = ledger.privacy_claims(claims_folder)
privacy_shown = pd.DataFrame({
    "paper": [f"{{doc}}`{row.title} <{row.chapter}>`" for row in privacy.itertuples()],
    "private as published?": privacy["published"],
    "evidence": privacy["evidence"],
    "corrected, proven private by": [f"{{prf:ref}}`{t}`" for t in privacy["theorem"]],
})
glue("ch12_privacy_table", Markdown(markdown_table(privacy_shown)), display=False)
flaw_lines = []
for row in privacy.itertuples():
    if row.leaks or row.overspends:
        flaw_lines.append(f"- **{row.title}** ({{doc}}`its chapter <{row.chapter}>`)")
        flaw_lines += [f"  - leak: {text}" for text in row.leaks]
        flaw_lines += [f"  - overspend: {text}" for text in row.overspends]
glue("ch12_flaws", Markdown("\n".join(flaw_lines)), display=False)
glue("ch12_refuted_privacy", int((privacy["published"] != "proven here").sum()),
     display=False)
glue("ch12_proven_privacy", ", ".join(
    privacy.loc[privacy["published"] == "proven here", "title"]), display=False)

# %% [markdown]
# ```{glue:md} ch12_privacy_table
# :format: myst
# ```
#
# The flaws the ledgers record, as the engine names them: a *leak* releases something no
# $\varepsilon$ describes; an *overspend* is charged at its true cost, above the budget the
# paper states.
#
# ```{glue:md} ch12_flaws
# :format: myst
# ```
#
# {glue:text}`ch12_refuted_privacy` of the five published algorithms are not private as
# published; only {glue:text}`ch12_proven_privacy` is, as its chapter proves
# ({prf:ref}`thm-dpkccm-private`). Every corrected algorithm runs the book's DP-Lloyd loop on
# public inputs only, so it is private by {prf:ref}`thm-dplloyd-private` and composition
# ({prf:ref}`thm-sequential`); the chapters add what is specific to each: the noisy
# silhouette weights ({prf:ref}`thm-silhouette-corrected`), the colored release
# ({prf:ref}`thm-colored-dplloyd`), and DI's conversion from $\varepsilon$ under replace
# adjacency ({prf:ref}`thm-di-dp`). Each one's ledger is checked by the tests.
#
# ## Summary
#
# :::{admonition} Summary
# :class: important
# - `DPKMeans(algorithm=...)` runs every corrected algorithm of the book; a shared
#   `PrivacyLedger` composes several fits and refuses one that would exceed its budget before
#   drawing anything ({prf:ref}`thm-shared-accountant`).
# - On the leaderboard ({glue:text}`ch12_n_algorithms` algorithms,
#   {glue:text}`ch12_n_datasets` datasets, {glue:text}`ch12_n_eps` budgets), the best mean
#   rank is {glue:text}`ch12_best`'s, then {glue:text}`ch12_second` and {glue:text}`ch12_third`;
#   the halving schedules ({glue:text}`ch12_halving`) rank last, because they release their
#   noisiest iteration.
# - The advice by $N\varepsilon/k$ and $d$ is computed from the table; its most frequent first
#   choice is {glue:text}`ch12_most_recommended` ({glue:text}`ch12_most_recommended_n`
#   regimes).
# - Of {glue:text}`ch12_n_claims` headline claims, judged on the published methods,
#   {glue:text}`ch12_claims_holds` hold and {glue:text}`ch12_claims_refuted` are refuted;
#   {glue:text}`ch12_n_differ` of the {glue:text}`ch12_n_corrected` tested on a corrected
#   method get another verdict there. {glue:text}`ch12_refuted_privacy` of five published
#   algorithms are not private as published.
# :::

# %% tags=["remove-cell"]
# Numbers quoted in the exercises' solutions.
blood = results[results["case"] == "blood"]
blood_best = ranking.point_ranks(blood)
blood_first = blood_best[blood_best["first"]].groupby("epsilon")["algorithm"].apply(
    lambda a: ", ".join(sorted(a)))
glue("ch12_ex_blood_first_small", blood_first.iloc[0], display=False)
glue("ch12_ex_blood_eps_small", number(blood_first.index[0]), display=False)
glue("ch12_ex_blood_first_large", blood_first.iloc[-1], display=False)
glue("ch12_ex_blood_eps_large", number(blood_first.index[-1]), display=False)
shares = PrivacyLedger(budget=1.0)
for eps in (0.25, 0.25, 0.25):
    DPKMeans(4, epsilon=eps, bounds=(-1, 1), algorithm="dplloyd", accountant=shares,
             random_state=SEED).fit(X)
glue("ch12_ex_left", number(shares.remaining().epsilon), display=False)
hospital = ranking.regime_of(np.array([20_000]), np.array([0.5]), np.array([5]),
                             np.array([12])).iloc[0]
hospital_advice = advice[(advice["signal_regime"] == hospital["signal_regime"])
                         & (advice["d_regime"] == hospital["d_regime"])]
glue("ch12_ex_signal", number(hospital["signal"]), display=False)
glue("ch12_ex_regime", regime_label(f"{hospital['signal_regime']} and "
                                    f"{hospital['d_regime']}", "text"), display=False)
glue("ch12_ex_pick", ", then ".join(hospital_advice["algorithm"]), display=False)
glue("ch12_ex_points", int(hospital_advice["points"].iloc[0]), display=False)

# %% [markdown]
# ## Exercises
#
# ```{exercise}
# :label: ex-synthesis-regime
# :class: pen-and-paper
#
# A hospital holds $N = 20{,}000$ records with $d = 12$ numeric attributes and wants $k = 5$
# clusters at $\varepsilon = 0.5$. Compute its signal $N\varepsilon/k$, find its regime in
# the table of {ref}`choosing-an-algorithm`, and read off the advice. How large would
# $\varepsilon$ have to be for the hospital to reach the next regime, and why does the
# advice depend on $N\varepsilon/k$ rather than on $\varepsilon$ alone?
# ```
#
# ```{solution} ex-synthesis-regime
# :class: dropdown
#
# $N\varepsilon/k = 20{,}000 \times 0.5 / 5$ = {glue:text}`ch12_ex_signal`, so the regime is
# {glue:text}`ch12_ex_regime`; the table advises {glue:text}`ch12_ex_pick`, from
# {glue:text}`ch12_ex_points` leaderboard points. The next bin starts at $N\varepsilon/k =
# 10^4$: $\varepsilon = 10^4 k / N = 2.5$. Each iteration releases a cluster's sum with noise
# of scale about $1/\varepsilon_t$ while the sum grows with the cluster's size, about $N/k$
# records, so the signal-to-noise ratio of a centroid grows with $N\varepsilon/k$: doubling
# the data helps as much as doubling the budget.
# ```
#
# ```{exercise}
# :label: ex-synthesis-blood
#
# Using `ranking.point_ranks`, list the algorithms ranked first (alone or tied) on blood at
# the smallest and the largest $\varepsilon$ of the grid. Why can several algorithms be first
# at once, and what would make fewer ties?
# ```
#
# ```{solution} ex-synthesis-blood
# :class: dropdown
#
# At $\varepsilon$ = {glue:text}`ch12_ex_blood_eps_small`: {glue:text}`ch12_ex_blood_first_small`;
# at $\varepsilon$ = {glue:text}`ch12_ex_blood_eps_large`: {glue:text}`ch12_ex_blood_first_large`.
# An algorithm is first when no other is *significantly* better, that is when no other
# algorithm's 95% interval lies entirely below its own; overlapping intervals tie. More runs
# a point narrow the intervals ($\propto 1/\sqrt{R}$) and break ties that are real
# differences; ties between algorithms that are truly as good stay.
# ```
#
# ```{exercise}
# :label: ex-synthesis-budget
#
# A data holder allows $\varepsilon = 1$ in total. Fit DPLloyd three times at $0.25$ each with
# one shared accountant. How much is left, and what happens if you then ask for a fit at
# $0.5$? Would the answer change if the three fits ran on disjoint halves of the data?
# ```
#
# ```{solution} ex-synthesis-budget
# :class: dropdown
#
# The accountant composes the three fits sequentially: $0.75$ is spent and
# {glue:text}`ch12_ex_left` is left, so a fit at $0.5$ raises `BudgetExceededError` before any
# noise is drawn ({prf:ref}`thm-shared-accountant`). On disjoint subsets of the records,
# parallel composition would bound the fits by their largest $\varepsilon$, but the
# accountant cannot know the subsets are disjoint: open `accountant.parallel(...)` with one
# `part` per subset, and run each fit inside its part (chapter 3).
# ```
