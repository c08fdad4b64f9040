"""``replica_generators`` gives, word for word, the generators numpy's own spawning gives."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpkmeans.privacy.seeding import replica_generators

ENTROPY = 0x8F2A6C1D_55E0_4B7A_9C3E_21D4F0A1B2C3  # a 128-bit entropy, as SeedSequence() draws


def _numpy(seq: np.random.SeedSequence, replicas: int) -> list[np.random.Generator]:
    return [np.random.default_rng(child) for child in seq.spawn(replicas)]


SEEDS = {
    "small int": lambda: np.random.SeedSequence(0),
    "128-bit entropy": lambda: np.random.SeedSequence(ENTROPY),
    "numpy integer": lambda: np.random.SeedSequence(np.uint64(2**63 + 5)),
    "entropy list": lambda: np.random.SeedSequence([1, 2, 3, 4, 5, 6]),
    "a child": lambda: np.random.SeedSequence(7).spawn(3)[2],
    "a grandchild": lambda: np.random.SeedSequence(7).spawn(2)[1].spawn(4)[3],
    "wide spawn key": lambda: np.random.SeedSequence(5, spawn_key=(2**40, 0, 3)),
    "pool of 8 (numpy's path)": lambda: np.random.SeedSequence(123, pool_size=8),
}


@pytest.mark.parametrize("make", SEEDS.values(), ids=SEEDS.keys())
@pytest.mark.parametrize("replicas", [1, 3, 257])
def test_same_states_as_numpy(make, replicas):
    fast_seq, slow_seq = make(), make()
    fast, slow = replica_generators(fast_seq, replicas), _numpy(slow_seq, replicas)
    assert [g.bit_generator.state for g in fast] == [g.bit_generator.state for g in slow]
    assert [g.random() for g in fast] == [g.random() for g in slow]
    # the parent is left as spawn leaves it: its next children are new ones
    assert fast_seq.n_children_spawned == slow_seq.n_children_spawned
    assert ([c.spawn_key for c in fast_seq.spawn(2)]
            == [c.spawn_key for c in slow_seq.spawn(2)])


def test_the_fast_path_is_taken():
    """numpy's own path (the fallback) would pass the tests above too: the generators of a
    plain sequence must come from the bulk computation."""
    seq = np.random.SeedSequence(ENTROPY).spawn(2)[1]
    fast = replica_generators(seq, 5)
    assert not any(isinstance(g.bit_generator.seed_seq, np.random.SeedSequence) for g in fast)
    assert seq.n_children_spawned == 5
    eight = replica_generators(np.random.SeedSequence(1, pool_size=8), 2)  # numpy's path
    assert all(isinstance(g.bit_generator.seed_seq, np.random.SeedSequence) for g in eight)


def test_a_used_parent_continues_where_it_was():
    fast_seq, slow_seq = np.random.SeedSequence(3), np.random.SeedSequence(3)
    fast_seq.spawn(5), slow_seq.spawn(5)
    first = replica_generators(fast_seq, 4)
    second = replica_generators(fast_seq, 4)  # new material, not the first run's again
    slow = _numpy(slow_seq, 8)
    assert ([g.bit_generator.state for g in first + second]
            == [g.bit_generator.state for g in slow])


def test_generators_spawn_and_pickle_like_numpy():
    fast = replica_generators(np.random.SeedSequence(11), 3)
    slow = _numpy(np.random.SeedSequence(11), 3)
    assert fast[2].spawn(2)[1].integers(10**9) == slow[2].spawn(2)[1].integers(10**9)
    assert fast[1].bit_generator.seed_seq.generate_state(3).tolist() == \
        slow[1].bit_generator.seed_seq.generate_state(3).tolist()
    copy = pickle.loads(pickle.dumps(fast[0]))
    assert copy.integers(10**9) == slow[0].integers(10**9)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_the_engine_draws_the_same_noise_as_with_numpys_spawning(monkeypatch, noise):
    """Batched fits give the same bits with numpy's
    own spawning in place of :func:`replica_generators`."""
    from dpkmeans.engine import loop
    from dpkmeans.engine.config import DPLloydConfig

    X = np.random.default_rng(0).uniform(0, 1, size=(300, 2))
    kwargs = {} if noise == "laplace" else {"noise": "gaussian", "delta": 1e-6}
    config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5], **kwargs)
    fast = loop.run(X, config, np.random.SeedSequence(42), replicas=64, record_history=True)
    monkeypatch.setattr(loop, "replica_generators", _numpy)
    slow = loop.run(X, config, np.random.SeedSequence(42), replicas=64, record_history=True)
    assert np.array_equal(fast.centroids, slow.centroids)


def test_statistics_of_repeated_and_distinct_replicas_are_the_same_bits():
    """The statistics skip the search for repeated replicas when a hash shows none: the same
    bits as computing every replica on its own, with repeats, -0.0 beside 0.0, and NaN."""
    from dpkmeans.compute.lloyd import _may_repeat, batched_stats

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(500, 3))
    C = rng.uniform(-1, 1, size=(40, 4, 3))
    C[7], C[30] = C[3], C[3]
    C[11, 0, 0], C[12], C[12, 0, 0] = 0.0, C[11], -0.0
    assert _may_repeat(C) and not _may_repeat(C[:3])
    sums, counts = batched_stats(X, C)
    for r in range(C.shape[0]):
        s1, c1 = batched_stats(X, C[r])
        assert np.array_equal(sums[r], s1) and np.array_equal(counts[r], c1)
    nan = C.copy()
    nan[0, 0, 0] = np.nan
    assert _may_repeat(nan)  # a NaN: the full comparison decides
