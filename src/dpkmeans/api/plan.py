"""A preview of a fit from its public inputs alone: the iterations, every release with its
budget and noise scale, the noise this puts on a released centre, the guarantee the ledger
will report, and what is not sensible about the configuration. Nothing is drawn, nothing is
charged and no data is read: every number here is a function of public inputs, as the
planned ledger of :func:`dpkmeans.engine.planning.plan_releases` is (book chapter 5, "One
loop"; chapter 6, the transcript of a fit).

:meth:`DPKMeans.plan <dpkmeans.api.estimators.DPKMeans.plan>` builds the configuration a fit
of the estimator builds (the same code path) and hands it to :func:`preview`;
``dpkmeans.plan`` (:mod:`dpkmeans.synthesis.planner`) does the same from the public inputs
alone and adds a recommendation read from the book's results.

**The noise on a released centre.** A DP-Lloyd centre is post-processing of a noisy sum and
a noisy count, c = m + S'/n' (m the box's midpoint when the sum is released centred,
chapter 5, "Centring"). To first order in the noise (the expansion in the proof of Su et
al.'s split, chapter 5, Proposition ``prop-su-split``), coordinate i of a cluster of n
records has standard deviation

    sd_i = sqrt(sd(S_i)^2 + x_i^2 sd(n)^2) / n,

with sd(S_i) and sd(n) the standard deviations of the noise the release puts on the sum's
coordinate i and on the count (sqrt(2) b for Laplace noise of scale b, sigma for Gaussian
noise: :meth:`NoiseType.sd <dpkmeans.privacy.noise_types.NoiseType.sd>`), and x_i the coordinate of the centre measured from where the
sum is measured. The plan takes n = N / k (k the clusters the loop runs) and x_i =
:data:`TYPICAL_OFFSET` half-widths, Su et al.'s (2016) typical centre (the same assumption
DPLloyd-Impr's split makes); FastLloyd's sums are offsets from the centre itself
(chapter 12, "FastLloyd"), so x_i = 0 there. Colored and FastLloyd's noise is drawn on a
whitened vector and scaled back: sd(S_i) is the whitened noise's standard deviation divided
by the coordinate's whitening factor. The approximation ignores the clipping to the box
(which can only shrink the error) and holds while the count's noise is small against n
(:data:`COUNT_NOISE_RATIO`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import (
    element_plan,
    iteration_charges,
    iteration_releases,
    plan_releases,
)
from dpkmeans.engine.schedules import SU_RHO
from dpkmeans.engine.strategies import RunWholeSchedule
from dpkmeans.privacy.accounting import PrivacyCost
from dpkmeans.privacy.mechanisms import Entry, Parallel
from dpkmeans.privacy.noise import NoiseCalibration
from dpkmeans.privacy.tight import basic_cost, epsilon_at

__all__ = ["COUNT_NOISE_RATIO", "TYPICAL_OFFSET", "Plan", "PlannedRelease", "centre_sd",
           "element_sd", "preview", "TEXT_WIDTH", "wrap_line"]

#: The centre's typical distance from the box's midpoint, in half-widths of the box: Su et
#: al.'s (2016) 2 rho with rho = 0.225 on [-1, 1]^d (book chapter 5, "Su et al.'s split").
TYPICAL_OFFSET = 2.0 * SU_RHO["[-1,1]"]

#: The plan warns when a cluster of N/k records holds fewer than this many times the standard
#: deviation of the noise on its count: the counts are then mostly noise, and the first-order
#: centre noise of :func:`centre_sd` (which needs the count's noise small against the count)
#: is too optimistic.
COUNT_NOISE_RATIO = 10.0


@dataclass(frozen=True)
class PlannedRelease:
    """One release a fit will make, from its public inputs (one row per distinct release of
    an iteration: the clusters that get the same noise share a row).

    Parameters
    ----------
    iteration : int
        The iteration, from 1; 0 for a release before the iterations (the noisy record count).
    label : str
        What is released (the ledger entry's label).
    clusters : str
        Which clusters the release covers: each of them, in parallel (add/remove adjacency),
        or all at once (replace adjacency).
    mechanism : str
        The ledger's name of the mechanism.
    epsilon : float
        Its budget.
    delta : float
        Its delta (0 for Laplace noise).
    sensitivity : float
        The sensitivity it is calibrated to (L1 for Laplace, L2 for Gaussian noise).
    scale : float
        Its noise scale (Laplace b or Gaussian sigma), the one the fit draws with.
    note : str, default ""
        What the preview cannot fix in advance (an allocation rule's weights).

    Examples
    --------
    >>> from dpkmeans.api.plan import PlannedRelease
    >>> r = PlannedRelease(1, "(S_j, n_j)", "each of 3 clusters", "Laplace (discrete)", 0.5,
    ...                    0.0, 2.0, 4.0)
    >>> r.scale / r.sensitivity
    2.0
    """

    iteration: int
    label: str
    clusters: str
    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    scale: float
    note: str = ""


@dataclass(frozen=True)
class Plan:
    """What a fit will release and what it will cost, from public inputs alone
    (:func:`preview`): nothing drawn, nothing charged.

    Parameters
    ----------
    algorithm : str
        The catalogue's name of the algorithm.
    n_records, n_features, n_clusters : int
        N, d and k.
    epsilon, delta : float
        The fit's budget (delta 0: pure epsilon-DP).
    bounds : (tuple of float, tuple of float)
        The public box (lower, upper) the plan is computed for.
    neighbour : str
        The neighbour relation of the guarantee.
    form : str
        The algorithm's form at (epsilon, delta) (:data:`dpkmeans.api.catalogue.FORMS`).
    iterations : int
        The iterations the configuration plans (a stopping rule may end a run earlier).
    releases : tuple of PlannedRelease
        Every release, in the order the fit makes them.
    centre_sd : tuple of float
        Per iteration, the standard deviation of the noise on one released centre coordinate
        of a cluster of N/k records, in the data's units (the largest over coordinates and
        clusters; first order, :func:`centre_sd`).
    relative_centre_sd : tuple of float
        The same divided by the box's half-width in that coordinate (the largest over
        coordinates): 1 means noise as wide as half the box.
    guarantee : PrivacyCost
        What the fit's ledger will report as spent (``privacy_spent_``).
    accounting : str
        How the ledger composes it: "basic", or the tight accounting that gives the smallest
        epsilon at delta ("gdp", "zcdp", "pld"; :func:`dpkmeans.privacy.tight.epsilon_at`).
    params : mapping, default {}
        The other public inputs the plan was made with (``max_iter``, ``noise``, ...).
    assumptions : tuple of str, default ()
        What the plan assumes that the inputs do not say (a box, the noisy count's value).
    warnings : tuple of str, default ()
        What is not sensible about the configuration (noise wider than the box, too many
        iterations for the budget, too few records per cluster); empty when all is well.
    recommendation : object or None, default None
        The algorithm the book's results favour for these inputs, when ``dpkmeans.plan``
        made the plan (:mod:`dpkmeans.synthesis.planner`); None otherwise.

    Examples
    --------
    >>> from dpkmeans import DPKMeans
    >>> plan = DPKMeans(3, epsilon=1.0, bounds=(0.0, 1.0), algorithm="dplloyd",
    ...                 max_iter=4).plan(3000, n_features=2)
    >>> plan.iterations, len(plan.releases), str(plan.guarantee)
    (4, 4, 'epsilon=1')
    >>> round(plan.centre_sd[-1], 4), plan.sensible
    (0.0116, True)
    """

    algorithm: str
    n_records: int
    n_features: int
    n_clusters: int
    epsilon: float
    delta: float
    bounds: tuple[tuple[float, ...], tuple[float, ...]]
    neighbour: str
    form: str
    iterations: int
    releases: tuple[PlannedRelease, ...]
    centre_sd: tuple[float, ...]
    relative_centre_sd: tuple[float, ...]
    guarantee: PrivacyCost
    accounting: str
    params: Mapping[str, Any] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    recommendation: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def sensible(self) -> bool:
        """Whether the plan found nothing to warn about (:attr:`warnings` is empty)."""
        return not self.warnings

    def releases_frame(self) -> Any:
        """The releases as a table, one row per :class:`PlannedRelease`.

        Returns
        -------
        pandas.DataFrame
            Columns iteration, label, clusters, mechanism, epsilon, delta, sensitivity, scale
            and note.

        Examples
        --------
        >>> from dpkmeans import DPKMeans
        >>> plan = DPKMeans(3, epsilon=1.0, bounds=(0.0, 1.0), algorithm="dplloyd",
        ...                 max_iter=2).plan(300, n_features=2)
        >>> plan.releases_frame()[["iteration", "label", "epsilon", "scale"]].round(4)
           iteration       label  epsilon  scale
        0          1  (S_j, n_j)      0.5    4.0
        1          2  (S_j, n_j)      0.5    4.0
        """
        import pandas as pd

        return pd.DataFrame([vars(r) for r in self.releases])

    def summary(self) -> str:
        """The plan as a short text: the inputs, the guarantee, a table of the releases (the
        iterations that release the same noise share a row, and so do the coordinates of a
        split release) with the noise on a centre, the assumptions and the warnings.

        Returns
        -------
        str
            Lines of at most :data:`TEXT_WIDTH` characters.

        Examples
        --------
        >>> from dpkmeans import DPKMeans
        >>> plan = DPKMeans(3, epsilon=1.0, bounds=(0.0, 1.0), algorithm="dplloyd",
        ...                 max_iter=2).plan(300, n_features=2)
        >>> print(plan.summary())  # doctest: +NORMALIZE_WHITESPACE
        plan of algorithm='dplloyd': N = 300 records, d = 2 features, k = 3 clusters
        box: [0, 1]^2
        budget: epsilon = 1 (pure), add/remove adjacency, form 'pure'; 2 iterations
        the ledger will report: epsilon=1 (basic composition, add/remove)
        <BLANKLINE>
        iterations  release     clusters                mechanism
        1-2         (S_j, n_j)  each of 3, in parallel  Laplace (discrete)
        <BLANKLINE>
        iterations  epsilon  sensitivity  noise scale  centre sd  / half-width
        1-2         0.5      2            4            0.05798    0.116
        <BLANKLINE>
        centre sd: the noise on one centre coordinate of a cluster of N/k = 100 records (first
          order)
        assumes: a centre 0.45 half-widths from the midpoint (the centre sd's x_i)
        warnings: none
        """
        lines = [
            f"plan of algorithm={self.algorithm!r}: N = {self.n_records} records, "
            f"d = {self.n_features} features, k = {self.n_clusters} clusters",
            f"box: {_box_text(self.bounds)}",
            f"budget: {_budget_text(self.epsilon, self.delta)}, {self.neighbour} adjacency, "
            f"form {self.form!r}; {self.iterations} iterations",
            f"the ledger will report: {self.guarantee} ({self.accounting} composition, "
            f"{self.neighbour})",
            "",
            *(table := _release_table(self)),
            "",
            f"centre sd: the noise on one centre coordinate of a cluster of N/k = "
            f"{self.n_records / self.n_clusters:.6g} records (first order)",
        ]
        lines += [f"assumes: {a}" for a in self.assumptions]
        lines += [f"warning: {w}" for w in self.warnings] or ["warnings: none"]
        return "\n".join(line if line in table else wrap_line(line) for line in lines)


def _budget_text(epsilon: float, delta: float) -> str:
    return f"epsilon = {epsilon:g}" + (f", delta = {delta:g}" if delta else " (pure)")


def _box_text(bounds: tuple[tuple[float, ...], tuple[float, ...]]) -> str:
    lower, upper = bounds
    if len(set(lower)) == 1 and len(set(upper)) == 1:
        return f"[{lower[0]:g}, {upper[0]:g}]^{len(lower)}"
    return " x ".join(f"[{lo:g}, {hi:g}]" for lo, hi in zip(lower, upper))


def _row_key(r: PlannedRelease) -> tuple[Any, ...]:
    """A release without its iteration and its coordinate (``S_j[3]`` -> ``S_j[i]``)."""
    stem, bracket, _ = r.label.partition("[")
    label = f"{stem}[i]" if bracket and r.label.endswith("]") else r.label
    return (label, r.clusters, r.mechanism, r.epsilon, r.delta, r.sensitivity, r.scale, r.note)


def _merged_rows(releases: Sequence[PlannedRelease]) -> list[tuple[tuple[Any, ...], str]]:
    """The releases of one iteration with the coordinates of a split release merged:
    (row key, label shown)."""
    rows: list[tuple[tuple[Any, ...], list[str]]] = []
    for r in releases:
        key = _row_key(r)
        if rows and rows[-1][0] == key:
            rows[-1][1].append(r.label)
        else:
            rows.append((key, [r.label]))
    out = []
    for key, labels in rows:
        shown = labels[0].split(": ")[0]  # the ledger's label without its explanation
        if len(labels) > 1:
            stem = key[0][:-3]
            first, last = labels[0][len(stem) + 1:-1], labels[-1][len(stem) + 1:-1]
            shown = f"{stem}[{first}..{last}] (each)"
        out.append((key, shown))
    return out


def _release_table(plan: Plan) -> list[str]:
    """The plan's releases as text: the iterations that release the same noise share a row."""
    by_iteration: dict[int, list[PlannedRelease]] = {}
    for r in plan.releases:
        by_iteration.setdefault(r.iteration, []).append(r)
    groups: list[tuple[list[int], list[tuple[tuple[Any, ...], str]]]] = []
    for t, releases in by_iteration.items():
        rows = _merged_rows(releases)
        same_sd = (t > 0 and groups and groups[-1][0][-1] > 0
                   and plan.centre_sd[t - 1] == plan.centre_sd[groups[-1][0][-1] - 1])
        if groups and groups[-1][1] == rows and same_sd:
            groups[-1][0].append(t)
        else:
            groups.append(([t], rows))
    with_delta = any(r.delta for r in plan.releases)
    header = ["iterations", "release", "clusters", "mechanism", "epsilon",
              *(["delta"] if with_delta else []), "sensitivity", "noise scale", "centre sd",
              "/ half-width"]
    table, notes = [header], []
    for iterations, rows in groups:
        first, last = iterations[0], iterations[-1]
        when = "before" if first == 0 else str(first) if first == last else f"{first}-{last}"
        for i, (key, shown) in enumerate(rows):
            _, clusters, mechanism, eps, dlt, sens, scale, note = key
            sd = rel = ""
            if i == 0 and first > 0:
                sd = f"{plan.centre_sd[first - 1]:.4g}"
                rel = f"{plan.relative_centre_sd[first - 1]:.3g}"
            if note and note not in notes:
                notes.append(note)
            mark = f" {'*' * (notes.index(note) + 1)}" if note else ""
            table.append([when if i == 0 else "", shown + mark,
                          clusters, mechanism, f"{eps:.4g}",
                          *([f"{dlt:.3g}"] if with_delta else []), f"{sens:.4g}",
                          f"{scale:.4g}", sd, rel])
    what, noise = [0, 1, 2, 3], [0, *range(4, len(header))]  # two tables of <= 86 columns
    return [*_text_table(table, what), "", *_text_table(table, noise),
            *(wrap_line(f"{'*' * (i + 1)} {note}") for i, note in enumerate(notes))]


#: The widest line of a plan's text (the book's code and output column).
TEXT_WIDTH = 86


def _text_table(table: list[list[str]], columns: list[int]) -> list[str]:
    """``columns`` of ``table`` as aligned text lines."""
    widths = [max(len(row[c]) for row in table) for c in columns]
    return ["  ".join(row[c].ljust(w) for c, w in zip(columns, widths)).rstrip()
            for row in table]


def wrap_line(line: str) -> str:
    """``line`` wrapped at :data:`TEXT_WIDTH` columns, its continuation lines indented.

    Parameters
    ----------
    line : str
        One line of a plan's text.

    Returns
    -------
    str
        The line, as lines of at most :data:`TEXT_WIDTH` characters.

    Examples
    --------
    >>> from dpkmeans.api.plan import wrap_line
    >>> wrap_line("warnings: none")
    'warnings: none'
    """
    return textwrap.fill(line, TEXT_WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def centre_sd(config: DPLloydConfig, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """Per iteration, the standard deviation of the noise on one released centre coordinate
    of a cluster of ``n_records / config.n_clusters`` records, to first order (module
    docstring): sqrt(sd(S_i)^2 + x_i^2 sd(n)^2) / n.

    Parameters
    ----------
    config : DPLloydConfig
        A DP-Lloyd configuration (public).
    n_records : int
        N, the records of the fit.

    Returns
    -------
    tuple of numpy.ndarray
        (T,) standard deviations in the data's units, the largest over clusters and
        coordinates, and (T,) the largest over them of the standard deviation divided by the
        box's half-width in its coordinate.

    Examples
    --------
    >>> from dpkmeans.api.plan import centre_sd
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> config = DPLloydConfig(2, ([-1.0], [1.0]), [0.5])  # Laplace b = 2 / 0.5 = 4
    >>> sd, relative = centre_sd(config, 200)  # n = 100, x = 0.45
    >>> round(float(sd[0]), 4), round(float(relative[0]), 4)
    (0.062, 0.062)
    """
    lower, upper = config.bounds
    d, k = lower.size, config.n_clusters
    half = (upper - lower) / 2.0
    if config.assign.relative:  # offsets from the centre itself
        offset = np.zeros(d)
    elif config.centred:
        offset = TYPICAL_OFFSET * half
    else:  # the papers' sums from the origin: the centre's coordinate itself
        offset = np.abs((lower + upper) / 2.0) + TYPICAL_OFFSET * half
    n = n_records / k
    absolute, relative = np.zeros(config.iterations), np.zeros(config.iterations)
    for t, sd in enumerate(element_sd(config)):
        per = np.sqrt(sd[:, :d] ** 2 + (offset * sd[:, d:]) ** 2) / n
        absolute[t], relative[t] = per.max(), (per / half).max()
    return absolute, relative


def element_sd(config: DPLloydConfig) -> list[np.ndarray]:
    """Per iteration, the standard deviation of the noise on every cluster's sum coordinates
    and count, in the data's units: a whitened release's (colored noise, FastLloyd's offsets)
    scaled back as the loop scales it (:func:`dpkmeans.engine.loop.run`). Public: it reads
    the configuration only.

    Parameters
    ----------
    config : DPLloydConfig
        A DP-Lloyd configuration.

    Returns
    -------
    list of numpy.ndarray
        One (k, d + 1) array per iteration: the d sum coordinates, then the count.

    Examples
    --------
    >>> from dpkmeans.api.plan import element_sd
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> config = DPLloydConfig(2, ([-1.0], [1.0]), [0.5])  # Laplace b = 4: sd = 4 sqrt(2)
    >>> element_sd(config)[0].round(3)
    array([[5.657, 5.657],
           [5.657, 5.657]])
    """
    k, d = config.n_clusters, config.bounds[0].size
    sd_of = np.vectorize(config.noise.sd, otypes=[float])
    out = []
    for t, eps_t in enumerate(config.schedule):
        _, _, scale = element_plan(iteration_releases(config, float(eps_t)), (k, d + 1))
        white = (config.step.whitening(config, t) if config.assign.relative
                 else config.noise.whitening(config.bounds))
        out.append(sd_of(scale) / white)
    return out


def _row(t: int, e: Entry, clusters: str, note: str = "") -> PlannedRelease:
    return PlannedRelease(t, e.label, clusters, e.mechanism, e.epsilon, e.delta, e.sensitivity,
                          e.scale, note)


def _iteration_releases(config: DPLloydConfig, t: int, eps_t: float) -> list[PlannedRelease]:
    """Iteration t's releases as its ledger entries record them: an allocation rule's own
    releases first, then the entries of (S_j, n_j) (:func:`dpkmeans.engine.planning.
    iteration_charges`), the clusters that share an entry on one row."""
    out = []
    note = ""
    if not config.allocation.public:
        out += [_row(t, e, "each cluster, in parallel")
                for e in config.allocation.planned_entries(config, eps_t)]
        note = ("at the largest weight: the rule's weights w come from released values, and a "
                "cluster of weight w gets scale / w")
    charges = iteration_charges(iteration_releases(config, eps_t), 1)
    if not isinstance(charges, Parallel):  # replace adjacency: every cluster at once
        return out + [_row(t, e, "all at once", note) for e in charges]
    shared: dict[int, tuple[Entry, list[str]]] = {}
    for part, entries in charges.parts:
        for e in entries:
            shared.setdefault(id(e), (e, []))[1].append(part)
    for e, parts in shared.values():
        clusters = (f"each of {config.n_clusters}" if len(parts) == config.n_clusters
                    else ", ".join(parts))
        out.append(_row(t, e, f"{clusters}, in parallel", note))
    return out


def _warnings(config: DPLloydConfig, n_records: int, relative: np.ndarray,
              uses_max_iter: bool) -> list[str]:
    """What is not sensible: noise on a centre wider than half the box, too many iterations
    for the budget, too few records per cluster for its count's noise."""
    out = []
    wide = [t + 1 for t in np.flatnonzero(relative > 1.0)]
    if wide:
        last = config.iterations in wide
        which = (f"iteration {wide[0]}" if len(wide) == 1
                 else f"iterations {wide[0]}-{wide[-1]}" if wide == list(range(wide[0],
                                                                             wide[-1] + 1))
                 else f"iterations {wide}")
        todo = "lower max_iter or " if uses_max_iter else ""
        out.append(
            f"too many iterations for the budget: {which} put noise wider than the box's "
            f"half-width on a centre (sd up to {relative.max():.3g} half-widths for N/k "
            f"records){'; the released centres are mostly noise' if last else ''}: "
            f"{todo}raise epsilon")
    n = n_records / config.n_clusters
    count = np.array([sd[:, -1].max() for sd in element_sd(config)])
    if n < COUNT_NOISE_RATIO * count.max():
        out.append(
            f"N/{config.n_clusters} = {n:.6g} records per cluster is below {COUNT_NOISE_RATIO:g} times the sd "
            f"of its count's noise ({count.max():.4g}, iteration "
            f"{int(np.argmax(count)) + 1}): the counts are mostly noise and the centre sd "
            "shown is optimistic; use fewer clusters or iterations, or a larger epsilon")
    return out


def _assumptions(config: DPLloydConfig, n_clusters: int) -> list[str]:
    """What the numbers assume beyond the inputs: the centre's position, an early stop, a
    loop over more clusters than the output's."""
    out = [f"a centre {0 if config.assign.relative else TYPICAL_OFFSET:g} half-widths from "
           f"{'its previous position' if config.assign.relative else 'the midpoint'} "
           "(the centre sd's x_i)"]
    if not isinstance(config.stop, RunWholeSchedule):
        out.append(f"all {config.iterations} iterations run: the stopping rule "
                   f"{config.stop.name!r} may end a run earlier (and spend less)")
    if config.n_clusters != n_clusters:
        m = config.n_clusters / n_clusters
        out.append(f"the loop runs {config.n_clusters} clusters (N/{config.n_clusters} records "
                   f"each, the centre sd's n) and merges them down to {n_clusters}: a merged "
                   f"centre pools {m:g} of them, which divides its sd by about "
                   f"{np.sqrt(m):.3g}")
    return out


def preview(config: DPLloydConfig, *, algorithm: str, n_records: int, n_clusters: int,
            epsilon: float, delta: float, form: str, tight: bool,
            count: NoiseCalibration | None = None, uses_max_iter: bool = False,
            params: Mapping[str, Any] | None = None, assumptions: Sequence[str] = (),
            warnings: Sequence[str] = ()) -> Plan:
    """The plan of a fit that runs ``config``, after the noisy record count ``count`` when
    it pays for one: its releases (:func:`dpkmeans.engine.planning.iteration_releases`, and
    an allocation rule's own), the noise on a centre (:func:`centre_sd`), the guarantee its
    ledger will report (:func:`dpkmeans.engine.planning.plan_releases` composed as the
    ledger composes them) and the warnings. Reads the configuration only: nothing is drawn
    or charged.

    Parameters
    ----------
    config : DPLloydConfig
        The configuration the fit runs (the one the estimator builds).
    algorithm : str
        Its name in the catalogue.
    n_records : int
        N, public (or assumed, for the preview).
    n_clusters : int
        k, the clusters of the output.
    epsilon, delta : float
        The fit's whole budget, the count included (delta 0: pure).
    form : str
        The algorithm's form (:data:`dpkmeans.api.catalogue.FORMS`).
    tight : bool
        Whether the fit's ledger composes tightly (an (epsilon, delta) fit not in its "basic"
        form).
    count : NoiseCalibration or None, default None
        The noisy record count's noise, when the fit pays for one before the iterations.
    uses_max_iter : bool, default False
        Whether the iterations are ``max_iter`` (named in the warnings).
    params : mapping or None, default None
        The other public inputs, recorded in the plan.
    assumptions : sequence of str, default ()
        What the caller assumed (a box, the count's value), recorded first.
    warnings : sequence of str, default ()
        What the caller found not sensible (bounds read off the data), recorded first.

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        If the configuration releases categorical modes, or spends outside the iterations'
        releases (an initial or an output release: :func:`plan_releases`).

    Examples
    --------
    >>> from dpkmeans.api.plan import preview
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> config = DPLloydConfig(2, ([-1.0], [1.0]), [0.5, 0.5])
    >>> plan = preview(config, algorithm="dplloyd", n_records=200, n_clusters=2,
    ...                epsilon=1.0, delta=0.0, form="pure", tight=False)
    >>> [(r.iteration, r.label, round(r.scale, 6)) for r in plan.releases]
    [(1, '(S_j, n_j)', 4.0), (2, '(S_j, n_j)', 4.0)]
    >>> str(plan.guarantee), plan.accounting
    ('epsilon=1', 'basic')
    """
    if config.modes is not None:
        raise ValueError("the plan covers numeric data: a configuration with categorical "
                         "modes (k-prototypes) is not previewed")
    prefix = [] if count is None else [count.release()]
    releases = [r for r in prefix if r is not None] + plan_releases(config)
    guarantee, accounting = _guarantee(releases, delta, tight)
    planned = [] if count is None else [PlannedRelease(
        0, "N (record count)", "the dataset", count.mechanism, count.epsilon, count.delta,
        count.sensitivity, count.scale)]
    for t, eps_t in enumerate(config.schedule, start=1):
        planned += _iteration_releases(config, t, float(eps_t))
    absolute, relative = centre_sd(config, n_records)
    lower, upper = config.bounds
    return Plan(algorithm, int(n_records), int(lower.size), int(n_clusters), float(epsilon),
                float(delta), (tuple(map(float, lower)), tuple(map(float, upper))),
                config.neighbour, form, int(config.iterations), tuple(planned),
                tuple(map(float, absolute)), tuple(map(float, relative)), guarantee,
                accounting, params or {},
                (*assumptions, *_assumptions(config, n_clusters)),
                (*warnings, *_warnings(config, n_records, relative, uses_max_iter)))


def _guarantee(releases: list[Any], delta: float, tight: bool) -> tuple[PrivacyCost, str]:
    """What the ledger reports as spent: basic composition, or for a tight ledger the tight
    epsilon at delta unless basic composition gives less within delta
    (:meth:`dpkmeans.privacy.accounting.PrivacyLedger.total`)."""
    eps, dlt = basic_cost(releases)
    if not tight:
        return PrivacyCost(eps, dlt), "basic"
    best, how = epsilon_at(releases, delta)
    if dlt <= delta and eps <= best:
        return PrivacyCost(eps, dlt), "basic"
    return PrivacyCost(best, delta), how
