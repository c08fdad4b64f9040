"""The grid's rounding slack under replace adjacency (book chapter 6).

The discrete sampler rounds each released element to the grid g, which moves it by at most half
a step, so the rounded images of two neighbouring values differ by at most Delta / g plus one
step per element that can change (:mod:`dpkmeans.privacy.noise`). A replaced record leaves one cluster
and joins another: it changes the release's columns in *two* clusters. The slack used to count
the columns of one cluster only, and the pair below (ties rounded to even, every coordinate
gaining a full step) exceeded the calibrated sensitivity by 8 grid steps at d = 9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkmeans.compute.lloyd import batched_stats
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.engine.prototypes import CategoricalModes, MixedLayout
from dpkmeans.engine.strategies import SuSplit
from dpkmeans.privacy.noise import to_grid


def _box(d: int, r: float) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(d), np.full(d, 2.0 * r)


def _joint(d: int, r: float, **kw) -> DPLloydConfig:
    return DPLloydConfig(n_clusters=2, bounds=_box(d, r), schedule=[1.0], neighbour="replace",
                         centred=True, **kw)


def _prototypes(d: int, r: float) -> DPLloydConfig:
    """DPKPrototypes' numeric release: one-hot blocks first, the numeric part centred."""
    layout = MixedLayout((2,), d, 0.12)
    return DPLloydConfig(n_clusters=2, bounds=layout.bounds(_box(d, r)), schedule=[1.0],
                         modes=CategoricalModes(layout, [1.0]), neighbour="replace",
                         centred=True)


BUILDERS = {
    "di (joint Laplace)": (9, _joint),
    "Su split": (2, lambda d, r: _joint(d, r, step=SuSplit())),
    "DPKPrototypes": (9, _prototypes),
}


def _worst_pair(name: str) -> tuple[DPLloydConfig, np.ndarray, np.ndarray]:
    """A config whose half-width r is an odd number N of grid steps, and the centred
    statistics (k = 2, d + 1 columns) of D and of D' (one record replaced).

    Centroids at the box's corners l and u (midpoint m, u - m = r = N g). D holds l + g/2 and
    u - g/2 (so that every centred sum sits on a half step: S/g = K + 1/2) and the record l;
    D' replaces it by u. Each of the 2 d sum coordinates then rounds N + 1 steps apart (ties go
    to even, and N is odd), while the sensitivity counts N."""
    d, build = BUILDERS[name]
    g = _sums_release(build(d, 1.0)).calibration.grid
    r = 1.0 + g  # N = r / g = 1 / g + 1: odd
    config = build(d, r)
    release = _sums_release(config)
    assert release.calibration.grid == g and (r / g) % 2 == 1
    lower, upper = config.bounds
    c = config.numeric_offset
    m = (lower + upper) / 2.0
    m[:c] = 0.0  # one-hot columns are never centred
    half = np.zeros_like(lower)
    half[c:] = g / 2.0
    level = upper[:c].copy()
    level[1:] = 0.0  # every record in the first category (k-prototypes: one attribute)
    lo, hi = np.concatenate([level, lower[c:]]), np.concatenate([level, upper[c:]])
    base = np.array([lo + half, hi - half])
    centroids = np.array([[lo, hi]])

    def stats(X: np.ndarray) -> np.ndarray:
        sums, counts = batched_stats(X, centroids)
        sums = sums - counts[..., None] * m
        return np.concatenate([sums, counts[..., None]], axis=2)[0]

    D, D_ = stats(np.vstack([base, lo])), stats(np.vstack([base, hi]))
    assert D[:, -1].tolist() == [2.0, 1.0] and D_[:, -1].tolist() == [1.0, 2.0]  # a moved record
    return config, D, D_


def _sums_release(config: DPLloydConfig):
    return next(r for r in iteration_releases(config, 1.0) if r.label != "n_j")


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_rounded_neighbours_stay_within_the_calibrated_sensitivity(name):
    config, D, D_ = _worst_pair(name)
    releases = iteration_releases(config, 1.0)
    assert all(rel.cluster is None for rel in releases)  # replace: all clusters at once
    excess = []
    for rel in releases:
        cal = rel.calibration
        a, b = (to_grid(S[:, rel.columns], cal.grid) for S in (D, D_))
        moved = np.abs(a - b).astype(float)
        # the true change respects the sensitivity ...
        true = np.abs(D - D_)[:, rel.columns]
        norm = float(true.sum()) if cal.kind == "laplace" else float(np.sqrt((true**2).sum()))
        assert norm <= cal.sensitivity * (1 + 1e-12)
        # ... and the rounded change the calibrated one (in grid steps)
        steps = moved.sum() if cal.kind == "laplace" else math.sqrt((moved**2).sum())
        excess.append(steps - cal.sensitivity_steps)
    assert max(excess) <= 0, f"rounded change exceeds the calibration by {max(excess):g} steps"


def test_joint_slack_counts_two_clusters():
    """di at d = 9: the slack is 2 (d + 1) = 20 steps (it was d + 1, and the pair above moved
    8 steps beyond); add/remove keeps d + 1."""
    config, _, _ = _worst_pair("di (joint Laplace)")
    (rel,) = iteration_releases(config, 1.0)
    cal = rel.calibration
    assert cal.sensitivity_steps == math.ceil(cal.sensitivity / cal.grid) + 20
    added = DPLloydConfig(n_clusters=2, bounds=config.bounds, schedule=[1.0], centred=True)
    cal = iteration_releases(added, 1.0)[0].calibration
    assert cal.sensitivity_steps == math.ceil(cal.sensitivity / cal.grid) + 10
    # Gaussian (L2): the slack is sqrt(2 (d + 1)) under replace
    gauss = DPLloydConfig(n_clusters=2, bounds=config.bounds, schedule=[1.0], centred=True,
                          neighbour="replace", noise="gaussian", delta=1e-5)
    cal = iteration_releases(gauss, 1.0)[0].calibration
    assert cal.sensitivity_steps == cal.sensitivity / cal.grid + math.sqrt(20)
    # one cluster: a replaced record changes one cluster's columns only
    single = DPLloydConfig(n_clusters=1, bounds=config.bounds, schedule=[1.0], centred=True,
                           neighbour="replace")
    cal = iteration_releases(single, 1.0)[0].calibration
    assert cal.sensitivity_steps == math.ceil(cal.sensitivity / cal.grid) + 10
