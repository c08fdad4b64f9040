"""The privacy-loss statistic of a whole DP-Lloyd transcript, for audits of a neighbouring pair.

A run releases, at every iteration, the noisy centred statistics (S'_j, n'_j) of every cluster;
the centroids are post-processing of them. An auditor who knows both datasets of a pair (D, D')
can recompute, from the centroids released before iteration t (public), the exact statistics
mu_D and mu_D' that iteration t noised, and from the configuration (public) the noise each
element got. The log-likelihood ratio of the released transcript,

    L = sum_t sum_elements [ log f(y - mu_D) - log f(y - mu_D') ],

is the most powerful statistic for telling D from D' (Neyman-Pearson), and its largest value is
the privacy loss the proof bounds by the claimed epsilon. Any statistic gives a sound audit; this
one gives the tightest. Book: chapter 6, "Auditing an algorithm".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpkmeans.compute.backends import get_backend
from dpkmeans.compute.lloyd import block_stats
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult
from dpkmeans.engine.prototypes import mode_scores
from dpkmeans.privacy.noise_types import NoiseType, noise_type, noise_type_of
from dpkmeans.privacy.sensitivity import box_midpoint

__all__ = ["exact_statistics", "element_log_ratio", "mode_log_ratio", "transcript_log_ratios",
           "TranscriptShifts", "transcript_shifts"]


def exact_statistics(X: ArrayLike, config: DPLloydConfig, centroids: np.ndarray,
                     t: int = 0) -> np.ndarray:
    """The exact statistics iteration ``t`` (from 0) noises: the centred (S_j - n_j m, n_j)
    of every cluster, (R, k, d + 1), for the centroids (R, k, d) entering it (the engine's
    own assignment and sums, :func:`dpkmeans.compute.lloyd.block_stats`); under a relative
    assignment (FastLloyd's radius, :mod:`dpkmeans.engine.relative`) the offset sums and
    counts of the records within r_t, in the data's units (``t`` gives r_t).

    Every replica is computed alone, the same bits as grouped (docs/design.md, "Exact
    assignment and a fixed order of additions"): no search for equal centroid sets, which
    after the first iteration are all distinct. Only a start shared by every replica (the
    first iteration's) is computed once."""
    backend = get_backend("memory")
    data, _, _ = backend.prepare(X, config.bounds)
    C = np.ascontiguousarray(centroids, dtype=np.float64)
    shared = C.shape[0] > 1 and bool(np.all(C == C[:1]))
    if config.assign.relative:  # the engine's own query: offsets, no centring
        sums, counts = config.assign.statistics(backend, data, C[:1] if shared else C, t,
                                                config)
        if shared:
            sums, counts = (np.repeat(a, C.shape[0], axis=0) for a in (sums, counts))
        return np.concatenate([sums, counts[..., None]], axis=2)
    sums, counts = backend.map_reduce(data, block_stats, C[:1] if shared else C, config.scores)
    if shared:
        sums, counts = (np.repeat(a, C.shape[0], axis=0) for a in (sums, counts))
    d = config.bounds[0].size
    centre = box_midpoint(config.bounds) if config.centred else np.zeros(d)
    centre[:config.numeric_offset] = 0.0
    if config.centred:
        sums = sums - counts[..., None] * centre
    return np.concatenate([sums, counts[..., None]], axis=2)


def element_log_ratio(noise: NoiseType | str, y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray,
                      scale: np.ndarray) -> np.ndarray:
    """log f(y - mu0) - log f(y - mu1) per element, for the noise of a noise type (or its
    name, :func:`~dpkmeans.privacy.noise_types.noise_type`): its samplers' family's
    :meth:`~dpkmeans.privacy.noise_types.NoiseType.log_ratio` (Laplace scale b, Gaussian
    sigma); 0 where the scale is 0 (nothing released) or the two means agree.

    The continuous densities score the library's discrete samplers too: the statistic only
    has to be computable, not exact, for the audit to be sound."""
    safe = np.where(scale > 0, scale, 1.0)
    out = noise_type(noise).sampler_family.log_ratio(y, mu0, mu1, safe)
    return np.where((scale > 0) & (mu0 != mu1), out, 0.0)


def mode_log_ratio(config: DPLloydConfig, t: int, counts0: np.ndarray, counts1: np.ndarray,
                   released: np.ndarray) -> np.ndarray:
    """Per replica, log P_D - log P_D' of the modes iteration t released (k-prototypes'
    categorical step, :class:`dpkmeans.engine.prototypes.CategoricalModes`): each cluster's
    mode of each attribute is drawn with P[v] proportional to exp(eps_draw count_v / 2), from
    the exact category counts (R, k, n_onehot) under D and D'; ``released`` are the centroids
    after the iteration (R, k, width), whose one-hot blocks hold the modes."""
    modes = config.modes
    touched = min(2, config.n_clusters) if config.neighbour == "replace" else 1
    draw = modes.entries(float(modes.schedule[t]), 1, clusters_touched=touched)[1]
    out = np.zeros(released.shape[0])
    for cols in modes.layout.blocks:
        chosen = np.argmax(released[..., cols], axis=2)[..., None]  # (R, k, 1)
        for counts, sign in ((counts0, 1.0), (counts1, -1.0)):
            logits = 0.5 * draw * np.rint(counts[..., cols])
            logp = logits - logsumexp(logits, axis=2, keepdims=True)
            out += sign * np.take_along_axis(logp, chosen, axis=2)[..., 0].sum(axis=1)
    return out


def _iterations(result: DPLloydResult, X0: ArrayLike, X1: ArrayLike):
    """For each iteration t of a recorded run: (t, released, exact under D, exact under D',
    noise scale) on the vector the noise was added to (whitened), and the exact category
    counts under D and D' (None without modes)."""
    if not result.release_history:
        raise ValueError("the run kept no transcript: run(..., record_history=True)")
    config = result.config
    white = noise_type_of(config).whitening(config.bounds)  # colored: white on the whitened
    for t, (noisy, scale) in enumerate(result.release_history):
        entering = result.initial_centroids if t == 0 else result.history[t - 1]
        exact0, exact1 = (exact_statistics(X, config, entering, t) for X in (X0, X1))
        if config.assign.relative:  # the released vector: iteration t's whitening
            white = config.step.whitening(config, t)
        counts = None if config.modes is None else tuple(
            mode_scores(e[..., :-1], config.modes.layout) for e in (exact0, exact1))
        yield (t, noisy * white, exact0 * white, exact1 * white,
               np.broadcast_to(scale, noisy.shape), counts)


def transcript_log_ratios(result: DPLloydResult, X0: ArrayLike,
                          X1: ArrayLike) -> np.ndarray:
    """Per replica and iteration, the log-likelihood ratio of D = ``X0`` against D' = ``X1``
    given the released statistics of that iteration, shape (R, T_run).

    ``result`` must come from :func:`dpkmeans.engine.loop.run` with ``record_history=True``.
    The sum over iterations (axis 1) scores the whole transcript; column 0 alone scores the
    first release. Under a relative assignment (FastLloyd's) each iteration's offsets and
    counts are scored on the vector it released, whitened by
    :meth:`~dpkmeans.engine.relative.RelativeRelease.whitening`, with independent noise on
    every element (a flawed release that correlates them is still scored soundly, with less
    power). Releases of hooks (an initialisation, an allocation rule's own statistics,
    an output release) are not in the transcript: the statistic ignores them, which costs
    power, never soundness.
    """
    config = result.config
    noise = noise_type_of(config)
    ratios = np.zeros((result.centroids.shape[0], len(result.release_history)))
    for t, y, mu0, mu1, scale, counts in _iterations(result, X0, X1):
        ratios[:, t] = element_log_ratio(noise, y, mu0, mu1, scale).sum(axis=(1, 2))
        if counts is not None:
            ran = t < result.iterations_run  # a stopped replica drew no more modes
            modes = mode_log_ratio(config, t, *counts, result.history[t])
            ratios[:, t] += np.where(ran, modes, 0.0)
    return ratios


@dataclass(frozen=True)
class TranscriptShifts:
    """What separates D from D' in each replica's transcript, element by element: enough to
    compute the exact distribution of the log-likelihood ratio
    (:mod:`dpkmeans.study.loss_distribution`).

    ``laplace[r]`` holds replica r's per-element budgets |mu_D - mu_D'| / b of its Laplace
    releases (the elements where D and D' differ); ``gaussian[r]`` the sum over its Gaussian
    elements of ((mu_D - mu_D') / sigma)^2, the mu^2 of the one Gaussian they compose into;
    ``modes[r]`` one (P_D, P_D') pair of probability vectors per mode draw that differs
    (k-prototypes' categorical step)."""

    laplace: list[np.ndarray]
    gaussian: np.ndarray
    modes: list[list[tuple[np.ndarray, np.ndarray]]]


def _mode_pairs(config: DPLloydConfig, t: int, counts0: np.ndarray, counts1: np.ndarray,
                r: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Replica r's mode draws at iteration t whose distributions differ under D and D': the
    probabilities of each category under both (as :func:`mode_log_ratio` scores them)."""
    modes = config.modes
    touched = min(2, config.n_clusters) if config.neighbour == "replace" else 1
    draw = modes.entries(float(modes.schedule[t]), 1, clusters_touched=touched)[1]
    pairs = []
    for cols in modes.layout.blocks:
        for j in range(config.n_clusters):
            p0, p1 = (np.exp(0.5 * draw * np.rint(c[r, j, cols])
                             - logsumexp(0.5 * draw * np.rint(c[r, j, cols])))
                      for c in (counts0, counts1))
            if not np.array_equal(p0, p1):
                pairs.append((p0, p1))
    return pairs


def transcript_shifts(result: DPLloydResult, X0: ArrayLike, X1: ArrayLike) -> TranscriptShifts:
    """Per replica, the shifts between D = ``X0`` and D' = ``X1`` of every element its
    transcript released (:class:`TranscriptShifts`), from the same exact statistics and
    scales as :func:`transcript_log_ratios` scores.

    Parameters
    ----------
    result : DPLloydResult
        A run with ``record_history=True``.
    X0, X1 : array_like
        The neighbouring pair.

    Returns
    -------
    TranscriptShifts
    """
    config = result.config
    R = result.centroids.shape[0]
    gaussian = noise_type_of(config).sampler_family.norm == 2
    budgets: list[list[np.ndarray]] = [[] for _ in range(R)]
    mu2 = np.zeros(R)
    modes: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(R)]
    for t, _, mu0, mu1, scale, counts in _iterations(result, X0, X1):
        shift = np.where(scale > 0, np.abs(mu0 - mu1) / np.where(scale > 0, scale, 1.0), 0.0)
        if gaussian:
            mu2 += (shift**2).sum(axis=(1, 2))
        else:
            for r in range(R):
                budgets[r].append(shift[r][shift[r] > 0])
        if counts is not None:
            for r in np.flatnonzero(t < result.iterations_run):
                modes[r].extend(_mode_pairs(config, t, *counts, int(r)))
    laplace = [np.concatenate(b) if b else np.zeros(0) for b in budgets]
    return TranscriptShifts(laplace, mu2, modes)
