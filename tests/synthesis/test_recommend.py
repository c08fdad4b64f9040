"""The recommendation from public quantities (dpkmeans.synthesis.recommend): it reads the
committed results and no dataset, answers an evaluated regime with that regime's best,
compares only at equal privacy, says when a request lies outside the evidence, refuses bad
input in one clear error, and its JSON reproduces it from the JSON alone (the contract the
book's calculator is held to). The held-out validation in data/results agrees with a fresh one.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkmeans.data
import dpkmeans.data.loader
from dpkmeans.api.catalogue import CATALOGUE, forms
from dpkmeans.reproduce import DERIVED, run_reproduce
from dpkmeans.synthesis import recommend as rec
from dpkmeans.synthesis.leaderboard import DELTA

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"


@pytest.fixture(scope="module")
def evidence() -> pd.DataFrame:
    return rec.evidence()


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    return pd.read_csv(RESULTS / "leaderboard.csv")


# --- what it reads ---------------------------------------------------------------------------

def test_it_reads_the_committed_results_and_no_dataset(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("recommend read a dataset")

    read = []
    real_read_csv = pd.read_csv

    def spy(path, *args, **kwargs):
        read.append(Path(path).resolve())
        return real_read_csv(path, *args, **kwargs)

    monkeypatch.setattr(dpkmeans.data, "load", refuse)
    monkeypatch.setattr(dpkmeans.data.loader, "load", refuse)
    monkeypatch.setattr(pd, "read_csv", spy)
    rec._book_model.cache_clear()
    try:
        answer = rec.recommend(10_000, 10, 5, 1.0)
    finally:
        monkeypatch.undo()
        rec._book_model.cache_clear()
    assert answer.algorithm and sorted(read) == sorted(
        (RESULTS / f"{s}.csv").resolve() for s in rec.SOURCES)


def test_the_evidence_is_every_table_in_one_measure(evidence, board):
    assert list(evidence.columns) == list(rec.COLUMNS)
    assert set(evidence["source"]) == set(rec.SOURCES)
    assert (evidence["rel"] > -1).all() and (evidence["rel_lo"] <= evidence["rel"]).all()
    assert (evidence["rel"] <= evidence["rel_hi"]).all()
    lb = evidence[evidence["source"] == "leaderboard"]
    assert len(lb) == len(board)  # every row of the board, as it is
    assert np.allclose(np.sort(lb["rel"]), np.sort(board["rel_nicv_mean"]))
    # FastLloyd's protocol: only its pure rows (its deltas are each dataset's own)
    protocol = evidence[evidence["source"] == "fastlloyd_protocol"]
    assert (protocol["delta"] == 0).all() and protocol["algorithm"].str.endswith("(pure)").all()
    assert evidence["generated"].sum() and not evidence.loc[
        evidence["source"] == "leaderboard", "generated"].any()


# --- what it answers -------------------------------------------------------------------------

def _regimes(board: pd.DataFrame, delta: float) -> list[tuple[str, pd.DataFrame]]:
    rows = board[board["comparable"].astype(bool) & np.isclose(board["delta"], delta)]
    return list(rows.groupby(["dataset", "epsilon"]))


@pytest.mark.parametrize("delta", [0.0, DELTA])
def test_an_evaluated_regime_gets_its_own_best(board, delta):
    for (dataset, eps), point in _regimes(board, delta):
        first = point.iloc[0]
        answer = rec.recommend(int(first["N"]), int(first["d"]), int(first["k"]), eps, delta)
        assert answer.nearest[0] == f"{dataset}, k={first['k']}, ε={eps:g}"
        best = point.loc[point["rel_nicv_mean"].idxmin()]
        mine = point.set_index("contender").loc[answer.algorithm]
        assert mine["rel_nicv_mean"] <= best["rel_nicv_ci_high"], (dataset, eps)
        assert answer.predicted == pytest.approx(mine["rel_nicv_mean"], rel=1e-4, abs=1e-5)
        assert not answer.outside
        lo, hi = answer.interval
        assert lo <= answer.predicted <= hi


def test_the_answer_is_complete_and_says_so_in_words():
    answer = rec.recommend(10_000, 10, 5, 1.0)
    table = answer.alternatives
    assert list(table.columns[:4]) == ["algorithm", "predicted", "lo", "hi"]
    assert table["algorithm"].iloc[0] == answer.algorithm and table["algorithm"].is_unique
    assert (table["lo"] <= table["predicted"]).all() and (table["predicted"] <= table["hi"]).all()
    assert len(answer.nearest) == rec.NEIGHBOURS
    assert answer.algorithm in answer.reason and "δ = 0" in answer.reason
    with pytest.raises(AttributeError):
        answer.algorithm = "other"  # frozen


@pytest.mark.parametrize("request_", [
    (10**9, 5_000, 1_000, 100.0, 0.0),      # beyond every coordinate
    (10**9, 5_000, 1_000, 100.0, 1e-5),
    (2_048, 256, 64, 1.0, 0.0),             # each coordinate measured, never together
])
def test_a_far_away_request_is_outside_and_says_so(request_):
    answer = rec.recommend(*request_)
    assert answer.outside
    assert "outside everything the book measured" in answer.reason
    assert answer.algorithm  # still answered, from the nearest regimes


def test_every_evaluated_regime_is_inside(evidence):
    regimes = evidence.drop_duplicates(["source", "dataset", "k", "epsilon", "delta",
                                        "neighbour"])
    for row in regimes.itertuples():
        answer = rec.recommend(int(row.N), int(row.d), int(row.k), row.epsilon, row.delta,
                               row.neighbour)
        assert not answer.outside, row.label


def _pure_at_delta(name: str) -> bool:
    base = name.split(" (", 1)[0]
    return name.endswith("(pure)") and "pure" in forms(CATALOGUE[base], DELTA, "add/remove")


@pytest.mark.parametrize("N, d, k, eps", [(500, 3, 2, 0.1), (10_000, 10, 5, 1.0),
                                          (100_000, 100, 32, 2.0), (30_000, 24, 5, 0.05)])
def test_equal_privacy(N, d, k, eps):
    pure = rec.recommend(N, d, k, eps, 0.0)
    assert pure.evidence_delta == 0.0
    assert pure.alternatives["algorithm"].str.endswith("(pure)").all()
    for delta in (DELTA, 1e-5, 0.01):
        approx = rec.recommend(N, d, k, eps, delta)
        assert approx.evidence_delta == DELTA
        names = approx.alternatives["algorithm"]
        assert all(not n.endswith("(pure)") or _pure_at_delta(n) for n in names), list(names)
        assert ("conservative" in approx.reason) == (delta > DELTA)
    # a delta below every measured one: the pure rows, which meet any delta, and it says so
    small = rec.recommend(N, d, k, eps, 1e-9)
    assert small.evidence_delta == 0.0 and small.algorithm == pure.algorithm
    assert "pure ε-DP ones, which meet any δ" in small.reason
    replace = rec.recommend(N, d, k, eps, 0.0, "replace")
    assert set(replace.alternatives["algorithm"]) == {"di (pure, replace)"}
    assert "only algorithm" in replace.reason


def _toy(best_pure: str, best_approx: str) -> pd.DataFrame:
    """Two datasets at three epsilons, two algorithms a delta, each class with its own best."""
    rows = []
    for dataset, N in (("one", 1_000), ("two", 5_000)):
        for eps in (0.1, 1.0, 10.0):
            for delta, names, best in ((0.0, ("a (pure)", "b (pure)"), best_pure),
                                       (DELTA, ("a (gaussian)", "b (gaussian)"), best_approx)):
                for name in names:
                    rel = 0.1 / eps if name == best else 1.0 / eps
                    rows.append({"source": "leaderboard", "dataset": dataset,
                                 "generated": False, "label": dataset, "N": N, "d": 4, "k": 3,
                                 "epsilon": eps, "delta": delta, "neighbour": "add/remove",
                                 "algorithm": name, "rel": rel, "rel_lo": rel * 0.9,
                                 "rel_hi": rel * 1.1})
    return pd.DataFrame(rows)


def test_each_privacy_class_answers_alone():
    frame = _toy("a (pure)", "b (gaussian)")
    assert rec.recommend(2_000, 4, 3, 1.0, 0.0, frame=frame).algorithm == "a (pure)"
    assert rec.recommend(2_000, 4, 3, 1.0, 1e-6, frame=frame).algorithm == "b (gaussian)"
    assert rec.recommend(2_000, 4, 3, 1.0, 1e-9, frame=frame).algorithm == "a (pure)"
    with pytest.raises(ValueError, match="no row under replace adjacency"):
        rec.recommend(2_000, 4, 3, 1.0, 0.0, "replace", frame=frame)


@pytest.mark.parametrize("args, message", [
    ((1000, 5, 3, -1.0), "epsilon must be > 0"),
    ((1000, 5, 3, 0.0), "epsilon must be > 0"),
    ((1000, 5, 3, float("nan")), "epsilon must be finite"),
    ((1000, 5, 3, float("inf")), "epsilon must be finite"),
    ((10, 5, 11, 1.0), "n_clusters must be at most n_records"),
    ((0, 5, 3, 1.0), "n_records"),
    ((1000, 0, 3, 1.0), "n_features"),
    ((1000, 2.5, 3, 1.0), "n_features"),
    ((1000, 5, True, 1.0), "n_clusters"),
    ((1000, 5, 3, 1.0, 1.0), r"delta must lie in \[0, 1\)"),
    ((1000, 5, 3, 1.0, -1e-6), r"delta must lie in \[0, 1\)"),
    ((1000, 5, 3, 1.0, 0.0, "swap"), "neighbour must be one of"),
])
def test_bad_input_is_one_clear_error(args, message):
    with pytest.raises(ValueError, match=message):
        rec.recommend(*args)


def test_bad_evidence_is_refused():
    frame = _toy("a (pure)", "b (gaussian)")
    with pytest.raises(ValueError, match="pandas DataFrame"):
        rec.recommend(1000, 4, 3, 1.0, frame=frame.to_dict())
    with pytest.raises(ValueError, match=r"lacks the evidence columns \['rel'\]"):
        rec.recommend(1000, 4, 3, 1.0, frame=frame.drop(columns="rel"))
    with pytest.raises(ValueError, match="relative objective <= -1"):
        rec.recommend(1000, 4, 3, 1.0, frame=frame.assign(rel=-1.5))
    with pytest.raises(ValueError, match="non-finite"):
        rec.recommend(1000, 4, 3, 1.0, frame=frame.assign(epsilon=np.nan))
    with pytest.raises(ValueError, match="twice"):
        rec.recommend(1000, 4, 3, 1.0, frame=pd.concat([frame, frame.iloc[:1]]))


# --- the JSON: the calculator's contract ------------------------------------------------------

def browser(model: dict, N: int, d: int, k: int, eps: float, delta: float,
            relation: str) -> dict:
    """The calculator's evaluation (the JavaScript of the module docstring), line for line,
    from the JSON alone."""
    fits = [c for c in model["classes"] if c["neighbour"] == relation and c["delta"] <= delta]
    c = max(fits, key=lambda c: c["delta"])
    x = [math.log10(N * eps / k), math.log10(d), math.log10(k)]
    zq = [(v - c["mean"][i]) / c["scale"][i] for i, v in enumerate(x)]
    dist = []
    for j, r in enumerate(c["regimes"]):
        s = 0
        for i, v in enumerate(r["x"]):
            s = s + (zq[i] - (v - c["mean"][i]) / c["scale"][i]) ** 2
        dist.append((math.sqrt(s), j))
    near = sorted(dist)[:model["neighbours"]]
    alts = {}
    for a, name in enumerate(c["algorithms"]):
        got = [(dj, j) for dj, j in near if c["regimes"][j]["y"][a] is not None]
        if not got:
            continue
        ys = [c["regimes"][j]["y"][a] for _, j in got]
        here = any(dj < model["exact"] for dj, _ in got)
        w = [(1.0 if dj < model["exact"] else 0.0) if here else 1 / (dj * dj) for dj, _ in got]
        m = sum(wi * y for wi, y in zip(w, ys)) / sum(w)
        u = sum(ys) / len(ys)
        sd = math.sqrt(sum((y - u) * (y - u) for y in ys) / len(ys))
        h = max(sd + c["widen"], 0)
        alts[name] = {"m": m, "here": here, "support": len(got), "predicted": 10 ** m - 1,
                      "lo": 10 ** (m - h) - 1, "hi": 10 ** (m + h) - 1}
    most = max(a["support"] for a in alts.values())
    pool = ({n: a for n, a in alts.items() if a["here"]} if any(
        a["here"] for a in alts.values()) else
        {n: a for n, a in alts.items() if a["support"] == most})
    best = min(pool, key=lambda n: (pool[n]["m"], c["algorithms"].index(n)))
    slack = model["slack"]
    outside = near[0][0] > c["reach"] + slack or any(
        v < c["low"][i] - slack or v > c["high"][i] + slack for i, v in enumerate(x))
    return {"best": best, "alts": alts, "outside": outside,
            "nearest": [c["regimes"][j]["label"] for _, j in near]}


REQUESTS = [(N, d, k, eps, delta, relation)
            for N in (150, 2_000, 30_000, 10**6) for d in (2, 10, 60) for k in (2, 5, 40)
            for eps in (0.05, 0.7, 5.0) for delta, relation in (
                (0.0, "add/remove"), (1e-6, "add/remove"), (1e-3, "add/remove"),
                (1e-8, "add/remove"), (0.0, "replace")) if k <= N]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    path = rec.export_model(tmp_path_factory.mktemp("calculator") / "recommend.json")
    assert path.stat().st_size < 200_000
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_json_is_plain_and_small(exported):
    assert exported["format"] == "dpkmeans-recommend" and exported["version"] == 1
    assert {(c["delta"], c["neighbour"]) for c in exported["classes"]} == {
        (0.0, "add/remove"), (DELTA, "add/remove"), (0.0, "replace")}
    for c in exported["classes"]:
        assert all(len(r["y"]) == len(c["algorithms"]) for r in c["regimes"])


def test_the_json_reproduces_recommend(exported):
    """The contract: from the JSON alone, the calculator's evaluation gives what recommend
    gives, for a grid of requests."""
    for request in REQUESTS:
        mine = rec.recommend(*request)
        theirs = browser(exported, *request)
        assert theirs["best"] == mine.algorithm, request
        assert theirs["outside"] == mine.outside, request
        assert tuple(theirs["nearest"]) == mine.nearest, request
        table = mine.alternatives.set_index("algorithm")
        assert set(theirs["alts"]) == set(table.index), request
        for name, alt in theirs["alts"].items():
            for column in ("predicted", "lo", "hi"):
                assert alt[column] == pytest.approx(table.loc[name, column], rel=1e-12,
                                                    abs=1e-12), (request, name, column)
            assert alt["support"] == table.loc[name, "support"]


# --- the held-out validation ------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed_validation() -> pd.DataFrame:
    return pd.read_csv(RESULTS / "recommend_validation.csv")


def test_the_committed_validation_aggregates_are_recomputed(committed_validation):
    fresh = rec.validation_rows()
    pd.testing.assert_frame_equal(rec.validation_summary(committed_validation),
                                  rec.validation_summary(fresh), check_exact=False, rtol=1e-9)
    summary = rec.validation_summary(committed_validation)
    overall = summary.iloc[0]
    assert overall["regimes"] == len(committed_validation)
    assert set(summary["data"]) == {"all", "real", "generated"}
    # per regime: the fields the chapter reads, consistent with each other
    v = committed_validation
    assert (v["covered"] == ((v["lo"] <= v["result"]) & (v["result"] <= v["hi"]))).all()
    assert (v["hit"] == ((v["recommended"] == v["best"]) | (v["result"] <= v["best_hi"]))).all()
    assert (v["result"] >= v["best_result"]).all()


def test_a_held_out_dataset_never_informs_its_own_prediction(evidence):
    """Changing one dataset's results changes none of its own predictions."""
    board = evidence[evidence["source"] == "leaderboard"].reset_index(drop=True)
    before = rec.validation_rows(board)
    moved = board.assign(rel=np.where(board["dataset"] == "adult", board["rel"] * 3 + 1,
                                      board["rel"]))
    after = rec.validation_rows(moved)
    own = before["dataset"] == "adult"
    columns = ["recommended", "predicted", "lo", "hi", "widen", "reach", "outside"]
    pd.testing.assert_frame_equal(before.loc[own, columns], after.loc[own, columns])
    assert not np.allclose(before.loc[own, "result"], after.loc[own, "result"])
    assert not np.allclose(before.loc[~own, "lo"], after.loc[~own, "lo"])  # others saw it


def test_make_reproduce_writes_the_validation(tmp_path, committed_validation):
    """`reproduce --only recommend_validation` rebuilds the file from the committed tables."""
    (step,) = [d for d in DERIVED if d.name == "recommend_validation"]
    assert set(step.reads) == set(rec.SOURCES)
    results = tmp_path / "data" / "results"
    results.mkdir(parents=True)
    for source in rec.SOURCES:
        shutil.copy(RESULTS / f"{source}.csv", results)
    state = run_reproduce(tmp_path, only=["recommend_validation"], say=lambda s: None,
                          progress=False)
    assert "recommend_validation" in state["derived"]
    written = pd.read_csv(results / "recommend_validation.csv")
    pd.testing.assert_frame_equal(written, committed_validation, check_exact=False, rtol=1e-9)
