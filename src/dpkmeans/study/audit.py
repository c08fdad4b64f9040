"""Privacy auditing: a statistically sound lower bound on epsilon, measured from the outside.

A proof gives an upper bound on the privacy loss; an audit gives a *lower* bound. Run a
randomised function many times on two neighbouring datasets, pick a distinguishing event on
one half of the trials, and bound ``ln (P[E | D] - delta) / P[E | D']`` on the other half
with exact Clopper-Pearson intervals. If the bound exceeds the
claimed epsilon, the claim is false (with the stated confidence); if not, the audit is
*consistent* with the claim, which is all an audit can ever say.

Book: chapter 6, "Auditing a mechanism".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult, run
from dpkmeans.privacy.mechanisms import laplace_mechanism
from dpkmeans.privacy.sensitivity import check_bounds
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int

__all__ = [
    "AuditReport",
    "EventChoice",
    "choose_event",
    "log_ratio_bound",
    "trials_to_expose",
    "epsilon_lower_bound",
    "audit_samples",
    "audit_mechanism",
    "audit_configuration",
    "corner_pair",
    "empty_cluster_pair",
    "replace_pair",
    "laplace_count_release",
]

VERDICTS = ("consistent", "violation detected")


@dataclass(frozen=True)
class EventChoice:
    """A threshold event on one statistic: ``s[column] <= t`` (or ``> t``), D vs D' (or swapped)."""

    column: int
    threshold: float
    below: bool  # True: the event is s <= threshold; False: s > threshold
    swapped: bool  # True: the event is likelier under D' (the bound is on ln P[E|D'] / P[E|D])

    def indicator(self, samples: np.ndarray) -> np.ndarray:
        s = samples[:, self.column]
        return s <= self.threshold if self.below else s > self.threshold

    def describe(self, names: tuple[str, ...] | None = None) -> str:
        name = names[self.column] if names else f"statistic {self.column}"
        side = "<=" if self.below else ">"
        favoured = "D'" if self.swapped else "D"
        return f"{name} {side} {self.threshold:.6g} (likelier under {favoured})"


@dataclass(frozen=True)
class AuditReport:
    """The outcome of one audit (one row of the book's tables)."""

    name: str
    claimed_epsilon: float
    delta: float
    lower_bound: float  # with probability >= confidence, the true epsilon is at least this
    estimate: float  # the point estimate of ln P[E|D]/P[E|D'] on the held-out trials
    confidence: float
    trials: int  # per dataset
    event: str
    verdict: str
    seconds: float

    def as_row(self) -> dict[str, object]:
        return asdict(self)


def _as_samples(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 4:
        raise ValueError(f"{name} must be (trials,) or (trials, statistics) with >= 4 trials")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} contains NaN")
    return arr


def _cp_lower(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    return np.where(k > 0, stats.beta.ppf(alpha, k, n - k + 1), 0.0)


def _cp_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    return np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, n - k), 1.0)


def log_ratio_bound(k0, n0: int, k1, n1: int, delta: float, alpha: float) -> np.ndarray:
    """Lower confidence bound on ln (p0 - delta) / p1 from counts k0/n0 and k1/n1."""
    p0 = _cp_lower(np.asarray(k0), n0, alpha / 2) - delta
    p1 = _cp_upper(np.asarray(k1), n1, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p0 > 0, np.log(np.maximum(p0, 1e-300) / p1), -np.inf)


def choose_event(s0: np.ndarray, s1: np.ndarray, *, delta: float, confidence: float,
                 n_thresholds: int = 256) -> EventChoice:
    """The threshold event with the best lower bound on the given samples (the
    selection half)."""
    best, best_value = None, -np.inf
    alpha = 1.0 - confidence
    for col in range(s0.shape[1]):
        a, b = np.sort(s0[:, col]), np.sort(s1[:, col])
        pooled = np.concatenate([a, b])
        thresholds = np.unique(np.quantile(pooled, np.linspace(0, 1, n_thresholds)))
        below0 = np.searchsorted(a, thresholds, side="right")
        below1 = np.searchsorted(b, thresholds, side="right")
        options = {  # (below, swapped): (k0, k1) counts of the event under D and D'
            (True, False): (below0, below1),
            (False, False): (a.size - below0, b.size - below1),
            (True, True): (below1, below0),
            (False, True): (b.size - below1, a.size - below0),
        }
        for (below, swapped), (k_fav, k_other) in options.items():
            n_fav, n_other = (b.size, a.size) if swapped else (a.size, b.size)
            bound = log_ratio_bound(k_fav, n_fav, k_other, n_other, delta, alpha)
            i = int(np.argmax(bound))
            if bound[i] > best_value:
                best_value = bound[i]
                best = EventChoice(col, float(thresholds[i]), below, swapped)
    if best is None:  # every candidate had an empty event: fall back to the median
        best = EventChoice(0, float(np.median(s0[:, 0])), True, False)
    return best


def epsilon_lower_bound(
    samples0: ArrayLike, samples1: ArrayLike, *, delta: float = 0.0,
    confidence: float = 0.99, rng: np.random.Generator,
    names: tuple[str, ...] | None = None, selection: float = 0.5,
) -> tuple[float, float, str]:
    """(lower bound, point estimate, event) from outputs on D (samples0) and D'
    (samples1).

    Each sample is split at random: the event is chosen on a share ``selection`` of it (half
    by default) and evaluated on the rest, so the choice does not bias the bound. For
    delta > 0 this bounds the epsilon at which the hockey-stick divergence exceeds delta.
    """
    s0, s1 = _as_samples(samples0, "samples0"), _as_samples(samples1, "samples1")
    if s0.shape[1] != s1.shape[1]:
        raise ValueError("samples0 and samples1 must have the same statistics")
    delta = check_delta(delta, allow_zero=True)
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must lie in [0.5, 1), got {confidence}")
    if not 0.0 < selection < 1.0:
        raise ValueError(f"selection must lie in (0, 1), got {selection}")
    p0, p1 = rng.permutation(len(s0)), rng.permutation(len(s1))
    h0, h1 = int(len(s0) * selection), int(len(s1) * selection)
    event = choose_event(s0[p0[:h0]], s1[p1[:h1]], delta=delta, confidence=confidence)
    e0, e1 = s0[p0[h0:]], s1[p1[h1:]]
    fav, other = (e1, e0) if event.swapped else (e0, e1)
    k_fav = int(event.indicator(fav).sum())
    k_other = int(event.indicator(other).sum())
    bound = float(log_ratio_bound(k_fav, len(fav), k_other, len(other), delta,
                                   1.0 - confidence))
    with np.errstate(divide="ignore"):
        estimate = float(np.log(max(k_fav / len(fav) - delta, 0.0)
                                / max(k_other / len(other), 1.0 / len(other))))
    return max(bound, 0.0), estimate, event.describe(names)


def audit_samples(name: str, samples0: ArrayLike, samples1: ArrayLike, claimed_epsilon: float,
                  *, delta: float = 0.0, confidence: float = 0.99, seed: int = 0,
                  seconds: float = 0.0, names: tuple[str, ...] | None = None) -> AuditReport:
    """Audit pre-computed outputs against a claimed epsilon."""
    claimed = check_epsilon(claimed_epsilon, "claimed_epsilon")
    lower, estimate, event = epsilon_lower_bound(samples0, samples1, delta=delta,
                                                 confidence=confidence,
                                                 rng=np.random.default_rng(seed), names=names)
    verdict = VERDICTS[1] if lower > claimed else VERDICTS[0]
    return AuditReport(name, claimed, delta, lower, estimate, confidence,
                       int(np.shape(samples0)[0]), event, verdict, seconds)


def audit_mechanism(
    name: str,
    release: Callable[[int, int, np.random.Generator], np.ndarray],
    claimed_epsilon: float,
    *,
    trials: int,
    delta: float = 0.0,
    confidence: float = 0.99,
    seed: int = 0,
) -> AuditReport:
    """Audit ``release(which, trials, rng)``: ``trials`` outputs (or statistics) on dataset
    ``which`` (0 = D, 1 = D'). Each dataset gets its own generator spawned from ``seed``."""
    n = check_positive_int(trials, "trials")
    g0, g1, g_split = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    start = time.perf_counter()
    out0, out1 = release(0, n, g0), release(1, n, g1)
    seconds = time.perf_counter() - start
    return audit_samples(name, out0, out1, claimed_epsilon, delta=delta, confidence=confidence,
                         seed=int(g_split.integers(2**63 - 1)), seconds=seconds)


def audit_configuration(
    name: str,
    config: DPLloydConfig,
    X0: ArrayLike,
    X1: ArrayLike,
    statistic: Callable[[DPLloydResult], np.ndarray],
    *,
    trials: int,
    confidence: float = 0.99,
    seed: int = 0,
    claimed_epsilon: float | None = None,
    delta: float | None = None,
) -> AuditReport:
    """Audit a whole DP-Lloyd configuration on a neighbouring pair (X0, X1) in one
    call.

    ``trials`` replicas run in one batched pass per dataset; ``statistic`` maps a
    run's result to one value per replica, shape (trials,), or a family (trials, m).
    The claimed epsilon defaults to the configuration's declared budget, the claimed
    delta to T times its per-iteration delta (pass ``delta`` when a release step
    claims its own, as the output release of Ravi, Scaglione and Peisert's colored
    noise does).
    """
    claimed = config.epsilon if claimed_epsilon is None else claimed_epsilon
    claimed_delta = (config.delta * config.iterations if delta is None
                     else check_delta(delta, allow_zero=True))

    def release(which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        X = X0 if which == 0 else X1
        seed_sequence = np.random.SeedSequence(int(rng.integers(2**63 - 1)))
        return statistic(run(X, config, seed_sequence, replicas=n))

    return audit_mechanism(name, release, claimed, trials=trials,
                           confidence=confidence, seed=seed, delta=claimed_delta)


def laplace_count_release(
    epsilon: float, *, noise_factor: float = 1.0
) -> Callable[[int, int, np.random.Generator], np.ndarray]:
    """A ``release`` for :func:`audit_mechanism`: counts 0 (D) and 1 (D') through the Laplace
    mechanism at ``epsilon``. ``noise_factor < 1`` scales the noise down: a deliberately
    broken variant that shows the auditor's power (book chapter 6, "Auditing a mechanism")."""
    eps = check_epsilon(epsilon)
    if not noise_factor > 0:
        raise ValueError(f"noise_factor must be > 0, got {noise_factor}")

    def release(which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        # n independent releases of the count (noise scale noise_factor / eps): exactly the
        # library's mechanism, with its default exact sampler
        return laplace_mechanism(float(which), 1.0, eps / noise_factor, rng, ledger=None,
                                 repeats=n)

    return release


# --- neighbouring pairs that stress DP k-means --------------------------------------------
def corner_pair(X: ArrayLike, bounds: tuple[ArrayLike, ArrayLike],
                corner: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(D, D' = D plus one extreme record at a corner of the public box); add/remove."""
    X = np.asarray(X, dtype=float)
    lower, upper = check_bounds(bounds)
    point = upper if corner is None else np.asarray(corner, dtype=float)
    if point.shape != lower.shape or np.any((point != lower) & (point != upper)):
        raise ValueError("corner must be a corner of the box (each coordinate lower or upper)")
    return X, np.vstack([X, point])


def empty_cluster_pair(X: ArrayLike, point: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(D, D' = D plus one record at ``point``), where ``point`` sits in a cluster that is
    empty in D under the configuration's fixed initial centroids; add/remove."""
    X = np.asarray(X, dtype=float)
    point = np.asarray(point, dtype=float)
    if point.shape != (X.shape[1],):
        raise ValueError(f"point must have {X.shape[1]} coordinates")
    return X, np.vstack([X, point])


def replace_pair(X: ArrayLike, bounds: tuple[ArrayLike, ArrayLike],
                 index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(D, D') where record ``index`` is replaced by the box corner farthest from it."""
    X = np.asarray(X, dtype=float)
    lower, upper = check_bounds(bounds)
    Xp = X.copy()
    Xp[index] = np.where(np.abs(X[index] - lower) > np.abs(X[index] - upper), lower, upper)
    return X, Xp


# --- planning an audit -------------------------------------------------------------------
def trials_to_expose(tail_d: np.ndarray, tail_d_prime: np.ndarray, epsilon: float,
                     confidence: float, power: float | None = None) -> dict[str, float] | None:
    """Smallest held-out n per dataset at which the best threshold event's bound exceeds
    epsilon, with that event's probabilities (bisection on log10 n).

    power=None: at the expected counts n P[E|D] and n P[E|D'] (the audit then succeeds about
    half the time). power=p: at the (1-p)/2 quantile of the count on D and the (1+p)/2 quantile
    on D' (the bound rises with the first count and falls with the second, so the audit
    succeeds with probability at least p).
    """
    ratio = np.log(tail_d) - np.log(np.maximum(tail_d_prime, 1e-300))
    useful = (tail_d_prime > 0) & (ratio > epsilon)
    b, a = tail_d[useful], tail_d_prime[useful]

    def best(log_n):
        n = int(round(10**log_n))
        if power is None:
            k0, k1 = n * b, n * a
        else:
            k0 = stats.binom.ppf((1 - power) / 2, n, b)
            k1 = stats.binom.ppf((1 + power) / 2, n, a)
        bound = log_ratio_bound(k0, n, k1, n, 0.0, 1.0 - confidence)
        return float(bound.max()), int(np.argmax(bound))

    lo, hi = 1.0, 12.0
    if not useful.any() or best(hi)[0] <= epsilon:
        return None
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if best(mid)[0] <= epsilon else (lo, mid)
    i = best(hi)[1]
    return {"n": 10**hi, "P[E | D]": b[i], "P[E | D']": a[i]}
