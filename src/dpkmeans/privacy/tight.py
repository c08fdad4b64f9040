"""Tight composition (book chapter 3, "Tight composition"): what a sequence of releases costs
at a given delta, by Gaussian DP, zCDP or privacy-loss distributions, not only by adding
epsilons.

A ledger entry records what its release is (:class:`Release`): Laplace noise with
Delta_1 / b = epsilon, Gaussian noise with mu = Delta_2 / sigma, or a mechanism known only by
its (epsilon, delta). Four accountings compose a sequence of them; each gives a valid upper
bound on the epsilon at delta, and :func:`epsilon_at` reports the smallest:

* **basic** composition: epsilons and deltas add (valid when delta >= the sum of deltas);
* **Gaussian DP** (Dong, Roth and Su 2022): Gaussian releases compose exactly into one
  Gaussian with mu^2 = sum mu_i^2, whose epsilon at delta is exact (Balle and Wang 2018);
* **zCDP** (Bun and Steinke 2016): rho adds; a Gaussian release is mu^2 / 2-zCDP, a pure
  epsilon one epsilon^2 / 2-zCDP; converted to (epsilon, delta) by Canonne, Kamath and
  Steinke (2020), Cor. 13;
* **PLD**: the privacy-loss distributions of the releases convolved (Koskela et al. 2020;
  Doroshenko et al. 2022) by Google's ``dp-accounting``, the maintained accountant
  (``pip install dpkmeans[accounting]``). Its pessimistic discretisation is an upper bound.

An exact (discrete) sampler on a public grid is accounted as the continuous mechanism of the
same scale and sensitivity; the book checks numerically that the two curves agree (chapter 3).
The pure epsilon and the zCDP rho of the discrete samplers are exact.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from scipy.special import ndtr

from dpkmeans.privacy.gaussian import gaussian_delta, zcdp_delta
from dpkmeans.validation import check_delta, check_epsilon

__all__ = [
    "ACCOUNTINGS",
    "PLD_DISCRETISATION",
    "Release",
    "accounting_available",
    "basic_cost",
    "clear_caches",
    "epsilon_at",
    "epsilon_by",
    "gdp_epsilon",
    "gdp_mu",
    "gdp_mu_of",
    "pld_epsilon",
    "zcdp_epsilon",
    "zcdp_rho_of",
]

#: The accountings of :func:`epsilon_by`, loosest first.
ACCOUNTINGS = ("basic", "zcdp", "gdp", "pld")

#: The PLD's discretisation of the privacy loss, relative to the budget: dp-accounting's
#: ``value_discretization_interval`` is this times min(epsilon of the largest release, 1).
PLD_DISCRETISATION = 1e-4


@dataclass(frozen=True, order=True)
class Release:
    """What one recorded release is, as tight composition needs it.

    Parameters
    ----------
    kind : {"laplace", "gaussian", "pure", "approx"}
        Laplace noise (``epsilon`` = Delta_1 / b), Gaussian noise (``mu`` = Delta_2 / sigma),
        any epsilon-DP mechanism (the exponential mechanism: ``epsilon``), or a mechanism known
        only by its (``epsilon``, ``delta``).
    epsilon : float, default 0.0
        Its pure epsilon (Laplace, pure, approx).
    delta : float, default 0.0
        Its delta (approx; the calibration's delta of a Gaussian, for basic composition).
    mu : float, default 0.0
        Delta_2 / sigma of Gaussian noise.
    times : int, default 1
        How many such releases compose in sequence.
    parts : tuple of float, default ()
        For Laplace noise on a vector: the epsilon of each element, Delta_e / b, where the
        elements' bounds Delta_e hold together for every neighbouring pair and add up to the
        vector's Delta_1 (the parts add up to ``epsilon``). The release is then dominated by the
        composition of one Laplace release per part, which PLD and zCDP accounting use when it
        is tighter (book chapter 3, "Tight composition"). Empty: the vector is accounted as one
        Laplace release of ``epsilon``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the four, ``times`` < 1, or the parts are not positive,
        are given for a release that is not Laplace noise, or add up to more than ``epsilon``.

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release
    >>> Release("laplace", epsilon=0.5).pure_epsilon, Release("gaussian", mu=0.3).pure_epsilon
    (0.5, inf)
    >>> Release("laplace", epsilon=0.5, parts=(0.25, 0.25)).expanded()
    ... # doctest: +NORMALIZE_WHITESPACE
    (Release(kind='laplace', epsilon=0.25, delta=0.0, mu=0.0, times=2),)
    """

    kind: str
    epsilon: float = 0.0
    delta: float = 0.0
    mu: float = 0.0
    times: int = 1
    parts: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("laplace", "gaussian", "pure", "approx"):
            raise ValueError(f"kind must be laplace, gaussian, pure or approx, got {self.kind!r}")
        if self.times < 1:
            raise ValueError(f"times must be >= 1, got {self.times}")
        if self.parts:
            object.__setattr__(self, "parts", tuple(float(p) for p in self.parts))
            if self.kind != "laplace" or not all(p > 0 for p in self.parts):
                raise ValueError("parts are the positive epsilons of a Laplace release's "
                                 f"elements, got {self.parts} for kind {self.kind!r}")
            if sum(self.parts) > self.epsilon * (1 + 1e-9):
                raise ValueError(f"the parts {self.parts} add up to more than the release's "
                                 f"epsilon {self.epsilon}")

    def __repr__(self) -> str:  # the parts only when there are some
        parts = f", parts={self.parts}" if self.parts else ""
        return (f"Release(kind={self.kind!r}, epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"mu={self.mu!r}, times={self.times!r}{parts})")

    def expanded(self) -> tuple[Release, ...]:
        """The releases whose composition dominates this one: one Laplace release per distinct
        part (``times`` counting the equal ones), or the release itself without parts.

        Returns
        -------
        tuple of Release
        """
        if not self.parts:
            return (self,)
        counts: dict[float, int] = {}
        for p in self.parts:
            counts[p] = counts.get(p, 0) + self.times
        return tuple(Release("laplace", epsilon=p, times=n) for p, n in sorted(counts.items()))

    @property
    def pure_epsilon(self) -> float:
        """Its pure-DP epsilon (``inf`` for Gaussian noise and (epsilon, delta) mechanisms)."""
        if self.kind in ("laplace", "pure"):
            return self.epsilon
        return math.inf

    @property
    def basic(self) -> tuple[float, float]:
        """(epsilon, delta) of one release, for basic composition."""
        return self.epsilon, self.delta


def basic_cost(releases: Iterable[Release]) -> tuple[float, float]:
    """Basic composition: (sum of epsilons, sum of deltas, at most 1).

    Parameters
    ----------
    releases : iterable of Release

    Returns
    -------
    tuple of float
        (epsilon, delta); (inf, 1) when a Gaussian release has no recorded delta.

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, basic_cost
    >>> basic_cost([Release("laplace", epsilon=0.25, times=2), Release("pure", epsilon=0.5)])
    (1.0, 0.0)
    """
    eps = dlt = 0.0
    for r in releases:
        if r.kind == "gaussian" and r.delta <= 0:
            return math.inf, 1.0  # recorded without the (epsilon, delta) it was calibrated to
        eps += r.times * r.epsilon
        dlt += r.times * r.delta
    return eps, min(dlt, 1.0)


# --- Gaussian DP ----------------------------------------------------------------------------
def _gdp_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of mu-GDP (the exact delta of Gaussian noise with Delta_2 / sigma = mu)."""
    if mu <= 0:
        return 0.0
    if epsilon == 0:
        return float(2.0 * ndtr(mu / 2.0) - 1.0)  # total variation of N(0, 1) and N(mu, 1)
    return gaussian_delta(epsilon, 1.0 / mu)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of mu-Gaussian DP: the smallest epsilon >= 0 with
    Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2) <= delta (Dong, Roth and Su
    2022, Cor. 2.13; the analytic Gaussian of Balle and Wang 2018).

    Parameters
    ----------
    mu : float
        Delta_2 / sigma of one Gaussian, or sqrt(sum mu_i^2) of a composition (>= 0).
    delta : float
        In (0, 1).

    Returns
    -------
    float
        epsilon (0 when delta already covers epsilon = 0).

    Raises
    ------
    ValueError
        If ``mu`` is negative or not finite, or ``delta`` is outside (0, 1).

    Examples
    --------
    >>> from dpkmeans.privacy.tight import gdp_epsilon
    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    dlt = check_delta(delta)
    if not (mu >= 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    if mu == 0 or _gdp_delta(mu, 0.0) <= dlt:
        return 0.0
    lo, hi = 0.0, 1.0
    while _gdp_delta(mu, hi) > dlt:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _gdp_delta(mu, mid) > dlt:
            lo = mid
        else:
            hi = mid
    return hi  # the delta at hi is <= the target: a valid epsilon


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu whose Gaussian DP gives (``epsilon``, ``delta``): the whole budget of a
    fit whose releases are all Gaussian, as mu^2 = sum mu_i^2.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        mu, rounded down: Gaussian noise with Delta_2 / sigma = mu has delta(epsilon) <=
        ``delta`` (``gdp_epsilon(mu, delta)`` then equals ``epsilon`` up to the rounding of
        delta's formula, about 1e-13 relative).

    Examples
    --------
    >>> from dpkmeans.privacy.tight import gdp_epsilon, gdp_mu
    >>> mu = gdp_mu(1.0, 1e-6)
    >>> round(mu, 4), gdp_epsilon(mu, 1e-6) <= 1.0
    (0.2367, True)
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    lo, hi = 0.0, 1.0
    while _gdp_delta(hi, eps) <= dlt:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _gdp_delta(mid, eps) <= dlt:
            lo = mid
        else:
            hi = mid
    return lo


def gdp_mu_of(releases: Iterable[Release]) -> float | None:
    """sqrt(sum mu_i^2) when every release is Gaussian noise, else None.

    Parameters
    ----------
    releases : iterable of Release

    Returns
    -------
    float or None

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, gdp_mu_of
    >>> gdp_mu_of([Release("gaussian", mu=0.3), Release("gaussian", mu=0.4)])
    0.5
    >>> gdp_mu_of([Release("gaussian", mu=0.3), Release("laplace", epsilon=0.1)]) is None
    True
    """
    s2 = 0.0
    for r in releases:
        if r.kind != "gaussian":
            return None
        s2 += r.times * r.mu * r.mu
    return math.sqrt(s2)


# --- zCDP -----------------------------------------------------------------------------------
def zcdp_rho_of(releases: Iterable[Release]) -> float | None:
    """The zCDP rho of a sequence: mu^2 / 2 per Gaussian, epsilon^2 / 2 per pure release (Bun
    and Steinke 2016, Prop. 1.4 and Lemma 2.3); None if one is only (epsilon, delta).

    Parameters
    ----------
    releases : iterable of Release

    Returns
    -------
    float or None

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, zcdp_rho_of
    >>> round(zcdp_rho_of([Release("gaussian", mu=0.2), Release("laplace", epsilon=0.2)]), 6)
    0.04
    """
    rho = 0.0
    for r in releases:
        if r.kind == "approx":
            return None
        if r.kind == "gaussian":
            one = r.mu * r.mu / 2.0
        else:  # a Laplace vector: its elements' rho add (at most epsilon^2 / 2)
            one = sum(p * p for p in r.parts) / 2.0 if r.parts else r.epsilon * r.epsilon / 2.0
        rho += r.times * one
    return rho


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon with ``zcdp_delta(rho, epsilon) <= delta`` (Canonne, Kamath and
    Steinke 2020, Cor. 13), by bisection (rounded up: valid).

    Parameters
    ----------
    rho : float
        >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> from dpkmeans.privacy.tight import zcdp_epsilon
    >>> round(zcdp_epsilon(0.5, 1e-5), 4)  # Gaussian DP gives 4.3772 for the same noise
    4.7284
    """
    dlt = check_delta(delta)
    if rho <= 0:
        return 0.0
    lo, hi = 0.0, rho + 2.0 * math.sqrt(rho * math.log(1.0 / dlt)) + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if zcdp_delta(rho, mid) > dlt:
            lo = mid
        else:
            hi = mid
    return hi


# --- privacy-loss distributions (dp-accounting) ---------------------------------------------
def accounting_available() -> bool:
    """Whether Google's ``dp-accounting`` is installed (``pip install dpkmeans[accounting]``).

    Returns
    -------
    bool

    Examples
    --------
    >>> from dpkmeans.privacy.tight import accounting_available
    >>> isinstance(accounting_available(), bool)
    True
    """
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return False
    return True


_PLD_CACHE: OrderedDict[tuple, object] = OrderedDict()
_PLD_CACHE_SIZE = 256
_EPSILON_CACHE: OrderedDict[tuple, float] = OrderedDict()


@lru_cache(maxsize=1024)
def _one_pld(r: Release, interval: float):
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    if r.kind == "laplace":
        one = pld.from_laplace_mechanism(1.0 / r.epsilon, sensitivity=1.0,
                                         value_discretization_interval=interval)
    elif r.kind == "gaussian":
        one = pld.from_gaussian_mechanism(1.0 / r.mu, sensitivity=1.0,
                                          value_discretization_interval=interval)
    else:
        one = pld.from_privacy_parameters(
            DifferentialPrivacyParameters(r.epsilon, r.delta),
            value_discretization_interval=interval)
    return one if r.times == 1 else one.self_compose(r.times)


def _pld_of(releases: tuple[Release, ...], interval: float):
    """The composed PLD of ``releases`` in order, reusing the cached PLD of the longest cached
    prefix (a ledger adds one release at a time)."""
    key = (interval, releases)
    if key in _PLD_CACHE:
        _PLD_CACHE.move_to_end(key)
        return _PLD_CACHE[key]
    cut = len(releases) - 1
    while cut > 0 and (interval, releases[:cut]) not in _PLD_CACHE:
        cut -= 1
    composed = _PLD_CACHE[(interval, releases[:cut])] if cut else None
    for r in releases[cut:]:
        one = _one_pld(r, interval)
        composed = one if composed is None else composed.compose(one)
        cut += 1
        _PLD_CACHE[(interval, releases[:cut])] = composed
        while len(_PLD_CACHE) > _PLD_CACHE_SIZE:
            _PLD_CACHE.popitem(last=False)
    return composed


def _interval(releases: Sequence[Release]) -> float:
    """dp-accounting's discretisation of the privacy loss: PLD_DISCRETISATION times the
    composition's scale sqrt(sum s_i^2) (s = epsilon, or mu; kept within [1e-3, 1]), rounded
    down to a power of two."""
    scale = math.sqrt(sum(r.times * (r.mu if r.kind == "gaussian" else r.epsilon) ** 2
                          for r in releases))
    interval = PLD_DISCRETISATION * min(max(scale, 1e-3), 1.0)
    return 2.0 ** math.floor(math.log2(interval))  # a power of two: stable as releases add


def pld_epsilon(releases: Sequence[Release], delta: float) -> float:
    """The epsilon at ``delta`` of the releases' composed privacy-loss distribution
    (``dp-accounting``, pessimistic estimates: an upper bound).

    Parameters
    ----------
    releases : sequence of Release
    delta : float
        In (0, 1).

    Returns
    -------
    float

    Raises
    ------
    ImportError
        Without ``dp-accounting`` (``pip install dpkmeans[accounting]``).

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, pld_epsilon
    >>> round(pld_epsilon([Release("gaussian", mu=1.0)], 1e-5), 3)
    4.377
    """
    dlt = check_delta(delta)
    releases = tuple(r for r in releases if (r.mu if r.kind == "gaussian" else r.epsilon) > 0)
    if not releases:
        return 0.0
    if not accounting_available():
        raise ImportError("PLD accounting needs dp-accounting: pip install dpkmeans[accounting]")
    whole = [replace(r, parts=()) for r in releases]
    best = _pld_epsilon_of(_runs(_gaussians_merged(whole)), dlt)
    if any(r.parts for r in releases):  # each Laplace vector as its elements, if tighter
        elements = sorted(e for r in releases for e in r.expanded())
        best = min(best, _pld_epsilon_of(_runs(_gaussians_merged(elements)), dlt))
    return best


def _pld_epsilon_of(runs: tuple[Release, ...], delta: float) -> float:
    key = (runs, delta)
    if key not in _EPSILON_CACHE:
        pld = _pld_of(runs, _interval(runs))
        _EPSILON_CACHE[key] = float(max(pld.get_epsilon_for_delta(delta), 0.0))
        while len(_EPSILON_CACHE) > 4 * _PLD_CACHE_SIZE:
            _EPSILON_CACHE.popitem(last=False)
    return _EPSILON_CACHE[key]


def clear_caches() -> None:
    """Forget the cached PLDs and epsilons (a benchmark times calibrations from cold).

    Examples
    --------
    >>> from dpkmeans.privacy.tight import clear_caches
    >>> clear_caches()
    """
    _one_pld.cache_clear()
    _PLD_CACHE.clear()
    _EPSILON_CACHE.clear()


def _gaussians_merged(releases: Sequence[Release]) -> list[Release]:
    """The Gaussian releases composed into one, first (exact: mu^2 adds), the others after
    them in order (composition is commutative)."""
    mu = gdp_mu_of([r for r in releases if r.kind == "gaussian"])
    rest = [r for r in releases if r.kind != "gaussian"]
    if mu is None or mu == 0 or len(rest) == len(releases):
        return list(releases)
    return [Release("gaussian", mu=mu), *rest]


def _runs(releases: Sequence[Release]) -> tuple[Release, ...]:
    """Adjacent equal releases merged into one with ``times`` added (composition is
    commutative; a merged run is one self-composition)."""
    out: list[Release] = []
    for r in releases:
        if out and replace(out[-1], times=1) == replace(r, times=1):
            out[-1] = replace(out[-1], times=out[-1].times + r.times)
        else:
            out.append(r)
    return tuple(out)


# --- the accountings ------------------------------------------------------------------------
def epsilon_by(accounting: str, releases: Sequence[Release], delta: float) -> float | None:
    """The epsilon at ``delta`` by one accounting, or None where it does not apply (basic
    composition below the sum of deltas, Gaussian DP with a non-Gaussian release, zCDP with
    an (epsilon, delta) one, PLD without ``dp-accounting``).

    Parameters
    ----------
    accounting : {"basic", "zcdp", "gdp", "pld"}
    releases : sequence of Release
    delta : float
        In [0, 1).

    Returns
    -------
    float or None

    Raises
    ------
    ValueError
        If ``accounting`` is not one of :data:`ACCOUNTINGS`.

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, epsilon_by
    >>> seven = [Release("laplace", epsilon=1 / 7)] * 7
    >>> [round(epsilon_by(a, seven, 1e-6), 4) for a in ("basic", "zcdp", "pld")]
    [1.0, 1.7843, 0.9999]
    """
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {accounting!r}")
    releases = list(releases)
    if accounting == "basic":
        eps, dlt = basic_cost(releases)
        return eps if dlt <= delta * (1 + 1e-9) else None
    if delta <= 0:
        return None
    if accounting == "gdp":
        mu = gdp_mu_of(releases)
        return None if mu is None else gdp_epsilon(mu, delta)
    if accounting == "zcdp":
        rho = zcdp_rho_of(releases)
        return None if rho is None else zcdp_epsilon(rho, delta)
    if not accounting_available():
        return None
    return pld_epsilon(releases, delta)


def epsilon_at(releases: Sequence[Release], delta: float, *,
               accountings: Sequence[str] = ACCOUNTINGS) -> tuple[float, str]:
    """The smallest epsilon at ``delta`` that one of ``accountings`` proves, and which one.

    Each accounting is an upper bound, so the smallest is one too. Gaussian DP is exact for
    Gaussian noise, so PLD is not computed when it applies.

    Parameters
    ----------
    releases : sequence of Release
    delta : float
        In [0, 1); 0 gives the pure epsilon (``inf`` if a release has none).
    accountings : sequence of str, default all of :data:`ACCOUNTINGS`

    Returns
    -------
    tuple of (float, str)
        The epsilon and the accounting that gave it.

    Examples
    --------
    >>> from dpkmeans.privacy.tight import Release, epsilon_at, gdp_mu
    >>> seven = [Release("gaussian", mu=gdp_mu(1.0, 1e-6) / 7**0.5)] * 7
    >>> eps, how = epsilon_at(seven, 1e-6)
    >>> round(eps, 3), how
    (1.0, 'gdp')
    """
    releases = [r for r in releases if (r.mu if r.kind == "gaussian" else r.epsilon) > 0
                or r.delta > 0]
    if not releases:
        return 0.0, "basic"
    best, how = math.inf, "basic"
    order = [a for a in ACCOUNTINGS if a in accountings]
    if "gdp" in order and gdp_mu_of(releases) is not None:
        order = [a for a in order if a != "pld"]  # exact already
    for accounting in order:
        eps = epsilon_by(accounting, releases, delta)
        if eps is not None and eps < best:
            best, how = eps, accounting
    return best, how
