"""Private k-means by a prefix tree over random-hyperplane hashes and a private coreset: the
algorithm of Google's differential-privacy library (``learning/clustering``), described by
Chang and Kamath (2021), "Practical differentially private clustering" (book chapter 12,
"Beyond the five papers").

The algorithm
-------------
1. Centre the points at the public box's midpoint m and clip them to the L2 ball of radius r,
   the box's half-diagonal (nothing in the box is clipped; the clip only guards rounding).
2. Draw ``max_depth`` random hyperplanes through the origin (SimHash, public randomness drawn
   before any data is read). A point's hash has one bit per hyperplane (1 when it lies on the
   negative side); a node at depth l is the set of points sharing the first l bits. The tree
   grows from the root level by level: the root's count is released at level 0; at level
   l >= 1, both children of every node whose noisy count is at least
   ``min_num_points_in_branching_node`` are released (noisy counts), and a child stays in the
   tree when its noisy count is at least ``min_num_points_in_node``. The tree's leaves (nodes
   without a surviving child) form the coreset.
3. Per leaf, a noisy sum of its points (one Gaussian release of every leaf's sum) divided by
   its noisy count (released with the tree), clipped back to the ball; its weight is the noisy
   count.
4. Weighted k-means++ and Lloyd (scikit-learn) on the coreset: post-processing of released
   values. The centres are moved back by m and clipped to the box.

The exact statistics take two passes through the backend's map-reduce. The first gives the
number of records below any full ``max_depth``-bit hash code, so that a node's exact count is
a difference of two such numbers (the codes under a prefix form one range): with fewer records
than 2^max_depth codes (a public comparison), every record's code, sorted; otherwise a histogram
of the codes (2^max_depth int64 bins per block of rows, 8 MB at depth 20), summed cumulatively.
The second, once the tree is released, gives every leaf's exact sum. A fit on a few records
thus costs what its tree does, not 2^max_depth.

Accounting
----------
Adjacency is add/remove one record. Every level's release has L1 sensitivity 1: the nodes
released at one level are disjoint, so one record changes one of their counts by one (one
discrete Laplace release of the level's vector). Every level is charged, also when the tree
has stopped growing (an empty release), so the spend never depends on the data. Given the
released tree, the leaves are disjoint and a centred record has norm at most r, so the vector
of leaf sums has L2 sensitivity r: one discrete Gaussian release. The levels and the sums are
each chosen adaptively from earlier releases, and compose in sequence; thresholds, coreset,
k-means and the padding of missing centres are post-processing. Two accountings
(``accounting``):

* **basic** (the default): the budget is split into a count share ``epsilon_counts`` and a
  sum share ``epsilon - epsilon_counts``; the whole delta goes to the sums. Each of the
  ``max_depth + 1`` levels costs ``epsilon_counts / (max_depth + 1)``, the sums are
  calibrated by zCDP to ``(epsilon - epsilon_counts, delta)`` (exact for the discrete
  Gaussian), and basic sequential composition gives exactly (epsilon, delta).
* **tight**: Google's own accounting. Its library fixes the ratio of the two noises
  (``PrivacyCalculatorMultiplier``: the counts' Laplace scale is 20 alpha, the sums' sigma
  alpha r) and calibrates alpha until its PLD accountant (``dp_accounting``'s
  ``PLDAccountant``, a Laplace event composed ``max_depth + 1`` times and a Gaussian event)
  gives (epsilon, delta). Here the basic form's calibration already has that ratio; the tight
  form multiplies both of its noise parameters (a level's epsilon, the sums' mu = r / sigma)
  by one factor s >= 1, the largest whose tight composition of the planned releases
  (:func:`dpkmeans.privacy.tight.epsilon_at`: basic, zCDP or PLD, the smallest) is at most
  epsilon at delta (:func:`tight_factor`, to 1e-4 relative and never above). The run's ledger
  composes the same way (:attr:`LSHClustering.target`), checking the whole plan before the
  first draw. The exact samplers are accounted there as the continuous mechanisms of the same
  scale, as Google's accountant accounts its own discrete Laplace counts. At epsilon 1, delta
  1e-6 and depth 20, s is about 1.27: both noises are about 21 % smaller than the basic
  form's (about 25 % at epsilon 0.1).

Differences from Google's code
------------------------------
* Two accountings: the tight form is Google's (PLD composition of the levels and the sums,
  one noise parameter calibrated to the budget); the basic form adds the releases' epsilons
  (a looser but simple valid bound: at equal (epsilon, delta) its noise is larger). Google
  searches alpha with ``mechanism_calibration``; here the factor s is searched by false
  position within a bracket (:func:`tight_factor`).
* Exact samplers (discrete Laplace and discrete Gaussian on a public grid,
  :mod:`dpkmeans.privacy.noise`) instead of scipy's and numpy's float ones.
* The data are centred at the public box's midpoint, and r is the box's half-diagonal.
* Every random choice follows from the run's seed: the hyperplanes and the seed handed to
  scikit-learn come from the replica's public generator.
* As in Google's ``default_tree_param``, the thresholds read no true size: only the root's
  noisy count (released at level 0, reused as the root's weight), so they are post-processing.
* k-means on the coreset runs once from k-means++ (``n_init = 1``): Google's code calls
  scikit-learn's ``KMeans(init="k-means++")`` without ``n_init``, whose default is now
  ``"auto"``, one run for k-means++ (it was 10 runs when the code was written).
* Fewer than k coreset points: Google returns fewer centres; here the missing ones repeat
  the heaviest centre (the output always has k rows).

Defaults (all public)
---------------------
``max_depth = 20`` (Google's). The count share follows Google's default
``PrivacyCalculatorMultiplier`` (``gaussian_std_dev_multiplier = 1``,
``dlaplace_param_multiplier = 20``), which fixes the ratio of the two noises: the count noise's
Laplace scale is 20 times the sum noise's sigma / r. Under basic composition that ratio gives
one share for each (epsilon, delta, max_depth) (:func:`google_count_share`; about 0.2 at
epsilon 1, delta 1e-6); the tight form keeps the ratio. The thresholds follow Google's
``default_tree_param`` (sigma that of the form's sums):
``min_num_points_in_node = max(1, min(int(10 sqrt(d) sigma / r), floor(n~) // (2 k)))``
(n~ the root's noisy count) and ``min_num_points_in_branching_node = 3`` times that.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from dpkmeans.engine.equal_privacy import CALIBRATION_RTOL
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.standalone import Replica, StandaloneConfig, StandaloneFit
from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.privacy.accounting import PrivacyCost
from dpkmeans.privacy.noise import NoiseCalibration, calibrate, zcdp_rho_for
from dpkmeans.privacy.tight import Release, epsilon_at, zcdp_epsilon
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_real

if TYPE_CHECKING:
    from dpkmeans.papers.registry import FitInputs

__all__ = ["LSHClustering", "catalogue_config", "catalogue_config_tight", "google_count_share",
           "tight_factor", "ACCOUNTINGS", "GOOGLE_NOISE_RATIO", "GOOGLE_MAX_DEPTH"]

#: Google's default max_depth ("chosen experimentally over multiple datasets").
GOOGLE_MAX_DEPTH = 20
#: Google's ``dlaplace_param_multiplier / gaussian_std_dev_multiplier`` (20 / 1): the count
#: noise's Laplace scale over the sum noise's sigma / r.
GOOGLE_NOISE_RATIO = 20.0
#: The deepest tree this implementation accepts.
MAX_DEPTH_LIMIT = 24
#: Google's "each point has noise roughly 0.1 radius" factor of ``default_tree_param``.
_LOW_NOISE_FACTOR = 10.0
#: Values squared at a time when the rows' norms are computed (a block that stays in cache).
_CLIP_WORK = 2**15
#: How a configuration accounts its releases: "basic" (the levels' epsilons and the sums'
#: (epsilon, delta) add up to the budget) or "tight" (both noises scaled together until the
#: PLD composition of the releases reaches the budget, as Google's library does).
ACCOUNTINGS = ("basic", "tight")


@functools.lru_cache(maxsize=256)
def google_count_share(epsilon: float, delta: float, max_depth: int = GOOGLE_MAX_DEPTH,
                       ratio: float = GOOGLE_NOISE_RATIO) -> float:
    """The share of epsilon spent on the tree's counts that keeps Google's noise ratio.

    Google's default multipliers set the discrete Laplace scale of every count to ``ratio``
    times the sum's Gaussian sigma divided by its sensitivity r. Under basic composition the
    counts' scale is ``(max_depth + 1) / (s epsilon)`` and the sum's sigma / r is
    ``1 / sqrt(2 rho)`` with rho the zCDP parameter of ``((1 - s) epsilon, delta)``
    (:func:`~dpkmeans.privacy.noise.zcdp_rho_for`); the share s solving
    ``(max_depth + 1) / (s epsilon) = ratio / sqrt(2 rho)`` is found by bisection. A function
    of public inputs only.

    Parameters
    ----------
    epsilon : float
        The run's budget.
    delta : float
        The run's delta (all of it spent on the sums).
    max_depth : int, default 20
        The tree's depth (``max_depth + 1`` levels of counts).
    ratio : float, default 20.0
        The count noise's scale over the sum noise's sigma / r.

    Returns
    -------
    float
        The count share, in (0, 1).

    Raises
    ------
    ValueError
        If epsilon, delta, max_depth or ratio is out of range.

    Examples
    --------
    >>> from dpkmeans.papers.lsh.algorithm import google_count_share
    >>> round(google_count_share(1.0, 1e-6), 2)
    0.19
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    levels = check_positive_int(max_depth, "max_depth", minimum=0) + 1
    ratio = check_real(ratio, "ratio")
    if not ratio > 0 or math.isinf(ratio):
        raise ValueError(f"ratio must be finite and > 0, got {ratio}")

    def excess(s: float) -> float:  # decreasing in s
        sigma_over_r = 1.0 / math.sqrt(2.0 * zcdp_rho_for((1.0 - s) * eps, dlt))
        return levels / (s * eps) - ratio * sigma_over_r

    lo, hi = 1e-9, 1.0 - 1e-9
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return 0.5 * (lo + hi)


def _budgets(epsilon: float, delta: float, max_depth: int, share: float,
             factor: float | None) -> tuple[float, float]:
    """(the epsilon of one level's counts, the sums' epsilon at ``delta``): the basic split of
    epsilon by ``share`` (``factor`` None), or that split's noises scaled together, the levels'
    epsilon times ``factor`` and the sums' zCDP rho times ``factor ** 2`` (the sums' epsilon is
    then the one of that rho alone at delta: what their calibration reads)."""
    level = share * epsilon / (max_depth + 1)
    sums = epsilon - (max_depth + 1) * level
    if factor is None:
        return level, sums
    return factor * level, zcdp_epsilon(factor * factor * zcdp_rho_for(sums, delta), delta)


def _plan(level_epsilon: float, sums_epsilon: float, delta: float, max_depth: int,
          radius: float) -> list[Release]:
    """The releases of a run, from the calibrations it draws with: ``max_depth + 1`` discrete
    Laplace level releases and one discrete Gaussian of the leaf sums (its mu = r / sigma does
    not depend on the number of leaves)."""
    counts = calibrate("laplace", 1.0, level_epsilon, integer_valued=True)
    sums = calibrate("gaussian", radius, sums_epsilon, delta)
    return [counts.release(max_depth + 1), sums.release()]


@functools.lru_cache(maxsize=256)
def tight_factor(epsilon: float, delta: float, max_depth: int = GOOGLE_MAX_DEPTH,
                 count_share: float | None = None, radius: float = 1.0) -> float:
    """The factor by which the tight form scales the basic form's noise parameters (the
    levels' epsilon and the sums' mu = r / sigma) so that the tight composition of its
    releases is (``epsilon``, ``delta``).

    Google's library calibrates one parameter, alpha (the count noise's Laplace scale is
    20 alpha, the sums' sigma is alpha r), until its PLD accountant gives the budget. Here the
    basic form (:func:`google_count_share`) already has that ratio, so both of its noise
    parameters are multiplied by one factor s, which keeps the ratio exactly; s is the largest
    whose :func:`~dpkmeans.privacy.tight.epsilon_at` of the planned releases (the levels'
    Laplace releases and the sums' Gaussian, PLD composition) is at most ``epsilon``, to
    :data:`~dpkmeans.engine.equal_privacy.CALIBRATION_RTOL` (never above). The search brackets
    s (basic composition is valid, so s >= 1) and narrows the bracket by false position
    (Illinois), with a bisection step when that stalls. A function of public inputs only.

    Parameters
    ----------
    epsilon : float
        The run's budget.
    delta : float
        The run's delta.
    max_depth : int, default 20
        The tree's depth (``max_depth + 1`` levels of counts).
    count_share : float or None, default None
        The basic form's count share, which sets the noise ratio (None: Google's,
        :func:`google_count_share`).
    radius : float, default 1.0
        r, the sums' L2 sensitivity (mu does not depend on it; the sums' calibration is
        evaluated at it so that the planned releases are the run's, bit for bit).

    Returns
    -------
    float
        s >= 1: the level noise's Laplace scale and the sums' sigma are the basic form's
        divided by s.

    Raises
    ------
    ValueError
        If an input is out of range.

    Examples
    --------
    >>> from dpkmeans.papers.lsh.algorithm import tight_factor
    >>> round(tight_factor(1.0, 1e-6), 2)
    1.27
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    depth = check_positive_int(max_depth, "max_depth", minimum=0)
    share = google_count_share(eps, dlt, depth) if count_share is None else count_share
    r = check_real(radius, "radius")
    if not (0.0 < share < 1.0 and r > 0 and math.isfinite(r)):
        raise ValueError(f"count_share must lie in (0, 1) and radius be finite and > 0, got "
                         f"{share} and {r}")

    def spend(factor: float) -> float:
        level, sums = _budgets(eps, dlt, depth, share, factor)
        return epsilon_at(_plan(level, sums, dlt, depth, r), dlt)[0]

    floor = eps * (1.0 - CALIBRATION_RTOL)
    aim = eps * (1.0 - CALIBRATION_RTOL / 2.0)  # the false position's target, inside the window
    lo, f_lo = 1.0, min(spend(1.0), eps)  # s = 1, the basic form: valid by basic composition
    hi: float | None = None
    g_hi = 0.0
    while f_lo <= 0.0:  # so much noise that delta covers epsilon = 0: try less noise
        if lo > 2.0**64:  # a budget below what doubles resolve: the run refuses it
            return 1.0
        f = spend(2.0 * lo)
        if f > eps:
            hi, g_hi = 2.0 * lo, f - aim
            break
        lo, f_lo = 2.0 * lo, f
    g_lo = f_lo - aim  # the interpolation's values (Illinois: one may be halved)
    side = 0  # the side of the bracket the last point replaced
    for _ in range(100):
        if f_lo >= floor:
            break
        if hi is None:  # grow until the budget is passed (eps / f is a near-exact guess)
            guess = lo * max(eps / f_lo, 1.0 + CALIBRATION_RTOL)
        else:
            if hi - lo <= 1e-12 * hi:
                break
            guess = lo - g_lo * (hi - lo) / (g_hi - g_lo)
            if not lo + 1e-3 * (hi - lo) < guess < hi - 1e-3 * (hi - lo):
                guess = 0.5 * (lo + hi)
        f = spend(guess)
        if f <= eps:
            lo, f_lo, g_lo = guess, f, f - aim
            if side == -1:
                g_hi /= 2.0
            side = -1
        else:
            hi, g_hi = guess, f - aim
            if side == 1:
                g_lo /= 2.0
            side = 1
    return lo


@dataclass(frozen=True)
class LSHClustering(StandaloneConfig):
    """Google's private clustering (Chang and Kamath 2021): an LSH prefix tree grown where
    noisy counts are large, a private coreset of its leaves and k-means++ on the coreset.

    Every field is public. ``delta`` is required (> 0): the sums are Gaussian.

    Parameters
    ----------
    n_clusters, bounds, epsilon, delta, neighbour, name, flaws
        As :class:`~dpkmeans.engine.standalone.StandaloneConfig` (``neighbour`` must be
        "add/remove", ``flaws`` empty).
    max_depth : int, default 20
        The tree's maximum depth (Google's default); ``max_depth + 1`` levels are charged.
        At most 24.
    count_share : float or None, default None
        The share of epsilon spent on the tree's counts (the rest on the leaf sums). ``None``:
        the share that keeps Google's default noise ratio (:func:`google_count_share`).
    min_num_points_in_node : int or None, default None
        A released child stays in the tree when its noisy count is at least this. ``None``:
        Google's rule, ``max(1, min(int(10 sqrt(d) sigma / r), floor(n~) // (2 k)))`` with
        sigma the sums' noise and n~ the root's noisy count.
    min_num_points_in_branching_node : int or None, default None
        A node's children are released when its noisy count is at least this. ``None``:
        3 times ``min_num_points_in_node`` (Google's rule).
    n_init : int, default 1
        Runs of k-means++ and Lloyd on the coreset (scikit-learn; the best is kept).
    accounting : {"basic", "tight"}, default "basic"
        "basic": the levels' epsilons and the sums' (epsilon, delta) add up to (epsilon,
        delta). "tight": the basic form's noises scaled down together by
        :func:`tight_factor` (the ratio of the two kept) until the tight composition of the
        releases is (epsilon, delta), as Google's PLD accountant does; the run's ledger then
        composes tightly (:attr:`target`).

    Raises
    ------
    ValueError
        If a field is out of range: delta 0, adjacency other than add/remove, flaws (the
        data-derived bounds of ``DPKMeans(bounds=None)`` named as such: public bounds needed),
        max_depth outside 0..24, count_share outside (0, 1), thresholds below 1 or a branching
        threshold below the survival one, n_init below 1, an unknown accounting.
    TypeError
        If a number is given as another type.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.loop import run
    >>> from dpkmeans.papers.lsh.algorithm import LSHClustering
    >>> X = np.random.default_rng(0).random((2000, 2))
    >>> config = LSHClustering(3, (np.zeros(2), np.ones(2)), 1.0, 1e-6)
    >>> result = run(X, config, 0)
    >>> result.centroids.shape, result.ledger.is_fully_spent()
    ((1, 3, 2), True)
    >>> tight = LSHClustering(3, (np.zeros(2), np.ones(2)), 1.0, 1e-6, accounting="tight")
    >>> round(config.epsilon_level / tight.epsilon_level, 2)  # the ratio of the noise scales
    0.79
    """

    name: str = "lsh"
    max_depth: int = GOOGLE_MAX_DEPTH
    count_share: float | None = None
    min_num_points_in_node: int | None = None
    min_num_points_in_branching_node: int | None = None
    n_init: int = 1
    accounting: str = "basic"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.delta:
            raise ValueError("the LSH clustering is (epsilon, delta)-DP (Gaussian leaf sums): "
                             "give delta > 0, e.g. delta=1e-6")
        if self.neighbour != "add/remove":
            raise ValueError("the LSH clustering's accounting needs add/remove adjacency "
                             f"(disjoint nodes per level), got {self.neighbour!r}")
        if DATA_DERIVED_BOUNDS in self.flaws:  # DPKMeans(bounds=None): no paper mode here
            raise ValueError("algorithm='lsh' needs public bounds: give bounds=(lower, upper), "
                             "a box fixed without reading the data (the leaf sums' noise is "
                             "calibrated to its radius); it has no mode that reads the bounds "
                             "off the data")
        if self.flaws:
            raise ValueError("the LSH clustering has no as-published flaws to reproduce")
        depth = check_positive_int(self.max_depth, "max_depth", minimum=0)
        if depth > MAX_DEPTH_LIMIT:
            raise ValueError(f"max_depth must be at most {MAX_DEPTH_LIMIT} (the deepest tree "
                             f"this implementation accepts), got {depth}")
        object.__setattr__(self, "max_depth", depth)
        if self.count_share is not None:
            share = check_real(self.count_share, "count_share")
            if not 0.0 < share < 1.0:
                raise ValueError(f"count_share must lie in (0, 1), got {share}")
            object.__setattr__(self, "count_share", share)
        node = self.min_num_points_in_node
        if node is not None:
            node = check_positive_int(node, "min_num_points_in_node")
            object.__setattr__(self, "min_num_points_in_node", node)
        branch = self.min_num_points_in_branching_node
        if branch is not None:
            branch = check_positive_int(branch, "min_num_points_in_branching_node")
            object.__setattr__(self, "min_num_points_in_branching_node", branch)
            if node is not None and branch < node:
                raise ValueError("min_num_points_in_branching_node must be at least "
                                 f"min_num_points_in_node ({branch} < {node})")
        object.__setattr__(self, "n_init", check_positive_int(self.n_init, "n_init"))
        if self.accounting not in ACCOUNTINGS:
            raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {self.accounting!r}")

    # -- public quantities -------------------------------------------------------------------
    @property
    def iterations(self) -> int:
        """The levels below the root the tree may grow (``max_depth``)."""
        return self.max_depth

    @property
    def midpoint(self) -> np.ndarray:
        """The box's midpoint m (the data are centred there)."""
        lower, upper = self.bounds
        return (lower + upper) / 2.0

    @property
    def radius(self) -> float:
        """r: the box's half-diagonal, the L2 bound of a centred record."""
        lower, upper = self.bounds
        return float(np.linalg.norm(upper - lower) / 2.0)

    @property
    def share(self) -> float:
        """The basic form's count share (``count_share``, or :func:`google_count_share`),
        which sets the ratio of the two noises (the tight form keeps it)."""
        if self.count_share is not None:
            return float(self.count_share)
        return google_count_share(self.epsilon, self.delta, self.max_depth)

    @property
    def factor(self) -> float:
        """The factor the tight form multiplies the basic form's noise parameters by
        (:func:`tight_factor`); 1 for the basic form."""
        if self.accounting == "basic":
            return 1.0
        return tight_factor(self.epsilon, self.delta, self.max_depth, self.share, self.radius)

    @property
    def epsilon_level(self) -> float:
        """The epsilon of one level's counts (1 / its Laplace scale)."""
        return self._budgets[0]

    @property
    def epsilon_sums(self) -> float:
        """The epsilon of the leaf sums at delta (basic: the budget less every level's;
        tight: that of the scaled sums' zCDP rho alone)."""
        return self._budgets[1]

    @property
    def _budgets(self) -> tuple[float, float]:
        factor = None if self.accounting == "basic" else self.factor
        return _budgets(self.epsilon, self.delta, self.max_depth, self.share, factor)

    @property
    def target(self) -> PrivacyCost | None:
        """(epsilon, delta) for the tight form (the run's ledger composes its releases
        tightly, :mod:`dpkmeans.engine.standalone`); None for the basic form."""
        return PrivacyCost(self.epsilon, self.delta) if self.accounting == "tight" else None

    def planned_releases(self) -> list[Release]:
        """Every release a run makes, from public inputs: ``max_depth + 1`` discrete Laplace
        level releases (every level is charged) and the leaf sums' discrete Gaussian.

        Returns
        -------
        list of Release
            What the tight composition composes (:mod:`dpkmeans.privacy.tight`).
        """
        return _plan(self.epsilon_level, self.epsilon_sums, self.delta, self.max_depth,
                     self.radius)

    def thresholds(self, root_count: float, sum_sigma: float) -> tuple[float, float]:
        """(min_num_points_in_node, min_num_points_in_branching_node) after the root's release.

        Parameters
        ----------
        root_count : float
            The root's noisy count (a released value).
        sum_sigma : float
            The leaf sums' Gaussian sigma (from public inputs).

        Returns
        -------
        (float, float)
            The survival and branching thresholds (Google's ``default_tree_param`` for a
            field left ``None``).
        """
        node = self.min_num_points_in_node
        if node is None:
            d = self.bounds[0].size
            low_noise = int(_LOW_NOISE_FACTOR * math.sqrt(d) * sum_sigma / self.radius)
            per_cluster = int(math.floor(root_count)) // (2 * self.n_clusters)
            node = max(1, min(low_noise, per_cluster))
        branch = self.min_num_points_in_branching_node
        if branch is None:
            branch = 3 * node
        return float(node), float(max(branch, node))

    # -- the run -------------------------------------------------------------------------------
    def fit_replica(self, replica: Replica) -> StandaloneFit:
        """Grow the tree, release the coreset and cluster it (module docstring).

        Parameters
        ----------
        replica : Replica
            The backend, its data (clipped to the box), the ledger and the generator.

        Returns
        -------
        StandaloneFit
            k centroids; ``iterations`` the depth the tree reached; ``noisy_counts`` the
            coreset weight each centre gathers (post-processing).
        """
        D, d = self.max_depth, self.bounds[0].size
        mid, r = self.midpoint, self.radius
        planes = _hyperplanes(replica.public_rng, D, d)
        try:
            count_cal = calibrate("laplace", 1.0, self.epsilon_level, integer_valued=True)
        except BudgetTooSmallError as err:  # name the basic form's share: its minimum runs
            raise BudgetTooSmallError(str(err), err.minimum,
                                      self.epsilon_level / self.factor) from None
        eps_sums = self.epsilon_sums
        sigma = _nominal_sigma(r, eps_sums, self.delta)

        below = _codes_below(replica, mid, r, planes)

        with replica.ledger.sequential(f"{self.name}: prefix tree"):
            root = replica.release(count_cal, _node_counts(below, np.zeros(1, np.int64), 0, D),
                                   label="level 0 (root) count",
                                   details={"level": 0, "nodes": 1}, integer_valued=True)
            node_min, branch_min = self.thresholds(float(root[0]), sigma)
            prefixes, counts = np.zeros(1, dtype=np.int64), np.maximum(root, 1.0)
            leaves: list[tuple[int, np.ndarray, np.ndarray]] = []
            depth_reached = 0
            for level in range(1, D + 1):
                branching = counts >= branch_min
                leaves.append((level - 1, prefixes[~branching], counts[~branching]))
                parents = prefixes[branching]
                children = np.stack([2 * parents, 2 * parents + 1], axis=1).ravel()
                noisy = replica.release(count_cal, _node_counts(below, children, level, D),
                                        label=f"level {level} counts",
                                        details={"level": level, "nodes": int(children.size)},
                                        integer_valued=True)
                keep = noisy >= node_min
                # a branching node none of whose children survives is a leaf
                kept_parent = keep.reshape(-1, 2).any(axis=1)
                leaves.append((level - 1, parents[~kept_parent], counts[branching][~kept_parent]))
                prefixes, counts = children[keep], noisy[keep]
                if prefixes.size:
                    depth_reached = level
            leaves.append((D, prefixes, counts))

        ranges, weights = _leaf_ranges(leaves, D)
        n_leaves = weights.size
        (sums,) = replica.backend.map_reduce(replica.data, _leaf_sums, mid, r, planes, ranges,
                                             n_leaves)
        sum_cal = _sum_calibration(r, eps_sums, self.delta, n_leaves * d)
        noisy_sums = replica.release(sum_cal, sums, label="leaf sums (private coreset)",
                                     details={"leaves": int(n_leaves)})
        points = _clip_ball(noisy_sums / weights[:, None], r)
        replica.ledger.post_process(f"{self.name}: weighted k-means++ on the {n_leaves}-point "
                                    "private coreset; centres moved back to the box")
        centres, mass = _cluster_coreset(points, weights, self.n_clusters, self.n_init,
                                         replica.public_rng)
        lower, upper = self.bounds
        centroids = np.clip(centres + mid, lower, upper)
        return StandaloneFit(centroids=centroids, iterations=depth_reached, noisy_counts=mass)


@functools.lru_cache(maxsize=256)
def _nominal_sigma(radius: float, epsilon: float, delta: float) -> float:
    """The leaf sums' sigma that Google's thresholds read: the nominal one, before the grid
    rounding (which depends on the released number of leaves)."""
    return calibrate("gaussian", radius, epsilon, delta).nominal_scale


@functools.lru_cache(maxsize=1024)
def _sum_calibration(radius: float, epsilon: float, delta: float,
                     coordinates: int) -> NoiseCalibration:
    """The leaf sums' discrete Gaussian (a pure function of public values, computed once per
    number of coordinates: its zCDP calibration is a search)."""
    return calibrate("gaussian", radius, epsilon, delta, coordinates=coordinates)


# -- public randomness (each use listed in tests/test_privacy_boundary.py) --------------------
def _hyperplanes(rng: np.random.Generator, depth: int, d: int) -> np.ndarray:
    """``depth`` standard normal directions in R^d (SimHash), drawn before the data is read."""
    return rng.standard_normal((depth, d))


def _cluster_coreset(points: np.ndarray, weights: np.ndarray, k: int, n_init: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Weighted k-means++ and Lloyd (scikit-learn) on the released coreset, seeded from the
    public generator; fewer than k points: the missing centres repeat the heaviest one.
    Returns the (k, d) centres and the coreset weight each gathers."""
    from sklearn.cluster import KMeans

    seed = int(rng.integers(2**31 - 1))
    m = min(k, points.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer distinct coreset points than clusters
        model = KMeans(n_clusters=m, init="k-means++", n_init=n_init, random_state=seed)
        model.fit(points, sample_weight=weights)
    centres = np.asarray(model.cluster_centers_, dtype=float)
    mass = np.bincount(model.labels_, weights=weights, minlength=m)
    if m < k:
        heaviest = int(np.argmax(mass))
        centres = np.vstack([centres, np.repeat(centres[heaviest:heaviest + 1], k - m, 0)])
        mass = np.concatenate([mass, np.zeros(k - m)])
    return centres, mass


# -- map steps (module level: picklable for the Dask backend) ---------------------------------
def _centred(block: np.ndarray, mid: np.ndarray, radius: float) -> np.ndarray:
    """The block centred at ``mid`` and clipped to the L2 ball of ``radius``."""
    x = np.asarray(block, dtype=float) - mid
    return _clip_ball(x, radius, out=x)


def _clip_ball(x: np.ndarray, radius: float, *, out: np.ndarray | None = None) -> np.ndarray:
    """Rows scaled down to norm ``radius`` where longer (Google's ``clip_by_radius``), into
    ``out`` (which may be ``x``). The norms are ``np.linalg.norm(x, axis=1)``'s (the square
    root of each row's ``np.add.reduce`` of squares: the same bits), over blocks of
    :data:`_CLIP_WORK` values, so that no squared copy of x is made."""
    norms = np.empty(x.shape[0])
    step = max(1, _CLIP_WORK // max(1, x.shape[1]))
    for start in range(0, x.shape[0], step):
        part = x[start:start + step]
        np.sqrt(np.add.reduce(part * part, axis=1), out=norms[start:start + step])
    scale = (radius / np.maximum(norms, radius))[:, None]
    return x * scale if out is None else np.multiply(x, scale, out=out)


def _codes(x: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """Each row's ``len(planes)``-bit hash code, the first hyperplane's bit the highest (1 for
    the negative side)."""
    depth = planes.shape[0]
    if depth == 0:
        return np.zeros(x.shape[0], dtype=np.int64)
    bits = (x @ planes.T < 0).astype(np.int64)
    weights = np.left_shift(np.int64(1), np.arange(depth - 1, -1, -1, dtype=np.int64))
    return bits @ weights


def _placed_codes(block: np.ndarray, start: int, mid: np.ndarray, radius: float,
                  planes: np.ndarray, n_rows: int) -> tuple[np.ndarray]:
    """The full hash code of every row of the block, at the rows' positions in a vector of
    ``n_rows`` zeros (the blocks' vectors add up to every record's code)."""
    out = np.zeros(n_rows, dtype=np.int64)
    out[start:start + block.shape[0]] = _codes(_centred(block, mid, radius), planes)
    return (out,)


def _code_histogram(block: np.ndarray, mid: np.ndarray, radius: float,
                    planes: np.ndarray) -> tuple[np.ndarray]:
    """The block's count of every full hash code (2^max_depth bins)."""
    codes = _codes(_centred(block, mid, radius), planes)
    return (np.bincount(codes, minlength=1 << planes.shape[0]).astype(np.int64, copy=False),)


def _leaf_sums(block: np.ndarray, mid: np.ndarray, radius: float, planes: np.ndarray,
               ranges: np.ndarray, n_leaves: int) -> tuple[np.ndarray]:
    """The block's sum of centred records per leaf (``ranges``: :func:`_leaf_ranges`)."""
    x = _centred(block, mid, radius)
    leaf = _leaf_of(_codes(x, planes), ranges)
    inside = leaf >= 0
    leaf, x = leaf[inside], x[inside]
    sums = np.empty((n_leaves, x.shape[1]))
    for j in range(x.shape[1]):
        sums[:, j] = np.bincount(leaf, weights=x[:, j], minlength=n_leaves)
    return (sums,)


# -- the tree ---------------------------------------------------------------------------------
def _codes_below(replica: Replica, mid: np.ndarray, radius: float,
                 planes: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The exact number of records whose full code is below each given code (first pass of the
    module docstring): from the sorted codes when there are fewer records than codes (the
    public row count against 2^max_depth), else from the cumulative code histogram."""
    n_codes = 1 << planes.shape[0]
    if replica.n_rows < n_codes:
        (codes,) = replica.backend.map_reduce(replica.data, _placed_codes, mid, radius, planes,
                                              replica.n_rows, with_start=True)
        ordered = np.sort(codes)
        return lambda bounds: np.searchsorted(ordered, bounds, side="left")
    (histogram,) = replica.backend.map_reduce(replica.data, _code_histogram, mid, radius, planes)
    below = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(histogram, dtype=np.int64)])
    return lambda bounds: below[bounds]


def _node_counts(below: Callable[[np.ndarray], np.ndarray], prefixes: np.ndarray, level: int,
                 depth: int) -> np.ndarray:
    """Exact record counts of the nodes ``prefixes`` at ``level`` (:func:`_codes_below`): the
    codes under a prefix q are those in [q 2^(depth - level), (q + 1) 2^(depth - level))."""
    shift = depth - level
    return (below((prefixes + 1) << shift) - below(prefixes << shift)).astype(np.int64)


def _leaf_ranges(leaves: list[tuple[int, np.ndarray, np.ndarray]],
                 depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The leaves' full-code ranges, (3, leaves) rows start, end (exclusive) and leaf index,
    sorted by start, and the leaves' weights in leaf-index order; the leaves are prefix-free,
    so their ranges are disjoint."""
    starts, ends, weights = [], [], []
    for level, prefixes, counts in leaves:
        shift = depth - level
        prefixes = np.asarray(prefixes, dtype=np.int64)
        starts.append(prefixes << shift)
        ends.append((prefixes + 1) << shift)
        weights.append(np.asarray(counts, dtype=float))
    if not weights:
        return np.zeros((3, 0), dtype=np.int64), np.zeros(0)
    start, end = np.concatenate(starts), np.concatenate(ends)
    order = np.argsort(start, kind="stable")
    table = np.stack([start[order], end[order], order.astype(np.int64)])
    return table, np.concatenate(weights)


def _leaf_of(codes: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Each full code's leaf index (-1: in no leaf), from :func:`_leaf_ranges`."""
    start, end, index = ranges
    if start.size == 0:
        return np.full(codes.shape, -1, dtype=np.int64)
    pos = np.maximum(np.searchsorted(start, codes, side="right") - 1, 0)
    return np.where((codes >= start[pos]) & (codes < end[pos]), index[pos], -1)


# -- the catalogue ----------------------------------------------------------------------------
def catalogue_config(f: FitInputs) -> LSHClustering:
    """The catalogue's ``"lsh"``: Google's defaults from a fit's public inputs.

    Parameters
    ----------
    f : dpkmeans.papers.registry.FitInputs
        k, epsilon, the box and delta (``max_iter`` and ``n_records`` are not read).

    Returns
    -------
    LSHClustering
        The configuration.

    Raises
    ------
    ValueError
        If ``delta`` is missing.

    Examples
    --------
    >>> from dpkmeans.papers.registry import FitInputs
    >>> from dpkmeans.papers.lsh.algorithm import catalogue_config
    >>> config = catalogue_config(FitInputs(3, 1.0, ([0.0, 0.0], [1.0, 1.0]), 5, delta=1e-6))
    >>> config.max_depth, round(config.share, 2)
    (20, 0.19)
    """
    if f.delta is None:
        raise ValueError("algorithm='lsh' is (epsilon, delta)-DP: give delta, e.g. delta=1e-6")
    return LSHClustering(n_clusters=f.n_clusters, bounds=f.bounds, epsilon=f.epsilon,
                         delta=f.delta)


def catalogue_config_tight(f: FitInputs) -> LSHClustering:
    """The catalogue's ``"lsh"`` in its tight form: Google's defaults, both noises scaled down
    together until the tight composition of the releases (PLD) is (epsilon, delta), as
    Google's library accounts them (:func:`tight_factor`).

    Parameters
    ----------
    f : dpkmeans.papers.registry.FitInputs
        k, epsilon, the box and delta (``max_iter`` and ``n_records`` are not read).

    Returns
    -------
    LSHClustering
        The configuration, ``accounting="tight"``.

    Raises
    ------
    ValueError
        If ``delta`` is missing.

    Examples
    --------
    >>> from dpkmeans.papers.registry import FitInputs
    >>> from dpkmeans.papers.lsh.algorithm import catalogue_config_tight
    >>> config = catalogue_config_tight(FitInputs(3, 1.0, ([0.0] * 2, [1.0] * 2), 5, delta=1e-6))
    >>> config.target, round(config.factor, 2)
    (PrivacyCost(epsilon=1.0, delta=1e-06), 1.27)
    """
    return replace(catalogue_config(f), accounting="tight")
