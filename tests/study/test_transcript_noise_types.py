"""The transcript statistic asks the configuration's noise type for its likelihood and its
whitening (book chapter 6, "Auditing an algorithm"; docs/design.md, "How to add a mechanism")."""

from __future__ import annotations

import numpy as np
import pytest

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.privacy.loss import gaussian_privacy_loss, laplace_privacy_loss
from dpkmeans.privacy.noise_types import noise_type_of
from dpkmeans.study.transcript import exact_statistics, transcript_log_ratios

BOX = (np.array([0.0, -1.0]), np.array([4.0, 1.0]))  # half-widths 2 and 1


@pytest.mark.parametrize("noise, delta", [("laplace", 0.0), ("gaussian", 1e-5),
                                          ("colored", 1e-5)])
def test_transcript_scores_with_the_noise_types_likelihood(noise, delta):
    rng = np.random.default_rng(0)
    X0 = np.column_stack([rng.uniform(0, 4, 60), rng.uniform(-1, 1, 60)])
    X1 = np.vstack([X0, [[4.0, 1.0]]])  # one record more, at a corner
    config = DPLloydConfig(2, BOX, [0.5, 0.5], noise=noise, delta=delta)
    result = run(X0, config, 3, replicas=2, record_history=True)
    got = transcript_log_ratios(result, X0, X1)
    # by hand: whiten colored noise by 1 / sqrt(r) (r = 2, 1, and 1 for the count)
    white = 1.0 / np.sqrt([2.0, 1.0, 1.0]) if noise == "colored" else np.ones(3)
    np.testing.assert_array_equal(noise_type_of(config).whitening(config.bounds), white)
    loss = laplace_privacy_loss if noise == "laplace" else gaussian_privacy_loss
    for t, (noisy, scale) in enumerate(result.release_history):
        entering = result.initial_centroids if t == 0 else result.history[t - 1]
        mu0, mu1 = (exact_statistics(X, config, entering) * white for X in (X0, X1))
        y = noisy * white
        s = float(np.broadcast_to(scale, noisy.shape).flat[0])
        want = [sum(float(loss(y[r, j], mu0[r, j], mu1[r, j], s)) for j in range(2))
                for r in range(2)]
        np.testing.assert_allclose(got[:, t], want, rtol=1e-9, atol=1e-12)
