"""Shared pytest fixtures."""

from __future__ import annotations

import numpy as np
import pytest


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
