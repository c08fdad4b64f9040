"""The published privacy flaw of FastLloyd's public code (Diaa, Humphries and Kerschbaum 2025),
as data (:class:`dpkmeans.engine.flaws.Flaw`), and the release that reproduces it
(:class:`SharedSeedRelease`). The paper's algorithm draws the count noise and the sum noise
independently; the authors' code seeds both noises of an iteration with the same value,
``seed * iteration``, so the two come out of the same standard normal draws. Book chapter 12,
"FastLloyd", shows it and audits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpkmeans.engine.flaws import Flaw
from dpkmeans.engine.relative import RelativeRelease

__all__ = ["FLAWS", "SHARED_SEED", "SharedSeedRelease"]

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

#: Every flaw of the published code, in the order the book lists them.
FLAWS = (SHARED_SEED,)


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
