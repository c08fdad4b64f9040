"""Shared pytest fixtures, and the sweeps' environment for every test."""

from __future__ import annotations

# Before numpy loads OpenBLAS: the tests run with the environment the committed results were
# computed in (one BLAS thread, OpenBLAS's AVX2 kernels on x86-64; docs/design.md, "A pinned
# environment for the sweeps"), so that a rebuilt row (tests/study/test_results_sample.py) gives
# the committed bits on an AVX-512 machine too. A variable the user set is kept.
from dpkmeans.study.environment import pin_cell_environment

pin_cell_environment()

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator: every test draw is reproducible."""
    return np.random.default_rng(20261122)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the network: downloads only where a test enables them explicitly
    (against its own server on 127.0.0.1)."""
    monkeypatch.setenv("DPKMEANS_OFFLINE", "1")


@pytest.fixture(scope="session")
def data_available() -> None:
    """Skip unless the UCI files the assignment tests read (blood, heart) are here."""
    from dpkmeans.data import DataFileMissingError, load

    try:
        for name in ("blood", "heart"):
            load(name, download=False)
    except DataFileMissingError:
        pytest.skip("the blood and heart files are not available (set DPKMEANS_DATA)")
