"""Generated sets (dpkmeans.data.generated) and the registry's [generated.*], [unavailable.*] and
breast_cancer entries: the G2 definition (sizes, centres, spread, integers, public bounds), the
draw's determinism, the load(name) path and the errors of bad input."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from dpkmeans.data import load
from dpkmeans.data.errors import PaperColumnError, RegistryError, UnknownDatasetError
from dpkmeans.data.generated import G2_CENTRES, G2_CLUSTER_SIZE, g2, load_generated
from dpkmeans.data.registry import Registry, get_registry

REG = get_registry()
DIMS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SDS = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)


# ----------------------------------------------------------------------------- the definition


@pytest.mark.parametrize(("d", "sd"), [(1, 10), (2, 50), (32, 100)])
def test_g2_is_two_gaussian_clusters_of_1024_points(d: int, sd: int) -> None:
    ds = g2(d, sd, np.random.default_rng(7))
    X = np.asarray(ds.X)
    assert X.shape == (2 * G2_CLUSTER_SIZE, d)
    assert np.array_equal(ds.target, np.repeat([0, 1], 1024))  # cluster 1's points first
    assert np.array_equal(X, np.rint(X))  # integer coordinates, as the files
    for label, centre in enumerate(G2_CENTRES):
        block = X[ds.target == label]
        # each coordinate's mean within 5 standard errors of the centre, its sd within 10%
        assert np.abs(block.mean(axis=0) - centre).max() < 5 * sd / np.sqrt(1024) + 0.5
        assert abs(block.std(ddof=1) / sd - 1) < 0.1
    assert np.allclose(ds.metadata["true_centers"], [[500] * d, [600] * d])


def test_g2_bounds_come_from_the_definition_not_the_draw() -> None:
    ds = g2(4, 20, np.random.default_rng(1), tail=5)
    assert np.array_equal(ds.bounds, np.tile([400.0, 700.0], (4, 1)))
    assert all("not the draw" in why for why in ds.bounds_why)
    assert ds.public_n_records == 2048


@pytest.mark.parametrize(("d", "sd", "tail"), [(0, 10, 5), (2.5, 10, 5), (True, 10, 5),
                                               (2, 0, 5), (2, -1, 5), (2, "10", 5), (2, 10, 0)])
def test_g2_refuses_bad_parameters(d: Any, sd: Any, tail: Any) -> None:
    with pytest.raises(RegistryError, match="G2 parameter"):
        g2(d, sd, np.random.default_rng(0), tail=tail)


# ------------------------------------------------------------------------------- the registry


def test_the_registry_holds_the_published_g2_grid() -> None:
    g2_sets = {n: s for n, s in REG.generated.items() if s.family == "g2"}
    assert set(g2_sets) == {f"g2_{d}_{sd}" for d in DIMS for sd in SDS}
    spec = g2_sets["g2_8_50"]
    assert spec.generator == "g2" and dict(spec.params) == {"tail": 5, "d": 8, "sd": 50}
    assert spec.seed == 20261129 and "Fränti" in spec.source
    assert "not the original files" in spec.note
    assert len({s.entropy for s in g2_sets.values()}) == len(g2_sets)  # one stream per set


def test_generated_sets_load_by_name_and_are_deterministic() -> None:
    a, b = load("g2_8_50"), load("g2_8_50")
    assert np.array_equal(a.X, b.X) and a.name == "g2_8_50" and a.X.shape == (2048, 8)
    assert not np.array_equal(a.X, load("g2_8_60").X[:, :8])
    rng = np.random.default_rng(np.random.SeedSequence(REG.generated["g2_8_50"].entropy))
    assert np.array_equal(a.X, g2(8, 50, rng).X)  # the draw is g2 on the registry's stream
    assert "not the original files" in a.provenance.source
    scaled = load("g2_8_50", scale=(-1, 1))
    assert scaled.X.min() >= -1 and scaled.X.max() <= 1 and scaled.public_n_records == 2048
    assert load("g2_8_50", columns=["x2", "x5"]).X.shape == (2048, 2)


def test_generated_sets_refuse_a_paper_and_unknown_columns() -> None:
    with pytest.raises(PaperColumnError, match="without paper="):
        load("g2_2_10", paper="dpkccm")
    with pytest.raises(PaperColumnError, match="no columns"):
        load("g2_2_10", columns=["x3"])
    with pytest.raises(TypeError):
        load("g2_2_10", columns="x1")


def test_a_set_outside_the_published_grid_is_unknown() -> None:
    with pytest.raises(UnknownDatasetError, match="generated from published definitions: g2"):
        load("g2_3_10")


def test_ablation_sets_are_recorded_as_unobtainable() -> None:
    gone = REG.unavailable["ablate_synth"]
    assert gone.matches("AblateSynth_4_8_0.5") and not gone.matches("AblateSynth_4_8")
    with pytest.raises(UnknownDatasetError, match="cannot be obtained: no published definition"):
        load("AblateSynth_16_2_0.25")


def test_breast_cancer_is_bundled_with_public_bounds() -> None:
    ds = load("breast_cancer", scale=(-1, 1))
    assert ds.X.shape == (569, 30) and ds.target_levels == ("malignant", "benign")
    assert ds.n_clipped == 0  # the assumed bounds hold every value
    assert all(len(c.why) > 5 for c in REG.bundled["breast_cancer"].columns)


# ----------------------------------------------------------------------------- bad registries


def _with_generated(**family: Any) -> dict[str, Any]:
    table = {"title": "toy G2", "generator": "g2", "name": "t_{d}_{sd}", "seed": 3,
             "fixed": {"tail": 5}, "grid": {"d": [1, 2], "sd": [10]}, "source": "s"}
    table.update(family)
    return {"schema_version": 1, "generated": {"toy": table}}


def test_a_minimal_generated_family_expands_its_grid() -> None:
    reg = Registry.from_dict(_with_generated())
    assert list(reg.generated) == ["t_1_10", "t_2_10"]
    assert load("t_2_10", registry=reg).X.shape == (2048, 2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "t_{d}"}, "must name each grid key once"),
        ({"name": "t_{d}_{sd}_{d}"}, "must name each grid key once"),
        ({"grid": {"d": [], "sd": [10]}}, "non-empty list of numbers"),
        ({"grid": {"d": [1, 1], "sd": [10]}}, "repeats a value"),
        ({"grid": {"d": ["a"], "sd": [10]}}, "non-empty list of numbers"),
        ({"fixed": {"tail": "5"}}, "must be a number"),
        ({"fixed": {"d": 2}}, "both fixed and in the grid"),
        ({"seed": -1}, "seed must be >= 0"),
        ({"seed": 1.5}, "wrong type"),
        ({"generator": 3}, "wrong type"),
    ],
)
def test_bad_generated_tables_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        Registry.from_dict(_with_generated(**change))


def test_a_generated_name_may_not_clash() -> None:
    raw = _with_generated()
    raw["generated"]["again"] = copy.deepcopy(raw["generated"]["toy"])
    with pytest.raises(RegistryError, match="a name already used"):
        Registry.from_dict(raw)


def test_an_unknown_generator_or_parameter_fails_when_drawn() -> None:
    reg = Registry.from_dict(_with_generated(generator="g3"))
    with pytest.raises(RegistryError, match="unknown generator 'g3'"):
        load_generated(reg.generated["t_1_10"])
    reg = Registry.from_dict(_with_generated(fixed={"tail": 5, "n": 3}))
    with pytest.raises(RegistryError, match="takes d, sd and tail"):
        load("t_1_10", registry=reg)


def test_an_unavailable_entry_needs_a_reason() -> None:
    raw = {"schema_version": 1,
           "unavailable": {"x": {"title": "X", "names": "X_{k}", "why": " "}}}
    with pytest.raises(RegistryError, match="why the data cannot be obtained"):
        Registry.from_dict(raw)
    raw["unavailable"]["x"]["why"] = "lost"
    reg = Registry.from_dict(raw)
    with pytest.raises(UnknownDatasetError, match="'X_3' \\(X\\) cannot be obtained: lost"):
        reg.dataset("X_3")
