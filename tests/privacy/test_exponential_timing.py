"""The exact exponential mechanism's work depends on the scores, within the documented bound
(:func:`dpkmeans.privacy.discrete.exponential_choice`, "Time and random-number use").

A round draws its proposals with one ``Generator.integers`` call, so a generator that counts
those calls counts the rounds."""

from __future__ import annotations

import math

import numpy as np

from dpkmeans.privacy.discrete import exponential_choice

WIDTH = 64


class _Counting(np.random.Generator):
    """A generator that counts its ``integers`` calls (the sampler's rounds)."""

    calls = 0

    def integers(self, *args, **kwargs):
        self.calls += 1
        return super().integers(*args, **kwargs)


def _rounds(gaps: list[int], seed: int) -> int:
    gen = _Counting(np.random.PCG64(seed))
    exponential_choice(gaps, 1.0, [len(gaps)], gen)
    return gen.calls


def test_the_work_depends_on_the_scores():
    flat = [_rounds([0] * WIDTH, seed) for seed in range(50)]
    peaked = [_rounds([0] + [10**6] * (WIDTH - 1), seed) for seed in range(50)]
    assert max(flat) == 1  # every proposal accepted: one round
    assert np.mean(peaked) > 4  # one candidate in 64 acceptable: about log2(64) rounds


def test_the_rounds_beyond_log2_width_have_a_geometric_tail():
    """The worst case (one candidate with gap 0, the others never accepted): more than
    ceil(log2 w) + j rounds with probability at most e^-j."""
    rounds = np.array([_rounds([0] + [10**6] * (WIDTH - 1), seed) for seed in range(300)])
    start = math.ceil(math.log2(WIDTH))
    for j in (1, 2, 3):
        # the bound plus four binomial standard errors of 300 draws at the bound
        bound = math.exp(-j)
        assert (rounds > start + j).mean() <= bound + 4 * math.sqrt(bound / 300)
