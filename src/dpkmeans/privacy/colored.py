"""Colored (optimal-covariance) Gaussian noise for a vector query (Ravi, Scaglione and
Peisert 2021; book chapter 9).

A release y = f(X) + w, w ~ N(0, Sigma), of a query whose change between two neighbours is the
vector Delta has the privacy loss L ~ N(s^2 / 2, s^2) with s^2 = Delta' Sigma^-1 Delta. It is
(epsilon, delta)-PDP, hence (epsilon, delta)-DP, exactly when s^2 <= gamma*(epsilon, delta)
for every possible Delta. The covariance of least error, min tr(Sigma) under those
constraints (the paper's eq. 11), is a convex problem, a semidefinite program; it is solved
here with cvxpy and Clarabel. The paper's closed form (Lemma 5, as coded in CEDS) is kept, as
published, to be audited: :func:`constraint_check` measures how far any covariance is from its
constraints.

Delta sets are arrays of shape (n, m): one possible change per row. The noise itself is drawn
in the privacy modules: :func:`draw_colored` is :func:`dpkmeans.privacy.noise.draw_colored`, and a
release charges and draws through :func:`dpkmeans.privacy.mechanisms.release` with a
:class:`~dpkmeans.privacy.noise.CovarianceNoise`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from dpkmeans.extras import require
from dpkmeans.privacy.loss import gaussian_pdp_delta, gaussian_pdp_sigma
from dpkmeans.privacy.mechanisms import gaussian_sigma_analytic
from dpkmeans.privacy.noise import (
    draw_colored,  # the sampler lives with the other noise (re-exported)
)
from dpkmeans.privacy.sensitivity import box_midpoint, check_box
from dpkmeans.validation import check_delta, check_epsilon

__all__ = [
    "pdp_tail",
    "gamma_pdp",
    "gamma_ceds",
    "gamma_analytic",
    "ceds_gamma_fails_from",
    "leave_one_out_deltas",
    "ceds_covariance",
    "white_covariance",
    "optimal_covariance",
    "CovarianceSolution",
    "constraint_check",
    "ConstraintCheck",
    "box_deltas",
    "box_covariance",
    "MAX_BOX_VERTICES_DIM",
    "draw_colored",
]

#: Largest dimension whose box vertices (2^d rows) are enumerated.
MAX_BOX_VERTICES_DIM = 16


# --- calibration: gamma(epsilon, delta) ------------------------------------------------------
def pdp_tail(epsilon: float, s2: float) -> float:
    """P[|L| > epsilon] for L ~ N(s^2/2, s^2): the delta a Gaussian release with
    s^2 = Delta' Sigma^-1 Delta reaches (the paper's eq. 9, as chapter 9 reconstructs it).

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    s2 : float
        s^2 (>= 0; ``inf`` for a Delta outside the noise's range).

    Returns
    -------
    float
        The tail probability (0 at s^2 = 0, 1 at s^2 = inf).

    Raises
    ------
    ValueError
        If ``s2`` is negative or NaN.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import gamma_pdp, pdp_tail
    >>> round(pdp_tail(1.0, 0.5), 6), pdp_tail(1.0, 0.0), pdp_tail(1.0, float("inf"))
    (0.182972, 0.0, 1.0)
    >>> f"{pdp_tail(1.0, gamma_pdp(1.0, 1e-5)):.3g}"
    '1e-05'
    """
    if not s2 >= 0:
        raise ValueError(f"s2 must be >= 0, got {s2}")
    if math.isinf(s2):
        return 1.0  # a Delta outside the noise's range: the pair is told apart for sure
    return 0.0 if s2 == 0 else gaussian_pdp_delta(epsilon, 1.0, math.sqrt(s2))


def gamma_pdp(epsilon: float, delta: float) -> float:
    """gamma*(epsilon, delta): the largest s^2 with P[|L| > epsilon] <= delta, the root of the
    two-sided tail: 1 / sigma^2 of the exact PDP calibration at sensitivity 1
    (:func:`dpkmeans.privacy.loss.gaussian_pdp_sigma`, book chapter 2).

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        gamma*.

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import gamma_analytic, gamma_ceds, gamma_pdp
    >>> [round(g(1.0, 1e-5), 4) for g in (gamma_pdp, gamma_ceds, gamma_analytic)]
    [0.0506, 0.041, 0.0719]
    """
    return gaussian_pdp_sigma(1.0, epsilon, delta) ** -2


def gamma_ceds(epsilon: float, delta: float) -> float:
    """CEDS's gamma_c = epsilon^2 / (2 ln(2 / delta)): the Chernoff bound on |N(0, s^2)|, which
    drops the mean s^2 / 2 of the privacy loss.

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        gamma_c.

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    Below gamma* here (0.0506), above it from epsilon about 6.68 on
    (:func:`ceds_gamma_fails_from`):

    >>> from dpkmeans.privacy.colored import gamma_ceds
    >>> round(gamma_ceds(1.0, 1e-5), 4)
    0.041
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    return eps * eps / (2.0 * math.log(2.0 / dlt))


def gamma_analytic(epsilon: float, delta: float) -> float:
    """The largest s^2 of an (epsilon, delta)-DP Gaussian release by the analytic Gaussian
    mechanism (Balle and Wang 2018): 1 / sigma^2 at sensitivity 1. DP, not PDP, so larger.

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        The largest s^2 of an (epsilon, delta)-DP release.

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import gamma_analytic
    >>> round(gamma_analytic(1.0, 1e-5), 4)
    0.0719
    """
    return 1.0 / gaussian_sigma_analytic(1.0, epsilon, delta) ** 2


def ceds_gamma_fails_from(delta: float, eps_max: float = 1e3) -> float:
    """The smallest epsilon from which gamma_c exceeds gamma* (its release then reaches a tail
    above delta: not (epsilon, delta)-PDP); ``inf`` if it holds up to ``eps_max``. Computed:
    a grid finds the first sign change, ``brentq`` the root.

    Parameters
    ----------
    delta : float
        The failure probability, in (0, 1).
    eps_max : float, default 1e3
        The largest epsilon searched.

    Returns
    -------
    float
        The epsilon from which CEDS's calibration fails, or ``inf``.

    Raises
    ------
    ValueError
        If ``delta`` is out of range.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import ceds_gamma_fails_from
    >>> round(ceds_gamma_fails_from(1e-5), 3)
    6.678
    """
    dlt = check_delta(delta)

    def gap(log_eps: float) -> float:
        eps = math.exp(log_eps)
        return math.log(gamma_ceds(eps, dlt)) - math.log(gamma_pdp(eps, dlt))

    grid = np.linspace(math.log(1e-3), math.log(eps_max), 200)
    signs = np.array([gap(g) > 0 for g in grid])
    if not signs.any():
        return math.inf
    first = int(np.argmax(signs))
    if first == 0:
        return float(math.exp(grid[0]))
    return math.exp(brentq(gap, grid[first - 1], grid[first], xtol=1e-12))


# --- Delta sets ------------------------------------------------------------------------------
def leave_one_out_deltas(X: ArrayLike, labels: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """The paper's "possible Delta vectors", as the authors' code (CEDS) builds them: for
    each record n, the change of the stacked centroids when it is removed with every label
    frozen, Delta_n = e_k(n) (x) (x_n - c_k(n)) / (|C_k(n)| - 1). Shape (n, K d).
    Data-dependent: this is the as-published (local) sensitivity. Singleton clusters have
    no such Delta.

    Parameters
    ----------
    X : array_like
        The records, (n, d).
    labels : array_like of int
        Each record's cluster, in [0, K).
    centroids : array_like
        The K centroids, (K, d).

    Returns
    -------
    ndarray
        The Delta set, (n, K d).

    Raises
    ------
    ValueError
        If the shapes disagree, a label is out of range, or a cluster has one record.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.colored import gamma_pdp, leave_one_out_deltas
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0]])
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> D = leave_one_out_deltas(X, labels, [[1 / 3, 1 / 3], [16 / 3, 16 / 3]])
    >>> D.round(3)
    array([[-0.167, -0.167,  0.   ,  0.   ],
           [ 0.333, -0.167,  0.   ,  0.   ],
           [-0.167,  0.333,  0.   ,  0.   ],
           [ 0.   ,  0.   , -0.167, -0.167],
           [ 0.   ,  0.   ,  0.333, -0.167],
           [ 0.   ,  0.   , -0.167,  0.333]])
    """
    X = np.asarray(X, dtype=float)
    C = np.asarray(centroids, dtype=float)
    labels = np.asarray(labels)
    if X.ndim != 2 or C.ndim != 2 or C.shape[1] != X.shape[1]:
        raise ValueError(f"X (n, d) and centroids (K, d) must share d, got {X.shape} and {C.shape}")
    if labels.shape != (X.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError("labels must hold one integer cluster index per row of X")
    K, d = C.shape
    if labels.min() < 0 or labels.max() >= K:
        raise ValueError(f"labels must lie in [0, {K})")
    sizes = np.bincount(labels, minlength=K)
    if np.any(sizes == 1):
        raise ValueError(f"clusters {np.flatnonzero(sizes == 1).tolist()} have one record: the "
                         "leave-one-out centroid is undefined (the paper divides by |C_k| - 1)")
    D = np.zeros((X.shape[0], K, d))
    rows = np.arange(X.shape[0])
    D[rows, labels] = (X - C[labels]) / (sizes[labels] - 1.0)[:, None]
    return D.reshape(X.shape[0], K * d)


def box_deltas(bounds: tuple[ArrayLike, ArrayLike], *, centred: bool = True) -> np.ndarray:
    """Every change of one cluster's (S_j, n_j) when a record is added or removed, at its
    extremes: (x - m, 1) (``centred``, m the midpoint) or (x, 1), for x on the 2^d vertices of
    the public box. Data-independent. s^2 = Delta' Psi Delta is convex in x, so its maximum over
    the box is at a vertex.

    Parameters
    ----------
    bounds : (lower, upper)
        The public box of the records (lower < upper in every feature).
    centred : bool, default True
        Measure the records from the box's midpoint.

    Returns
    -------
    ndarray
        The Delta set, (2^d, d + 1).

    Raises
    ------
    ValueError
        If the box is invalid or has more than 2^16 vertices.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import box_deltas
    >>> box_deltas(([0.0, 0.0], [1.0, 1.0]))
    array([[-0.5, -0.5,  1. ],
           [ 0.5, -0.5,  1. ],
           [-0.5,  0.5,  1. ],
           [ 0.5,  0.5,  1. ]])
    """
    lower, upper = check_box(bounds)
    d = lower.size
    if d > MAX_BOX_VERTICES_DIM:
        raise ValueError(f"the box has 2^{d} vertices; enumeration stops at d = "
                         f"{MAX_BOX_VERTICES_DIM} (use box_covariance, whose check needs none)")
    corners = (np.arange(2**d)[:, None] >> np.arange(d)) & 1
    X = np.where(corners == 1, upper, lower)
    if centred:
        X = X - box_midpoint((lower, upper))
    return np.column_stack([X, np.ones(len(X))])


# --- covariances -----------------------------------------------------------------------------
def _check_deltas(D: ArrayLike) -> np.ndarray:
    D = np.asarray(D, dtype=float)
    if D.ndim != 2 or D.shape[0] == 0 or D.shape[1] == 0:
        raise ValueError(f"the Delta set must be a non-empty (n, m) array, got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        raise ValueError("the Delta set must be finite")
    return D


def _check_gamma(gamma: float) -> float:
    g = float(gamma)
    if not (math.isfinite(g) and g > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    return g


def white_covariance(D: ArrayLike, gamma: float) -> np.ndarray:
    """White noise on the same Delta set: sigma^2 I with sigma^2 = max_n ||Delta_n||^2 / gamma.

    Parameters
    ----------
    D : array_like
        The Delta set, (n, m): one possible change of the query per row (finite, non-empty).
    gamma : float
        The largest allowed s^2 (> 0), e.g. :func:`gamma_pdp`.

    Returns
    -------
    ndarray
        sigma^2 I, (m, m).

    Examples
    --------
    >>> from dpkmeans.privacy.colored import box_deltas, white_covariance
    >>> white_covariance(box_deltas(([0.0, 0.0], [1.0, 1.0])), gamma=0.05)
    array([[30.,  0.,  0.],
           [ 0., 30.,  0.],
           [ 0.,  0., 30.]])
    """
    D, g = _check_deltas(D), _check_gamma(gamma)
    return np.eye(D.shape[1]) * float(np.max(np.einsum("ij,ij->i", D, D))) / g


def _independent_in_order(D: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Indices of the first linearly independent rows of D in the given order (the pivots of
    CEDS's ``sympy.rref`` on the columns), by Gram-Schmidt."""
    m = D.shape[1]
    basis: list[np.ndarray] = []
    chosen: list[int] = []
    for i, row in enumerate(D):
        residual = row - sum((b @ row) * b for b in basis) if basis else row.copy()
        norm = np.linalg.norm(residual)
        if norm > rtol * max(np.linalg.norm(row), 1e-300):
            basis.append(residual / norm)
            chosen.append(i)
            if len(chosen) == m:
                break
    return np.array(chosen, dtype=int)


def ceds_covariance(D: ArrayLike, gamma: float) -> np.ndarray:
    """The paper's covariance as the authors coded it (Lemma 5, the paper's eq. 22):
    keep the first r <= K d linearly independent Delta's in increasing norm, take
    M = (U[:r, :r] diag(sqrt s) V)^2 elementwise from the SVD of D_S, lambda = (gamma M^-1 1)^-2,
    R = D_S diag(lambda) D_S', Sigma = R^(1/2). As published; it does not satisfy its own
    constraints (check it with :func:`constraint_check`).

    Parameters
    ----------
    D : array_like
        The Delta set, (n, m): one possible change of the query per row (finite, non-empty).
    gamma : float
        The largest allowed s^2 (> 0), e.g. :func:`gamma_pdp`.

    Returns
    -------
    ndarray
        Sigma, (m, m), symmetric.

    Raises
    ------
    ValueError
        If every Delta is zero, or the closed form's matrix M is singular.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.colored import gamma_pdp, leave_one_out_deltas
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0]])
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> D = leave_one_out_deltas(X, labels, [[1 / 3, 1 / 3], [16 / 3, 16 / 3]])
    >>> from dpkmeans.privacy.colored import ceds_covariance, constraint_check
    >>> gamma = gamma_pdp(1.0, 1e-5)
    >>> constraint_check(D, ceds_covariance(D, gamma), gamma).violated  # of 6
    4
    """
    D, g = _check_deltas(D), _check_gamma(gamma)
    order = np.argsort(np.linalg.norm(D, axis=1), kind="stable")
    chosen = order[_independent_in_order(D[order])]
    r = chosen.size  # < m when the Delta's do not span (CEDS then works on the r found)
    if r == 0:
        raise ValueError("every Delta is zero: the query needs no noise")
    DS = D[chosen].T  # columns are the chosen Delta's, (m, r)
    U, s, Vt = np.linalg.svd(DS)
    M = np.square(U[:r, :r] @ np.diag(np.sqrt(s)) @ Vt)
    try:
        lam = np.real(np.power(g * (np.linalg.inv(M) @ np.ones(r)), -2.0))
    except np.linalg.LinAlgError:
        raise ValueError("CEDS's closed form is undefined for this Delta set: its matrix M "
                         "is singular (as published, CEDS's code fails here too; e.g. a "
                         "cluster whose records are all equal)") from None
    R = (DS * lam) @ DS.T
    U, s, Vt = np.linalg.svd(R)
    root = U @ np.diag(np.sqrt(s)) @ Vt
    return (root + root.T) / 2.0  # symmetric up to rounding; numpy would symmetrise it too


@dataclass(frozen=True)
class CovarianceSolution:
    """The optimal covariance of :func:`optimal_covariance` and how it was found.

    Parameters
    ----------
    covariance : ndarray
        Sigma, (m, m).
    precision : ndarray
        Psi, Sigma's (pseudo-)inverse, (m, m).
    status : str
        The solver's statuses of every round, comma-separated.
    rounds : int
        The constraint-generation rounds (the most of any block).
    constraints : int
        The distinct Delta's in the final working sets.
    active : ndarray
        The indices of the Delta's whose constraint is tight (s^2 >= (1 - 1e-4) gamma).
    rescaled : float
        The post-check's factor on the precision (1: every constraint held).
    seconds : float
        The time taken.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import box_deltas, optimal_covariance
    >>> solution = optimal_covariance(box_deltas(([0.0, 0.0], [1.0, 1.0])), gamma=0.05)
    >>> solution.status, solution.active
    ('optimal', array([0, 1, 2, 3]))
    """

    covariance: np.ndarray
    precision: np.ndarray
    status: str
    rounds: int  # constraint-generation rounds (the most of any block)
    constraints: int  # distinct Delta's in the final working sets
    active: np.ndarray  # indices of the Delta's whose constraint is tight (s^2 >= (1-1e-4) gamma)
    rescaled: float  # the post-check's factor on the precision (1: every constraint held)
    seconds: float


#: Clarabel's settings for the SDP: its defaults (tolerances included) on one thread. Its
#: parallel factorisation (faer) is slower on two threads at these sizes (5.2 s against 4.3 s
#: for the four blocks of Marketing at d = 28), and sweeps run two cells at a time.
CLARABEL_OPTIONS: dict[str, Any] = {"max_threads": 1}
#: The first working set holds the START_MULTIPLE r Delta's of largest score (r the dimension
#: of the span); see :func:`_first_working_set`.
START_MULTIPLE = 8


def _solve_working_set(Dw: np.ndarray, gamma: float) -> tuple[np.ndarray, str]:
    """min tr(Psi^-1) s.t. Delta' Psi Delta <= gamma over the rows of Dw, as an SDP:
    [[Psi, I], [I, Z]] >= 0 makes Z >= Psi^-1; minimise tr Z (cvxpy + Clarabel, the ``sdp``
    extra)."""
    cp = require("cvxpy", "the colored mechanism's optimal covariance (an SDP)")
    require("clarabel", "the colored mechanism's optimal covariance (an SDP)")

    m = Dw.shape[1]
    psi = cp.Variable((m, m), symmetric=True)
    z = cp.Variable((m, m), symmetric=True)
    eye = np.eye(m)
    constraints = [cp.bmat([[psi, eye], [eye, z]]) >> 0,
                   cp.sum(cp.multiply(Dw @ psi, Dw), axis=1) <= gamma]
    problem = cp.Problem(cp.Minimize(cp.trace(z)), constraints)

    def solve(**settings: Any) -> tuple[np.ndarray | None, str]:
        problem.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS, **settings)
        return (None if psi.value is None else psi.value.copy()), str(problem.status)

    # Clarabel splits the LMI by its chordal decomposition (two cones of about r + r/2
    # instead of one of 2r: about 30% faster at r = 25). It then sometimes stalls just short
    # of its tolerances (status "optimal_inaccurate", a relative gap of 2e-8 against 1e-8);
    # such a solve is done again without the decomposition, and the better one is kept.
    value, status = solve()
    if status != cp.OPTIMAL:
        retry = solve(chordal_decomposition_enable=False)
        if retry[1] == cp.OPTIMAL or value is None:
            value, status = retry
    if value is None:
        raise RuntimeError(f"the SDP solver failed: status {status}")
    return (value + value.T) / 2.0, status


def _first_working_set(unit: np.ndarray) -> np.ndarray:
    """The first working set (sorted indices of rows of ``unit``, shape (n, r), full column
    rank): the r largest-norm rows (the active set of white noise) and the START_MULTIPLE r
    rows of largest score u' (U'U)^(-1/2) u. Why this score: at the optimum
    Psi^-2 = Sigma^2 = sum_n lambda_n u_n u_n' with multipliers lambda_n >= 0 that vanish off
    the tight constraints (KKT); equal multipliers give Sigma = (U'U)^(1/2), and the score is
    s^2 under that Sigma. It is only a guess: constraint generation adds what it misses."""
    r = unit.shape[1]
    w, V = np.linalg.eigh(unit.T @ unit)
    root_inv = (V / np.sqrt(np.clip(w, w.max() * 1e-14, None))) @ V.T
    score = np.einsum("ij,jk,ik->i", unit, root_inv, unit)
    norms = np.einsum("ij,ij->i", unit, unit)
    return np.union1d(np.argsort(-norms, kind="stable")[:r],
                      np.argsort(-score, kind="stable")[:START_MULTIPLE * r])


def _optimal_precision(D: np.ndarray, gamma: float, max_rounds: int,
                       tolerance: float) -> tuple[np.ndarray, np.ndarray, str, int, int]:
    """Constraint generation for one block: (covariance, precision, status, rounds, working-set
    size). Equal rows (duplicate records of one cluster) are one constraint and are kept once
    (repeated constraints also made some solves stop short of Clarabel's tolerances).
    Directions no Delta reaches need no noise: the problem is solved on the span of the
    Delta's (orthonormal basis B) and lifted back, Sigma = B Sigma_r B' (singular if the span is
    smaller than the block), precision B Psi_r B'."""
    D = np.unique(D, axis=0)
    _, sv, Vt = np.linalg.svd(D, full_matrices=False)
    B = Vt[sv > sv.max() * 1e-10].T  # (m, r)
    r = B.shape[1]
    Dr = D @ B
    norms = np.einsum("ij,ij->i", Dr, Dr)
    # Solve the scaled problem (max ||Delta|| = 1, gamma = 1: the white solution is Psi = I);
    # the solver's tolerances then mean the same at every scale. Psi = Psi_1 gamma / a^2.
    a2 = float(norms.max())
    unit = Dr / math.sqrt(a2)
    work = _first_working_set(unit)
    statuses, rounds = set(), 0
    for rounds in range(1, max_rounds + 1):
        psi1, round_status = _solve_working_set(unit[work], 1.0)
        statuses.add(round_status)
        s2 = np.einsum("ij,jk,ik->i", unit, psi1, unit)
        violated = np.setdiff1d(np.flatnonzero(s2 > 1 + tolerance), work)
        if violated.size == 0:
            break
        work = np.union1d(work, violated[np.argsort(-s2[violated], kind="stable")][:r])
    psi_r = psi1 * gamma / a2
    cov_r = np.linalg.inv(psi_r)
    # every round's status (an "optimal_inaccurate" intermediate round is reported too)
    status = ",".join(sorted(statuses))
    return B @ cov_r @ B.T, B @ psi_r @ B.T, status, rounds, int(work.size)


def optimal_covariance(D: ArrayLike, gamma: float, *, blocks: int = 1, max_rounds: int = 50,
                       tolerance: float = 1e-6) -> CovarianceSolution:
    """min tr(Sigma) s.t. Delta_n' Sigma^-1 Delta_n <= gamma for every row (the paper's
    eq. 11), by constraint generation: solve the SDP (cvxpy + Clarabel) on a working set of
    Delta's, add the r most violated of the others (r the dimension of their span), repeat
    until none is violated. Then a post-check over *all* rows: if the solver left any s^2
    above gamma, the precision is scaled down by that factor, so every constraint holds.

    ``blocks = K`` when every Delta changes one block of m / K coordinates (one centroid, as
    the leave-one-out Delta's): the constraints then see only the diagonal blocks of Psi, and
    tr(Psi^-1) >= sum_k tr(Psi_kk^-1) (Schur complement), so a block-diagonal Psi is optimal
    and the problem splits into K SDPs of size m / K.

    Speed (``python -m benchmarks.colored_sdp``): nearly all the time is Clarabel's
    interior-point iterations on the 2r x 2r LMI: at r = 25 about 1 s a solve with 80 rows in
    the working set, 1.2 s with 200, 2.1 s with 677 (cvxpy's canonicalisation is 1-2% of it),
    so the number of solves is what counts. The first working set was the r largest-norm
    Delta's, which took 3-5 rounds a block (15 solves, about 17 s, for Marketing at K = 4,
    d = 28). It is now a guess of the tight constraints from the optimality conditions
    (:func:`_first_working_set`, 8 r rows), after which one round was enough in every d = 28
    case tried (4 solves, about 4 s). Equal Delta's are solved once, and Clarabel runs on one
    thread (``CLARABEL_OPTIONS``). The problem, the stopping rule (no Delta above
    gamma (1 + ``tolerance``)) and the post-check are unchanged.

    Parameters
    ----------
    D : array_like
        The Delta set, (n, m): one possible change of the query per row (finite, non-empty).
    gamma : float
        The largest allowed s^2 (> 0), e.g. :func:`gamma_pdp`.
    blocks : int, default 1
        K, when every Delta changes one block of m / K coordinates only.
    max_rounds : int, default 50
        The most constraint-generation rounds per block.
    tolerance : float, default 1e-6
        A constraint counts as violated above gamma (1 + ``tolerance``).

    Returns
    -------
    CovarianceSolution
        The covariance, its precision and how they were found.

    Raises
    ------
    ValueError
        If ``blocks`` does not divide m, a Delta changes two blocks, or every Delta is zero.
    RuntimeError
        If the SDP solver fails.

    Examples
    --------
    Over a box it finds the closed form of :func:`box_covariance`:

    >>> import numpy as np
    >>> from dpkmeans.privacy.colored import box_covariance, box_deltas, optimal_covariance
    >>> box = ([0.0, 0.0], [1.0, 1.0])
    >>> solution = optimal_covariance(box_deltas(box), gamma=0.05)
    >>> bool(np.allclose(solution.covariance, box_covariance(box, 0.05), rtol=1e-3))
    True
    """
    D, g = _check_deltas(D), _check_gamma(gamma)
    m = D.shape[1]
    if not isinstance(blocks, int | np.integer) or blocks < 1 or m % blocks:
        raise ValueError(f"blocks must be a positive integer dividing {m}, got {blocks!r}")
    size = m // blocks
    support = np.abs(D.reshape(len(D), blocks, size)).max(axis=2) > 0
    if np.any(support.sum(axis=1) > 1):
        raise ValueError(f"with blocks = {blocks} every Delta must change one block of {size} "
                         "coordinates only")
    if not np.any(D):
        raise ValueError("every Delta is zero: the query needs no noise")
    start = time.perf_counter()
    cov, psi = np.zeros((m, m)), np.zeros((m, m))
    statuses, rounds, work = set(), 0, 0
    for k in range(blocks):
        cols = slice(k * size, (k + 1) * size)
        rows = D[support[:, k], cols]
        if rows.shape[0] == 0:
            continue  # no neighbour changes this block: no noise needed
        c, p, status, r, w = _optimal_precision(rows, g, max_rounds, tolerance)
        cov[cols, cols], psi[cols, cols] = c, p
        statuses.update(status.split(","))
        rounds, work = max(rounds, r), work + w
    # the post-check, over every Delta of the set
    s2_all = np.einsum("ij,jk,ik->i", D, psi, D)
    rescaled = max(float(s2_all.max()) / g, 1.0)
    psi, cov = psi / rescaled, cov * rescaled
    s2 = s2_all / rescaled
    return CovarianceSolution((cov + cov.T) / 2.0, psi, ",".join(sorted(statuses)), rounds, work,
                              np.flatnonzero(s2 >= g * (1 - 1e-4)), rescaled,
                              time.perf_counter() - start)


def box_covariance(bounds: tuple[ArrayLike, ArrayLike],
                   gamma: float) -> np.ndarray:
    """The optimal covariance for one cluster's centred (S_j - n_j m, n_j) over the
    public box (book chapter 9): diagonal, Sigma = diag(r_1, ..., r_d, 1)
    (sum_i r_i + 1) / gamma with r_i the half-widths. Proof: the Delta set is invariant
    under each coordinate's sign flip, so averaging an optimum over the flips (convex
    objective, convex feasible set) gives a diagonal optimum; on a vertex
    s^2 = sum_i r_i^2 / v_i + 1 / v_0, and Lagrange gives v_i proportional to r_i.
    Every vertex gives the same s^2 = gamma: all constraints are tight.

    Parameters
    ----------
    bounds : (lower, upper)
        The public box of the records (lower < upper in every feature).
    gamma : float
        The largest allowed s^2 (> 0).

    Returns
    -------
    ndarray
        Sigma, diagonal, (d + 1, d + 1).

    Raises
    ------
    ValueError
        If the box is invalid or ``gamma`` is not finite and positive.

    Examples
    --------
    Trace 80, against 90 for white noise (:func:`white_covariance`):

    >>> from dpkmeans.privacy.colored import box_covariance
    >>> box_covariance(([0.0, 0.0], [1.0, 1.0]), gamma=0.05)
    array([[20.,  0.,  0.],
           [ 0., 20.,  0.],
           [ 0.,  0., 40.]])
    """
    lower, upper = check_box(bounds)
    g = _check_gamma(gamma)
    r = np.append((upper - lower) / 2.0, 1.0)
    if np.any(r <= 0):
        raise ValueError("every coordinate of the box needs a positive width")
    return np.diag(r * r.sum() / g)


# --- checking --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConstraintCheck:
    """How a covariance meets Delta' Sigma^-1 Delta <= gamma over a Delta set: ``ratios`` are
    s^2_n / gamma; a constraint is violated when its ratio exceeds 1 + ``tolerance``.

    Parameters
    ----------
    ratios : ndarray
        s^2_n / gamma of each Delta (``inf`` outside the covariance's range).
    tolerance : float
        The relative slack of a constraint.
    gamma : float
        The largest allowed s^2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.colored import gamma_pdp, leave_one_out_deltas
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0]])
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> D = leave_one_out_deltas(X, labels, [[1 / 3, 1 / 3], [16 / 3, 16 / 3]])
    >>> from dpkmeans.privacy.colored import ceds_covariance, constraint_check
    >>> gamma = gamma_pdp(1.0, 1e-5)
    >>> check = constraint_check(D, ceds_covariance(D, gamma), gamma)
    >>> check.violated, round(check.worst, 3), f"{check.worst_tail(1.0):.2g}"  # delta was 1e-5
    (4, 1.771, '0.00095')
    """

    ratios: np.ndarray
    tolerance: float
    gamma: float

    @property
    def violated(self) -> int:
        """The number of violated constraints."""
        return int(np.count_nonzero(self.ratios > 1 + self.tolerance))

    @property
    def fraction(self) -> float:
        """The share of the constraints violated."""
        return self.violated / self.ratios.size

    @property
    def worst(self) -> float:
        """The largest ratio s^2_n / gamma."""
        return float(self.ratios.max())

    def worst_tail(self, epsilon: float) -> float:
        """The delta the worst pair reaches: P[|L| > epsilon] at s^2 = worst * gamma.

        Parameters
        ----------
        epsilon : float
            The privacy budget (> 0).

        Returns
        -------
        float
            The tail probability (:func:`pdp_tail`).
        """
        return pdp_tail(epsilon, self.worst * self.gamma)

    def as_row(self) -> dict[str, Any]:
        """The check as one row of a table.

        Returns
        -------
        dict
            The number of constraints, the number and share violated, and the worst and median
            ratio.
        """
        return {"constraints": int(self.ratios.size), "violated": self.violated,
                "fraction violated": self.fraction, "worst s2/gamma": self.worst,
                "median s2/gamma": float(np.median(self.ratios))}


def constraint_check(D: ArrayLike, covariance: ArrayLike, gamma: float, *,
                     tolerance: float = 1e-6) -> ConstraintCheck:
    """The violation check: s^2_n = Delta_n' Sigma^-1 Delta_n / gamma for every Delta of the set
    (the neighbour pairs), for any mechanism's covariance. A singular Sigma with a Delta outside
    its range gives an infinite ratio (that pair is distinguished with certainty).

    Parameters
    ----------
    D : array_like
        The Delta set, (n, m): one possible change of the query per row (finite, non-empty).
    gamma : float
        The largest allowed s^2 (> 0), e.g. :func:`gamma_pdp`.
    covariance : array_like
        Sigma, (m, m), positive semi-definite.
    tolerance : float, default 1e-6
        The relative slack of a constraint.

    Returns
    -------
    ConstraintCheck
        The ratios and what they say.

    Raises
    ------
    ValueError
        If the covariance's shape does not fit the Delta set or it is not positive
        semi-definite.

    Examples
    --------
    >>> from dpkmeans.privacy.colored import box_covariance, box_deltas, constraint_check
    >>> box = ([0.0, 0.0], [1.0, 1.0])
    >>> constraint_check(box_deltas(box), box_covariance(box, 0.05), 0.05).ratios
    array([1., 1., 1., 1.])
    """
    D, g = _check_deltas(D), _check_gamma(gamma)
    S = np.asarray(covariance, dtype=float)
    if S.shape != (D.shape[1], D.shape[1]):
        raise ValueError(f"covariance must be ({D.shape[1]}, {D.shape[1]}), got {S.shape}")
    w, V = np.linalg.eigh((S + S.T) / 2.0)
    if np.any(w < -1e-6 * max(abs(w).max(), 1e-300)):  # rounding in a square root
        raise ValueError("covariance must be positive semi-definite")
    proj = D @ V
    floor = 1e-12 * w.max()
    inside = w > floor
    s2 = np.einsum("ij,j->i", proj[:, inside] ** 2, 1.0 / w[inside])
    outside = np.any(np.abs(proj[:, ~inside]) > 1e-9 * np.linalg.norm(D, axis=1)[:, None], axis=1)
    s2 = np.where(outside, np.inf, s2)
    return ConstraintCheck(s2 / g, float(tolerance), g)
