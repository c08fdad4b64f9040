"""What a strategy of the DP-Lloyd loop sees when the loop calls it (docs/design.md, "One
loop, many papers").

A strategy that reads the data (:mod:`dpkmeans.engine.strategies`: an initial release, an
allocation rule, an output release) is called at a fixed point of the loop with a
:class:`HookContext`, and releases whatever it publishes through :meth:`HookContext.release`,
which charges the run's ledger and draws the noise in one call (ledger first). Weights of an
allocation rule may differ between replicas (they follow each replica's own releases); the
loop then draws each replica's noise with that replica's scales and keeps each replica's
spend.

A strategy never draws privacy noise from a generator itself (``tests/test_privacy_boundary.py``
checks it). Randomness that is not privacy noise -- a data-independent choice, or an
as-published variant's data-dependent choice that its ledger records as a leak -- comes from
:attr:`HookContext.public_rngs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.privacy import mechanisms
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.noise import CovarianceNoise, NoiseCalibration

__all__ = ["HookContext"]


@dataclass(frozen=True)
class HookContext:
    """What a hook sees: the backend and its data, the public configuration, the current
    (already released or public) centroids of the active replicas, the ledger, and the
    iteration (1-based; 0 for the initial release) with its schedule budget.

    The active replicas' generators are held, not handed out: :meth:`release` charges the
    ledger and draws a release's noise from them (replica r's from its own generator), and
    :attr:`public_rngs` names them for randomness that is not privacy noise.

    Parameters
    ----------
    backend : Any
        The compute backend of the run.
    data : Any
        The backend's (private) data.
    n_rows : int
        The number of records (private).
    config : Any
        The public configuration (a :class:`~dpkmeans.engine.config.DPLloydConfig`).
    centroids : numpy.ndarray or None
        The active replicas' current centroids, (R, k, d), or None before the initial release.
    _rngs : list of numpy.random.Generator
        The active replicas' generators (one each).
    ledger : PrivacyLedger
        The run's ledger.
    iteration : int, default 0
        The iteration (1-based; 0 for the initial release).
    epsilon : float, default 0.0
        The iteration's schedule budget.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.hooks import HookContext
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.privacy.noise import calibrate
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> context = HookContext(None, None, 10, None, None, [np.random.default_rng(0)], ledger)
    >>> context.replicas
    1
    >>> cal = calibrate("laplace", 1.0, 0.5, coordinates=2)
    >>> context.release(cal, [[10.0, 20.0]], label="sums")
    array([[ 8.98027705, 23.4113711 ]])
    >>> len(ledger.entries)
    1
    """

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
                integer_valued: bool = False, parts: tuple[float, ...] = ()) -> np.ndarray:
        """Release ``values`` (one row per active replica) with the noise of ``calibration``:
        charged to the run's ledger, then drawn, replica r's from its own generator
        (:func:`dpkmeans.privacy.mechanisms.release`; a refused release draws nothing).

        Parameters
        ----------
        calibration : NoiseCalibration or CovarianceNoise
            The noise of one release.
        values : array_like
            The exact values, shape (R, *S).
        label : str
            What is released (the ledger entry's label).
        details : mapping or None, default None
            Added to the calibration's details in the entry.
        shared : bool, default False
            One draw per row of the last axis, added to all of its columns (an as-published
            flaw).
        integer_valued : bool, default False
            The values are integers (counts).
        parts : tuple of float, default ()
            The elements' bounds, when they hold together and add up to the calibration's
            sensitivity (:func:`dpkmeans.privacy.mechanisms.entry`).

        Returns
        -------
        numpy.ndarray
            The noisy values, shape (R, *S).
        """
        return mechanisms.release(self.ledger, calibration, values, self._rngs, label=label,
                                  details=details, shared=shared, integer_valued=integer_valued,
                                  parts=parts)

    @property
    def public_rngs(self) -> list[np.random.Generator]:
        """The active replicas' generators, for draws that are not privacy noise: a choice
        that depends on no data, or, in an as-published variant, a data-dependent choice whose
        leak the ledger records. Each use is listed, with its reason, in
        ``tests/test_privacy_boundary.py``; privacy noise goes through :meth:`release`."""
        return self._rngs

