"""The LSH clustering and Balcan et al. (2017) need public bounds: ``DPKMeans(bounds=None)``
(the box read off the data) is refused with an error that says so, not one about flaws."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.papers.balcan.algorithm import BalcanClustering
from dpkmeans.papers.lsh.algorithm import LSHClustering

BOX = (np.zeros(2), np.ones(2))


@pytest.mark.parametrize("algorithm, delta", [("lsh", 1e-6), ("balcan", None)])
def test_the_estimator_without_bounds_asks_for_public_bounds(algorithm, delta):
    X = np.random.default_rng(0).random((200, 2))
    model = DPKMeans(n_clusters=2, epsilon=1.0, delta=delta, algorithm=algorithm, bounds=None,
                     random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the estimator's warning that bounds=None leaks
        with pytest.raises(ValueError, match="needs public bounds") as err:
            model.fit(X)
    assert "bounds=(lower, upper)" in str(err.value)
    assert "as-published" not in str(err.value)


@pytest.mark.parametrize("make", [
    lambda flaws: LSHClustering(2, BOX, 1.0, 1e-6, flaws=flaws),
    lambda flaws: BalcanClustering(2, BOX, 1.0, n_records=100, flaws=flaws),
])
def test_the_configurations_name_the_missing_bounds(make):
    with pytest.raises(ValueError, match="needs public bounds"):
        make((DATA_DERIVED_BOUNDS,))
    make(())  # no flaw: accepted
