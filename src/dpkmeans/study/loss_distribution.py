"""The exact distribution of a transcript's privacy loss, for planning and judging audits.

The log-likelihood ratio L of a whole transcript (:mod:`dpkmeans.study.transcript`) is a sum of
independent terms when the shifts between D and D' are fixed: one per element of a Laplace
release (its loss lies in [-b_e, b_e], with b_e = |mu_D - mu_D'| / b), one Gaussian for all the
Gaussian elements (mu^2 = sum of their squared shifts over sigma: L ~ N(mu^2 / 2, mu^2) under D),
and one per mode draw of k-prototypes (a discrete loss). Its distribution under D and under D' is
therefore computable to any precision: every term rounded to a grid of step ``step``, then
convolved. From it follow, without simulating anything, the probability of every threshold event
``L >= tau`` under both datasets, the number of trials an audit needs to reach a bound with a
given power, and the exact epsilon at delta of the pair (the most any audit of that pair can
show). When the shifts vary between runs (a budget that depends on earlier releases), the
distribution is the average over the runs' shift patterns. Book: chapter 6, "Auditing the whole
privacy curve".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import ndtr

from dpkmeans.privacy.loss import laplace_loss_pmf
from dpkmeans.study.transcript import TranscriptShifts
from dpkmeans.study.uniform import trials_needed
from dpkmeans.validation import check_delta

__all__ = ["LossDistribution", "loss_distribution", "from_shifts", "DEFAULT_STEP"]

#: The grid of the rounded loss: fine against the budgets of the audited fits (>= 0.004).
DEFAULT_STEP = 2e-5
#: Gaussian terms are cut where their probability is below this (each side).
GAUSSIAN_TAIL = 1e-15


@dataclass(frozen=True)
class LossDistribution:
    """P[L = (offset + j) step] under D (``under_d``) and under D' (``under_d_prime``)."""

    step: float
    offset: int
    under_d: np.ndarray
    under_d_prime: np.ndarray

    @property
    def values(self) -> np.ndarray:
        """The loss of each grid point."""
        return (self.offset + np.arange(self.under_d.size)) * self.step

    def then(self, other: LossDistribution) -> LossDistribution:
        """The distribution of the sum of two independent losses (a convolution)."""
        if other.step != self.step:
            raise ValueError("the two distributions must share their grid step")
        p, q = (np.clip(fftconvolve(a, b), 0.0, None)
                for a, b in ((self.under_d, other.under_d),
                             (self.under_d_prime, other.under_d_prime)))
        return LossDistribution(self.step, self.offset + other.offset, p / p.sum(), q / q.sum())

    def tails(self, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                     np.ndarray]:
        """For each tau: P[L >= tau] under D and D', and P[L <= -tau] under D' and D (the events
        that favour D, then the ones that favour D')."""
        tau = np.asarray(thresholds, dtype=float)
        v = self.values
        up_d = np.r_[np.cumsum(self.under_d[::-1])[::-1], 0.0]
        up_dp = np.r_[np.cumsum(self.under_d_prime[::-1])[::-1], 0.0]
        low_d, low_dp = np.r_[0.0, np.cumsum(self.under_d)], np.r_[0.0, np.cumsum(self.under_d_prime)]
        i = np.searchsorted(v, tau - 0.5 * self.step, side="left")  # first value >= tau
        j = np.searchsorted(v, -tau + 0.5 * self.step, side="right")  # values <= -tau
        return up_d[i], up_dp[i], low_dp[j], low_d[j]

    def epsilon_at(self, delta: float) -> float:
        """The exact epsilon at ``delta`` of the pair: the smallest epsilon whose hockey-stick
        divergence, in both directions, is at most delta (bisection; 0 if even epsilon 0
        satisfies it). Rounding the loss to the grid merges outputs (post-processing), so this
        is at most the pair's true epsilon."""
        delta = check_delta(delta, allow_zero=True)
        p, q = self.under_d, self.under_d_prime

        def excess(eps: float) -> float:
            return max(np.maximum(p - np.exp(eps) * q, 0.0).sum(),
                       np.maximum(q - np.exp(eps) * p, 0.0).sum())

        lo, hi = 0.0, float(np.abs(self.values).max()) + self.step
        if excess(lo) <= delta:
            return 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if excess(mid) <= delta else (mid, hi)
        return hi

    def trials_needed(self, target: float, *, delta: float, confidence: float, power: float,
                      evaluated: float = 1.0, candidates: int = 400) -> float:
        """Trials a side for a single threshold event's bound to exceed ``target`` with
        probability ``power`` (:func:`dpkmeans.study.uniform.trials_needed` with one event), the
        best of ``candidates`` thresholds on the grid; an audit that evaluates its event on a
        fraction ``evaluated`` of its trials needs that many over the fraction."""
        top = float(np.abs(self.values).max())
        tau = np.linspace(0.0, top, candidates)
        fav_d, other_d, fav_dp, other_dp = self.tails(tau)
        n = trials_needed(np.r_[fav_d, fav_dp], np.r_[other_d, other_dp], target, events=1,
                          delta=delta, confidence=confidence, power=power)
        return float(np.ceil(n / evaluated)) if np.isfinite(n) else n


def _laplace_term(budget: float, step: float) -> LossDistribution:
    p, q = laplace_loss_pmf(budget, step)
    return LossDistribution(step, -(p.size // 2), p, q)


def _gaussian_term(mu2: float, step: float) -> LossDistribution:
    mu = float(np.sqrt(mu2))
    half = mu2 / 2.0 + 8.5 * mu  # beyond it each side holds < 1e-16
    J = int(np.ceil(half / step)) + 1
    edges = (np.arange(-J, J + 2) - 0.5) * step
    p = np.diff(ndtr((edges - mu2 / 2.0) / mu))
    q = np.diff(ndtr((edges + mu2 / 2.0) / mu))
    return LossDistribution(step, -J, p / p.sum(), q / q.sum())


def _discrete_term(p0: np.ndarray, p1: np.ndarray, step: float) -> LossDistribution:
    with np.errstate(divide="ignore"):
        loss = np.log(p0) - np.log(p1)
    j = np.rint(loss / step).astype(np.int64)
    lo = int(j.min())
    p, q = (np.bincount(j - lo, weights=w) for w in (p0, p1))
    return LossDistribution(step, lo, p, q)


def _point(step: float) -> LossDistribution:
    return LossDistribution(step, 0, np.ones(1), np.ones(1))


def loss_distribution(laplace: np.ndarray = (), gaussian_mu2: float = 0.0,
                      modes: list[tuple[np.ndarray, np.ndarray]] = (), *,
                      step: float = DEFAULT_STEP) -> LossDistribution:
    """The distribution of the sum of independent losses: one Laplace term per budget in
    ``laplace``, one Gaussian term of mu^2 = ``gaussian_mu2``, one discrete term per
    (P_D, P_D') pair of ``modes``; each rounded to the grid of ``step``."""
    out = _point(step)
    for b in np.asarray(laplace, dtype=float):
        out = out.then(_laplace_term(float(b), step))
    if gaussian_mu2 > 0:
        out = out.then(_gaussian_term(float(gaussian_mu2), step))
    for p0, p1 in modes:
        out = out.then(_discrete_term(np.asarray(p0), np.asarray(p1), step))
    return out


def _pattern(shifts: TranscriptShifts, r: int, digits: int = 10) -> tuple:
    modes = tuple(tuple(np.round(np.r_[a, b], digits)) for a, b in shifts.modes[r])
    return (tuple(np.sort(np.round(shifts.laplace[r], digits))),
            round(float(shifts.gaussian[r]), digits), modes)


def from_shifts(shifts: TranscriptShifts, *, step: float = DEFAULT_STEP,
                most_patterns: int = 64) -> LossDistribution:
    """The loss distribution of a transcript, from the shifts of a few simulated runs
    (:func:`dpkmeans.study.transcript.transcript_shifts`): the average of each distinct shift
    pattern's exact distribution, weighted by how often it occurred (the exact distribution
    when every run has the same shifts). Only the ``most_patterns`` commonest patterns are
    computed; the others' weight goes to them in proportion."""
    counts = Counter(_pattern(shifts, r) for r in range(len(shifts.laplace)))
    parts = []
    for (laplace, mu2, modes), n in counts.most_common(most_patterns):
        pairs = [(np.asarray(m[:len(m) // 2]), np.asarray(m[len(m) // 2:])) for m in modes]
        parts.append((n, loss_distribution(np.asarray(laplace), mu2, pairs, step=step)))
    lo = min(d.offset for _, d in parts)
    hi = max(d.offset + d.under_d.size for _, d in parts)
    p, q = np.zeros(hi - lo), np.zeros(hi - lo)
    total = sum(n for n, _ in parts)
    for n, d in parts:
        at = slice(d.offset - lo, d.offset - lo + d.under_d.size)
        p[at] += n / total * d.under_d
        q[at] += n / total * d.under_d_prime
    return LossDistribution(step, lo, p, q)
