"""Hooks of the DP-Lloyd engine for what one fixed loop cannot express.

A paper that needs more than a schedule, an initializer and a release plugs one of these into
its :class:`~dpkmeans.engine.DPLloydConfig`; the engine calls it at a fixed point of the loop,
and the hook records whatever it releases in the run's ledger before drawing its noise:

* an :class:`InitialRelease` computes the initial centroids *from the data* (with a budget:
  e.g. the silhouette paper's noisy means of equal splits), before the first iteration;
* an :class:`OutputRelease` turns the loop's final centroids into the published ones with its
  own noise (the one-shot colored noise of Ravi, Scaglione and Peisert 2021), after the
  loop and any final release;
* an :class:`AllocationRule` gives each cluster a weight w_j > 0 in every iteration, computed
  from released quantities (its own noisy statistics, or, in an as-published variant, exact
  ones recorded as a leak); cluster j's release then gets the budget epsilon_t w_j. Under
  parallel composition the iteration costs epsilon_t max_j w_j: at most epsilon_t exactly when
  the weights are normalised by their maximum.

Weights may differ between replicas (they follow each replica's own releases); the engine then
draws each replica's noise with that replica's scales and keeps each replica's spend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .accounting import PrivacyLedger

__all__ = ["HookContext", "InitialRelease", "AllocationRule", "OutputRelease"]


@dataclass(frozen=True)
class HookContext:
    """What a hook sees: the backend and its data, the public configuration, the current
    (already released or public) centroids of the active replicas, their generators, the
    ledger, and the iteration (1-based; 0 for the initial release) with its schedule budget."""

    backend: Any
    data: Any
    n_rows: int
    config: Any
    centroids: np.ndarray | None
    rngs: list[np.random.Generator]
    ledger: PrivacyLedger
    iteration: int = 0
    epsilon: float = 0.0


class InitialRelease(Protocol):
    """Initial centroids (R, k, d) computed from the data; records its own releases."""

    name: str

    def __call__(self, ctx: HookContext) -> np.ndarray: ...


class AllocationRule(Protocol):
    """Per-cluster weights (R, k) of an iteration, all > 0; records its own releases (and, in
    an as-published variant, its leaks) in ``ctx.ledger`` before drawing any noise."""

    name: str

    def weights(self, ctx: HookContext) -> np.ndarray: ...


class OutputRelease(Protocol):
    """The published centroids (R, k', d) from the loop's final ones (``ctx.centroids``), with
    noise drawn from ``ctx.rngs``; records its releases (and leaks) in ``ctx.ledger`` first."""

    name: str

    def __call__(self, ctx: HookContext) -> np.ndarray: ...
