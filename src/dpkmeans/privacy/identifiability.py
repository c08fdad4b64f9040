"""Differential identifiability (Lee and Clifton 2012; Shang et al. 2021).

A mechanism is rho-DI when an adversary who knows every record but one, and holds a uniform
prior over the m possible worlds, cannot raise its posterior on the missing record above rho.
Under those assumptions (replace-one adjacency, uniform prior) rho and epsilon are linked by

    epsilon = ln((m - 1) rho / (1 - rho))   <=>   rho = e^epsilon / (m - 1 + e^epsilon).

Book: chapter 11 (differential identifiability); chapter 3 composes DI mechanisms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.mechanisms import exponential_mechanism, laplace_mechanism
from dpkmeans.validation import check_epsilon, check_positive_int, check_real, check_sensitivity

__all__ = [
    "check_rho",
    "epsilon_from_rho",
    "rho_from_epsilon",
    "di_laplace_scale",
    "di_laplace_mechanism",
    "di_exponential_mechanism",
    "compose_rho_published",
    "compose_rho_exact",
    "compose_rho_parallel",
]


def check_m(m: object) -> int:
    """The number of possible worlds must be an integer >= 2."""
    return check_positive_int(m, "m", minimum=2)


def check_rho(rho: object, m: object) -> float:
    """rho must lie strictly between the prior 1/m and 1 (Lee and Clifton 2012).

    Parameters
    ----------
    rho : float
        The posterior bound to check.
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        ``rho``, checked.

    Raises
    ------
    ValueError
        If ``rho`` is not in (1/m, 1) or ``m`` < 2.
    TypeError
        If ``rho`` is not a real number or ``m`` not an integer.

    Examples
    --------
    >>> from dpkmeans.privacy.identifiability import check_rho
    >>> check_rho(0.7, 2)
    0.7
    >>> check_rho(0.4, 2)
    Traceback (most recent call last):
    ...
    ValueError: rho must lie in (1/m, 1) = (0.5, 1) for m=2, got 0.4
    """
    mm = check_m(m)
    r = check_real(rho, "rho")
    if math.isnan(r) or not (1.0 / mm < r < 1.0):
        raise ValueError(f"rho must lie in (1/m, 1) = ({1.0 / mm:.6g}, 1) for m={mm}, got {r}")
    return r


def epsilon_from_rho(rho: float, m: int) -> float:
    """epsilon = ln((m - 1) rho / (1 - rho)): Lee and Clifton (2012), Theorem 1;
    Shang et al. (2021), eq. 5.

    Parameters
    ----------
    rho : float
        The posterior bound, in (1/m, 1).
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        The epsilon of a rho-DI mechanism over m worlds.

    Raises
    ------
    ValueError
        If ``rho`` is not in (1/m, 1) or ``m`` < 2.

    Examples
    --------
    The paper's numeric and categorical budgets:

    >>> from dpkmeans.privacy.identifiability import epsilon_from_rho
    >>> round(epsilon_from_rho(0.05, 10001), 4), round(epsilon_from_rho(0.7, 2), 4)
    (6.2659, 0.8473)
    """
    mm = check_m(m)
    r = check_rho(rho, mm)
    return math.log(mm - 1) + math.log(r) - math.log1p(-r)


def rho_from_epsilon(epsilon: float, m: int) -> float:
    """rho = e^epsilon / (m - 1 + e^epsilon) = 1 / (1 + (m - 1) e^-epsilon), the inverse map.

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        The posterior bound rho, in (1/m, 1).

    Raises
    ------
    ValueError
        If ``epsilon`` is not positive and finite or ``m`` < 2.

    Examples
    --------
    >>> from dpkmeans.privacy.identifiability import epsilon_from_rho, rho_from_epsilon
    >>> round(rho_from_epsilon(epsilon_from_rho(0.7, 2), 2), 12)
    0.7
    """
    eps = check_epsilon(epsilon)
    mm = check_m(m)
    return 1.0 / (1.0 + (mm - 1) * math.exp(-eps))


def di_laplace_scale(sensitivity: float, rho: float, m: int) -> float:
    """lambda = Delta f / ln((m - 1) rho / (1 - rho)), the DI Laplace scale (Lee and
    Clifton 2012, Theorem 1).

    Parameters
    ----------
    sensitivity : float
        The replace-one L1 sensitivity Delta f (>= 0).
    rho : float
        The posterior bound, in (1/m, 1).
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        The Laplace scale lambda.

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.identifiability import di_laplace_scale
    >>> round(di_laplace_scale(2.0, 0.7, 2), 4)
    2.3604
    """
    return check_sensitivity(sensitivity) / epsilon_from_rho(rho, m)


def _require_replace(ledger: PrivacyLedger | None) -> None:
    if ledger is not None and ledger.neighbour != "replace":
        raise ValueError(
            "differential identifiability assumes replace-one adjacency: create the ledger "
            "with PrivacyLedger(..., neighbour='replace')"
        )


def di_laplace_mechanism(
    value: ArrayLike,
    sensitivity: float,
    rho: float,
    m: int,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None,
    label: str = "",
) -> np.ndarray:
    """Laplace noise of scale :func:`di_laplace_scale`; rho-DI, i.e. epsilon_from_rho(rho, m)-DP.

    ``sensitivity`` is the replace-one L1 sensitivity ("sensitive range") of ``value``.

    Parameters
    ----------
    value : array_like
        The exact value of the query.
    sensitivity : float
        Its replace-one L1 sensitivity (>= 0).
    rho : float
        The posterior bound, in (1/m, 1).
    m : int
        The number of possible worlds (>= 2).
    rng : numpy.random.Generator
        The source of the noise.
    ledger : PrivacyLedger or None
        A ledger under replace adjacency, charged before the draw (with the DI notion, rho and
        m in the entry's details); ``None`` for a demonstration that is not accounted.
    label : str, default ""
        The ledger entry's label.

    Returns
    -------
    ndarray
        ``value`` plus the noise (:func:`dpkmeans.privacy.mechanisms.laplace_mechanism`).

    Raises
    ------
    ValueError
        If the ledger is not under replace adjacency, or an input is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.identifiability import di_laplace_mechanism
    >>> ledger = PrivacyLedger(neighbour="replace")
    >>> di_laplace_mechanism([3.0, 4.0], 2.0, 0.7, 2, np.random.default_rng(0), ledger=ledger)
    array([2.42406227, 7.43671531])
    >>> print(ledger.total())
    epsilon=0.847298
    """
    _require_replace(ledger)
    eps = epsilon_from_rho(rho, m)
    return laplace_mechanism(value, sensitivity, eps, rng, ledger=ledger, label=label,
                             details=_di_details(rho, m))


def di_exponential_mechanism(
    utility: ArrayLike,
    sensitivity: float,
    rho: float,
    m: int,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None,
    label: str = "",
) -> int:
    """Exponential mechanism with epsilon = ln((m-1) rho / (1 - rho)) (Shang et al. 2021,
    Definition 2 and eq. 7).

    Parameters
    ----------
    utility : array_like
        One utility per candidate (higher is better).
    sensitivity : float
        The replace-one sensitivity of the utility (> 0).
    rho : float
        The posterior bound, in (1/m, 1).
    m : int
        The number of possible worlds (>= 2).
    rng : numpy.random.Generator
        The source of the draw.
    ledger : PrivacyLedger or None
        A ledger under replace adjacency, charged before the draw; ``None`` for a demonstration
        that is not accounted.
    label : str, default ""
        The ledger entry's label.

    Returns
    -------
    int
        The index of the chosen candidate
        (:func:`dpkmeans.privacy.mechanisms.exponential_mechanism`).

    Raises
    ------
    ValueError
        If the ledger is not under replace adjacency, or an input is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.identifiability import di_exponential_mechanism
    >>> ledger = PrivacyLedger(neighbour="replace")
    >>> di_exponential_mechanism([1.0, 5.0, 2.0], 1.0, 0.9, 2, np.random.default_rng(0),
    ...                          ledger=ledger)
    1
    >>> print(ledger.total())
    epsilon=2.19722
    """
    _require_replace(ledger)
    eps = epsilon_from_rho(rho, m)
    return exponential_mechanism(utility, sensitivity, eps, rng, ledger=ledger, label=label,
                                 details=_di_details(rho, m))


def _di_details(rho: float, m: int) -> dict[str, object]:
    """What a DI draw adds to its ledger entry: the notion and its parameters."""
    return {"notion": "differential identifiability", "rho": float(rho), "m": int(m)}


def compose_rho_published(rhos: Sequence[float], m: int) -> float:
    """Shang et al. (2021), Proposition 2: n rho_i-DI mechanisms together are
    (m^(n-1) prod rho_i)-DI.

    A valid but loose upper bound on the exact composed posterior (chapter 11 proves it
    for n = 2); it can exceed 1, where it says nothing. Computed in log space.

    Parameters
    ----------
    rhos : sequence of float
        The mechanisms' posterior bounds, each in (1/m, 1); at least one.
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        m^(n-1) prod_i rho_i (possibly above 1).

    Raises
    ------
    ValueError
        If ``rhos`` is empty or a rho is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.identifiability import compose_rho_exact, compose_rho_published
    >>> round(compose_rho_published([0.6, 0.6], 2), 6), round(compose_rho_exact([0.6, 0.6], 2), 6)
    (0.72, 0.692308)
    """
    mm = check_m(m)
    rs = [check_rho(r, mm) for r in _nonempty(rhos)]
    return math.exp((len(rs) - 1) * math.log(mm) + sum(math.log(r) for r in rs))


def compose_rho_exact(rhos: Sequence[float], m: int) -> float:
    """Compose in epsilon space and map back: rho(sum_i epsilon(rho_i)).

    This is the worst-case posterior implied by sequential composition of the
    equivalent epsilon-DP mechanisms, under the same assumptions as the rho <-> epsilon
    map.

    Parameters
    ----------
    rhos : sequence of float
        The mechanisms' posterior bounds, each in (1/m, 1); at least one.
    m : int
        The number of possible worlds (>= 2).

    Returns
    -------
    float
        The composed posterior bound, in (1/m, 1).

    Raises
    ------
    ValueError
        If ``rhos`` is empty or a rho is out of range.

    Examples
    --------
    Three 0.7-DI releases over two worlds (the published bound, 1.372, says nothing):

    >>> from dpkmeans.privacy.identifiability import compose_rho_exact
    >>> round(compose_rho_exact([0.7, 0.7, 0.7], 2), 4)
    0.927
    """
    mm = check_m(m)
    total = sum(epsilon_from_rho(r, mm) for r in _nonempty(rhos))
    return rho_from_epsilon(total, mm)


def compose_rho_parallel(rhos: Sequence[float], m: int, *, as_published: bool = False) -> float:
    """Parallel composition over disjoint subsets: max rho_i (correct), or min rho_i as
    Shang et al. (2021) state it (``as_published``).

    One record lies in one subset, so the guarantee is the weakest one, max_i rho_i. The
    paper's Proposition 3 states min_i rho_i: its proof multiplies the priors of every subset
    as if the missing record were in all of them.

    Parameters
    ----------
    rhos : sequence of float
        The posterior bounds of the mechanisms on the disjoint subsets, each in (1/m, 1).
    m : int
        The number of possible worlds (>= 2).
    as_published : bool, default False
        Return the paper's min_i rho_i instead of the correct max_i rho_i.

    Returns
    -------
    float
        The composed posterior bound.

    Raises
    ------
    ValueError
        If ``rhos`` is empty or a rho is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.identifiability import compose_rho_parallel
    >>> compose_rho_parallel([0.6, 0.8], 2), compose_rho_parallel([0.6, 0.8], 2, as_published=True)
    (0.8, 0.6)
    """
    mm = check_m(m)
    rs = [check_rho(r, mm) for r in _nonempty(rhos)]
    return min(rs) if as_published else max(rs)


def _nonempty(rhos: Sequence[float]) -> list[float]:
    rs = list(rhos)
    if not rs:
        raise ValueError("rhos must contain at least one value")
    return rs
