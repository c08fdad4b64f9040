"""A scikit-learn style estimator for differentially private k-prototypes on mixed data (book
chapter 11; Shang, Zhao, Ren and Liu 2021, section 7).

``DPKPrototypes`` is the *corrected* DI k-prototypes of :mod:`dpkmeans.papers.di.variants`
(:func:`~dpkmeans.papers.di.variants.kprototypes_corrected`) behind the API of
:class:`~dpkmeans.api.estimators.DPKMeans`: the categorical columns become scaled one-hot blocks
(:mod:`dpkmeans.engine.prototypes`), so that the k-prototypes distance of the paper's eq. 6 is the
squared
Euclidean distance and the fit is one run of the DP-Lloyd engine (:func:`dpkmeans.engine.loop.run`).
The as-published variants stay in the paper module.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpkmeans.api.estimators import (
    LabelsMixin,
    budget_form,
    by_column,
    charge_accountant,
    check_accountant,
    check_numeric_part,
    column_names,
    is_dask_array,
    public_bounds,
    reject_sparse,
    seed_sequence,
    squared_distances,
    validate_numeric,
)
from dpkmeans.compute import metrics
from dpkmeans.compute.backends import BACKENDS, get_backend
from dpkmeans.compute.lloyd import assign
from dpkmeans.engine.checks import check_clusters
from dpkmeans.engine.equal_privacy import laplace_at
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.loop import run
from dpkmeans.engine.prototypes import MixedLayout, decode, encode
from dpkmeans.errors import InvalidParameterError, PrivacyLeakWarning
from dpkmeans.papers.di.iterations import IterationPlan, prototypes_iterations
from dpkmeans.papers.di.variants import kmeans_corrected, kprototypes_corrected
from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger
from dpkmeans.privacy.identifiability import epsilon_from_rho, rho_from_epsilon
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_real

__all__ = ["DPKPrototypes"]

#: The values of ``handle_unknown``, and the level that "other" maps unknown categories to.
HANDLE_UNKNOWN = ("error", "other")
OTHER = "other"

#: The value of ``categories`` that reads the category lists off the data (as-published, not
#: private: a ``PrivacyLeakWarning`` and a leak in the ledger).
CATEGORIES_FROM_DATA = "from-data"

#: What the ledger records when the category lists are read off the data
#: (``categories="from-data"``).
CATEGORIES_LEAK = ("the category lists were read off the data (categories='from-data'): which "
                   "categories occur is data-dependent, so a neighbour can change the one-hot "
                   "layout and no epsilon describes the release")


#: What the ledger records about the number of iterations and the split (no cost: they read
#: public inputs only, N included, which replace adjacency does not protect).
PLAN_NOTE = ("T = {T} iterations and the numeric/categorical split by the rule of book "
             "chapter 11, from public inputs: k, the bounds, the category lists, the budget "
             "and N (every replace-neighbour has as many records), so they cost nothing")


class _Budget(NamedTuple):
    """The checked budget form: ``kind`` is "epsilon", "rho" (one rho with one m) or
    "rho-pair" (rho=(rho_r, rho_c) with m=(m_r, m_c))."""

    kind: str
    epsilon: float | None
    rho: tuple[float, ...]
    m: tuple[int, ...]
    share: float | None


def _is_frame(X: object) -> bool:
    """A pandas DataFrame (duck-typed as scikit-learn does)."""
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_categorical_dtype(dtype: Any) -> bool:
    """The dtypes that ``categorical=None`` takes as categorical: category, object, bool and
    string."""
    from pandas.api.types import is_bool_dtype, is_object_dtype, is_string_dtype

    return (isinstance(dtype, pd.CategoricalDtype) or is_bool_dtype(dtype)
            or is_object_dtype(dtype) or is_string_dtype(dtype))


def _object_array(values: list) -> np.ndarray:
    """A 1-D object array of ``values`` as they are (tuples stay single categories)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _index(values: Any) -> pd.Index:
    """An object Index of categories, for exact lookups (tuples stay single categories)."""
    return pd.Index(list(values), dtype=object, tupleize_cols=False)


def _is_pair(value: object) -> bool:
    return isinstance(value, tuple | list | np.ndarray)


def _holds_numbers(column: np.ndarray) -> bool:
    """Whether every value of a categorical column is a number or a string that reads as one
    (booleans do not count): a numeric column stored as text, probably."""
    values = pd.Series(column, dtype=object)
    if values.map(lambda v: isinstance(v, bool | np.bool_)).any():
        return False
    return bool(pd.to_numeric(values, errors="coerce").notna().all())


class DPKPrototypes(LabelsMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """Differentially private k-prototypes on mixed numeric and categorical data (corrected).

    The k-prototypes distance of Shang et al. (2021), eq. 6 (Huang 1998),

        d(x, u) = sum_l (x^r_l - u^r_l)^2 + gamma sum_l [x^c_l != u^c_l],

    is the squared Euclidean distance between records whose categorical attributes are one-hot
    coded and scaled by sqrt(gamma / 2) (:mod:`dpkmeans.engine.prototypes`), so a fit is one run of the
    DP-Lloyd engine on the augmented records (book chapter 11). This is the **corrected**
    algorithm of :func:`dpkmeans.papers.di.variants.kprototypes_corrected`:

    * each iteration releases every cluster's (numeric sum, count) with Laplace noise (the
      counts are noisy too) and, for every categorical attribute, every cluster's mode by the
      exponential mechanism on its category counts;
    * the numeric and the categorical parts compose **sequentially** (eps_r + eps_c, not the
      published max), each spread over the iterations by the normalised halving schedule, and
      an iteration's categorical budget is **split over the attributes**;
    * sensitivities are those of **replace** adjacency (one record replaced by another: it can
      leave one cluster and join another), the DI setting; the numeric sums are measured
      from the public box's midpoint (book chapter 5), so the numeric sensitivity is
      2 (sum_i (u_i - l_i) / 2 + 1) (d + 2 on [0, 1]^d; the papers' 2 (d + 1) from the origin);
    * the initial prototypes are public (sphere packing in the numeric box, random modes), k is
      fixed and a run stops once no prototype moves by 1e-3 or more (a test on releases);
    * the number of iterations T and the numeric/categorical split come from public inputs by
      the rule of book chapter 11 (``max_iter`` only bounds T).

    The as-published algorithm (parallel composition, full categorical budget per attribute,
    exact counts, Canopy initialisation) is not offered here; it stays in the paper module.
    Without categorical columns the estimator is the corrected DI k-means
    (:func:`~dpkmeans.papers.di.variants.kmeans_corrected`).

    Parameters
    ----------
    n_clusters : int
        k, a public choice.
    epsilon : float or None
        Total DP budget of one fit (replace adjacency), numeric and categorical parts together
        (1.0 when neither ``epsilon`` nor ``rho`` is given, as in ``DPKMeans``).
    rho, m : float and int, or pairs, or None
        A differential-identifiability budget instead of ``epsilon`` (Lee and Clifton 2012): a
        posterior bound ``rho`` in (1/m, 1) over ``m`` possible worlds. One ``rho`` with one
        ``m`` is the guarantee of the whole fit: it is converted once, eps = ln((m-1) rho /
        (1-rho)), and spent as ``epsilon``. The pairs ``rho=(rho_r, rho_c)``, ``m=(m_r, m_c)``
        are the paper's: eps_r from (rho_r, m_r) for the numeric part and eps_c from (rho_c, m_c)
        for the categorical part, composed sequentially (the paper's rho_r = 0.05, m_r = 10001,
        rho_c = 0.7, m_c = 2 give 6.2659 + 0.8473 = 7.1132). Give at most one of ``epsilon``
        and ``rho`` (with ``m``).
    delta : float or None
        The delta of an (epsilon, delta) guarantee (None or 0, the default: pure epsilon-DP;
        not with the pairs of ``rho``). With ``delta > 0`` the fit runs its Laplace form at
        (epsilon, delta): the same releases with less noise, the budgets scaled until the
        privacy-loss distribution of every release (numeric and categorical, under replace
        adjacency) reaches (epsilon, delta) (book chapter 12, "Equal privacy"); ``ledger_``
        then composes tightly. The categorical modes keep the exponential mechanism, so there
        is no Gaussian twin.
    categorical_share : float in (0, 1) or None
        With a single budget (``epsilon``, or one ``rho`` with one ``m``): the share of it spent
        on the modes. ``None`` takes the rule's share (book chapter 11,
        :func:`~dpkmeans.papers.di.iterations.prototypes_iterations`): each part gets its
        smallest meaningful per-iteration budget's share, eps_c,m / (eps_r,m + eps_c,m), from
        k, the bounds and the category lists (0.57 with one numeric column on [0, 1] and one
        two-category column). Not with the pairs (they fix the split); ignored when there
        are no categorical columns.
    categorical : list of column names or integer positions, or None
        The categorical columns. ``None``: a DataFrame's columns of dtype category, object,
        string or bool; none for an array. Their order (as listed, or X's) is the order of
        ``categories``, ``categories_`` and the columns of ``cluster_modes_``. Names need a
        DataFrame; integers are always positions. All other columns are numeric, and at least
        one must be.
    bounds : (lower, upper), dict or None
        Public bounds of the **numeric** columns (scalars or arrays of their length; a tuple, a
        list, or an array of two rows such as ``np.array([-1, 1])``), or, with a
        DataFrame, a dict of one (lower, upper) per numeric column by name
        (``{"age": (0, 100), "income": (0, 2e5)}``; a column missing or extra is an error), in
        their own units: the data are not rescaled, and values outside are clipped, with a
        ``ClippingWarning`` that says only that clipping happened (how many values, and in
        which columns, is private and not shown). ``None`` reads
        them off the data ("paper mode"): not private, warns ``PrivacyLeakWarning``, and the
        ledger records the leak (``ledger_.is_private`` is then False). The distance weighs the
        numeric columns as given, and the noise grows with the widths u_i - l_i: scale them to a
        common range by their public bounds first (the paper uses [0, 1], where gamma = 0.12).
    categories : list of lists, dict, "from-data" or None
        The public category list of each categorical column (as scikit-learn's OneHotEncoder),
        or, with a DataFrame, a dict of them by column name (``{"sex": ["f", "m"]}``; it must
        name every categorical column and nothing else). Like ``bounds``, they are public
        inputs: every categorical column needs its list, and ``None`` (the default) with a
        categorical column is a ValueError naming the columns without one (and, among them,
        those holding only numbers, probably numeric columns stored as text: convert them,
        e.g. with ``pandas.to_numeric``). A category dtype's categories are **not** taken as
        declared: pandas reads them off the data (``astype("category")``) unless they were
        set, and the two cannot be told apart; pass the list if it is public.
        ``"from-data"`` (as-published, not private) reads them off the data (a category
        dtype's categories, else the sorted distinct values): which categories occur is
        data-dependent, so this warns ``PrivacyLeakWarning`` and the ledger records the leak
        ("the category lists were read off the data", with the engine's
        ``data-derived-bounds`` flaw).
    handle_unknown : {"error", "other"}
        A value outside its column's list: ``"error"`` raises ValueError naming the column (not
        the value, which is private) at fit and later; ``"other"`` maps it to an extra
        level ``"other"``, which is appended at fit time to every column's list (unless the
        list already holds
        ``"other"``, which is then used) and can be chosen as a mode like any category.
    gamma : float > 0
        The weight of a categorical mismatch in eq. 6 (the paper uses 0.12 on [0, 1] data).
    max_iter : int or None
        An upper bound on T, the iterations of the halving schedule. T itself comes from the
        rule of book chapter 11 (:func:`~dpkmeans.papers.di.iterations.prototypes_iterations`,
        Su et al.'s (2016) criterion for DPLloyd-Impr adapted to this algorithm): the most
        iterations whose last, smallest budget still makes a noisy prototype meaningful, 2 to
        7, from N, k, the bounds, the category lists and the budget. ``None`` (default) runs
        the rule's T. Fewer run if the prototypes stop moving (the budget of the iterations
        not run is left unspent).
    n_records : int or None
        N, the number the rule reads. ``None`` (default): the number of records of X. Replace
        adjacency, the relation of this estimator's guarantee, does not protect N (every
        neighbour has as many records), so reading it costs nothing and no noisy count is
        needed (unlike ``DPKMeans``' add/remove algorithms, whose ``n_records_share`` has no
        counterpart here). State it to fix T before seeing the data.
    accountant : PrivacyLedger or None
        A ledger shared across fits (under replace adjacency, the relation of this
        estimator's guarantee) with a total budget: a fit that would exceed what is left
        raises ``BudgetExceededError`` before any noise is drawn, and so does, with
        ``SeedReuseError``, a fit whose seed repeats that of a fit the accountant absorbed
        (as in ``DPKMeans``). Without an accountant no seed is checked.
    backend : {"memory", "dask"}
        Where the statistics are computed (:mod:`dpkmeans.compute.backends`); X itself must be in memory
        (it is encoded here). Same seed, same bits, either way.
    client : dask.distributed.Client or None
    random_state : int, numpy SeedSequence or None
        Seed of every random draw (a SeedSequence is copied, never advanced, so two fits with it
        agree). ``None`` draws fresh entropy, which is not stored.

    Attributes
    ----------
    cluster_centers_ : (k, n_numeric) array
        The numeric part of the private prototypes, in the units of the numeric columns.
    cluster_modes_ : (k, n_categorical) object array
        The categorical part: each cluster's chosen category of each categorical column, as
        values of ``categories_``.
    labels_ : (n_samples,) array
        The training records' nearest prototypes. Each label is a function of its own record:
        for the data holder, **not** a differentially private release. A pickled fitted model
        carries it, one label per training record: call :meth:`drop_labels` before saving or
        sharing the model.
    n_iter_ : int
        Iterations run (public: the stopping rule reads released prototypes only).
    n_iter_planned_ : int
        T, the iterations planned: the rule's, at most ``max_iter``.
    n_records_used_ : int
        The N the rule read (``n_records``, or the number of records of X).
    categorical_share_ : float or None
        The share of the budget spent on the modes (None without categorical columns).
    ledger_ : PrivacyLedger
        Every release with its mechanism, sensitivity, noise and budget (replace adjacency);
        ``privacy_spent_`` is its total.
    privacy_spent_ : PrivacyCost
        The epsilon actually spent (``epsilon_``, less if the run stopped early).
    epsilon_ : float
        The total DP epsilon budgeted: eps_r + eps_c.
    rho_ : float or None
        With ``rho``: the DI guarantee of the whole fit, rho_from_epsilon(epsilon_, m) with the
        numeric m (``m`` or ``m_r``). It holds under a single m for the whole record and Lee
        and Clifton's assumptions (uniform prior over m worlds, replace adjacency). None with
        ``epsilon``.
    categories_ : list of object arrays
        The category list of each categorical column, ``"other"`` included when appended.
    numeric_columns_, categorical_columns_ : int arrays
        Positions in X of the numeric and the categorical columns (``feature_names_in_`` at
        them gives their names).
    layout_ : MixedLayout or None
        The public one-hot layout (None without categorical columns).
    bounds_ : (lower, upper) arrays
        The bounds of the numeric columns that were used.
    paper_mode_ : bool
        Whether ``bounds`` were read off the data.
    n_features_in_ : int
    feature_names_in_ : array of str
        With a DataFrame whose column names are all strings.

    Notes
    -----
    ``predict`` gives the nearest prototype under eq. 6 with the fitted gamma, ``transform`` the
    eq. 6 distances to every prototype (squared, as eq. 6: not square-rooted) and ``score`` the
    negative k-prototypes cost (the sum of every record's distance to its nearest prototype).
    Missing values (NaN, None) are rejected: impute or drop them first.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from dpkmeans import DPKPrototypes
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"x": np.r_[rng.normal(0.25, 0.05, 500), rng.normal(0.75, 0.05, 500)],
    ...                   "colour": ["red"] * 500 + ["blue"] * 500})
    >>> model = DPKPrototypes(n_clusters=2, epsilon=4.0, bounds=(0.0, 1.0),
    ...                       categories={"colour": ["blue", "red"]}, random_state=0).fit(X)
    >>> model.cluster_centers_.round(2).ravel(), model.cluster_modes_.ravel()
    (array([0.22, 0.75]), array(['red', 'blue'], dtype=object))
    >>> model.n_iter_planned_, model.n_records_used_, round(model.categorical_share_, 2)
    (2, 1000, 0.57)
    >>> model.ledger_.neighbour, model.epsilon_
    ('replace', 4.0)
    """

    def __init__(self, n_clusters: int = 8, *, epsilon: float | None = None, rho=None, m=None,
                 categorical_share: float | None = None, categorical=None, bounds=None,
                 categories=None, handle_unknown: str = "error", gamma: float = 0.12,
                 max_iter: int | None = None, n_records: int | None = None, accountant=None,
                 backend: str = "memory", client=None, random_state=None,
                 delta: float | None = None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.rho = rho
        self.m = m
        self.categorical_share = categorical_share
        self.categorical = categorical
        self.bounds = bounds
        self.categories = categories
        self.handle_unknown = handle_unknown
        self.gamma = gamma
        self.max_iter = max_iter
        self.n_records = n_records
        self.accountant = accountant
        self.backend = backend
        self.client = client
        self.random_state = random_state
        self.delta = delta

    # -- parameters ----------------------------------------------------------------------------
    def _check_params(self) -> tuple[int, _Budget, float, int | None]:
        k = check_positive_int(self.n_clusters, "n_clusters")
        budget = self._check_budget()
        gamma = check_real(self.gamma, "gamma")
        if not (np.isfinite(gamma) and gamma > 0):
            raise ValueError(f"gamma must be finite and > 0, got {self.gamma!r}")
        T = None if self.max_iter is None else check_positive_int(self.max_iter, "max_iter")
        if self.n_records is not None:
            check_positive_int(self.n_records, "n_records")
        if self.handle_unknown not in HANDLE_UNKNOWN:
            raise ValueError(f"handle_unknown must be one of {HANDLE_UNKNOWN}, got "
                             f"{self.handle_unknown!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.delta is not None and self.delta != 0:
            check_delta(self.delta)
            if budget.kind == "rho-pair":
                raise ValueError("delta: the pairs rho=(rho_r, rho_c), m=(m_r, m_c) are the "
                                 "paper's separate budgets; give epsilon (or one rho) with delta")
        return k, budget, gamma, T

    def _check_budget(self) -> _Budget:
        forms = ("give exactly one budget: epsilon, or rho with m (one number each, or the "
                 "pairs rho=(rho_r, rho_c), m=(m_r, m_c))")
        has_eps = budget_form(self.epsilon, self.rho, self.m, forms, default_epsilon=1.0,
                              m_form="an integer >= 2, or the pair m=(m_r, m_c) with "
                                     "rho=(rho_r, rho_c)") == "epsilon"
        share = None
        if self.categorical_share is not None:
            share = check_real(self.categorical_share, "categorical_share")
            if not 0.0 < share < 1.0:
                raise ValueError(f"categorical_share must lie in (0, 1), got {share}")
        if has_eps:
            epsilon = 1.0 if self.epsilon is None else check_epsilon(self.epsilon)
            return _Budget("epsilon", epsilon, (), (), share)
        if _is_pair(self.rho) != _is_pair(self.m):
            raise ValueError(f"rho and m must both be numbers or both be pairs (rho_r, rho_c) "
                             f"and (m_r, m_c); got rho={self.rho!r}, m={self.m!r}")
        if not _is_pair(self.rho):
            epsilon_from_rho(self.rho, self.m)  # checks rho in (1/m, 1) and m >= 2
            return _Budget("rho", None, (float(self.rho),), (int(self.m),), share)
        if len(self.rho) != 2 or len(self.m) != 2:
            raise ValueError(f"the pairs must be rho=(rho_r, rho_c) and m=(m_r, m_c); got "
                             f"rho={self.rho!r}, m={self.m!r}")
        if share is not None:
            raise ValueError("categorical_share is for a single budget (epsilon, or one rho "
                             "with one m); the pairs rho=(rho_r, rho_c), m=(m_r, m_c) set the "
                             "split themselves")
        for part, r, mm in zip(("numeric (rho_r, m_r)", "categorical (rho_c, m_c)"),
                               self.rho, self.m):
            try:
                epsilon_from_rho(r, mm)
            except (TypeError, ValueError) as err:
                raise type(err)(f"rho, m: the {part} part: {err}") from err
        return _Budget("rho-pair", None, tuple(float(r) for r in self.rho),
                       tuple(int(mm) for mm in self.m), None)

    def _seed(self) -> np.random.SeedSequence:
        return seed_sequence(self.random_state)

    def _iteration_plan(self, n: int, k: int, bounds: tuple[np.ndarray, np.ndarray],
                        categories: list[np.ndarray], budget: _Budget, total: float | None,
                        max_iter: int | None) -> IterationPlan:
        """T and the categorical share by the rule of book chapter 11
        (:func:`~dpkmeans.papers.di.iterations.prototypes_iterations`), from N (``n_records``,
        else the n rows of X: the same for every replace-neighbour), k, the public box and
        category lists, and the budget."""
        n_records = n if self.n_records is None else int(self.n_records)
        levels = [len(c) for c in categories]
        if budget.kind == "rho-pair":
            pair = tuple(epsilon_from_rho(r, mm) for r, mm in zip(budget.rho, budget.m))
            return prototypes_iterations(n_records, k, bounds, levels, budgets=pair,
                                         max_iter=max_iter)
        return prototypes_iterations(n_records, k, bounds, levels, epsilon=total,
                                     categorical_share=budget.share, max_iter=max_iter)

    # -- input ---------------------------------------------------------------------------------
    def _name(self, j: int) -> object:
        """Column j's name for messages (its position without names)."""
        return column_names(self, [j])[0]

    def _resolve_categorical(self, X: Any) -> list[int]:
        """The positions of the categorical columns (fit only), in their declared order."""
        spec = self.categorical
        frame = _is_frame(X)
        if spec is None:
            if not frame:
                return []
            return [j for j, t in enumerate(X.dtypes) if _is_categorical_dtype(t)]
        if isinstance(spec, str | bytes) or not isinstance(spec, list | tuple | np.ndarray | pd.Index):
            raise InvalidParameterError(f"categorical must be a list of column names or "
                                        f"integer positions, got {spec!r}")
        items = list(spec)
        if not items:
            return []
        if frame:
            n_cols, labels = X.shape[1], list(X.columns)
        else:
            arr = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
            if arr.ndim != 2:
                raise ValueError(f"X must be a 2-D array (rows x columns), got {arr.ndim}-D")
            n_cols, labels = arr.shape[1], None
        positions = []
        for item in items:
            if isinstance(item, bool | np.bool_):
                raise InvalidParameterError("categorical must list column names or integer "
                                            "positions; boolean masks are not supported")
            if isinstance(item, numbers.Integral):
                if not 0 <= int(item) < n_cols:
                    raise ValueError(f"categorical: position {item} is outside X's {n_cols} "
                                     f"columns (0 to {n_cols - 1})")
                positions.append(int(item))
            elif isinstance(item, str):
                if labels is None:
                    raise ValueError(f"categorical names the column {item!r}, but X has no "
                                     f"column names: pass a DataFrame or integer positions")
                found = [j for j, c in enumerate(labels) if c == item]
                if not found:
                    raise ValueError(f"categorical: no column {item!r} in X (columns: "
                                     f"{[str(c) for c in labels]})")
                positions.append(found[0])
            else:
                raise InvalidParameterError(f"categorical must list column names or integer "
                                            f"positions, got {item!r}")
        if len(set(positions)) != len(positions):
            raise ValueError(f"categorical lists a column more than once: {items}")
        return positions

    def _validate_X(self, X: ArrayLike, *, reset: bool) -> tuple[np.ndarray, np.ndarray]:
        """(numeric (N, d_r) float64, categorical (N, d_c) object) from a DataFrame or array;
        at fit (``reset``) the columns are resolved and recorded."""
        if is_dask_array(X):
            raise ValueError("invalid X: DPKPrototypes encodes X in memory (a DataFrame or an "
                             "array); backend='dask' distributes the statistics")
        reject_sparse(X)
        cat = self._resolve_categorical(X) if reset else list(self.categorical_columns_)
        if not cat:
            numeric = validate_numeric(self, X, reset=reset)
            if reset:
                self.numeric_columns_ = np.arange(numeric.shape[1])
                self.categorical_columns_ = np.zeros(0, dtype=int)
            return numeric, np.empty((numeric.shape[0], 0), dtype=object)
        frame = _is_frame(X)
        table = X if frame or isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
        if table.ndim != 2:
            raise ValueError(f"X must be 2-D (rows x columns), got {table.ndim}-D")
        validate_data(self, table, reset=reset, skip_check_array=True)  # names, n_features_in_
        n, d = table.shape
        if n == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape={table.shape}) while a "
                             f"minimum of 1 is required: X has no records")
        num = [j for j in range(d) if j not in set(cat)]
        if reset:
            self.numeric_columns_ = np.asarray(num, dtype=int)
            self.categorical_columns_ = np.asarray(cat, dtype=int)
        if not num:
            raise ValueError("X has no numeric column: DPKPrototypes needs at least one "
                             "(k-modes on categorical data alone is not offered)")
        numeric = self._numeric_part(table, num, frame)
        categorical = np.empty((n, len(cat)), dtype=object)
        for l, j in enumerate(cat):
            column = table.iloc[:, j].to_numpy(dtype=object) if frame else table[:, j]
            missing = pd.isna(column)
            if np.any(missing):
                raise ValueError(f"X has missing values in categorical column "
                                 f"{self._name(j)!r}: drop or impute them first (a "
                                 f"missing value is not a category)")
            categorical[:, l] = column
        return numeric, categorical

    def _numeric_part(self, table: Any, num: list[int], frame: bool) -> np.ndarray:
        if frame:
            from pandas.api.types import is_bool_dtype, is_numeric_dtype

            bad = [self._name(j) for j in num
                   if not is_numeric_dtype(table.dtypes.iloc[j]) or is_bool_dtype(table.dtypes.iloc[j])]
            if bad:
                raise ValueError(f"X has non-numeric columns not listed in categorical: {bad}")
        part = table.iloc[:, num] if frame else table[:, num]
        return check_numeric_part(self, part, self._names(num))

    def _resolve_bounds(self, numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return public_bounds(self.bounds, numeric, columns="numeric",
                             names=self._column_names(self.numeric_columns_))

    def _names(self, columns: Any) -> list[object]:
        return column_names(self, columns)

    def _column_names(self, columns: np.ndarray) -> list[object] | None:
        """The names of ``columns`` for a parameter given by name (None: X had no names)."""
        if getattr(self, "feature_names_in_", None) is None:
            return None
        return self._names(columns)

    def _from_data(self) -> bool:
        """Whether ``categories="from-data"``: the category lists are read off the data."""
        return isinstance(self.categories, str) and self.categories == CATEGORIES_FROM_DATA

    def _undeclared(self, X: Any, categorical: np.ndarray) -> str:
        """The error for categorical columns without declared categories: which columns, those
        that hold only numbers (probably numeric) or have a category dtype, and what to do."""
        names = self._names(self.categorical_columns_)
        numbers_only = [name for l, name in enumerate(names) if _holds_numbers(categorical[:, l])]
        dtype = [name for name, j in zip(names, self.categorical_columns_)
                 if _is_frame(X) and isinstance(X.dtypes.iloc[int(j)], pd.CategoricalDtype)]
        text = (f"categorical column(s) {names} have no declared categories: pass each one's "
                "public list of categories as categories= (a dict by column name, or a list "
                "of lists in the order of the categorical columns). A list read off the data "
                f"is not private: categories={CATEGORIES_FROM_DATA!r} reads it, warns "
                "PrivacyLeakWarning and records the leak in the ledger")
        if numbers_only:
            text += (f". Column(s) {numbers_only} hold only numbers, so they are probably "
                     "numeric: convert them to numbers (e.g. pandas.to_numeric) and leave them "
                     "out of categorical")
        if dtype:
            text += (f". Column(s) {dtype} have a category dtype, whose categories pandas reads "
                     "off the data unless they were set: if you set them from a public list, "
                     "pass that list")
        return text + "."

    def _resolve_categories(self, X: Any, categorical: np.ndarray) -> list[np.ndarray]:
        """The category list of each categorical column (fit only), "other" appended if
        handle_unknown="other"."""
        d_c = categorical.shape[1]
        if self.categories is None:
            raise ValueError(self._undeclared(X, categorical))
        if self._from_data():
            warnings.warn(
                f"categories={CATEGORIES_FROM_DATA!r}: the category lists are read off the "
                "data. Which categories occur is data-dependent, so this voids the privacy "
                "guarantee; pass the public lists as categories= instead.",
                PrivacyLeakWarning, stacklevel=3)
            lists = [self._observed_levels(X, int(j), categorical[:, l])
                     for l, j in enumerate(self.categorical_columns_)]
        else:
            spec = self.categories
            if isinstance(spec, dict):
                spec = by_column("categories", spec, self._column_names(self.categorical_columns_),
                                 "categorical")
            if isinstance(spec, str | bytes) or not isinstance(spec, list | tuple):
                raise InvalidParameterError(
                    f"categories must be a list with one list of categories per categorical "
                    f"column, a dict of them by column name, or {CATEGORIES_FROM_DATA!r}, got "
                    f"{spec!r}")
            if len(spec) != d_c:
                raise ValueError(f"categories has {len(spec)} lists, but X has {d_c} "
                                 f"categorical columns")
            lists = []
            for l, entry in enumerate(spec):
                name = self._name(int(self.categorical_columns_[l]))
                if isinstance(entry, str | bytes) or not isinstance(
                        entry, list | tuple | np.ndarray | pd.Index):
                    raise InvalidParameterError(f"categories[{l}] (column {name!r}) must be a "
                                                f"list of categories, got {entry!r}")
                values = list(entry)
                index = _index(values)
                if not values or index.hasnans or not index.is_unique:
                    raise ValueError(f"categories[{l}] (column {name!r}) must be a non-empty "
                                     f"list of distinct, non-missing categories, got {values!r}")
                lists.append(values)
        if self.handle_unknown == "other":
            lists = [v if OTHER in v else [*v, OTHER] for v in lists]
        return [_object_array(v) for v in lists]

    @staticmethod
    def _observed_levels(X: Any, j: int, column: np.ndarray) -> list:
        """A category dtype's categories, else the distinct values (sorted if they sort)."""
        if _is_frame(X) and isinstance(X.dtypes.iloc[j], pd.CategoricalDtype):
            return list(X.dtypes.iloc[j].categories)
        values = list(pd.unique(column))
        try:
            return sorted(values)
        except TypeError:
            return values

    def _codes(self, categorical: np.ndarray, categories: list[np.ndarray]) -> np.ndarray:
        """Integer codes into ``categories``; unknown values raise or map to "other"."""
        codes = np.empty(categorical.shape, dtype=np.int64)
        for l, levels in enumerate(categories):
            index = _index(levels)
            code = index.get_indexer(categorical[:, l])
            unknown = code < 0
            if unknown.any():
                name = self._name(int(self.categorical_columns_[l]))
                if self.handle_unknown != "other":
                    raise ValueError(
                        f"categorical column {name!r} has values outside its public category "
                        f"list {list(levels)}; add them to categories or use "
                        f"handle_unknown='other'")
                code[unknown] = index.get_loc(OTHER)
            codes[:, l] = code
        return codes

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y=None) -> DPKPrototypes:
        """Fit on X (y is ignored). Spends ``epsilon_``, recorded in ``ledger_``.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Records with numeric and categorical columns (no missing values).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        DPKPrototypes
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            If a parameter or X is invalid (each error names it).
        dpkmeans.errors.BudgetExceededError
            If the ``accountant`` has too little budget left (nothing is drawn).
        dpkmeans.errors.SeedReuseError
            If the ``accountant`` already absorbed a fit with this seed material (nothing is
            drawn; see ``DPKMeans``).
        """
        k, budget, gamma, T = self._check_params()
        numeric, categorical = self._validate_X(X, reset=True)
        n, d_r, d_c = numeric.shape[0], numeric.shape[1], categorical.shape[1]
        check_clusters(k, n)  # the data holder's error: the count is not quoted
        bounds = self._resolve_bounds(numeric)
        categories_read_off = d_c > 0 and self._from_data()
        if d_c == 0 and self.categories is not None and not self._from_data():
            raise ValueError("categories were given, but X has no categorical column")
        categories = self._resolve_categories(X, categorical) if d_c else []
        codes = self._codes(categorical, categories)
        m_numeric = budget.m[0] if budget.m else None
        if budget.kind == "rho-pair" and d_c == 0:
            raise ValueError("the pairs rho=(rho_r, rho_c), m=(m_r, m_c) need categorical "
                             "columns; X has none: give one rho with one m")
        total = budget.epsilon if budget.kind == "epsilon" else (
            epsilon_from_rho(budget.rho[0], budget.m[0]) if budget.kind == "rho" else None)
        plan = self._iteration_plan(n, k, bounds, categories, budget, total, T)
        T, budget = plan.iterations, budget._replace(share=plan.categorical_share)
        if d_c == 0:
            layout, data = None, numeric
            config = kmeans_corrected(bounds, epsilon=total, n_clusters=k, iterations=T)
        else:
            layout = MixedLayout(tuple(len(c) for c in categories), d_r, gamma)
            data = encode(numeric, codes, layout)
            if total is not None:
                config = kprototypes_corrected(layout, bounds, epsilon=total,
                                               categorical_share=budget.share, n_clusters=k,
                                               iterations=T)
            else:
                (rho_r, rho_c), (m_r, m_c) = budget.rho, budget.m
                config = kprototypes_corrected(layout, bounds, rho_r=rho_r, rho_c=rho_c,
                                               m_r=m_r, m_c=m_c, n_clusters=k, iterations=T)
        delta = None if not self.delta else float(self.delta)
        if delta is not None:  # its Laplace form at (epsilon, delta): PLD composition
            config = laplace_at(config, float(config.epsilon), delta)
        if self.bounds is None or categories_read_off:
            config = replace(config, flaws=(*config.flaws, DATA_DERIVED_BOUNDS), target=None)
        cost = PrivacyCost(float(config.epsilon)) if config.target is None else config.target
        seed = self._seed()
        check_accountant(self.accountant, cost, config.neighbour, "DPKPrototypes", seed=seed)
        tight = config.target is not None
        ledger = PrivacyLedger(budget=None if config.flaws else cost,
                               neighbour=config.neighbour,
                               accounting="tight" if tight else "basic")
        ledger.post_process(PLAN_NOTE.format(T=T))
        if categories_read_off:
            ledger.leak(CATEGORIES_LEAK)
        with get_backend(self.backend, client=self.client) as backend:
            result = run(data, config, seed, ledger=ledger, backend=backend)
        charge_accountant(self.accountant, result.ledger, "DPKPrototypes", seed=seed)
        prototypes = result.centroids[0]
        if layout is None:
            centres, mode_codes = prototypes, np.zeros((k, 0), dtype=int)
        else:
            centres, mode_codes = decode(prototypes, layout)
        self.cluster_centers_ = centres
        self.cluster_modes_ = np.empty((k, d_c), dtype=object)
        for l, levels in enumerate(categories):
            self.cluster_modes_[:, l] = levels[mode_codes[:, l]]
        self.categories_ = categories
        self.layout_ = layout
        self.labels_ = assign(data, prototypes)
        self.n_iter_ = int(result.iterations_run[0])
        self.n_iter_planned_ = plan.iterations
        self.n_records_used_ = plan.n_records
        self.categorical_share_ = None if layout is None else float(
            config.modes.schedule.sum() / config.epsilon)
        self.ledger_ = result.ledger
        self.privacy_spent_: PrivacyCost = result.ledger.total()
        self.epsilon_ = float(config.epsilon if config.target is None else config.target.epsilon)
        self.rho_ = None if m_numeric is None else rho_from_epsilon(self.epsilon_, m_numeric)
        self.bounds_ = bounds
        self.paper_mode_ = self.bounds is None
        return self

    # -- using a fitted model (all post-processing) -------------------------------------------
    def _prototypes(self) -> np.ndarray:
        """The fitted prototypes as augmented rows (k, width), from ``cluster_centers_`` and
        ``cluster_modes_``."""
        centres = np.asarray(self.cluster_centers_, dtype=float)
        if self.layout_ is None:
            return centres
        codes = np.empty(self.cluster_modes_.shape, dtype=np.int64)
        for l, levels in enumerate(self.categories_):
            code = _index(levels).get_indexer(self.cluster_modes_[:, l])
            if np.any(code < 0):
                raise ValueError(f"cluster_modes_ column {l} holds values outside categories_")
            codes[:, l] = code
        return encode(centres, codes, self.layout_)

    def _encoded(self, X: ArrayLike) -> np.ndarray:
        """X as augmented rows (the fitted layout, categories and handle_unknown)."""
        numeric, categorical = self._validate_X(X, reset=False)
        if self.layout_ is None:
            return numeric
        return encode(numeric, self._codes(categorical, self.categories_), self.layout_)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Index of the nearest private prototype of each row under eq. 6 (fitted gamma).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Records with numeric and categorical columns (no missing values).

        Returns
        -------
        ndarray of shape (n_samples,)
            The cluster of each row.
        """
        check_is_fitted(self, "cluster_centers_")
        return assign(self._encoded(X), self._prototypes())

    def fit_predict(self, X: ArrayLike, y=None) -> np.ndarray:
        """Fit on X and give the training records' clusters (``labels_``).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Records with numeric and categorical columns (no missing values).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        ndarray of shape (n_samples,)
            ``labels_``: for the data holder, not a private release.
        """
        return self.fit(X).labels_

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The eq. 6 distances (N, k) from each row to each private prototype: squared
        numeric distance plus gamma times the mismatches, **not** square-rooted.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Records with numeric and categorical columns (no missing values).

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
            The eq. 6 distances.
        """
        check_is_fitted(self, "cluster_centers_")
        return squared_distances(self._encoded(X), self._prototypes())

    def score(self, X: ArrayLike, y=None) -> float:
        """The negative k-prototypes cost of X under the private prototypes (scikit-learn's
        convention: higher is better).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Records with numeric and categorical columns (no missing values).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        float
            minus the sum of every row's eq. 6 distance to its nearest prototype.
        """
        check_is_fitted(self, "cluster_centers_")
        return -float(metrics.sse(self._encoded(X), self._prototypes()))
