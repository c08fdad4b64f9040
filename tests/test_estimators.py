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


def test_same_random_state_same_centres_and_fresh_entropy_is_recorded(X):
    a = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=7).fit(X)
    b = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = DPKMeans(3, epsilon=1.0, bounds=(-1, 1)).fit(X)
    d = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=np.random.SeedSequence(c.seed_)).fit(X)
    np.testing.assert_array_equal(c.cluster_centers_, d.cluster_centers_)


def test_clone_safe_and_parameters_never_mutated(X):
    model = DPKMeans(3, epsilon=1.0, bounds=None, random_state=0)
    params = model.get_params()
    with pytest.warns(PrivacyLeakWarning):
        model.fit(X)
    assert model.get_params() == params and model.bounds is None
    twin = clone(model)
    assert twin.get_params() == params and not hasattr(twin, "cluster_centers_")
    assert model.paper_mode_


def test_out_of_bounds_data_is_clipped_with_a_count(X):
    X = X.copy()
    X[:5] = 3.0
    with pytest.warns(ClippingWarning, match="^10 values"):
        model = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert model.n_clipped_ == 10


def test_vector_bounds(X):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPKMeans(3, bounds=([-1, -1], [1, 1]), random_state=0).fit(X)


BAD = [
    (np.array([[np.nan, 0.0]] * 5), {}, "NaN or infinite"),
    (np.array([[np.inf, 0.0]] * 5), {}, "NaN or infinite"),
    (np.zeros((0, 2)), {}, "at least one row"),
    (np.zeros(5), {}, "2-D"),
    (np.array([["a", "b"]] * 5), {}, "numeric"),
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
]


@pytest.mark.parametrize("data, params, match", BAD)
def test_bad_input_is_a_value_error_that_names_the_problem(X, data, params, match):
    model = DPKMeans(**{"n_clusters": 3, "bounds": (-1, 1), **params})
    with pytest.raises(ValueError, match=match):
        model.fit(X if data is None else data)


def test_dataframe_with_text_column_is_rejected():
    frame = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": ["x", "y", "z"]})
    with pytest.raises(ValueError, match="non-numeric columns: \\['b'\\]"):
        DPKMeans(2, bounds=(-1, 1)).fit(frame)


def test_predict_checks_features(X):
    model = DPKMeans(3, bounds=(-1, 1), random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((4, 3)))


def test_transform_matches_explicit_distances(X):
    model = DPKMeans(3, bounds=(-1, 1), random_state=0).fit(X)
    explicit = np.linalg.norm(X[:, None, :] - model.cluster_centers_[None], axis=2)
    np.testing.assert_allclose(model.transform(X), explicit, atol=1e-12)
