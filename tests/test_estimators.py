"""The sklearn-style estimator (issue 4)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpkmeans.errors import ClippingWarning, PrivacyLeakWarning
from dpkmeans.estimators import DPKMeans


@pytest.fixture
def X() -> np.ndarray:
    gen = np.random.default_rng(3)
    centres = np.array([[-0.5, -0.5], [0.5, 0.5], [0.5, -0.5]])
    return np.clip(centres[gen.integers(3, size=900)] + gen.normal(0, 0.08, (900, 2)), -1, 1)


@pytest.mark.parametrize("algorithm", ["dplloyd", "dplloyd-impr"])
def test_fit_spends_exactly_epsilon_and_predicts(X, algorithm):
    model = DPKMeans(3, epsilon=0.8, bounds=(-1, 1), algorithm=algorithm, random_state=1).fit(X)
    assert model.cluster_centers_.shape == (3, 2)
    assert model.privacy_spent_.epsilon == pytest.approx(0.8)
    assert model.ledger_.is_fully_spent()
    assert model.predict(X).shape == (900,)
    assert model.transform(X).shape == (900, 3)
    assert model.score(X) <= 0
    np.testing.assert_array_equal(model.fit_predict(X), model.predict(X))


def test_same_random_state_same_centres(X):
    a = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=7).fit(X)
    b = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=8).fit(X)
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)


def test_clone_safe_and_parameters_never_mutated(X):
    model = DPKMeans(3, epsilon=1.0, bounds=None, random_state=0)
    params = model.get_params()
    with pytest.warns(PrivacyLeakWarning):
        model.fit(X)
    assert model.get_params() == params and model.bounds is None
    twin = clone(model)
    assert twin.get_params() == params and not hasattr(twin, "cluster_centers_")
    assert model.paper_mode_


def test_out_of_bounds_data_is_clipped_with_a_count_in_the_warning(X):
    X = X.copy()
    X[:5] = 3.0
    with pytest.warns(ClippingWarning, match="^10 values"):
        DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)


def test_vector_bounds(X):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPKMeans(3, bounds=([-1, -1], [1, 1]), random_state=0).fit(X)


BAD = [
    (np.array([[np.nan, 0.0]] * 5), {}, "X contains NaN"),
    (np.array([[np.inf, 0.0]] * 5), {}, "X contains infinity"),
    (np.zeros((0, 2)), {}, "0 sample"),
    (np.zeros(5), {}, "2D array"),
    (np.array([["a", "b"]] * 5), {}, "X: .*string"),
    (np.array([[1 + 2j, 0.0]] * 5), {}, "X: Complex data"),
    (None, {"n_clusters": 0}, "n_clusters"),
    (None, {"n_clusters": 2.5}, "n_clusters"),
    (None, {"bounds": ([-1, -1, -1], [1, 1, 1])}, "length 2"),
    (None, {"bounds": (1, -1)}, "lower < upper"),
    (None, {"bounds": (0, 0)}, "lower < upper"),
    (None, {"bounds": (0,)}, "pair"),
    (None, {"epsilon": 0.0}, "epsilon"),
    (None, {"epsilon": -1.0}, "epsilon"),
    (None, {"algorithm": "fast"}, "algorithm"),
    (None, {"random_state": -3}, "random_state"),
    (None, {"n_records": 0}, "n_records"),
    (None, {"n_records_share": 1.0}, "n_records_share"),
]


@pytest.mark.parametrize("data, params, match", BAD)
def test_bad_input_is_a_value_error_that_names_the_problem(X, data, params, match):
    model = DPKMeans(**{"n_clusters": 3, "bounds": (-1, 1), **params})
    with pytest.raises(ValueError, match=match):
        model.fit(X if data is None else data)


@pytest.mark.parametrize("bounds", [("-1", "1"), (-1, "one"), ([0, "a"], [1, 1]), (None, 1),
                                    (True, 2)])
def test_bounds_that_are_not_numbers_are_a_type_error_naming_bounds(X, bounds):
    with pytest.raises(TypeError, match="bounds"):
        DPKMeans(3, bounds=bounds).fit(X)


def test_more_clusters_than_records_warns(X):
    with pytest.warns(UserWarning, match="n_clusters = 8 exceeds the 5 records"):
        DPKMeans(8, bounds=(-1, 1), random_state=0).fit(X[:5])


def test_dataframe_with_text_column_is_rejected():
    frame = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": ["x", "y", "z"]})
    with pytest.raises(ValueError, match="non-numeric columns: \\['b'\\]"):
        DPKMeans(2, bounds=(-1, 1)).fit(frame)


def test_predict_checks_features_as_scikit_learn_does(X):
    model = DPKMeans(3, bounds=(-1, 1), random_state=0).fit(X)
    for method in (model.predict, model.transform, model.score):
        with pytest.raises(ValueError, match="X has 3 features, but DPKMeans is expecting 2"):
            method(np.zeros((4, 3)))


def test_scikit_learn_check_estimator_passes_in_full():
    """Every check of scikit-learn's own suite, none expected to fail. The large epsilon lets
    check_clustering's quality bar (ARI > 0.4 on 50 points) test the API, not the privacy-
    utility trade-off; the checks standardise their data, and +-3 standard deviations are the
    public bounds such data come with."""
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(DPKMeans(n_clusters=3, epsilon=100.0, bounds=(-3.0, 3.0), random_state=0))


def test_transform_matches_explicit_distances(X):
    model = DPKMeans(3, bounds=(-1, 1), random_state=0).fit(X)
    explicit = np.linalg.norm(X[:, None, :] - model.cluster_centers_[None], axis=2)
    np.testing.assert_allclose(model.transform(X), explicit, atol=1e-12)
