"""A gallery of real privacy bugs that an audit must catch (book chapter 6, "A gallery of real
bugs"): eight deliberately broken variants, each a recorded flaw of published code, each
audited, and for each the smallest audit that catches it and what it costs.

Every case is a :class:`Case`: the flaw's origin, the claim, the neighbouring pair, the
statistic, and a function that returns the statistic's values on D and on D' for the broken
variant or for its corrected counterpart (:class:`Samples`, with the flaws the variant records:
read from its configuration or its ledger, never typed). The bound is the project's sound
split-sample bound (:func:`dpkmeans.study.audit.audit_samples`, exact Clopper-Pearson
intervals, 99% confidence).

The smallest audit is found by a doubling ladder (:func:`ladder`): n = :data:`FIRST_TRIALS`,
2 n, 4 n, ... trials per side, each rung with its own seed derived from the case's name and n
(:func:`rung_seed`), up to :data:`MAX_TRIALS` (or :data:`MAX_SECONDS`); the first rung whose
bound exceeds the claim is the smallest audit that catches the bug. The corrected
counterpart is audited at the same n (its own seed): it must not report a violation (the
false-alarm control). A case not caught within the cap is reported as such, with the trials
reached.

The cases:

(a) one seed for the count and the sum noise of a release (FastLloyd's published code,
    :data:`~dpkmeans.papers.fastlloyd.flaws.SHARED_SEED`; the statistic of
    :mod:`dpkmeans.synthesis.fastlloyd_audit`);
(b) seed 0 in the first iteration of every run (the same code,
    :data:`~dpkmeans.papers.fastlloyd.flaws.SEED_ZERO_FIRST_ITERATION`);
(c) diffprivlib 0.6.6's swapped count/sum split (an overspend;
    :data:`~dpkmeans.papers.su.flaws.SWAPPED_SPLIT`);
(d) diffprivlib 0.6.6's empty clusters, skipped without paying
    (:data:`~dpkmeans.papers.su.flaws.SKIP_EMPTY_CLUSTERS`);
(e) min-max bounds read from the data (:data:`~dpkmeans.engine.flaws.DATA_DERIVED_BOUNDS`);
(f) a noise covariance fitted to the data (Ravi, Scaglione and Peisert 2021's CEDS,
    :data:`~dpkmeans.papers.colored.flaws.LOCAL_SENSITIVITY`);
(g) one fixed ``random_state`` for two fits charged to one accountant (the ledger's
    ``seed_reuse="record"``, whose leak entry is the record);
(h) textbook floating-point Laplace noise (Mironov 2012) against the exact sampler.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.flaws import DATA_DERIVED_BOUNDS
from dpkmeans.engine.loop import DPLloydResult, run
from dpkmeans.engine.schedules import su_split
from dpkmeans.engine.strategies import JointRelease, SuSplit
from dpkmeans.papers.colored.flaws import (
    EXACT_ITERATIONS,
    LOCAL_SENSITIVITY,
    NoiseFreeIterations,
)
from dpkmeans.papers.colored.variants import CEDSOutputRelease, corrected
from dpkmeans.papers.fastlloyd.flaws import first_iteration, iteration_seed
from dpkmeans.papers.su.flaws import (
    SKIP_EMPTY_CLUSTERS,
    SWAPPED_SPLIT,
    SkipEmptyClusters,
    SwappedSplit,
)
from dpkmeans.papers.su.variants import dplloyd
from dpkmeans.privacy import noise
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.floating_point import grid_output_possible, laplace_output_possible
from dpkmeans.privacy.loss import laplace_loss_tails
from dpkmeans.privacy.mechanisms import laplace_mechanism
from dpkmeans.study.audit import (
    AuditReport,
    audit_samples,
    corner_pair,
    empty_cluster_pair,
    trials_to_expose,
)
from dpkmeans.study.shared import stable_seed
from dpkmeans.study.transcript import transcript_log_ratios
from dpkmeans.synthesis import fastlloyd_audit
from dpkmeans.synthesis.outside_audit import pair
from dpkmeans.validation import check_positive_int

__all__ = ["BASE_SEED", "CASES", "CONFIDENCE", "FIRST_TRIALS", "MAX_SECONDS", "MAX_TRIALS",
           "SWAP_D", "SWAP_EPSILON", "TARGET", "Case", "Rung", "Samples", "audit_case", "case",
           "gallery_rows", "ladder", "recorded_flaws", "refit_difference", "rung_seed",
           "seed_reuse_pair", "swap_trials_needed"]

CONFIDENCE = 0.99
BASE_SEED = 20261129
FIRST_TRIALS = 16  # the ladder's first rung (trials per side)
MAX_TRIALS = 2**22  # the ladder's cap (trials per side)
#: The ladder's cap in time (the rungs' seconds added up): none for the committed table, whose
#: rows must not depend on the machine that ran them; a quick run can set one.
MAX_SECONDS = float("inf")
CHUNK = 2**16  # replicas per engine call (bounds the memory)
STUDY = "audit_gallery"

#: (c): the dimension and claim of the swapped-split audit. diffprivlib's factor is below 1
#: for d <= 4 (the swap then underspends) and grows with d, while the event that shows it
#: (every coordinate pushed the same way) gets rarer; d = 8 at a claim of 2 needs the fewest
#: trials of d in 6..24 and claims 1, 2, 4, 8 (the exact model: :func:`swap_trials_needed`).
SWAP_D, SWAP_EPSILON, SWAP_RECORDS = 8, 2.0, 10
#: (d) the two public starts: one near the data, one (empty on D) far from it.
EMPTY_START = np.array([[-0.5, -0.5], [0.5, 0.5]])
#: (f) the claim of the CEDS release (its delta), k = d = 1.
CEDS_DELTA = 1e-5


class Samples(NamedTuple):
    """The statistic's values on D and on D' (one per trial) and what the variant records:
    its flaws' names (from its configuration, or its ledger's leak entries) and its ledger's
    verdict and total epsilon (inf once a leak is recorded)."""

    on_d: np.ndarray
    on_d_prime: np.ndarray
    flaws: tuple[str, ...]
    ledger_is_private: bool
    ledger_epsilon: float


@dataclass(frozen=True)
class Case:
    """One gallery case: the bug, where it comes from, the claim, the pair, the statistic, and
    ``sample(flawed, trials, seed)`` -> :class:`Samples` (``flawed=False``: the corrected
    counterpart)."""

    letter: str
    name: str
    source: str
    epsilon: float
    delta: float
    access: str  # "white-box" (the auditor reads the transcript or the code) or "black-box"
    statistic: str
    pair: str
    sample: Callable[[bool, int, np.random.SeedSequence], Samples]
    note: str = ""


class Rung(NamedTuple):
    """One rung of the ladder: the audit of the broken variant and of the corrected one at
    ``trials`` per side, with what the broken variant records."""

    trials: int
    report: AuditReport
    control: AuditReport
    samples: Samples


# --- shared helpers ------------------------------------------------------------------------
def recorded_flaws(config: DPLloydConfig | None = None,
                   ledger: PrivacyLedger | None = None) -> tuple[str, ...]:
    """The flaws a variant records: its configuration's flaw names, then its ledger's leak
    entries not already named (the text before the first colon).

    Parameters
    ----------
    config : DPLloydConfig or None
        The variant's configuration.
    ledger : PrivacyLedger or None
        A ledger it charged.

    Returns
    -------
    tuple of str
        The names, in order.

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> from dpkmeans.synthesis.gallery import recorded_flaws
    >>> ledger = PrivacyLedger()
    >>> _ = ledger.leak("bounds read off the data: no sensitivity holds")
    >>> recorded_flaws(ledger=ledger)
    ('bounds read off the data',)
    """
    names = [f.name for f in config.flaws] if config is not None else []
    texts = {f.text for f in config.flaws} if config is not None else set()
    if ledger is not None:
        for entry in ledger.entries:
            if entry.mechanism.startswith("LEAK") and entry.label not in texts:
                name = entry.label.split(":")[0].strip()
                if name not in names:
                    names.append(name)
    return tuple(names)


def _box(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public box [-1, 1]^d."""
    return -np.ones(d), np.ones(d)


def _verdict(ledger: PrivacyLedger) -> tuple[bool, float]:
    """(the ledger's verdict, its total epsilon; inf once a leak is recorded)."""
    if not ledger.is_private:
        return False, float("inf")
    return True, float(ledger.total().epsilon)


def _engine(config: DPLloydConfig | tuple[DPLloydConfig, DPLloydConfig], X0: np.ndarray,
            X1: np.ndarray, statistic: Callable[[DPLloydResult], np.ndarray], trials: int,
            seed: np.random.SeedSequence, start: np.ndarray | None = None,
            history: bool = False) -> Samples:
    """``trials`` runs of ``config`` (or of one configuration per dataset) on X0 and on X1
    (``CHUNK`` replicas per engine call, each call its own child of ``seed``), scored by
    ``statistic``; what the last run on X1 records."""
    configs = config if isinstance(config, tuple) else (config, config)
    sides = []
    for X, side_config, side_seed in zip((X0, X1), configs, seed.spawn(2), strict=True):
        parts, left = [], trials
        for child in side_seed.spawn(-(-trials // CHUNK)):
            m = min(CHUNK, left)
            initial = None if start is None else np.broadcast_to(start, (m, *start.shape)).copy()
            result = run(X, side_config, child, replicas=m, initial_centroids=initial,
                         record_history=history)
            parts.append(statistic(result))
            left -= m
        sides.append(np.concatenate(parts))
    private, epsilon = _verdict(result.ledger)
    return Samples(sides[0], sides[1], recorded_flaws(result.config, result.ledger), private,
                   epsilon)


# --- (a) one seed for two noises ------------------------------------------------------------
def _shared_seed(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    X0, X1, _ = pair()
    config = fastlloyd_audit.config_of("as-published" if flawed else "fastlloyd")
    return _engine(config, X0, X1, fastlloyd_audit.shared_seed_statistic, trials, seed,
                   start=fastlloyd_audit.START, history=True)


# --- (b) seed 0 in the first iteration -----------------------------------------------------
def _first_count(result: DPLloydResult) -> np.ndarray:
    """Per run, cluster 0's released (whitened) count in the first iteration."""
    config = result.config
    return (result.release_history[0][0] * config.step.whitening(config, 0))[:, 0, -1]


def _seed_zero(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    """Each trial is one run with its own seed s; its first iteration draws from
    ``iteration_seed(s, 0)`` (0, the authors' code) or, corrected, from s itself."""
    X0, X1, _ = pair()
    config = first_iteration(fastlloyd_audit.config_of("fastlloyd"), flawed=flawed)
    start = fastlloyd_audit.START[None]
    sides = []
    for X, side_seed in zip((X0, X1), seed.spawn(2), strict=True):
        seeds = side_seed.generate_state(trials, np.uint32)
        values = []
        for s in seeds:
            result = run(X, config, iteration_seed(int(s), 0) if flawed else int(s),
                         initial_centroids=start, record_history=True)
            values.append(_first_count(result)[0])
        sides.append(np.array(values))
    private, epsilon = _verdict(result.ledger)
    return Samples(sides[0], sides[1], recorded_flaws(config, result.ledger), private, epsilon)


# --- (c) the swapped split -----------------------------------------------------------------
def _swap_config(flawed: bool) -> DPLloydConfig:
    return DPLloydConfig(1, _box(SWAP_D), [SWAP_EPSILON],
                         step=SwappedSplit() if flawed else SuSplit(),
                         flaws=(SWAPPED_SPLIT,) if flawed else (), name="dplloyd-impr")


def _swap_pair() -> tuple[np.ndarray, np.ndarray]:
    return corner_pair(np.zeros((SWAP_RECORDS, SWAP_D)), _box(SWAP_D))


def _swapped(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    X0, X1 = _swap_pair()

    def first_release_loss(result: DPLloydResult) -> np.ndarray:
        return transcript_log_ratios(result, X0, X1)[:, 0]

    return _engine(_swap_config(flawed), X0, X1, first_release_loss, trials, seed,
                   start=np.zeros((1, SWAP_D)), history=True)


def swap_trials_needed(power: float = 0.9) -> int | None:
    """The trials per side at which the optimal statistic of case (c) exposes the swapped split
    with probability ``power`` (the exact distribution of the first release's privacy loss,
    :func:`dpkmeans.privacy.loss.laplace_loss_tails`; doubled for the split sample's selection
    half), or None if no number does.

    Parameters
    ----------
    power : float, default 0.9
        The audit's probability of success.

    Returns
    -------
    int or None
        The trials per side.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import swap_trials_needed
    >>> swap_trials_needed() > 2**20
    True
    """
    eps_count, eps_dim = su_split(SWAP_EPSILON, SWAP_D)
    # swapped: every coordinate gets the count's share and the count a coordinate's
    tau, tail_d, tail_d_prime = laplace_loss_tails([eps_count] * SWAP_D + [eps_dim],
                                                   eps_count / 20)
    found = trials_to_expose(tail_d, tail_d_prime, SWAP_EPSILON, CONFIDENCE, power=power)
    return None if found is None else int(np.ceil(2 * found["n"]))


# --- (d) empty clusters skipped ------------------------------------------------------------
def _empty_pair() -> tuple[np.ndarray, np.ndarray]:
    """20 records on a grid near the first start; D' adds one near the second (empty on D)."""
    grid = np.stack(np.meshgrid(np.linspace(-0.6, -0.4, 5), np.linspace(-0.55, -0.45, 4)),
                    axis=-1).reshape(-1, 2)
    return empty_cluster_pair(grid, [0.6, 0.6])


def _second_moved(result: DPLloydResult) -> np.ndarray:
    """How far the second centre moved from its start."""
    return np.linalg.norm(result.centroids[:, 1] - result.initial_centroids[:, 1], axis=1)


def _skip_empty(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    X0, X1 = _empty_pair()
    config = DPLloydConfig(2, _box(2), [1 / 3] * 3,
                           step=SkipEmptyClusters() if flawed else JointRelease(),
                           flaws=(SKIP_EMPTY_CLUSTERS,) if flawed else ())
    return _engine(config, X0, X1, _second_moved, trials, seed, start=EMPTY_START)


# --- (e) bounds read from the data ---------------------------------------------------------
def _bounds_pair() -> tuple[np.ndarray, np.ndarray]:
    """10 records evenly in [-0.1, 0.1]; D' adds one at 1 (the public box is [-1, 1])."""
    return corner_pair(np.linspace(-0.1, 0.1, 10)[:, None], _box(1))


def _centre(result: DPLloydResult) -> np.ndarray:
    """The released centre (k = d = 1)."""
    return result.centroids[:, 0, 0]


def _data_bounds(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    """One DPLloyd iteration (k = 1, epsilon 1); broken: each dataset's box is its min-max."""
    X0, X1 = _bounds_pair()

    def config(X: np.ndarray) -> DPLloydConfig:
        if not flawed:
            return dplloyd(1, 1.0, _box(1), iterations=1)
        built = dplloyd(1, 1.0, (X.min(axis=0), X.max(axis=0)), iterations=1)
        return DPLloydConfig(1, built.bounds, built.schedule, flaws=(DATA_DERIVED_BOUNDS,))

    return _engine((config(X0), config(X1)), X0, X1, _centre, trials, seed)


# --- (f) a covariance fitted to the data ---------------------------------------------------
def _covariance_pair() -> tuple[np.ndarray, np.ndarray]:
    """20 records within 0.01 of 0; D' adds one at 1."""
    return corner_pair(np.linspace(-0.01, 0.01, 20)[:, None], _box(1))


def _local_covariance(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    """k = d = 1 from the public start 0, one iteration, then the output release: CEDS's
    covariance from this dataset's leave-one-out shifts, or (corrected) the colored loop's
    box-optimal noise."""
    X0, X1 = _covariance_pair()
    if flawed:
        config = DPLloydConfig(1, _box(1), [1.0], step=NoiseFreeIterations(),
                               output=CEDSOutputRelease(1.0, CEDS_DELTA),
                               flaws=(EXACT_ITERATIONS, LOCAL_SENSITIVITY),
                               name="ceds-as-published")
    else:
        config = corrected(1, 1.0, CEDS_DELTA, _box(1), iterations=1)
    return _engine(config, X0, X1, _centre, trials, seed, start=np.zeros((1, 1)))


# --- (g) one random_state for two fits on one accountant -----------------------------------
#: (g) the target record: the last of :func:`seed_reuse_pair`'s D.
TARGET = np.array([0.9, 0.9])


def seed_reuse_pair() -> tuple[np.ndarray, np.ndarray]:
    """The pair of case (g): D, 100 records on a grid in [-1, 1]^2, the last one
    :data:`TARGET`; D' = D without it.

    Returns
    -------
    tuple of numpy.ndarray
        D (100, 2) and D' (99, 2).

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import seed_reuse_pair
    >>> D, D_prime = seed_reuse_pair()
    >>> D.shape, D_prime.shape, D[-1].tolist()
    ((100, 2), (99, 2), [0.9, 0.9])
    """
    axis = np.linspace(-0.9, 0.9, 10)
    X = np.stack(np.meshgrid(axis, axis), axis=-1).reshape(-1, 2)
    return X, X[:-1]


def refit_difference(X: np.ndarray, seeds: tuple[int, int], *, seed_reuse: str = "record",
                     epsilon: float = 1.0) -> tuple[int, PrivacyLedger]:
    """Fit ``DPKMeans`` on X and on X without :data:`TARGET` (the same X if it is not there),
    with ``random_state`` seeds[0] and seeds[1], both charged to one accountant
    (``PrivacyLedger(seed_reuse=...)``): the difference of their ``n_records_used_``, and the
    accountant.

    Parameters
    ----------
    X : numpy.ndarray
        The records, (N, 2) in [-1, 1]^2.
    seeds : tuple of int
        The two fits' ``random_state`` (equal: the pitfall).
    seed_reuse : {"record", "refuse"}, default "record"
        The accountant's rule for a repeated seed.
    epsilon : float, default 1.0
        Each fit's budget.

    Returns
    -------
    tuple of (int, PrivacyLedger)
        The difference and the accountant.

    Raises
    ------
    dpkmeans.errors.SeedReuseError
        If the seeds repeat and ``seed_reuse="refuse"`` (the default accountant's rule).

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import refit_difference, seed_reuse_pair
    >>> D, D_prime = seed_reuse_pair()
    >>> difference, accountant = refit_difference(D, (7, 7))
    >>> difference, accountant.is_private
    (1, False)
    >>> refit_difference(D_prime, (7, 7))[0]
    0
    """
    accountant = PrivacyLedger(seed_reuse=seed_reuse)
    used = [DPKMeans(n_clusters=2, epsilon=epsilon, bounds=_box(2), random_state=s,
                     accountant=accountant).fit(Z).n_records_used_
            for Z, s in zip((X, X[~np.all(X == TARGET, axis=1)]), seeds, strict=True)]
    return int(used[0] - used[1]), accountant


def _seed_reuse(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    """Per trial, :func:`refit_difference` with one ``random_state`` for both fits (corrected:
    two seeds); D' = D without the target, so on D' both fits see the same data."""
    sides = []
    for X, side_seed in zip(seed_reuse_pair(), seed.spawn(2), strict=True):
        words = side_seed.generate_state(2 * trials, np.uint32).reshape(trials, 2)
        values = []
        for first, second in words:
            pair_ = (int(first), int(first if flawed else second))
            difference, accountant = refit_difference(X, pair_)
            values.append(difference)
        sides.append(np.array(values, dtype=float))
    private, epsilon = _verdict(accountant)
    return Samples(sides[0], sides[1], recorded_flaws(ledger=accountant), private, epsilon)


# --- (h) floating-point Laplace ------------------------------------------------------------
def _float_laplace(flawed: bool, trials: int, seed: np.random.SeedSequence) -> Samples:
    """``trials`` Laplace releases (sensitivity 1, epsilon 1) of 0 (D) and of 1 (D'); the
    statistic is whether the output is impossible from 1, decided exactly for the sampler that
    drew it (:func:`~dpkmeans.privacy.floating_point.laplace_output_possible` or the grid)."""
    sampler = "continuous" if flawed else "discrete"
    cal = noise.calibrate("laplace", 1.0, 1.0, sampler=sampler)
    ledger = PrivacyLedger(budget=None)
    sides = []
    for value, side_seed in zip((0.0, 1.0), seed.spawn(2), strict=True):
        y = laplace_mechanism(value, 1.0, 1.0, np.random.default_rng(side_seed), ledger=ledger,
                              repeats=trials, sampler=sampler)
        possible = (laplace_output_possible(y, 1.0, cal.scale) if flawed
                    else grid_output_possible(y, 1.0, cal.grid))
        sides.append((~possible).astype(float))
    private, epsilon = _verdict(ledger)
    return Samples(sides[0], sides[1], recorded_flaws(ledger=ledger), private,
                   epsilon if private else float("inf"))


# --- the gallery ---------------------------------------------------------------------------
FASTLLOYD = "FastLloyd's published code (Diaa, Humphries and Kerschbaum 2025)"
DIFFPRIVLIB = "diffprivlib 0.6.6, KMeans"

#: The eight cases, in the book's order.
CASES: tuple[Case, ...] = (
    Case("a", "one seed for the count and sum noise", FASTLLOYD + ", its release of (S_j, n_j)",
         fastlloyd_audit.EPSILON, fastlloyd_audit.DELTA, "white-box",
         "cluster 0's count minus its first sum coordinate in the first release, whitened "
         "(the two noises cancel)",
         "the outside algorithms' pair: 20 + 20 records vs one more at (1, -1)",
         _shared_seed, note="the corrected release draws the two noises independently"),
    Case("b", "seed 0 in the first iteration of every run",
         FASTLLOYD + ", its server: random_state = seed * iteration, from 0",
         fastlloyd_audit.EPSILON, fastlloyd_audit.DELTA, "black-box",
         "cluster 0's released count in the first iteration (the same in every run)",
         "the outside algorithms' pair: 20 + 20 records vs one more at (1, -1)", _seed_zero,
         note="the audit reads the first release only, so each run is its first iteration"),
    Case("c", "count and sum budget shares swapped", DIFFPRIVLIB + " (Su et al. 2016's split)",
         SWAP_EPSILON, 0.0, "white-box",
         "log-likelihood ratio of the released sums and count (the optimal statistic)",
         f"{SWAP_RECORDS} records at the origin of [-1, 1]^{SWAP_D} vs one more at the corner",
         _swapped),
    Case("d", "empty clusters skipped without paying", DIFFPRIVLIB, 1.0, 0.0, "black-box",
         "how far the second centre moved (exactly 0 when its cluster was skipped)",
         "20 records near the first start vs one more near the second", _skip_empty,
         note="three iterations of epsilon 1/3 from two public starts"),
    Case("e", "min-max bounds read from the data",
         "the published code of DP-KCCM (Ni et al. 2021), the silhouette budgets (Zhang, Liu "
         "and Wang 2018), differential identifiability (Shang et al. 2021) and APDPk-means",
         1.0, 0.0, "black-box", "the released centre (above 0.1 only when the box grew)",
         "10 records evenly in [-0.1, 0.1] vs one more at 1", _data_bounds,
         note="one DPLloyd iteration, k = 1; corrected: the public box [-1, 1]"),
    Case("f", "a noise covariance fitted to the data without noise",
         "CEDS, the code of Ravi, Scaglione and Peisert (2021)", 1.0, CEDS_DELTA, "black-box",
         "the released centre (no noise where the records agree)",
         "20 records within 0.01 of 0 vs one more at 1", _local_covariance,
         note="k = d = 1 and one exact iteration: only the covariance leaks"),
    Case("g", "one random_state for two fits on one accountant",
         "a fixed random_state (the scikit-learn habit) for fits charged to one shared "
         "accountant", 2.0, 0.0, "black-box",
         "n_records_used_ of the fit on Z minus that of the fit on Z without the target",
         "100 records on a grid vs the same without the last", _seed_reuse,
         note="two DPKMeans fits of epsilon 1 per trial; the accountant claims 2"),
    Case("h", "floating-point Laplace noise",
         "numpy's Generator.laplace, as the papers' code draws its noise (Mironov 2012)",
         1.0, 0.0, "white-box", "the output is impossible from the neighbour's value "
         "(decided exactly for the sampler that drew it)", "the value 0 vs 1", _float_laplace,
         note="corrected: the exact discrete sampler (sampler='discrete')"),
)


def case(name: str) -> Case:
    """The gallery case named ``name`` or lettered ``name`` (:data:`CASES`).

    Parameters
    ----------
    name : str
        A case's letter ("a" to "h") or name.

    Returns
    -------
    Case
        The case.

    Raises
    ------
    ValueError
        If no case has that letter or name.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import case
    >>> case("e").name
    'min-max bounds read from the data'
    """
    for c in CASES:
        if name in (c.letter, c.name):
            return c
    raise ValueError(f"no gallery case {name!r}; the cases are "
                     f"{[c.letter for c in CASES]} or {[c.name for c in CASES]}")


def rung_seed(name: str, trials: int, *, control: bool = False,
              base_seed: int = BASE_SEED) -> np.random.SeedSequence:
    """The seed of one rung of a case's ladder: from the case's name, the trials and the side
    (the broken variant or its control), so that a rung's numbers do not depend on the others.

    Parameters
    ----------
    name : str
        The case's name.
    trials : int
        The rung's trials per side.
    control : bool, default False
        The corrected counterpart's seed.
    base_seed : int, default BASE_SEED
        The study's seed.

    Returns
    -------
    numpy.random.SeedSequence
        The rung's seed.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import rung_seed
    >>> rung_seed("x", 16).entropy == rung_seed("x", 32).entropy
    False
    """
    key = {"study": STUDY, "case": name, "trials": int(trials), "control": bool(control)}
    return np.random.SeedSequence(stable_seed(base_seed, key))


def audit_case(c: Case, trials: int, *, flawed: bool = True,
               base_seed: int = BASE_SEED) -> tuple[AuditReport, Samples]:
    """The audit of case ``c`` (the broken variant, or ``flawed=False`` its corrected
    counterpart) at ``trials`` per side, from its rung's seed: the split-sample bound at 99%
    confidence against the case's claim.

    Parameters
    ----------
    c : Case
        The case.
    trials : int
        Trials per side (at least 4).
    flawed : bool, default True
        The broken variant (False: the corrected counterpart).
    base_seed : int, default BASE_SEED
        The study's seed.

    Returns
    -------
    tuple of (AuditReport, Samples)
        The report and the samples with what the variant records.

    Raises
    ------
    ValueError
        If ``trials`` is below 4.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import audit_case, case
    >>> report, samples = audit_case(case("e"), 128)
    >>> report.verdict, samples.flaws, samples.ledger_is_private
    ('violation detected', ('data-derived-bounds',), False)
    """
    trials = check_positive_int(trials, "trials", minimum=4)
    seed = rung_seed(c.name, trials, control=not flawed, base_seed=base_seed)
    data_seed, split_seed = seed.spawn(2)
    started = time.perf_counter()
    samples = c.sample(flawed, trials, data_seed)
    seconds = time.perf_counter() - started
    label = c.name if flawed else f"{c.name} (corrected)"
    report = audit_samples(label, samples.on_d, samples.on_d_prime, c.epsilon, delta=c.delta,
                           confidence=CONFIDENCE, seconds=seconds,
                           seed=int(split_seed.generate_state(1, np.uint64)[0] >> 1))
    return report, samples


def ladder(c: Case, *, first: int = FIRST_TRIALS, max_trials: int = MAX_TRIALS,
           max_seconds: float = MAX_SECONDS,
           base_seed: int = BASE_SEED) -> tuple[Rung, bool, float]:
    """The doubling ladder of case ``c``: audits at ``first``, 2 ``first``, ... trials per
    side until one detects the violation, the trials pass ``max_trials`` or the rungs'
    seconds pass ``max_seconds``; then the control at the last rung's trials.

    Parameters
    ----------
    c : Case
        The case.
    first : int, default FIRST_TRIALS
        The first rung's trials per side.
    max_trials : int, default MAX_TRIALS
        The largest rung.
    max_seconds : float, default MAX_SECONDS
        The time after which no rung starts.
    base_seed : int, default BASE_SEED
        The study's seed.

    Returns
    -------
    tuple of (Rung, bool, float)
        The last rung (the smallest that caught the bug, or the largest reached), whether it
        caught it, and the seconds of the whole ladder.

    Raises
    ------
    ValueError
        If ``first`` is below 4 or above ``max_trials``.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import case, ladder
    >>> rung, caught, _ = ladder(case("e"), max_trials=256)
    >>> caught, rung.control.verdict
    (True, 'consistent')
    """
    n = check_positive_int(first, "first", minimum=4)
    if n > max_trials:
        raise ValueError(f"first ({n}) must not exceed max_trials ({max_trials})")
    spent = 0.0
    while True:
        report, samples = audit_case(c, n, base_seed=base_seed)
        spent += report.seconds
        caught = report.verdict == "violation detected"
        if caught or 2 * n > max_trials or spent >= max_seconds:
            break
        n *= 2
    control, _ = audit_case(c, n, flawed=False, base_seed=base_seed)
    return Rung(n, report, control, samples), caught, spent


def gallery_rows(name: str, *, max_trials: int = MAX_TRIALS, max_seconds: float = MAX_SECONDS,
                 base_seed: int = BASE_SEED) -> pd.DataFrame:
    """One sweep cell: the gallery row of case ``name`` (a letter or a name of :data:`CASES`):
    the bug, its source, what the variant records, the claim, the statistic, the smallest
    audit that catches it (or the trials reached), its bound, cost and the control's.

    Parameters
    ----------
    name : str
        The case's letter or name.
    max_trials : int, default MAX_TRIALS
        The ladder's cap in trials per side.
    max_seconds : float, default MAX_SECONDS
        The ladder's cap in seconds.
    base_seed : int, default BASE_SEED
        The study's seed.

    Returns
    -------
    pandas.DataFrame
        One row.

    Raises
    ------
    ValueError
        If no case has that name.

    Examples
    --------
    >>> from dpkmeans.synthesis.gallery import gallery_rows
    >>> row = gallery_rows("e", max_trials=256).iloc[0]
    >>> bool(row["detected"]), bool(row["control_detected"]), row["flaws"]
    (True, False, 'data-derived-bounds')
    """
    c = case(name)
    rung, caught, spent = ladder(c, max_trials=max_trials, max_seconds=max_seconds,
                                 base_seed=base_seed)
    report, control, samples = rung.report, rung.control, rung.samples
    note = c.note
    if c.letter == "c":
        needed = swap_trials_needed()
        note = (f"the exact model needs {needed:,} trials per side for 90% power"
                if needed else "no number of trials exposes it (the exact model)")
    return pd.DataFrame([{
        "case": c.letter, "name": c.name, "flaws": "; ".join(samples.flaws),
        "ledger_is_private": samples.ledger_is_private,
        "ledger_epsilon": samples.ledger_epsilon, "source": c.source,
        "claimed_epsilon": c.epsilon, "delta": c.delta, "access": c.access,
        "statistic": c.statistic, "pair": c.pair, "trials": rung.trials,
        "lower_bound": report.lower_bound, "ratio": report.lower_bound / c.epsilon,
        "estimate": report.estimate, "event": report.event, "detected": caught,
        "seconds": report.seconds, "ladder_seconds": spent,
        "control_lower_bound": control.lower_bound,
        "control_detected": control.verdict == "violation detected",
        "control_seconds": control.seconds, "confidence": CONFIDENCE,
        "first_trials": FIRST_TRIALS, "max_trials": max_trials, "note": note}])
