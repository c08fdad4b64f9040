"""Every DP-Lloyd configuration at a target (epsilon, delta), under tight composition (book
chapter 3, "Tight composition", and chapter 12, "Equal privacy").

A configuration built for pure epsilon-DP spends its schedule by basic composition. At a
target (epsilon, delta) with delta > 0 two forms meet the same guarantee with less noise:

* :func:`laplace_at`: the same algorithm, its schedule scaled up until the privacy-loss
  distribution of its releases reaches the target (PLD composition of Laplace noise);
* :func:`gaussian_twin`: the same algorithm with Gaussian noise on each cluster's joint
  (S_j, n_j), drawn with the box optimum's covariance (the count/sum split of Ravi,
  Scaglione and Peisert 2021, book chapter 9), its schedule scaled until the releases'
  tight composition (Gaussian DP, or PLD when a Laplace release remains) reaches the target.

Both keep everything the algorithm decides from its public inputs (T, the shape of the
schedule, the allocation over clusters, the start, the stopping rule); only the noise scales
change. The configuration records its target (``DPLloydConfig.target``), so a run opens a
ledger that checks every draw against the tight composition, before drawing.

The scale factor is found by bisection on the tight epsilon of the planned releases
(:func:`~dpkmeans.engine.planning.plan_releases`): public, computed from the configuration
alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import plan_releases
from dpkmeans.engine.strategies import JointRelease
from dpkmeans.privacy.accounting import PrivacyCost
from dpkmeans.privacy.noise_types import noise_type
from dpkmeans.privacy.tight import Release, epsilon_at
from dpkmeans.validation import check_delta, check_epsilon

__all__ = [
    "CALIBRATION_RTOL",
    "MODEL_MARGIN",
    "gaussian_twin",
    "laplace_at",
    "scale_to",
    "tight_epsilon",
]

#: The relative precision of the calibrated epsilon (below the target, never above).
CALIBRATION_RTOL = 1e-4

#: The calibration aims this far (relative) below the target. The ledger accounts an exact
#: (discrete) sampler as the continuous mechanism of the same scale; book chapter 3 measures
#: the discrete Laplace curve above the continuous one by 1.1e-9 (relative) at 2^12 grid steps
#: of sensitivity, shrinking like 1/steps; the library's grids have 2^20 to 2^30 steps.
MODEL_MARGIN = 1e-6


def tight_epsilon(config: DPLloydConfig, delta: float,
                  prefix: Sequence[Release] = ()) -> float:
    """The epsilon at ``delta`` of a run of ``config``, by the tightest accounting that
    applies (:func:`dpkmeans.privacy.tight.epsilon_at` of
    :func:`~dpkmeans.engine.planning.plan_releases`).

    Parameters
    ----------
    config : DPLloydConfig
    delta : float
        In [0, 1).
    prefix : sequence of Release, default ()
        Releases recorded before the run (e.g. a noisy record count), composed with it.

    Returns
    -------
    float

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.equal_privacy import tight_epsilon
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5])
    >>> tight_epsilon(config, 0.0), round(tight_epsilon(config, 1e-6), 4)
    (1.0, 0.9999)
    """
    return epsilon_at([*prefix, *plan_releases(config)], delta)[0]


def _scaled(config: DPLloydConfig, factor: float) -> DPLloydConfig:
    budget = None if config.budget is None else config.budget * factor
    modes = None if config.modes is None else replace(
        config.modes, schedule=config.modes.schedule * factor)
    return replace(config, schedule=config.schedule * factor, budget=budget, modes=modes,
                   target=None)


def scale_to(config: DPLloydConfig, epsilon: float, delta: float,
             prefix: Sequence[Release] = ()) -> DPLloydConfig:
    """``config`` with its schedule scaled by the largest factor whose tight epsilon at
    ``delta`` is at most ``epsilon`` less :data:`MODEL_MARGIN` (to :data:`CALIBRATION_RTOL`),
    recording the target.

    Parameters
    ----------
    config : DPLloydConfig
    epsilon : float
        The target epsilon (> 0).
    delta : float
        The target delta, in (0, 1).
    prefix : sequence of Release, default ()
        Releases recorded before the run, which the target covers too.

    Returns
    -------
    DPLloydConfig
        With ``target = PrivacyCost(epsilon, delta)``.

    Raises
    ------
    ValueError
        If the target is out of range or the configuration cannot be planned.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.equal_privacy import scale_to
    >>> config = DPLloydConfig(3, ([0.0, 0.0], [1.0, 1.0]), [0.5, 0.5], noise="gaussian",
    ...                        delta=5e-7, sampler="discrete")
    >>> scaled = scale_to(config, 1.0, 1e-6)  # Gaussian DP instead of adding (0.5, 5e-7) twice
    >>> round(scaled.epsilon / config.epsilon, 3), scaled.target
    (1.538, PrivacyCost(epsilon=1.0, delta=1e-06))
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    base = _scaled(config, 1.0)

    spent: dict[float, float] = {}

    def spend(log_factor: float) -> float:
        if log_factor not in spent:
            spent[log_factor] = tight_epsilon(_scaled(base, math.exp(log_factor)), dlt, prefix)
        return spent[log_factor]

    aim = eps * (1.0 - MODEL_MARGIN)
    floor = aim * (1.0 - CALIBRATION_RTOL)
    # false position (Illinois) on log(spend) against the log of the factor, nearly a line
    # of slope 1; lo is always within the aim (a valid calibration), hi past it
    lo = math.log(eps / base.epsilon)  # basic composition spends eps: tight spends at most
    while spend(lo) > aim:
        lo -= 1.0
    while spend(lo) <= 0.0:  # so much noise that delta covers epsilon = 0: less noise
        lo += 1.0
        if lo > 200.0:  # pragma: no cover - no factor spends anything measurable
            raise ValueError("no scale of the schedule spends a measurable epsilon at delta")
    if spend(lo) > aim:  # past the aim in one step: the last point spent nothing
        lo -= 1.0
    hi: float | None = None
    g_lo, g_hi = math.log(max(spend(lo), 1e-300) / aim), 0.0  # log(spend / aim)
    side = 0
    for _ in range(60):
        if spend(lo) >= floor:
            break
        if hi is None:
            guess = lo + max(math.log(aim / spend(lo)), CALIBRATION_RTOL) if spend(lo) > 0 \
                else lo + 1.0
        else:
            guess = lo - g_lo * (hi - lo) / (g_hi - g_lo)
            if not lo + 1e-3 * (hi - lo) < guess < hi - 1e-3 * (hi - lo):
                guess = 0.5 * (lo + hi)
        value = spend(guess)
        if value <= aim:
            lo, g_lo = guess, math.log(max(value, 1e-300) / aim)
            if side == -1:
                g_hi /= 2.0
            side = -1
        else:
            hi, g_hi = guess, math.log(value / aim)
            if side == 1:
                g_lo /= 2.0
            side = 1
    return replace(_scaled(base, math.exp(lo)), target=PrivacyCost(eps, dlt))


def laplace_at(config: DPLloydConfig, epsilon: float, delta: float,
               prefix: Sequence[Release] = ()) -> DPLloydConfig:
    """The Laplace form of ``config`` at (``epsilon``, ``delta``): its schedule scaled until the
    PLD composition of its releases reaches the target (book chapter 12, "Equal privacy").

    Parameters
    ----------
    config : DPLloydConfig
        A pure epsilon-DP configuration (Laplace noise).
    epsilon : float
        The target epsilon.
    delta : float
        The target delta (> 0).
    prefix : sequence of Release, default ()
        Releases recorded before the run, which the target covers too.

    Returns
    -------
    DPLloydConfig

    Raises
    ------
    ValueError
        If ``config`` is not pure or cannot be planned.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.equal_privacy import laplace_at, tight_epsilon
    >>> from dpkmeans.engine.strategies import SuSplit
    >>> config = DPLloydConfig(3, ([0.0] * 10, [1.0] * 10), [0.1] * 10, step=SuSplit())
    >>> at = laplace_at(config, 1.0, 1e-6)  # 110 Laplace releases: PLD beats adding them
    >>> round(at.epsilon, 2), round(tight_epsilon(at, 1e-6), 3), at.target
    (2.52, 1.0, PrivacyCost(epsilon=1.0, delta=1e-06))
    """
    if config.noise.needs_delta:
        raise ValueError("laplace_at needs a pure epsilon-DP configuration (Laplace noise)")
    return scale_to(config, epsilon, delta, prefix)


def gaussian_twin(config: DPLloydConfig, epsilon: float, delta: float,
                  prefix: Sequence[Release] = ()) -> DPLloydConfig:
    """The (epsilon, delta) twin of ``config``: Gaussian noise with the box optimum's
    covariance on each cluster's joint (S_j, n_j) (exact discrete sampler; FastLloyd's
    relative release keeps its own whitened vector, with white Gaussian noise), everything
    else kept, its schedule scaled until the tight composition of its releases reaches the target
    (book chapter 12, "Equal privacy").

    Parameters
    ----------
    config : DPLloydConfig
        A configuration under add/remove adjacency, centred (pure or already Gaussian).
    epsilon : float
        The target epsilon.
    delta : float
        The target delta (> 0).
    prefix : sequence of Release, default ()
        Releases recorded before the run, which the target covers too.

    Returns
    -------
    DPLloydConfig

    Raises
    ------
    ValueError
        If ``config`` is under replace adjacency, not centred, or cannot be planned.

    Examples
    --------
    >>> from dpkmeans.engine.config import DPLloydConfig
    >>> from dpkmeans.engine.equal_privacy import gaussian_twin, tight_epsilon
    >>> config = DPLloydConfig(3, ([0.0] * 10, [1.0] * 10), [0.1] * 10)
    >>> twin = gaussian_twin(config, 1.0, 1e-6)
    >>> twin.noise, twin.step.name, round(tight_epsilon(twin, 1e-6), 3)
    (noise_type('colored', sampler='discrete'), 'joint', 1.0)
    """
    if config.neighbour != "add/remove" or not config.centred:
        raise ValueError("the Gaussian twin needs add/remove adjacency and a centred release "
                         "(the box optimum's covariance, book chapter 9)")
    dlt = check_delta(delta)
    if config.assign.relative:  # FastLloyd's whitened offsets: white Gaussian noise on them
        noise = config.noise if config.noise.needs_delta else noise_type("gaussian",
                                                                         config.sampler)
        step = config.step
    else:
        noise = config.noise if config.noise.whitened else noise_type("colored",
                                                                      config.sampler)
        step = config.step if isinstance(config.step, JointRelease) else JointRelease()
    per_iteration = dlt / config.iterations  # the nominal delta each release is calibrated at
    twin = replace(config, noise=noise, delta=per_iteration, step=step, sampler=None,
                   target=None)
    return scale_to(twin, epsilon, dlt, prefix)
