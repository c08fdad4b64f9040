"""DPLloyd-Impr's rho = 0.225 on every box.

Su et al.'s rho is the typical size of a centroid coordinate relative to the per-dimension
sensitivity (book chapter 5, the proposition on the split): a statement about the private
centroids that no public input gives. It is therefore stated as an assumption (in the
estimator's docstring and chapter 5), and the tests below check what makes one value right for
every box: the sums are released centred, in half-widths, so the split, T and (for a box that
is a power-of-two image of [-1, 1]^d) every released number are the same as on [-1, 1]^d.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpkmeans.api.estimators import DPKMeans
from dpkmeans.engine import schedules
from dpkmeans.engine.planning import iteration_releases
from dpkmeans.papers.su.variants import dplloyd_impr

ROOT = Path(__file__).resolve().parents[2]
BOXES = [(np.full(3, -1.0), np.full(3, 1.0)), (np.zeros(3), np.full(3, 4.0)),
         (np.array([-3.0, 10.0, 0.5]), np.array([5.0, 14.0, 1.5])),
         (np.array([17.0, 0.0, -1e4]), np.array([90.0, 1.0, 1e4]))]


def _unit(n: int = 3000, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (n, 3))


def _image(U: np.ndarray, box) -> np.ndarray:
    lower, upper = box
    return (U + 1.0) / 2.0 * (upper - lower) + lower


def test_the_estimator_states_the_assumption():
    doc = " ".join(DPKMeans.__doc__.split())
    assert "0.225" in doc and "assumption" in doc
    assert "half-widths" in doc and "same in every box" in doc
    assert "never privacy" in doc


def test_chapter_5_states_the_assumption():
    text = (ROOT / "notebooks" / "05_dplloyd.py").read_text(encoding="utf-8")
    prose = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    assert re.search(r"no public input gives it", prose)
    assert re.search(r"It is an assumption, not a derivation, but not one about the box", prose)
    assert "every box is $[-1, 1]^d$" in prose


@pytest.mark.parametrize("box", BOXES[1:], ids=["[0,4]", "skewed", "wide"])
def test_split_and_iterations_do_not_depend_on_the_box(box):
    reference = dplloyd_impr(4, 1.0, BOXES[0], n_records=3000)
    config = dplloyd_impr(4, 1.0, box, n_records=3000)
    assert config.step.rho == reference.step.rho == schedules.SU_RHO["[-1,1]"] and config.centred
    np.testing.assert_array_equal(config.schedule, reference.schedule)  # T and eps_t
    eps_t = float(config.schedule[0])
    mine, ref = ([r for r in iteration_releases(c, eps_t) if r.cluster == 0]
                 for c in (config, reference))
    assert [r.label for r in mine] == ["n_j", "S_j[0]", "S_j[1]", "S_j[2]"]
    assert [r.label for r in mine] == [r.label for r in ref]
    for a, b in zip(mine, ref):
        assert a.calibration.epsilon == b.calibration.epsilon  # the same split
    # each sum's sensitivity is its half-width: the noise in half-widths is the same
    half = (box[1] - box[0]) / 2.0
    for i, a in enumerate(mine[1:]):
        assert a.calibration.sensitivity == pytest.approx(half[i], rel=1e-15)


def test_a_power_of_two_image_of_the_unit_box_releases_the_same_centroids():
    """On [0, 4]^3 (each coordinate 2 x + 2) every grid and sensitivity doubles, so the fit
    releases exactly the image of its [-1, 1]^3 centroids, with the same seed."""
    U = _unit()
    box = BOXES[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unit = DPKMeans(4, epsilon=1.0, bounds=BOXES[0], n_records=3000, random_state=3).fit(U)
        image = DPKMeans(4, epsilon=1.0, bounds=box, n_records=3000,
                         random_state=3).fit(_image(U, box))
    assert image.n_iter_ == unit.n_iter_
    np.testing.assert_allclose(image.cluster_centers_, _image(unit.cluster_centers_, box),
                               rtol=0, atol=1e-12)
