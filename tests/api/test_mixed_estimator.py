"""DPKPrototypes: the sklearn-style estimator for corrected DI k-prototypes on mixed data (book
chapter 11; Shang et al. 2021, eq. 6)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpkmeans.api.mixed_estimator import CATEGORIES_LEAK, DPKPrototypes
from dpkmeans.compute.metrics import f_measure
from dpkmeans.data import load
from dpkmeans.data.registry import get_registry
from dpkmeans.errors import PrivacyLeakWarning
from dpkmeans.privacy.identifiability import epsilon_from_rho, rho_from_epsilon

COLOURS = ["red", "green", "blue"]
SIZES = ["S", "M", "L"]
CATEGORIES = [COLOURS, SIZES]
_DATA_ROOT = os.environ.get("DPKMEANS_DATA")  # read at import, as tests/data/test_data_loader.py


def _mixed(n: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two well-separated mixed clusters on [0, 1]^2 x colour x size, and the true labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    num = np.clip(np.where(y[:, None] == 0, 0.25, 0.75) + rng.normal(0, 0.07, (n, 2)), 0, 1)
    colour = np.where(rng.random(n) < 0.9, np.where(y == 0, "red", "blue"), "green")
    size = np.where(rng.random(n) < 0.85, np.where(y == 0, "S", "L"), "M")
    frame = pd.DataFrame({"x1": num[:, 0], "colour": pd.Categorical(colour, categories=COLOURS),
                          "x2": num[:, 1], "size": pd.Series(size, dtype=object)})
    return frame, y


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, np.ndarray]:
    return _mixed()


def _model(**params) -> DPKPrototypes:
    base = {"n_clusters": 2, "epsilon": 2.0, "bounds": (0.0, 1.0), "categories": CATEGORIES,
            "random_state": 0}
    return DPKPrototypes(**{**base, **params})


def _heart():
    """Statlog heart (Shang et al.'s mixed data), or skip when its file is not under
    $DPKMEANS_DATA (as ``_need`` in tests/data/test_data_loader.py)."""
    if not _DATA_ROOT:
        pytest.skip("heart: $DPKMEANS_DATA is not set (point it at ../shared/data)")
    spec = get_registry().dataset("heart")
    if not (Path(_DATA_ROOT) / "heart" / spec.file.name).is_file():
        pytest.skip(f"heart: {spec.file.name} is not under $DPKMEANS_DATA/heart/")
    return load("heart", paper="di", download=False)


# -- inputs -------------------------------------------------------------------------------------
def test_dataframe_with_a_category_dtype_column(data):
    X, _ = data
    model = _model().fit(X)
    np.testing.assert_array_equal(model.categorical_columns_, [1, 3])  # category and object
    np.testing.assert_array_equal(model.numeric_columns_, [0, 2])
    np.testing.assert_array_equal(model.feature_names_in_, ["x1", "colour", "x2", "size"])
    assert model.n_features_in_ == 4
    assert model.cluster_centers_.shape == (2, 2) and model.cluster_modes_.shape == (2, 2)
    assert set(model.cluster_modes_[:, 0]) <= set(COLOURS)
    assert set(model.cluster_modes_[:, 1]) <= set(SIZES)
    assert [list(c) for c in model.categories_] == CATEGORIES
    assert model.labels_.shape == (len(X),)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    np.testing.assert_array_equal(model.fit_predict(X), model.labels_)
    D = model.transform(X)
    assert D.shape == (len(X), 2) and np.all(D >= 0)
    np.testing.assert_array_equal(D.argmin(axis=1), model.labels_)
    assert model.score(X) == pytest.approx(-D.min(axis=1).sum())


def test_transform_is_eq6_not_square_rooted(data):
    X, _ = data
    model = _model(gamma=0.3).fit(X)
    num = X[["x1", "x2"]].to_numpy()
    cats = X[["colour", "size"]].to_numpy(dtype=object)
    explicit = ((num[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2) \
        + 0.3 * (cats[:, None, :] != model.cluster_modes_[None]).sum(axis=2)
    np.testing.assert_allclose(model.transform(X), explicit, atol=1e-12)


def test_an_index_list_a_name_list_and_auto_detection_agree(data):
    X, _ = data
    auto = _model().fit(X)
    names = _model(categorical=["colour", "size"]).fit(X)
    array = np.empty(X.shape, dtype=object)
    for j, c in enumerate(X.columns):
        array[:, j] = X[c].to_numpy(dtype=object)
    positions = _model(categorical=[1, 3]).fit(array)
    assert not hasattr(positions, "feature_names_in_")
    for other in (names, positions):
        np.testing.assert_array_equal(other.cluster_centers_, auto.cluster_centers_)
        np.testing.assert_array_equal(other.cluster_modes_, auto.cluster_modes_)
        np.testing.assert_array_equal(other.labels_, auto.labels_)
    np.testing.assert_array_equal(positions.predict(array[:20]), auto.labels_[:20])


def test_the_order_of_categorical_is_the_order_of_categories(data):
    X, _ = data
    a = _model().fit(X)
    b = _model(categorical=["size", "colour"], categories=[SIZES, COLOURS]).fit(X)
    np.testing.assert_array_equal(b.categorical_columns_, [3, 1])
    assert [list(c) for c in b.categories_] == [SIZES, COLOURS]
    assert b.cluster_modes_.shape == (2, 2) and set(b.cluster_modes_[:, 0]) <= set(SIZES)
    np.testing.assert_array_equal(a.transform(X).shape, b.transform(X).shape)


def test_numeric_only_input_is_di_kmeans(data):
    X, _ = data
    num = X[["x1", "x2"]].to_numpy()
    model = DPKPrototypes(2, epsilon=2.0, bounds=(0, 1), random_state=0).fit(num)
    assert model.layout_ is None and model.cluster_modes_.shape == (2, 0)
    assert model.categories_ == []
    assert model.ledger_.total().epsilon == pytest.approx(2.0)
    D = model.transform(num)
    explicit = ((num[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    np.testing.assert_allclose(D, explicit, atol=1e-12)


# -- budgets ------------------------------------------------------------------------------------
def test_epsilon_form_spends_exactly_epsilon(data):
    X, _ = data
    model = _model(epsilon=2.0, categorical_share=0.25).fit(X)
    assert model.n_iter_ == model.n_iter_planned_  # nothing left unspent
    assert model.epsilon_ == pytest.approx(2.0)
    assert model.privacy_spent_.epsilon == pytest.approx(2.0)
    assert model.ledger_.is_fully_spent() and model.ledger_.is_private
    assert model.ledger_.neighbour == "replace"
    assert model.rho_ is None
    frame = model.ledger_.to_frame()
    modes = frame[frame["mechanism"] == "exponential"]
    assert len(modes) == 2 * model.n_iter_planned_  # one selection per attribute and iteration
    assert modes["epsilon"].sum() == pytest.approx(0.25 * 2.0)


def test_rho_pairs_compose_sequentially_and_report_rho(data):
    X, _ = data
    model = _model(epsilon=None, rho=(0.05, 0.7), m=(10001, 2)).fit(X)
    assert model.epsilon_ == pytest.approx(6.2659 + 0.8473, abs=1e-3)
    assert model.epsilon_ == pytest.approx(7.1132, abs=1e-3)
    assert model.privacy_spent_.epsilon == pytest.approx(model.epsilon_)
    assert model.ledger_.is_fully_spent()
    assert model.rho_ == pytest.approx(rho_from_epsilon(model.epsilon_, 10001))
    assert 0.05 < model.rho_ < 0.7


def test_one_rho_with_one_m_is_the_guarantee_of_the_whole_fit(data):
    X, _ = data
    model = _model(epsilon=None, rho=0.05, m=10001).fit(X)
    assert model.epsilon_ == pytest.approx(epsilon_from_rho(0.05, 10001))
    assert model.epsilon_ == pytest.approx(6.2659, abs=1e-3)
    assert model.rho_ == pytest.approx(0.05)
    assert model.privacy_spent_.epsilon == pytest.approx(model.epsilon_)
    same = _model(epsilon=epsilon_from_rho(0.05, 10001)).fit(X)
    np.testing.assert_array_equal(same.cluster_centers_, model.cluster_centers_)


# -- categories ---------------------------------------------------------------------------------
def test_unknown_category_is_an_error_naming_the_column_not_the_value(data):
    X, _ = data
    with pytest.raises(ValueError, match=r"column 'colour'.*handle_unknown='other'") as err:
        _model(categories=[["red", "blue"], SIZES]).fit(X)
    assert "green" not in str(err.value)  # a private value: never in a message
    model = _model().fit(X)
    bad = X.head(3).copy()
    bad["size"] = ["S", "XXL", "M"]
    with pytest.raises(ValueError, match=r"column 'size'") as err:
        model.predict(bad)
    assert "XXL" not in str(err.value)


def test_handle_unknown_other_appends_and_maps(data):
    X, _ = data
    model = _model(categories=[["red", "blue"], SIZES], handle_unknown="other").fit(X)
    assert [list(c) for c in model.categories_] == [["red", "blue", "other"], SIZES + ["other"]]
    assert model.layout_.n_levels == (3, 4)
    rows = X.head(5).copy()
    rows["colour"] = rows["colour"].astype(object)
    as_other = rows.assign(colour="other")
    as_purple = rows.assign(colour="purple")
    np.testing.assert_array_equal(model.transform(as_purple), model.transform(as_other))
    np.testing.assert_array_equal(model.predict(as_purple), model.predict(as_other))
    # a public list that holds "other" already is used as it is
    again = _model(categories=[["red", "blue", "other"], SIZES], handle_unknown="other").fit(X)
    assert [list(c) for c in again.categories_] == [["red", "blue", "other"], SIZES + ["other"]]


def test_categories_read_off_the_data_warn_and_are_a_recorded_leak(data):
    X, _ = data
    with pytest.warns(PrivacyLeakWarning, match="categories='from-data'"):
        model = _model(categories="from-data").fit(X)
    assert not model.ledger_.is_private
    labels = model.ledger_.to_frame()["label"].tolist()
    assert CATEGORIES_LEAK in labels  # what happened, and the engine's flaw beside it
    assert any("box was read off" in str(label) for label in labels)
    # a category dtype's categories, otherwise the sorted distinct values
    assert [list(c) for c in model.categories_] == [COLOURS, sorted(SIZES)]


def test_bounds_none_warns_and_voids_the_guarantee(data):
    X, _ = data
    model = _model(bounds=None)
    params = model.get_params()
    with pytest.warns(PrivacyLeakWarning, match="bounds=None"):
        model.fit(X)
    assert not model.ledger_.is_private and model.paper_mode_
    assert any("box was read off" in str(label) for label in model.ledger_.to_frame()["label"])
    assert model.get_params() == params and model.bounds is None
    twin = clone(model)
    assert twin.get_params() == params and not hasattr(twin, "cluster_centers_")


def test_vector_bounds_are_in_the_units_of_the_numeric_columns(data):
    X, _ = data
    Y = X.assign(x2=100.0 * X["x2"])
    model = _model(bounds=([0.0, 0.0], [1.0, 100.0])).fit(Y)
    np.testing.assert_array_equal(model.bounds_[1], [1.0, 100.0])
    assert np.all(model.cluster_centers_[:, 1] <= 100.0)
    assert model.cluster_centers_[:, 1].max() > 1.0  # not rescaled


# -- bad input ----------------------------------------------------------------------------------
BAD_PARAMS = [
    ({"epsilon": -1.0}, ValueError, "epsilon must be > 0"),
    ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
    ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
    ({"rho": 0.05, "m": 10001}, ValueError, "exactly one budget.*got epsilon, rho, m"),
    ({"epsilon": None, "m": 2}, ValueError, "exactly one budget.*got only m"),
    ({"epsilon": None, "rho": 0.05}, ValueError, "rho needs m"),
    ({"epsilon": None, "rho": (0.05, 0.7), "m": 10001}, ValueError, "both be numbers or both"),
    ({"epsilon": None, "rho": 0.05, "m": (10001, 2)}, ValueError, "both be numbers or both"),
    ({"epsilon": None, "rho": (0.05, 0.7, 0.1), "m": (10001, 2, 2)}, ValueError, "pairs must"),
    ({"epsilon": None, "rho": (0.05, 0.4), "m": (10001, 2)}, ValueError,
     r"categorical \(rho_c, m_c\).*rho must lie in"),
    ({"epsilon": None, "rho": 0.00001, "m": 10001}, ValueError, "rho must lie in"),
    ({"epsilon": None, "rho": (0.05, 0.7), "m": (10001, 2), "categorical_share": 0.3},
     ValueError, "categorical_share is for a single budget"),
    ({"categorical_share": 1.0}, ValueError, r"categorical_share must lie in \(0, 1\)"),
    ({"gamma": 0.0}, ValueError, "gamma must be finite and > 0"),
    ({"gamma": -0.12}, ValueError, "gamma must be finite and > 0"),
    ({"gamma": float("inf")}, ValueError, "gamma must be finite and > 0"),
    ({"gamma": "0.1"}, TypeError, "gamma must be a real number"),
    ({"n_clusters": 0}, ValueError, "n_clusters"),
    ({"n_clusters": 2.5}, TypeError, "n_clusters must be an integer"),
    ({"max_iter": 0}, ValueError, "max_iter"),
    ({"handle_unknown": "ignore"}, ValueError, "handle_unknown must be one of"),
    ({"backend": "spark"}, ValueError, "backend must be one of"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"categorical": ["colour", "weight"]}, ValueError, r"no column 'weight' in X \(columns"),
    ({"categorical": [1, 7]}, ValueError, "position 7 is outside X's 4 columns"),
    ({"categorical": [1, 1]}, ValueError, "more than once"),
    ({"categorical": "colour"}, TypeError, "list of column names or integer positions"),
    ({"categorical": [True, False]}, TypeError, "boolean masks"),
    ({"categorical": ["colour"]}, ValueError,
     r"non-numeric columns not listed in categorical: \['size'\]"),
    ({"categories": [COLOURS]}, ValueError, "categories has 1 lists, but X has 2"),
    ({"categories": ["red", SIZES]}, TypeError, r"categories\[0\] \(column 'colour'\)"),
    ({"categories": [["red", "red", "blue", "green"], SIZES]}, ValueError, "distinct"),
    ({"categories": [[], SIZES]}, ValueError, "non-empty"),
    ({"bounds": (1.0, 0.0)}, ValueError, "lower < upper"),
    ({"bounds": ([0, 0, 0], [1, 1, 1])}, ValueError, "numeric columns only"),
    ({"bounds": (0.0,)}, ValueError, "pair"),
]


@pytest.mark.parametrize(("params", "error", "match"), BAD_PARAMS)
def test_bad_parameters_are_clear_errors(data, params, error, match):
    X, _ = data
    with pytest.raises(error, match=match):
        _model(**params).fit(X.head(50))


def test_missing_values_are_an_error(data):
    X, _ = data
    X = X.head(50)
    for column, value, match in (("x1", np.nan, r"X contains NaN in numeric column"),
                                 ("x2", np.inf, r"X contains infinity in numeric column"),
                                 ("size", None, "missing value.*categorical column 'size'"),
                                 ("colour", np.nan, "missing value.*categorical column 'colour'")):
        bad = X.copy()
        bad.loc[bad.index[3], column] = value
        with pytest.raises(ValueError, match=match):
            _model().fit(bad)
    fitted = _model().fit(X)
    bad = X.copy()
    bad.loc[bad.index[0], "colour"] = np.nan
    with pytest.raises(ValueError, match="missing value"):
        fitted.predict(bad)
    array = X.to_numpy(dtype=object)
    array[2, 0] = None
    with pytest.raises(ValueError, match=r"numeric column\(s\) \[0\]"):
        _model(categorical=[1, 3]).fit(array)


def test_other_bad_inputs(data):
    X, _ = data
    X = X.head(50)
    with pytest.raises(ValueError, match="no column names"):
        _model(categorical=["colour", "size"]).fit(X.to_numpy(dtype=object))
    with pytest.raises(ValueError, match="no numeric column"):
        _model(categories=CATEGORIES).fit(X[["colour", "size"]])
    with pytest.raises(ValueError, match="numeric columns .* must hold numbers"):
        _model(categorical=[1]).fit(X.to_numpy(dtype=object)[:, [0, 1, 3]])
    with pytest.raises(ValueError, match="need categorical columns"):
        DPKPrototypes(2, rho=(0.05, 0.7), m=(10001, 2), bounds=(0, 1)).fit(
            X[["x1", "x2"]].to_numpy())
    with pytest.raises(ValueError, match="no categorical column"):
        DPKPrototypes(2, epsilon=1.0, bounds=(0, 1), categories=CATEGORIES).fit(
            X[["x1", "x2"]].to_numpy())
    fitted = _model().fit(X)
    with pytest.raises(ValueError, match="feature names"):
        fitted.predict(X.rename(columns={"x2": "y2"}))
    with pytest.warns(UserWarning, match="valid feature names"), \
            pytest.raises(ValueError, match="X has 3 features, but DPKPrototypes is expecting 4"):
        fitted.predict(X.to_numpy(dtype=object)[:, :3])


# -- behaviour ----------------------------------------------------------------------------------
def test_same_random_state_same_release(data):
    X, _ = data
    a, b = _model(random_state=7).fit(X), _model(random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.cluster_modes_, b.cluster_modes_)
    c = _model(random_state=8).fit(X)
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)
    seq = np.random.SeedSequence(123)
    d, e = _model(random_state=seq).fit(X), _model(random_state=seq).fit(X)
    np.testing.assert_array_equal(d.cluster_centers_, e.cluster_centers_)
    assert seq.n_children_spawned == 0  # the parameter is never advanced


def test_recovers_two_well_separated_mixed_clusters(data):
    X, y = data
    model = _model(epsilon=1000.0).fit(X)
    assert f_measure(y, model.labels_) > 0.9
    # each cluster's modes are its own dominant categories
    modes = {tuple(row) for row in model.cluster_modes_}
    assert modes == {("red", "S"), ("blue", "L")}


def test_kmodes_cost_is_our_eq6_cost_on_heart():
    """kmodes' KPrototypes minimises the same cost: with its own prototypes and labels, our eq.
    6 distances give its ``cost_`` (numeric squared distance + gamma * mismatches)."""
    from kmodes.kprototypes import KPrototypes

    heart = _heart().scaled((0, 1))
    d_r, d_c = heart.n_numeric, heart.categorical.shape[1]
    cat = list(range(d_r, d_r + d_c))
    kp = KPrototypes(n_clusters=2, gamma=0.12, init="Cao", random_state=0).fit(
        np.column_stack([heart.X, heart.categorical]), categorical=cat)
    X = np.empty((heart.n_samples, d_r + d_c), dtype=object)
    X[:, :d_r], X[:, d_r:] = heart.X, heart.categorical
    model = DPKPrototypes(2, rho=(0.05, 0.7), m=(10001, 2), categorical=cat, bounds=(0, 1),
                          categories=[list(range(len(lv))) for lv in heart.levels], gamma=0.12,
                          random_state=0).fit(X)
    assert model.epsilon_ == pytest.approx(7.1132, abs=1e-3)
    # kmodes' prototypes in place of ours (post-processing only reads these two attributes)
    model.cluster_centers_ = kp.cluster_centroids_[:, :d_r].astype(float)
    model.cluster_modes_ = kp.cluster_centroids_[:, d_r:].astype(int).astype(object)
    D = model.transform(X)
    assert D[np.arange(len(D)), kp.labels_].sum() == pytest.approx(kp.cost_, rel=1e-12)
    assert D.min(axis=1).sum() == pytest.approx(kp.cost_, rel=1e-12)
    assert -model.score(X) == pytest.approx(kp.cost_, rel=1e-12)
    np.testing.assert_array_equal(model.predict(X), kp.labels_)


@pytest.mark.slow
def test_dask_backend_gives_the_in_memory_bits(data):
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    from dpkmeans.compute.backends.dask import DaskBackend

    X, _ = data
    memory = _model().fit(X)
    with DaskBackend() as backend:
        on_dask = _model(backend="dask", client=backend.client).fit(X)
    np.testing.assert_array_equal(memory.cluster_centers_, on_dask.cluster_centers_)
    np.testing.assert_array_equal(memory.cluster_modes_, on_dask.cluster_modes_)
    np.testing.assert_array_equal(memory.labels_, on_dask.labels_)
    assert memory.ledger_.entries == on_dask.ledger_.entries


def test_scikit_learn_check_estimator_passes_in_full():
    """Every check of scikit-learn's suite on numeric input (no categorical column: the
    corrected DI k-means), none expected to fail. As for DPKMeans, the large epsilon lets
    check_clustering's quality bar test the API, and +-3 standard deviations are the public
    bounds of the standardised data the checks use. Five iterations, not ten: the halving
    schedule's last iterations are noisy enough to miss the bar at about one seed in three
    (the check fixes random_state=0); at five every one of 30 seeds passes."""
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(DPKPrototypes(n_clusters=3, epsilon=100.0, bounds=(-3.0, 3.0), max_iter=5,
                                  random_state=0))


def test_a_shared_accountant_across_mixed_fits():
    from dpkmeans.api.mixed_estimator import DPKPrototypes
    from dpkmeans.errors import BudgetExceededError
    from dpkmeans.privacy.accounting import PrivacyLedger

    gen = np.random.default_rng(0)
    frame = pd.DataFrame({"x": gen.uniform(0, 1, 200), "c": gen.choice(["a", "b"], 200)})
    kw = dict(categorical=["c"], bounds=(0, 1), categories=[["a", "b"]], random_state=0)
    accountant = PrivacyLedger(budget=3.0, neighbour="replace")
    first = DPKPrototypes(2, epsilon=2.0, accountant=accountant, **kw).fit(frame)
    # what the fit spent (at most 2: an early stop leaves the rest unspent)
    assert accountant.total() == first.privacy_spent_ and first.privacy_spent_.epsilon <= 2.0
    with pytest.raises(BudgetExceededError, match="would spend epsilon=1.5, but"):
        DPKPrototypes(2, epsilon=1.5, accountant=accountant, **kw).fit(frame)
    with pytest.raises(ValueError, match="use one ledger per relation"):
        DPKPrototypes(2, epsilon=0.5, accountant=PrivacyLedger(budget=3.0), **kw).fit(frame)


def test_an_epsilon_delta_fit_runs_the_laplace_form_calibrated_by_pld():
    """delta > 0: the same releases (Laplace sums, exponential modes) with budgets scaled
    until their privacy-loss distribution reaches (epsilon, delta); the ledger is tight."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.random(3000), "b": rng.random(3000),
                      "c": rng.choice(["x", "y", "z"], 3000)})
    kw = dict(epsilon=1.0, bounds={"a": (0, 1), "b": (0, 1)},
              categories={"c": ["x", "y", "z"]}, max_iter=12, random_state=0)
    pure = DPKPrototypes(3, **kw).fit(X)
    tight = DPKPrototypes(3, delta=1e-6, **kw).fit(X)
    assert tight.ledger_.accounting == "tight" and tight.epsilon_ == 1.0
    assert 1.0 * (1 - 1e-3) <= tight.ledger_.epsilon_at(1e-6) <= 1.0
    kinds = {r.kind for r in tight.ledger_.releases()}
    assert kinds == {"laplace", "pure"}  # the modes' exponential mechanism is composed too
    # never more noise than the pure fit (with a dozen releases PLD gains little at 1e-6)
    spent = sum(e.epsilon for e in tight.ledger_.entries if e.epsilon > 0)
    assert spent >= pure.ledger_.total().epsilon * (1 - 1e-5)
    assert pure.ledger_.pure_epsilon() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="pairs"):
        DPKPrototypes(3, rho=(0.05, 0.7), m=(10001, 2), delta=1e-6,
                      bounds={"a": (0, 1), "b": (0, 1)},
                      categories={"c": ["x", "y", "z"]}).fit(X)
