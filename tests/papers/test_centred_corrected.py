"""The corrected DP-KCCM, DI k-means and DPKPrototypes measure each record from the box's
midpoint; the as-published configurations keep the papers' own sensitivity, read from the
origin. Regression test: the corrected three used the uncentred sensitivity (3.0, 6.0 and 6.0
on [0, 1]^2, against 2.0 and 4.0 centred)."""

import numpy as np
import pandas as pd
import pytest

from dpkmeans import DPKPrototypes
from dpkmeans.api.catalogue import CATALOGUE, FitInputs
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.engine.prototypes import MixedLayout
from dpkmeans.papers.di import variants as di
from dpkmeans.papers.dpkccm import variants as dpkccm
from dpkmeans.privacy.sensitivity import lloyd_query_sensitivity

UNIT2 = (np.zeros(2), np.ones(2))


def _sensitivities(config) -> set[float]:
    return {r.calibration.sensitivity for r in iteration_releases(config, float(config.schedule[0]))}


@pytest.mark.parametrize(("name", "centred", "uncentred"), [("dp-kccm", 2.0, 3.0),
                                                             ("di", 4.0, 6.0)])
def test_catalogue_corrected_are_centred(name, centred, uncentred):
    config = CATALOGUE[name].build(FitInputs(3, 1.0, UNIT2, max_iter=5))
    assert config.centred
    assert _sensitivities(config) == {centred}
    # the value reused from the library's sensitivity module, not a copy
    sens = lloyd_query_sensitivity(UNIT2, config.neighbour, centred=True)
    assert centred == (sens.joint if config.neighbour == "replace" else sens.per_cluster)
    assert uncentred == lloyd_query_sensitivity(UNIT2, config.neighbour).joint


def test_dpkccm_variants_default_centred_and_paper_option():
    for make in dpkccm.VARIANTS.values():
        assert _sensitivities(make(2, 1.0, UNIT2)) == {2.0}
        assert _sensitivities(make(2, 1.0, UNIT2, centred=False)) == {3.0}
        # on the paper's [-1, 1]^d both readings are d r + 1
        box = (-np.ones(2), np.ones(2))
        assert _sensitivities(make(2, 1.0, box)) == _sensitivities(
            make(2, 1.0, box, centred=False)) == {3.0}


def test_di_corrected_centred_published_not():
    assert _sensitivities(di.kmeans_corrected(UNIT2, epsilon=1.0)) == {4.0}
    assert _sensitivities(di.kmeans_corrected(UNIT2, rho=0.05)) == {4.0}
    published = di.kmeans_as_published(UNIT2, epsilon=1.0, data_derived_bounds=False)
    assert not published.centred
    # the sums' true replace sensitivity read from the origin, 2 sum_i max(|l_i|, |u_i|) (the
    # noise is the paper's Delta f = d; the ledger charges the difference); centred it would be 2
    assert _sensitivities(published) == {4.0}


def test_kprototypes_corrected_centred_published_not():
    layout = MixedLayout(n_levels=(2,), n_numeric=2, gamma=0.12)
    corrected = di.kprototypes_corrected(layout, UNIT2, epsilon=1.0)
    assert corrected.centred and _sensitivities(corrected) == {4.0}
    published = di.kprototypes_as_published(layout, UNIT2, epsilon=1.0)
    assert not published.centred


def test_dpkprototypes_ledger_centred():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(size=60), "y": rng.uniform(size=60),
                          "c": rng.choice(["a", "b"], size=60)})
    model = DPKPrototypes(2, epsilon=1.0, bounds=(0.0, 1.0), categories=[["a", "b"]],
                          max_iter=3, random_state=0).fit(frame)
    table = model.ledger_.to_frame()
    laplace = table[table.mechanism.str.startswith("Laplace")]
    assert set(laplace.sensitivity) == {4.0}
    numeric_only = DPKPrototypes(2, epsilon=1.0, bounds=(0.0, 1.0), max_iter=3,
                                 random_state=0).fit(frame[["x", "y"]])
    table = numeric_only.ledger_.to_frame()
    assert set(table[table.mechanism.str.startswith("Laplace")].sensitivity) == {4.0}

