"""Mixed numeric and categorical data for k-prototypes (Huang 1998; Shang et al. 2021,
section 7).

The k-prototypes distance of Shang et al. (2021), eq. 6, is

    d(x, u) = sum_l (x^r_l - u^r_l)^2 + gamma sum_l [x^c_l != u^c_l].

One-hot code each categorical attribute and scale its columns by s = sqrt(gamma / 2): two
one-hot vectors differ in squared Euclidean distance by 2 s^2 = gamma when their categories
differ and by 0 otherwise. So on the *augmented* records z = (s onehot(x^c), x^r), with
prototypes whose categorical blocks are scaled one-hot modes, eq. 6 is the squared Euclidean
distance, and k-prototypes is the DP-Lloyd loop (:mod:`dpkmeans.engine.loop`) on z:

* the assignment is Lloyd's, on every backend, with the same bits;
* a cluster's category counts are its sums of the one-hot columns divided by s, so the
  engine's exact statistics already hold the scores of the paper's exponential mechanism;
* the numeric part of a prototype is the noisy mean; each categorical part is a mode chosen
  by the exponential mechanism (:class:`CategoricalModes`, the engine's ``categorical`` hook).

The one-hot blocks come first and the numeric columns last, so the numeric sums and the count
stay one contiguous slice of the engine's (S_j, n_j) vector. Book: chapter 11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.engine.init import Initializer, sphere_packing
from dpkmeans.privacy.mechanisms import Entry
from dpkmeans.compute.lloyd import as_centroids, as_data_matrix, batched_stats
from dpkmeans.validation import check_positive_int, check_real

__all__ = ["MixedLayout", "encode", "decode", "CategoricalModes", "MixedInitializer",
           "mode_scores", "kprototypes_reference"]


@dataclass(frozen=True)
class MixedLayout:
    """Where the attributes sit in an augmented record: one block of one-hot columns per
    categorical attribute (``n_levels[l]`` columns each, scaled by ``scale``), then the
    ``n_numeric`` numeric columns. Public: it follows from the public category lists and
    gamma."""

    n_levels: tuple[int, ...]
    n_numeric: int
    gamma: float

    def __post_init__(self) -> None:
        levels = tuple(check_positive_int(n, "number of categories") for n in self.n_levels)
        object.__setattr__(self, "n_levels", levels)
        check_positive_int(self.n_numeric, "n_numeric")
        g = check_real(self.gamma, "gamma")
        if not (math.isfinite(g) and g > 0):
            raise ValueError(f"gamma must be finite and > 0, got {g}")
        object.__setattr__(self, "gamma", g)

    @property
    def scale(self) -> float:
        """s = sqrt(gamma / 2): two scaled one-hot vectors of different categories are gamma
        apart in squared Euclidean distance."""
        return math.sqrt(self.gamma / 2.0)

    @property
    def n_categorical(self) -> int:
        return len(self.n_levels)

    @property
    def n_onehot(self) -> int:
        """Columns taken by the one-hot blocks (the numeric columns start here)."""
        return int(sum(self.n_levels))

    @property
    def width(self) -> int:
        return self.n_onehot + self.n_numeric

    @property
    def blocks(self) -> tuple[slice, ...]:
        """The columns of each categorical attribute."""
        edges = np.concatenate([[0], np.cumsum(self.n_levels)]).astype(int)
        return tuple(slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]))

    def bounds(self, numeric_bounds: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
        """The augmented box: [0, s] for every one-hot column, the numeric bounds after."""
        lower = np.asarray(numeric_bounds[0], dtype=float).reshape(-1)
        upper = np.asarray(numeric_bounds[1], dtype=float).reshape(-1)
        lower, upper = np.broadcast_arrays(lower, upper)
        if lower.size == 1 and self.n_numeric > 1:
            lower, upper = np.full(self.n_numeric, lower[0]), np.full(self.n_numeric, upper[0])
        if lower.size != self.n_numeric:
            raise ValueError(f"numeric bounds have {lower.size} features, the layout "
                             f"{self.n_numeric}")
        return (np.concatenate([np.zeros(self.n_onehot), lower]),
                np.concatenate([np.full(self.n_onehot, self.scale), upper]))


def encode(numeric: ArrayLike, codes: ArrayLike,
           layout: MixedLayout) -> np.ndarray:
    """The augmented records (N, width): scaled one-hot codes, then the numeric
    columns.

    ``codes`` (N, d_c) are integer category codes in 0 .. n_levels[l] - 1; anything
    else (a missing value coded -1, an unknown category) is an error, never silently
    mapped.
    """
    X = np.asarray(numeric, dtype=float)
    C = np.asarray(codes)
    if X.ndim != 2 or X.shape[1] != layout.n_numeric:
        raise ValueError(f"numeric must have shape (N, {layout.n_numeric}), got a "
                         f"{X.ndim}-D array" + (f" of {X.shape[1]} columns" if X.ndim == 2 else ""))
    if C.ndim != 2 or C.shape != (X.shape[0], layout.n_categorical):
        got = (f"a {C.ndim}-D array" if C.ndim != 2 else f"{C.shape[1]} columns"
               if C.shape[1] != layout.n_categorical else "another number of rows")
        raise ValueError(f"codes must have shape (N, {layout.n_categorical}), one row per "
                         f"numeric row; got {got}")
    if C.size and not np.issubdtype(C.dtype, np.integer):
        raise TypeError(f"codes must be integer category codes, got dtype {C.dtype}")
    Z = np.zeros((X.shape[0], layout.width))
    for l, (cols, n) in enumerate(zip(layout.blocks, layout.n_levels)):
        bad = (C[:, l] < 0) | (C[:, l] >= n)
        if bad.any():
            raise ValueError(f"categorical attribute {l}: codes outside 0..{n - 1}; give "
                             "every category in the public list or drop missing values first")
        Z[np.arange(X.shape[0]), cols.start + C[:, l]] = layout.scale
    Z[:, layout.n_onehot:] = X
    return Z


def decode(prototypes: ArrayLike, layout: MixedLayout) -> tuple[np.ndarray, np.ndarray]:
    """Split prototypes (..., width) into numeric centres (..., d_r) and mode codes (..., d_c)."""
    P = np.asarray(prototypes, dtype=float)
    modes = np.stack([P[..., cols].argmax(axis=-1) for cols in layout.blocks], axis=-1) \
        if layout.n_categorical else np.zeros(P.shape[:-1] + (0,), dtype=int)
    return P[..., layout.n_onehot:], modes


def mode_scores(sums: np.ndarray, layout: MixedLayout) -> np.ndarray:
    """Exact category counts (..., n_onehot) from the sums of the scaled one-hot columns."""
    return np.rint(np.asarray(sums)[..., :layout.n_onehot] / layout.scale)


def kprototypes_reference(Z: ArrayLike, layout: MixedLayout, initial: ArrayLike,
                          iterations: int) -> np.ndarray:
    """Non-private k-prototypes (Huang 1998) on augmented records from the given prototypes
    ((k, width) or batched (R, k, width)), for a fixed number of iterations: assign by eq. 6,
    numeric means, per-attribute modes (ties: the lowest code). A cluster that empties keeps
    its prototype. The reference of the book's F-measures; ``kmodes.KPrototypes`` computes the
    same cost (tests), one start at a time."""
    if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer) or iterations < 0:
        raise ValueError(f"iterations must be an integer >= 0, got {iterations!r}")
    Z = as_data_matrix(Z)
    C, single = as_centroids(initial, Z.shape[1])
    C = C.copy()
    c = layout.n_onehot
    for _ in range(int(iterations)):
        sums, counts = batched_stats(Z, C)
        nonempty = counts > 0
        update = sums / np.maximum(counts, 1.0)[..., None]
        scores = mode_scores(sums, layout)
        update[..., :c] = 0.0
        for cols in layout.blocks:
            pick = scores[..., cols].argmax(axis=-1)
            np.put_along_axis(update[..., cols], pick[..., None], layout.scale, axis=-1)
        C[nonempty] = update[nonempty]
    return C[0] if single else C


@dataclass(frozen=True)
class MixedInitializer:
    """Data-independent initial prototypes: numeric centres from ``numeric`` (sphere packing
    by default) on the numeric box, one uniformly random category per attribute (public)."""

    layout: MixedLayout
    numeric: Initializer = sphere_packing

    def __call__(self, bounds: tuple[np.ndarray, np.ndarray], n_clusters: int,
                 rng: np.random.Generator) -> np.ndarray:
        c = self.layout.n_onehot
        centres = np.zeros((n_clusters, self.layout.width))
        centres[:, c:] = self.numeric((bounds[0][c:], bounds[1][c:]), n_clusters, rng)
        for cols, n in zip(self.layout.blocks, self.layout.n_levels):
            centres[np.arange(n_clusters), cols.start + rng.integers(0, n, n_clusters)] = \
                self.layout.scale
        return centres


@dataclass(frozen=True)
class CategoricalModes:
    """The categorical part of a k-prototypes iteration (Shang et al. 2021, Alg. 5): for
    every cluster
    and categorical attribute, a mode chosen by the exponential mechanism with score
    sf(v) = the cluster's count of category v (Delta sf = 1).

    ``schedule`` holds the categorical budget of each iteration. ``per_attribute`` says how an
    iteration's budget eps_c_t is shared: ``"split"`` gives each of the d_c attributes
    eps_c_t / d_c (sequential composition over attributes: corrected); ``"full"`` gives every
    attribute the whole eps_c_t (Shang et al. 2021 as published; the ledger charges the true
    d_c eps_c_t).

    Under replace adjacency a record can leave cluster a and join cluster b, changing the scores
    of two clusters' selections by one each. A selection of attribute l over all clusters
    therefore costs twice its per-cluster epsilon: corrected, each cluster's draw uses half the
    attribute's budget; as published (flaw ``replace-sensitivity-d``) the full one, and the
    ledger charges twice it. The draws are exact (integer arithmetic,
    :func:`dpkmeans.privacy.discrete.exponential_choice`): no category is ever impossible, however
    large the count gap (book chapter 6).
    """

    layout: MixedLayout
    schedule: np.ndarray
    per_attribute: str = "split"

    def __post_init__(self) -> None:
        sched = np.atleast_1d(np.asarray(self.schedule, dtype=float))
        if sched.ndim != 1 or sched.size == 0 or not np.all(np.isfinite(sched)) \
                or np.any(sched <= 0):
            raise ValueError("the categorical schedule must be a non-empty 1-D array of "
                             "budgets > 0")
        object.__setattr__(self, "schedule", sched)
        if self.per_attribute not in ("split", "full"):
            raise ValueError(f"per_attribute must be 'split' or 'full', got {self.per_attribute!r}")
        if self.layout.n_categorical == 0:
            raise ValueError("CategoricalModes needs at least one categorical attribute")

    def attribute_budget(self, eps_t: float) -> float:
        """The budget of one attribute's selection over all clusters in an iteration."""
        return eps_t if self.per_attribute == "full" else eps_t / self.layout.n_categorical

    def entries(self, eps_t: float, replicas: int, *, clusters_touched: int,
                understated: bool = False) -> tuple[list[Entry], float]:
        """One iteration's ledger entries (one per attribute) and the epsilon of each
        cluster's draw.

        One record changes the counts of ``clusters_touched`` clusters (2 under replace, 1
        under add/remove): each cluster's draw gets the attribute's budget divided by it, or,
        ``understated`` (the paper as published, Delta sf = 1 with parallel clusters), the whole
        budget, and the entry then charges the true cost."""
        per_attr = self.attribute_budget(eps_t)
        draw = per_attr if understated else per_attr / clusters_touched
        entries = [Entry("exponential", clusters_touched * draw, 1.0, 2.0 / draw,
                         label=f"mode of categorical attribute {l}, every cluster in parallel "
                               f"(one record changes {clusters_touched} clusters' counts)",
                         details={"replicas": replicas, "epsilon per cluster draw": draw,
                                  "sampler": "exact (integer arithmetic)"})
                   for l in range(self.layout.n_categorical)]
        return entries, draw

    def charge(self, ledger: PrivacyLedger, eps_t: float, replicas: int, *,
               clusters_touched: int, understated: bool = False) -> float:
        """Record one iteration's selections without drawing them (a plan of the spend) and
        return the epsilon of each cluster's draw (:meth:`entries`)."""
        entries, draw = self.entries(eps_t, replicas, clusters_touched=clusters_touched,
                                     understated=understated)
        mechanisms.charge_all(ledger, entries)
        return draw

    def release(self, ledger: PrivacyLedger, counts: np.ndarray, eps_t: float,
                rngs: list[np.random.Generator], *, clusters_touched: int,
                understated: bool = False) -> np.ndarray:
        """One iteration's modes: charge the selections (:meth:`entries`), then draw the
        scaled one-hot modes (R, k, n_onehot) from the exact category counts (R, k, n_onehot),
        P[v] proportional to exp(epsilon * count_v / 2) with epsilon each cluster's draw, exactly
        from the integer gaps max_v count_v - count_v (replica r from ``rngs[r]`` only), in one
        call (:func:`dpkmeans.privacy.mechanisms.release_choices`; a refused one draws nothing)."""
        entries, draw = self.entries(eps_t, len(rngs), clusters_touched=clusters_touched,
                                     understated=understated)
        k = counts.shape[1]
        out = np.zeros(np.shape(counts))
        widths = np.repeat(np.asarray(self.layout.n_levels, dtype=np.int64), k)
        gaps = []
        for r in range(len(rngs)):
            block_counts = [np.rint(counts[r][:, cols]).astype(np.int64)
                            for cols in self.layout.blocks]  # (k, n_l) per attribute
            gaps.append(np.concatenate([(c.max(axis=1, keepdims=True) - c).reshape(-1)
                                        for c in block_counts]))
        picks = mechanisms.release_choices(ledger, entries, gaps, rngs,
                                           coefficient=Fraction(float(draw)) / 2,
                                           widths=widths)  # attribute-major
        clusters = np.arange(k)
        for r in range(len(rngs)):
            for l, cols in enumerate(self.layout.blocks):
                out[r, clusters, cols.start + picks[r, l * k:(l + 1) * k]] = self.layout.scale
        return out
