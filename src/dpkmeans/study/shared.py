"""Tools every paper's study shares (``dpkmeans.papers.<paper>.study``): stable point seeds,
summaries with confidence intervals, and the map from a paper-mode scaling back to the public
one. A study never copies these; it imports them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from dpkmeans.data import Dataset
from dpkmeans.data.scaling import scale_to_interval

if TYPE_CHECKING:
    from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.strategies import PublicStart

__all__ = ["Point", "stable_seed", "summarise", "to_public_space", "shared_initial_centroids",
           "unit_box"]


@dataclass(frozen=True)
class Point:
    """One point of a study: an algorithm on a case at epsilon."""

    case: str
    algorithm: str
    epsilon: float


def unit_box(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public box [0, 1]^d that the studies scale their data to."""
    return np.zeros(d), np.ones(d)


def stable_seed(base_seed: int, key: Mapping[str, Any]) -> int:
    """A 63-bit seed from a study's base seed and a point's description (sorted JSON), so a
    point's numbers depend on the point alone, never on the cell that computed it."""
    text = json.dumps(dict(key), sort_keys=True)
    digest = hashlib.sha256(f"{base_seed}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def summarise(values: np.ndarray, groups: int, prefix: str) -> dict[str, float]:
    """Mean, sd and a 95% interval of per-replica values that form ``groups`` equal blocks of
    correlated runs (e.g. runs sharing a start); ``groups = 1`` means independent replicas.

    The interval is the t interval over the block means (``groups - 1`` degrees of freedom), or
    over the replicas themselves when they are independent.
    """
    values = np.asarray(values, dtype=float)
    means = values.reshape(groups, -1).mean(axis=1) if groups > 1 else values
    m = means.size
    se = float(means.std(ddof=1) / np.sqrt(m)) if m > 1 else float("nan")
    half = float(stats.t.ppf(0.975, m - 1)) * se if m > 1 else float("nan")
    mean = float(values.mean())
    return {f"{prefix}_mean": mean, f"{prefix}_sd": float(values.std(ddof=1)) if values.size > 1
            else float("nan"), f"{prefix}_se": se, f"{prefix}_ci_low": mean - half,
            f"{prefix}_ci_high": mean + half}


def to_public_space(centroids: np.ndarray, source: Dataset, public: Dataset) -> np.ndarray:
    """Centroids found on ``source`` (e.g. the paper's min-max scaling) expressed in the scaling
    of ``public`` (public bounds to the same interval), so that their NICV compares."""
    shape = centroids.shape
    original = source.unscale(centroids.reshape(-1, shape[-1]))
    scaling = public.metadata["scaling"]
    mapped, _ = scale_to_interval(original, np.array(scaling["source_bounds"]), scaling["interval"])
    return np.asarray(mapped).reshape(shape)


def shared_initial_centroids(config: DPLloydConfig, inits: int, runs: int,
                             seed: np.random.SeedSequence) -> np.ndarray:
    """``inits`` draws of the configuration's initializer (data-independent), each repeated for
    ``runs`` consecutive replicas: shape (inits * runs, clusters, d)."""
    if not isinstance(config.start, PublicStart):
        raise ValueError(f"{config.name} starts from the data ({config.start.name}): shared "
                         "initial centroids need a data-independent initializer")
    initializer = config.start.initializer
    rngs = [np.random.default_rng(s) for s in seed.spawn(inits)]
    starts = np.stack([initializer(config.bounds, config.n_clusters, g) for g in rngs])
    return np.repeat(starts, runs, axis=0)
