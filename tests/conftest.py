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
