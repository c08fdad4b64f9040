"""The dataset registry data/datasets.toml: contents, paper dimensions, validation, location."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from dpkmeans.data import registry as registry_mod
from dpkmeans.data.errors import PaperColumnError, RegistryError, UnknownDatasetError
from dpkmeans.data.registry import Registry, get_registry, registry_path

ELEVEN = (
    "blood",
    "adult",
    "tripadvisor",
    "electrical",
    "review_ratings",
    "credit_card",
    "magic",
    "abalone",
    "covtype",
    "heart",
    "marketing_campaign",
)

# What each paper states (rows, dims); None = not stated / lost. Sources: Ni et al. (2021)
# Table 2, Zhang, Liu and Wang (2018) Table 1, Ravi, Scaglione and Peisert (2021) section 4
# and Table 1, Shang et al. (2021) Tables 3-4.
STATED = {
    ("blood", "dpkccm"): (748, 5),
    ("adult", "dpkccm"): (32561, 6),
    ("tripadvisor", "dpkccm"): (980, 10),
    ("electrical", "dpkccm"): (10000, 13),
    ("review_ratings", "dpkccm"): (5454, 24),
    ("credit_card", "dpkccm"): (30000, 24),
    ("blood", "silhouette"): (748, 5),
    ("abalone", "silhouette"): (4177, 8),
    ("magic", "silhouette"): (19200, 10),
    ("covtype", "silhouette"): (581012, 54),
    ("magic", "di"): (19020, 11),
    ("heart", "di"): (270, 13),
    ("marketing_campaign", "colored"): (2212, None),
}


@pytest.fixture(scope="module")
def reg() -> Registry:
    return get_registry()


def test_registry_is_found_in_the_repository() -> None:
    path = registry_path()
    assert path.name == "datasets.toml" and path.parent.name == "data"
    assert path.is_file()


def test_registry_lists_the_eleven_datasets_in_order(reg: Registry) -> None:
    assert reg.names == ELEVEN
    assert set(reg.bundled) == {"iris", "wine", "breast_cancer"}


def test_every_numeric_column_has_public_bounds_and_a_rationale(reg: Registry) -> None:
    specs = [*reg.datasets.values(), *reg.bundled.values()]
    for spec in specs:
        for col in spec.columns:
            if col.kind in ("numeric", "date"):
                assert col.bounds is not None and col.bounds[0] < col.bounds[1], (
                    spec.name,
                    col.name,
                )
                assert len(col.why) > 5, (spec.name, col.name)
                assert "\n" not in col.why
            if col.kind == "categorical":
                assert col.levels, (spec.name, col.name)


def test_every_dataset_records_source_licence_parse_info_and_checksum(reg: Registry) -> None:
    for spec in reg.datasets.values():
        assert spec.page.startswith("https://")
        assert spec.licence
        assert len(spec.file.sha256) == 64
        assert spec.file.url or spec.file.no_url_reason
        assert spec.parse.sep in (",", " ", "\t")
        assert spec.cols == len(spec.columns)


def test_stated_sizes_match_the_papers(reg: Registry) -> None:
    found = {
        (s.name, p): (u.stated_rows, u.stated_dims)
        for s in reg.datasets.values()
        for p, u in s.papers.items()
    }
    assert found == STATED


def test_paper_dimensions_are_matched_or_the_mismatch_is_explained(reg: Registry) -> None:
    for spec in reg.datasets.values():
        for key, use in spec.papers.items():
            counted = len(use.columns) + (use.include_target and spec.target not in use.columns)
            assert use.dims == counted, (spec.name, key)
            assert len(use.how) > 20
            if use.match == "exact":
                assert (use.rows, use.dims) == (use.stated_rows, use.stated_dims), (spec.name, key)
            elif use.match == "interpreted":
                assert use.stated_rows in (None, use.rows), (spec.name, key)
            elif use.match == "mismatch":
                assert (use.rows, use.dims) != (use.stated_rows, use.stated_dims)
                assert "cannot match" in use.how


def test_specific_matches(reg: Registry) -> None:
    review = reg.dataset("review_ratings").papers["dpkccm"]
    assert (review.rows, review.dims, review.match) == (5454, 24, "exact")
    blood = reg.dataset("blood").papers["dpkccm"]
    assert blood.include_target and blood.dims == 5
    electrical = reg.dataset("electrical").papers["dpkccm"]
    assert "stab" in electrical.columns and "stabf" not in electrical.columns
    magic = reg.dataset("magic").papers["di"]
    assert magic.dims == 10 and magic.stated_dims == 11
    market = reg.dataset("marketing_campaign").papers["colored"]
    assert market.rows == 2212 and [f.op for f in market.row_filters] == ["missing", "<=", ">"]


def test_heart_types_follow_table_4_of_the_di_paper(reg: Registry) -> None:
    heart = reg.dataset("heart")
    use = heart.papers["di"]
    kinds = [heart.column(c).kind for c in use.columns]
    assert kinds.count("numeric") == 6 and kinds.count("categorical") == 7
    assert heart.column("major_vessels").kind == "numeric"
    assert heart.target == "class" and "class" not in use.columns


def test_apdp_has_no_known_datasets(reg: Registry) -> None:
    assert reg.paper("apdp").datasets_unknown
    assert not any("apdp" in spec.papers for spec in reg.datasets.values())


def test_covtype_is_flagged_as_a_sample_with_the_full_files_checksum(reg: Registry) -> None:
    cov = reg.dataset("covtype")
    assert cov.sample and cov.fidelity == "sample"
    assert cov.full_file is not None and cov.full_file.rows == 581012
    assert (
        cov.full_file.sha256 == "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"
    )
    assert [c.name for c in cov.columns[14:54]] == [f"Soil_Type{i}" for i in range(1, 41)]


def test_registry_agrees_with_the_shared_manifest(reg: Registry) -> None:
    root = os.environ.get("DPKMEANS_DATA")
    manifest = Path(root) / "manifest.json" if root else None
    if manifest is None or not manifest.is_file():
        pytest.skip("no manifest.json under $DPKMEANS_DATA (set it to ../shared/data to compare)")
    facts = json.loads(manifest.read_text())["datasets"]
    assert set(facts) == set(ELEVEN)
    for name, fact in facts.items():
        spec = reg.dataset(name)
        (entry,) = fact["files"]
        assert entry["path"] == f"{name}/{spec.file.name}"
        assert entry["sha256"] == spec.file.sha256
        assert entry["bytes"] == spec.file.bytes
        assert (fact["rows"], fact["cols"]) == (spec.rows, spec.cols)
        assert bool(fact["sample"]) == spec.sample


def test_lookup_errors_name_the_alternatives(reg: Registry) -> None:
    with pytest.raises(UnknownDatasetError, match="blood.*marketing_campaign"):
        reg.dataset("bloood")
    with pytest.raises(ValueError, match="Known paper keys: dpkccm"):
        reg.paper("kccm")
    with pytest.raises(PaperColumnError, match="papers that did: di"):
        reg.dataset("heart").paper_use("dpkccm")
    with pytest.raises(PaperColumnError, match="no column 'Age'"):
        reg.dataset("heart").column("Age")
    with pytest.raises(TypeError):
        reg.dataset(3)  # type: ignore[arg-type]


def test_env_var_is_the_fallback_outside_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(registry_mod, "repo_root", lambda: None)
    monkeypatch.delenv(registry_mod.REGISTRY_ENV, raising=False)
    assert registry_path() == registry_mod.PACKAGED  # the wheel's copy
    assert registry_mod.PACKAGED.read_bytes() == (
        Path(registry_mod.__file__).resolve().parents[3] / "data" / "datasets.toml").read_bytes()
    monkeypatch.setattr(registry_mod, "PACKAGED", tmp_path / "absent.toml")
    with pytest.raises(RegistryError, match="DPKMEANS_REGISTRY"):
        registry_path()
    copy_path = tmp_path / "datasets.toml"
    copy_path.write_bytes(
        Path(registry_mod.__file__)
        .resolve()
        .parents[3]
        .joinpath("data", "datasets.toml")
        .read_bytes()
    )
    monkeypatch.setenv(registry_mod.REGISTRY_ENV, str(copy_path))
    assert registry_path() == copy_path
    assert get_registry().names == ELEVEN


# ------------------------------------------------------------------------------ validation


def _minimal() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "papers": {"p": {"seed": "9", "citation": "c", "chapter": "ch", "dims_source": "s"}},
        "datasets": {
            "toy": {
                "title": "Toy",
                "page": "https://example.org",
                "licence": "CC0",
                "fidelity": "original",
                "rows": 2,
                "cols": 2,
                "target": "y",
                "file": {"name": "toy.csv", "sha256": "0" * 64, "url": "http://127.0.0.1/toy.csv"},
                "parse": {"sep": ",", "header": 0},
                "schema": {
                    "columns": [
                        {"name": "x", "kind": "numeric", "bounds": [0, 1], "why": "unit interval"},
                        {"name": "y", "kind": "categorical", "levels": ["a", "b"]},
                    ]
                },
                "papers": {
                    "p": {
                        "columns": ["x"],
                        "rows": 2,
                        "dims": 1,
                        "match": "exact",
                        "how": "all of it",
                    }
                },
            }
        },
    }


def test_minimal_registry_validates() -> None:
    reg = Registry.from_dict(_minimal())
    assert reg.dataset("toy").papers["p"].columns == ("x",)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("datasets", "toy", "schema", "columns", 0, "bounds"), [1, 0], "lower < upper"),
        (("datasets", "toy", "schema", "columns", 0, "why"), "", "'why'"),
        (("datasets", "toy", "schema", "columns", 0, "kind"), "real", "kind must be one of"),
        (("datasets", "toy", "papers", "p", "dims"), 2, "dims = 2"),
        (("datasets", "toy", "papers", "p", "columns"), ["z"], "unknown column 'z'"),
        (("datasets", "toy", "file", "sha256"), "abc", "64 hex digits"),
        (("datasets", "toy", "cols"), 3, "cols = 3"),
        (("datasets", "toy", "target"), "w", "target 'w'"),
        (("schema_version",), 2, "schema_version"),
    ],
)
def test_malformed_registry_fails_loudly(path: tuple[Any, ...], value: Any, message: str) -> None:
    raw = copy.deepcopy(_minimal())
    node: Any = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(RegistryError, match=message):
        Registry.from_dict(raw)


def _derived() -> dict[str, Any]:
    """The minimal registry, its file derived from a gzipped original by ``first_records``."""
    raw = copy.deepcopy(_minimal())
    toy = raw["datasets"]["toy"]
    toy["file"] = {"name": "toy.csv", "sha256": "0" * 64, "bytes": 20, "no_url_reason": "derived"}
    toy["full_file"] = {"name": "toy.gz", "sha256": "1" * 64, "url": "http://127.0.0.1/toy.gz",
                        "compression": "gzip", "header": "none", "rows": 3}
    toy["derive"] = {"source": "full_file", "rule": "first_records", "records": 2,
                     "header": "columns", "line_ending": "\n", "final_newline": False,
                     "max_download_bytes": 1000}
    return raw


def test_a_derivation_rule_validates() -> None:
    derive = Registry.from_dict(_derived()).dataset("toy").derive
    assert derive is not None and derive.source.name == "toy.gz"
    assert dict(derive.params) == {"records": 2, "header": "columns", "line_ending": "\n",
                                   "final_newline": False}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("derive", "source"), "original", "source must name a table"),
        (("derive", "rule"), "sample", "rule must be one of"),
        (("derive", "records"), 3, "records = 3 but the dataset has 2 rows"),
        (("derive", "header"), "none", "header must be \"columns\""),
        (("derive", "line_ending"), "\r", "line_ending must be"),
        (("derive", "sheet"), 0, "unknown keys \\['sheet'\\]"),
        (("derive", "max_download_bytes"), 0, "max_download_bytes must be > 0"),
        (("full_file", "url"), "", "has no url"),
        (("file", "bytes"), None, "needs file.bytes"),
    ],
)
def test_a_malformed_derivation_rule_fails_loudly(path: tuple[str, str], value: Any,
                                                   message: str) -> None:
    raw = _derived()
    table = raw["datasets"]["toy"][path[0]]
    if value is None:
        del table[path[1]]
    else:
        table[path[1]] = value
    if path == ("full_file", "url"):
        table["no_url_reason"] = "none"
    with pytest.raises(RegistryError, match=message):
        Registry.from_dict(raw)


def test_registry_file_errors(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="does not exist"):
        Registry.from_toml(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = [", encoding="utf-8")
    with pytest.raises(RegistryError, match="not valid TOML"):
        Registry.from_toml(bad)


def test_readme_lists_every_file_and_checksum(reg: Registry) -> None:
    readme = (registry_path().parent / "README.md").read_text(encoding="utf-8")
    for spec in reg.datasets.values():
        assert f"`{spec.file.name}`" in readme and spec.file.sha256 in readme, spec.name
