"""load(): files under $DPKMEANS_DATA match MANIFEST, paper column sets, quirks, bounds, errors.

Tests that need a real file skip (with the reason) when it is not under $DPKMEANS_DATA;
everything else runs on tmp_path, scikit-learn's bundled data or synthetic arrays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpkmeans.data import fetch, load
from dpkmeans.data.dataset import Dataset, Provenance
from dpkmeans.data.errors import (
    ChecksumMismatchError,
    DataFileMissingError,
    MissingValuesError,
    PaperColumnError,
    UnknownDatasetError,
)
from dpkmeans.data.fetch import Location
from dpkmeans.data.parse import decimal_year, read_raw
from dpkmeans.data.registry import get_registry
from dpkmeans.data.scaling import clip_columns, scale_to_interval, unscale_from_interval
from dpkmeans.errors import PrivacyLeakWarning

REG = get_registry()
_DATA_ROOT = os.environ.get("DPKMEANS_DATA")  # read at import: some tests unset it


def _data_root() -> Path | None:
    return Path(_DATA_ROOT) if _DATA_ROOT else None


def _need(name: str) -> Path:
    """The verified file of ``name`` under $DPKMEANS_DATA, or skip with the reason."""
    root = _data_root()
    spec = REG.dataset(name)
    if root is None:
        pytest.skip(f"{name}: $DPKMEANS_DATA is not set (point it at ../shared/data)")
    path = root / name / spec.file.name
    if not path.is_file():
        pytest.skip(f"{name}: {spec.file.name} is not under $DPKMEANS_DATA/{name}/")
    return path


def _manifest() -> dict:
    root = _data_root()
    path = root / "manifest.json" if root else None
    return json.loads(path.read_text())["datasets"] if path and path.is_file() else {}


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No $DPKMEANS_DATA, an empty default folder (the user's cache), no checkout data/raw, no
    downloads: only tmp_path is searched."""
    monkeypatch.delenv("DPKMEANS_DATA", raising=False)
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")
    raw = tmp_path / "raw"
    monkeypatch.setattr(fetch, "default_data_home", lambda: Location("data/raw", raw))
    monkeypatch.setattr(fetch, "checkout_data_home", lambda: None)
    return tmp_path


def _same(expected: str, actual: object) -> bool:
    if expected == "nan":  # the manifest writes a missing cell as 'nan'
        return bool(pd.isna(actual))
    try:
        return float(expected) == float(actual)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(expected).strip() == str(actual).strip()


# ------------------------------------------------------------------ the files vs MANIFEST


@pytest.mark.parametrize("name", REG.names)
def test_shape_and_first_row_match_the_manifest(name: str) -> None:
    path = _need(name)
    spec = REG.dataset(name)
    raw = read_raw(spec, path)
    fact = _manifest().get(name, {"rows": spec.rows, "cols": spec.cols})
    assert raw.frame.shape == (fact["rows"], fact["cols"])
    if "first_row" in fact:
        expected = list(fact["first_row"])
        for j, col in enumerate(spec.columns):
            if col.kind == "date":  # read_raw converts dates to decimal years
                assert col.date_format is not None
                expected[j] = str(decimal_year(pd.Series([expected[j]]), col.date_format)[0][0])
        first = raw.frame.iloc[0].tolist()
        assert len(first) == len(expected)
        assert all(_same(e, a) for e, a in zip(expected, first, strict=True)), first


@pytest.mark.parametrize(
    ("name", "paper"), [(s.name, p) for s in REG.datasets.values() for p in s.papers]
)
def test_each_paper_gets_its_rows_and_dimensions(name: str, paper: str) -> None:
    _need(name)
    use = REG.dataset(name).papers[paper]
    ds = load(name, paper=paper, download=False, variant="sample")
    assert (ds.n_samples, ds.n_features) == (use.rows, use.dims)
    assert ds.paper == paper and ds.metadata["paper_use"]["match"] == use.match
    assert ds.provenance.verified and ds.provenance.sha256 == REG.dataset(name).file.sha256
    assert ds.provenance.rows_in_file - ds.provenance.n_dropped == ds.n_samples
    assert np.all(np.isfinite(ds.X))


def test_blood_for_dp_kccm_includes_the_label_as_fifth_column() -> None:
    _need("blood")
    ds = load("blood", paper="dpkccm", download=False)
    assert ds.feature_names[-1] == ds.target_name
    np.testing.assert_array_equal(ds.X[:, -1], ds.target)
    np.testing.assert_array_equal(ds.X[0], [2, 50, 12500, 98, 1])
    np.testing.assert_array_equal(ds.X[:, 2], 250 * ds.X[:, 1])  # Monetary = 250 x Frequency


def test_review_ratings_drops_the_two_malformed_rows_and_says_why() -> None:
    _need("review_ratings")
    ds = load("review_ratings", paper="dpkccm", download=False)
    (drop,) = ds.provenance.dropped
    assert drop.count == 2 and drop.records == (1348, 2713)
    assert "malformed" in drop.reason
    assert any("User 1348" in d for d in drop.detail) and any("User 2713" in d for d in drop.detail)


def test_marketing_campaign_2212_rows_for_the_colored_noise_paper() -> None:
    _need("marketing_campaign")
    ds = load("marketing_campaign", paper="colored", download=False)
    assert ds.n_samples == 2212 and ds.n_features == 28
    assert [d.count for d in ds.provenance.dropped] == [24, 3, 1]
    assert "Income is blank" in ds.provenance.dropped[0].reason
    edu = ds.feature_names.index("Education")
    assert set(np.unique(ds.X[:, edu])) <= {0, 1, 2, 3, 4}
    date = ds.feature_names.index("Dt_Customer")
    assert 2012 < ds.X[:, date].min() < ds.X[:, date].max() < 2015


def test_adult_question_marks_are_missing_values_not_levels() -> None:
    _need("adult")
    full = load("adult", download=False)
    (drop,) = full.provenance.dropped
    assert drop.count == 2399 and "workclass" in drop.reason
    assert any("blank line" in n for n in full.provenance.notes)
    kept = load("adult", on_missing="keep", download=False)
    j = kept.categorical_names.index("workclass")
    assert int((kept.categorical[:, j] == -1).sum()) == 1836
    paper = load("adult", paper="dpkccm", download=False)
    assert paper.n_samples == 32561 and paper.provenance.n_dropped == 0


def test_heart_gives_numeric_and_categorical_blocks_for_k_prototypes() -> None:
    _need("heart")
    ds = load("heart", paper="di", download=False)
    assert ds.n_numeric == 6 and ds.categorical.shape == (270, 7)
    j = ds.categorical_names.index("thal")
    assert ds.levels[j] == ("3", "6", "7")
    assert ds.categorical.min() >= 0
    assert ds.target_levels == ("1", "2") and np.bincount(ds.target).tolist() == [150, 120]


def test_abalone_sex_is_ordinal_coded_for_the_silhouette_paper() -> None:
    _need("abalone")
    ds = load("abalone", paper="silhouette", download=False)
    assert ds.feature_names[0] == "Sex" and tuple(ds.bounds[0]) == (0.0, 2.0)
    assert np.bincount(ds.X[:, 0].astype(int)).tolist() == [1528, 1307, 1342]


def test_covtype_reports_that_it_is_a_sample() -> None:
    _need("covtype")
    ds = load("covtype", paper="silhouette", download=False, variant="sample")
    assert ds.provenance.sample and ds.metadata["variant"] == "sample"
    assert ds.n_samples == 10000 and ds.n_features == 54


def test_missing_values_raise_or_stay_on_request() -> None:
    _need("marketing_campaign")
    with pytest.raises(MissingValuesError, match="Income"):
        load("marketing_campaign", on_missing="raise", download=False)
    kept = load("marketing_campaign", on_missing="keep", download=False)
    assert int(np.isnan(kept.X[:, kept.feature_names.index("Income")]).sum()) == 24


# ---------------------------------------------------------------------- bounds and scaling


def test_public_bounds_clip_and_count() -> None:
    _need("marketing_campaign")
    ds = load("marketing_campaign", scale=(0, 1), download=False)
    scaling = ds.metadata["scaling"]
    assert ds.n_clipped == 4 and dict(scaling["clipped_per_column"]) == {
        "Year_Birth": 3,
        "Income": 1,
    }
    assert scaling["mode"] == "public" and ds.X.min() >= 0 and ds.X.max() <= 1


def test_public_bounds_clip_and_count_without_files() -> None:
    ds = Dataset(
        name="toy",
        X=np.array([[-5.0, 0.5], [0.5, 0.5], [2.0, 3.0]]),
        feature_names=("a", "b"),
        bounds=np.array([[0.0, 1.0], [0.0, 1.0]]),
        bounds_why=("unit", "unit"),
        provenance=Provenance(source="test"),
    )
    scaled = ds.scaled((-1, 1))
    assert scaled.n_clipped == 3 and dict(scaled.metadata["scaling"]["clipped_per_column"]) == {
        "a": 2,
        "b": 1,
    }
    np.testing.assert_allclose(scaled.X, [[-1, 0], [0, 0], [1, 1]])
    np.testing.assert_allclose(scaled.unscale([[0.0, 0.0]]), [[0.5, 0.5]])
    with pytest.raises(ValueError, match="already scaled"):
        scaled.scaled()


def test_paper_mode_warns_and_records_the_mode() -> None:
    with pytest.warns(PrivacyLeakWarning, match="paper mode"):
        ds = load("iris", bounds="paper", scale=(-1, 1))
    assert ds.bounds_mode == "paper" and ds.metadata["scaling"]["mode"] == "paper"
    np.testing.assert_allclose(ds.X.min(axis=0), -1)
    np.testing.assert_allclose(ds.X.max(axis=0), 1)
    assert ds.n_clipped == 0


def test_paper_mode_on_a_paper_dataset() -> None:
    _need("blood")
    with pytest.warns(PrivacyLeakWarning):
        ds = load("blood", paper="dpkccm", bounds="paper", scale=(-1, 1), download=False)
    assert ds.metadata["bounds_mode"] == "paper" and ds.X.shape == (748, 5)


def test_public_mode_does_not_warn() -> None:
    ds = load("wine", scale=(0, 1))  # pyproject turns a PrivacyLeakWarning into an error
    assert ds.bounds_mode == "public" and ds.n_clipped == 0


def test_bundled_datasets_need_no_files(isolated: Path) -> None:
    iris = load("iris")
    assert iris.X.shape == (150, 4) and iris.target_levels == ("setosa", "versicolor", "virginica")
    assert iris.provenance.file is None
    wine = load("wine", columns=["alcohol", "proline"])
    assert wine.feature_names == ("alcohol", "proline")
    with pytest.raises(PaperColumnError):
        load("iris", paper="dpkccm")


def test_datasets_are_read_only() -> None:
    ds = load("iris")
    with pytest.raises(ValueError):
        ds.X[0, 0] = 1.0
    with pytest.raises(AttributeError):
        ds.name = "other"  # type: ignore[misc]


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@st.composite
def data_and_bounds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    d = draw(st.integers(1, 4))
    lo = np.array(draw(st.lists(finite, min_size=d, max_size=d)))
    width = np.array(draw(st.lists(st.floats(1e-3, 1e6), min_size=d, max_size=d)))
    X = draw(hnp.arrays(float, (draw(st.integers(1, 20)), d), elements=st.floats(-2e6, 2e6)))
    return X, np.column_stack([lo, lo + width])


@settings(max_examples=200, deadline=None)
@given(data_and_bounds(), st.sampled_from([(-1.0, 1.0), (0.0, 1.0)]))
def test_scaling_then_unscaling_round_trips_within_bounds(
    case: tuple[np.ndarray, np.ndarray], interval: tuple[float, float]
) -> None:
    X, bounds = case
    Y, counts = scale_to_interval(X, bounds, interval)
    assert np.all((interval[0] <= Y) & (interval[1] >= Y))
    back = unscale_from_interval(Y, bounds, interval)
    clipped, same_counts = clip_columns(X, bounds)
    assert counts == same_counts
    assert counts.total == int(((bounds[:, 0] > X) | (bounds[:, 1] < X)).sum())
    scale = np.maximum(np.abs(bounds).max(axis=1), 1.0)
    np.testing.assert_allclose(back, clipped, rtol=0, atol=1e-9 * scale.max())
    assert np.all((back >= bounds[:, 0] - 1e-9 * scale) & (back <= bounds[:, 1] + 1e-9 * scale))


# --------------------------------------------------------------------------------- errors


def test_missing_file_while_offline(isolated: Path) -> None:
    with pytest.raises(
        DataFileMissingError, match=r"not found.*downloads are off.*datasets fetch blood"
    ):
        load("blood", data_home=isolated / "home")


def test_missing_file_without_a_download_address(isolated: Path) -> None:
    with pytest.raises(DataFileMissingError, match="kaggle datasets download"):
        load("marketing_campaign", data_home=isolated / "home", download=True)


def test_checksum_mismatch_names_file_hashes_and_fix(isolated: Path) -> None:
    spec = REG.dataset("blood")
    bad = isolated / "home" / "blood" / spec.file.name
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"Recency (months),x\n1,2\n")
    with pytest.raises(ChecksumMismatchError) as info:
        load("blood", data_home=isolated / "home")
    message = str(info.value)
    assert str(bad) in message and spec.file.sha256 in message
    assert fetch.sha256_file(bad) in message and "datasets fetch blood" in message
    assert bad.read_bytes() == b"Recency (months),x\n1,2\n"  # never touched


def test_verified_copy_in_data_home_is_used(isolated: Path) -> None:
    source = _need("heart")
    home = isolated / "home"
    (home / "heart").mkdir(parents=True)
    (home / "heart" / "heart.dat").write_bytes(source.read_bytes())
    ds = load("heart", data_home=home)
    assert ds.provenance.location == "data_home" and ds.n_samples == 270


def test_unknown_dataset_lists_the_known_ones() -> None:
    with pytest.raises(UnknownDatasetError, match="Known datasets: blood, adult"):
        load("gamma")


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("heart", {"paper": "dpkccm"}, "did not use dataset 'heart'"),
        ("blood", {"paper": "kccm"}, "Known paper keys"),
        ("blood", {"paper": "apdp"}, "no registered datasets"),
        ("adult", {"paper": "dpkccm", "columns": ["workclass"]}, "did not use the columns"),
        ("adult", {"columns": ["Age"]}, "no column 'Age'"),
        ("tripadvisor", {"columns": ["User ID"]}, "id column"),
    ],
)
def test_paper_and_column_combinations_that_do_not_exist(
    name: str, kwargs: dict, message: str
) -> None:
    with pytest.raises(PaperColumnError, match=message):
        load(name, download=False, **kwargs)


@pytest.mark.parametrize(("old", "new"), [("dp-kccm", "dpkccm"), ("colored-noise", "colored")])
def test_a_former_paper_key_is_refused_naming_the_new_one(old: str, new: str) -> None:
    """The book's former paper keys are no longer read: a one-line error names the key now."""
    with pytest.raises(ValueError, match=f"^the paper key '{old}' was renamed: use "
                                         f"paper='{new}'$"):
        load("heart", paper=old, download=False)


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="bounds must be"):
        load("iris", bounds="data")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_missing"):
        load("iris", on_missing="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="single string"):
        load("iris", columns="alcohol")
    with pytest.raises(ValueError, match="interval"):
        load("iris", scale=(1, -1))
