"""What a new user of the estimators hits first: regression tests.

1. Category lists are public inputs, like bounds: ``DPKPrototypes`` refuses a categorical
   column without a declared list (it used to read the lists off the data, so a column of
   numbers stored as text released record values as modes), names a column of numbers as
   probably numeric, and reads the lists off the data only in the explicit as-published mode
   ``categories="from-data"``, with a ``PrivacyLeakWarning`` and a leak in the ledger.
2. Both estimators follow one convention: built with defaults (epsilon 1), scikit-learn's
   ``check_estimator`` passes for every estimator ``dpkmeans`` exports (``check_clustering``
   excused only where its reason is written here), the same mistake raises the same error
   (``n_clusters=2.5`` was a ValueError in one and a TypeError in the other), bounds by column
   name and as an array pair work in both, and mixed input gets the standard messages for
   NaN, infinity, sparse and complex data (complex numeric columns used to lose their
   imaginary part silently).
3. ``drop_labels()`` removes the one label per training record that a pickled model carried.
"""

from __future__ import annotations

import inspect
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

import dpkmeans
from dpkmeans import DPKMeans, DPKPrototypes
from dpkmeans.api.mixed_estimator import CATEGORIES_FROM_DATA, CATEGORIES_LEAK
from dpkmeans.errors import InvalidParameterError, PrivacyLeakWarning

ROOT = Path(__file__).resolve().parents[2]
N = 97  # records: a number no other array of these fits has as a dimension


def _mixed(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.uniform(0, 1, n), "colour": rng.choice(["red", "blue"], n)})


def _prototypes(**params) -> DPKPrototypes:
    base = {"n_clusters": 2, "epsilon": 2.0, "bounds": (0.0, 1.0), "max_iter": 3,
            "random_state": 0}
    return DPKPrototypes(**{**base, **params})


# -- 1. declared category lists ----------------------------------------------------------------

def test_a_categorical_column_without_a_declared_list_is_refused_by_name():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, not warned about
        with pytest.raises(ValueError, match=r"categorical column\(s\) \['colour'\] have no "
                                             r"declared categories.*'from-data'"):
            _prototypes().fit(_mixed())


def test_numbers_stored_as_text_are_named_probably_numeric_without_their_values():
    frame = _mixed().assign(zip=[str(10_000 + 7 * i) for i in range(N)])
    with pytest.raises(ValueError) as caught:
        _prototypes().fit(frame)
    message = str(caught.value)
    assert "['colour', 'zip']" in message
    assert "Column(s) ['zip'] hold only numbers, so they are probably numeric" in message
    assert "10" not in message and str(N) not in message  # no record value, no count
    # an integer-valued column of an array, declared categorical, is named the same way
    codes = np.c_[np.linspace(0, 1, N), np.arange(N) % 3].astype(object)
    with pytest.raises(ValueError, match=r"Column\(s\) \[1\] hold only numbers"):
        _prototypes(categorical=[1]).fit(codes)


def test_a_category_dtype_is_not_a_declared_list():
    """pandas fills a category dtype's categories from the data (``astype("category")``): the
    estimator cannot tell them from a public list, so they are not taken as one."""
    frame = _mixed().astype({"colour": "category"})
    with pytest.raises(ValueError, match=r"\['colour'\] have a category dtype"):
        _prototypes().fit(frame)
    model = _prototypes(categories={"colour": ["blue", "green", "red"]}).fit(frame)
    assert [list(c) for c in model.categories_] == [["blue", "green", "red"]]
    assert model.ledger_.is_private


def test_the_as_published_mode_reads_the_lists_and_records_the_leak():
    with pytest.warns(PrivacyLeakWarning, match="categories='from-data'"):
        model = _prototypes(categories=CATEGORIES_FROM_DATA).fit(_mixed())
    assert not model.ledger_.is_private
    assert CATEGORIES_LEAK in model.ledger_.to_frame()["label"].tolist()
    assert [list(c) for c in model.categories_] == [["blue", "red"]]


def test_categories_of_another_type_name_the_modes():
    with pytest.raises(InvalidParameterError, match="or 'from-data', got 'data'"):
        _prototypes(categories="data").fit(_mixed())


# -- 2. one convention for both estimators ----------------------------------------------------

def test_dpkprototypes_is_built_with_defaults_and_spends_epsilon_one():
    with pytest.warns(PrivacyLeakWarning, match="bounds=None"):  # the default box is read
        model = DPKPrototypes(random_state=0).fit(np.random.default_rng(0).uniform(0, 1, (50, 2)))
    assert model.epsilon_ == 1.0 and model.privacy_spent_.epsilon <= 1.0


#: The checks that may fail, by estimator, each with its reason. DPKMeans at its defaults
#: (epsilon 1, dplloyd-impr, the box read off the data) on check_clustering's 50 records:
#: the check asks for every label 0..k-1 and an adjusted Rand index above 0.4, a bar of
#: utility, not of the API, which the noise of epsilon 1 on 50 records misses (at
#: random_state 0 one of the three clusters ends empty). At epsilon 100 it passes
#: (tests/api/test_estimators.py, test_scikit_learn_check_estimator_passes_in_full).
EXCUSED = {"DPKMeans": {"check_clustering": "epsilon 1 on 50 records leaves a cluster empty: "
                                            "a utility bar, not an API fault"}}


def _exported_estimators() -> list[str]:
    return [name for name in dpkmeans.__all__
            if inspect.isclass(obj := getattr(dpkmeans, name)) and issubclass(obj, BaseEstimator)]


def test_the_exported_estimators_are_the_two():
    assert _exported_estimators() == ["DPKMeans", "DPKPrototypes"]


@pytest.mark.parametrize("name", _exported_estimators())
def test_check_estimator_passes_at_the_defaults(name):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # bounds=None: the box is read
        results = check_estimator(getattr(dpkmeans, name)(), on_fail=None,
                                  expected_failed_checks=EXCUSED.get(name))
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert not failed, failed


MISTAKES = [{"n_clusters": 2.5}, {"n_clusters": "3"}, {"epsilon": "1"}, {"max_iter": 2.5},
            {"bounds": ("a", 1)}, {"random_state": "seed"}, {"accountant": "ledger"}]


@pytest.mark.parametrize("mistake", MISTAKES, ids=str)
def test_the_same_mistake_is_the_same_error_in_both(mistake):
    X = np.random.default_rng(0).uniform(0, 1, (40, 2))
    errors = []
    for estimator in (DPKMeans, DPKPrototypes):
        with pytest.raises(InvalidParameterError) as caught:
            estimator(**{"n_clusters": 2, "bounds": (0.0, 1.0), **mistake}).fit(X)
        errors.append(caught.value)
    assert all(isinstance(e, ValueError) and isinstance(e, TypeError) for e in errors)
    assert str(errors[0]) == str(errors[1])


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.uniform(18, 90, 300), "income": rng.uniform(0, 1e5, 300)})


@pytest.mark.parametrize("estimator", [DPKMeans, DPKPrototypes])
def test_bounds_by_column_name_in_both(estimator, frame):
    by_name = estimator(2, bounds={"income": (0, 1e5), "age": (18, 90)}, random_state=0)
    by_list = estimator(2, bounds=([18, 0], [90, 1e5]), random_state=0)
    np.testing.assert_array_equal(by_name.fit(frame).cluster_centers_,
                                  by_list.fit(frame).cluster_centers_)
    with pytest.raises(ValueError, match=r"bounds must have one entry for each (numeric )?"
                                         r"column \['age', 'income'\]: it misses \['income'\]"):
        estimator(2, bounds={"age": (18, 90)}).fit(frame)
    with pytest.raises(ValueError, match="bounds as a dict is keyed by column name"):
        estimator(2, bounds={"age": (18, 90), "income": (0, 1e5)}).fit(frame.to_numpy())


@pytest.mark.parametrize("estimator", [DPKMeans, DPKPrototypes])
@pytest.mark.parametrize("bounds", [np.array([-1, 1]), np.array([[-1, -1], [1, 1]])],
                         ids=["pair", "two rows"])
def test_an_array_pair_is_lower_and_upper_in_both(estimator, bounds):
    X = np.random.default_rng(2).uniform(-1, 1, (60, 2))
    model = estimator(2, bounds=bounds, random_state=0).fit(X)
    np.testing.assert_array_equal(model.bounds_[0], [-1.0, -1.0])
    np.testing.assert_array_equal(model.bounds_[1], [1.0, 1.0])
    twin = estimator(2, bounds=(-1, 1), random_state=0).fit(X)
    np.testing.assert_array_equal(model.cluster_centers_, twin.cluster_centers_)


def _defect(kind: str, X: np.ndarray) -> object:
    if kind == "sparse":
        return sp.csr_matrix(X)
    if kind == "complex":
        return X + 1j
    bad = X.copy()
    bad[3, 0] = np.nan if kind == "NaN" else np.inf
    return bad


STANDARD = {"NaN": "Input X contains NaN", "infinity": "Input X contains infinity",
            "sparse": "Sparse data was passed", "complex": "Complex data not supported"}


@pytest.mark.parametrize("kind", list(STANDARD))
def test_mixed_input_gets_the_standard_messages(kind):
    """The numeric part of mixed input is checked as DPKMeans checks its X: the same standard
    phrase, and no record value or count in the message."""
    X = np.c_[np.full(N, 0.123456789), np.arange(N) % 2]
    numeric = X[:, :1]
    expected = TypeError if kind == "sparse" else ValueError
    with pytest.raises(expected, match=STANDARD[kind]):
        DPKMeans(2, bounds=(0.0, 1.0)).fit(_defect(kind, numeric))
    frame = pd.DataFrame({"x": X[:, 0], "c": np.where(X[:, 1] > 0, "a", "b")})
    data = _defect(kind, X) if kind == "sparse" else frame.assign(x=_defect(kind, numeric)[:, 0])
    with pytest.raises(expected, match=STANDARD[kind]) as caught:
        _prototypes(categorical=[1] if kind == "sparse" else None,
                    categories=[[0.0, 1.0]] if kind == "sparse" else [["a", "b"]]).fit(data)
    assert "0.123" not in str(caught.value) and str(N) not in str(caught.value)


# -- 3. drop_labels ---------------------------------------------------------------------------

def _per_record_arrays(obj: object, seen: set[int] | None = None) -> list[str]:
    """Every array (or list or tuple) in the object graph of ``obj`` with N entries along an
    axis: per-record data."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, str | bytes | int | float | type):
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [f"array {obj.shape}"] if N in obj.shape else (
            [] if obj.dtype != object else
            [found for item in obj.ravel() for found in _per_record_arrays(item, seen)])
    children: list[object] = []
    if isinstance(obj, dict):
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, list | tuple | set | frozenset):
        if len(obj) == N:
            return [f"{type(obj).__name__} of {N}"]
        children = list(obj)
    elif hasattr(obj, "__dict__"):
        children = list(vars(obj).values())
    elif hasattr(obj, "__slots__"):
        children = [getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s)]
    return [found for child in children for found in _per_record_arrays(child, seen)]


@pytest.mark.parametrize("estimator", [DPKMeans, DPKPrototypes])
def test_drop_labels_leaves_a_model_without_per_record_data(estimator):
    X = _mixed() if estimator is DPKPrototypes else _mixed()[["x"]]
    kw = {"categories": {"colour": ["blue", "red"]}} if estimator is DPKPrototypes else {}
    model = estimator(2, bounds=(0.0, 1.0), random_state=0, **kw).fit(X)
    before = model.predict(X), model.transform(X), model.score(X)
    assert _per_record_arrays(pickle.loads(pickle.dumps(model)))  # labels_ is per record
    assert model.drop_labels() is model and not hasattr(model, "labels_")
    restored = pickle.loads(pickle.dumps(model))
    assert _per_record_arrays(restored) == []
    after = restored.predict(X), restored.transform(X), restored.score(X)
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])
    assert after[2] == before[2]


def test_drop_labels_needs_a_fitted_model():
    from sklearn.exceptions import NotFittedError

    for estimator in (DPKMeans, DPKPrototypes):
        with pytest.raises(NotFittedError):
            estimator().drop_labels()


def test_the_docs_say_a_pickled_model_carries_labels_and_how_to_drop_them():
    for estimator in (DPKMeans, DPKPrototypes):
        doc = " ".join(estimator.__doc__.split())
        assert "pickled fitted model carries it, one label per training record" in doc
        assert "drop_labels" in doc
    advice = (ROOT / "book" / "how_to_use.md").read_text(encoding="utf-8")
    assert "drop_labels()" in advice
