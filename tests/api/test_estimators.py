"""The sklearn-style estimator (book chapter 5)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpkmeans.api.catalogue import CATALOGUE, choice
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.errors import BudgetExceededError, ClippingWarning, PrivacyLeakWarning
from dpkmeans.privacy.accounting import PrivacyLedger


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


def test_out_of_bounds_data_is_clipped_with_a_warning_that_gives_no_count(X):
    X = X.copy()
    X[:5] = 3.0
    with pytest.warns(ClippingWarning, match="clipped") as seen:
        DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert "10" not in str(seen[0].message)


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


def test_more_clusters_than_records_is_refused(X):
    with pytest.raises(ValueError, match="n_clusters = 8 exceeds the number of records in X: "
                                         "at most one cluster per record; lower n_clusters"):
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


# -- every corrected algorithm behind one estimator (book chapter 12) --------------------------


def _extra(name: str) -> dict:
    return {"delta": 1e-6} if CATALOGUE[name].needs_delta else {}


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_corrected_algorithm_fits_within_its_budget_reproducibly(X, name):
    kw = dict(epsilon=0.8, bounds=(-1, 1), algorithm=name, random_state=4, **_extra(name))
    model = DPKMeans(3, **kw).fit(X)
    assert model.cluster_centers_.shape == (3, 2)
    assert model.ledger_.is_private
    assert model.ledger_.neighbour == CATALOGUE[name].neighbour
    spent = model.privacy_spent_
    assert spent.epsilon <= 0.8 * (1 + 1e-12)
    assert spent.delta <= kw.get("delta", 0.0) * (1 + 1e-12)
    again = DPKMeans(3, **kw).fit(X)
    np.testing.assert_array_equal(model.cluster_centers_, again.cluster_centers_)
    assert model.predict(X).shape == (900,)


@pytest.mark.parametrize("name", ["dp-kccm", "di", "colored"])
def test_the_estimator_runs_the_paper_modules_corrected_configuration(X, name):
    """The estimator adds nothing of its own: the same seed through the engine with the
    catalogue's configuration gives the same centroids (the paper chapters' runs)."""
    from dpkmeans.api.catalogue import FitInputs
    from dpkmeans.engine.loop import run

    extra = {**_extra(name), "noise": "basic"} if "delta" in _extra(name) else _extra(name)
    model = DPKMeans(3, epsilon=0.8, bounds=(-1, 1), algorithm=name, random_state=4,
                     **extra).fit(X)
    config = CATALOGUE[name].build(FitInputs(3, 0.8, model.bounds_, max_iter=5,
                                             delta=_extra(name).get("delta")))
    _, run_seq = np.random.SeedSequence(4).spawn(2)
    direct = run(X, config, run_seq)
    np.testing.assert_array_equal(model.cluster_centers_, direct.centroids[0])


def test_as_published_variants_are_not_offered():
    for name in ("as_published", "kmeans_as_published", "diffprivlib", "ceds"):
        with pytest.raises(ValueError, match="as-published variants are in dpkmeans.papers"):
            choice(name)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        DPKMeans(3, bounds=(-1, 1), algorithm="as_published").fit(np.zeros((10, 2)))


def test_di_takes_rho_and_m_instead_of_epsilon(X):
    from dpkmeans.privacy.identifiability import epsilon_from_rho

    by_rho = DPKMeans(3, rho=0.9, m=10, bounds=(-1, 1), algorithm="di", random_state=2).fit(X)
    eps = epsilon_from_rho(0.9, 10)
    by_eps = DPKMeans(3, epsilon=eps, bounds=(-1, 1), algorithm="di", random_state=2).fit(X)
    np.testing.assert_array_equal(by_rho.cluster_centers_, by_eps.cluster_centers_)
    assert by_rho.epsilon_ == eps and by_rho.rho_ == pytest.approx(0.9, rel=1e-12)
    assert by_eps.rho_ is None


@pytest.mark.parametrize("kw, message", [
    ({"algorithm": "dplloyd", "rho": 0.9, "m": 10}, "rho and m are the budget of algorithm='di'"),
    ({"algorithm": "di", "rho": 0.9, "m": 10, "epsilon": 1.0}, "got epsilon, rho, m"),
    ({"algorithm": "di", "rho": 0.9}, "rho needs m"),
    ({"algorithm": "di", "m": 10}, "got only m"),
    ({"algorithm": "di", "rho": 0.05, "m": 10}, "rho"),
    ({"algorithm": "colored"}, "give delta"),
    ({"algorithm": "balcan", "delta": 1e-6}, "has no \\(epsilon, delta\\) form"),
    ({"algorithm": "di", "delta": 1e-6, "noise": "gaussian"}, "noise must be one of"),
    ({"algorithm": "dplloyd", "noise": "laplace"}, "noise is the form of an"),
    ({"algorithm": "dplloyd", "delta": 1e-6, "noise": "basic"}, "noise must be one of"),
    ({"algorithm": "dp-kccm", "n_records": 900}, "n_records is read only by"),
    ({"algorithm": "dp-kccm", "max_iter": 0}, "max_iter"),
])
def test_budget_arguments_are_checked(X, kw, message):
    with pytest.raises(ValueError, match=message):
        DPKMeans(3, bounds=(-1, 1), random_state=0, **kw).fit(X)


def test_a_shared_accountant_refuses_a_fit_before_any_noise(X):
    accountant = PrivacyLedger(budget=2.5)
    first = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), accountant=accountant, random_state=1).fit(X)
    DPKMeans(3, epsilon=1.0, bounds=(-1, 1), algorithm="dp-kccm", accountant=accountant,
             random_state=2).fit(X)
    assert accountant.total().epsilon == pytest.approx(2.0)
    n_entries = len(accountant.entries)
    assert n_entries == len(first.ledger_.entries) + len(
        DPKMeans(3, epsilon=1.0, bounds=(-1, 1), algorithm="dp-kccm",
                 random_state=2).fit(X).ledger_.entries)
    third = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), accountant=accountant, random_state=3)
    with pytest.raises(BudgetExceededError, match="only epsilon=0.5 left .* nothing was drawn"):
        third.fit(X)
    assert len(accountant.entries) == n_entries and not hasattr(third, "cluster_centers_")
    DPKMeans(3, epsilon=0.5, bounds=(-1, 1), accountant=accountant, random_state=4).fit(X)
    assert accountant.is_fully_spent()
    # the fit's own records stay readable in the accountant, scoped by fit
    assert accountant.entries[0].scope.startswith("DPKMeans(algorithm='dplloyd-impr')")


def test_an_accountant_composes_under_one_adjacency(X):
    with pytest.raises(ValueError, match="private under replace adjacency"):
        DPKMeans(3, epsilon=1.0, bounds=(-1, 1), algorithm="di",
                 accountant=PrivacyLedger(budget=5.0), random_state=0).fit(X)
    replace = PrivacyLedger(budget=5.0, neighbour="replace")
    fitted = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), algorithm="di", accountant=replace,
                      random_state=0).fit(X)
    # what the fit spent: at most 1 (an early stop leaves the rest unspent)
    assert replace.total() == fitted.ledger_.total() and replace.total().epsilon <= 1.0
    with pytest.raises(TypeError, match="accountant must be a dpkmeans.privacy.accounting.PrivacyLedger"):
        DPKMeans(3, bounds=(-1, 1), accountant=object(), random_state=0).fit(X)


#: check_clustering's quality bar on its 50 points is not met by two algorithms, for reasons of
#: the algorithms, not of the API (every other check passes for them):
KNOWN_CLUSTERING_FAILURES = {
    # 9 clusters merged to 3 on 50 points: a merged cluster can be left without a record, and
    # the check wants every label 0..k-1 used
    "dp-kccm": "an empty merged cluster on 50 points (labels 0 and 2 only)",
    # ARI 0.37 at seed 0 (below the check's 0.4); over seeds 0-9 it ranges from 0 to 0.94
    "silhouette": "ARI below 0.4 on 50 points at epsilon = 100 (seed 0: 0.37)",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dp-kccm", "silhouette", "apdp", "di", "colored", "lsh",
                                  "balcan"])
def test_scikit_learn_check_estimator_passes_for_every_algorithm(name):
    from sklearn.utils.estimator_checks import check_estimator

    expected = ({"check_clustering": KNOWN_CLUSTERING_FAILURES[name]}
                if name in KNOWN_CLUSTERING_FAILURES else None)
    check_estimator(DPKMeans(n_clusters=3, epsilon=100.0, bounds=(-3.0, 3.0), algorithm=name,
                             random_state=0, **_extra(name)), expected_failed_checks=expected)
