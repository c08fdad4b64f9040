"""Hooks of the DP-Lloyd engine for what one fixed loop cannot express.

A paper that needs more than a schedule, an initializer and a release plugs one of these into
its :class:`~dpkmeans.engine.loop.DPLloydConfig`; the engine calls it at a fixed point of the loop,
and the hook releases whatever it publishes through :meth:`HookContext.release`, which charges
the run's ledger and draws the noise in one call (ledger first):

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

A hook never draws privacy noise from a generator itself (``tests/test_privacy_boundary.py``
checks it). Randomness that is not privacy noise -- a data-independent choice, or an
as-published variant's data-dependent choice that its ledger records as a leak -- comes from
:attr:`HookContext.public_rngs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.noise import CovarianceNoise, NoiseCalibration

__all__ = ["HookContext", "InitialRelease", "AllocationRule", "OutputRelease"]


@dataclass(frozen=True)
class HookContext:
    """What a hook sees: the backend and its data, the public configuration, the current
    (already released or public) centroids of the active replicas, the ledger, and the
    iteration (1-based; 0 for the initial release) with its schedule budget.

    The active replicas' generators are held, not handed out: :meth:`release` charges the
    ledger and draws a release's noise from them (replica r's from its own generator), and
    :attr:`public_rngs` names them for randomness that is not privacy noise."""

    backend: Any
    data: Any
    n_rows: int
    config: Any
    centroids: np.ndarray | None
    _rngs: list[np.random.Generator] = field(repr=False)
    ledger: PrivacyLedger
    iteration: int = 0
    epsilon: float = 0.0

    @property
    def replicas(self) -> int:
        """The number of active replicas (the leading axis of every release)."""
        return len(self._rngs)

    def release(self, calibration: NoiseCalibration | CovarianceNoise, values: ArrayLike, *,
                label: str, details: Mapping[str, Any] | None = None, shared: bool = False,
                integer_valued: bool = False) -> np.ndarray:
        """Release ``values`` (one row per active replica) with the noise of ``calibration``:
        charged to the run's ledger, then drawn, replica r's from its own generator
        (:func:`dpkmeans.privacy.mechanisms.release`; a refused release draws nothing)."""
        return mechanisms.release(self.ledger, calibration, values, self._rngs, label=label,
                                  details=details, shared=shared, integer_valued=integer_valued)

    @property
    def public_rngs(self) -> list[np.random.Generator]:
        """The active replicas' generators, for draws that are not privacy noise: a choice
        that depends on no data, or, in an as-published variant, a data-dependent choice whose
        leak the ledger records. Each use is listed, with its reason, in
        ``tests/test_privacy_boundary.py``; privacy noise goes through :meth:`release`."""
        return self._rngs


class InitialRelease(Protocol):
    """Initial centroids (R, k, d) computed from the data; releases through ``ctx.release``."""

    name: str

    def __call__(self, ctx: HookContext) -> np.ndarray: ...


class AllocationRule(Protocol):
    """Per-cluster weights (R, k) of an iteration, all > 0; releases through ``ctx.release``
    (charged before any noise is drawn) and, in an as-published variant, records its leaks in
    ``ctx.ledger``."""

    name: str

    def weights(self, ctx: HookContext) -> np.ndarray: ...


class OutputRelease(Protocol):
    """The published centroids (R, k', d) from the loop's final ones (``ctx.centroids``), with
    noise released through ``ctx.release`` (charged first; leaks recorded in ``ctx.ledger``)."""

    name: str

    def __call__(self, ctx: HookContext) -> np.ndarray: ...
