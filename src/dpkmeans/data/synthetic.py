"""Gaussian mixtures with known true centres, for tests, demos and scale benchmarks.

Rows are generated in fixed blocks of ``BLOCK_ROWS``; block ``b`` draws from the ``b``-th child
spawned from the caller's ``numpy.random.Generator``. Hence the same seed
gives the same rows whatever the chunk size, and tens of millions of rows can be streamed with
:meth:`GaussianMixture.iter_chunks` without ever being held in memory at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dpkmeans.data.dataset import Dataset, Provenance
from dpkmeans.validation import check_generator, check_positive_int

__all__ = ["BLOCK_ROWS", "GaussianMixture", "gaussian_mixture_dataset", "make_mixture"]

BLOCK_ROWS = 1 << 16


@dataclass(frozen=True, eq=False)
class GaussianMixture:
    """Isotropic Gaussian mixture: ``centers`` (k x d), common ``std``, mixing ``weights``."""

    centers: np.ndarray
    std: float
    weights: np.ndarray

    def __post_init__(self) -> None:
        centers = np.array(self.centers, dtype=float)
        if centers.ndim != 2 or centers.shape[0] < 1 or centers.shape[1] < 1:
            raise ValueError(f"centers must be a non-empty (k, d) array, got shape {centers.shape}")
        if not np.all(np.isfinite(centers)):
            raise ValueError("centers must be finite")
        if not (math.isfinite(self.std) and self.std > 0):
            raise ValueError(f"std must be finite and > 0, got {self.std}")
        weights = np.array(self.weights, dtype=float)
        if weights.shape != (centers.shape[0],) or np.any(weights < 0) or not weights.sum() > 0:
            raise ValueError("weights must be k non-negative numbers with a positive sum")
        centers.setflags(write=False)
        weights = weights / weights.sum()
        weights.setflags(write=False)
        object.__setattr__(self, "centers", centers)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "std", float(self.std))

    @property
    def k(self) -> int:
        """Number of components."""
        return int(self.centers.shape[0])

    @property
    def d(self) -> int:
        """Dimension."""
        return int(self.centers.shape[1])

    def public_bounds(self, tail: float = 4.0) -> np.ndarray:
        """Bounds from the generator's parameters, not from a sample: centres +/- ``tail`` std."""
        if not (math.isfinite(tail) and tail > 0):
            raise ValueError(f"tail must be finite and > 0, got {tail}")
        lo = self.centers.min(axis=0) - tail * self.std
        hi = self.centers.max(axis=0) + tail * self.std
        return np.column_stack([lo, hi])

    def _block(self, rng: np.random.Generator, rows: int) -> tuple[np.ndarray, np.ndarray]:
        labels = rng.choice(self.k, size=rows, p=self.weights)
        X = self.centers[labels] + self.std * rng.standard_normal((rows, self.d))
        return X, labels

    def iter_chunks(
        self, n: int, rng: np.random.Generator, chunk_size: int = 1_000_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(X, labels)`` chunks of at most ``chunk_size`` rows, ``n`` rows in all."""
        n = check_positive_int(n, "n")
        chunk_size = check_positive_int(chunk_size, "chunk_size")
        check_generator(rng)
        pending_X: list[np.ndarray] = []
        pending_y: list[np.ndarray] = []
        buffered = 0
        produced = 0
        while produced < n:
            while buffered < min(chunk_size, n - produced):
                rows = min(BLOCK_ROWS, n - produced - buffered)
                X, y = self._block(rng.spawn(1)[0], rows)
                pending_X.append(X)
                pending_y.append(y)
                buffered += rows
            X_all = np.concatenate(pending_X)
            y_all = np.concatenate(pending_y)
            take = min(chunk_size, n - produced)
            yield X_all[:take], y_all[:take]
            pending_X, pending_y = [X_all[take:].copy()], [y_all[take:].copy()]
            buffered = len(y_all) - take
            produced += take

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` rows and their true component labels (identical to concatenated chunks)."""
        chunks = list(self.iter_chunks(n, rng, chunk_size=n))
        return chunks[0]


def make_mixture(
    k: int,
    d: int,
    *,
    rng: np.random.Generator,
    separation: float = 4.0,
    std: float = 1.0,
    weights: Sequence[float] | None = None,
) -> GaussianMixture:
    """A mixture whose centres are at least ``separation * std`` apart.

    Centres are ``k`` distinct points drawn at random from a centred lattice with spacing
    ``separation * std``, so the minimum pairwise distance is exactly controlled.
    """
    k = check_positive_int(k, "k")
    d = check_positive_int(d, "d")
    check_generator(rng)
    if not (math.isfinite(separation) and separation > 0):
        raise ValueError(f"separation must be finite and > 0, got {separation}")
    per_axis = math.ceil(k ** (1.0 / d) - 1e-9) + 1
    total = per_axis**d if d * math.log(per_axis) < math.log(1e7) else None
    if total is not None:
        flat = rng.choice(total, size=k, replace=False)
        points = np.column_stack(np.unravel_index(flat, (per_axis,) * d)).astype(float)
    else:
        found: dict[bytes, np.ndarray] = {}
        while len(found) < k:
            p = rng.integers(0, per_axis, size=d)
            found.setdefault(p.tobytes(), p)
        points = np.array(list(found.values()), dtype=float)
    centers = (points - (per_axis - 1) / 2.0) * (separation * std)
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=float)
    return GaussianMixture(centers=centers, std=std, weights=w)


def gaussian_mixture_dataset(
    n: int,
    k: int,
    d: int,
    *,
    rng: np.random.Generator,
    separation: float = 4.0,
    std: float = 1.0,
    weights: Sequence[float] | None = None,
    tail: float = 4.0,
) -> Dataset:
    """A :class:`~dpkmeans.data.dataset.Dataset` drawn from :func:`make_mixture`.

    ``target`` holds the true component of each row and ``metadata["true_centers"]`` the
    centres; the bounds are public (from the parameters), so scaling clips only tail points.
    """
    mixture = make_mixture(k, d, rng=rng, separation=separation, std=std, weights=weights)
    X, labels = mixture.sample(n, rng)
    return Dataset(
        name="gaussian_mixture",
        X=X,
        feature_names=tuple(f"x{j}" for j in range(d)),
        bounds=mixture.public_bounds(tail),
        bounds_why=tuple(f"true centres +/- {tail:g} std (generator parameters)" for _ in range(d)),
        provenance=Provenance(source="synthetic Gaussian mixture", rows_in_file=n),
        target=labels,
        target_name="component",
        target_levels=tuple(str(j) for j in range(k)),
        metadata={
            "bounds_mode": "public",
            "scaling": None,
            "public_rows": n,
            "true_centers": mixture.centers,
            "std": mixture.std,
            "separation": separation,
            "weights": mixture.weights,
        },
    )
