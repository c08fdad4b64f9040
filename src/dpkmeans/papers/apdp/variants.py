"""APDPk-means (known through study notes in Chinese; the original paper could not be
found), as published and corrected, and the note's base DPk-means with its three comparison
schedules.

Every configuration runs the one engine (:mod:`dpkmeans.engine.loop`); the budget schedule comes from
:func:`dpkmeans.engine.schedules.apdp_plan` (the reversed arithmetic progression and its branches).

=====================  ======================================  =====================================
                       as published (the note's steps)         corrected (this book)
=====================  ======================================  =====================================
scaling                min-max on the data to [0, 1]^d (the    public bounds to [0, 1]^d
                       study's "paper" data; a recorded leak)
epsilon_m (eq. 4)      from the exact record count (a leak)    from a public record count
initial centres        one random record from each of k equal  sphere packing (public, free)
                       splits in file order, plus Laplace
                       noise of undefined budget: read here as
                       Lap(d / eps_0), eps_0 = eps / t_m,
                       charged on top of eps (an overspend)
schedule               AP over t_m if eps / eps_m > t_m, else  AP over t_m if eps / eps_m > t_m,
                       eps / t_m for every iteration (below    else Su's T = clip(floor(eps / eps_m),
                       the minimum: the "fallback" branch)     2, 7): AP if T >= 3, equal if T = 2
noise                  Lap((d + 1) / eps_t) on every sum and   the same joint release, centred on the
                       count coordinate (Delta = d + 1)        box (Delta = d / 2 + 1 on [0, 1]^d)
stop                   when the partition no longer changes    after the schedule's last iteration
                       (read from the private data: a leak)    (all of the budget is spent)
=====================  ======================================  =====================================

The note's comparison schedules (uniform eps / N, dichotomy eps / 2^i, series-sum
eps / (i (i + 1))) run inside the same base algorithm: as published they are open-ended over
t_m iterations (dichotomy and series-sum leave part of eps unspent, as written); corrected they
are normalised to spend eps exactly over the corrected APDP's T, so that only the shape differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS, Flaw
from dpkmeans.engine.hooks import HookContext
from dpkmeans.engine.init import sphere_packing
from dpkmeans.engine.schedules import SU_RHO, ApdpPlan, apdp_plan, su_epsilon_m
from dpkmeans.engine.strategies import InitialRelease, PublicStart
from dpkmeans.papers.apdp.flaws import (
    PARTITION_STOP,
    PRIVATE_EPSILON_M,
    RECORD_INITIALISATION,
    RECORD_ORDER_SPLIT,
    PartitionRepeats,
)
from dpkmeans.papers.registry import FitInputs
from dpkmeans.privacy.noise import calibrate
from dpkmeans.validation import check_epsilon, check_positive_int

__all__ = [
    "MAX_ITERATIONS",
    "RHO",
    "SCHEDULE_NAMES",
    "RecordInitialRelease",
    "plan",
    "as_published",
    "corrected",
    "VARIANTS",
]

#: t_m, the note's iteration cap (its value is not given; the silhouette paper's 10).
MAX_ITERATIONS = 10
#: Su's rho for [0, 1]^d data (the note: "optimised to 0.45").
RHO = SU_RHO["[0,1]"]
#: The note's four schedules inside its base DPk-means.
SCHEDULE_NAMES = ("ap", "uniform", "dichotomy", "series-sum")


def plan(epsilon: float, n_records: int, n_clusters: int, d: int, *, corrected: bool,
         max_iterations: int = MAX_ITERATIONS, rho: float = RHO) -> ApdpPlan:
    """APDP's schedule and branch for a dataset of ``n_records`` rows in d dimensions."""
    floor = su_epsilon_m(n_records, n_clusters, d, rho)
    return apdp_plan(epsilon, max_iterations, floor, corrected=corrected)


def _schedule(name: str, epsilon: float, apdp: ApdpPlan, corrected: bool) -> np.ndarray:
    """The budgets of one of SCHEDULE_NAMES, over APDP's T (corrected: the same T as the
    corrected APDP, normalised; as published: t_m open-ended terms)."""
    if name not in SCHEDULE_NAMES:
        raise ValueError(f"schedule must be one of {SCHEDULE_NAMES}, got {name!r}")
    T = apdp.iterations
    if name == "ap":
        return apdp.schedule
    if name == "uniform":
        return schedules.uniform(epsilon, T)
    shape = schedules.halving if name == "dichotomy" else schedules.series_sum
    return shape(epsilon, T, normalise=corrected)


@dataclass(frozen=True)
class RecordInitialRelease(InitialRelease):
    """As published: split the N records in file order into k equal parts (row i in part
    floor(i k / N)), draw one record uniformly from each part, and add Laplace noise of scale
    b = d / eps_0 to each coordinate; the noisy records, clipped to the box, start the run.

    The note gives no budget. The ledger charges the most favourable reading: the parts fixed,
    a record in [0, 1]^d moves by at most d in L1 (replace one record), so each part costs
    eps_0 = d / b, in parallel over the k parts, outside the declared total (flaw
    ``record-initialisation``). Adding a record moves the parts' borders (``record-order-split``),
    so even that reading does not hold under add/remove.
    """

    epsilon: float
    name: str = "noisy random records of k equal splits in file order (as published)"

    def __call__(self, ctx: HookContext) -> np.ndarray:
        cfg = ctx.config
        k, (lower, upper) = cfg.n_clusters, cfg.bounds
        d = lower.size
        if ctx.n_rows < k:
            raise ValueError(f"need at least k = {k} records to pick one from each split, "
                             f"got {ctx.n_rows}")
        edges = np.arange(k + 1) * ctx.n_rows // k
        # which record of each split: the flaws "record-order-split" and "record-initialisation"
        rows = np.stack([g.integers(edges[:-1], edges[1:]) for g in ctx.public_rngs])  # (R, k)
        records = ctx.backend.records(ctx.data, rows)
        l1 = float(np.sum(upper - lower))  # a record's largest move, replace one (d on [0, 1]^d)
        cal = calibrate("laplace", l1, self.epsilon, sampler=cfg.sampler, coordinates=d)
        noisy = ctx.release(cal, records,
                            label="initial centres: one noisy record per split, in parallel",
                            details={"replicas": ctx.replicas})
        ctx.ledger.post_process("initial centres: the noisy records clipped to the box")
        return np.clip(noisy, lower, upper)


def as_published(n_clusters: int, epsilon: float, bounds: tuple[ArrayLike, ArrayLike], *,
                 n_records: int, schedule: str = "ap", max_iterations: int = MAX_ITERATIONS,
                 data_derived_bounds: bool = True) -> DPLloydConfig:
    """The note's algorithm as published (module docstring), with ``schedule`` one of
    SCHEDULE_NAMES ("ap" is APDPk-means; the others are its base DPk-means).

    ``n_records`` is the exact record count that eq. 4 reads (a leak, flaw
    ``private-epsilon-m``, for the AP schedule); ``data_derived_bounds`` records the note's
    min-max scaling as a flaw (pass False only for bounds that really are public).
    """
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    t_max = check_positive_int(max_iterations, "max_iterations")
    d = np.atleast_1d(np.asarray(bounds[0], dtype=float)).size
    apdp = plan(eps, n_records, k, d, corrected=False, max_iterations=t_max)
    flaws: tuple[Flaw, ...] = (PARTITION_STOP, RECORD_INITIALISATION, RECORD_ORDER_SPLIT)
    if schedule == "ap":
        flaws += (PRIVATE_EPSILON_M,)
    if data_derived_bounds:
        flaws += (DATA_DERIVED_BOUNDS,)
    return DPLloydConfig(
        n_clusters=k, bounds=bounds, schedule=_schedule(schedule, eps, apdp, False), budget=eps,
        start=RecordInitialRelease(eps / t_max), stop=PartitionRepeats(), centred=False,
        flaws=flaws, name=f"{schedule} (as published)")


def corrected(n_clusters: int, epsilon: float, bounds: tuple[ArrayLike, ArrayLike], *,
              n_records: int, schedule: str = "ap",
              max_iterations: int = MAX_ITERATIONS) -> DPLloydConfig:
    """The corrected algorithm (module docstring): epsilon-DP on public bounds, given a public
    ``n_records``; ``schedule`` one of SCHEDULE_NAMES, over the corrected APDP's T."""
    k = check_positive_int(n_clusters, "n_clusters")
    eps = check_epsilon(epsilon)
    d = np.atleast_1d(np.asarray(bounds[0], dtype=float)).size
    apdp = plan(eps, n_records, k, d, corrected=True,
                max_iterations=check_positive_int(max_iterations, "max_iterations"))
    return DPLloydConfig(
        n_clusters=k, bounds=bounds, schedule=_schedule(schedule, eps, apdp, True),
        start=PublicStart(sphere_packing), name=f"{schedule} (corrected)")


#: The configurations by name.
VARIANTS = {"as_published": as_published, "corrected": corrected}


# -- the functions the paper's record names (its __init__.py) ------------------------------

def catalogue_config(f: FitInputs) -> DPLloydConfig:
    """``DPKMeans(algorithm="apdp")``: the corrected arithmetic-progression schedule."""
    return corrected(f.n_clusters, f.epsilon, f.bounds, n_records=f.n_records)


def published_example() -> DPLloydConfig:
    """APDPk-means as the notes describe it, k = 3 on the unit square, N = 1000."""
    return as_published(3, 1.0, (np.zeros(2), np.ones(2)), n_records=1000)
