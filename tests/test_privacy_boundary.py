"""The privacy boundary is enforced, not a convention (docs/design.md, "Privacy rules").

Privacy noise is drawn only inside the privacy package, and only by a call that charges the
ledger first: :func:`dpkmeans.privacy.mechanisms.release` (and its batched forms ``release_plan`` and
``release_choices``); hooks get a releaser bound to the ledger (``HookContext.release``).

1. An AST scan of ``src/dpkmeans`` and of the classroom package ``src/dpkmeans_classroom``:
   outside the privacy package no code draws from a generator
   (a ``numpy.random.Generator`` method, ``numpy.random.<fn>``, the ``random`` module), calls an
   uncharged sampler of the privacy package, passes ``ledger=None`` to a mechanism, hands a
   seed to another library's sampler (``random_state=``) or reads a hook's generators
   (``ctx.rngs``), unless its file and function are in :data:`ALLOWED` with the reason.
2. Behaviour: a release charges, then draws; a release the budget refuses leaves every
   generator as it was.
3. The engine's iterations, the silhouette, APDP and colored hooks and the k-prototypes modes
   release through those calls (counted by wrapping them).
"""

from __future__ import annotations

import ast
import functools
import importlib
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import dpkmeans
import dpkmeans_classroom
from dpkmeans.compute.backends import MemoryBackend
from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.loop import run
from dpkmeans.engine.prototypes import MixedLayout, encode
from dpkmeans.errors import BudgetExceededError
from dpkmeans.papers.apdp import variants as apdp
from dpkmeans.papers.colored import variants as colored
from dpkmeans.papers.di import variants as di
from dpkmeans.papers.silhouette import variants as silhouette
from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.mechanisms import Entry, Parallel
from dpkmeans.privacy.noise import CovarianceNoise, NoisePlan, calibrate

SRC = Path(dpkmeans.__file__).resolve().parent
#: The classroom package (its exercise generators draw public randomness), scanned too: its
#: files are named ``dpkmeans_classroom/...`` below.
CLASSROOM = Path(dpkmeans_classroom.__file__).resolve().parent
#: The privacy package: the only code that may draw privacy noise.
PRIVACY_PACKAGE = "privacy"
#: Methods that draw random numbers: numpy's Generator and legacy RandomState, a bit
#: generator's raw words, scipy's frozen distributions.
DRAWS = (frozenset(n for n in dir(np.random.Generator) if not n.startswith("_"))
         | frozenset(n for n in dir(np.random.RandomState) if not n.startswith("_"))
         | {"random_raw", "rvs"}) - {"bit_generator", "spawn", "get_state", "set_state", "seed"}
#: The standard library's ``random`` functions that draw.
STDLIB_DRAWS = frozenset(n for n in dir(random) if not n.startswith("_")
                         and callable(getattr(random, n))
                         and not isinstance(getattr(random, n), type)) - {"seed", "getstate",
                                                                          "setstate"}
#: Modules whose functions draw (``numpy.random.laplace``, ``random.random``).
RANDOM_MODULES = frozenset({"numpy.random", "random"})
#: Samplers of the privacy package that draw without charging a ledger.
UNCHARGED = frozenset({"perturb", "perturb_elements", "grid_release", "shared_grid_release",
                       "draw_steps", "draw_colored", "unit_noise", "discrete_laplace",
                       "discrete_gaussian", "bernoulli_exp", "exponential_choice"})

INITIALIZER = "initializer: data-independent starting centres from public inputs"
#: (file under src/dpkmeans, or dpkmeans_classroom/..., function) -> why it may draw outside
#: the privacy package.
ALLOWED: dict[tuple[str, str], str] = {
    # initializers (public, data-independent randomness)
    ("engine/init.py", "_pack"): INITIALIZER + " (sphere packing)",
    ("engine/init.py", "uniform_box"): INITIALIZER + " (uniform in the public box)",
    ("engine/init.py", "kmeans_plusplus"): ("initializer for non-private references only: k-means++ "
                                     "on the records it is given (never a DP configuration's)"),
    ("engine/prototypes.py", "MixedInitializer.__call__"): INITIALIZER + " (uniform public categories)",
    # as-published variants: data-dependent choices recorded as leaks
    ("papers/apdp/variants.py", "RecordInitialRelease.__call__"): (
        "as-published recorded leak: which record of each split starts the run (flaws "
        "'record-order-split', 'record-initialisation'); its noise goes through ctx.release"),
    ("papers/colored/variants.py", "KMeansPlusPlusOnData.__call__"): (
        "as-published recorded leak: CEDS's k-means++ on the private records (flaw "
        "'data-initialisation'), seeded from the replica's public_rngs"),
    # the engine's continuous sampler
    ("engine/loop.py", "_Run.start"): ("bit-identical results need the continuous sampler's unit noise "
                            "drawn up front, right after the initial centroids "
                            "(mechanisms.unit_noise); release_plan scales it once charged"),
    # algorithms that run themselves (book chapter 12): a nested loop's seed
    ("engine/standalone.py", "Replica.seed_sequence"): (
        "a nested DP-Lloyd run's seed (e.g. a refinement), drawn from the replica's generator "
        "so that it follows from the run's one seed; the nested run charges its own noise"),
    ("papers/lsh/algorithm.py", "_hyperplanes"): (
        "public randomness: the SimHash hyperplanes, standard normal directions drawn from the "
        "replica's public_rng before any data is read"),
    ("papers/lsh/algorithm.py", "_cluster_coreset"): (
        "post-processing: the seed (random_state=) of scikit-learn's weighted k-means++ on the "
        "released private coreset, drawn from the replica's public_rng"),
    ("papers/balcan/algorithm.py", "_public_draws"): (
        "public randomness of Balcan et al. (2017), drawn from the replica's generator before "
        "any release and independent of the data: the random projection, the shifted grids' "
        "offsets and the local search's initial candidates"),
    # audits: their own resampling and the releases they measure
    ("study/audit.py", "epsilon_lower_bound"): "audit's own resampling (the random half-split)",
    ("study/audit.py", "audit_mechanism"): "audit's own resampling (the split's seed)",
    ("study/audit.py", "audit_configuration.release"): "audit's own resampling (each trial's seed)",
    ("study/audit.py", "laplace_count_release.release"): (
        "audit: the measured mechanism's outputs on a toy neighbouring pair (ledger=None: "
        "the audit measures the release, it spends no one's budget)"),
    **{("synthesis/tightness.py", fn): (
        "audit: the measured mechanism's outputs on its worst-case neighbouring pair "
        "(ledger=None: the audit measures the release, it spends no one's budget)")
       for fn in ("_laplace.draw", "_gaussian.draw", "_colored", "_exponential",
                  "_di_laplace")},
    ("synthesis/gallery.py", "refit_difference"): (
        "the gallery's broken variant (g): two fits with one random_state, charged to an "
        "accountant opened with seed_reuse='record', which records the reuse as a leak"),
    ("synthesis/tightness.py", "one_run_audit"): (
        "audit's own coin: which canaries go into the data (each with probability 1/2)"),
    ("papers/colored/study.py", "_run_one_shot"): (
        "bit-identical results need its one (draws, m) normal draw from one seeded generator: "
        "the as-published one-shot release simulated for the study (rows is_private = False)"),
    # studies: public seeds of non-private references and starts
    ("papers/di/study.py", "gamma_rows"): "study's public seed: random starting rows of the "
                                          "non-private k-prototypes reference",
    ("papers/colored/study.py", "prepare"): "study's public seed: the non-private k-means "
                                            "reference (scikit-learn, random_state)",
    ("synthesis/home_ground.py", "reference_losses"): ("study's public seed: the non-private "
                                                       "k-means++ reference (scikit-learn, "
                                                       "random_state)"),
    ("papers/su/diffprivlib_env.py", "_fit_here"): ("study's public seed: diffprivlib's DP "
                                                     "k-means, a third-party comparator that "
                                                     "draws its own noise"),
    # synthetic data
    ("data/synthetic.py", "GaussianMixture._block"): "synthetic data: the mixture's records",
    ("data/synthetic.py", "make_mixture"): "synthetic data: the mixture's centres and weights",
    ("data/generated.py", "g2"): "synthetic data: a G2 set drawn from its published definition",
    # assignment and exercise generators
    ("dpkmeans_classroom/spec.py", "student_parameters"): ("assignment generator: a "
                                                            "student's parameters"),
    ("dpkmeans_classroom/spec.py", "student_questions"): ("assignment generator: a student's "
                                                           "seeded subset of the questions"),
    ("dpkmeans_classroom/chapter02.py", "_simulated_tail"): ("exercise: the Gaussian "
                                                              "mechanism's outputs on a toy "
                                                              "count (ledger=None, a "
                                                              "demonstration)"),
    ("dpkmeans_classroom/chapter04.py", "_prepare"): ("exercise generator: a perturbation of "
                                                       "a start"),
    ("dpkmeans_classroom/chapter05.py", "_prepare"): ("exercise: a DPKMeans fit with the "
                                                       "student's public seed (charged by the "
                                                       "estimator)"),
    ("dpkmeans_classroom/chapter06.py", "_exposed_share"): ("exercise: the float sampler's "
                                                             "Laplace outputs on a toy count "
                                                             "(ledger=None, a demonstration)"),
    ("dpkmeans_classroom/chapter11.py", "_prepare"): ("exercise: DI fits with the student's "
                                                       "public seed (charged by the "
                                                       "estimators)"),
    ("dpkmeans_classroom/chapter12.py", "_fit"): ("exercise: a DPKMeans fit with the "
                                                   "student's public seed (charged by the "
                                                   "estimator)"),
}


# --- 1. the scan ---------------------------------------------------------------------------
def _module_aliases(tree: ast.Module, package: str) -> dict[str, str]:
    """Local name -> module it stands for, from the file's imports (``np`` -> ``numpy``,
    ``schedules`` -> ``dpkmeans.engine.schedules``, ``laplace`` -> ``numpy.random.laplace``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``np.random`` -> ``numpy.random`` when the chain starts at an imported name."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(names)])


def _hits(path: Path, source: str | None = None) -> Iterator[tuple[str, int, str]]:
    """(function, line, what) for every draw-like call in one file (or in ``source``, read
    as that file)."""
    top = SRC if path.is_relative_to(SRC) else CLASSROOM
    package = ".".join((top.name, *path.relative_to(top).parent.parts))
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
    aliases = _module_aliases(tree, package)
    stack: list[str] = []
    hits: list[tuple[str, int, str]] = []

    def what(call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Attribute):
            receiver = _dotted(func.value, aliases)
            if receiver in RANDOM_MODULES and func.attr in DRAWS | STDLIB_DRAWS:
                return f"{receiver}.{func.attr}"
            if func.attr in UNCHARGED:
                return f"uncharged sampler {func.attr}"
            # a generator's method; a module's function of the same name (schedules.uniform,
            # np.power) is not a draw
            if func.attr in DRAWS and (receiver is None or not _is_module(receiver)):
                return f"generator .{func.attr}"
        elif isinstance(func, ast.Name):
            module, _, name = aliases.get(func.id, "").rpartition(".")
            if module in RANDOM_MODULES and name in DRAWS | STDLIB_DRAWS:
                return f"{module}.{name}"
            if func.id in UNCHARGED:
                return f"uncharged sampler {func.id}"
        for kw in call.keywords:
            if kw.arg == "ledger" and isinstance(kw.value, ast.Constant) and kw.value.value is None:
                return "ledger=None"
            if kw.arg == "random_state" and not (isinstance(kw.value, ast.Constant)
                                                 and kw.value.value is None):
                return "random_state="
        return None

    class Visitor(ast.NodeVisitor):
        def visit_scope(self, node: ast.FunctionDef | ast.ClassDef) -> None:
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_scope

        def visit_Call(self, node: ast.Call) -> None:
            found = what(node)
            if found:
                hits.append((".".join(stack) or "<module>", node.lineno, found))
            self.generic_visit(node)

        def visit_Attribute(self, node: ast.Attribute) -> None:
            # a hook's generators: ctx.release for noise, ctx.public_rngs for the rest
            if node.attr == "rngs" and isinstance(node.value, ast.Name) and node.value.id == "ctx":
                hits.append((".".join(stack) or "<module>", node.lineno, "ctx.rngs"))
            self.generic_visit(node)

    Visitor().visit(tree)
    yield from hits


@functools.cache
def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` (resolved through the file's imports) names a module, e.g.
    ``dpkmeans.engine.schedules`` or ``numpy``."""
    try:
        importlib.import_module(dotted)
    except ImportError:
        return False
    return True


def scan() -> dict[tuple[str, str], list[str]]:
    """Every draw-like call outside the privacy package: (file, function) -> 'line: what'."""
    found: dict[tuple[str, str], list[str]] = {}
    paths = [(p, p.relative_to(SRC).as_posix()) for p in sorted(SRC.rglob("*.py"))]
    paths += [(p, f"{CLASSROOM.name}/{p.relative_to(CLASSROOM).as_posix()}")
              for p in sorted(CLASSROOM.rglob("*.py"))]
    for path, rel in paths:
        if rel.split("/", 1)[0] == PRIVACY_PACKAGE:
            continue
        for function, line, what in _hits(path):
            found.setdefault((rel, function), []).append(f"{line}: {what}")
    return found


def test_nothing_outside_the_privacy_modules_draws_unless_allowed():
    found = scan()
    unexplained = {key: lines for key, lines in found.items() if key not in ALLOWED}
    assert not unexplained, (
        "code outside the privacy package draws random numbers (release privacy noise through "
        "dpkmeans.privacy.mechanisms.release / HookContext.release; public randomness needs an entry "
        f"in ALLOWED with its reason): {unexplained}")


def test_every_allowed_entry_is_still_needed():
    stale = sorted(set(ALLOWED) - set(scan()))
    assert not stale, f"ALLOWED lists code that no longer draws: {stale}"


def test_the_scan_finds_what_it_must():
    """The scan's own check, on the privacy package it skips: their draws are found."""
    found = {what for name in ("noise.py", "noise_types.py", "mechanisms.py", "discrete.py")
             for _, _, what in _hits(SRC / PRIVACY_PACKAGE / name)}
    assert {"generator .laplace", "generator .normal", "generator .standard_normal",
            "generator .random_raw", "uncharged sampler grid_release",
            "uncharged sampler exponential_choice"} <= found


def test_the_scan_reads_imports_and_generators():
    """Module functions of the same name are not draws; generators, numpy.random and
    ``random`` are; so are uncharged samplers, ``ledger=None`` and ``random_state=``."""
    source = '''import random
import numpy as np
from numpy.random import default_rng, laplace
from . import schedules
from ..privacy.noise import grid_release

def public(x):
    return schedules.uniform(1.0, 3), np.power(x, 2), default_rng(0), other(x, random_state=None)

def private(rng, x):
    a = rng.laplace(0.0, 1.0)
    b = np.random.normal()
    c = random.random()
    d = laplace()
    e = grid_release("laplace", x, 1.0, x, [rng])
    f = np.random.default_rng(1).standard_normal()
    return mech(x, ledger=None), other(x, random_state=3), len(ctx.rngs)
'''
    hits = list(_hits(SRC / "engine" / "probe.py", source))
    assert all(function == "private" for function, _, _ in hits), hits
    assert sorted(w for _, _, w in hits) == sorted([
        "generator .laplace", "numpy.random.normal", "random.random", "numpy.random.laplace",
        "uncharged sampler grid_release", "generator .standard_normal", "ledger=None",
        "random_state=", "ctx.rngs"])


def test_every_allowance_gives_a_reason():
    assert all(isinstance(r, str) and len(r) > 20 for r in ALLOWED.values())


# --- 2. charge, then draw --------------------------------------------------------------------
class WatchingLedger(PrivacyLedger):
    """A ledger that notes the generators' states whenever it records a charge."""

    def __init__(self, rngs: list[np.random.Generator], **kwargs) -> None:
        super().__init__(**kwargs)
        self.rngs, self.seen = rngs, []

    def charge(self, *args, **kwargs):
        self.seen.append([g.bit_generator.state for g in self.rngs])
        return super().charge(*args, **kwargs)


def gens(R: int = 3, seed: int = 11) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(R)]


def states(rngs: list[np.random.Generator]) -> list[dict]:
    return [g.bit_generator.state for g in rngs]


CALIBRATIONS = {
    "laplace, discrete": calibrate("laplace", 2.0, 0.5, coordinates=4),
    "laplace, continuous": calibrate("laplace", 2.0, 0.5, sampler="continuous"),
    "gaussian, discrete": calibrate("gaussian", 1.0, 0.5, 1e-5, coordinates=4),
    "gaussian, continuous": calibrate("gaussian", 1.0, 0.5, 1e-5, sampler="continuous"),
    "colored": CovarianceNoise(np.stack([np.eye(4) * (r + 1) for r in range(3)]), "colored",
                               sensitivity=1.0, epsilon=0.5, delta=1e-5, scale=1.0),
}


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
def test_release_charges_then_draws(name):
    rngs = gens()
    before = states(rngs)
    ledger = WatchingLedger(rngs)
    values = np.arange(12.0).reshape(3, 4)
    out = mechanisms.release(ledger, CALIBRATIONS[name], values, rngs, label="x",
                             details={"replicas": 3})
    assert ledger.seen == [before]  # charged once, before any draw
    assert states(rngs) != before and out.shape == values.shape and np.all(out != values)
    (entry,) = [e for e in ledger.entries if e.epsilon > 0]
    assert entry.label == "x" and entry.details["replicas"] == 3
    assert ledger.is_private == ("continuous" not in name and name != "colored")


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
def test_a_refused_release_draws_nothing(name):
    rngs = gens()
    before = states(rngs)
    ledger = PrivacyLedger(budget=0.25)
    with pytest.raises(BudgetExceededError):
        mechanisms.release(ledger, CALIBRATIONS[name], np.zeros((3, 4)), rngs, label="x")
    assert states(rngs) == before and not ledger.entries


def test_release_equals_its_parts_and_the_mechanism():
    """release = charge + the sampler; the Laplace mechanism is a one-replica release."""
    cal = CALIBRATIONS["laplace, discrete"]
    ledger = PrivacyLedger()
    a = mechanisms.release(ledger, cal, np.ones((1, 4)), gens(1), label="a")
    b = mechanisms.laplace_mechanism(np.ones(4), 2.0, 0.5, gens(1)[0], ledger=PrivacyLedger())
    np.testing.assert_array_equal(a[0], b)
    shared = mechanisms.release(ledger, cal, np.zeros((1, 3, 4)), gens(1), label="s",
                                shared=True)
    assert np.all(shared == shared[..., :1])  # one draw per row, on every column
    # continuous noise drawn up front is scaled when the release is charged, and nothing more
    # is drawn then
    rngs = gens(2)
    cal = CALIBRATIONS["laplace, continuous"]
    unit = mechanisms.unit_noise("laplace", rngs, (4,))
    after_unit = states(rngs)
    out = mechanisms.release(ledger, cal, np.ones((2, 4)), rngs, label="u", unit=unit)
    np.testing.assert_array_equal(out, 1.0 + cal.scale * unit)
    assert states(rngs) == after_unit and not ledger.is_private


def test_release_needs_one_row_per_generator():
    with pytest.raises(ValueError, match="one row per generator"):
        mechanisms.release(None, CALIBRATIONS["laplace, discrete"], np.zeros((2, 4)), gens(3),
                           label="x")


def _plan(k: int = 4, c: int = 3) -> tuple[Parallel, NoisePlan]:
    cal = calibrate("laplace", 2.0, 1.0, coordinates=c)
    one = mechanisms.entry(cal, label="(S_j, n_j)")
    charges = Parallel("clusters", [(f"cluster {j}", [one]) for j in range(k)])
    plan = NoisePlan("laplace", "discrete", np.full((k, c), cal.grid),
                     np.full((k, c), cal.noise_steps), np.full((k, c), cal.scale))
    return charges, plan


def test_release_plan_charges_every_part_then_draws():
    rngs = gens()
    before = states(rngs)
    ledger = WatchingLedger(rngs, budget=1.0)
    charges, plan = _plan()
    out = mechanisms.release_plan(ledger, charges, np.zeros((3, 4, 3)), plan, rngs)
    assert ledger.seen == [before] * 4 and states(rngs) != before and np.all(out != 0)
    assert ledger.total().epsilon == 1.0  # parallel over the four clusters


def test_a_refused_plan_draws_nothing():
    rngs = gens()
    before = states(rngs)
    charges, plan = _plan()
    sequential = [e for _, part in charges.parts for e in part]
    with pytest.raises(BudgetExceededError):
        mechanisms.release_plan(PrivacyLedger(budget=3.0), sequential, np.zeros((3, 4, 3)), plan,
                                rngs)  # in sequence: 4 > 3
    assert states(rngs) == before


def test_release_choices_charges_then_draws_and_refuses():
    rngs = gens()
    before = states(rngs)
    entry = Entry("exponential", 1.0, 1.0, 2.0, label="mode")
    gaps = [np.array([0, 3, 1, 0, 2], dtype=np.int64)] * 3
    with pytest.raises(BudgetExceededError):
        mechanisms.release_choices(PrivacyLedger(budget=0.5), [entry], gaps, rngs,
                                   coefficient=Fraction(1, 2), widths=np.array([3, 2]))
    assert states(rngs) == before
    ledger = WatchingLedger(rngs, budget=1.0)
    picks = mechanisms.release_choices(ledger, [entry], gaps, rngs, coefficient=Fraction(1, 2),
                                       widths=np.array([3, 2]))
    assert ledger.seen == [before] and states(rngs) != before and picks.shape == (3, 2)


def test_a_hook_releases_through_its_context_and_holds_no_generator_for_noise():
    rngs = gens()
    before = states(rngs)
    config = DPLloydConfig(2, (np.zeros(2), np.ones(2)), [1.0])
    ctx = HookContext(MemoryBackend(), None, 10, config, None, rngs, PrivacyLedger(budget=0.1))
    assert ctx.replicas == 3 and "Generator" not in repr(ctx)
    with pytest.raises(BudgetExceededError):
        ctx.release(CALIBRATIONS["laplace, discrete"], np.zeros((3, 4)), label="x")
    assert states(rngs) == before
    ctx = replace(ctx, ledger=WatchingLedger(rngs))
    ctx.release(CALIBRATIONS["laplace, discrete"], np.zeros((3, 4)), label="x")
    assert ctx.ledger.seen == [before] and states(rngs) != before


# --- 3. every private path goes through a release -------------------------------------------
@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    """Wrap the release functions to count their calls (results unchanged)."""
    counts = {"release": 0, "release_plan": 0, "release_choices": 0}

    def wrap(name: str) -> Callable:
        inner = getattr(mechanisms, name)

        def counting(*args, **kwargs):
            counts[name] += 1
            return inner(*args, **kwargs)

        return counting

    for name in counts:
        monkeypatch.setattr(mechanisms, name, wrap(name))
    return counts


BOX = (np.zeros(2), np.ones(2))


def data() -> np.ndarray:
    gen = np.random.default_rng(3)
    centres = np.array([[0.2, 0.3], [0.7, 0.8], [0.8, 0.2]])
    return np.clip(centres[gen.integers(0, 3, 150)] + gen.normal(0, 0.05, (150, 2)), 0, 1)


@pytest.mark.parametrize("sampler", ["discrete", "continuous"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian", "colored"])
def test_engine_iterations_release_through_release_plan(counted, sampler, noise):
    config = DPLloydConfig(3, BOX, schedules.uniform(1.0, 4), sampler=sampler, noise=noise,
                           delta=0.0 if noise == "laplace" else 1e-5)
    result = run(data(), config, 5, replicas=3)
    assert counted == {"release": 0, "release_plan": 4, "release_choices": 0}
    assert np.all(np.isfinite(result.centroids))


def test_silhouette_hooks_release_through_release(counted):
    corrected = run(data(), silhouette.corrected(3, 1.0, BOX), 5, replicas=2)
    runs = int(corrected.iterations_run.max())
    assert counted == {"release": runs, "release_plan": runs, "release_choices": 0}
    for name in counted:
        counted[name] = 0
    run(data(), silhouette.as_published(3, 1.0, BOX), 5, replicas=2)
    assert counted["release"] == 1 and counted["release_plan"] >= 1  # the initial release


def test_apdp_and_colored_hooks_release_through_release(counted):
    run(data(), apdp.as_published(3, 1.0, BOX, n_records=150), 5, replicas=2)
    assert counted["release"] == 1  # the noisy initial records
    counted["release"] = 0
    result = run(data(), colored.as_published(3, 0.5, 0.1, BOX, max_iter=10), 5, replicas=2)
    assert counted["release"] == 1  # the one-shot colored release
    assert any(e.mechanism.startswith("colored Gaussian") for e in result.ledger.entries)


def test_kprototypes_modes_release_through_release_choices(counted):
    layout = MixedLayout((3, 2), 2, 0.12)
    gen = np.random.default_rng(4)
    Z = encode(gen.random((120, 2)), np.stack([gen.integers(0, 3, 120),
                                               gen.integers(0, 2, 120)], axis=1), layout)
    config = di.kprototypes_corrected(layout, BOX, epsilon=2.0, n_clusters=3, iterations=3)
    result = run(Z, config, 5, replicas=2)
    runs = int(result.iterations_run.max())
    assert counted == {"release": 0, "release_plan": runs, "release_choices": runs}
