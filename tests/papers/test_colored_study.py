"""The colored-noise paper reproduced (book chapter 9): the study's points and rows, the claims
ledger, the audit, the sweep, and the committed results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.papers.colored import claims, study
from dpkmeans.papers.colored.audit import A, audit_pair, run_audits
from dpkmeans.papers.colored.study import Point
from dpkmeans.privacy import colored
from dpkmeans.study.sweep import expand, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "colored.yaml"
RESULTS = ROOT / "data" / "results" / "colored.csv"
AUDIT_FILE = ROOT / "data" / "results" / "colored_audit.csv"
CLAIMS_FILE = ROOT / "data" / "results" / "colored_claims.csv"
SEED = 20261123


@pytest.fixture(scope="module")
def mixture() -> study.Prepared:
    return study.prepare("mixture_d2", base_seed=SEED)


# --- the study's building blocks -------------------------------------------------------------

def test_every_one_shot_covariance_scales_as_one_over_gamma(mixture):
    """The study solves each covariance once at gamma = 1 and divides by gamma: exact for the
    closed form and for the SDP (the constraints are homogeneous in Sigma / gamma)."""
    D = mixture.deltas
    for gamma in (0.05, 3.0):
        np.testing.assert_allclose(colored.ceds_covariance(D, gamma),
                                   colored.ceds_covariance(D, 1.0) / gamma, rtol=1e-8,
                                   atol=1e-14 / gamma)
        sdp = colored.optimal_covariance(D, gamma, blocks=study.K).covariance
        np.testing.assert_allclose(sdp, mixture.unit["sdp"] / gamma, rtol=1e-5,
                                   atol=1e-9 * np.abs(sdp).max())


def test_the_prepared_clustering_is_the_one_the_deltas_describe(mixture):
    X, labels = mixture.X, mixture.labels
    for j in range(study.K):
        np.testing.assert_allclose(mixture.centroids[j], X[labels == j].mean(axis=0))
    assert mixture.deltas.shape == (X.shape[0], study.K * X.shape[1])
    assert mixture.true_centres.shape == mixture.centroids.shape
    assert np.all(np.abs(X) <= 1.0)


def test_matched_mse_ignores_the_order_of_the_centroids(mixture):
    C = mixture.centroids[None] + 0.01
    shuffled = C[:, [2, 0, 3, 1]]
    a, b = study._matched_mse(C, mixture.true_centres), study._matched_mse(shuffled,
                                                                            mixture.true_centres)
    assert a == pytest.approx(b) and a[0] == pytest.approx(
        min(((C[0][list(p)] - mixture.true_centres) ** 2).mean()
            for p in study._PERMUTATIONS))


def test_points_cover_every_algorithm_at_every_epsilon_and_delta():
    pts = study.points()
    assert len(pts) == len(study.ALGORITHMS) * len(study.EPSILONS) * len(study.DELTAS)
    assert len(set(pts)) == len(pts)
    with pytest.raises(ValueError, match="unknown algorithms"):
        study.points(algorithms=("lsh",))
    with pytest.raises(ValueError, match="dataset must be one of"):
        study.prepare("iris", base_seed=SEED)


def test_rows_are_reproducible_and_say_what_is_private(mixture):
    pts = [Point(a, 1.0, 1e-5) for a in study.ALGORITHMS]
    first = pd.DataFrame([study.run_point(mixture, p, base_seed=SEED, draws=30) for p in pts])
    again = pd.DataFrame([study.run_point(mixture, p, base_seed=SEED, draws=30) for p in pts])
    numbers = [c for c in first.columns if c != "run_s"]
    pd.testing.assert_frame_equal(first[numbers], again[numbers])
    rows = first.set_index("algorithm")
    # one-shot: local sensitivity, never private; DP-Lloyd: private but for the float sampler
    assert not rows.loc[list(study.ONE_SHOT), "is_private"].any()
    assert rows.loc[["colored_dplloyd", "white_dplloyd"], "is_private"].all()
    assert not rows.loc["white_analytic_dplloyd", "is_private"]
    assert rows.loc["ceds", "epsilon_spent"] == pytest.approx(1.0 * study.K * 2)
    # the constraint check: the SDP and white noise meet every constraint, CEDS's form does not
    assert rows.loc["sdp_local", "violated_fraction"] == 0.0
    assert rows.loc["white_local", "violated_fraction"] == 0.0
    assert rows.loc["ceds", "violated_fraction"] > 0.5 and not rows.loc["ceds",
                                                                          "pdp_on_local_deltas"]
    # a one-shot draw's expected MSE is tr(Sigma) / (K d): 30 draws land near it
    m = study.K * 2
    for a in ("sdp_local", "white_local"):
        assert rows.loc[a, "mse_mean"] == pytest.approx(rows.loc[a, "trace"] / m, rel=0.5)


def test_a_point_does_not_depend_on_the_cell_around_it(mixture):
    alone = study.run_point(mixture, Point("colored_dplloyd", 2.0, 1e-3), base_seed=SEED, draws=20)
    cell = study.evaluate_cell("mixture_d2", base_seed=SEED, draws=20, epsilons=(2.0, 5.0),
                               deltas=(1e-3,), algorithms=("white_local", "colored_dplloyd"))
    row = cell[cell["algorithm"] == "colored_dplloyd"].iloc[0]
    for column in ("mse_mean", "ari_mean", "nicv_mean", "mse_true_mean", "point_seed"):
        assert row[column] == alone[column]


# --- the claims ledger -----------------------------------------------------------------------

def _fake(setting_means: dict, se: float = 0.01, draws: int = 1000) -> pd.DataFrame:
    rows = []
    for (algorithm, eps), mean in setting_means.items():
        rows.append({"dataset": "toy", "algorithm": algorithm, "epsilon": eps, "delta": 1e-5,
                     "draws": draws, "mse_mean": mean, "mse_se": se, "nicv_mean": mean,
                     "nicv_se": se})
    return pd.DataFrame(rows)


def test_claim_one_reads_significance_not_the_sign_alone():
    better = _fake({("sdp_local", 1.0): 1.0, ("white_local", 1.0): 2.0,
                    ("sdp_local", 2.0): 1.0, ("white_local", 2.0): 2.0})
    assert claims._claim_error(better, "toy", "local Delta's, optimal", "mse")["verdict"] == "holds"
    same = _fake({("colored_dplloyd", 1.0): 1.0, ("white_dplloyd", 1.0): 1.001,
                  ("colored_dplloyd", 2.0): 1.0, ("white_dplloyd", 2.0): 0.999})
    out = claims._claim_error(same, "toy", "corrected", "mse")
    assert out["verdict"] == "inconclusive"  # no difference is not the opposite
    worse = _fake({("ceds", 1.0): 3.0, ("white_local", 1.0): 2.0})
    assert claims._claim_error(worse, "toy", "as published", "mse")["verdict"] == "refuted"


def test_claim_three_is_refuted_by_a_violated_constraint_and_by_the_audit():
    rows = pd.DataFrame({"dataset": "toy", "algorithm": "ceds", "epsilon": [1.0, 2.0],
                         "delta": 1e-5, "worst_tail": [1.0, 5e-6], "violated_fraction": 0.5})
    assert claims._claim_pdp(rows, "toy", "constraint check, claimed eps")["verdict"] == "mixed"
    audit = pd.DataFrame({"name": ["as published (x)", "corrected (x)"],
                          "claimed_epsilon": 1.0, "lower_bound": [4.5, 0.0], "confidence": 0.99,
                          "trials": 1000, "verdict": ["violation detected", "consistent"]})
    assert claims._claim_audit(audit)["verdict"] == "refuted"


# --- the audit -------------------------------------------------------------------------------

def test_the_audit_pair_is_a_ring_around_a_plus_a_corner():
    D, D_prime = audit_pair(50)
    np.testing.assert_allclose(D[:50].mean(axis=0), A, atol=1e-15)
    assert D_prime.shape[0] == D.shape[0] + 1 and np.all(D_prime[-1] == 0.0)
    with pytest.raises(ValueError, match="at least 3"):
        audit_pair(2)


@pytest.mark.statistical
def test_audit_detects_the_published_release_and_not_the_corrected():
    published, fixed = run_audits(1.0, 1e-5, 300, group_size=200, seed=5)
    assert published.verdict == "violation detected" and published.lower_bound > 1.0
    assert fixed.verdict == "consistent"


# --- the sweep and the committed results -----------------------------------------------------

def test_sweep_grid_and_smoke_override():
    full, smoke = load_spec(SPEC), load_spec(SPEC, smoke=True)
    assert {c["dataset"] for c in expand(full)} == set(study.DATASETS)
    assert all(c["draws"] == study.DRAWS for c in expand(full))
    assert len(expand(smoke)) == 1


@pytest.mark.slow
def test_smoke_sweep_runs_through_papermill(tmp_path):
    rows = run_sweep(load_spec(SPEC, smoke=True), jobs=1, results_path=tmp_path / "s.csv",
                     progress=False)
    # the smoke cell is a mixture: every point but the outside comparator's
    assert len(rows) == len([p for p in study.points() if p.algorithm not in study.OUTSIDE])
    assert (rows["sdp_rescaled"] >= 1.0).all()


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    assert RESULTS.exists(), "run the sweep and commit data/results/colored.csv"
    return pd.read_csv(RESULTS)


def test_committed_results_are_complete(committed):
    stored = {(r.dataset, Point(r.algorithm, float(r.epsilon), float(r.delta)))
              for r in committed.itertuples()}
    expected = {(d, p) for d in study.DATASETS for p in study.points()
                if p.algorithm not in study.OUTSIDE or d in study.OUTSIDE_DATASETS}
    assert stored == expected
    outside = committed["algorithm"].isin(study.OUTSIDE)
    assert (committed.loc[~outside, "draws"] == study.DRAWS).all()
    assert (committed.loc[outside, "draws"] == study.OUTSIDE_DRAWS).all()
    private = committed[committed["is_private"]]
    assert set(private["algorithm"]) == {"colored_dplloyd", "white_dplloyd", "balcan"}
    assert (private["epsilon_spent"] <= private["epsilon"] * (1 + 1e-9)).all()
    sdp = committed[committed["algorithm"] == "sdp_local"]
    assert (sdp["violated_fraction"] == 0).all()


@pytest.mark.slow
def test_a_committed_point_is_recomputed_exactly(committed):
    prep = study.prepare("mixture_d8", base_seed=int(load_spec(SPEC).fixed["base_seed"]))
    for algorithm in ("sdp_local", "colored_dplloyd"):
        point = Point(algorithm, 1.0, 1e-5)
        fresh = study.run_point(prep, point, base_seed=int(load_spec(SPEC).fixed["base_seed"]))
        row = committed[(committed["dataset"] == "mixture_d8")
                        & (committed["algorithm"] == algorithm) & (committed["epsilon"] == 1.0)
                        & (committed["delta"] == 1e-5)].iloc[0]
        for column in ("mse_mean", "mse_se", "ari_mean", "nicv_mean", "mse_true_mean"):
            assert fresh[column] == pytest.approx(row[column], rel=1e-6), column


def test_committed_claims_are_computed_from_the_committed_results(committed):
    fresh = claims.claims_ledger(committed, pd.read_csv(AUDIT_FILE))
    stored = pd.read_csv(CLAIMS_FILE)
    pd.testing.assert_frame_equal(fresh.reset_index(drop=True), stored, check_dtype=False)


def test_the_closed_form_names_a_singular_system_instead_of_a_linalg_traceback():
    D = np.zeros((6, 4))
    D[:3, 2:] = [[1e-3, 0.0], [0.0, 1e-3], [1e-3, 1e-3]]  # block 0 all zero: M is singular
    with pytest.raises(ValueError, match="M is singular"):
        colored.ceds_covariance(D, 1.0)
