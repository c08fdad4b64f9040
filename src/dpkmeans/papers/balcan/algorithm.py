"""Private k-means by random projection, private candidate centres and private local search
(Balcan et al. (2017), "Differentially private clustering in high-dimensional Euclidean
spaces", ICML; book chapter 12, "Beyond the five papers").

The algorithm is not a configuration of the DP-Lloyd loop: it finds a good set of centres in a
low-dimensional projection first, and only then computes noisy means. One replica runs

1. **Projection** (public randomness). ``p = max(1, floor(ln(N) / 2))`` with ``N`` the public
   record count (``n_records``), ``G ~ N(0, 1) / sqrt(p)`` of shape (p, d); every record is
   centred at the box's midpoint ``m``, projected, ``y = G (x - m)``, and clipped to the public
   ball of radius ``R = radius_factor * r``, ``r`` the box's half-diagonal. Default
   ``radius_factor = 1``: ``||x - m|| <= r`` for every record and ``E ||G v||^2 = ||v||^2``, so
   the ball holds the typical projected record and clips only a record that G stretches beyond
   the box's corners; a JL multiple ``(1 + delta) r`` would clip less but inflate the local
   search's sensitivity ``(2 R)^2`` and coarsen the cubes. Clipping is a per-record map, so
   privacy holds whatever R. With ``d <= 5`` (as the authors' code) or ``p >= d`` the
   projection is the identity (``p = d``).
2. **Candidates** by private recursive partitioning. A root cube ``[-a, a]^p`` (``a = R``, or
   the box's largest half-width for the identity) is split level by level into ``2^p``
   sub-cubes; every sub-cube of a surviving cube gets a noisy count (discrete Laplace,
   sensitivity 1: the sub-cubes of one level are disjoint), and survives if that count exceeds
   ``gamma = 2 ln(N) / eps_level`` (the authors' ``count + Lap(1/eps) > gamma``).
   ``levels = max(1, ceil(ln N) - 1)`` levels (the code's ``depth < ln N``), on the unshifted
   grid and on ``shifted_grids`` (2) grids shifted by public offsets uniform in
   ``[-a, a]^p``; a record outside a shifted root cube counts in its nearest boundary cube. The
   candidates are the centres of the root cubes (so the set is never empty, even when no cube
   survives) and of every surviving cube, the last level's included (the code drops them),
   each projected onto the ball (post-processing: projecting onto a convex set that holds
   every clipped record brings a candidate nearer to every record, and bounds every distance
   by ``2 R``).
3. **Local search** with the exponential mechanism: ``k`` candidates chosen uniformly (public
   randomness), then ``T = min(k, 20)`` swaps, each pair (centre i, candidate j) picked with
   utility ``-loss`` after the swap, then one of the ``T`` recorded sets picked with utility
   ``-loss``. The loss is the k-means cost in the projection; one record adds or removes at most
   ``(2 R)^2`` to every loss (a clipped record and a candidate both lie in the ball of radius
   ``R``), the sensitivity. Every (i, j) is scored in ``O(N m)`` per step from each record's
   nearest and second-nearest distances (:func:`_swap_losses`).
4. **Recovery**: each record joins its nearest chosen centre (in the projection); every
   cluster's centred sum and count, empty clusters included, get one Laplace release in the
   original space (the DP-Lloyd query, :func:`~dpkmeans.privacy.sensitivity.
   lloyd_query_sensitivity`; parallel over the disjoint clusters). A centroid is the noisy
   centred sum over the noisy count plus ``m`` when that count is at least 1, else the lifted
   candidate ``m + G^+ u`` (post-processing; ``m + u`` for the identity), clipped to the box.
5. **Refinement**: ``lloyd_iterations`` (3, as the authors' code) iterations of the library's
   DP-Lloyd loop from the recovered centroids, on the same data and ledger
   (:func:`~dpkmeans.engine.loop.run_prepared`).

Accounting (add/remove adjacency, pure epsilon). The budget is split by the public ``shares``
8 : 1 : 2 : 6 (candidates, local search, recovery, Lloyd): the authors' proportions (2/3, 1/12,
1/6, 3 x 1/6 of epsilon) rescaled to sum to epsilon. Candidates: ``3 levels`` releases in
sequence, each of ``eps_c / (3 levels)`` (the cubes of one level are disjoint: parallel);
all levels of every grid are charged even when a tree dies early (an empty release), so the
spend never depends on the data. Local search: ``T + 1`` exponential-mechanism picks of
``eps_ls / (T + 1)`` each. Recovery: one release at ``eps_rec`` (parallel over clusters).
Lloyd: the loop's own accounting, ``eps_L / lloyd_iterations`` per iteration. Everything else
(projection, shifts, the initial set, the thresholds, the centroid updates) is public
randomness or post-processing of released values. The ledger total equals epsilon.

How this differs from the authors' MATLAB code (their flaws, fixed here):

* the code enlarges its L2 ``range`` from the data (the largest distance to the data's mean),
  so the local search's sensitivity and the recovery's noise depend on the data; here the
  radius is public and the records are clipped to it;
* the global ``side_length`` is halved at every level and never restored, so the shifted
  partitions (and their offsets) start from a cube already shrunk by the first; here every
  grid starts from the same public root cube;
* each of the three partitions is given ``eps / T`` with ``T = 2`` (3/2 of the candidates'
  share), and the nominal shares 2/3 + 1/12 + 1/6 + 3 x 1/6 add up to 17/12 epsilon; here the
  shares add up to epsilon, each partition level gets ``eps_c / (3 levels)``;
* only non-empty cubes get a noisy count: an empty cube never survives while a cube with one
  record may, which no epsilon covers; here every sub-cube of a surviving cube is noised;
* the local search's exponential mechanism weighs ``exp(-eps gain / (Lambda^2 (T + 1)))``,
  without the factor 2, with ``Lambda = 2 range`` from the data-enlarged range, while shifted
  candidates may lie outside that ball (distances above ``Lambda``); here candidates are
  projected onto the public ball and the mechanism is the exact one;
* recovery divides the noisy sum by the exact cluster size (unreleased), scales its
  per-coordinate noise with the L2 range (an L1 sensitivity is needed), and gives an empty
  cluster a uniform point instead of noised statistics (emptiness shows); here sums and counts
  are released together for every cluster;
* ``p`` reads the private record count ``n``; here ``N`` is public (given, or a noisy count the
  estimator pays for);
* float64 samplers; here exact discrete samplers (:mod:`dpkmeans.privacy.noise`) and an exact
  exponential mechanism, all randomness from the replica's seed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkmeans.compute.backends.memory import MemoryBackend
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.loop import run_prepared
from dpkmeans.engine.standalone import Replica, StandaloneConfig, StandaloneFit
from dpkmeans.privacy.noise import NoiseCalibration, calibrate
from dpkmeans.privacy.sensitivity import box_midpoint, coordinate_bounds, lloyd_query_sensitivity
from dpkmeans.validation import check_positive_int, check_real

if TYPE_CHECKING:
    from dpkmeans.papers.registry import FitInputs

__all__ = ["BalcanClustering", "DEFAULT_SHARES", "catalogue_config"]

#: The budget's shares (candidates, local search, recovery, Lloyd refinement): the authors'
#: 2/3, 1/12, 1/6 and 3 x 1/6 of epsilon (17/12 epsilon in all), rescaled to sum to epsilon.
DEFAULT_SHARES = (8.0, 1.0, 2.0, 6.0)

#: The projection, the box's midpoint and the radius R of the ball (G is None for the identity).
Geometry = tuple[np.ndarray | None, np.ndarray, float]

#: The projection is the identity for d up to this (the authors' code: ``if(d<=5)``).
IDENTITY_DIMENSIONS = 5

#: The most multiply-adds (rows x columns x inner) of one matrix product: below OpenBLAS's
#: threshold for threading, so that a product runs on one thread (threads that wait for a busy
#: core cost far more than these small products; measured), and a (rows, candidates) block of
#: distances stays in cache.
_PRODUCT_WORK = 2**18


@dataclass(frozen=True)
class BalcanClustering(StandaloneConfig):
    """Balcan et al. (2017)'s private k-means: projection, private candidates, private local
    search, noisy means, DP-Lloyd refinement (module docstring). Every field is public.

    Parameters
    ----------
    n_clusters : int
        k.
    bounds : (lower, upper)
        The public box.
    epsilon : float
        The run's budget (pure epsilon-DP, add/remove adjacency).
    delta : float, default 0.0
        Must be 0.
    neighbour : {"add/remove"}, default "add/remove"
        The adjacency (parallel composition over cubes and clusters needs add/remove).
    name : str, default "balcan"
        The algorithm's name.
    flaws : tuple of Flaw, default ()
        None for this corrected algorithm.
    n_records : int
        The public number of records N (required): it sets the projection's dimension, the
        number of levels and the survival threshold.
    shares : 4 floats, default (8, 1, 2, 6)
        The budget's weights for the candidates, the local search, the recovery and the Lloyd
        refinement (normalised; the last is ignored without refinement).
    lloyd_iterations : int, default 3
        DP-Lloyd iterations after the recovery (0: none).
    shifted_grids : int, default 2
        Partitions on randomly shifted grids, besides the unshifted one.
    radius_factor : float, default 1.0
        The projected records are clipped to the ball of radius ``radius_factor * r``, r the
        box's half-diagonal (E||G v||^2 = ||v||^2 <= r^2).
    max_steps : int, default 20
        The local search runs ``min(k, max_steps)`` swaps (the authors' cap).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.loop import run
    >>> from dpkmeans.papers.balcan.algorithm import BalcanClustering
    >>> X = np.random.default_rng(0).random((500, 2))
    >>> config = BalcanClustering(3, (np.zeros(2), np.ones(2)), 1.0, n_records=500)
    >>> result = run(X, config, 0)
    >>> result.centroids.shape, result.ledger.is_fully_spent()
    ((1, 3, 2), True)
    """

    name: str = "balcan"
    n_records: int | None = None
    shares: tuple[float, float, float, float] = DEFAULT_SHARES
    lloyd_iterations: int = 3
    shifted_grids: int = 2
    radius_factor: float = 1.0
    max_steps: int = 20

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n_records is None:
            raise ValueError("balcan needs n_records, the public number of records (it sets "
                             "the projection's dimension, the levels and the threshold); "
                             "DPKMeans pays for a noisy count when you give none")
        object.__setattr__(self, "n_records", check_positive_int(self.n_records, "n_records"))
        if self.neighbour != "add/remove":
            raise ValueError("balcan is proven under add/remove adjacency only (parallel "
                             f"composition over cubes and clusters), got {self.neighbour!r}")
        if self.delta != 0.0:
            raise ValueError("balcan is pure epsilon-DP: delta must be 0")
        if DATA_DERIVED_BOUNDS in self.flaws:  # DPKMeans(bounds=None): no paper mode here
            raise ValueError("algorithm='balcan' needs public bounds: give bounds=(lower, "
                             "upper), a box fixed without reading the data (the ball, the cubes "
                             "and every sensitivity follow from it); it has no mode that reads "
                             "the bounds off the data")
        if self.flaws:
            raise ValueError("balcan has no as-published variant: flaws must be empty")
        object.__setattr__(self, "lloyd_iterations",
                           check_positive_int(self.lloyd_iterations, "lloyd_iterations",
                                              minimum=0))
        object.__setattr__(self, "shifted_grids",
                           check_positive_int(self.shifted_grids, "shifted_grids", minimum=0))
        object.__setattr__(self, "max_steps", check_positive_int(self.max_steps, "max_steps"))
        factor = check_real(self.radius_factor, "radius_factor")
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"radius_factor must be finite and > 0, got {factor}")
        object.__setattr__(self, "radius_factor", factor)
        shares = tuple(check_real(s, "shares") for s in self.shares)
        if len(shares) != 4 or not all(math.isfinite(s) and s >= 0 for s in shares):
            raise ValueError("shares must be 4 finite weights >= 0 (candidates, local search, "
                             f"recovery, Lloyd), got {self.shares!r}")
        if min(shares[:3]) <= 0 or (self.lloyd_iterations > 0 and shares[3] <= 0):
            raise ValueError("every step that runs needs a share > 0, got "
                             f"{self.shares!r} with lloyd_iterations={self.lloyd_iterations}")
        object.__setattr__(self, "shares", shares)

    # -- public quantities (functions of the configuration only, computed once) --------------
    @functools.cached_property
    def identity(self) -> bool:
        """Whether the projection is the identity: d <= 5 (the authors' rule) or p >= d."""
        d = self.bounds[0].size
        return d <= IDENTITY_DIMENSIONS or _projected_dimension(self.n_records) >= d

    @functools.cached_property
    def projected_dimension(self) -> int:
        """p = max(1, floor(ln(N) / 2)), or d for the identity."""
        return self.bounds[0].size if self.identity else _projected_dimension(self.n_records)

    @functools.cached_property
    def levels(self) -> int:
        """The partition's levels: depth < ln N, as the authors' loop (at least 1)."""
        return max(1, math.ceil(math.log(self.n_records)) - 1)

    @property
    def steps(self) -> int:
        """The local search's swaps, T = min(k, max_steps)."""
        return min(self.n_clusters, self.max_steps)

    @property
    def iterations(self) -> int:
        """The rounds the algorithm plans: the local search's T swaps."""
        return self.steps

    @functools.cached_property
    def budgets(self) -> tuple[float, float, float, float]:
        """Epsilon of the candidates, the local search, the recovery and the refinement
        (they add up to epsilon; the last is 0 without refinement)."""
        w = np.array(self.shares, dtype=float)
        if self.lloyd_iterations == 0:
            w[3] = 0.0
        eps = self.epsilon * w / w.sum()
        return float(eps[0]), float(eps[1]), float(eps[2]), float(eps[3])

    @functools.cached_property
    def radius(self) -> float:
        """R: the public radius of the ball the projected records are clipped to."""
        return self.radius_factor * float(np.linalg.norm(coordinate_bounds(self.bounds, True)))

    @functools.cached_property
    def half_side(self) -> float:
        """a: the root cube is [-a, a]^p around the midpoint (shifted for the other grids)."""
        if self.identity:
            return min(self.radius, float(coordinate_bounds(self.bounds, True).max()))
        return self.radius

    @functools.cached_property
    def loss_sensitivity(self) -> float:
        """(2 R)^2: the most one record adds to a clustering loss in the projection."""
        return (2.0 * self.radius) ** 2

    @functools.cached_property
    def threshold(self) -> float:
        """gamma = 2 ln(N) / eps_level: a cube survives if its noisy count exceeds it."""
        return 2.0 * math.log(self.n_records) / self.level_epsilon

    @functools.cached_property
    def level_epsilon(self) -> float:
        """The epsilon of one level of one grid: eps_c / (grids x levels)."""
        return self.budgets[0] / ((self.shifted_grids + 1) * self.levels)

    @functools.cached_property
    def _midpoint(self) -> np.ndarray:
        """The box's midpoint m (the records are centred there)."""
        return box_midpoint(self.bounds)

    @functools.cached_property
    def _refinement(self) -> DPLloydConfig:
        """The Lloyd refinement's configuration: ``lloyd_iterations`` equal budgets."""
        T, eps_lloyd = self.lloyd_iterations, self.budgets[3]
        return DPLloydConfig(self.n_clusters, self.bounds, schedule=np.full(T, eps_lloyd / T),
                             budget=eps_lloyd, name=f"{self.name}: Lloyd refinement")

    @functools.cached_property
    def _calibrations(self) -> tuple[NoiseCalibration, NoiseCalibration]:
        """The noise of a level's cube counts and of the recovery's (S_j - n_j m, n_j)."""
        d = self.bounds[0].size
        sens = lloyd_query_sensitivity(self.bounds, "add/remove", centred=True).per_cluster
        return (calibrate("laplace", 1.0, self.level_epsilon, integer_valued=True),
                calibrate("laplace", sens, self.budgets[2], coordinates=d + 1))

    # -- the run ------------------------------------------------------------------------------
    def fit_replica(self, replica: Replica) -> StandaloneFit:
        """Run the five steps once on ``replica.data`` (module docstring); every release
        through ``replica.release`` or ``replica.choose``.

        Parameters
        ----------
        replica : Replica
            The backend, the data, the ledger and the generator of one replica.

        Returns
        -------
        StandaloneFit
            The refined centroids, the local search's swaps, the last noisy counts and the
            recovered centroids (before refinement).
        """
        k, d, p = self.n_clusters, self.bounds[0].size, self.projected_dimension
        eps_ls = self.budgets[1]
        G, offsets, u = _public_draws(replica.public_rng, p, d, not self.identity,
                                      self.shifted_grids, self.half_side, k)
        mid, R = self._midpoint, self.radius
        geometry: Geometry = (G, mid, R)
        passes = _held_projection(replica, geometry)
        ledger = replica.ledger
        with ledger.sequential("candidates (private recursive partitions)"):
            candidates = self._candidates(replica, passes, offsets)
        with ledger.sequential("local search (exponential mechanism)"):
            chosen = self._local_search(replica, passes, candidates, u, eps_ls)
        with ledger.sequential("recovery (noisy means in the original space)"):
            recovered, counts = self._recover(replica, geometry, chosen)
        if self.lloyd_iterations == 0:
            return StandaloneFit(recovered, self.steps, counts, recovered)
        with ledger.sequential("Lloyd refinement (DP-Lloyd loop)"):
            result = run_prepared(replica.backend, replica.data, replica.n_rows, self._refinement,
                                  replica.seed_sequence(), initial_centroids=recovered[None],
                                  ledger=ledger)
        return StandaloneFit(result.centroids[0], self.steps, result.noisy_counts[0],
                             recovered)

    def _candidates(self, replica: Replica, passes: tuple[Any, Geometry],
                    offsets: np.ndarray) -> np.ndarray:
        """The candidate centres (m, p): every level of every grid released (parallel over
        the cubes of a level, sequential over levels and grids), empty or not. ``passes``:
        the data the counts read and its geometry (:func:`_held_projection`)."""
        data, geometry = passes
        p, L, a = self.projected_dimension, self.levels, self.half_side
        gamma = self.threshold
        cal = self._calibrations[0]
        corners = offsets - a  # each grid's root cube is [offset - a, offset + a]^p
        bits = _child_bits(p)
        parents = [np.zeros((1, p), dtype=np.int64) for _ in offsets]  # the root cells
        found = [offsets]  # the roots' centres: the set is never empty
        for level in range(1, L + 1):
            if any(parent.shape[0] for parent in parents):
                counts = replica.backend.map_reduce(data, _child_counts, *geometry,
                                                    corners, a, level, L, tuple(parents))
            else:  # every tree has died: nothing to count, but the level is still charged
                counts = tuple(np.zeros(0) for _ in parents)
            side = 2.0 * a / 2**level
            for g, (count, parent) in enumerate(zip(counts, parents, strict=True)):
                noisy = replica.release(
                    cal, count, integer_valued=True,
                    label=f"cube counts: grid {g}, level {level}",
                    details={"cubes": int(count.size), "threshold": gamma,
                             "composition": "parallel over the disjoint cubes of one level"})
                alive = np.flatnonzero(noisy > gamma)
                parents[g] = 2 * parent[alive >> p] + bits[alive & (2**p - 1)]
                found.append(corners[g] + (parents[g] + 0.5) * side)
        replica.ledger.post_process(
            f"a cube survives if its noisy count exceeds gamma = {gamma:.6g}; the candidates "
            "are the centres of the roots and of every surviving cube, projected onto the ball")
        C = np.concatenate(found)
        if self.identity:  # the records lie in the box too: nearer still, inside the ball
            h = coordinate_bounds(self.bounds, True)
            C = np.clip(C, -h, h)
        return np.unique(_to_ball(C, self.radius), axis=0)

    def _local_search(self, replica: Replica, passes: tuple[Any, Geometry], C: np.ndarray,
                      u: np.ndarray, eps_ls: float) -> np.ndarray:
        """The k chosen centres (k, p): T swaps, then one of the T sets, each pick by the
        exponential mechanism on -loss (sensitivity (2 R)^2); ``passes`` as
        :meth:`_candidates`'."""
        data, geometry = passes
        T, m, sens = self.steps, C.shape[0], self.loss_sensitivity
        eps_pick = eps_ls / (T + 1)
        ids = _initial_set(u, m)
        replica.ledger.post_process(f"the initial set: {self.n_clusters} of the {m} released "
                                    "candidates chosen uniformly (public randomness)")
        sets, losses = [], np.zeros(T)
        for step in range(T):
            F, S = replica.backend.map_reduce(data, _swap_losses, *geometry, C[ids], C,
                                              sens)
            loss = _swap_table(F, S)  # (k, m): the loss after replacing centre i by j
            pick = replica.choose(-loss.ravel(), sens, eps_pick,
                                  label=f"local search: swap {step + 1} of {T}",
                                  details={"pairs": int(loss.size)})
            i, j = divmod(pick, m)
            ids = ids.copy()
            ids[i] = j
            sets.append(ids)
            losses[step] = loss[i, j]
        best = replica.choose(-losses, sens, eps_pick, label="local search: one of the T sets",
                              details={"sets": T})
        return C[sets[best]]

    def _recover(self, replica: Replica, geometry: Geometry,
                 centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Noisy means of the clusters of the chosen centres, in the original space: one
        release of every cluster's (S_j - n_j m, n_j) at the recovery's share (parallel over
        the clusters)."""
        G, mid, _ = geometry
        sums, counts = replica.backend.map_reduce(replica.data, _cluster_stats, *geometry,
                                                  centres)
        noisy = replica.release(self._calibrations[1],
                                np.concatenate([sums, counts[:, None]], axis=1),
                                label="(S_j - n_j m, n_j) of every cluster",
                                details={"composition": "parallel over the disjoint clusters"})
        n = noisy[:, -1]
        usable = n >= 1.0
        lifted = mid + centres @ np.linalg.pinv(G).T if G is not None else mid + centres
        means = noisy[:, :-1] / np.where(usable, n, 1.0)[:, None] + mid
        centroids = np.clip(np.where(usable[:, None], means, lifted), *self.bounds)
        replica.ledger.post_process("c_j = S'_j / n'_j + m if n'_j >= 1, else the lifted "
                                    "candidate m + G^+ u_j; clip to the box")
        return centroids, n


def catalogue_config(f: FitInputs) -> BalcanClustering:
    """``DPKMeans(algorithm="balcan")``: Balcan et al. (2017) with the default shares.

    Parameters
    ----------
    f : FitInputs
        The fit's public inputs; ``n_records`` is required (public, or a noisy count).

    Returns
    -------
    BalcanClustering
        The configuration.
    """
    return BalcanClustering(f.n_clusters, f.bounds, f.epsilon, n_records=f.n_records)


# -- public randomness and post-processing ------------------------------------------------------
def _projected_dimension(n_records: int) -> int:
    """p = max(1, floor(ln(N) / 2)) (the authors' ``floor(0.5*log(n))``, at least 1)."""
    return max(1, math.floor(0.5 * math.log(n_records)))


def _public_draws(rng: np.random.Generator, p: int, d: int, project: bool, shifted: int,
                  half_side: float, k: int) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """The run's public randomness, drawn before any release and independent of the data:
    the projection G ~ N(0, 1) / sqrt(p) of shape (p, d) (None for the identity), the grids'
    offsets (shifted + 1, p) (row 0: the unshifted grid; the others uniform in [-a, a]^p, as
    the authors' ``unif(-side_length/2, side_length/2)``) and k uniforms for the initial set
    of the local search."""
    G = rng.standard_normal((p, d)) / math.sqrt(p) if project else None
    offsets = np.vstack([np.zeros((1, p)), rng.uniform(-half_side, half_side, (shifted, p))])
    return G, offsets, rng.random(k)


def _initial_set(u: np.ndarray, m: int) -> np.ndarray:
    """k candidate indices from k uniforms: a uniform ordered k-subset of range(m) when
    m >= k (without replacement), else uniform with replacement."""
    if m < u.size:
        return np.minimum((u * m).astype(np.int64), m - 1)
    left = list(range(m))
    return np.array([left.pop(min(int(v * len(left)), len(left) - 1)) for v in u],
                    dtype=np.int64)


def _child_bits(p: int) -> np.ndarray:
    """(2^p, p): child b's offset in {0, 1}^p (bit i of b for coordinate i)."""
    return (np.arange(2**p)[:, None] >> np.arange(p)) & 1


def _to_ball(points: np.ndarray, radius: float, *, copy: bool = True) -> np.ndarray:
    """Each row projected onto the ball of the given radius (a per-row map); in place with
    ``copy=False``."""
    norms = np.sqrt(np.einsum("ij,ij->i", points, points))
    over = np.flatnonzero(norms > radius)
    out = points.copy() if copy else points
    if over.size:
        out[over] *= (radius / norms[over])[:, None]
    return out


def _held_projection(replica: Replica, geometry: Geometry) -> tuple[Any, Geometry]:
    """The data that the candidates' and the local search's passes read, and its geometry.

    The in-memory backend projects the records once (block by block, as every pass would:
    :func:`_project`) and holds them, with the identity geometry (no projection, midpoint 0,
    an infinite ball): projecting them again gives the same bits (x - 0 = x; no row is clipped),
    at the cost of a copy of p columns instead of a product with d. Other backends, and the
    identity projection (cheap already), project every block at every pass.
    """
    G, mid, radius = geometry
    if G is None or not isinstance(replica.backend, MemoryBackend):
        return replica.data, geometry
    backend = replica.backend
    projected = backend.map_concat(replica.data, _projected_columns, G, mid, radius).T
    p = G.shape[0]
    wide = np.full(p, 2.0 * radius)  # holds every projected row (norm <= R): nothing clipped
    data, _, _ = backend.prepare(np.ascontiguousarray(projected), (-wide, wide))
    return data, (None, np.zeros(p), math.inf)


# -- map-reduce steps (module level: the Dask backend ships them to its workers) ----------------
def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b, computed in blocks of rows of at most :data:`_PRODUCT_WORK` multiply-adds."""
    out = np.empty((a.shape[0], b.shape[1]))
    step = max(1, _PRODUCT_WORK // max(1, b.shape[0] * b.shape[1]))
    for start in range(0, a.shape[0], step):
        np.matmul(a[start:start + step], b, out=out[start:start + step])
    return out


def _project(block: np.ndarray, G: np.ndarray | None, mid: np.ndarray,
             radius: float) -> np.ndarray:
    """y = G (x - m) for every row (x - m for the identity), clipped to the ball. The product
    is :func:`_product`'s, row block by row block, each block centred just before its product
    (the same bits, without a centred copy of the whole block)."""
    if G is None:
        return _to_ball(block - mid, radius, copy=False)
    GT = np.ascontiguousarray(G.T)
    y = np.empty((block.shape[0], GT.shape[1]))
    step = max(1, _PRODUCT_WORK // max(1, GT.shape[0] * GT.shape[1]))
    for start in range(0, block.shape[0], step):
        np.matmul(block[start:start + step] - mid, GT, out=y[start:start + step])
    return _to_ball(y, radius, copy=False)


def _projected_columns(block: np.ndarray, G: np.ndarray | None, mid: np.ndarray,
                       radius: float) -> np.ndarray:
    """:func:`_project` of the block, transposed to (p, rows) (a ``map_concat`` step)."""
    return _project(block, G, mid, radius).T


def _cells(y: np.ndarray, corner: np.ndarray, a: float, levels: int) -> np.ndarray:
    """(rows, p): every row's cell at the finest level (integer coordinates in
    [0, 2^levels)^p) of the grid whose root cube is [corner, corner + 2 a]^p; a point outside
    the root cube is in its nearest boundary cell. The cells of level l are these shifted right
    by (levels - l) bits, so the levels nest exactly."""
    top = 2**levels
    scaled = y - corner
    scaled *= top / (2.0 * a)
    np.clip(scaled, 0.0, top - 1.0, out=scaled)
    return scaled.astype(np.int64)  # truncation: the floor of a value >= 0


def _keys(cells: np.ndarray, bits: int) -> np.ndarray | None:
    """One int64 per row of cell coordinates < 2^bits (coordinate i at bit bits * i), or
    None if they do not fit."""
    p = cells.shape[1]
    if bits * p > 62:
        return None
    return cells @ (np.int64(1) << (bits * np.arange(p, dtype=np.int64)))


def _locate(parents: np.ndarray, cells: np.ndarray, bits: int) -> np.ndarray:
    """Each row of ``cells``'s position in ``parents`` (rows of cell coordinates < 2^bits),
    -1 where absent."""
    if parents.shape[0] == 0:
        return np.full(cells.shape[0], -1, dtype=np.int64)
    keys, wanted = _keys(parents, bits), _keys(cells, bits)
    if keys is None:  # too wide for one int64: match the rows themselves
        _, inverse = np.unique(np.concatenate([parents, cells]), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        where = np.full(inverse.max() + 1, -1, dtype=np.int64)
        where[inverse[:parents.shape[0]]] = np.arange(parents.shape[0])
        return where[inverse[parents.shape[0]:]]
    order = np.argsort(keys, kind="stable")
    pos = np.searchsorted(keys[order], wanted)
    pos = np.minimum(pos, keys.size - 1)
    found = keys[order][pos] == wanted
    return np.where(found, order[pos], -1)


def _child_counts(block: np.ndarray, G: np.ndarray | None, mid: np.ndarray, radius: float,
                  corners: np.ndarray, a: float, level: int, levels: int,
                  parents: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Per grid: the record counts of the 2^p sub-cubes (at ``level``) of every surviving
    cube of the level above, parent by parent (child b of parent q at index q 2^p + b)."""
    y = _project(block, G, mid, radius)
    p = y.shape[1]
    bit = np.int64(1) << np.arange(p, dtype=np.int64)
    out = []
    for corner, parent in zip(corners, parents, strict=True):
        if parent.shape[0] == 0:
            out.append(np.zeros(0))
            continue
        cells = _cells(y, corner, a, levels) >> (levels - level)
        q = _locate(parent, cells >> 1, level - 1)
        inside = q >= 0
        index = q[inside] * 2**p + (cells[inside] & 1) @ bit
        out.append(np.bincount(index, minlength=parent.shape[0] * 2**p).astype(float))
    return tuple(out)


def _augmented(y: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[-2 y, 1, ||y||^2] (rows, p + 2) and [c, ||c||^2, 1]^T (p + 2, centres): their product
    is the squared distances."""
    lhs = np.concatenate([-2.0 * y, np.ones((y.shape[0], 1)),
                          np.einsum("ij,ij->i", y, y)[:, None]], axis=1)
    rhs = np.concatenate([centres.T, np.einsum("ij,ij->i", centres, centres)[None, :],
                          np.ones((1, centres.shape[0]))], axis=0)
    return lhs, rhs


def _squared_distances(y: np.ndarray, centres: np.ndarray, cap: float) -> np.ndarray:
    """||y_x - c_j||^2 (rows, centres), clamped to [0, cap] (cap >= the true value: the
    clamp only removes rounding)."""
    D = _product(*_augmented(y, centres))
    return np.clip(D, 0.0, cap, out=D)


def _swap_losses(block: np.ndarray, G: np.ndarray | None, mid: np.ndarray, radius: float,
                 centres: np.ndarray, candidates: np.ndarray,
                 cap: float) -> tuple[np.ndarray, np.ndarray]:
    """The block's share of F_ij = sum_{x owned by i} min(D_xj, d1_x) and S_ij = sum_{x owned
    by i} min(D_xj, d2_x), (k, m) each: D the squared distances to the candidates, d1 and d2
    those to the nearest and second-nearest current centres (cap for k = 1). The loss after
    replacing centre i by candidate j is sum_i' F_i'j - F_ij + S_ij (:func:`_swap_table`):
    every (i, j) in O(rows m), not O(rows m k). Every term lies in [0, cap] (up to float64
    rounding of a distance, far below the exponential mechanism's grid slack)."""
    k, m = centres.shape[0], candidates.shape[0]
    y = _project(block, G, mid, radius)
    near = _squared_distances(y, centres, cap)
    owner = np.argmin(near, axis=1)
    if k == 1:
        d1, d2 = near[:, 0], np.full(y.shape[0], cap)
    else:  # the two smallest values of each row (a tie gives d2 = d1)
        rows = np.arange(y.shape[0])
        d1 = near[rows, owner]
        near[rows, owner] = np.inf
        d2 = near.min(axis=1)
    order = np.argsort(owner, kind="stable")  # the records of each centre in one run
    lhs, rhs = _augmented(y[order], candidates)
    d1, d2 = d1[order, None], d2[order, None]
    bounds = np.searchsorted(owner[order], np.arange(k + 1))
    F, S = np.zeros((k, m)), np.zeros((k, m))
    step = max(1, _PRODUCT_WORK // (m * lhs.shape[1]))
    for i in range(k):
        for start in range(bounds[i], bounds[i + 1], step):
            rows = slice(start, min(start + step, bounds[i + 1]))
            D = lhs[rows] @ rhs
            F[i] += np.minimum(D, d1[rows]).sum(axis=0)
            S[i] += np.minimum(D, d2[rows], out=D).sum(axis=0)
    return F, S


def _swap_table(F: np.ndarray, S: np.ndarray) -> np.ndarray:
    """(k, m): the loss after replacing centre i by candidate j, from :func:`_swap_losses`'s
    sums: the records of the other centres keep min(D_xj, d1_x), those of centre i get
    min(D_xj, d2_x)."""
    return F.sum(axis=0)[None, :] - F + S


def _cluster_stats(block: np.ndarray, G: np.ndarray | None, mid: np.ndarray, radius: float,
                   centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster of the nearest centre in the projection: the sum of x - m in the original
    space (k, d) and the count (k,)."""
    k = centres.shape[0]
    y = _project(block, G, mid, radius)
    owner = np.argmin(_squared_distances(y, centres, np.inf), axis=1)
    centred = block - mid
    sums = np.stack([np.bincount(owner, weights=centred[:, i], minlength=k)
                     for i in range(block.shape[1])], axis=1)
    return sums.reshape(k, block.shape[1]), np.bincount(owner, minlength=k).astype(float)
