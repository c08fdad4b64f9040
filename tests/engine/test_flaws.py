"""Flaws as data (docs/design.md, "Flaws as data"): each paper keeps its published flaws as
:class:`~dpkmeans.engine.flaws.Flaw` records, a flaw that changes a step of the loop is a
strategy its paper supplies, and the ledger records each flaw from its record."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import dpkmeans.engine
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, Flaw, check_flaws
from dpkmeans.engine.loop import run
from dpkmeans.engine.strategies import JointRelease, ReleaseSpec, StopMonitor, StopRule
from dpkmeans.papers.registry import records
from dpkmeans.papers.su.flaws import SKIP_EMPTY_CLUSTERS, SkipEmptyClusters
from dpkmeans.privacy.sensitivity import sum_sensitivity

BOX = (-np.ones(2), np.ones(2))


def _paper_flaws() -> dict[str, tuple[Flaw, ...]]:
    """Every paper's flaws module, by paper key (the papers without one have no flaw of
    their own)."""
    out = {}
    for record in records():
        try:
            module = importlib.import_module(f"dpkmeans.papers.{record.key}.flaws")
        except ModuleNotFoundError:
            continue
        out[record.key] = module.FLAWS
    return out


def test_every_published_flaw_belongs_to_its_paper_or_the_library():
    """A paper's as-published configuration carries only its own flaws and the library's
    data-derived bounds; no two records share a name."""
    owned = _paper_flaws()
    assert set(owned) == {"su", "dpkccm", "silhouette", "colored", "apdp", "di", "fastlloyd"}
    names = [f.name for flaws in owned.values() for f in flaws] + [DATA_DERIVED_BOUNDS.name]
    assert len(names) == len(set(names)) == 25
    for record in records():
        if record.published is None or record.key not in owned:
            continue
        carried = set(record.published().flaws) - {DATA_DERIVED_BOUNDS}
        assert carried and carried <= set(owned[record.key]), record.key


def test_the_engine_names_no_paper_and_no_flaw():
    """The loop's modules test no flaw's name: a flaw that changes a step of the loop is a
    strategy its paper supplies."""
    names = {f.name for flaws in _paper_flaws().values() for f in flaws}
    engine = Path(dpkmeans.engine.__file__).parent
    for path in engine.glob("*.py"):
        text = path.read_text()
        for name in names:
            assert f'"{name}"' not in text, (path.name, name)


def test_a_flawed_strategy_needs_its_flaw_records():
    """A strategy that reproduces a flaw is refused unless the configuration lists the flaw,
    so the ledger cannot miss it."""
    with pytest.raises(ValueError, match="skip-empty-clusters"):
        DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[1.0], step=SkipEmptyClusters())
    config = DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[1.0], step=SkipEmptyClusters(),
                           flaws=(SKIP_EMPTY_CLUSTERS,))
    assert not run(np.zeros((4, 2)), config, 0).ledger.is_private


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "bug"}, "kind must be one of"),
    ({"neighbours": ("swap",)}, "neighbours must be among"),
    ({"neighbours": ()}, "neighbours must be among"),
    ({"name": ""}, "needs a name"),
])
def test_a_flaw_record_refuses_what_the_loop_cannot_do(kwargs, match):
    args = {"name": "toy", "kind": "leak", "text": "a toy leak", "chapter": "book chapter 6"}
    with pytest.raises(ValueError, match=match):
        Flaw(**{**args, **kwargs})


def test_a_configuration_takes_flaw_records_only():
    with pytest.raises(TypeError, match="Flaw records"):
        DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[1.0], flaws=("exact-counts",))
    assert check_flaws([], "replace") == ()


def test_a_strategy_that_reads_exact_statistics_must_name_its_flaw():
    """after_release and before_release see the exact statistics: a strategy that uses them
    without a flaw record is refused (the engine's own strategies never do)."""

    @dataclass(frozen=True)
    class Peeking(JointRelease):
        def after_release(self, stats, noisy):
            return stats

    class PeekingMonitor(StopMonitor):
        def before_release(self, t, idx, sums, counts):
            return counts.min(axis=1) == 0

    @dataclass(frozen=True)
    class PeekingStop(StopRule):
        def monitor(self, replicas, n_clusters, width):
            return PeekingMonitor()

    with pytest.raises(ValueError, match="reads the exact statistics"):
        DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[1.0], step=Peeking())
    with pytest.raises(ValueError, match="reads the exact statistics"):
        DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[1.0], stop=PeekingStop())


TOY_LEAK = Flaw(name="toy-exact-counts", kind="leak", text="toy: counts released exactly",
                chapter="book chapter 6")


@dataclass(frozen=True)
class ToyExactCounts(JointRelease):
    """A new paper's flawed release: the sums only, its flaw record listed."""

    flaws: ClassVar[tuple[Flaw, ...]] = (TOY_LEAK,)

    def laplace_specs(self, config, eps_t):
        d = config.bounds[0].size
        sens = sum_sensitivity(config.bounds, config.neighbour, centred=config.centred)
        return [ReleaseSpec("S_j", slice(0, d), sens, eps_t)]


def test_the_ledger_records_a_new_papers_flaw_from_its_record():
    """A flaw defined outside the library (a new paper's) works like the book's: a leak is
    recorded with its text, an overspend noted and the budget lifted; its strategy runs."""
    leak = TOY_LEAK
    note = Flaw(name="toy-overspend", kind="overspend", text="toy: charged at its true cost",
                chapter="book chapter 6")
    config = DPLloydConfig(n_clusters=2, bounds=BOX, schedule=[0.5, 0.5], flaws=(leak, note),
                           budget=1.0, step=ToyExactCounts())
    X = np.random.default_rng(0).uniform(-1, 1, size=(40, 2))
    ledger = run(X, config, 0).ledger
    assert not ledger.is_private and ledger.budget is None
    assert [e.label for e in ledger.entries if e.mechanism.startswith("LEAK")] == [leak.text]
    assert any(note.text in e.label for e in ledger.entries if e.mechanism == "post-processing")
    released = {e.label for e in ledger.entries if e.mechanism.startswith("Laplace")}
    assert released == {"S_j"}  # the sums only: the counts are not noised ("(S_j, n_j)")
