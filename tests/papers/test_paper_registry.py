"""The one list of papers (dpkmeans.papers.registry): each paper's record, in its own folder,
drives the catalogue, `reproduce`, the synthesis ledger, the Makefile's list of data notebooks
and the reproduction benchmark; one key per paper. The last tests add a small paper from
outside the repository, one folder with its record, and run it through all of them."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from benchmarks import reproduction as benchmark
from dpkmeans import DPKMeans
from dpkmeans.api.catalogue import CATALOGUE, FitInputs, choice
from dpkmeans.data import get_registry, load
from dpkmeans.data.loader import RENAMED_PAPERS
from dpkmeans.papers import registry
from dpkmeans.papers.registry import (
    PAPER_RECORDS,
    CatalogueEntry,
    PaperRecord,
    Sweep,
    paper,
    paper_of_data_key,
    records,
)
from dpkmeans.papers.registry import (
    FitInputs as RegistryFitInputs,
)
from dpkmeans.reproduce import all_experiments, data_notebooks, run_reproduce
from dpkmeans.study.claims import CLAIM_VERDICTS
from dpkmeans.synthesis import ledger

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"


# -- the registry -----------------------------------------------------------------------------
def test_every_paper_folder_holds_its_record_in_the_books_order():
    folders = sorted(p.parent.name for p in (ROOT / "src/dpkmeans/papers").glob("*/__init__.py"))
    assert sorted(PAPER_RECORDS) == folders
    assert list(PAPER_RECORDS) == ["su", "dpkccm", "silhouette", "colored", "apdp", "di",
                                   "balcan", "fastlloyd", "lsh"]
    assert [int(r.number) for r in records()] == sorted(int(r.number) for r in records())


def test_every_paper_is_in_the_bibliography_the_book_and_the_data_registry():
    bib = (ROOT / "book" / "references.bib").read_text()
    toc = (ROOT / "_toc.yml").read_text()
    for record in records():
        assert paper(record.key) is record
        assert f"{{{record.bibkey}," in bib
        assert f"notebooks/{record.chapter}" in toc
    data = get_registry()
    assert set(data.papers) <= set(PAPER_RECORDS)  # one key: the data registry's are the papers'
    for name, spec in data.datasets.items():
        for key in spec.papers:
            assert name in paper(key).datasets


def test_names_are_authors_and_year_and_unknown_keys_are_named():
    assert paper("dpkccm").cite == "Ni et al. (2021)"
    assert paper("apdp").name == "APDPk-means (authors unknown)"
    assert paper("su").name == "DPLloyd-Impr (Su et al., 2016)"
    with pytest.raises(ValueError, match="dpkccm"):
        paper("S0")


def test_import_dpkmeans_loads_nothing_but_its_init():
    """``import dpkmeans`` stays light: reading the registry imports the papers' code, but the
    package itself imports no registry, no paper and no numpy."""
    import subprocess

    code = ("import json, sys, dpkmeans; print(json.dumps(sorted(m for m in sys.modules "
            "if m.startswith('dpkmeans') or m == 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == ["dpkmeans"]


def test_a_record_holds_the_functions_themselves():
    """A record is plain data holding real functions: the catalogue's entries are the
    registry's own (each knowing its chapter), and FitInputs is the registry's."""
    from dpkmeans.papers.su.variants import dplloyd_config

    su = paper("su")
    assert su.algorithms[0].build is dplloyd_config and su.algorithms[0].chapter == "5"
    assert CATALOGUE["dplloyd"] is su.algorithms[0] and FitInputs is RegistryFitInputs
    for record in records():
        assert all(callable(e.build) for e in record.algorithms)
        assert record.finisher is None or callable(record.finisher)
        assert record.published is None or callable(record.published)
    assert paper("dpkccm").published().flaws  # the as-published example carries its leaks


def test_former_keys_still_work_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'dp-kccm' is deprecated: use 'dpkccm'"):
        assert paper("dp-kccm") is paper("dpkccm")
    with pytest.warns(DeprecationWarning):
        assert paper_of_data_key("colored-noise") is paper("colored")
    with pytest.warns(DeprecationWarning):
        assert paper("dpkccm").data_key == "dpkccm"
    # load() refuses a former key in one line naming the key now (the data know no papers)
    with pytest.raises(ValueError, match="^the paper key 'dp-kccm' was renamed: use "
                                         "paper='dpkccm'$"):
        load("heart", paper="dp-kccm")


def test_the_data_know_every_former_key():
    """The dataset loader's own table of renamed keys is the registry's former keys."""
    assert RENAMED_PAPERS == {old: r.key for r in records() for old in r.former_keys}


# -- what the registry drives ----------------------------------------------------------------
def test_the_catalogue_is_the_papers_algorithms():
    expected = [e.name for r in records() for e in r.algorithms if not e.needs_delta]
    expected += [e.name for r in records() for e in r.algorithms if e.needs_delta]
    assert list(CATALOGUE) == expected
    # the order the leaderboard's committed results were made in
    assert expected == ["dplloyd", "dplloyd-impr", "dp-kccm", "silhouette", "apdp", "di",
                        "balcan", "fastlloyd-laplace", "colored", "fastlloyd", "lsh"]
    for r in records():
        for entry in r.algorithms:
            assert CATALOGUE[entry.name] is entry and entry.chapter == r.number


def test_reproduce_runs_every_papers_sweeps_with_its_finisher():
    experiments = all_experiments()
    from_papers = {s.name: r for r in records() for s in r.sweeps}
    assert [e.name for e in experiments if e.paper] == list(from_papers)
    assert [e.name for e in experiments] == ["dplloyd_baselines", "audit_tightness",
                                             "audit_power", "audit_gallery", "dpkccm", "silhouette", "colored",
                                             "apdp", "di", "fastlloyd_protocol",
                                             "fastlloyd_home", "fastlloyd_audit", "leaderboard",
                                             "home_ground", "outside_audit"]
    for e in experiments:
        if e.paper:
            assert e.chapter == from_papers[e.name].number
            assert e.finish is from_papers[e.name].finisher
    import dpkmeans.reproduce as reproduce

    assert [e.name for e in reproduce.EXPERIMENTS] == [e.name for e in experiments]


def test_the_makefile_asks_the_registry_for_the_data_notebooks():
    assert [str(p) for p in data_notebooks(ROOT)] == [
        "notebooks/sweeps/dpkccm_cell.ipynb", "notebooks/sweeps/silhouette_cell.ipynb",
        "notebooks/sweeps/apdp_cell.ipynb", "notebooks/sweeps/di_cell.ipynb",
        "notebooks/sweeps/leaderboard_cell.ipynb"]
    makefile = (ROOT / "Makefile").read_text()
    assert "reproduce --data-notebooks" in makefile
    assert "_cell.ipynb" not in makefile  # no hand-kept list of notebooks


def test_the_data_notebooks_command_prints_them(capsys):
    from dpkmeans.cli import main

    assert main(["reproduce", "--root", str(ROOT), "--data-notebooks"]) == 0
    assert capsys.readouterr().out.split() == [str(p) for p in data_notebooks(ROOT)]


def test_a_papers_finisher_runs_once_its_last_sweep_is_in(tmp_path):
    """A paper with two sweeps: its finisher runs once, after both (the pool finishes them in
    any order); a sweep of another paper finishes on its own."""
    from dpkmeans.reproduce import Experiment

    sweeps = tmp_path / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True)
    for name in ("a1", "a2", "b"):
        (sweeps / f"{name}.yaml").write_text(
            f"experiment: {name}\nnotebook: notebooks/sweeps/cell.ipynb\nseed: 1\n"
            "grid:\n  epsilon: [0.5, 1.0]\n")
    finished = []

    def finish_a(root):
        results = Path(root) / "data" / "results"
        finished.append(("a", sorted(p.stem for p in results.glob("*.csv"))))

    def finish_b(root):
        finished.append(("b", None))

    experiments = (Experiment("a1", "13", finish_a, "a"), Experiment("a2", "13", finish_a, "a"),
                   Experiment("b", "14", finish_b, "b"))
    run_reproduce(tmp_path, experiments=experiments, jobs=1, say=lambda s: None, progress=False,
                  runner=lambda notebook, params, workdir: pd.DataFrame([{"v": 1}]))
    assert sorted(finished, key=str) == [("a", ["a1", "a2"]), ("b", None)]


def test_the_synthesis_ledger_is_every_paper_with_a_published_configuration():
    assert [p.key for p in ledger.papers()] == [r.key for r in records() if r.published]
    assert [p.key for p in ledger.PAPERS] == ["dpkccm", "silhouette", "colored", "apdp", "di"]
    for p in ledger.papers():
        assert p.theorem == paper(p.key).theorem


def test_the_benchmark_names_the_committed_timings_cells_as_before():
    """`python -m benchmarks.reproduction KEY` writes the JSON the chapters read, with the same
    cell names as the five commands it replaces."""
    timed = [r for r in records() if benchmark.timed(r) is not None]
    assert [r.key for r in timed] == ["dpkccm", "silhouette", "colored", "apdp", "di"]
    for record in timed:
        sweep = benchmark.timed(record)
        committed = json.loads(benchmark.output(record).read_text())
        assert committed["target_s"] == sweep.target_s
        assert committed["what"].startswith(f"python -m dpkmeans sweep notebooks/sweeps/"
                                            f"{sweep.name}.yaml")
        rows = pd.read_csv(RESULTS / f"{sweep.name}.csv")
        cells = rows.groupby(list(sweep.cell_keys), sort=False).size().index
        names = {sweep.label(dict(zip(sweep.cell_keys, c if isinstance(c, tuple) else (c,))))
                 for c in cells}
        assert names == set(committed["cells_s"]), record.key


def test_the_benchmark_command_times_a_paper_sweep(monkeypatch):
    seen = []
    monkeypatch.setattr(benchmark, "timed_sweep", lambda argv, **kw: seen.append((argv, kw)) or 0)
    assert benchmark.main(["dpkccm", "--smoke"]) == 0
    [(argv, kw)] = seen
    assert argv == ["--smoke"]
    assert kw["out"] == ROOT / "benchmarks" / "dpkccm_reproduction.json"
    assert kw["cell_name"]({"dataset": "blood", "axis": "k"}) == "NICV vs k (figs 9-14): blood"
    with pytest.raises(SystemExit):
        benchmark.main(["su"])  # no timed sweep


def test_records_refuse_two_papers_with_one_key():
    clash = PaperRecord("toy", "", "", "t", "t", "13_toy", "toy", former_keys=("dpkccm",))
    with pytest.raises(ValueError, match="former key"):
        registry.register(clash)
    assert "toy" not in PAPER_RECORDS
    with pytest.raises(ValueError, match="already registered"):
        registry.register(paper("di"))
    with pytest.raises(ValueError, match="two-digit"):
        PaperRecord("toy", "", "", "t", "t", "toy", "toy")


# -- a new paper from outside: one folder and its record --------------------------------------
TOY_INIT = '''\
"""A toy paper: DP-Lloyd whose budget halves every iteration (a test's outside paper)."""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep
from {module}.variants import catalogue_config, finish, published_example

RECORD = PaperRecord(
    key="{key}", authors="Toy et al.", year="2030", title="Halving the budget",
    method="halving DP-Lloyd", chapter="13_{key}", bibkey="toy2030",
    algorithms=(CatalogueEntry("toy-halving", catalogue_config,
                               "DP-Lloyd, the budget halved every iteration.",
                               uses_max_iter=True),),
    sweeps=(Sweep("{key}", target_s=60, cell_keys=("epsilon",),
                  cell_label="epsilon {{epsilon}}"),),
    finisher=finish,
    published=published_example,
    theorem="thm-toy-halving",
)
'''

TOY_VARIANTS = '''\
"""The toy paper's configuration, and what its RECORD names."""

from pathlib import Path

import numpy as np
import pandas as pd

from dpkmeans import DPKMeans
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig


def halving(n_clusters, epsilon, bounds, iterations):
    return DPLloydConfig(n_clusters, bounds, schedules.halving(epsilon, iterations),
                         name="toy-halving")


def catalogue_config(f):
    return halving(f.n_clusters, f.epsilon, f.bounds, f.max_iter)


def published_example():
    return halving(3, 1.0, (np.zeros(2), np.ones(2)), 5)


def evaluate_cell(epsilon, seed):
    """One sweep cell: the toy algorithm through DPKMeans on a fixed mixture."""
    X = np.random.default_rng(0).uniform(0, 1, size=(300, 2))
    model = DPKMeans(3, epsilon=epsilon, bounds=(0, 1), algorithm="toy-halving", max_iter=4,
                     random_state=seed).fit(X)
    return pd.DataFrame([{{"spent": model.ledger_.total().epsilon,
                          "private": model.ledger_.is_private}}])


def finish(root):
    results = Path(root) / "data" / "results"
    rows = pd.read_csv(results / "{key}.csv")
    holds = bool((rows["spent"] <= rows["epsilon"] * (1 + 1e-9)).all() and rows["private"].all())
    pd.DataFrame([{{"claim": "1", "text": "Halving the budget never overspends.",
                   "verdict": "holds" if holds else "refuted"}}]).to_csv(
        results / "{key}_claims.csv", index=False)
'''

CELL = '''\
from {module}.variants import evaluate_cell

rows = evaluate_cell(epsilon, seed)
if output_csv is not None:
    rows.to_csv(output_csv, index=False)
'''


def write_paper(folder: Path, key: str, module: str) -> Path:
    """The toy paper's one folder: its record and its configuration (the functions the record
    names)."""
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(TOY_INIT.format(key=key, module=module))
    (folder / "variants.py").write_text(TOY_VARIANTS.format(key=key))
    return folder


def write_sweep(book: Path, key: str, module: str, epsilons: list[float]) -> None:
    """A smoke grid for the toy paper: its sweep file and its cell notebook."""
    sweeps = book / "notebooks" / "sweeps"
    sweeps.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("epsilon = 1.0\nseed = 0\noutput_csv = None")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, nbformat.v4.new_code_cell(CELL.format(module=module))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(sweeps / f"{key}_cell.ipynb"))
    (sweeps / f"{key}.yaml").write_text(
        f"experiment: {key}\nnotebook: notebooks/sweeps/{key}_cell.ipynb\nseed: 7\n"
        f"grid:\n  epsilon: {epsilons}\n")


@pytest.fixture
def toy_paper(tmp_path, monkeypatch):
    """The toy paper in its own folder outside the repository, named in $DPKMEANS_PAPERS (the
    sweep's kernels inherit it and PYTHONPATH); gone again after the test."""
    outside = tmp_path / "outside"
    write_paper(outside / "toy_halving", "toyhalving", "toy_halving")
    monkeypatch.syspath_prepend(str(outside))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(outside), str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv(registry.PAPERS_ENV, "toy_halving")
    yield paper("toyhalving")
    for name in [m for m in sys.modules if m.startswith("toy_halving")]:
        del sys.modules[name]


def test_a_new_paper_in_one_folder_runs_through_the_catalogue_reproduce_and_the_synthesis(
        toy_paper, tmp_path):
    key = toy_paper.key
    assert list(PAPER_RECORDS)[-1] == key and toy_paper.number == "13"

    # the catalogue: DPKMeans fits the new algorithm, within its budget
    # pure DP before (eps, delta)
    assert list(CATALOGUE)[-4:] == ["toy-halving", "colored", "fastlloyd", "lsh"]
    assert choice("toy-halving").chapter == "13"
    X = np.random.default_rng(1).uniform(0, 1, size=(200, 2))
    model = DPKMeans(3, epsilon=0.8, bounds=(0, 1), algorithm="toy-halving", max_iter=3,
                     random_state=2).fit(X)
    assert model.cluster_centers_.shape == (3, 2) and model.ledger_.is_private
    assert model.ledger_.total().epsilon == pytest.approx(0.8)

    # reproduce: its sweep (a smoke grid, run by papermill), then its finisher
    (experiment,) = [e for e in all_experiments() if e.paper == key]
    assert (experiment.name, experiment.chapter) == (key, "13")
    assert [e.name for e in all_experiments()][-2:] == ["outside_audit", key]
    book = tmp_path / "book"
    write_sweep(book, key, "toy_halving", [0.5, 2.0])
    assert data_notebooks(book, [experiment]) == [Path(f"notebooks/sweeps/{key}_cell.ipynb")]
    state = run_reproduce(book, jobs=2, only=[key], say=lambda s: None, progress=False)
    assert state["experiments"][key]["cells"] == 2
    results = book / "data" / "results"
    rows = pd.read_csv(results / f"{key}.csv")
    assert rows["epsilon"].tolist() == [0.5, 2.0]
    assert np.allclose(rows["spent"], rows["epsilon"]) and rows["private"].all()
    assert pd.read_csv(results / f"{key}_claims.csv")["verdict"].tolist() == ["holds"]

    # the synthesis: its claims and its privacy verdict next to the book's papers
    for path in RESULTS.glob("*_claims.csv"):
        shutil.copy(path, results)
    for path in RESULTS.glob("*_audit.csv"):
        shutil.copy(path, results)
    headline = ledger.headline_claims(results).set_index("claim")
    assert headline.loc[f"{key}-1", "verdict"] == "holds"
    assert headline.loc[f"{key}-1", "title"] == "halving DP-Lloyd (Toy et al., 2030)"
    assert set(headline["verdict"]) <= set(CLAIM_VERDICTS) | {"not tested"}
    privacy = ledger.privacy_claims(results).set_index("paper")
    assert list(privacy.index) == ["dpkccm", "silhouette", "colored", "apdp", "di", key]
    assert privacy.loc[key, "published"] == "proven here"
    assert privacy.loc[key, "theorem"] == "thm-toy-halving"

    # and the benchmark command knows its sweep
    assert benchmark.timed(toy_paper).label({"epsilon": 0.5}) == "epsilon 0.5"


def test_the_new_paper_is_gone_once_unnamed(toy_paper, monkeypatch):
    assert "toy-halving" in CATALOGUE
    monkeypatch.delenv(registry.PAPERS_ENV)
    assert toy_paper.key not in PAPER_RECORDS and "toy-halving" not in CATALOGUE
    assert toy_paper.key not in {e.name for e in all_experiments()}


def test_a_folder_in_the_papers_package_is_discovered(tmp_path, monkeypatch):
    """The in-repository way: a new folder ``dpkmeans/papers/<key>/`` (here on the package's
    path from a temporary folder) is a new paper, with nothing else to edit."""
    import dpkmeans.papers as package

    write_paper(tmp_path / "toyfolder", "toyfolder", "dpkmeans.papers.toyfolder")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    try:
        record = paper("toyfolder")
        assert record.key in PAPER_RECORDS and "toy-halving" in CATALOGUE
        config = choice("toy-halving").build(FitInputs(2, 1.0, (np.zeros(2), np.ones(2)), 3))
        assert config.schedule.sum() == pytest.approx(1.0)
    finally:
        for name in [m for m in sys.modules if m.startswith("dpkmeans.papers.toyfolder")]:
            del sys.modules[name]


def test_register_adds_and_unregister_removes_a_paper():
    from dpkmeans.papers.su.variants import dplloyd_config

    record = PaperRecord("toyregistered", "", "", "t", "toy method", "14_toy", "toy",
                         algorithms=(CatalogueEntry("toy-registered", dplloyd_config, "s"),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.register(record)
    try:
        assert list(PAPER_RECORDS)[-1] == "toyregistered" and "toy-registered" in CATALOGUE
        assert paper("toyregistered").name == "toy method (authors unknown)"
    finally:
        registry.unregister("toyregistered")
    assert "toyregistered" not in PAPER_RECORDS and "toy-registered" not in CATALOGUE


def test_a_sweep_labels_its_cells():
    assert Sweep("x").label({"case": "blood"}) == "case blood"
