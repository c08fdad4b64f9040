"""A scikit-learn style estimator over the DP-Lloyd engine.

``DPKMeans(n_clusters, epsilon, bounds, algorithm, random_state)`` follows diffprivlib's API
but avoids its bugs (reference/dp-libraries.md §3.1): the parameters are never mutated (clone
safe), every cluster is noised every iteration, Su's split is the right way round, and
``bounds=None`` ("paper mode", bounds read off the data) warns with ``PrivacyLeakWarning``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import metrics
from .accounting import PrivacyCost
from .algorithms import ALGORITHMS
from .engine import run
from .errors import PrivacyLeakWarning
from .lloyd import assign
from .sensitivity import check_bounds
from .validation import check_epsilon, check_positive_int

__all__ = ["DPKMeans"]


def _check_X(X: ArrayLike, n_features: int | None = None) -> np.ndarray:
    """X as a finite 2-D float array with at least one row, or a ValueError naming why."""
    if hasattr(X, "dtypes"):  # a DataFrame: every column must be numeric
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        bad = [str(c) for c, t in zip(X.columns, X.dtypes)
               if not is_numeric_dtype(t) or is_bool_dtype(t)]
        if bad:
            raise ValueError(f"X has non-numeric columns: {bad}")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("X must contain only numeric values") from exc
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got {arr.ndim}-D input; "
                         "reshape a single feature with X.reshape(-1, 1)")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("X contains NaN or infinite values")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"X has {arr.shape[1]} features, but the model was fitted with {n_features}")
    return arr


class DPKMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """Differentially private k-means (DPLloyd or DPLloyd-Impr) with a privacy ledger.

    Parameters
    ----------
    n_clusters : int
    epsilon : float
        Total privacy budget of one fit (add/remove adjacency).
    bounds : (lower, upper) or None
        Public bounds of every feature (scalars or arrays). Data outside are clipped.
        ``None`` reads them off the data: not private, warns ``PrivacyLeakWarning``.
    algorithm : {"dplloyd-impr", "dplloyd"}
    max_iter : int
        Iterations of "dplloyd" (DPLloyd-Impr chooses T by Su's rule).
    random_state : int, numpy SeedSequence or None
        Seed of every random draw. ``None`` draws fresh entropy, stored in ``seed_``.

    Attributes
    ----------
    cluster_centers_, n_iter_, ledger_, privacy_spent_, bounds_, seed_, n_clipped_
    """

    def __init__(self, n_clusters: int = 8, *, epsilon: float = 1.0, bounds=None,
                 algorithm: str = "dplloyd-impr", max_iter: int = 5, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.random_state = random_state

    # -- fitting -----------------------------------------------------------------------------
    def _resolve_bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.bounds is None:
            warnings.warn(
                "bounds=None: the bounds are read off the data (the papers' 'paper mode'). "
                "This leaks the extreme values of X and voids the privacy guarantee; pass "
                "public bounds=(lower, upper) instead.",
                PrivacyLeakWarning, stacklevel=3)
            lower, upper = X.min(axis=0), X.max(axis=0)
            upper = np.where(upper > lower, upper, lower + 1.0)
            return lower, upper
        if not isinstance(self.bounds, tuple | list) or len(self.bounds) != 2:
            raise ValueError("bounds must be a pair (lower, upper)")
        d = X.shape[1]
        sides = []
        for name, side in zip(("lower", "upper"), self.bounds):
            arr = np.asarray(side, dtype=float)
            if arr.ndim > 1 or arr.size not in (1, d):
                raise ValueError(f"{name} bounds must be a scalar or an array of length {d} "
                                 f"(n_features), got shape {arr.shape}")
            sides.append(np.broadcast_to(arr.reshape(-1), (d,)))
        if np.any(sides[0] >= sides[1]):
            raise ValueError("bounds must satisfy lower < upper in every feature")
        return check_bounds((sides[0], sides[1]))

    def _seed(self) -> np.random.SeedSequence:
        rs = self.random_state
        if rs is None:
            return np.random.SeedSequence()
        if isinstance(rs, np.random.SeedSequence):
            return rs
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool) and rs >= 0:
            return np.random.SeedSequence(int(rs))
        raise ValueError("random_state must be a non-negative int, a numpy SeedSequence or None")

    def fit(self, X: ArrayLike, y=None) -> DPKMeans:
        """Fit on X (y is ignored). Spends ``epsilon``, recorded in ``ledger_``."""
        X = _check_X(X)
        if isinstance(self.n_clusters, bool) or not isinstance(self.n_clusters, numbers.Integral):
            raise ValueError(f"n_clusters must be an integer, got {self.n_clusters!r}")
        k = check_positive_int(self.n_clusters, "n_clusters")
        eps = check_epsilon(self.epsilon)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {self.algorithm!r}")
        bounds = self._resolve_bounds(X)
        if self.algorithm == "dplloyd":
            config = ALGORITHMS["dplloyd"](k, eps, bounds, iterations=check_positive_int(
                self.max_iter, "max_iter"))
        else:
            config = ALGORITHMS["dplloyd-impr"](k, eps, bounds, n_records=X.shape[0])
        seed = self._seed()
        result = run(X, config, seed)
        self.cluster_centers_ = result.centroids[0]
        self.n_iter_ = config.iterations
        self.ledger_ = result.ledger
        self.privacy_spent_: PrivacyCost = result.ledger.total()
        self.bounds_ = bounds
        self.seed_ = seed.entropy
        self.n_clipped_ = result.n_clipped
        self.n_features_in_ = X.shape[1]
        self.paper_mode_ = self.bounds is None
        return self

    # -- using a fitted model (all post-processing) -------------------------------------------
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Index of the nearest private centroid for each row."""
        check_is_fitted(self, "cluster_centers_")
        return assign(_check_X(X, self.n_features_in_), self.cluster_centers_)

    def fit_predict(self, X: ArrayLike, y=None) -> np.ndarray:
        return self.fit(X).predict(X)

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Euclidean distances from each row to each private centroid."""
        check_is_fitted(self, "cluster_centers_")
        X = _check_X(X, self.n_features_in_)
        C = self.cluster_centers_
        squared = (X * X).sum(axis=1)[:, None] - 2.0 * X @ C.T + (C * C).sum(axis=1)[None, :]
        return np.sqrt(np.maximum(squared, 0.0))  # (N, k): no (N, k, d) intermediate

    def score(self, X: ArrayLike, y=None) -> float:
        """Negative SSE of X under the private centroids (sklearn's convention: higher is better)."""
        check_is_fitted(self, "cluster_centers_")
        return -float(metrics.sse(_check_X(X, self.n_features_in_), self.cluster_centers_))
