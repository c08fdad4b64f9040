"""DP-KCCM at the paper's scale (book chapter 7): the study's points and seeds, the shared starts,
the summaries, the claims ledger, and spot checks of the committed results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.compute.lloyd import batched_stats
from dpkmeans.data import DataError, gaussian_mixture_dataset
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import SuSplit
from dpkmeans.papers.dpkccm import study
from dpkmeans.papers.dpkccm.claims import CLAIMS, claims_ledger, main_points, pairwise
from dpkmeans.papers.dpkccm.study import Point
from dpkmeans.study.claims import combine, compare_means, verdict
from dpkmeans.study.sweep import expand, load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "dpkccm.yaml"
RESULTS = ROOT / "data" / "results" / "dpkccm.csv"
CLAIMS_FILE = ROOT / "data" / "results" / "dpkccm_claims.csv"
SUMMARY_COLUMNS = [f"{m}_{s}" for m in ("nicv", "nicv_unsquared")
                   for s in ("mean", "sd", "se", "ci_low", "ci_high")]


@pytest.fixture(scope="module")
def toy() -> dict:
    ds = gaussian_mixture_dataset(300, 3, 2, rng=np.random.default_rng(3), separation=6.0)
    return {"public": ds.scaled(study.BOX)}


# --- points, seeds, configurations ---------------------------------------------------------

def test_the_cells_cover_figures_3_to_14_without_repeating_a_point():
    for dataset, (k0, eps0) in study.PAPER_SETTINGS.items():
        eps_points = study.points(dataset, "epsilon")
        k_points = study.points(dataset, "k")
        assert len(eps_points) == 5 * 6 and len(k_points) == 5 * 6
        assert {p.k for p in eps_points} == {k0}
        assert {p.epsilon for p in k_points} == {eps0} and k0 not in {p.k for p in k_points}
        assert set(eps_points).isdisjoint(k_points)
        assert {(p.algorithm, p.n) for p in eps_points} == {
            ("average_k", 1), ("allocation_k", 1), ("average_nk", 3), ("allocation_nk", 3),
            ("dplloyd-impr", 1)}
        ablations = study.points(dataset, "ablations")
        assert {p.n for p in ablations if p.schedule == "paper" and p.bounds == "public"} == {2, 4, 5}
        assert {p.algorithm for p in ablations if p.bounds == "paper"} == set(study.VARIANTS)
    with pytest.raises(ValueError, match="axis"):
        study.points("blood", "delta")
    with pytest.raises(ValueError, match="dataset"):
        study.points("iris", "epsilon")


def test_point_seeds_are_stable_and_distinct():
    a, b = Point("allocation_nk", 4, 0.6, n=3), Point("allocation_nk", 4, 0.6, n=2)
    assert study.point_seed(1, "blood", a) == study.point_seed(1, "blood", Point("allocation_nk", 4, 0.6, n=3))
    seeds = {study.point_seed(1, "blood", a), study.point_seed(1, "blood", b),
             study.point_seed(2, "blood", a), study.point_seed(1, "adult", a)}
    assert len(seeds) == 4 and all(0 <= s < 2**63 for s in seeds)


def test_study_configs_match_the_paper_and_use_single_precision_scores():
    bounds = (np.full(3, -1.0), np.full(3, 1.0))
    dpkccm = study.study_config(Point("allocation_nk", 4, 0.6, n=3), bounds, 500)
    assert dpkccm.n_clusters == 12 and dpkccm.iterations == 12 and dpkccm.scores == "single"
    np.testing.assert_allclose(dpkccm.schedule[[0, 4, 8]], [0.6 / 24, 0.6 / 12, 0.6 / 8])
    assert dpkccm.output.function.k == 4
    decreasing = study.study_config(Point("allocation_k", 4, 0.6, schedule="decreasing"), bounds, 500)
    np.testing.assert_allclose(decreasing.schedule, dpkccm.schedule[::-1])
    impr = study.study_config(Point("dplloyd-impr", 4, 0.6), bounds, 500)
    assert isinstance(impr.step, SuSplit) and 2 <= impr.iterations <= 7
    with pytest.raises(ValueError, match="merge factor"):
        study.study_config(Point("dplloyd-impr", 4, 0.6, n=3), bounds, 500)
    with pytest.raises(ValueError, match="does not merge"):
        study.study_config(Point("average_k", 4, 0.6, n=3), bounds, 500)
    with pytest.raises(ValueError, match="algorithm"):
        study.study_config(Point("kmeans", 4, 0.6), bounds, 500)


def test_shared_starts_repeat_each_draw_for_its_runs():
    config = study.study_config(Point("average_nk", 2, 1.0, n=3), (np.full(2, -1.0), np.ones(2)), 100)
    starts = study.shared_initial_centroids(config, 4, 5, np.random.SeedSequence(9))
    assert starts.shape == (20, 6, 2)
    blocks = starts.reshape(4, 5, 6, 2)
    assert np.all(blocks == blocks[:, :1])  # the 5 runs of a set share its start
    assert len({blocks[i, 0].tobytes() for i in range(4)}) == 4  # the sets differ


# --- engine options the study relies on ----------------------------------------------------

def test_engine_runs_from_given_starts_and_checks_them(toy):
    X = np.asarray(toy["public"].X)
    config = study.study_config(Point("average_k", 3, 1.0), (np.full(2, -1.0), np.ones(2)), len(X))
    starts = np.tile(np.array([[-0.5, -0.5], [0.0, 0.5], [0.5, -0.5]]), (4, 1, 1))
    result = run(X, config, 5, replicas=4, initial_centroids=starts)
    np.testing.assert_array_equal(result.initial_centroids, starts)
    with pytest.raises(ValueError, match="shape"):
        run(X, config, 5, replicas=3, initial_centroids=starts)
    with pytest.raises(ValueError, match="inside the public bounds"):
        run(X, config, 5, replicas=4, initial_centroids=starts * 3)
    with pytest.raises(ValueError, match="finite"):
        run(X, config, 5, replicas=4, initial_centroids=np.full_like(starts, np.nan))


def test_single_precision_scores_change_only_near_ties(rng):
    X = rng.uniform(-1, 1, size=(3000, 6))
    C = rng.uniform(-1, 1, size=(8, 7, 6))
    s64, c64 = batched_stats(X, C)
    s32, c32 = batched_stats(X, C, scores="single")
    moved = np.abs(c64 - c32).sum() / 2
    assert moved <= 0.001 * X.shape[0] * C.shape[0]  # a handful of near-tied rows at most
    np.testing.assert_array_equal(c32.sum(axis=1), np.full(8, 3000.0))  # every row counted once
    assert np.abs(s64 - s32).max() <= 2 * max(moved, 1) + 1e-9  # each moved row moves |x| <= 1
    with pytest.raises(ValueError, match="scores"):
        batched_stats(X, C, scores="half")


# --- summaries and the point runner --------------------------------------------------------

def test_summary_interval_is_over_the_initialisation_means():
    values = np.array([1.0, 3.0, 2.0, 2.0, 5.0, 7.0])  # three sets of two runs: means 2, 2, 6
    out = study.summarise(values, 3, "x")
    assert out["x_mean"] == pytest.approx(values.mean())
    se = np.std([2.0, 2.0, 6.0], ddof=1) / np.sqrt(3)
    assert out["x_se"] == pytest.approx(se)
    assert out["x_ci_high"] - out["x_mean"] == pytest.approx(4.302652729911275 * se)  # t(0.975, 2)


def test_run_point_spends_exactly_epsilon_and_is_reproducible(toy):
    point = Point("allocation_nk", 3, 0.5, n=2)
    a = study.run_point(toy, point, base_seed=1, dataset="toy", inits=3, runs=4)
    b = study.run_point(toy, point, base_seed=1, dataset="toy", inits=3, runs=4)
    assert a["ledger_equals_epsilon"] and a["epsilon_spent"] == pytest.approx(0.5)
    assert a["clusters_run"] == 6 and a["inits"] == 3 and a["runs"] == 4
    for column in SUMMARY_COLUMNS:
        assert a[column] == b[column], column
    assert a["nicv_ci_low"] <= a["nicv_mean"] <= a["nicv_ci_high"]


def test_paper_mode_is_evaluated_in_the_public_coordinates():
    """Paper-mode centroids are mapped back: with no noise worth the name (huge epsilon) the
    two scalings give nearly the same NICV on the public-bounds data."""
    raw = gaussian_mixture_dataset(400, 2, 2, rng=np.random.default_rng(5), separation=8.0)
    with pytest.warns(Warning):
        paper = raw.with_paper_bounds().scaled(study.BOX)
    data = {"public": raw.scaled(study.BOX), "paper": paper}
    rows = [study.run_point(data, Point("average_k", 2, 1e6, bounds=b), base_seed=2,
                            dataset="toy", inits=2, runs=2) for b in ("public", "paper")]
    reference = study.reference_point(data, 2, base_seed=2, dataset="toy", inits=2)
    for row in rows:
        assert row["nicv_mean"] == pytest.approx(reference["nicv_mean"], rel=0.05)


# --- claims ---------------------------------------------------------------------------------

def test_welch_comparison_and_the_four_verdicts():
    clear = compare_means(1.0, 0.01, 19, 2.0, 0.01, 19)
    assert clear.a_better and not clear.b_better and clear.p_value < 1e-10
    tie = compare_means(1.0, 0.5, 19, 1.1, 0.5, 19)
    assert not tie.a_better and not tie.b_better
    assert compare_means(2.0, 0.01, 19, 1.0, 0.01, 19).b_better
    # (supported, opposite, total): all / nearly all, the opposite, nothing, a split
    assert verdict(12, 0, 12) == "holds" and verdict(10, 2, 12, required=0.8) == "holds"
    assert verdict(11, 1, 12) == "mixed"  # "all cases" with one exception is not "holds"
    assert verdict(0, 7, 12) == "refuted" and verdict(3, 7, 12) == "refuted"
    assert verdict(0, 0, 12) == "inconclusive" and verdict(2, 3, 12) == "inconclusive"
    assert verdict(5, 5, 12) == "mixed" and verdict(0, 6, 12) == "mixed"  # 6/12 is no majority
    assert combine(["holds", "holds"]) == "holds"
    assert combine(["holds", "refuted"]) == "holds in part"
    for bad in [(0, 0, 0), (7, 6, 12), (-1, 0, 3)]:
        with pytest.raises(ValueError):
            verdict(*bad)
    with pytest.raises(ValueError):
        compare_means(1.0, 0.0, 19, 1.0, 0.0, 19)
    with pytest.raises(ValueError):
        combine(["fails"])


def _fake_results(order: dict[str, float], datasets=("blood", "credit_card")) -> pd.DataFrame:
    """Summaries where each algorithm's NICV is order[a] / epsilon, tiny standard errors."""
    rows = []
    for dataset in datasets:
        for axis in ("epsilon", "k"):
            for p in study.points(dataset, axis):
                rows.append({"dataset": dataset, "axis": axis, **p.__dict__, "inits": 20,
                             "d": 5 if dataset == "blood" else 24,
                             "nicv_mean": order[p.algorithm] / p.epsilon, "nicv_se": 1e-3,
                             "nicv_unsquared_mean": order[p.algorithm], "nicv_unsquared_se": 1e-3})
    return pd.DataFrame(rows)


def test_ledger_reads_the_paper_ranking_as_holding():
    paper_order = {"allocation_nk": 1.0, "average_nk": 1.2, "average_k": 1.4, "allocation_k": 1.6,
                   "dplloyd-impr": 1.0}
    ledger = claims_ledger(_fake_results(paper_order))
    assert set(ledger["claim"]) == set(CLAIMS)
    assert (ledger["verdict"] == "holds").all(), ledger
    unsquared = claims_ledger(_fake_results(paper_order), metric="nicv_unsquared")
    assert (unsquared.loc[unsquared["claim"] == 4, "verdict"] == "inconclusive").all()  # flat
    with pytest.raises(ValueError, match="metric"):
        claims_ledger(_fake_results(paper_order), metric="sse")


def test_ledger_reads_a_reversed_ranking_as_refuted_and_a_dimension_split():
    reversed_order = {"allocation_nk": 1.6, "average_nk": 1.4, "average_k": 1.2,
                      "allocation_k": 1.0, "dplloyd-impr": 1.0}
    frame = _fake_results(reversed_order)
    ledger = claims_ledger(frame)
    assert (ledger.loc[ledger["claim"].isin([1, 2, 3]), "verdict"] == "refuted").all()
    # Make claim 1 hold on the high-dimensional dataset only: claim 5 is refuted.
    hi = (frame["dataset"] == "credit_card") & (frame["algorithm"] == "allocation_k")
    frame.loc[hi, "nicv_mean"] *= 10
    ledger = claims_ledger(frame)
    assert (ledger.loc[ledger["claim"] == 5, "verdict"] == "refuted").all()
    table = pairwise(main_points(frame), "credit_card", "average_k", "allocation_k")
    assert len(table) == 12 and (table["outcome"] == "a better").all()


# --- the sweep and the committed results ----------------------------------------------------

def test_sweep_grid_and_smoke_override():
    full, smoke = load_spec(SPEC), load_spec(SPEC, smoke=True)
    assert len(expand(full)) == 6 * 3
    assert all(c["inits"] == 20 and c["runs"] == 50 for c in expand(full))
    assert len(expand(smoke)) == 2 and all(c["inits"] * c["runs"] == 6 for c in expand(smoke))


def test_smoke_sweep_runs_through_papermill(tmp_path):
    spec = load_spec(SPEC, smoke=True)
    try:
        rows = run_sweep(spec, jobs=2, results_path=tmp_path / "smoke.csv", progress=False)
    except Exception as err:  # papermill wraps the kernel's error
        if "not found" in str(err) and "DPKMEANS_DATA" in str(err):
            pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
        raise
    points = rows[rows["epsilon"].notna()]
    assert len(points) == 30 + 9 and points["ledger_equals_epsilon"].all()
    assert (points["is_private"] == (points["bounds"] == "public")).all()
    assert np.all(np.isfinite(points["nicv_mean"]))


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    assert RESULTS.exists(), "run the sweep and commit data/results/dpkccm.csv"
    return pd.read_csv(RESULTS)


def test_committed_results_are_complete_and_only_public_bounds_rows_are_private(committed):
    points = committed[committed["epsilon"].notna()]
    expected = {(d, p) for d in study.PAPER_SETTINGS for axis in ("epsilon", "k", "ablations")
                for p in study.points(d, axis)}
    stored = {(r.dataset, Point(r.algorithm, int(r.k), float(r.epsilon), int(r.n), r.schedule,
                                r.bounds)) for r in points.itertuples()}
    assert stored == expected
    assert (points["inits"] == 20).all() and (points["runs"] == 50).all()
    # paper-mode rows spend epsilon too, but their bounds read the data: never private
    assert (points["is_private"] == (points["bounds"] == "public")).all()
    assert not committed.loc[committed["epsilon"].isna(), "is_private"].any()  # references
    np.testing.assert_allclose(points["epsilon_spent"], points["epsilon"], rtol=1e-12)
    assert committed[SUMMARY_COLUMNS].notna().all().all()


def test_committed_claims_ledger_is_the_one_the_results_give(committed):
    """data/results/dpkccm_claims.csv (what the book and later chapters read) must be
    recomputed whenever the results change: a stale verdict fails here."""
    stored = pd.read_csv(CLAIMS_FILE)
    fresh = pd.concat([claims_ledger(committed, metric=m).assign(metric=m)
                       for m in ("nicv", "nicv_unsquared")], ignore_index=True)
    pd.testing.assert_frame_equal(stored, fresh, check_dtype=False)


@pytest.mark.parametrize("algorithm", ["allocation_nk", "dplloyd-impr"])
def test_committed_blood_points_reproduce(committed, algorithm):
    """Recompute two committed points (1000 runs each) from their seeds alone."""
    stored = committed[(committed["dataset"] == "blood") & (committed["axis"] == "epsilon")
                       & (committed["algorithm"] == algorithm)].iloc[2]
    point = Point(algorithm, int(stored["k"]), float(stored["epsilon"]), int(stored["n"]))
    try:
        data = study._datasets("blood", False)
    except DataError as err:
        pytest.skip(f"dataset not available here: {err}")
    fresh = study.run_point(data, point, base_seed=int(stored["base_seed"]), dataset="blood")
    assert fresh["point_seed"] == stored["point_seed"]
    for column in SUMMARY_COLUMNS:
        assert fresh[column] == pytest.approx(stored[column], rel=1e-9, abs=1e-12), column
