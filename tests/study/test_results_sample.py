"""Every committed results file, spot-checked at random: a row of every kind (corrected, as
published, non-private reference, ...) of every file in ``data/results/`` is rebuilt from its
own columns and must give the stored numbers (relative 1e-9: the files keep 12 significant
digits).

- A sweep's results file: one row per kind, drawn among the rows on its affordable datasets
  (a point there runs its 200-1000 replicas in seconds) by a generator seeded with the file's
  own bytes, so a new results file gets new rows, and ``DPKMEANS_RESULTS_SAMPLE_SEED`` draws
  others. Every kind of row in the file must have an affordable row.
- A claims ledger: rebuilt whole from the committed files it reads; every row compared.
- An audit file: one row per kind (as published, corrected), rebuilt with the writer's seed.

The fixed points of each paper's study tests stay; this test covers every file with one rule.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans.api.catalogue import CATALOGUE
from dpkmeans.data import DataError
from dpkmeans.papers.apdp import claims as apdp_claims
from dpkmeans.papers.apdp import study as apdp_study
from dpkmeans.papers.colored import audit as colored_audit
from dpkmeans.papers.colored import claims as colored_claims
from dpkmeans.papers.colored import study as colored_study
from dpkmeans.papers.di import audit as di_audit
from dpkmeans.papers.di import claims as di_claims
from dpkmeans.papers.di import study as di_study
from dpkmeans.papers.di import variants as di_variants
from dpkmeans.papers.dpkccm import claims as dpkccm_claims
from dpkmeans.papers.dpkccm import study as dpkccm_study
from dpkmeans.papers.silhouette import claims as silhouette_claims
from dpkmeans.papers.silhouette import study as silhouette_study
from dpkmeans.papers.su.study import evaluate
from dpkmeans.privacy.identifiability import epsilon_from_rho
from dpkmeans.reproduce import EXPERIMENTS
from dpkmeans.study import sweep
from dpkmeans.study.shared import Point
from dpkmeans.study.sweep import FLOAT_FORMAT, cell_id, expand, load_spec
from dpkmeans.synthesis import (
    fastlloyd_audit,
    fastlloyd_home,
    fastlloyd_protocol,
    gallery,
    home_ground,
    leaderboard,
    outside_audit,
    recommend,
    tightness,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
#: Columns that are not results (timings, versions) or are the point itself.
BOOKKEEPING = set(sweep.BOOKKEEPING)


def _value(row: pd.Series, name: str) -> float | None:
    return None if pd.isna(row[name]) else float(row[name])


# --- sweeps' results files: how one row is rebuilt ---------------------------------------

def _dplloyd_baselines(row: pd.Series) -> dict:
    spec = load_spec(ROOT / "notebooks" / "sweeps" / "dplloyd_baselines.yaml")
    params = {cell_id(c): c for c in expand(spec)}[row["cell"]]
    kwargs = {k: v for k, v in params.items() if k not in ("case", "replicas")}
    return evaluate(**kwargs, replicas=1, first_replica=int(row["replica"])).iloc[0].to_dict()


@functools.lru_cache(maxsize=None)
def _dpkccm_data(dataset: str, paper: bool) -> dict:
    return dpkccm_study._datasets(dataset, paper)


def _dpkccm(row: pd.Series) -> dict:
    base, dataset = int(row["base_seed"]), row["dataset"]
    if row["algorithm"] == dpkccm_study.REFERENCE:
        return dpkccm_study.reference_point(_dpkccm_data(dataset, False), int(row["k"]),
                                            base_seed=base, dataset=dataset,
                                            inits=int(row["inits"]),
                                            iterations=int(row["iterations"]))
    point = dpkccm_study.Point(row["algorithm"], int(row["k"]), float(row["epsilon"]),
                               int(row["n"]), row["schedule"], row["bounds"])
    return dpkccm_study.run_point(_dpkccm_data(dataset, row["bounds"] == "paper"), point,
                                  base_seed=base, dataset=dataset, inits=int(row["inits"]),
                                  runs=int(row["runs"]))


def _silhouette(row: pd.Series) -> dict:
    point = silhouette_study.Point(row["algorithm"], int(row["k"]), float(row["epsilon"]))
    return silhouette_study.run_point(silhouette_study._datasets(row["dataset"]), point,
                                      base_seed=int(row["base_seed"]), dataset=row["dataset"],
                                      runs=int(row["runs"]))


@functools.lru_cache(maxsize=None)
def _colored_prepared(dataset: str, base_seed: int) -> colored_study.Prepared:
    return colored_study.prepare(dataset, base_seed=base_seed)


def _colored(row: pd.Series) -> dict:
    prep = _colored_prepared(row["dataset"], int(row["base_seed"]))
    point = colored_study.Point(row["algorithm"], float(row["epsilon"]), float(row["delta"]))
    return colored_study.run_point(prep, point, base_seed=int(row["base_seed"]),
                                   draws=int(row["draws"]))


def _apdp(row: pd.Series) -> dict:
    case, base = row["case"], int(row["base_seed"])
    inits, runs = int(row["inits"]), int(row["runs"])
    data = apdp_study.load_case(case)
    starts = apdp_study.shared_starts(case, np.asarray(data["public"].X).shape[1], base, inits,
                                      runs)
    if row["family"] == "reference":
        return apdp_study.reference_row(data, case, starts, inits)
    return apdp_study.run_point(data, Point(case, row["algorithm"], float(row["epsilon"])),
                                base_seed=base, starts=starts, inits=inits, runs=runs)


@functools.lru_cache(maxsize=None)
def _di_case(dataset: str) -> di_study.Case:
    return di_study.load_case(dataset)


def _di(row: pd.Series) -> dict:
    base = int(row["base_seed"])
    if row["algorithm"] == "kprototypes_nonprivate":  # the gamma cell: one gamma a row
        return di_study.gamma_rows(base_seed=base, gammas=(float(row["gamma"]),),
                                   starts=int(row["replicas"])).iloc[0].to_dict()
    point = di_study.row_point(row)
    return di_study.run_point(_di_case(point.case), point, base_seed=base,
                              runs=int(row["replicas"]))


def _leaderboard(row: pd.Series) -> dict:
    public = leaderboard.apdp_study.load_public(row["case"])
    X, base = np.asarray(public.X), int(row["base_seed"])
    reference = float(leaderboard.reference_nicv(X, row["case"], base).mean())
    point = leaderboard.BoardPoint(row["case"], row["algorithm"], float(row["epsilon"]),
                                   row["form"], float(row["delta"]), row["neighbour"])
    return leaderboard.run_point(X, public.public_n_records, point, reference, base_seed=base)


def _leaderboard_kind(row: pd.Series) -> str:
    """A form at a delta, of a loop algorithm or a standalone one, under its relation: every
    kind of calibration the board holds (a Gaussian twin, a PLD-calibrated Laplace form, a
    tight or basic (epsilon, delta) algorithm, a pure one at delta > 0, DI under replace)."""
    standalone = " (standalone)" if CATALOGUE[row["algorithm"]].standalone else ""
    other = "" if row["neighbour"] == "add/remove" else f", {row['neighbour']}"
    return f"{row['form']} at delta {float(row['delta']):g}{standalone}{other}"


def _audit_tightness(row: pd.Series) -> dict:
    trials = int(row["trials"])
    scores = (tightness.mechanism_scores(row["target"], trials)
              if row["target"] in tightness.MECHANISMS
              else tightness.algorithm_scores(row["target"], row["level"], trials,
                                              dimension=int(row["dimension"])))
    rows = tightness.curve_rows(scores)  # the curve's points: the stored one by its delta
    return next(r for r in rows if r["delta"] == pytest.approx(float(row["delta"]), rel=1e-9))


def _audit_gallery(row: pd.Series) -> dict:
    """A gallery row rebuilt by its ladder (its timings are not results)."""
    fresh = gallery.gallery_rows(row["case"], max_trials=int(row["max_trials"]))
    return {k: v for k, v in fresh.iloc[0].items() if not str(k).endswith("seconds")}


def _audit_power(row: pd.Series) -> dict:
    return tightness.power_rows(row["algorithm"], factors=(float(row["factor"]),)).iloc[0].to_dict()


@functools.lru_cache(maxsize=None)
def _home_mixture(base_seed: int) -> np.ndarray:
    return home_ground.mixture(base_seed)


def _home_ground(row: pd.Series) -> dict:
    base, k, runs = int(row["base_seed"]), int(row["k"]), int(row["replicas"])
    X = _home_mixture(base)
    if row["algorithm"] == home_ground.REFERENCE:
        return home_ground.reference_row(X, k, base, runs)
    return home_ground.algorithm_row(X, k, row["algorithm"], base, runs)


def _outside_audit(row: pd.Series) -> dict:
    rows = outside_audit.audit_rows(row["algorithm"], int(row["trials"]),
                                    (float(row["factor"]),), base_seed=int(row["base_seed"]))
    return rows.iloc[0].to_dict()


def _fastlloyd_audit(row: pd.Series) -> dict:
    rows = fastlloyd_audit.audit_rows(row["variant"], int(row["trials"]), (float(row["factor"]),),
                                      base_seed=int(row["base_seed"]))
    return rows[rows["statistic"] == row["statistic"]].iloc[0].to_dict()


def _fastlloyd_audit_kind(row: pd.Series) -> str:
    if row["variant"] == "as-published":
        return "as published"
    return "corrected" if row["factor"] == 1.0 else "planted overspend"


def _tightness_kind(row: pd.Series) -> str:
    return "mechanism" if row["target"] in tightness.MECHANISMS else "algorithm"


def _everything(t: pd.DataFrame) -> pd.Series:
    return pd.Series(True, index=t.index)


def _on(column: str, values: tuple[str, ...]) -> Callable[[pd.DataFrame], pd.Series]:
    """The rows of the given datasets or cases."""
    return lambda t: t[column].isin(values)


def _dpkccm_kind(row: pd.Series) -> str:
    if row["algorithm"] == dpkccm_study.REFERENCE:
        return "non-private reference"
    return f"{row['algorithm']}, {row['bounds']} bounds, {row['schedule']} schedule"


def _di_kind(row: pd.Series) -> str:
    if row["algorithm"] == "kprototypes_nonprivate":
        return "non-private k-prototypes over gamma"
    twin = " at eps(rho)" if row["dataset"] == "magic" and pd.isna(row["rho"]) else ""
    return f"{row['algorithm']} on {row['dataset']}{twin}"


#: For each experiment: its affordable rows, the kind of a row, and how a row is rebuilt.
RECOMPUTE: dict[str, tuple[Callable[[pd.DataFrame], pd.Series], Callable[[pd.Series], str],
                           Callable[[pd.Series], dict]]] = {
    "dplloyd_baselines": (_everything, lambda r: f"{r['algorithm']}, paper {r['paper']}",
                          _dplloyd_baselines),
    "dpkccm": (_on("dataset", ("blood",)), _dpkccm_kind, _dpkccm),
    "silhouette": (_on("dataset", ("blood",)), lambda r: r["algorithm"], _silhouette),
    "colored": (lambda t: t["dataset"].isin(("mixture_d2", "mixture_d8"))
                | (t["algorithm"].isin(colored_study.OUTSIDE) & (t["dataset"] == "marketing")),
                lambda r: r["algorithm"], _colored),
    "apdp": (_on("case", ("blood", "blood_k2")), lambda r: r["family"], _apdp),
    "di": (_on("dataset", ("heart", "magic")), _di_kind, _di),
    "leaderboard": (_on("case", ("blood",)), _leaderboard_kind, _leaderboard),
    # the audits with power: the mechanisms audited with at most 10^6 trials a side, the
    # whole fit of APDPk-means (two iterations) in one dimension, and its power study
    "audit_tightness": (lambda t: ((t["target"] == "apdp") & (t["level"] == "fit")
                                   & (t["dimension"] == 1))
                        | (t["target"].isin(tightness.MECHANISMS) & (t["trials"] <= 1_000_000)),
                        _tightness_kind, _audit_tightness),
    # the gallery of real bugs: every bug caught within 1024 trials a side (seconds each),
    # its white-box and its black-box rows
    "audit_gallery": (lambda t: t["trials"] <= 1024, lambda r: r["access"], _audit_gallery),
    "audit_power": (lambda t: (t["algorithm"] == "apdp") | (t["detect_trials"] == 0),
                    lambda r: "audit run" if r["detect_trials"] > 0 else "trials needed",
                    _audit_power),
    # the outside algorithms (chapter 12): their home ground at k = 2 (a fit of every private
    # algorithm takes the same path), and their audit (one path for every algorithm)
    "home_ground": (lambda t: t["k"] == 2,
                    lambda r: ("non-private reference" if r["algorithm"] == home_ground.REFERENCE
                               else "private algorithm"), _home_ground),
    "outside_audit": (_everything,
                      lambda r: "shipped" if r["factor"] == 1.0 else "planted overspend",
                      _outside_audit),
    # FastLloyd (chapter 12): its home ground at k = 2, d = 2 (every contender takes the path
    # it takes everywhere), and its audit (each row about 20 s)
    "fastlloyd_home": (lambda t: (t["k"] == 2) & (t["d"] == 2), lambda r: r["contender"],
                       fastlloyd_home.rebuild_row),
    "fastlloyd_audit": (_everything, _fastlloyd_audit_kind, _fastlloyd_audit),
    "fastlloyd_protocol": (_on("dataset", ("iris",)), lambda r: r["contender"],
                           fastlloyd_protocol.rebuild_row),
}


# --- claims ledgers: rebuilt whole from the committed files they read ---------------------

def _dpkccm_ledger() -> pd.DataFrame:
    results = pd.read_csv(RESULTS / "dpkccm.csv")
    return pd.concat([dpkccm_claims.claims_ledger(results, metric=m).assign(metric=m)
                      for m in ("nicv", "nicv_unsquared")], ignore_index=True)


CLAIMS: dict[str, Callable[[], pd.DataFrame]] = {
    "apdp_claims": lambda: apdp_claims.claims_ledger(pd.read_csv(RESULTS / "apdp.csv")),
    "colored_claims": lambda: colored_claims.claims_ledger(
        pd.read_csv(RESULTS / "colored.csv"), pd.read_csv(RESULTS / "colored_audit.csv")),
    "dpkccm_claims": _dpkccm_ledger,
    "silhouette_claims": lambda: silhouette_claims.claims_ledger(
        pd.read_csv(RESULTS / "silhouette.csv"),
        json.loads((ROOT / "benchmarks" / "dask_scaling.json").read_text())[
            "fig7_speedup"]),
    "di_claims": lambda: di_claims.claims_table(pd.read_csv(RESULTS / "di.csv")),
    # the recommendation's held-out validation (chapter 12), from the committed tables it reads
    "recommend_validation": lambda: recommend.validation_rows(recommend.evidence(RESULTS)),
}


# --- audits: one row rebuilt from its setting, with the writer's seed ---------------------

def _colored_audit_row(row: pd.Series) -> dict:
    seed = colored_audit.write_audit.__kwdefaults__["seed"]
    (eps, delta), = [s for s in colored_audit.SETTINGS
                     if np.isclose(s[0], row["claimed_epsilon"]) and np.isclose(s[1], row["delta"])]
    reports = colored_audit.run_audits(eps, delta, int(row["trials"]), seed=seed)
    return next(r.as_row() for r in reports if r.as_row()["name"] == row["name"])


def _di_audit_row(row: pd.Series) -> dict:
    seed = di_audit.write_audit.__kwdefaults__["seed"]
    (rho, trials), = [s for s in di_audit.SETTINGS if s[1] == int(row["trials"]) and np.isclose(
        epsilon_from_rho(s[0], di_variants.M_NUMERIC), row["claimed_epsilon"], rtol=1e-11)]
    reports = di_audit.run_audits(rho, trials, seed=seed)
    return next(r.as_row() for r in reports if r.as_row()["name"] == row["name"])


AUDITS: dict[str, Callable[[pd.Series], dict]] = {
    "colored_audit": _colored_audit_row,
    "di_audit": _di_audit_row,
}


def _audit_kind(row: pd.Series) -> str:
    return str(row["name"]).split(" (")[0]


# --- the sample ----------------------------------------------------------------------------

def _generator(path: Path) -> np.random.Generator:
    override = os.environ.get("DPKMEANS_RESULTS_SAMPLE_SEED")
    seed = int(override) if override else int.from_bytes(
        hashlib.sha256(path.read_bytes()).digest()[:8], "big")
    return np.random.default_rng(seed)


def _kinds(name: str, table: pd.DataFrame) -> pd.Series:
    kind = RECOMPUTE[name][1] if name in RECOMPUTE else _audit_kind
    return table.apply(kind, axis=1)


def _sample() -> list[tuple[str, str, int]]:
    """(file, kind, row index): one affordable row of every kind of every rebuilt-by-row file."""
    picks = []
    for path in sorted(RESULTS.glob("*.csv")):
        name = path.stem
        if name not in RECOMPUTE and name not in AUDITS:
            continue
        table = pd.read_csv(path)
        kinds = _kinds(name, table)
        affordable = (RECOMPUTE[name][0](table) if name in RECOMPUTE
                      else _everything(table)).to_numpy()
        rng = _generator(path)
        for kind in sorted(set(kinds)):
            rows = np.flatnonzero(affordable & (kinds == kind).to_numpy())
            if rows.size:
                picks.append((name, kind, int(rng.choice(rows))))
    return picks


def _compare(stored: pd.Series, fresh: dict) -> int:
    """Assert every result column the rebuild gives equals the stored one; how many there were."""
    compared = 0
    for column, value in fresh.items():
        if column in BOOKKEEPING or column not in stored.index:
            continue
        want = stored[column]
        if isinstance(value, (bool, np.bool_)) or isinstance(want, (bool, np.bool_)):
            assert bool(value) == bool(want), column
        elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(want, str):
            if pd.isna(want):
                assert value is None or math.isnan(float(value)), column
            else:
                assert float(value) == pytest.approx(float(want), rel=1e-9, abs=1e-12), column
        elif isinstance(value, str):
            assert value == str(want), column
        else:
            continue
        compared += 1
    return compared


def test_every_results_file_has_a_rebuild_rule():
    assert set(RECOMPUTE) == {e.name for e in EXPERIMENTS}
    on_disk = {p.stem for p in RESULTS.glob("*.csv")}
    assert on_disk <= set(RECOMPUTE) | set(CLAIMS) | set(AUDITS), "a results file with no rule"


@pytest.mark.parametrize("name", sorted(set(RECOMPUTE) | set(AUDITS)))
def test_every_kind_of_row_has_an_affordable_row(name):
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        pytest.skip(f"{path.name} is not committed")
    table = pd.read_csv(path)
    kinds = _kinds(name, table)
    affordable = RECOMPUTE[name][0](table) if name in RECOMPUTE else _everything(table)
    assert set(kinds[affordable]) == set(kinds), "a kind of row the sample never rebuilds"


def test_every_di_row_rebuilds_its_seed_from_its_columns():
    """The stored point seed of every DI row (not only the sampled ones) is, exactly, the seed
    of the point its columns give (:func:`dpkmeans.papers.di.study.row_point`): a DP twin
    records its grid rho, which its seed hashes, and the seed is written as an integer."""
    table = pd.read_csv(RESULTS / "di.csv", dtype={"point_seed": "Int64"})
    table = table[table["algorithm"] != "kprototypes_nonprivate"]
    wrong = [i for i, row in table.iterrows()
             if di_study.point_seed(int(row["base_seed"]), di_study.row_point(row))
             != row["point_seed"]]
    assert not wrong, f"{len(wrong)} of {len(table)} rows: {wrong[:5]}"


def test_row_point_gives_the_exact_epsilon_of_a_dp_twin():
    exact = epsilon_from_rho(0.05, di_variants.M_NUMERIC)
    assert float(FLOAT_FORMAT % exact) != exact  # the file cannot hold it, but it holds rho
    row = pd.Series({"dataset": "magic", "algorithm": "dp_corrected", "rho": 0.05,
                     "rho_c": np.nan, "epsilon": float(FLOAT_FORMAT % exact), "T": 10.0})
    point = di_study.row_point(row)
    assert point == di_study.Point("magic", "dp_corrected", rho=0.05)
    assert di_study.point_epsilon(point) == exact
    off_grid = row.copy()
    off_grid["rho"], off_grid["epsilon"] = np.nan, 3.5  # a DP point at its own epsilon
    assert di_study.point_epsilon(di_study.row_point(off_grid)) == 3.5


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_a_claims_ledger_is_rebuilt_from_the_committed_files(name):
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        pytest.skip(f"{path.name} is not committed")
    stored = pd.read_csv(path)
    fresh = pd.read_csv(io.StringIO(CLAIMS[name]().to_csv(index=False)))
    pd.testing.assert_frame_equal(fresh, stored, check_exact=False, rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name, kind, index", _sample(), ids=lambda v: str(v))
def test_a_sampled_row_is_rebuilt_from_its_columns(name, kind, index):
    stored = pd.read_csv(RESULTS / f"{name}.csv").iloc[index]
    rebuild = RECOMPUTE[name][2] if name in RECOMPUTE else AUDITS[name]
    try:
        fresh = rebuild(stored)
    except (DataError, FileNotFoundError) as err:
        pytest.skip(f"dataset not available here (set DPKMEANS_DATA): {err}")
    compared = _compare(stored, fresh)
    assert compared >= 3, f"only {compared} columns compared"
