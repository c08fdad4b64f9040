"""The missing-numba notice points at the user's line that called the library, not into it."""

from __future__ import annotations

import warnings

import numpy as np

from dpkmeans import DPKMeans
from dpkmeans.compute import fastpath
from dpkmeans.errors import NumbaMissingNotice


def test_the_notice_points_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(fastpath, "_DECIDED", True)  # as if numba had not been found
    monkeypatch.setattr(fastpath, "_KERNELS", None)
    monkeypatch.setattr(fastpath, "_WHY", "numba is not installed (simulated)")
    monkeypatch.setattr(fastpath, "_NOTICE_SHOWN", False)
    X = np.random.default_rng(0).uniform(0.0, 1.0, (50, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPKMeans(2, bounds=(0.0, 1.0), random_state=0).fit(X)
    notices = [w for w in caught if issubclass(w.category, NumbaMissingNotice)]
    assert len(notices) == 1
    assert notices[0].filename == __file__
