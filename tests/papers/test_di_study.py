"""Shang et al. (2021) reproduced (book chapter 11): the study's points, the committed results,
the claims ledger and the audit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.papers.di import audit, claims, study, variants
from dpkmeans.papers.di.study import Point
from dpkmeans.privacy.identifiability import epsilon_from_rho
from dpkmeans.study.claims import agreement
from dpkmeans.study.sweep import expand, load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "notebooks" / "sweeps" / "di.yaml"
RESULTS = ROOT / "data" / "results" / "di.csv"
CLAIMS_FILE = ROOT / "data" / "results" / "di_claims.csv"
AUDIT_FILE = ROOT / "data" / "results" / "di_audit.csv"


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    return pd.read_csv(RESULTS)


def _case_or_skip(case: str) -> study.Case:
    from dpkmeans.data.errors import DataFileMissingError

    try:
        return study.load_case(case)
    except DataFileMissingError:
        pytest.skip(f"the {case} file is not available (set DPKMEANS_DATA)")


def test_every_di_point_has_its_dp_twin_at_the_mapped_epsilon():
    magic = study.points("magic")
    assert len(magic) == len(set(magic)) == len(study.KMEANS_ALGORITHMS) * len(study.RHOS)
    twins = {study.point_epsilon(p) for p in magic if p.algorithm == "dp_published"}
    assert twins == {epsilon_from_rho(r, variants.M_NUMERIC) for r in study.RHOS}
    heart = study.points("heart")
    assert len(heart) == 2 * len(study.RHOS_R) * len(study.RHOS_C) + 2 * len(study.EPSILONS_HEART)
    assert Point("heart", "di_published", rho=0.05, rho_c=0.7) in heart
    with pytest.raises(ValueError, match="not the sweep cell"):
        study.points("gamma")
    other = study.points("adult")  # any mixed dataset: the paper's setting only
    assert {p.algorithm for p in other} == set(study.KPROTOTYPES_ALGORITHMS) and len(other) == 4


def test_configurations_follow_the_paper_and_the_fixes():
    box = 10
    pub = study.study_config(Point("magic", "di_published", rho=0.05), None, box)
    cor = study.study_config(Point("magic", "di_corrected", rho=0.05), None, box)
    twin = study.study_config(Point("magic", "dp_corrected",
                                    epsilon=epsilon_from_rho(0.05, 10001)), None, box)
    assert "exact-counts" in {f.name for f in pub.flaws}
    assert pub.neighbour == cor.neighbour == "replace"
    assert not cor.flaws and np.array_equal(cor.schedule, twin.schedule)
    printed = study.study_config(Point("magic", "di_printed", rho=0.05), None, box)
    assert printed.iterations == 1


def test_the_sweep_spec_covers_every_cell():
    spec = load_spec(SPEC)
    assert {c["case"] for c in expand(spec)} == set(study.CELLS)
    assert all(p.iterations != variants.ITERATIONS for p in study.iteration_points())
    assert spec.fixed["runs"] is None
    smoke = load_spec(SPEC, smoke=True)
    assert [c["case"] for c in expand(smoke)] == ["gamma"]


def test_a_dataset_without_categorical_columns_is_refused_for_k_prototypes():
    from dpkmeans.data.errors import DataFileMissingError

    # DataFileMissingError is a ValueError too: look at which one was raised before matching
    with pytest.raises(ValueError) as raised:
        study.load_case("blood")
    if isinstance(raised.value, DataFileMissingError):
        pytest.skip("the blood file is not available (set DPKMEANS_DATA)")
    assert "no categorical column" in str(raised.value)


def test_agreement_needs_the_interval_inside_the_margin():
    assert agreement(0.70, 0.001, 499, 0.701, 0.001, 499, 0.02) == "agree"
    assert agreement(0.70, 0.001, 499, 0.75, 0.001, 499, 0.02) == "differ"
    assert agreement(0.70, 0.02, 9, 0.71, 0.02, 9, 0.02) == "undecided"
    with pytest.raises(ValueError, match="margin"):
        agreement(0.7, 0.01, 9, 0.7, 0.01, 9, 0.0)


def test_committed_results_are_complete(committed):
    ran = committed[committed["case"] != "gamma"]

    def stored(rows: pd.DataFrame) -> set[Point]:
        return {study.row_point(r) for r in rows.to_dict("records")}

    main = ran[ran["case"] != "iterations"]
    expected = {p for case in ("magic", "heart") for p in study.points(case)}
    assert stored(main) == expected and len(main) == len(expected)
    assert stored(ran[ran["case"] == "iterations"]) == set(study.iteration_points())
    for dataset in ("magic", "heart"):
        assert (ran.loc[ran["dataset"] == dataset, "replicas"] == study.RUNS[dataset]).all()
        assert (ran.loc[ran["dataset"] == dataset, "replicas"] >= 200).all()
    assert (ran["is_private"] == (ran["family"] == "corrected")).all()
    private = ran[ran["is_private"]]
    assert (private["epsilon_spent_max"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (ran["f_nonprivate_mean"] >= 0).all()
    paper = study.at_paper_setting(committed)
    assert len(paper) == sum(len(study.paper_points(T)) for T in study.ITERATION_GRID)
    gamma = committed[committed["case"] == "gamma"]
    assert sorted(gamma["gamma"]) == list(study.GAMMAS)
    assert (gamma["replicas"] == study.GAMMA_STARTS).all()


@pytest.mark.slow
def test_a_committed_point_is_recomputed_exactly(committed):
    """One point of each case, recomputed from its seed, is the committed row."""
    base = int(load_spec(SPEC).fixed["base_seed"])
    for point in (Point("heart", "di_published", rho=0.05, rho_c=0.7),
                  Point("magic", "di_corrected", rho=0.05)):
        case = _case_or_skip(point.case)
        fresh = study.run_point(case, point, base_seed=base, runs=study.RUNS[point.case])
        rows = committed[(committed["case"] == point.case)
                         & (committed["algorithm"] == point.algorithm)
                         & np.isclose(committed["rho"], point.rho)]
        if point.rho_c is not None:
            rows = rows[np.isclose(rows["rho_c"], point.rho_c)]
        row = rows.iloc[0]
        for column in ("f_mean", "f_se", "f_class_mean", "f_nonprivate_mean",
                       "iterations_run_mean", "epsilon_spent_max"):
            assert fresh[column] == pytest.approx(row[column], rel=1e-9), column


def test_committed_claims_are_computed_from_the_committed_results(committed):
    fresh = claims.claims_table(committed)
    stored = pd.read_csv(CLAIMS_FILE, dtype={"claim": str})
    pd.testing.assert_frame_equal(fresh.reset_index(drop=True), stored, check_dtype=False)


def test_the_printed_rule_is_never_usable():
    table = claims.printed_rule_table()
    assert (table[["usable literal", "usable capped"]].max(axis=1) < 2).all()
    assert (table.loc[table["m"] == variants.M_NUMERIC, "usable capped"] == 1).all()
    cat = table[table["m"] == variants.M_CATEGORICAL].set_index("rho")
    assert cat.loc[0.7, "usable capped"] == 0  # the paper's rho_c: rho_1 = eps / 2 < 1/2


def test_committed_audit_is_reproduced_and_says_exact_counts_leak():
    stored = pd.read_csv(AUDIT_FILE)
    published = stored[stored["name"].str.startswith("as published")]
    corrected = stored[stored["name"].str.startswith("corrected")]
    assert (published["verdict"] == "violation detected").all()
    assert (corrected["verdict"] == "consistent").all()
    # the bound on the published reducer grows with the trials: no epsilon describes it
    assert published["lower_bound"].is_monotonic_increasing
    fresh = audit.run_audits(*audit.SETTINGS[0], seed=20261125)
    for report in fresh:
        row = stored[stored["name"] == report.name].iloc[0]
        assert report.lower_bound == pytest.approx(row["lower_bound"], rel=1e-9)
