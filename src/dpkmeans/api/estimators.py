"""A scikit-learn style estimator over the DP-Lloyd engine: every corrected algorithm of the
book (:mod:`dpkmeans.api.catalogue`; chapter 5 introduces it, the synthesis chapter compares them).

``DPKMeans(n_clusters, epsilon, bounds, algorithm, random_state)`` follows diffprivlib's API
but avoids the bugs of its version 0.6.6 (book chapter 5): the parameters are never mutated (clone
safe), every cluster is noised every iteration, Su's split is the right way round, the record
count behind Su's rule is public or paid for, and ``bounds=None`` ("paper mode", bounds read
off the data) warns with ``PrivacyLeakWarning`` and is recorded as a leak in the ledger. It
passes scikit-learn's ``check_estimator`` built with its defaults, but for ``check_clustering``'s
utility bar, which epsilon 1 misses on 50 records (``tests/api/test_hardening3.py``), and in full
at epsilon 100 (``tests/api/test_estimators.py``).
"""

from __future__ import annotations

import numbers
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from dpkmeans.api.catalogue import CATALOGUE, Choice, FitInputs, build_at, choice, forms
from dpkmeans.api.plan import Plan, preview
from dpkmeans.compute import metrics
from dpkmeans.compute.backends import BACKENDS, get_backend
from dpkmeans.compute.backends.dask import lazy_labels
from dpkmeans.compute.backends.parquet import ParquetRows
from dpkmeans.compute.lloyd import assign
from dpkmeans.engine.checks import check_clusters
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import check_iterations, check_meaningful_iterations
from dpkmeans.engine.standalone import StandaloneConfig
from dpkmeans.errors import (
    BudgetExceededError,
    BudgetTooSmallError,
    InvalidParameterError,
    PrivacyLeakWarning,
    SeedReuseError,
)
from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger
from dpkmeans.privacy.counting import noisy_record_count
from dpkmeans.privacy.identifiability import epsilon_from_rho, rho_from_epsilon
from dpkmeans.privacy.noise import calibrate, min_epsilon, round_up
from dpkmeans.privacy.sensitivity import check_box
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import check_delta, check_epsilon, check_positive_int, check_real

__all__ = ["DPKMeans", "LabelsMixin", "budget_form", "charge_accountant", "check_accountant",
           "without_data"]


def _reject_non_numeric_columns(X: ArrayLike) -> None:
    """A DataFrame must have only numeric (not boolean) columns; name the others."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        bad = [str(c) for c, t in zip(X.columns, X.dtypes)
               if not is_numeric_dtype(t) or is_bool_dtype(t)]
        if bad:
            raise ValueError(f"X has non-numeric columns: {bad}")


def is_dask_array(X: object) -> bool:
    """A ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.") and hasattr(X, "chunks")


def _is_lazy(X: object) -> bool:
    """Data the Dask backend reads itself: a dask array or a streamed Parquet source."""
    return is_dask_array(X) or isinstance(X, ParquetRows)


def _bound_side(side: object, name: str, d: int) -> np.ndarray:
    """One side of ``bounds`` as a float array of length d (a scalar is broadcast)."""
    values = np.asarray(side, dtype=object).reshape(-1)
    if values.size == 0 or any(isinstance(v, str | bytes) or not isinstance(
            v, numbers.Real | np.floating | np.integer) or isinstance(v, bool | np.bool_)
            for v in values):
        raise InvalidParameterError(f"bounds: the {name} bound must be a number or an array "
                                    f"of numbers, got {side!r}")
    arr = np.asarray(side, dtype=float)
    if arr.ndim > 1 or arr.size not in (1, d):
        raise ValueError(f"bounds: the {name} bound must be a scalar or an array of length {d} "
                         f"(n_features), got shape {arr.shape}")
    return np.broadcast_to(arr.reshape(-1), (d,)).astype(float)


def _named(wanted: Any) -> str:
    """The catalogue's algorithms for which ``wanted(choice)`` holds, as prose names them:
    ``algorithm='dplloyd-impr', 'apdp' and 'balcan'``."""
    names = [f"'{name}'" for name, c in CATALOGUE.items() if wanted(c)]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"algorithm={listed}"


def _about_x(check: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run one of scikit-learn's input checks; its error is raised again without the data it
    quotes (:func:`without_data`) and saying that it is about X."""
    try:
        return check(*args, **kwargs)
    except (TypeError, ValueError) as err:
        message = without_data(str(err))
        if "X" not in message.split():
            message = f"invalid X: {message}"
        raise type(err)(message) from err


def column_names(estimator: BaseEstimator, positions: Sequence[int]) -> list[object]:
    """The names of X's columns at ``positions`` for messages: ``feature_names_in_`` when the
    estimator has them, else the positions."""
    names = getattr(estimator, "feature_names_in_", None)
    return [str(names[j]) if names is not None else int(j) for j in positions]


def reject_non_finite(values: np.ndarray, names: Sequence[object], kind: str = "") -> None:
    """Both estimators' error for NaN or infinite values in X (a float64 2-D array): the
    columns they are in (``names``, one per column of ``values``) and what to do, never how many
    or where (private)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(values)):  # the fast path: no NaN, no infinity
            return
    for what, bad, todo in (("NaN", np.isnan(values), "drop or impute the missing values"),
                            ("infinity", np.isinf(values), "drop or clip the infinite values")):
        if bad.any():
            columns = [names[i] for i in np.flatnonzero(bad.any(axis=0))]
            raise ValueError(f"Input X contains {what} in {kind}column(s) {columns}: {todo} "
                             "first")


def check_numeric_part(estimator: BaseEstimator, part: Any, names: Sequence[object]) -> np.ndarray:
    """The numeric columns of a mixed X (a DataFrame's or an array's) as a finite float64 2-D
    array, by the checks and with the messages of :func:`validate_numeric` (complex data, text,
    NaN, infinity); ``names`` are the columns' names."""
    try:
        values = check_array(part, dtype=np.float64, ensure_all_finite=False, estimator=estimator)
    except (TypeError, ValueError) as err:
        raise type(err)(f"X: the numeric columns {list(names)} must hold numbers (list the "
                        f"others in categorical): {without_data(str(err))}") from err
    reject_non_finite(values, names, "numeric ")
    return values


def reject_sparse(X: Any) -> None:
    """A sparse X is refused with scikit-learn's message (these estimators need dense X)."""
    if issparse(X):
        _about_x(check_array, X, accept_sparse=False)


def validate_numeric(estimator: BaseEstimator, X: ArrayLike, *, reset: bool) -> np.ndarray:
    """X as a finite float64 2-D array by scikit-learn's checks (which also record or compare
    ``n_features_in_`` and the feature names); every error says it is about X, and NaN or
    infinity name their columns (:func:`reject_non_finite`)."""
    _reject_non_numeric_columns(X)
    values = _about_x(validate_data, estimator, X, reset=reset, dtype=np.float64,
                      ensure_all_finite=False)
    reject_non_finite(values, column_names(estimator, range(values.shape[1])))
    return values


def without_data(message: str) -> str:
    """A scikit-learn or numpy message about X without what it quotes from X: the records
    (``array=[...]``, a printed array), the number of records (``shape=(N, d)`` becomes
    ``shape=(, d)``, scikit-learn's checks match that form) and an unconvertible value. They
    are private; a message is not a release.

    Parameters
    ----------
    message : str
        The message of a scikit-learn or numpy error about X.

    Returns
    -------
    str
        The message without the data it quotes.

    Examples
    --------
    >>> from dpkmeans.api.estimators import without_data
    >>> without_data("Expected 2D array, got 1D array instead:\\narray=[0.3 0.9 0.1].")
    'Expected 2D array, got 1D array instead:'
    >>> without_data("Found input with shape=(150, 4)")
    'Found input with shape=(, 4)'
    """
    text = re.sub(r"\n?array=\[[^\]]*\]\.?", "", message.strip())  # a printed 1-D array
    text = re.sub(r"\n\s*\[.*\]", "", text, flags=re.S)  # a printed array on its own lines
    text = re.sub(r"(Complex data not supported)\s.*", r"\1", text, flags=re.S)  # a table
    text = re.sub(r"shape=\([1-9]\d*,", "shape=(,", text)
    return re.sub(r"(could not convert \S+ to \w+): .*", r"\1", text)


def squared_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (N, k) from each row to each centre, without an (N, k, d)
    intermediate (clipped at 0 against rounding)."""
    squared = (X * X).sum(axis=1)[:, None] - 2.0 * X @ C.T + (C * C).sum(axis=1)[None, :]
    return np.maximum(squared, 0.0)


def by_column(what: str, spec: dict, names: Sequence[object] | None, kind: str = "") -> list:
    """A parameter given as a dict keyed by column name (``bounds``, ``categories``) as a list
    in the order of ``names``, the names of the columns of X it covers (None when X has no
    column names); it must name each of them exactly once, and nothing else. ``kind`` says
    which columns they are in the messages (e.g. "numeric")."""
    if names is None:
        raise ValueError(f"{what} as a dict is keyed by column name: X must be a DataFrame "
                         f"with string column names (for an array, give {what} by position)")
    names = list(names)
    columns = f"{kind} column" if kind else "column"
    missing = [n for n in names if n not in spec]
    extra = [key for key in spec if key not in names]
    if missing or extra:
        wrong = [f"misses {missing}"] if missing else []
        wrong += [f"has {extra}, not {columns}s of X"] if extra else []
        raise ValueError(f"{what} must have one entry for each {columns} {names}: it "
                         f"{' and '.join(wrong)}")
    return [spec[n] for n in names]


def _is_pair(value: object) -> bool:
    """A (lower, upper) pair: a tuple, a list or an array of length 2."""
    return (isinstance(value, tuple | list)
            or isinstance(value, np.ndarray) and value.ndim >= 1) and len(value) == 2


def _bounds_pair(bounds: Any, names: Sequence[object] | None, kind: str) -> Any:
    """``bounds`` as (lower, upper): a dict by column name becomes the pair of the lists of its
    entries, an array of two rows its rows; anything else is returned as it is."""
    if isinstance(bounds, dict):
        pairs = by_column("bounds", bounds, names, kind)
        for name, pair in zip(list(names or ()), pairs):
            if not _is_pair(pair):
                raise ValueError(f"bounds[{name!r}] must be a pair (lower, upper), got {pair!r}")
        return [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    if isinstance(bounds, np.ndarray) and _is_pair(bounds):
        return bounds[0], bounds[1]
    return bounds


def public_bounds(bounds: Any, X: np.ndarray, *, columns: str = "",
                  names: Sequence[object] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The estimators' box: public ``bounds`` (checked): a pair (lower, upper) of scalars or
    arrays per feature (a tuple, a list or an array of two rows), or a dict of one pair per
    column by name (``names``: the names of X's columns, None without names); or, for
    ``None``, the data's min/max with a ``PrivacyLeakWarning`` (paper mode). ``columns`` names
    the columns the bounds cover when X is only part of the input (e.g. "numeric")."""
    what = f" of the {columns} columns" if columns else ""
    if bounds is None:
        warnings.warn(
            f"bounds=None: the bounds{what} are read off the data (the papers' 'paper mode'). "
            "This leaks the extreme values of X and voids the privacy guarantee; pass "
            "public bounds=(lower, upper) instead.",
            PrivacyLeakWarning, stacklevel=4)
        lower, upper = X.min(axis=0), X.max(axis=0)
        upper = np.where(upper > lower, upper, lower + 1.0)
        return lower, upper
    bounds = _bounds_pair(bounds, names, columns)
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (lower, upper), got {bounds!r}")
    d = X.shape[1]
    try:
        lower = _bound_side(bounds[0], "lower", d)
        upper = _bound_side(bounds[1], "upper", d)
    except ValueError as err:
        if not columns or isinstance(err, InvalidParameterError):
            raise
        raise ValueError(f"{err}; bounds cover the {d} {columns} columns only") from err
    if np.any(lower >= upper):
        raise ValueError(f"bounds must satisfy lower < upper in every {columns or 'feature'}"
                         f"{' column' if columns else ''}")
    return check_box((lower, upper))


def seed_sequence(random_state: Any) -> np.random.SeedSequence:
    """The fit's seed: fresh entropy for None (never stored on the model), a copy of a given
    SeedSequence (the parameter is never advanced), or a non-negative int.

    A shared accountant keeps the seed's material (entropy and spawn key) and refuses a fit
    that repeats it (:func:`check_accountant`): an int, and the SeedSequence of that int, are
    the same material; fresh entropy never repeats.

    Parameters
    ----------
    random_state : int, numpy.random.SeedSequence or None
        The estimator's ``random_state``.

    Returns
    -------
    numpy.random.SeedSequence
        A new SeedSequence: spawning from it leaves ``random_state`` as it was.

    Raises
    ------
    TypeError
        If ``random_state`` is none of these (a negative int, a float, a Generator, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.api.estimators import seed_sequence
    >>> seed_sequence(7).entropy, seed_sequence(np.random.SeedSequence(7)).entropy
    (7, 7)
    >>> child = np.random.SeedSequence(7).spawn(2)[1]
    >>> seed_sequence(child).spawn_key
    (1,)
    """
    rs = random_state
    if rs is None:
        return np.random.SeedSequence()
    if isinstance(rs, np.random.SeedSequence):
        return np.random.SeedSequence(rs.entropy, spawn_key=rs.spawn_key, pool_size=rs.pool_size)
    if isinstance(rs, numbers.Integral) and not isinstance(rs, bool) and rs >= 0:
        return np.random.SeedSequence(int(rs))
    raise InvalidParameterError("random_state must be a non-negative int, a numpy SeedSequence "
                                "or None")


def budget_form(epsilon: Any, rho: Any, m: Any, forms: str, *,
                default_epsilon: float | None = None, m_form: str = "an integer >= 2") -> str:
    """Which budget an estimator was given: "epsilon" or "rho" (with m). Exactly one is
    needed (``forms`` says which, in the errors); with neither, ``default_epsilon`` applies
    when set (then "epsilon").

    Parameters
    ----------
    epsilon, rho, m : object or None
        The estimator's budget parameters, as given.
    forms : str
        The budgets the estimator takes, in words (the start of every error message).
    default_epsilon : float or None, default None
        The epsilon that applies when no budget is given (None: one is required).
    m_form : str, default "an integer >= 2"
        What ``m`` must be, in words.

    Returns
    -------
    str
        "epsilon" or "rho".

    Raises
    ------
    ValueError
        If both forms are given, ``rho`` comes without ``m`` or ``m`` without ``rho``, or none
        is given without a default.

    Examples
    --------
    >>> from dpkmeans.api.estimators import budget_form
    >>> forms = "give one budget: epsilon, or rho with m"
    >>> budget_form(None, 0.7, 2, forms), budget_form(None, None, None, forms, default_epsilon=1.0)
    ('rho', 'epsilon')
    >>> budget_form(1.0, 0.7, 2, forms)
    Traceback (most recent call last):
    ...
    ValueError: give one budget: epsilon, or rho with m; got epsilon, rho, m
    """
    has_eps, has_rho, has_m = (v is not None for v in (epsilon, rho, m))
    if has_eps and (has_rho or has_m):
        given = ", ".join(n for n, h in (("epsilon", has_eps), ("rho", has_rho), ("m", has_m))
                          if h)
        raise ValueError(f"{forms}; got {given}")
    if has_rho and not has_m:
        raise ValueError(f"rho needs m, the number of possible worlds ({m_form})")
    if has_m and not has_rho:
        raise ValueError(f"{forms}; got only m")
    if not has_eps and not has_rho and default_epsilon is None:
        raise ValueError(f"{forms}; got none")
    return "rho" if has_rho else "epsilon"


def charge_accountant(accountant: PrivacyLedger | None, fit_ledger: PrivacyLedger,
                      name: str, *, seed: np.random.SeedSequence | None = None) -> None:
    """Record a finished fit in the shared ``accountant`` (its whole ledger as one sequential
    part, with its seed material). Its cost and seed were checked before the fit
    (:func:`check_accountant`).

    Parameters
    ----------
    accountant : PrivacyLedger or None
        The shared ledger (None: nothing to do).
    fit_ledger : PrivacyLedger
        The fit's ledger.
    name : str
        The fit's name in the accountant.
    seed : numpy.random.SeedSequence or None, default None
        The fit's seed (:func:`seed_sequence`), kept by the accountant so that no later fit
        repeats it.

    Raises
    ------
    ValueError, TypeError, dpkmeans.errors.BudgetExceededError, dpkmeans.errors.SeedReuseError
        As :meth:`~dpkmeans.privacy.accounting.PrivacyLedger.absorb`.

    Examples
    --------
    >>> from dpkmeans.api.estimators import charge_accountant
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> accountant, fit = PrivacyLedger(budget=3.0), PrivacyLedger()
    >>> _ = fit.charge("Laplace", epsilon=1.0, sensitivity=1.0, scale=1.0)
    >>> charge_accountant(accountant, fit, "fit 1")
    >>> print(accountant.remaining())
    epsilon=2
    """
    if accountant is not None:
        accountant.absorb(fit_ledger, name, seed=seed)


def check_accountant(accountant: Any, cost: PrivacyCost, neighbour: str,
                     name: str, *, seed: np.random.SeedSequence | None = None) -> None:
    """Refuse a fit, before any noise is drawn, whose cost would take the shared
    accountant past its budget, whose guarantee is under another adjacency than the
    accountant's, or whose seed repeats the seed material of a fit the accountant absorbed
    (book chapter 12, the shared accountant: composition holds for fits whose noise is
    independent, and two fits with one seed draw the same noise).

    Without an accountant nothing is checked: fitting twice with one seed and publishing both
    results is the data holder's choice, and no ledger claims a total for them.

    Parameters
    ----------
    accountant : PrivacyLedger or None
        The shared ledger (None: nothing to check).
    cost : PrivacyCost
        The fit's whole cost.
    neighbour : str
        The adjacency of the fit's guarantee.
    name : str
        The fit's name, for the error messages.
    seed : numpy.random.SeedSequence or None, default None
        The fit's seed (:func:`seed_sequence`; None: not checked).

    Raises
    ------
    TypeError
        If ``accountant`` is not a PrivacyLedger.
    ValueError
        If the accountant composes under another adjacency.
    dpkmeans.errors.BudgetExceededError
        If the cost exceeds what is left of the accountant's budget.
    dpkmeans.errors.SeedReuseError
        If ``seed`` repeats the seed material of a fit the accountant absorbed and the
        accountant refuses a repeat (its default, ``seed_reuse="refuse"``).

    Examples
    --------
    >>> from dpkmeans.api.estimators import check_accountant
    >>> from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger
    >>> accountant = PrivacyLedger(budget=1.0)
    >>> check_accountant(accountant, PrivacyCost(0.5), "add/remove", "fit 1")
    >>> check_accountant(accountant, PrivacyCost(2.0), "add/remove", "fit 2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpkmeans.errors.BudgetExceededError: fit 2 would spend epsilon=2, but the accountant has ...

    A fit with the seed of a fit already charged is refused too:

    >>> import numpy as np
    >>> from dpkmeans.api.estimators import charge_accountant
    >>> charge_accountant(accountant, PrivacyLedger(), "run A", seed=np.random.SeedSequence(7))
    >>> check_accountant(accountant, PrivacyCost(0.5), "add/remove", "run B",
    ...                  seed=np.random.SeedSequence(7))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpkmeans.errors.SeedReuseError: fit 2 (run B) repeats the seed material of fit 1 (run A), ...
    """
    if accountant is None:
        return
    if not isinstance(accountant, PrivacyLedger):
        raise InvalidParameterError("accountant must be a dpkmeans.privacy.accounting."
                                    f"PrivacyLedger, got {type(accountant).__name__}")
    if accountant.neighbour != neighbour:
        raise ValueError(f"{name} is private under {neighbour} adjacency, the accountant "
                         f"composes under {accountant.neighbour}: use one ledger per "
                         "relation")
    remaining = accountant.remaining()
    if not accountant.admits(cost):
        raise BudgetExceededError(
            f"{name} would spend {cost}, but the accountant has only {remaining} left "
            f"of its budget {accountant.budget} (spent so far: {accountant.total()}); "
            "nothing was drawn")
    if seed is not None:
        try:
            accountant.check_seed(seed, name)
        except SeedReuseError as err:
            raise SeedReuseError(f"{err}; nothing was drawn") from None


def _bounds_dimension(bounds: Any, names: list[str] | None) -> int:
    """The d that ``bounds`` give (a side of more than one value, or a dict's columns).

    Raises ValueError when they give none (scalars) and are valid: then d must be given.
    Invalid bounds give 1, so that :func:`public_bounds` names what is wrong with them."""
    try:
        pair = _bounds_pair(bounds, names, "")
        sizes = [np.asarray(side, dtype=float).size for side in pair] if _is_pair(pair) else []
    except (TypeError, ValueError):
        return 1
    if names is not None or max(sizes, default=1) > 1:
        return len(names) if names is not None else max(sizes)
    public_bounds(bounds, np.empty((0, 1)))  # invalid bounds are named first
    raise ValueError("n_features: the bounds are scalars and say nothing of d; give "
                     "n_features")


def _fit_minimum(err: BudgetTooSmallError, run_eps: float, eps: float) -> float:
    """The smallest epsilon of a whole fit from the error of its run at ``run_eps`` (the part
    of ``eps`` left after a noisy count): ``err.minimum`` is the run's, or, with
    ``err.requested``, that of one release which gets a fixed share of the run's budget."""
    run_minimum = err.minimum if err.requested is None else (
        err.minimum * run_eps / err.requested)
    return run_minimum * eps / run_eps


class LabelsMixin:
    """What both estimators offer about ``labels_``, the training records' clusters: one label
    per record, for the data holder only, and not a private release.

    A fitted model saved with ``pickle`` or ``joblib`` carries ``labels_``, so it says which
    cluster each training record fell in; :meth:`drop_labels` removes them before the model is
    saved or shared, and ``predict``, ``transform`` and ``score`` work as before (they read
    the private centres only).

    Examples
    --------
    >>> from dpkmeans import DPKMeans, DPKPrototypes
    >>> from dpkmeans.api.estimators import LabelsMixin
    >>> issubclass(DPKMeans, LabelsMixin) and issubclass(DPKPrototypes, LabelsMixin)
    True
    """

    def drop_labels(self) -> Any:
        """Remove ``labels_`` (one label per training record) from the fitted model, for
        example before pickling it to share. What remains is the release (the private centres
        and their ledger) and public settings.

        Returns
        -------
        self
            The fitted estimator without ``labels_`` (``predict`` gives labels of any records).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.

        Examples
        --------
        >>> import numpy as np
        >>> from dpkmeans import DPKMeans
        >>> X = np.random.default_rng(0).uniform(0.0, 1.0, (200, 2))
        >>> model = DPKMeans(2, bounds=(0.0, 1.0), random_state=0).fit(X).drop_labels()
        >>> hasattr(model, "labels_"), model.predict(X[:3]).shape
        (False, (3,))
        """
        check_is_fitted(self, "cluster_centers_")
        vars(self).pop("labels_", None)
        return self


class DPKMeans(LabelsMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """Differentially private k-means: every corrected algorithm of the book, with a ledger.

    Parameters
    ----------
    n_clusters : int
        k, a public choice (choosing it on the data would cost budget).
    epsilon : float or None
        Total privacy budget of one fit, all releases included (1.0 when neither ``epsilon``
        nor ``rho`` is given). Under add/remove adjacency, except ``algorithm="di"`` (replace).
    rho, m : float and int, or None
        ``algorithm="di"`` only, instead of ``epsilon``: differential identifiability, an
        attacker's posterior at most ``rho`` over ``m`` possible worlds (book chapter 11);
        spent as epsilon = ln((m - 1) rho / (1 - rho)).
    delta : float or None
        The delta of an (epsilon, delta) guarantee; None or 0 (the default) keeps pure
        epsilon-DP. Required by the (epsilon, delta) algorithms ``"colored"``, ``"fastlloyd"``
        and ``"lsh"``.
        With ``delta > 0`` a DP-Lloyd algorithm runs as its (epsilon, delta) twin: the same
        algorithm with Gaussian noise (``noise``), calibrated so that the whole fit, the noisy
        count included, is (epsilon, delta)-DP under tight composition (book chapter 12, "Equal
        privacy"); ``ledger_`` then composes tightly. "colored" and "lsh" are calibrated under
        tight composition too. "di" (replace adjacency, where the Gaussian twin is not defined)
        runs its Laplace form calibrated by PLD composition. "balcan" is pure and takes no
        delta.
    noise : {"gaussian", "laplace", "basic"} or None
        The form of an (epsilon, delta) fit (only with ``delta > 0``;
        :func:`dpkmeans.api.catalogue.forms`). A DP-Lloyd algorithm: "gaussian" (None: the
        twin, Gaussian noise with the box optimum's covariance) or "laplace" (its own Laplace
        noise, the schedule scaled until the privacy-loss distribution of its releases reaches
        (epsilon, delta)). "colored" and "lsh": "gaussian" (None: calibrated under tight
        composition) or "basic" (their papers' basic composition of the releases).
        "fastlloyd": "gaussian" only (its paper's analysis is the exact composition).
    bounds : (lower, upper), dict or None
        Public bounds of every feature: a pair of scalars or of arrays (a tuple, a list, or an
        array of two rows such as ``np.array([-1, 1])``), or, with a DataFrame, a dict of one
        (lower, upper) per column by name (``{"age": (0, 100), "income": (0, 2e5)}``; a column
        missing or extra is an error). Data outside are clipped, with a ``ClippingWarning``
        that says only that clipping happened: how many values, and in which columns, is
        private (compare X with the bounds to find them) and is not shown. ``None`` reads them
        off the data:
        not private, warns ``PrivacyLeakWarning`` and the ledger records the leak
        (``ledger_.is_private`` is then False).
    algorithm : str
        One of :data:`dpkmeans.api.catalogue.CATALOGUE` (the book's "Choosing an algorithm" page
        says when to use which):

        * ``"dplloyd"`` (ch. 5): epsilon / T over ``max_iter`` iterations, random starts;
        * ``"dplloyd-impr"`` (ch. 5, default): Su et al.'s improved version; T from Su's rule
          and the count : sum split from Su et al.'s (2016) constant 0.225 (their rho, not the
          ``rho`` parameter): an **assumption** about the private centroids, a coordinate
          typically 0.45 half-widths from the box's midpoint, that no public input gives. The
          sums are released centred and in units of the half-widths, so it means the same in
          every box; if the data disagree, accuracy suffers, never privacy;
        * ``"dp-kccm"`` (ch. 7): n k clusters, a decreasing budget, merged down to k;
        * ``"silhouette"`` (ch. 8): cluster budgets weighted by noisy silhouettes;
        * ``"apdp"`` (ch. 10): budgets in a decreasing arithmetic progression;
        * ``"di"`` (ch. 11): DI k-means, halving budgets, replace adjacency, ``rho``/``m``;
        * ``"colored"`` (ch. 9): colored Gaussian noise, (epsilon, delta), ``max_iter`` T;
        * ``"lsh"`` (ch. 12): not a DP-Lloyd loop: a prefix tree over random-hyperplane
          hashes, a private coreset of its leaves and k-means++ on it (Chang and Kamath 2021,
          Google's library), (epsilon, delta);
        * ``"balcan"`` (ch. 12): not a DP-Lloyd loop: a random projection, private candidate
          centres, private local search and noisy means (Balcan et al. 2017), reads
          ``n_records``;
        * ``"fastlloyd"`` (ch. 12): DP-Lloyd whose records count only within a public radius
          of their centre, as offsets from it, with Gaussian noise (Diaa, Humphries and
          Kerschbaum 2025), (epsilon, delta), reads ``n_records``;
          ``"fastlloyd-laplace"``: its pure epsilon-DP form.

        Only the corrected algorithms are offered; the as-published ones live in
        ``dpkmeans.papers``.
    max_iter : int
        Iterations of "dplloyd" and "colored" (the others choose T by their own rule). At most
        epsilon x N on N records: past that, each iteration's releases get less than 1/N and
        their noise exceeds what all the records together contribute, so the fit is refused
        before any noise (:func:`~dpkmeans.engine.planning.meaningful_iterations`).
    n_records : int or None
        "dplloyd-impr", "apdp", "balcan" and FastLloyd's forms only: the number of records,
        **stated by you as public**
        (for example from the documentation of the data). Their rules read it to choose T; one
        record more can change T, so the exact count of private data must not be used.
        ``None`` (default) spends ``n_records_share * epsilon`` on a noisy count (discrete
        Laplace, sensitivity 1) and runs the iterations with the rest; both are in ``ledger_``.
    n_records_share : float in (0, 1)
        The share of ``epsilon`` spent on the noisy count when ``n_records`` is None.
    accountant : PrivacyLedger or None
        A ledger shared across fits, with a total budget (``PrivacyLedger(budget=3.0)``). A fit
        that would exceed what is left raises ``BudgetExceededError`` before any noise is
        drawn; a finished fit is recorded in it, its whole ledger as one part, with a
        fingerprint of its seed material. Composition holds for fits whose noise is
        independent: a fit whose seed repeats that of a fit the accountant absorbed (the same
        int, SeedSequence or spawned child, or one spawned from the other) raises
        ``SeedReuseError`` before any noise is drawn (``PrivacyLedger(seed_reuse="record")``
        lets it run and records a leak instead). Give each fit its own ``random_state``,
        ``None``, or one child of ``numpy.random.SeedSequence(seed).spawn(n)``. Without an
        accountant no seed is checked: fitting twice with one seed and publishing both is the
        data holder's own choice, and no ledger then claims a total for the two.
    backend : {"memory", "dask"}
        Where the statistics are computed (:mod:`dpkmeans.compute.backends`). With ``"dask"``,
        X may be a ``dask.array`` or a
        :class:`~dpkmeans.compute.backends.parquet.ParquetRows` source (Parquet files larger
        than memory, read again at every pass, never held), and ``client`` a
        ``dask.distributed.Client`` (without one a ``LocalCluster`` is started for the fit and
        closed). Same seed, same bits, either way.
    client : dask.distributed.Client or None
    random_state : int, numpy SeedSequence or None
        Seed of every random draw. ``None`` draws fresh entropy, which is *not* stored: a seed
        behind a published release must stay secret, since it regenerates every noise draw.

    Attributes
    ----------
    cluster_centers_ : (k, d) array
        The private centroids: the release.
    n_iter_ : int
        Iterations run: the planned T (public inputs or the noisy count), or fewer when a
        stopping rule ended the run early ("di", "silhouette": no centroid moved by the
        threshold). Public: the rule reads the released centroids only (chapters 8 and 11).
    n_records_used_ : int or None
        The N the algorithm's rule used (the stated one or the noisy count; None if it reads
        none).
    epsilon_ : float
        The epsilon of the fit (from ``rho`` and ``m`` when given).
    rho_ : float or None
        With ``rho``: the DI guarantee of the fit.
    ledger_ : PrivacyLedger
        Every release, its mechanism, sensitivity, noise and budget; ``privacy_spent_`` is its
        total and ``ledger_.is_private`` says whether any leak was recorded.
    bounds_ : (lower, upper) arrays
    paper_mode_ : bool
    labels_ : (n_samples,) array
        The training records' clusters under the private centroids. Each label is a function of
        its own record: it is for the data holder and **not** a differentially private
        release. For a ``ParquetRows``
        source it is a lazy ``dask.array`` (as dask-ml's ``KMeans`` gives): nothing of the
        records' size is gathered during the fit; computing it (``labels_.compute()``, or
        ``labels_.to_zarr(...)`` for more labels than memory holds) reads the files again,
        with dask's current scheduler: a ``Client`` set as default, else threads here. A
        pickled fitted model carries it, one label per training record: call
        :meth:`drop_labels` before saving or sharing the model.
    privacy_spent_ : PrivacyCost
        The composed total of ``ledger_``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans import DPKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.25, 0.05, (100, 2)), rng.normal(0.75, 0.05, (100, 2))])
    >>> model = DPKMeans(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    >>> model.cluster_centers_.round(2)
    array([[0.8 , 0.75],
           [0.33, 0.27]])
    >>> model.n_iter_, model.n_records_used_  # T by Su's rule, from a noisy count of the records
    (2, 207)
    >>> print(model.privacy_spent_)
    epsilon=1
    >>> model.predict([[0.2, 0.3], [0.8, 0.7]])
    array([1, 0])
    """

    def __init__(self, n_clusters: int = 8, *, epsilon: float | None = None, rho=None, m=None,
                 delta: float | None = None, bounds=None, algorithm: str = "dplloyd-impr",
                 max_iter: int = 5, n_records=None, n_records_share: float = 0.05,
                 accountant: PrivacyLedger | None = None, backend: str = "memory", client=None,
                 random_state=None, noise: str | None = None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.rho = rho
        self.m = m
        self.delta = delta
        self.bounds = bounds
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.n_records = n_records
        self.n_records_share = n_records_share
        self.accountant = accountant
        self.backend = backend
        self.client = client
        self.random_state = random_state
        self.noise = noise

    # -- input ---------------------------------------------------------------------------------
    def _validate_X(self, X: ArrayLike, *, reset: bool) -> np.ndarray:
        """X as a finite float64 2-D array (scikit-learn's checks; errors say it is about X).
        A dask array or a ``ParquetRows`` source is checked for its shape and dtype only (from
        its metadata) and stays lazy (the backend checks its values block by block)."""
        if _is_lazy(X):
            return self._validate_lazy(X, reset=reset)
        return validate_numeric(self, X, reset=reset)

    def _validate_lazy(self, X: Any, *, reset: bool) -> Any:
        what = "a ParquetRows source" if isinstance(X, ParquetRows) else "a dask array"
        if self.backend != "dask":
            raise ValueError(f"invalid X: {what} needs backend='dask'")
        if X.ndim != 2 or X.dtype.kind not in "iuf":
            raise ValueError(f"invalid X: a 2-D dask array of real numbers is needed, got "
                             f"{X.ndim}-D of dtype {X.dtype}")
        if reset:
            self.n_features_in_ = int(X.shape[1])
            vars(self).pop("feature_names_in_", None)  # a lazy X has no column names
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but DPKMeans is expecting "
                             f"{self.n_features_in_} features as input.")
        return X

    def _resolve_bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.bounds is None and _is_lazy(X):
            what = "a ParquetRows source" if isinstance(X, ParquetRows) else "a dask array"
            raise ValueError(f"bounds=None reads the bounds off the data; with {what} "
                             "pass public bounds=(lower, upper)")
        names = getattr(self, "feature_names_in_", None)
        return public_bounds(self.bounds, X, names=None if names is None else list(names))

    def _seed(self) -> np.random.SeedSequence:
        return seed_sequence(self.random_state)

    def _planned(self, k: int, eps: float, algorithm: Choice,
                 bounds: tuple[np.ndarray, np.ndarray], delta: float | None,
                 n_rows: int) -> DPLloydConfig | StandaloneConfig | None:
        """Check, before any noise, that ``max_iter`` and epsilon are within what the exact
        samplers support (:func:`dpkmeans.engine.planning.iteration_floor`) and leave every
        iteration's releases epsilon 1/N or more on the ``n_rows`` records of X
        (:func:`dpkmeans.engine.planning.meaningful_iterations`), and return the
        configuration when it reads no noisy count (else None: it is built after the count).

        With a noisy count the rule's N is not known yet: the check builds the algorithm with
        N = k, the fewest records allowed, with which Su's rule chooses the fewest iterations
        (a lower bound on what the run needs; :meth:`_config` checks the run again)."""
        counted = algorithm.needs_n_records and self.n_records is None
        run_eps = eps - self.n_records_share * eps if counted else eps  # as fit spends it
        if algorithm.uses_max_iter:
            probe = algorithm.build(FitInputs(k, 1.0, bounds, max_iter=1, delta=delta))
            check_meaningful_iterations(probe, int(self.max_iter), run_eps, n_rows,
                                        name="max_iter")
            # binding only past 1 / floor (about 6.7e7) records: the samplers' own limit
            check_iterations(probe, int(self.max_iter), run_eps, name="max_iter")
        if counted and eps * self.n_records_share < min_epsilon("laplace", 1.0,
                                                                 integer_valued=True):
            self._too_small(eps, algorithm, 0.0)
        if algorithm.standalone:  # its releases are checked as they are calibrated (fit)
            return None
        n_records = k if counted else self.n_records
        count = [Release("laplace", epsilon=eps - run_eps)] if counted else []
        config = self._config(FitInputs(k, run_eps, bounds, max_iter=int(self.max_iter),
                                        n_records=n_records, delta=delta), eps, algorithm,
                              prefix=count)
        return None if counted else config

    def _config(self, inputs: FitInputs, eps: float, algorithm: Choice,
                prefix: list[Release] | None = None) -> DPLloydConfig | StandaloneConfig:
        """The algorithm's configuration (with ``delta``, its (epsilon, delta) form at the whole
        fit's (eps, delta), the releases of ``prefix`` included); a budget the exact samplers
        cannot spend is refused with the smallest epsilon of the whole fit
        (:meth:`_too_small`)."""
        try:
            if inputs.delta is None:
                return algorithm.build(inputs)
            return build_at(algorithm, inputs, inputs.delta, form=self.noise,
                            prefix=prefix or (), epsilon=eps)
        except BudgetTooSmallError as err:
            self._too_small(eps, algorithm, _fit_minimum(err, inputs.epsilon, eps))

    def _too_small(self, eps: float, algorithm: Choice, run_minimum: float) -> NoReturn:
        """Raise BudgetTooSmallError: epsilon must be at least ``run_minimum`` (the run's) and,
        with a noisy count, enough for the count's share."""
        minimum, todo = run_minimum, "raise epsilon"
        if algorithm.needs_n_records and self.n_records is None:
            count = min_epsilon("laplace", 1.0, integer_valued=True) / self.n_records_share
            minimum, todo = max(minimum, count), "raise epsilon (or give n_records)"
        minimum = round_up(minimum)
        raise BudgetTooSmallError(f"epsilon = {eps:g} is too small for DPKMeans(algorithm="
                                  f"{algorithm.name!r}): it needs epsilon >= {minimum:g}; "
                                  f"{todo}", minimum)

    def _check_params(self) -> tuple[int, float, Choice, float | None]:
        """k, epsilon, the algorithm and delta, checked (each error names its parameter)."""
        k = check_positive_int(self.n_clusters, "n_clusters")
        algorithm = choice(self.algorithm)
        form = budget_form(self.epsilon, self.rho, self.m,
                           "give one budget: epsilon, or rho with m", default_epsilon=1.0)
        if form == "rho":
            if algorithm.name != "di":
                raise ValueError(f"rho and m are the budget of algorithm='di' (differential "
                                 f"identifiability); {algorithm.name!r} takes epsilon")
            eps = epsilon_from_rho(self.rho, self.m)
        else:
            eps = 1.0 if self.epsilon is None else check_epsilon(self.epsilon)
        delta = None if self.delta is None or self.delta == 0 else check_delta(self.delta)
        if algorithm.needs_delta and delta is None:
            raise ValueError(f"algorithm={algorithm.name!r} is (epsilon, delta)-DP: "
                             "give delta, e.g. delta=1e-6")
        if delta is not None and not algorithm.needs_delta and \
                not set(forms(algorithm, delta)) & {"gaussian", "laplace"}:
            raise ValueError(f"delta: {algorithm.name!r} is pure epsilon-DP and has no "
                             "(epsilon, delta) form (it meets every delta as it is): give "
                             "delta=None")
        if self.noise is not None:
            if delta is None:
                raise ValueError("noise is the form of an (epsilon, delta) fit: give delta > 0")
            if self.noise not in forms(algorithm, delta):
                raise ValueError(f"noise must be one of {forms(algorithm, delta)} for "
                                 f"{algorithm.name!r} (or None), got {self.noise!r}")
        if self.n_records is not None:
            check_positive_int(self.n_records, "n_records")
            if not algorithm.needs_n_records:
                raise ValueError(f"n_records is read only by "
                                 f"{_named(lambda c: c.needs_n_records)}; "
                                 f"{algorithm.name!r} does not use it")
        share = check_real(self.n_records_share, "n_records_share")
        if not 0.0 < share < 1.0:
            raise ValueError(f"n_records_share must lie in (0, 1), got {share}")
        check_positive_int(self.max_iter, "max_iter")
        return k, eps, algorithm, delta

    # -- planning ------------------------------------------------------------------------------
    def plan(self, n_records: int | None = None, n_features: int | None = None) -> Plan:
        """A preview of a fit on ``n_records`` records, from the estimator's public parameters
        alone: the iterations, every release with its budget and noise scale, the noise on a
        released centre, the guarantee ``ledger_`` will report and what is not sensible
        (:class:`~dpkmeans.api.plan.Plan`). It builds the configuration :meth:`fit` builds,
        by the same code, so the scales are those a fit on that many records draws with, and
        refuses what fit refuses before any noise. Nothing is drawn, nothing is charged (the
        ``accountant`` is not touched) and no data is read.

        Parameters
        ----------
        n_records : int or None, default None
            N, the number of records the fit will see (None: the estimator's
            ``n_records``). An algorithm that reads N, with ``n_records=None``, pays for a
            noisy count in the fit: the plan shows the count's release and previews the rule
            at N = ``n_records``, which the noisy count is near (give the estimator
            ``n_records`` to make the iterations exact).
        n_features : int or None, default None
            d, when ``bounds`` do not say it (scalars, or None).

        Returns
        -------
        Plan
            Its ``recommendation`` is None (``dpkmeans.plan`` adds one).

        Raises
        ------
        ValueError
            If a parameter is invalid (the errors of :meth:`fit`), N or d is missing, or the
            algorithm is not a configuration of the DP-Lloyd loop ("balcan", "lsh"), whose
            releases the plan cannot list.

        Examples
        --------
        >>> from dpkmeans import DPKMeans
        >>> plan = DPKMeans(5, epsilon=1.0, bounds=(-1.0, 1.0), algorithm="dplloyd",
        ...                 max_iter=5).plan(10_000, n_features=10)
        >>> r = plan.releases[0]
        >>> r.label, r.epsilon, r.sensitivity, round(r.scale, 6)
        ('(S_j, n_j)', 0.2, 11.0, 55.0)
        >>> round(plan.centre_sd[0], 4), str(plan.guarantee)
        (0.0426, 'epsilon=1')
        """
        k, eps, algorithm, delta = self._check_params()
        if algorithm.standalone:
            raise ValueError(
                f"plan previews the releases of the DP-Lloyd loop; algorithm="
                f"{algorithm.name!r} runs outside it (book chapter 12, \"Beyond the five "
                "papers\") and its configuration declares no plan of its releases' noise, "
                "which the preview needs")
        n = self._plan_records(n_records)
        check_clusters(k, n, public=True)
        bounds, assumed, warned = self._plan_bounds(n_features)
        config = self._planned(k, eps, algorithm, bounds, delta, n)
        count = None
        if config is None:  # a noisy count first: the rule previewed at N = n_records
            count_eps = self.n_records_share * eps
            count = calibrate("laplace", 1.0, count_eps, integer_valued=True)
            config = self._config(FitInputs(k, eps - count_eps, bounds,
                                            max_iter=int(self.max_iter), n_records=n,
                                            delta=delta), eps, algorithm,
                                  prefix=[count.release()])
            assumed.append(f"the noisy count N' is N = {n}: the fit's rule reads N', which "
                           "can change its iterations (give n_records to fix them)")
        form = "pure" if delta is None else (self.noise or forms(algorithm, delta)[0])
        return preview(config, algorithm=algorithm.name, n_records=n, n_clusters=k,
                       epsilon=eps, delta=delta or 0.0, form=form,
                       tight=delta is not None and form != "basic", count=count,
                       uses_max_iter=algorithm.uses_max_iter,
                       params=self._plan_params(algorithm, count is not None),
                       assumptions=assumed, warnings=warned)

    def _plan_records(self, n_records: int | None) -> int:
        """The plan's N: the argument, else the estimator's public ``n_records``."""
        if n_records is None:
            if self.n_records is None:
                raise ValueError("n_records: give the number of records the fit will see "
                                 "(public, or the preview's assumption)")
            return int(self.n_records)
        n = check_positive_int(n_records, "n_records")
        if self.n_records is not None and n != self.n_records:
            raise ValueError(f"n_records = {n} differs from the estimator's n_records = "
                             f"{self.n_records}, the public count its rule reads: give one")
        return n

    def _plan_bounds(self, n_features: int | None) -> tuple[tuple[np.ndarray, np.ndarray],
                                                            list[str], list[str]]:
        """The plan's box, and what it assumes and warns about: the public ``bounds``
        (checked as :meth:`fit` checks them) in ``n_features`` dimensions or as many as they
        give, or, for ``bounds=None``, the box [-1, 1]^d (a fit would read the box off the
        data: not private)."""
        d = None if n_features is None else check_positive_int(n_features, "n_features")
        if self.bounds is None:
            if d is None:
                raise ValueError("n_features: bounds=None says nothing of d; give n_features")
            return ((np.full(d, -1.0), np.full(d, 1.0)), ["the box [-1, 1]^d (bounds=None)"],
                    ["bounds=None: a fit reads the box off the data, which leaks it and voids "
                     "the guarantee (PrivacyLeakWarning); the plan assumes [-1, 1]^d; give "
                     "public bounds"])
        names = list(self.bounds) if isinstance(self.bounds, dict) else None
        if d is None:
            d = _bounds_dimension(self.bounds, names)
        return public_bounds(self.bounds, np.empty((0, d or 1)), names=names), [], []

    def _plan_params(self, algorithm: Choice, counted: bool) -> dict[str, Any]:
        """The parameters a plan records besides N, d, k, the budget, the box and the
        algorithm: those the algorithm reads."""
        out: dict[str, Any] = {}
        if algorithm.uses_max_iter:
            out["max_iter"] = int(self.max_iter)
        if algorithm.needs_n_records:
            out["n_records"] = self.n_records
        if counted:
            out["n_records_share"] = float(self.n_records_share)
        if self.noise is not None:
            out["noise"] = self.noise
        if self.rho is not None:
            out.update(rho=self.rho, m=self.m)
        return out

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y=None) -> DPKMeans:
        """Fit on X (y is ignored). Spends the budget, recorded in ``ledger_`` (and in the
        shared ``accountant``, if any).

        Parameters
        ----------
        X : array_like, dask array or ParquetRows of shape (n_samples, n_features)
            Finite numeric records (a DataFrame's columns must all be numeric). A dask array or
            a :class:`~dpkmeans.compute.backends.parquet.ParquetRows` source (Parquet files,
            streamed) needs ``backend="dask"``.
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        DPKMeans
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            If a parameter or X is invalid (each error names it).
        dpkmeans.errors.BudgetExceededError
            If the ``accountant`` has too little budget left (nothing is drawn).
        dpkmeans.errors.SeedReuseError
            If the ``accountant`` already absorbed a fit with this seed material (nothing is
            drawn).
        """
        k, eps, algorithm, delta = self._check_params()
        X = self._validate_X(X, reset=True)
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        check_clusters(k, X.shape[0])  # the data holder's error: the count is not quoted
        if self.n_records is not None:
            check_clusters(k, int(self.n_records), public=True)
        bounds = self._resolve_bounds(X)
        name = f"DPKMeans(algorithm={algorithm.name!r})"
        cost = PrivacyCost(eps, delta or 0.0)
        seed = self._seed()
        check_accountant(self.accountant, cost, algorithm.neighbour, name, seed=seed)
        planned = self._planned(k, eps, algorithm, bounds, delta, X.shape[0])  # before noise
        count_seq, run_seq = seed.spawn(2)
        tight = delta is not None and (self.noise or forms(algorithm, delta)[0]) != "basic"
        ledger = PrivacyLedger(budget=cost if delta else eps, neighbour=algorithm.neighbour,
                               accounting="tight" if tight else "basic")
        n_used, run_eps = None, eps
        if algorithm.needs_n_records:
            if self.n_records is None:
                count_eps = self.n_records_share * eps
                n_used = noisy_record_count(X.shape[0], count_eps, np.random.default_rng(count_seq),
                                            ledger=ledger)
                run_eps = eps - count_eps
            else:
                n_used = int(self.n_records)
        config = planned if planned is not None else self._config(
            FitInputs(k, run_eps, bounds, max_iter=int(self.max_iter), n_records=n_used,
                      delta=delta), eps, algorithm, prefix=ledger.releases())
        if self.bounds is None:
            config = replace(config, flaws=(*config.flaws, DATA_DERIVED_BOUNDS))
        with get_backend(self.backend, client=self.client) as backend:
            try:
                result = run(X, config, run_seq, ledger=ledger, backend=backend)
            except BudgetTooSmallError as err:  # a standalone algorithm's fixed-share release
                if not algorithm.standalone or err.requested is None:
                    raise
                self._too_small(eps, algorithm, _fit_minimum(err, run_eps, eps))
            self.labels_ = backend.labels(X, result.centroids[0])
        charge_accountant(self.accountant, result.ledger, name, seed=seed)
        self.cluster_centers_ = result.centroids[0]
        self.n_iter_ = int(result.iterations_run[0])
        self.n_records_used_ = n_used
        self.epsilon_ = eps
        self.rho_ = None if self.rho is None else rho_from_epsilon(eps, int(self.m))
        self.ledger_ = result.ledger
        self.privacy_spent_: PrivacyCost = result.ledger.total()
        self.bounds_ = bounds
        self.paper_mode_ = self.bounds is None
        return self

    # -- using a fitted model (all post-processing) -------------------------------------------
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Index of the nearest private centroid for each row.

        Parameters
        ----------
        X : array_like or dask array of shape (n_samples, n_features)
            Finite numeric records (a DataFrame's columns must all be numeric).

        Returns
        -------
        ndarray of shape (n_samples,)
            The cluster of each row (for a ``ParquetRows`` source a lazy dask array, as
            ``labels_``).
        """
        check_is_fitted(self, "cluster_centers_")
        X = self._validate_X(X, reset=False)
        if isinstance(X, ParquetRows):
            return lazy_labels(X, self.cluster_centers_)
        return assign(X, self.cluster_centers_)

    def fit_predict(self, X: ArrayLike, y=None) -> np.ndarray:
        """Fit on X and give the training records' clusters (``labels_``).

        Parameters
        ----------
        X : array_like or dask array of shape (n_samples, n_features)
            Finite numeric records (a DataFrame's columns must all be numeric).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        ndarray of shape (n_samples,)
            ``labels_``: for the data holder, not a private release.
        """
        return self.fit(X).labels_

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Euclidean distances from each row to each private centroid.

        Parameters
        ----------
        X : array_like or dask array of shape (n_samples, n_features)
            Finite numeric records (a DataFrame's columns must all be numeric).

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
            The distances.
        """
        check_is_fitted(self, "cluster_centers_")
        X = self._in_memory(self._validate_X(X, reset=False), "transform")
        C = self.cluster_centers_
        return np.sqrt(squared_distances(X, C))

    def score(self, X: ArrayLike, y=None) -> float:
        """Negative SSE of X under the private centroids (sklearn's convention: higher is better).

        Parameters
        ----------
        X : array_like or dask array of shape (n_samples, n_features)
            Finite numeric records (a DataFrame's columns must all be numeric).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        float
            minus the sum of squared distances to the nearest centroid.
        """
        check_is_fitted(self, "cluster_centers_")
        X = self._in_memory(self._validate_X(X, reset=False), "score")
        return -float(metrics.sse(X, self.cluster_centers_))

    @staticmethod
    def _in_memory(X: Any, method: str) -> Any:
        """X, unless it is a streamed ``ParquetRows`` source (refused: the result would be
        computed here, from all of its records)."""
        if isinstance(X, ParquetRows):
            raise TypeError(f"{method} takes records in memory (or a dask array), not a "
                            "ParquetRows source; predict and labels_ take one")
        return X
