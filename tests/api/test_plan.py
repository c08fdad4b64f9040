"""The plan of a fit (``DPKMeans(...).plan``, ``dpkmeans.plan``): from public inputs alone, it
previews the noise a fit then draws, to the last bit of every scale, and the guarantee its
ledger reports; it reads no data, draws nothing and charges nothing; it refuses what a fit
refuses, says what it assumes and warns about what is not sensible."""

from __future__ import annotations

import builtins
import io
import random
import types
import warnings

import numpy as np
import pytest

import dpkmeans
from dpkmeans import DPKMeans, PrivacyLedger
from dpkmeans.api.catalogue import CATALOGUE, FitInputs, choice
from dpkmeans.api.plan import COUNT_NOISE_RATIO, TYPICAL_OFFSET, Plan, centre_sd, element_sd
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.privacy import mechanisms
from dpkmeans.synthesis import planner
from dpkmeans.synthesis.noise_table import sum_sd

N, D, K = 1200, 3, 3
BOX = (-1.0, 1.0)

#: (algorithm, the estimator's other parameters): every algorithm of the DP-Lloyd loop in the
#: catalogue, in its forms, and a fit that pays for a noisy count.
FITS = [
    ("dplloyd", {}),
    ("dplloyd", {"delta": 1e-6}),  # the Gaussian twin, tight composition
    ("dplloyd", {"delta": 1e-6, "noise": "laplace"}),  # the Laplace form, PLD composition
    ("dplloyd-impr", {"n_records": N}),
    ("dplloyd-impr", {}),  # a noisy count first
    ("dp-kccm", {}),
    ("silhouette", {}),  # an allocation rule
    ("apdp", {"n_records": N}),
    ("di", {}),  # replace adjacency, a stopping rule
    ("fastlloyd-laplace", {"n_records": N}),
    ("fastlloyd", {"n_records": N, "delta": 1e-6}),  # whitened offsets
    ("colored", {"delta": 1e-6}),
    ("colored", {"delta": 1e-6, "noise": "basic"}),  # basic composition
]


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    rng = np.random.default_rng(5)
    centres = rng.uniform(-0.6, 0.6, (K, D))
    return np.clip(centres[rng.integers(0, K, N)] + rng.normal(0.0, 0.1, (N, D)), -1, 1)


def estimator(algorithm: str, **params) -> DPKMeans:
    return DPKMeans(K, epsilon=1.0, bounds=BOX, algorithm=algorithm, random_state=11, **params)


def drawn(model: DPKMeans) -> dict[int, list[tuple[str, float]]]:
    """The fit's releases by iteration (0: before the iterations), each distinct (label,
    scale) once, in the order the ledger recorded them."""
    out: dict[int, list[tuple[str, float]]] = {}
    for e in model.ledger_.entries:
        if e.mechanism == "post-processing":
            continue
        head = e.scope.split(" > ")[0]
        t = int(head.split()[1]) if head.startswith("iteration ") else 0
        rows = out.setdefault(t, [])
        if (e.label, e.scale) not in rows:
            rows.append((e.label, e.scale))
    return out


@pytest.mark.parametrize("algorithm, params", FITS,
                         ids=[f"{a}{'-' + '-'.join(map(str, p.values())) if p else ''}"
                              for a, p in FITS])
def test_the_previewed_noise_is_the_noise_a_fit_draws(X, algorithm, params):
    """Done when: every release's scale the plan previews equals the scale the fit's ledger
    records for it, bit for bit (float ==), in every iteration the fit ran, the noisy count
    included; and the plan's guarantee is what the ledger reports (at most, for a run a
    stopping rule may end early)."""
    previewed = estimator(algorithm, **params).plan(N, n_features=D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping
        model = estimator(algorithm, **params).fit(X)
    planned: dict[int, list[tuple[str, float]]] = {}
    for r in previewed.releases:
        planned.setdefault(r.iteration, []).append((r.label, r.scale))
    fit = drawn(model)
    assert set(fit) <= set(planned) and len(fit) >= 2
    for t, rows in fit.items():
        assert [s for _, s in rows] == [s for _, s in planned[t]], (t, rows, planned[t])
        if algorithm != "silhouette":  # its ledger labels the weighted release its own way
            assert [label for label, _ in rows] == [label for label, _ in planned[t]]
    spent, promised = model.privacy_spent_, previewed.guarantee
    assert spent.delta == pytest.approx(promised.delta, rel=1e-12, abs=0.0)
    if model.n_iter_ == previewed.iterations:
        assert spent.epsilon == pytest.approx(promised.epsilon, rel=1e-12)
    else:  # a stopping rule ended the run early: it spent less than the plan's most
        assert algorithm in ("di", "silhouette") and spent.epsilon < promised.epsilon
    assert previewed.neighbour == model.ledger_.neighbour
    assert (0 in planned) == (algorithm == "dplloyd-impr" and "n_records" not in params)


def test_the_plan_of_an_allocation_rule_says_what_it_cannot_fix():
    previewed = estimator("silhouette").plan(N, n_features=D)
    weighted = [r for r in previewed.releases if r.note]
    assert weighted and all("scale / w" in r.note for r in weighted)
    assert "*" in previewed.summary()


def test_a_plan_reads_no_data_draws_nothing_and_charges_nothing(monkeypatch):
    accountant = PrivacyLedger(budget=5.0)
    seed = np.random.SeedSequence(3)
    model = DPKMeans(K, epsilon=1.0, bounds=BOX, algorithm="dplloyd-impr", accountant=accountant,
                     random_state=seed)
    model.plan(N, n_features=D)  # imports what it needs first

    def refuse(*args, **kwargs):
        raise AssertionError("the plan drew or read")

    charged = []
    charge = PrivacyLedger.charge

    def record(ledger, *args, **kwargs):  # the planner's own scratch ledgers may be charged
        charged.append(ledger)
        return charge(ledger, *args, **kwargs)

    for name in ("release", "release_plan", "release_choices"):  # every draw goes through one
        monkeypatch.setattr(mechanisms, name, refuse)
    monkeypatch.setattr(PrivacyLedger, "charge", record)
    monkeypatch.setattr(np.random, "default_rng", refuse)
    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(io, "open", refuse)
    numpy_state, stdlib_state = np.random.get_state(), random.getstate()
    previewed = model.plan(N, n_features=D)
    monkeypatch.undo()
    assert previewed.releases and all(ledger is not accountant for ledger in charged)
    assert accountant.entries == () and accountant.total().epsilon == 0
    assert seed.n_children_spawned == 0 and random.getstate() == stdlib_state
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), numpy_state))
    assert not hasattr(model, "ledger_") and model.get_params()["random_state"] is seed


def test_dpkmeans_plan_reads_no_dataset(monkeypatch):
    from dpkmeans.data import loader

    def refuse(*args, **kwargs):
        raise AssertionError("a dataset was read")

    monkeypatch.setattr(loader, "load", refuse)
    assert dpkmeans.plan(N, D, K, epsilon=1.0, algorithm="dplloyd-impr").iterations >= 1


def test_dpkmeans_plan_is_the_estimators_with_n_public():
    top = dpkmeans.plan(N, D, K, epsilon=1.0, bounds=BOX, algorithm="apdp")
    own = DPKMeans(K, epsilon=1.0, bounds=BOX, algorithm="apdp", n_records=N).plan(N, D)
    assert top.releases == own.releases and top.guarantee == own.guarantee
    assert top.centre_sd == own.centre_sd and top.params["n_records"] == N
    assert dpkmeans.plan is planner.plan and "plan" in dir(dpkmeans)


def test_every_loop_algorithm_is_plannable_and_the_others_say_why():
    for name, entry in CATALOGUE.items():
        delta = 1e-6 if entry.needs_delta else 0.0
        if entry.standalone:
            with pytest.raises(ValueError, match=f"algorithm='{name}' runs outside it .*"
                                                 "declares no plan of its releases' noise"):
                dpkmeans.plan(N, D, K, epsilon=1.0, delta=delta, algorithm=name)
            continue
        previewed = dpkmeans.plan(N, D, K, epsilon=1.0, delta=delta, algorithm=name)
        assert previewed.algorithm == name and len(previewed.centre_sd) == previewed.iterations
        assert previewed.guarantee.epsilon <= 1.0 * (1 + 1e-9)


def test_the_centre_sd_is_the_first_order_noise_of_s_over_n():
    """The formula on one Laplace release, and a simulation of S'/n' with the previewed
    scale: the first-order sd is within 3% of the simulated one for a cluster of N/k records
    whose centre lies TYPICAL_OFFSET half-widths from the midpoint."""
    config = DPLloydConfig(2, ([0.0, -2.0], [4.0, 2.0]), [0.25])  # half-widths 2 and 2
    n_records = 4000
    sd, relative = centre_sd(config, n_records)
    b = (2.0 + 2.0 + 1.0) / 0.25  # the L1 sensitivity over epsilon
    n, x = n_records / 2, TYPICAL_OFFSET * 2.0
    assert sd[0] == pytest.approx(np.sqrt(2 * b**2 + x**2 * 2 * b**2) / n, rel=1e-8)  # grid
    assert relative[0] == pytest.approx(sd[0] / 2.0, rel=1e-12)
    rng = np.random.default_rng(0)
    noisy = (n * x + rng.laplace(0, b, 400_000)) / (n + rng.laplace(0, b, 400_000))
    assert np.std(noisy) == pytest.approx(sd[0], rel=0.03)


@pytest.mark.parametrize("algorithm", ["colored", "dplloyd-impr"])
def test_the_sum_noise_behind_the_centre_sd_is_the_noise_tables(algorithm):
    """The sum noise the centre sd is built on (whitened noise scaled back) agrees with the
    book's noise table (dpkmeans.synthesis.noise_table.sum_sd) at x = 0."""
    box = (np.array([0.0, -1.0, 0.0]), np.array([4.0, 1.0, 0.5]))
    config = choice(algorithm).build(FitInputs(3, 1.0, box, max_iter=4, n_records=10**4,
                                               delta=1e-6 if algorithm == "colored" else None))
    element = element_sd(config)
    np.testing.assert_allclose([sd[:, :3].max(axis=0) for sd in element], sum_sd(config),
                               rtol=1e-12)


def test_the_box_assumed_is_said():
    assumed = dpkmeans.plan(N, D, K, epsilon=1.0)
    assert assumed.bounds == ((-1.0,) * D, (1.0,) * D)
    assert "no bounds were given" in assumed.assumptions[0] and assumed.sensible
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the plan itself warns nothing: it says it
        paper = DPKMeans(K, epsilon=1.0, algorithm="dplloyd").plan(N, n_features=D)
    assert paper.bounds == assumed.bounds and "bounds=None" in paper.warnings[0]
    assert not paper.sensible


def test_warnings_when_the_configuration_is_not_sensible():
    many = dpkmeans.plan(2000, 10, 10, epsilon=0.2, algorithm="dplloyd", max_iter=40)
    assert any(w.startswith("too many iterations for the budget") and "lower max_iter" in w
               and "mostly noise" in w for w in many.warnings)
    assert max(many.relative_centre_sd) > 1.0
    crowded = dpkmeans.plan(500, 2, 50, epsilon=1.0, algorithm="dplloyd", max_iter=2)
    assert any(f"N/50 = 10 records per cluster is below {COUNT_NOISE_RATIO:g} times" in w
               for w in crowded.warnings)
    fine = dpkmeans.plan(10**6, 2, 3, epsilon=1.0, algorithm="dplloyd", max_iter=2)
    assert fine.sensible and fine.warnings == ()


def test_a_plan_refuses_what_a_fit_refuses(X):
    tiny = estimator("dplloyd", max_iter=10)
    tiny.set_params(epsilon=1e-3)
    with pytest.raises(ValueError) as planned:
        tiny.plan(N, n_features=D)
    with pytest.raises(ValueError) as fitted:
        tiny.fit(X)
    assert str(planned.value) == str(fitted.value)
    with pytest.raises(BudgetTooSmallError):
        estimator("dplloyd", max_iter=1).set_params(epsilon=1e-9).plan(10**10, n_features=D)
    with pytest.raises(ValueError, match="exceeds n_records = 2"):
        estimator("dplloyd").plan(2, n_features=D)


@pytest.mark.parametrize("call, message", [
    (lambda: estimator("dplloyd").plan(N), "n_features: the bounds are scalars"),
    (lambda: estimator("dplloyd").plan(n_features=D), "n_records: give the number of records"),
    (lambda: estimator("dplloyd-impr", n_records=N).plan(N + 1, D),
     "differs from the estimator's n_records"),
    (lambda: estimator("dplloyd").plan(0, D), "n_records"),
    (lambda: DPKMeans(K, bounds=([0, 0], [1, 1])).plan(N, n_features=3), "length 3"),
    (lambda: DPKMeans(K, bounds=("a", 1)).plan(N, n_features=2), "must be a number"),
    (lambda: dpkmeans.plan(N, D, K, 1.0, random_state=0), "plan takes the parameters"),
    (lambda: dpkmeans.plan(N, D, K, None), "epsilon: give the fit's budget"),
    (lambda: dpkmeans.plan(N, D, K, 1.0, algorithm="colored"), "give delta"),
])
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_budget_in_rho_and_m():
    """Differential identifiability's budget (algorithm="di", book chapter 11)."""
    previewed = dpkmeans.plan(N, D, K, None, algorithm="di", rho=0.8, m=2)
    assert previewed.epsilon == pytest.approx(np.log(4.0)) and previewed.neighbour == "replace"
    assert previewed.params == {"rho": 0.8, "m": 2}


def test_bounds_give_the_dimension():
    by_arrays = DPKMeans(K, epsilon=1.0, bounds=([0, 0, 0], [1, 2, 3]),
                         algorithm="dplloyd").plan(N)
    by_dict = DPKMeans(K, epsilon=1.0, bounds={"a": (0, 1), "b": (0, 2)},
                       algorithm="dplloyd").plan(N)
    assert by_arrays.n_features == 3 and by_arrays.bounds == ((0.0,) * 3, (1.0, 2.0, 3.0))
    assert by_dict.n_features == 2


def test_the_summary_and_the_table():
    previewed = dpkmeans.plan(10_000, 10, 5, epsilon=1.0, algorithm="dplloyd-impr")
    text = previewed.summary()
    assert "S_j[0..9] (each)" in text and "the ledger will report: epsilon=1" in text
    assert "1-" in text  # the iterations with the same noise share a row
    frame = previewed.releases_frame()
    assert len(frame) == len(previewed.releases) and {"scale", "epsilon"} <= set(frame)
    with pytest.raises(TypeError):
        previewed.params["max_iter"] = 3  # a plan is read-only
    assert isinstance(previewed, Plan)


# --- the recommendation ------------------------------------------------------------------------
def test_the_plan_works_without_the_recommendation(monkeypatch):
    monkeypatch.setattr(planner, "recommending", None)
    previewed = dpkmeans.plan(N, D, K, epsilon=1.0)
    assert previewed.recommendation is None
    assert planner.describe(previewed).endswith("recommendation: none (the recommendation is "
                                                "not available)")


def test_the_plan_asks_the_recommendation_at_its_public_quantities(monkeypatch):
    asked = []

    def recommend(*args, **kwargs):
        asked.append((args, kwargs))
        return "favoured"

    monkeypatch.setattr(planner, "recommending", types.SimpleNamespace(recommend=recommend))
    previewed = dpkmeans.plan(N, D, K, epsilon=0.5, delta=1e-6, algorithm="dplloyd")
    assert previewed.recommendation == "favoured"
    assert asked == [((N, D, K, 0.5, 1e-6), {"neighbour": "add/remove"})]

    def refuses(*args, **kwargs):
        raise ValueError("nothing measured there")

    monkeypatch.setattr(planner, "recommending", types.SimpleNamespace(recommend=refuses))
    previewed = dpkmeans.plan(N, D, K, epsilon=0.5)
    assert previewed.recommendation is None
    assert previewed.assumptions[-1] == "no recommendation: nothing measured there"


def test_the_estimators_own_plan_has_no_recommendation():
    """The estimators sit below the book's results (tests/test_import_graph.py): only
    dpkmeans.plan recommends."""
    assert estimator("dplloyd").plan(N, D).recommendation is None


def test_the_recommendation_when_its_module_is_there():
    if planner.recommending is None:
        pytest.skip("dpkmeans.synthesis.recommend is not in this tree")
    previewed = dpkmeans.plan(10_000, 10, 5, epsilon=1.0)
    rec = previewed.recommendation
    assert rec is not None and rec.algorithm and len(rec.interval) == 2
    assert f"recommended: algorithm={rec.algorithm!r}" in planner.describe(previewed)
