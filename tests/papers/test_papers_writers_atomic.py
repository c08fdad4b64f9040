"""The papers' claims and audit writers go through ``dpkmeans.files.write_csv``: a crash while
writing leaves the previous file whole, and the text is what
``DataFrame.to_csv(index=False)`` gives, as before."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest

import dpkmeans.files

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"


def _claims_calls() -> list[tuple[str, tuple, Path]]:
    """(module, arguments, committed file) of every claims writer, reading committed inputs."""
    scaling = ROOT / "benchmarks" / "dask_scaling.json"
    return [
        ("apdp.claims", (RESULTS / "apdp.csv",), RESULTS / "apdp_claims.csv"),
        ("colored.claims", (RESULTS / "colored.csv", RESULTS / "colored_audit.csv"),
         RESULTS / "colored_claims.csv"),
        ("dpkccm.claims", (RESULTS / "dpkccm.csv",), RESULTS / "dpkccm_claims.csv"),
        ("silhouette.claims", (RESULTS / "silhouette.csv", scaling),
         RESULTS / "silhouette_claims.csv"),
        ("di.claims", (RESULTS / "di.csv",), RESULTS / "di_claims.csv"),
    ]


class _Crash(RuntimeError):
    pass


def _crash_before_rename(monkeypatch):
    """Make the atomic writer fail after writing its temporary file, before the rename."""
    def fail(*_args, **_kwargs):
        raise _Crash("simulated crash")
    monkeypatch.setattr(dpkmeans.files.os, "replace", fail)


@pytest.mark.parametrize("index", range(5), ids=lambda i: ["apdp", "colored", "dpkccm",
                                                           "silhouette", "di"][i])
def test_a_claims_writer_writes_atomically_and_the_same_text(index, tmp_path, monkeypatch):
    name, args, committed = _claims_calls()[index]
    module = importlib.import_module(f"dpkmeans.papers.{name}")
    out = tmp_path / committed.name
    ledger = module.write_claims(*args, out)
    # the text is the frame's to_csv(index=False), as the in-place writer gave
    assert out.read_text() == ledger.to_csv(index=False)

    out.write_text("the previous file\n")
    _crash_before_rename(monkeypatch)
    with pytest.raises(_Crash):
        module.write_claims(*args, out)
    assert out.read_text() == "the previous file\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left


@pytest.mark.parametrize("paper", ["colored", "di"])
def test_an_audit_writer_writes_atomically_and_the_same_text(paper, tmp_path, monkeypatch):
    module = importlib.import_module(f"dpkmeans.papers.{paper}.audit")
    rows = [{"name": "a", "claimed_epsilon": 1.0, "estimate": 0.25, "seconds": 3.0},
            {"name": "b", "claimed_epsilon": 2.0, "estimate": 0.5, "seconds": 4.0}]
    reports = [SimpleNamespace(as_row=lambda r=r: dict(r)) for r in rows]
    monkeypatch.setattr(module, "run_audits", lambda *a, **k: reports)  # no audit runs
    out = tmp_path / "audit.csv"
    frame = module.write_audit(out)
    assert out.read_text() == frame.to_csv(index=False)
    assert "seconds" not in out.read_text()

    out.write_text("the previous file\n")
    _crash_before_rename(monkeypatch)
    with pytest.raises(_Crash):
        module.write_audit(out)
    assert out.read_text() == "the previous file\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]
