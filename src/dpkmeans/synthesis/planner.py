"""``dpkmeans.plan``: plan a fit before spending, from public quantities only.

:func:`plan` previews what a fit of one algorithm will release and cost (the iterations, each
release's budget and noise scale, the noise on a released centre, the guarantee the ledger
will report, what is not sensible), by building the estimator a fit would build and asking
it (:meth:`dpkmeans.api.estimators.DPKMeans.plan`, :mod:`dpkmeans.api.plan`), and adds the
recommendation of :mod:`dpkmeans.synthesis.recommend`: the algorithm the book's results
favour at these public quantities (book chapter 12). It lives here, above the estimators,
because the recommendation reads the book's results: an estimator's own ``plan`` has none.

Nothing is drawn, nothing is charged and no data is read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpkmeans.api.catalogue import choice
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.api.plan import Plan, wrap_line
from dpkmeans.validation import check_positive_int

try:  # the recommendation's model; the plan works without it
    import dpkmeans.synthesis.recommend as recommending
except ModuleNotFoundError as missing:
    if missing.name != "dpkmeans.synthesis.recommend":
        raise
    recommending = None

__all__ = ["PARAMS", "describe", "plan"]

#: The estimator's parameters :func:`plan` takes by keyword besides its own (the others do
#: not change what a fit releases, or are :func:`plan`'s arguments).
PARAMS = ("max_iter", "noise", "rho", "m")

#: The box :func:`plan` assumes when it is given no bounds, per feature.
DEFAULT_BOX = (-1.0, 1.0)


def plan(n_records: int, n_features: int, n_clusters: int, epsilon: float | None,
         delta: float = 0.0, bounds: Any = None, algorithm: str = "dplloyd",
         **params: Any) -> Plan:
    """Preview a fit of ``algorithm`` on N records from public inputs alone, with the
    algorithm the book's results recommend at these quantities.

    The preview is that of ``DPKMeans(n_clusters, epsilon=epsilon, delta=delta,
    bounds=bounds, algorithm=algorithm, **params)`` (:meth:`DPKMeans.plan
    <dpkmeans.api.estimators.DPKMeans.plan>`), with N public: an algorithm that reads N
    reads ``n_records`` (as ``n_records=n_records`` would make it), so no count is paid for.
    Nothing is drawn, nothing is charged, no data is read.

    Parameters
    ----------
    n_records : int
        N, the number of records (public).
    n_features : int
        d.
    n_clusters : int
        k.
    epsilon : float or None
        The whole budget (None with ``rho`` and ``m``, for ``algorithm="di"``).
    delta : float, default 0.0
        The delta of an (epsilon, delta) guarantee (0: pure epsilon-DP).
    bounds : (lower, upper) or None, default None
        The public box of the data (scalars or one value per feature). None: the box
        [-1, 1]^d is assumed, and the plan says so; the noise grows with the box, so give the
        data's public bounds.
    algorithm : str, default "dplloyd"
        A name of :data:`dpkmeans.api.catalogue.CATALOGUE` that runs the DP-Lloyd loop.
    **params
        The estimator's public parameters of :data:`PARAMS` (``max_iter``, ``noise``, ``rho``
        and ``m``).

    Returns
    -------
    Plan
        With its ``recommendation`` (a :class:`dpkmeans.synthesis.recommend.Recommendation`)
        when the recommendation's module is installed and covers the request; otherwise
        None, and the plan's assumptions say why when the module refused the request.

    Raises
    ------
    ValueError
        If an input is invalid (each error names it), a parameter is not one of
        :data:`PARAMS`, or the algorithm cannot be planned (:meth:`DPKMeans.plan
        <dpkmeans.api.estimators.DPKMeans.plan>`).
    dpkmeans.errors.BudgetTooSmallError
        If epsilon is below what the algorithm supports.

    Examples
    --------
    >>> import dpkmeans
    >>> p = dpkmeans.plan(10_000, 10, 5, epsilon=1.0)
    >>> p.iterations, [round(r.scale, 3) for r in p.releases][:1], str(p.guarantee)
    (5, [55.0], 'epsilon=1')
    >>> p.assumptions[0].startswith("the box [-1, 1]^d: no bounds were given")
    True
    """
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ValueError(f"plan takes the parameters {list(PARAMS)} by keyword besides its "
                         f"own; got {unknown} (N is n_records; a preview draws nothing, so "
                         "it takes no seed, backend or accountant)")
    if epsilon is None and "rho" not in params:
        raise ValueError("epsilon: give the fit's budget (or rho and m, for algorithm='di')")
    entry = choice(algorithm)
    n = check_positive_int(n_records, "n_records")
    assumed = []
    if bounds is None:
        check_positive_int(n_features, "n_features")
        bounds = DEFAULT_BOX
        assumed.append("the box [-1, 1]^d: no bounds were given (the noise grows with the "
                       "box: give the data's public bounds)")
    estimator = DPKMeans(n_clusters, epsilon=epsilon, delta=delta, bounds=bounds,
                         algorithm=algorithm, n_records=n if entry.needs_n_records else None,
                         **params)
    previewed = estimator.plan(n, n_features)
    recommendation, note = _recommendation(previewed)
    return replace(previewed, assumptions=(*assumed, *previewed.assumptions, *note),
                   recommendation=recommendation)


def _recommendation(previewed: Plan) -> tuple[Any, tuple[str, ...]]:
    """The recommendation at the plan's public quantities, and why there is none when the
    recommendation's model refuses the request (ValueError)."""
    if recommending is None:
        return None, ()
    try:
        return recommending.recommend(previewed.n_records, previewed.n_features,
                                      previewed.n_clusters, previewed.epsilon,
                                      previewed.delta, neighbour=previewed.neighbour), ()
    except ValueError as err:
        return None, (f"no recommendation: {err}",)


def describe(previewed: Plan) -> str:
    """The plan as text (:meth:`Plan.summary <dpkmeans.api.plan.Plan.summary>`) followed by
    its recommendation: the algorithm, its predicted relative objective with its interval,
    the regimes it rests on, whether the request lies outside what the book measured, and
    the alternatives.

    Parameters
    ----------
    previewed : Plan
        A plan, with or without a recommendation.

    Returns
    -------
    str
        What ``python -m dpkmeans plan`` prints.

    Examples
    --------
    >>> import dataclasses
    >>> import dpkmeans
    >>> from dpkmeans.synthesis.planner import describe
    >>> p = dataclasses.replace(dpkmeans.plan(10_000, 10, 5, epsilon=1.0), recommendation=None)
    >>> describe(p).splitlines()[-1]
    'recommendation: none (the recommendation is not available)'
    """
    text = previewed.summary()
    rec = previewed.recommendation
    if rec is None:
        return f"{text}\nrecommendation: none (the recommendation is not available)"
    lo, hi = rec.interval
    lines = [wrap_line(line) for line in (
        f"recommended: algorithm={rec.algorithm!r}, predicted relative objective "
        f"{rec.predicted:.3g} (interval {lo:.3g} to {hi:.3g})",
        f"rests on: {'; '.join(rec.nearest) or 'no evaluated regime'}",
        "outside every regime the book measured: the prediction is an extrapolation"
        if rec.outside else "within the regimes the book measured",
        f"why: {rec.reason}")]
    lines.insert(0, "")
    alternatives = rec.alternatives
    if alternatives is not None and len(alternatives):
        lines += ["alternatives:", *("  " + line for line in alternatives.to_string(
            index=False, float_format=lambda v: f"{v:.3g}").splitlines())]
    return "\n".join([text, *lines])
