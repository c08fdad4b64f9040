"""Large k: k = 10^4 clusters used to hang (regression tests).

The ledger re-composed every part of a parallel scope at each draw (quadratic in its entries)
and sphere packing tested each candidate against every accepted centre (quadratic in k); the
assignment's set-up compared every pair of centroids (an (R, k, k, d) array).
These tests count work instead of timing it: composition steps per recorded draw, exact
distance tests per packed centre. The numbers themselves must not change: the totals are
checked against a fold computed here from scratch, and the packing against the original
loop, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.engine import init
from dpkmeans.errors import BudgetExceededError
from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger

ZERO = PrivacyCost(0.0, 0.0)


# --- the ledger -------------------------------------------------------------------------
@pytest.fixture
def compositions(monkeypatch):
    """Count PrivacyCost.then and .alongside calls (each composition step of the ledger)."""
    calls = {"n": 0}
    then, alongside = PrivacyCost.then, PrivacyCost.alongside

    def counted_then(self, other):
        calls["n"] += 1
        return then(self, other)

    def counted_alongside(self, other):
        calls["n"] += 1
        return alongside(self, other)

    monkeypatch.setattr(PrivacyCost, "then", counted_then)
    monkeypatch.setattr(PrivacyCost, "alongside", counted_alongside)
    return calls


def one_iteration(ledger: PrivacyLedger, k: int, releases: int = 1) -> None:
    """The engine's shape: one iteration, k clusters in parallel, ``releases`` draws each."""
    with ledger.sequential("iteration 1"), ledger.parallel("clusters"):
        for j in range(k):
            with ledger.part(f"cluster {j}"):
                for i in range(releases):
                    ledger.charge("Laplace", epsilon=0.1, sensitivity=3.0, scale=30.0,
                                  label=f"release {i}")
                ledger.post_process("clamp the noisy count")


@pytest.mark.parametrize("releases", [1, 3])
def test_ledger_work_is_linear_in_its_entries(compositions, releases):
    steps = {}
    for k in (250, 500, 1000):
        compositions["n"] = 0
        one_iteration(PrivacyLedger(budget=1.0), k, releases)
        steps[k] = compositions["n"]
    # Linear: a bounded number of steps per draw, and doubling k doubles the work (it grew
    # with k^2 / 2 before: 125 000 steps at k = 500 for 500 draws).
    for k, n in steps.items():
        assert n <= 12 * k * releases, steps
    assert steps[1000] <= 2.2 * steps[500] and steps[500] <= 2.2 * steps[250], steps


def _fold(node) -> PrivacyCost:
    """The composed cost of a ledger node, folded from scratch in recording order."""
    if hasattr(node, "parts"):
        total = ZERO
        for part in node.parts:
            total = total.alongside(_fold(part))
        return total
    if hasattr(node, "children"):
        total = ZERO
        for child in node.children:
            total = total.then(_fold(child))
        return total
    return PrivacyCost(node.epsilon, node.delta)


def test_ledger_totals_equal_a_fold_from_scratch_bit_for_bit():
    """Nested scopes, notes, absorbed ledgers and refused draws, in random order: after every
    step the total is the fold of what was recorded, to the last bit (no epsilon is lost or
    added by keeping partial sums), and a refused draw leaves everything as it was."""
    rng = np.random.default_rng(33)
    for trial in range(20):
        ledger = PrivacyLedger(budget=(float(rng.uniform(0.5, 4.0)), 1e-4))
        refused = 0

        def check() -> None:
            assert ledger.total() == _fold(ledger._root)
            assert np.float64(ledger.total().epsilon).tobytes() == \
                np.float64(_fold(ledger._root).epsilon).tobytes()

        def step(depth: int) -> None:
            nonlocal refused
            r = int(rng.integers(0, 6))
            if r == 0 or depth > 3:
                before, n = ledger.total(), len(ledger.entries)
                try:
                    ledger.charge("Laplace", epsilon=float(rng.uniform(0.001, 0.6)),
                                  delta=float(rng.choice([0.0, 1e-6, 3e-5])),
                                  sensitivity=1.0, scale=1.0)
                except BudgetExceededError as exc:
                    refused += 1
                    assert ledger.total() == before and len(ledger.entries) == n
                    assert f"already spent: {before}" in str(exc)
            elif r == 1:
                ledger.post_process("a note")
            elif r == 2:
                with ledger.sequential(f"s{depth}"):
                    for _ in range(int(rng.integers(0, 4))):
                        step(depth + 1)
            elif r == 3:
                with ledger.parallel(f"p{depth}"):
                    for j in range(int(rng.integers(0, 5))):
                        with ledger.part(f"part {j}"):
                            for _ in range(int(rng.integers(0, 4))):
                                step(depth + 1)
            elif r == 4:
                other = PrivacyLedger()
                for _ in range(int(rng.integers(1, 4))):
                    other.charge("Gaussian", epsilon=float(rng.uniform(0.01, 0.4)),
                                 delta=1e-7, sensitivity=2.0, scale=3.0)
                try:
                    ledger.absorb(other, f"fit {trial}")
                except BudgetExceededError:
                    refused += 1
            else:
                ledger.leak("a leak")
            check()

        for _ in range(25):
            step(0)
    assert refused > 0  # the refusals were exercised


def test_refused_draw_message_and_state_at_large_k():
    ledger = PrivacyLedger(budget=0.5)
    one_iteration(ledger, 2000)  # 0.1 in parallel over 2000 clusters
    for _ in range(4):
        ledger.charge("Laplace", epsilon=0.1, sensitivity=1.0, scale=10.0)
    entries = ledger.entries
    with pytest.raises(BudgetExceededError, match=r"would raise the composed total to "
                       r"epsilon=0\.6, .* already spent: epsilon=0\.5"):
        ledger.charge("Laplace", epsilon=0.1, sensitivity=1.0, scale=10.0)
    assert ledger.entries == entries and ledger.total().epsilon == pytest.approx(0.5)


# --- sphere packing ---------------------------------------------------------------------
def reference_sphere_packing(bounds, k, rng, *, radius=None, max_failures=100):
    """The original loop (Su et al. 2016): every candidate against every accepted centre."""
    lower, upper = (np.atleast_1d(np.asarray(b, dtype=float)) for b in bounds)
    lower, upper = np.broadcast_arrays(lower, upper)
    a = float(np.min(upper - lower)) / 4.0 if radius is None else float(radius)
    while True:
        centres: list[np.ndarray] = []
        failures = 0
        while len(centres) < k and failures < max_failures:
            candidate = rng.uniform(lower + a, upper - a)
            if all(np.linalg.norm(candidate - c) >= 2 * a for c in centres):
                centres.append(candidate)
                failures = 0
            else:
                failures += 1
        if len(centres) == k:
            return np.array(centres)
        a /= 2.0


def packing_cases():
    rng = np.random.default_rng(5)
    cases = [((-1.0, 1.0), 1, {}), ((0.0, 1.0), 300, {}), ((np.zeros(2), np.ones(2)), 400, {}),
             ((-np.ones(3), np.ones(3)), 250, {}), ((-np.ones(5), np.ones(5)), 120, {}),
             ((-np.ones(10), np.ones(10)), 60, {}),
             ((np.zeros(2), np.ones(2)), 200, {"max_failures": 3}),
             ((np.zeros(2), np.full(2, 1e-150)), 20, {}),  # decided by the exact test only
             ((np.zeros(2), np.full(2, 1e150)), 20, {})]
    for _ in range(12):
        d = int(rng.integers(1, 6))
        lo = rng.uniform(-5, 5, d)
        hi = lo + rng.uniform(0.05, 10, d)
        kw = {"radius": float(rng.uniform(0.001, 0.02))} if rng.random() < 0.3 else {}
        cases.append(((lo, hi), int(rng.integers(2, 200)), kw))
    return cases


@pytest.mark.parametrize("case", range(len(packing_cases())))
def test_sphere_packing_is_the_original_bit_for_bit(case):
    bounds, k, kw = packing_cases()[case]
    for seed in range(2):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        got = init.sphere_packing(bounds, k, ours, **kw)
        want = reference_sphere_packing(bounds, k, theirs, **kw)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
        assert ours.bit_generator.state == theirs.bit_generator.state  # the same draws


def test_borderline_distances_take_the_exact_test(monkeypatch):
    """Candidates at distance 2a to within a few ulps are decided by np.linalg.norm, as in the
    original loop; the bulk screen never decides them."""
    exact = {"n": 0}
    original = init._Neighbours._exact

    def counted(self, candidate, j):
        exact["n"] += 1
        return original(self, candidate, j)

    monkeypatch.setattr(init._Neighbours, "_exact", counted)
    rng = np.random.default_rng(1)
    for d in (1, 2, 3, 6):
        spacing = 0.3
        index = init._Neighbours(np.zeros(d), np.full(d, 10.0), spacing, 300)
        centres = []
        while len(centres) < (12 if d == 1 else 40):  # 1-D: at most 27 fit in [1, 9]
            c = rng.uniform(1, 9, d)
            if all(np.linalg.norm(c - e) >= spacing for e in centres):
                centres.append(c)
                index.add(c)
        for _ in range(400):
            c = centres[int(rng.integers(len(centres)))]
            u = rng.normal(size=d)
            u /= np.linalg.norm(u)
            for scale in (spacing, np.nextafter(spacing, 0), np.nextafter(spacing, 1),
                          spacing * (1 + 4e-16), spacing * (1 - 4e-16)):
                candidate = c + scale * u
                want = all(np.linalg.norm(candidate - e) >= spacing for e in centres)
                assert index.is_clear(candidate) == want
    assert exact["n"] > 0


def test_sphere_packing_no_longer_tests_every_pair(monkeypatch):
    """Each candidate was compared with every accepted centre by np.linalg.norm (about k^2 / 2
    calls per attempt): now only distances too close to call are."""
    calls = {"n": 0}
    norm = np.linalg.norm

    def counted(*args, **kwargs):
        calls["n"] += 1
        return norm(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "norm", counted)
    k = 600
    centres = init.sphere_packing((np.zeros(2), np.ones(2)), k, np.random.default_rng(0))
    assert centres.shape == (k, 2)
    assert calls["n"] <= k // 10


# --- the nearest-centroid set-up -------------------------------------------------------------
def pairwise_shadowed(C: np.ndarray) -> np.ndarray:
    """The original all-pairs test: centroid j equals (==) one of lower index."""
    same = (C[:, :, None, :] == C[:, None, :, :]).all(axis=3)
    return np.triu(same, k=1).any(axis=1)


def test_shadowed_centroids_are_those_of_the_all_pairs_test():
    """Duplicates, -0.0 beside 0.0, NaN coordinates, k = 1 and several replicas."""
    from dpkmeans.compute.lloyd import shadowed_centroids

    rng = np.random.default_rng(33)
    for trial in range(400):
        R, k, d = (int(v) for v in rng.integers(1, (4, 40, 5)))
        C = rng.integers(-2, 3, (R, k, d)).astype(float)
        zeros = C == 0
        C[zeros] = rng.choice([0.0, -0.0], size=int(zeros.sum()))
        if trial % 3 == 0:
            C[rng.random(C.shape) < 0.05] = np.nan
        assert (shadowed_centroids(C) == pairwise_shadowed(C)).all(), trial


def test_nearest_set_up_memory_is_linear_in_k():
    """Setting up the assignment compared every pair of centroids with an (R, k, k, d) array:
    at k = 10^4 and d = 10, a gigabyte and most of a fit's time. Now its peak memory is a
    small multiple of the centroids' own (k = 3000, d = 4: 96 KB of centroids)."""
    import tracemalloc

    from dpkmeans.compute.lloyd import Nearest

    k, d = 3000, 4
    C = np.random.default_rng(0).uniform(-1, 1, (1, k, d))
    C[0, 1500:] = C[0, :1500]  # half of them repeat the first half
    tracemalloc.start()
    try:
        near = Nearest(np.zeros((1, d)), C)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert near.shadowed[0].sum() == 1500 and not near.shadowed[0, :1500].any()
    assert peak < 40 * C.nbytes, peak  # the pairwise test alone took k^2 d = 36 MB


# --- a whole fit ----------------------------------------------------------------------------
@pytest.mark.slow
def test_a_fit_with_2000_clusters_finishes():
    """DPLloyd-Impr (sphere packing, Su's split: 3 draws per cluster and iteration) with
    k = 2000 on 2000 rows (as many clusters as records, the most a fit accepts): seconds."""
    from dpkmeans.api.estimators import DPKMeans

    X = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
    model = DPKMeans(2000, epsilon=1.0, bounds=(-1, 1), algorithm="dplloyd-impr",
                     n_records=2000, random_state=0).fit(X)
    assert model.cluster_centers_.shape == (2000, 2)
    draws = [e for e in model.ledger_.entries if e.epsilon > 0]
    assert len(draws) == 3 * 2000 * model.n_iter_
    assert model.ledger_.total().epsilon == pytest.approx(1.0)


def test_benchmark_runs_at_tiny_sizes():
    """benchmarks/large_k.py's cases run in this interpreter (no timing asserted)."""
    from benchmarks import large_k

    assert large_k.run_case("ledger", {"k": 20})["ledger_entries"] == 20
    assert large_k.run_case("packing", {"k": 10, "d": 2})["seconds"] >= 0
    fit = large_k.run_case("fit", {"algorithm": "dplloyd", "k": 5, "n": 50, "d": 2})
    assert fit["n_iter"] == 5 and fit["epsilon_spent"] == pytest.approx(1.0)
    row = {"name": "x", "after": fit, "before": {"timed_out": True, "timeout_s": 9.0}}
    assert "timed out" in large_k.table([row])
