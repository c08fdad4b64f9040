"""Each leak an independent privacy review found, as a regression test that failed before its fix.

1. DPLloyd-Impr read the exact N (T told D and D + one record apart with certainty).
2. The fitted model stored fresh entropy (``seed_``): anyone holding it regenerated the noise.
3. Paper mode (bounds read off the data) looked private in the ledger and in results.
4. The exact clip count was a public attribute (and then printed in the ClippingWarning).
5. Guards: allocations, replace adjacency, degenerate bounds, and an assignment whose code path
   (and so rounding) depended on N.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.compute.lloyd import assign, batched_stats
from dpkmeans.data import gaussian_mixture_dataset
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import FixedShares
from dpkmeans.errors import ClippingWarning, PrivacyLeakWarning
from dpkmeans.papers.dpkccm import study
from dpkmeans.papers.dpkccm.study import Point
from dpkmeans.privacy.accounting import PrivacyLedger

BOX2 = (-np.ones(2), np.ones(2))


def corner_data(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, 2))


# --- 1. the record count -------------------------------------------------------------------

def test_su_rule_sits_on_a_boundary_between_1580_and_1581_records():
    """The review's example: k = 3, d = 2, eps = 1."""
    assert schedules.su_iterations(1.0, 1580, 3, 2) == 2
    assert schedules.su_iterations(1.0, 1581, 3, 2) == 3


def test_the_estimator_cannot_tell_n_from_n_plus_one_by_its_iterations():
    """Before: n_iter_ was 2 on every fit of D and 3 on every fit of D plus one record, a
    certain distinction. Now T follows a noisy count (5% of epsilon; the iterations get the
    other 95%), so at the boundary of Su's rule both datasets see both values of T."""
    run_eps = 0.95
    n0 = next(n for n in range(1000, 3000) if schedules.su_iterations(run_eps, n + 1, 3, 2) == 3)
    assert schedules.su_iterations(run_eps, n0, 3, 2) == 2
    D = corner_data(n0 + 1)
    share = {n: np.mean([DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=s)
                         .fit(D[:n]).n_iter_ == 3 for s in range(60)]) for n in (n0, n0 + 1)}
    assert all(0.15 < v < 0.85 for v in share.values()), share
    assert abs(share[n0] - share[n0 + 1]) < 0.25, share


def test_a_stated_record_count_is_public_and_the_noisy_one_is_paid_for():
    D = corner_data(1581)
    stated = [DPKMeans(3, epsilon=1.0, bounds=(-1, 1), n_records=1580, random_state=0).fit(X)
              for X in (D[:1580], D)]
    assert [m.n_iter_ for m in stated] == [2, 2]  # the stated N, whatever the data
    assert all(m.ledger_.is_fully_spent() for m in stated)
    noisy = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(D)
    counts = [e for e in noisy.ledger_.entries if e.label == "N (record count)"]
    assert len(counts) == 1 and counts[0].epsilon == pytest.approx(0.05)
    assert counts[0].sensitivity == 1.0
    assert noisy.privacy_spent_.epsilon == pytest.approx(1.0) and noisy.ledger_.is_fully_spent()
    assert isinstance(noisy.n_records_used_, int) and noisy.n_records_used_ >= 1


def test_the_study_reads_the_documented_record_count_not_the_rows():
    """DPLloyd-Impr points take N from the dataset's documentation (public)."""
    ds = gaussian_mixture_dataset(1581, 3, 2, rng=np.random.default_rng(1))
    assert ds.public_n_records == 1581
    from dataclasses import replace as dc_replace
    documented = dc_replace(ds, metadata={**ds.metadata, "public_rows": 1580})
    row = study.run_point({"public": documented.scaled(study.BOX)}, Point("dplloyd-impr", 3, 1.0),
                          base_seed=1, dataset="toy", inits=2, runs=2)
    assert row["iterations"] == schedules.su_iterations(1.0, 1580, 3, 2) == 2


# --- 2. the seed ----------------------------------------------------------------------------

def test_a_fitted_model_holds_nothing_that_regenerates_its_noise():
    """Before: ``seed_`` held the fresh entropy, and random_state=seed_ gave the same centres."""
    X = corner_data(500)
    model = DPKMeans(3, epsilon=1.0, bounds=(-1, 1)).fit(X)
    candidates = [v for v in vars(model).values()
                  if isinstance(v, np.random.SeedSequence)
                  or (isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 0)]
    for value in candidates:
        seed = value if isinstance(value, np.random.SeedSequence) else int(value)
        again = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=seed).fit(X)
        assert not np.array_equal(again.cluster_centers_, model.cluster_centers_)
    assert "secret" in DPKMeans.__doc__


# --- 3. paper mode --------------------------------------------------------------------------

def test_paper_mode_is_recorded_as_a_leak():
    X = corner_data(300)
    with pytest.warns(PrivacyLeakWarning):
        model = DPKMeans(3, epsilon=1.0, bounds=None, random_state=0).fit(X)
    assert not model.ledger_.is_private
    assert any("read off the private data" in e.label for e in model.ledger_.entries)
    public = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert public.ledger_.is_private


def test_paper_mode_points_of_the_study_are_not_private():
    raw = gaussian_mixture_dataset(300, 2, 2, rng=np.random.default_rng(5))
    with pytest.warns(PrivacyLeakWarning):
        paper = raw.with_paper_bounds().scaled(study.BOX)
    data = {"public": raw.scaled(study.BOX), "paper": paper}
    rows = {b: study.run_point(data, Point("average_k", 2, 1.0, bounds=b), base_seed=2,
                               dataset="toy", inits=2, runs=2) for b in ("public", "paper")}
    assert rows["public"]["is_private"] is True
    assert rows["paper"]["is_private"] is False


# --- 4. the clip count ----------------------------------------------------------------------

def test_the_clip_count_is_neither_an_attribute_nor_in_the_warning():
    X = corner_data(200)
    X[:4] = 3.0
    with pytest.warns(ClippingWarning, match="clipped") as seen:
        model = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert not any("clip" in name for name in vars(model))
    assert "8" not in str(seen[0].message)


# --- 5. guards ------------------------------------------------------------------------------

def test_an_allocation_must_give_its_largest_share_one_before_any_noise():
    with pytest.raises(ValueError, match="largest share 1"):
        DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=[1.0],
                      allocation=FixedShares([0.5, 0.5, 0.25]))
    DPLloydConfig(n_clusters=3, bounds=BOX2, schedule=[1.0],
                  allocation=FixedShares([1.0, 0.5, 0.25]))


def test_allocations_and_parallel_scopes_are_refused_under_replace():
    with pytest.raises(ValueError, match="add/remove"):
        DPLloydConfig(n_clusters=2, bounds=BOX2, schedule=[1.0],
                      allocation=FixedShares([1.0, 1.0]), neighbour="replace")
    ledger = PrivacyLedger(neighbour="replace")
    with pytest.raises(ValueError, match="add/remove"):
        with ledger.parallel("clusters"):
            pass


def test_degenerate_bounds_are_refused_by_the_configuration():
    with pytest.raises(ValueError, match="lower < upper"):
        DPLloydConfig(n_clusters=2, bounds=(np.zeros(2), np.array([1.0, 0.0])), schedule=[1.0])


def near_ties(n: int, C: np.ndarray, seed: int) -> np.ndarray:
    """Points near the midpoint of the first two centroids, on their bisector (as well as
    float64 can put them): the two nearest centroids are then at almost the same distance."""
    gen = np.random.default_rng(seed)
    normal = C[1] - C[0]
    along = gen.normal(size=(n, C.shape[1]))
    along -= np.outer(along @ normal / (normal @ normal), normal)
    return (C[0] + C[1]) / 2 + 0.01 * along


def exact_labels(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """argmin_j of fl(||c_j||^2) - 2 x.c_j in exact rational arithmetic (lowest j on a tie)."""
    norms = [Fraction(float((c * c).sum())) for c in C]  # fl(||c||^2), as the engine
    out = []
    for x in X:
        scores = [norms[j] - 2 * sum(Fraction(float(a)) * Fraction(float(b))
                                      for a, b in zip(x, C[j])) for j in range(len(C))]
        out.append(min(range(len(C)), key=lambda j: (scores[j], j)))
    return np.array(out)


def test_a_records_cluster_does_not_depend_on_the_records_after_it():
    """Before: with d = 24 and k = 15 rows were processed in chunks of 2730 and a chunk of one
    row went through another BLAS kernel, so a near-tied record at position 2731 joined
    another cluster depending on whether a 2732nd record followed it (39 of 200 did). Now
    every record gets its exact nearest centroid, whatever N."""
    gen = np.random.default_rng(24)
    C = gen.uniform(-0.5, 0.5, size=(15, 24))
    ties, filler = near_ties(200, C, 1), gen.uniform(-1, 1, size=(2730, 24))
    alone, followed = [], []
    for t in ties:
        X = np.vstack([filler, t, filler[:1]])
        alone.append(assign(X[:2731], C)[2730])
        followed.append(assign(X, C)[2730])
    np.testing.assert_array_equal(alone, followed)
    np.testing.assert_array_equal(alone, exact_labels(ties, C))


@pytest.mark.parametrize("scores", ["double", "single"])
@pytest.mark.parametrize("d, k", [(2, 4), (24, 15), (54, 7)])
def test_every_record_gets_its_exact_nearest_centroid_in_every_batch(scores, d, k):
    """Labels of near-tied records in batches of many sizes and positions, in both score
    precisions, equal the exact ones; adding a record changes one count by one."""
    gen = np.random.default_rng(d + k)
    C = gen.uniform(-0.5, 0.5, size=(k, d))
    ties = near_ties(60, C, d)
    exact = exact_labels(ties, C)
    for n in (1, 7, 300, 3000):
        X = np.vstack([gen.uniform(-1, 1, size=(n, d)), ties])
        np.testing.assert_array_equal(assign(X, C, scores=scores)[n:], exact)
        counts = batched_stats(X, C[None], scores=scores)[1][0]
        more = batched_stats(np.vstack([ties[:1], X]), C[None], scores=scores)[1][0]
        assert (more - counts).tolist() == [float(j == exact[0]) for j in range(k)]


def test_the_engine_spends_the_declared_budget_with_an_external_ledger():
    config = DPLloydConfig(n_clusters=2, bounds=BOX2, schedule=[0.4, 0.4])
    ledger = PrivacyLedger(budget=1.0)
    ledger.charge("Laplace", epsilon=0.2, sensitivity=1.0, scale=5.0, label="something first")
    result = run(corner_data(50), config, 0, ledger=ledger)
    assert result.ledger is ledger and ledger.is_fully_spent()
    with pytest.raises(ValueError, match="exceeds the declared budget"):
        run(corner_data(50), config, 0, ledger=PrivacyLedger(budget=0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="neighbour"):
            run(corner_data(50), config, 0, ledger=PrivacyLedger(neighbour="replace"))
