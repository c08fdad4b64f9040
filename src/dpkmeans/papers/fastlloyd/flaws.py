"""The published privacy flaw of FastLloyd's public code (Diaa, Humphries and Kerschbaum 2025),
as data (:class:`dpkmeans.engine.flaws.Flaw`), and the release that reproduces it
(:class:`SharedSeedRelease`). The paper's algorithm draws the count noise and the sum noise
independently; the authors' code seeds both noises of an iteration with the same value,
``seed * iteration``, so the two come out of the same standard normal draws. Book chapter 12,
"FastLloyd", shows it and audits it.

The same code seeds iteration i with ``seed * i`` and counts iterations from 0, so the first
iteration of every run draws its noise from the public seed 0
(:data:`SEED_ZERO_FIRST_ITERATION`, :func:`iteration_seed`): its release is the same function
of the data in every run. Book chapter 6, "A gallery of real bugs", audits it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.relative import RelativeRelease

__all__ = ["FLAWS", "SEED_ZERO_FIRST_ITERATION", "SHARED_SEED", "SharedSeedRelease",
           "first_iteration", "iteration_seed"]

SHARED_SEED = Flaw(
    name="shared-seed-noise",
    changes_loop=True,
    kind="leak",
    chapter="book chapter 12",
    text=("the count noise and the sum noise of an iteration are drawn from one seed "
          "(seed * iteration in the authors' code, 0 in the first iteration of every run): "
          "cluster j's count noise is a fixed multiple of the noise of the j-th sum "
          "coordinate, so a linear combination of the released count and sum is exact"),
)

SEED_ZERO_FIRST_ITERATION = Flaw(
    name="seed-zero-first-iteration",
    kind="leak",
    chapter="book chapter 6",
    text=("the first iteration's noise is drawn from the seed seed * 0 = 0 in every run (the "
          "authors' code seeds iteration i with seed * i, i from 0): the first release is the "
          "same function of the data in every run, and anybody can regenerate its noise"),
)

#: The flaws that :func:`~dpkmeans.papers.fastlloyd.variants.as_published` reproduces (the
#: published code also has :data:`SEED_ZERO_FIRST_ITERATION`, reproduced apart by
#: :func:`first_iteration` and :func:`iteration_seed`).
FLAWS = (SHARED_SEED,)


def iteration_seed(seed: int, iteration: int) -> int:
    """The seed the authors' code gives the noise of ``iteration`` (from 0) of a run seeded
    with ``seed``: ``seed * iteration`` (``random_state=params.seed * self.curr_iter``), so 0
    in the first iteration of every run (flaw ``seed-zero-first-iteration``).

    Parameters
    ----------
    seed : int
        The run's seed (non-negative).
    iteration : int
        The iteration, from 0.

    Returns
    -------
    int
        The seed of that iteration's noise.

    Raises
    ------
    ValueError
        If ``seed`` or ``iteration`` is negative.

    Examples
    --------
    >>> from dpkmeans.papers.fastlloyd.flaws import iteration_seed
    >>> [iteration_seed(seed, 0) for seed in (1, 7, 2026)], iteration_seed(7, 3)
    ([0, 0, 0], 21)
    """
    if int(seed) < 0 or int(iteration) < 0:
        raise ValueError(f"seed and iteration must be >= 0, got {seed} and {iteration}")
    return int(seed) * int(iteration)


def first_iteration(config: DPLloydConfig, *, flawed: bool = True) -> DPLloydConfig:
    """The first iteration of ``config`` alone (its first budget, the claim dropped: the
    ledger's total is what the iteration spends), carrying the flaw
    ``seed-zero-first-iteration`` when ``flawed``: the configuration that a run of the
    authors' code starts with, run from :func:`iteration_seed` (``seed * 0``). An audit of
    the first release needs no more.

    Parameters
    ----------
    config : DPLloydConfig
        A FastLloyd configuration.
    flawed : bool, default True
        Whether to carry the flaw (False: the corrected counterpart, run from fresh seeds).

    Returns
    -------
    DPLloydConfig
        The one-iteration configuration; with the flaw its ledger records the leak.

    Examples
    --------
    >>> from dpkmeans.papers.fastlloyd.algorithm import catalogue_config
    >>> from dpkmeans.papers.fastlloyd.flaws import first_iteration
    >>> from dpkmeans.papers.registry import FitInputs
    >>> config = catalogue_config(FitInputs(2, 1.0, ([-1.0] * 2, [1.0] * 2), max_iter=5,
    ...                                     n_records=100, delta=1e-4))
    >>> one = first_iteration(config)
    >>> one.iterations, [f.name for f in one.flaws]
    (1, ['seed-zero-first-iteration'])
    """
    flaws = (*config.flaws, SEED_ZERO_FIRST_ITERATION) if flawed else config.flaws
    return replace(config, schedule=config.schedule[:1], target=None, budget=None,
                   flaws=flaws)


@dataclass(frozen=True)
class SharedSeedRelease(RelativeRelease):
    """FastLloyd's release as the authors' code draws it (flaw ``shared-seed-noise``): the
    noise of cluster j's count is the noise of the j-th element of the flattened (k, d) sums,
    scaled to the count's noise scale. In the released (whitened) vector both noises have the
    same scale, so the count's noise *equals* that sum element's."""

    flaws: ClassVar[tuple[Flaw, ...]] = (SHARED_SEED,)
    name: str = "relative, count and sum noise from one seed"

    def after_release(self, stats: np.ndarray, noisy: np.ndarray) -> np.ndarray:
        R, k, width = noisy.shape
        d = width - 1
        sum_noise = (noisy[..., :d] - stats[..., :d]).reshape(R, k * d)
        shared = np.zeros((R, k))
        m = min(k, k * d)
        shared[:, :m] = sum_noise[:, :m]
        out = noisy.copy()
        out[..., d] = stats[..., d] + shared
        return out
