"""The estimators' API: three regression tests.

1. ``DPKMeans.n_iter_`` is the number of iterations run, as ``DPKPrototypes.n_iter_``: after
   an early stop it used to report the planned T (``di``: 10, with 0.999 of epsilon spent).
2. With a DataFrame, ``DPKPrototypes`` takes ``bounds`` and ``categories`` as dicts keyed by
   column name, refusing a dict that misses or adds a column; the list forms stay.
3. ``from dpkmeans import DPKMeans`` (and the ledger) works (it used to raise ImportError), and
   ``import dpkmeans`` stays light.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.api.mixed_estimator import DPKPrototypes
from dpkmeans.engine.loop import run
from dpkmeans.papers.di import variants


def two_blobs(n: int = 2000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.25, 0.05, (n, 2)), rng.normal(0.75, 0.05, (n, 2))])
    return X.clip(0.0, 1.0)


def iterations_in(ledger) -> int:
    """How many iterations the ledger records a release for."""
    return len({e.scope.split("iteration ")[1].split(" ")[0].split("/")[0]
                for e in ledger.entries if "iteration " in e.scope})


# --- 16. n_iter_ --------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["di", "silhouette"])
def test_n_iter_counts_the_iterations_run_after_an_early_stop(algorithm):
    X = two_blobs()
    planned = DPKMeans(2, epsilon=1e4, bounds=(0, 1), algorithm=algorithm, random_state=0)
    model = planned.fit(X)
    assert model.privacy_spent_.epsilon < model.epsilon_  # it stopped early ...
    assert model.n_iter_ < 10  # ... and says so (it said 10)
    assert model.n_iter_ == iterations_in(model.ledger_)


def test_n_iter_is_the_planned_T_without_an_early_stop():
    model = DPKMeans(2, epsilon=1.0, bounds=(0, 1), algorithm="dplloyd", max_iter=4,
                     random_state=0).fit(two_blobs(200))
    assert model.n_iter_ == 4 == iterations_in(model.ledger_)


def test_the_stopping_rule_reads_released_centroids_only():
    """The iteration count is public: replaying the stopping rule on the released centroids
    (the public start, then each iteration's release) gives it back."""
    config = variants.kmeans_corrected((np.zeros(2), np.ones(2)), epsilon=1e4)
    result = run(two_blobs(), config, 3, replicas=4, record_history=True)
    released = [result.initial_centroids, *result.history]
    for r in range(4):
        shifts = [np.linalg.norm(b[r] - a[r], axis=1).max() for a, b in zip(released, released[1:])]
        stop = next((t + 1 for t, s in enumerate(shifts) if s < config.stop.threshold),
                    config.iterations)
        assert result.iterations_run[r] == stop < config.iterations


def test_dpkprototypes_reports_the_iterations_run_too():
    frame = pd.DataFrame(two_blobs(), columns=["x", "y"])
    frame["c"] = np.where(frame["x"] > 0.5, "a", "b")
    model = DPKPrototypes(2, epsilon=1e4, bounds=(0, 1), categories=[["a", "b"]],
                          random_state=0).fit(frame)
    assert model.n_iter_ < 10 and model.n_iter_ == iterations_in(model.ledger_)


# --- 19. bounds and categories by column name ------------------------------------------------

@pytest.fixture
def people():
    rng = np.random.default_rng(1)
    n = 300
    return pd.DataFrame({"age": rng.uniform(18, 90, n), "sex": rng.choice(["f", "m"], n),
                         "income": rng.uniform(0, 1e5, n),
                         "city": rng.choice(["x", "y", "z"], n)})


LISTS = dict(bounds=([18.0, 0.0], [90.0, 1e5]), categories=[["f", "m"], ["x", "y", "z"]])
DICTS = dict(bounds={"income": (0, 1e5), "age": (18, 90)},
             categories={"city": ["x", "y", "z"], "sex": ["f", "m"]})


def test_dicts_by_column_name_fit_as_the_lists_do(people):
    by_list = DPKPrototypes(3, epsilon=1.0, random_state=5, **LISTS).fit(people)
    by_name = DPKPrototypes(3, epsilon=1.0, random_state=5, **DICTS).fit(people)
    np.testing.assert_array_equal(by_name.bounds_[0], [18.0, 0.0])
    np.testing.assert_array_equal(by_name.bounds_[1], [90.0, 1e5])
    assert [list(c) for c in by_name.categories_] == LISTS["categories"]
    np.testing.assert_array_equal(by_name.cluster_centers_, by_list.cluster_centers_)
    np.testing.assert_array_equal(by_name.cluster_modes_, by_list.cluster_modes_)
    assert by_name.ledger_.is_private
    assert by_name.get_params()["bounds"] is DICTS["bounds"]  # the parameter is not mutated


def test_dict_bounds_without_categorical_columns(people):
    numeric = people[["age", "income"]]
    model = DPKPrototypes(2, epsilon=1.0, bounds=DICTS["bounds"], random_state=0).fit(numeric)
    np.testing.assert_array_equal(model.bounds_[1], [90.0, 1e5])


@pytest.mark.parametrize("param, value, message", [
    ("bounds", {"age": (18, 90)}, r"bounds must have one entry for each numeric column "
                                  r"\['age', 'income'\]: it misses \['income'\]"),
    ("bounds", {**DICTS["bounds"], "height": (0, 3)}, r"it has \['height'\], not numeric"),
    ("bounds", {**DICTS["bounds"], "sex": (0, 1)}, r"it has \['sex'\], not numeric"),
    ("bounds", {"age": (18, 90), "income": 5}, r"bounds\['income'\] must be a pair"),
    ("bounds", {"age": (90, 18), "income": (0, 1)}, r"lower < upper"),
    ("categories", {"sex": ["f", "m"]}, r"categories must have one entry for each categorical "
                                        r"column \['sex', 'city'\]: it misses \['city'\]"),
    ("categories", {**DICTS["categories"], "age": [1]}, r"it has \['age'\], not categorical"),
])
def test_a_dict_that_misses_or_adds_a_column_is_refused(people, param, value, message):
    kw = {**DICTS, param: value}
    with pytest.raises(ValueError, match=message):
        DPKPrototypes(2, epsilon=1.0, random_state=0, **kw).fit(people)


def test_a_dict_needs_column_names(people):
    X = people[["age", "income"]].to_numpy()
    with pytest.raises(ValueError, match="bounds as a dict is keyed by column name: X must "
                                         "be a DataFrame"):
        DPKPrototypes(2, epsilon=1.0, bounds={"age": (18, 90), "income": (0, 1e5)}).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="categories as a dict is keyed by column name"):
            DPKPrototypes(2, epsilon=1.0, bounds=(0, 1e5), categorical=[1],
                          categories={"sex": ["f", "m"]}).fit(people[["age", "sex"]]
                                                              .to_numpy(dtype=object))


# --- 20. the top-level exports -------------------------------------------------------------

def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_the_estimators_and_the_ledger_import_from_the_package():
    from dpkmeans import DPKMeans as top_kmeans
    from dpkmeans import DPKPrototypes as top_prototypes
    from dpkmeans import PrivacyLedger
    from dpkmeans.privacy.accounting import PrivacyLedger as ledger_class

    assert top_kmeans is DPKMeans and top_prototypes is DPKPrototypes
    assert PrivacyLedger is ledger_class
    import dpkmeans

    assert {"DPKMeans", "DPKPrototypes", "PrivacyLedger"} <= set(dir(dpkmeans))
    assert set(dpkmeans.__all__) == {"DPKMeans", "DPKPrototypes", "PrivacyLedger", "plan"}
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        dpkmeans.nothing  # noqa: B018


def test_import_dpkmeans_stays_light():
    """Only the package itself: no numpy, pandas, scikit-learn or submodule until first use."""
    loaded = _python("import sys, dpkmeans; print(sorted(m for m in sys.modules if m.split('.')"
                     "[0] in ('dpkmeans', 'numpy', 'pandas', 'sklearn', 'scipy')))")
    assert loaded == "['dpkmeans']"
    star = _python("from dpkmeans import *; print(DPKMeans.__name__, PrivacyLedger.__name__)")
    assert star == "DPKMeans PrivacyLedger"
