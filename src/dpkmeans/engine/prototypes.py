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
  by the exponential mechanism (:class:`CategoricalModes`, the configuration's mode release).

The one-hot blocks come first and the numeric columns last, so the numeric sums and the count
stay one contiguous slice of the engine's (S_j, n_j) vector. Book: chapter 11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.compute.lloyd import as_centroids, as_data_matrix, batched_stats
from dpkmeans.engine.init import Initializer, sphere_packing
from dpkmeans.engine.strategies import Strategy
from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.mechanisms import Entry
from dpkmeans.validation import check_positive_int, check_real

__all__ = ["MixedLayout", "encode", "decode", "CategoricalModes", "MixedInitializer",
           "mode_scores", "kprototypes_reference"]


@dataclass(frozen=True)
class MixedLayout:
    """Where the attributes sit in an augmented record: one block of one-hot columns per
    categorical attribute (``n_levels[l]`` columns each, scaled by ``scale``), then the
    ``n_numeric`` numeric columns. Public: it follows from the public category lists and
    gamma.

    Parameters
    ----------
    n_levels : tuple of int
        The number of categories of each categorical attribute (each > 0).
    n_numeric : int
        The number of numeric attributes (> 0).
    gamma : float
        The weight of a categorical mismatch in eq. 6 (finite, > 0).

    Raises
    ------
    ValueError
        If gamma is not finite and > 0 (or a count is not a positive integer).

    Examples
    --------
    >>> from dpkmeans.engine.prototypes import MixedLayout
    >>> layout = MixedLayout((2, 3), 1, 2.0)
    >>> layout.scale, layout.n_onehot, layout.width, layout.blocks
    (1.0, 5, 6, (slice(0, 2, None), slice(2, 5, None)))
    """

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
        """The number of categorical attributes."""
        return len(self.n_levels)

    @property
    def n_onehot(self) -> int:
        """Columns taken by the one-hot blocks (the numeric columns start here)."""
        return int(sum(self.n_levels))

    @property
    def width(self) -> int:
        """The number of columns of an augmented record."""
        return self.n_onehot + self.n_numeric

    @property
    def blocks(self) -> tuple[slice, ...]:
        """The columns of each categorical attribute."""
        edges = np.concatenate([[0], np.cumsum(self.n_levels)]).astype(int)
        return tuple(slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]))

    def bounds(self, numeric_bounds: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
        """The augmented box: [0, s] for every one-hot column, the numeric bounds after.

        Parameters
        ----------
        numeric_bounds : tuple of array_like
            The public box of the numeric attributes, ``(lower, upper)`` (a scalar pair
            stands for every numeric column).

        Returns
        -------
        tuple of numpy.ndarray
            ``(lower, upper)``, each of shape (width,).

        Raises
        ------
        ValueError
            If the bounds have another number of features than ``n_numeric``.
        """
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

    Parameters
    ----------
    numeric : array_like
        The numeric attributes, (N, n_numeric).
    codes : array_like of int
        The category codes, (N, n_categorical).
    layout : MixedLayout
        The layout.

    Returns
    -------
    numpy.ndarray
        The augmented records, (N, width).

    Raises
    ------
    ValueError
        If a shape does not fit the layout, or a code is outside its attribute's range.
    TypeError
        If the codes are not integers.

    Examples
    --------
    >>> from dpkmeans.engine.prototypes import MixedLayout, encode
    >>> encode([[0.5], [0.2]], [[0, 2], [1, 0]], MixedLayout((2, 3), 1, 2.0))
    array([[1. , 0. , 0. , 0. , 1. , 0.5],
           [0. , 1. , 1. , 0. , 0. , 0.2]])
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
    """Split prototypes (..., width) into numeric centres (..., d_r) and mode codes (..., d_c).

    Parameters
    ----------
    prototypes : array_like
        Augmented prototypes, (..., width).
    layout : MixedLayout
        The layout.

    Returns
    -------
    tuple of numpy.ndarray
        The numeric centres and the mode codes (the largest column of each block).

    Examples
    --------
    >>> from dpkmeans.engine.prototypes import MixedLayout, decode
    >>> centres, modes = decode([[1.0, 0.0, 0.0, 0.0, 1.0, 0.5]], MixedLayout((2, 3), 1, 2.0))
    >>> centres, modes
    (array([[0.5]]), array([[0, 2]]))
    """
    P = np.asarray(prototypes, dtype=float)
    modes = np.stack([P[..., cols].argmax(axis=-1) for cols in layout.blocks], axis=-1) \
        if layout.n_categorical else np.zeros(P.shape[:-1] + (0,), dtype=int)
    return P[..., layout.n_onehot:], modes


def mode_scores(sums: np.ndarray, layout: MixedLayout) -> np.ndarray:
    """Exact category counts (..., n_onehot) from the sums of the scaled one-hot columns.

    Parameters
    ----------
    sums : numpy.ndarray
        A cluster's sums of augmented records, (..., width) (or at least n_onehot columns).
    layout : MixedLayout
        The layout.

    Returns
    -------
    numpy.ndarray
        The counts of each category, rounded to integers, (..., n_onehot).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.prototypes import MixedLayout, encode, mode_scores
    >>> layout = MixedLayout((2, 3), 1, 8.0)
    >>> Z = encode([[0.5], [0.2], [0.1]], [[0, 2], [1, 2], [0, 0]], layout)
    >>> mode_scores(Z.sum(axis=0), layout)
    array([2., 1., 1., 0., 2.])
    """
    return np.rint(np.asarray(sums)[..., :layout.n_onehot] / layout.scale)


def kprototypes_reference(Z: ArrayLike, layout: MixedLayout, initial: ArrayLike,
                          iterations: int) -> np.ndarray:
    """Non-private k-prototypes (Huang 1998) on augmented records from the given prototypes
    ((k, width) or batched (R, k, width)), for a fixed number of iterations: assign by eq. 6,
    numeric means, per-attribute modes (ties: the lowest code). A cluster that empties keeps
    its prototype. The reference of the book's F-measures; ``kmodes.KPrototypes`` computes the
    same cost (tests), one start at a time.

    Parameters
    ----------
    Z : array_like
        The augmented records, (N, width).
    layout : MixedLayout
        The layout.
    initial : array_like
        The initial prototypes, (k, width) or (R, k, width).
    iterations : int
        The number of iterations (>= 0).

    Returns
    -------
    numpy.ndarray
        The prototypes after the iterations, of the shape of ``initial``.

    Raises
    ------
    ValueError
        If ``iterations`` is not an integer >= 0.

    Examples
    --------
    >>> from dpkmeans.engine.prototypes import MixedLayout, encode, kprototypes_reference
    >>> layout = MixedLayout((2,), 1, 2.0)
    >>> Z = encode([[0.0], [0.2], [1.0]], [[0], [0], [1]], layout)
    >>> kprototypes_reference(Z, layout, Z[[0, 2]], 2)
    array([[1. , 0. , 0.1],
           [0. , 1. , 1. ]])
    """
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
    by default) on the numeric box, one uniformly random category per attribute (public).

    Parameters
    ----------
    layout : MixedLayout
        The layout.
    numeric : Initializer, default sphere_packing
        The initializer of the numeric centres.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.init import uniform_box
    >>> from dpkmeans.engine.prototypes import MixedInitializer, MixedLayout
    >>> layout = MixedLayout((2,), 1, 2.0)
    >>> init = MixedInitializer(layout, uniform_box)
    >>> init(layout.bounds(([0.0], [1.0])), 2, np.random.default_rng(0)).shape
    (2, 3)
    """

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


@dataclass(frozen=True, eq=False)
class CategoricalModes(Strategy):
    """The categorical part of a k-prototypes iteration (Shang et al. 2021, Alg. 5): for
    every cluster
    and categorical attribute, a mode chosen by the exponential mechanism with score
    sf(v) = the cluster's count of category v (Delta sf = 1).

    ``schedule`` holds the categorical budget of each iteration; an iteration's budget
    eps_c_t is split over the d_c attributes, eps_c_t / d_c each (sequential composition over
    attributes).

    Under replace adjacency a record can leave cluster a and join cluster b, changing the scores
    of two clusters' selections by one each. A selection of attribute l over all clusters
    therefore costs twice its per-cluster epsilon, so each cluster's draw uses half the
    attribute's budget. A paper's as-published modes (a subclass its flaws module supplies)
    may share the budget otherwise (:meth:`attribute_budget`, :meth:`draw_budget`); the ledger
    then charges the true cost. The draws are exact (integer arithmetic,
    :func:`dpkmeans.privacy.discrete.exponential_choice`): no category is ever impossible,
    however large the count gap (book chapter 6).

    Parameters
    ----------
    layout : MixedLayout
        The layout (at least one categorical attribute).
    schedule : numpy.ndarray
        The categorical budget of each iteration (each > 0).
    name : str, default "categorical modes"
        The strategy's name.

    Raises
    ------
    ValueError
        If the schedule is empty or has a budget that is not finite and > 0, or the layout
        has no categorical attribute.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.prototypes import CategoricalModes, MixedLayout
    >>> modes = CategoricalModes(MixedLayout((2, 3), 1, 2.0), np.array([1.0, 0.5]))
    >>> modes.attribute_budget(1.0), modes.draw_budget(0.5, 2)
    (0.5, 0.25)
    """

    layout: MixedLayout
    schedule: np.ndarray
    name: str = "categorical modes"

    def __post_init__(self) -> None:
        sched = np.atleast_1d(np.asarray(self.schedule, dtype=float))
        if sched.ndim != 1 or sched.size == 0 or not np.all(np.isfinite(sched)) \
                or np.any(sched <= 0):
            raise ValueError("the categorical schedule must be a non-empty 1-D array of "
                             "budgets > 0")
        object.__setattr__(self, "schedule", sched)
        if self.layout.n_categorical == 0:
            raise ValueError("CategoricalModes needs at least one categorical attribute")

    def attribute_budget(self, eps_t: float) -> float:
        """The budget of one attribute's selection over all clusters in an iteration.

        Parameters
        ----------
        eps_t : float
            The iteration's categorical budget.

        Returns
        -------
        float
            eps_t / d_c.
        """
        return eps_t / self.layout.n_categorical

    def draw_budget(self, attribute: float, clusters_touched: int) -> float:
        """The epsilon of each cluster's draw: the attribute's budget over the clusters one
        record can change.

        Parameters
        ----------
        attribute : float
            The attribute's budget (:meth:`attribute_budget`).
        clusters_touched : int
            The clusters whose counts one record can change.

        Returns
        -------
        float
            The epsilon of each cluster's draw.
        """
        return attribute / clusters_touched

    def entries(self, eps_t: float, replicas: int, *,
                clusters_touched: int) -> tuple[list[Entry], float]:
        """One iteration's ledger entries (one per attribute) and the epsilon of each
        cluster's draw.

        One record changes the counts of ``clusters_touched`` clusters (2 under replace, 1
        under add/remove): each entry charges the true cost, ``clusters_touched`` times the
        epsilon of a cluster's draw (:meth:`draw_budget`).

        Parameters
        ----------
        eps_t : float
            The iteration's categorical budget.
        replicas : int
            The number of replicas (recorded in the entries' details).
        clusters_touched : int
            The clusters whose counts one record can change.

        Returns
        -------
        tuple of (list of Entry, float)
            The entries and the epsilon of each cluster's draw.
        """
        draw = self.draw_budget(self.attribute_budget(eps_t), clusters_touched)
        entries = [Entry("exponential", clusters_touched * draw, 1.0, 2.0 / draw,
                         label=f"mode of categorical attribute {l}, every cluster in parallel "
                               f"(one record changes {clusters_touched} clusters' counts)",
                         details={"replicas": replicas, "epsilon per cluster draw": draw,
                                  "sampler": "exact (integer arithmetic)"})
                   for l in range(self.layout.n_categorical)]
        return entries, draw

    def charge(self, ledger: PrivacyLedger, eps_t: float, replicas: int, *,
               clusters_touched: int) -> float:
        """Record one iteration's selections without drawing them (a plan of the spend) and
        return the epsilon of each cluster's draw (:meth:`entries`).

        Parameters
        ----------
        ledger : PrivacyLedger
            The ledger charged.
        eps_t : float
            The iteration's categorical budget.
        replicas : int
            The number of replicas.
        clusters_touched : int
            The clusters whose counts one record can change.

        Returns
        -------
        float
            The epsilon of each cluster's draw.
        """
        entries, draw = self.entries(eps_t, replicas, clusters_touched=clusters_touched)
        mechanisms.charge_all(ledger, entries)
        return draw

    def release(self, ledger: PrivacyLedger, counts: np.ndarray, eps_t: float,
                rngs: list[np.random.Generator], *, clusters_touched: int) -> np.ndarray:
        """One iteration's modes: charge the selections (:meth:`entries`), then draw the
        scaled one-hot modes (R, k, n_onehot) from the exact category counts (R, k, n_onehot),
        P[v] proportional to exp(epsilon * count_v / 2) with epsilon each cluster's draw, exactly
        from the integer gaps max_v count_v - count_v (replica r from ``rngs[r]`` only), in one
        call (:func:`dpkmeans.privacy.mechanisms.release_choices`; a refused one draws nothing).

        Parameters
        ----------
        ledger : PrivacyLedger
            The ledger charged first.
        counts : numpy.ndarray
            The exact category counts, (R, k, n_onehot).
        eps_t : float
            The iteration's categorical budget.
        rngs : list of numpy.random.Generator
            One generator per replica.
        clusters_touched : int
            The clusters whose counts one record can change.

        Returns
        -------
        numpy.ndarray
            The scaled one-hot modes, (R, k, n_onehot).
        """
        entries, draw = self.entries(eps_t, len(rngs), clusters_touched=clusters_touched)
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
