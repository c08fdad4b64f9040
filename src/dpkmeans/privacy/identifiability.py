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
    """rho must lie strictly between the prior 1/m and 1 (Lee and Clifton 2012)."""
    mm = check_m(m)
    r = check_real(rho, "rho")
    if math.isnan(r) or not (1.0 / mm < r < 1.0):
        raise ValueError(f"rho must lie in (1/m, 1) = ({1.0 / mm:.6g}, 1) for m={mm}, got {r}")
    return r


def epsilon_from_rho(rho: float, m: int) -> float:
    """epsilon = ln((m - 1) rho / (1 - rho)): Lee and Clifton (2012), Theorem 1;
    Shang et al. (2021), eq. 5."""
    mm = check_m(m)
    r = check_rho(rho, mm)
    return math.log(mm - 1) + math.log(r) - math.log1p(-r)


def rho_from_epsilon(epsilon: float, m: int) -> float:
    """rho = e^epsilon / (m - 1 + e^epsilon) = 1 / (1 + (m - 1) e^-epsilon), the inverse map."""
    eps = check_epsilon(epsilon)
    mm = check_m(m)
    return 1.0 / (1.0 + (mm - 1) * math.exp(-eps))


def di_laplace_scale(sensitivity: float, rho: float, m: int) -> float:
    """lambda = Delta f / ln((m - 1) rho / (1 - rho)), the DI Laplace scale (Lee and
    Clifton 2012, Theorem 1)."""
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
    Definition 2 and eq. 7)."""
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
    """
    mm = check_m(m)
    rs = [check_rho(r, mm) for r in _nonempty(rhos)]
    return math.exp((len(rs) - 1) * math.log(mm) + sum(math.log(r) for r in rs))


def compose_rho_exact(rhos: Sequence[float], m: int) -> float:
    """Compose in epsilon space and map back: rho(sum_i epsilon(rho_i)).

    This is the worst-case posterior implied by sequential composition of the
    equivalent epsilon-DP mechanisms, under the same assumptions as the rho <-> epsilon
    map.
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
    """
    mm = check_m(m)
    rs = [check_rho(r, mm) for r in _nonempty(rhos)]
    return min(rs) if as_published else max(rs)


def _nonempty(rhos: Sequence[float]) -> list[float]:
    rs = list(rhos)
    if not rs:
        raise ValueError("rhos must contain at least one value")
    return rs
