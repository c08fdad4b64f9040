"""Noise types: one object per noise family (docs/design.md, "How to add a mechanism").

Each family's calibration gives the numbers the string-keyed calibration gave (pinned below, in
hexadecimal), the public names map to the library's objects, and a toy mechanism defined here,
a :class:`NoiseType` subclass, is calibrated, charged and drawn without any library edit.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import run
from dpkmeans.engine.planning import plan_ledger
from dpkmeans.privacy import mechanisms, noise
from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.discrete import discrete_laplace
from dpkmeans.privacy.loss import gaussian_privacy_loss, laplace_privacy_loss
from dpkmeans.privacy.noise_types import (
    COLORED,
    COLORED_CONTINUOUS,
    DISCRETE_GAUSSIAN,
    DISCRETE_LAPLACE,
    FLOAT_LEAK,
    GAUSSIAN,
    LAPLACE,
    NoiseCalibration,
    NoiseType,
    PrivacyLoss,
    compose_losses,
    noise_type,
    noise_type_of,
)
from dpkmeans.study.transcript import element_log_ratio, transcript_log_ratios

#: (name, sampler, sensitivity, epsilon, delta, coordinates, integer_valued, mechanism, scale,
#: grid, sensitivity_steps, noise_steps, nominal_scale): what ``noise.calibrate`` gave when
#: it branched on the names.
OLD_CALIBRATIONS = [
    ("laplace", "discrete", 1.0, 0.5, 0.0, 1, False, "Laplace (discrete)",
     "0x1.0000000400000p+1", "0x1.0000000000000p-30", 1073741825, 2147483650,
     "0x1.0000000000000p+1"),
    ("laplace", "discrete", 2.5, 0.3, 0.0, 4, False, "Laplace (discrete)",
     "0x1.0aaaaab900000p+3", "0x1.0000000000000p-29", 1342177284, 4473924281,
     "0x1.0aaaaaaaaaaabp+3"),
    ("laplace", "discrete", 1.0, 0.5, 0.0, 1, True, "Laplace (discrete)",
     "0x1.0000000000000p+1", "0x1.0000000000000p-30", 1073741824, 2147483648,
     "0x1.0000000000000p+1"),
    ("laplace", "discrete", 0.0, 1.0, 0.0, 1, False, "Laplace (discrete)",
     "0x0.0p+0", "0x0.0p+0", 0.0, 0, "0x0.0p+0"),
    ("laplace", "continuous", 1.5, 0.7, 0.0, 3, False, "Laplace (continuous)",
     "0x1.1249249249249p+1", "0x0.0p+0", 0.0, 0, "0x0.0p+0"),
    ("gaussian", "discrete", 1.0, 1.0, 1e-05, 1, False, "Gaussian (discrete, zCDP)",
     "0x1.02e3ab2a17463p+2", "0x1.0000000000000p-18", 262145.0, 1124470847958,
     "0x1.02e36a713b5a7p+2"),
    ("gaussian", "discrete", 3.0, 0.4, 1e-06, 5, False, "Gaussian (discrete, zCDP)",
     "0x1.00dee14a4af13p+5", "0x1.0000000000000p-15", 98306.2360679775, 1107002957849,
     "0x1.00dd6260f79a0p+5"),
    ("gaussian", "continuous", 1.0, 1.0, 1e-05, 1, False, "Gaussian (continuous, analytic)",
     "0x1.dd8556607a8f7p+1", "0x0.0p+0", 0.0, 0, "0x0.0p+0"),
    ("colored", "discrete", 2.0, 1.0, 1e-05, 3, False, "Gaussian (discrete, zCDP)",
     "0x1.02e3da8b557f6p+3", "0x1.0000000000000p-17", 262145.73205080756, 1124477128230,
     "0x1.02e36a713b5a7p+3"),
]

FAMILIES = {("laplace", "discrete"): DISCRETE_LAPLACE, ("laplace", "continuous"): LAPLACE,
            ("gaussian", "discrete"): DISCRETE_GAUSSIAN, ("gaussian", "continuous"): GAUSSIAN,
            ("colored", "discrete"): COLORED, ("colored", "continuous"): COLORED_CONTINUOUS}


@pytest.mark.parametrize("case", OLD_CALIBRATIONS, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_each_family_calibrates_as_before(case):
    (name, sampler, sens, eps, delta, coords, integer, mechanism, scale, grid, sens_steps,
     steps, nominal) = case
    for cal in (FAMILIES[name, sampler].calibrate(sens, eps, delta, coordinates=coords,
                                                  integer_valued=integer),
                noise.calibrate(name, sens, eps, delta, sampler=sampler, coordinates=coords,
                                integer_valued=integer)):
        assert cal.mechanism == mechanism
        assert (cal.scale.hex(), float(cal.grid).hex(), cal.sensitivity_steps, cal.noise_steps,
                float(cal.nominal_scale).hex()) == (scale, grid, sens_steps, steps, nominal)
        assert cal.sampler == sampler


@pytest.mark.parametrize("noise_, sens, coords, integer, floor", [
    (DISCRETE_LAPLACE, 2.0, 3, False, "0x1.0000000c00000p-26"),
    (DISCRETE_LAPLACE, 1.0, 1, True, "0x1.0000000000000p-26"),
    (LAPLACE, 1.0, 1, False, "0x0.0p+0"),
    (DISCRETE_GAUSSIAN, 1.0, 1, False, "0x0.0p+0"),
    (COLORED, 1.0, 1, False, "0x0.0p+0"),
])
def test_min_epsilon_as_before(noise_, sens, coords, integer, floor):
    got = noise_.min_epsilon(sens, coordinates=coords, integer_valued=integer)
    assert got.hex() == floor
    assert noise.min_epsilon(noise_, sens, coordinates=coords, integer_valued=integer) == got


def test_names_map_to_the_library_objects():
    for (name, sampler), obj in FAMILIES.items():
        assert noise_type(name, sampler) is obj
        assert noise_type(obj, "continuous") is obj  # an object is taken as it is
        assert obj.with_sampler(sampler) is obj
    assert noise_type("laplace") is DISCRETE_LAPLACE
    assert LAPLACE.with_sampler("discrete") is DISCRETE_LAPLACE
    assert COLORED.with_sampler("continuous") is COLORED_CONTINUOUS
    with pytest.raises(ValueError, match="noise must be one of"):
        noise_type("staircase")
    with pytest.raises(ValueError, match="sampler must be one of"):
        noise_type("laplace", "float")


def test_configurations_give_their_noise_type():
    class Config:
        noise, sampler = "colored", "continuous"

    assert noise_type_of(Config()) is COLORED_CONTINUOUS
    Config.noise = DISCRETE_GAUSSIAN
    assert noise_type_of(Config()) is DISCRETE_GAUSSIAN


def test_noise_types_survive_pickling_and_compare_by_value():
    for obj in FAMILIES.values():
        copy = pickle.loads(pickle.dumps(obj))
        assert copy == obj and hash(copy) == hash(obj)
    assert DISCRETE_LAPLACE != LAPLACE and COLORED != DISCRETE_GAUSSIAN
    cal = DISCRETE_LAPLACE.calibrate(1.0, 0.5)
    assert pickle.loads(pickle.dumps(cal)) == cal


def test_the_small_queries():
    assert [t.norm for t in (LAPLACE, DISCRETE_LAPLACE, GAUSSIAN, DISCRETE_GAUSSIAN, COLORED)] \
        == [1, 1, 2, 2, 2]
    assert not DISCRETE_LAPLACE.needs_delta and DISCRETE_GAUSSIAN.needs_delta and COLORED.needs_delta
    assert DISCRETE_LAPLACE.exact and not LAPLACE.exact and not COLORED_CONTINUOUS.exact
    assert DISCRETE_LAPLACE.leak is None and LAPLACE.leak == FLOAT_LEAK
    assert COLORED.sampler_family is DISCRETE_GAUSSIAN
    assert COLORED_CONTINUOUS.sampler_family is GAUSSIAN
    assert DISCRETE_LAPLACE.sampler_family is DISCRETE_LAPLACE
    box = (np.array([0.0, -1.0, 2.0]), np.array([4.0, 1.0, 2.5]))
    np.testing.assert_array_equal(DISCRETE_LAPLACE.whitening(box), np.ones(4))
    np.testing.assert_array_equal(COLORED.whitening(box),
                                  1.0 / np.sqrt(np.array([2.0, 1.0, 0.25, 1.0])))
    assert COLORED.whitened and not GAUSSIAN.whitened
    assert LAPLACE.sd(2.0) == float(np.sqrt(2.0) * 2.0) and GAUSSIAN.sd(2.0) == 2.0
    assert COLORED.sd(3.0) == 3.0
    with pytest.raises(ValueError, match="delta must be 0 for Laplace noise"):
        DISCRETE_LAPLACE.calibrate(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError):
        DISCRETE_GAUSSIAN.calibrate(1.0, 1.0, 0.0)


def test_samplers_draw_what_the_functions_drew():
    steps = np.array([[10, 0, 1000], [5, 7, 0]])
    for obj in (DISCRETE_LAPLACE, DISCRETE_GAUSSIAN):
        a = obj.draw_steps(steps, [np.random.default_rng(0), np.random.default_rng(1)],
                           per_replica=True)
        b = noise.draw_steps(obj.family, steps, [np.random.default_rng(0),
                                                 np.random.default_rng(1)], per_replica=True)
        np.testing.assert_array_equal(a, b)
    unit = LAPLACE.unit_noise([np.random.default_rng(0)], (3,))
    np.testing.assert_array_equal(unit, np.random.default_rng(0).laplace(0.0, 1.0, (3,))[None])
    np.testing.assert_array_equal(COLORED_CONTINUOUS.unit_noise([np.random.default_rng(0)], (2,)),
                                  np.random.default_rng(0).standard_normal((2,))[None])
    with pytest.raises(TypeError):
        LAPLACE.draw_steps(np.array([3]), [np.random.default_rng(0)])
    with pytest.raises(TypeError):  # the toy below has only an exact sampler
        ToyNoise().unit_noise([np.random.default_rng(0)], (2,))


def test_privacy_loss_descriptions_compose():
    lap = DISCRETE_LAPLACE.calibrate(1.0, 0.5)
    assert lap.loss().mu is None and lap.loss().epsilon <= 0.5
    assert lap.loss().epsilon == pytest.approx(0.5, rel=1e-8)
    cals = [DISCRETE_GAUSSIAN.calibrate(1.0, e, 1e-5) for e in (0.5, 1.0, 2.0)]
    total = compose_losses(c.loss() for c in cals)
    s2 = 0.0
    for c in cals:
        s2 += (c.sensitivity / c.scale) ** 2
    assert total.mu == float(np.sqrt(s2)) and total.delta == pytest.approx(3e-5)
    assert total.rho == pytest.approx(s2 / 2)
    assert compose_losses([lap.loss(), cals[0].loss()]).mu is None
    assert PrivacyLoss(0.5).rho == 0.125


def test_transcript_likelihood_is_the_privacy_loss():
    y = np.array([-1.0, 0.3, 2.5])
    scale = np.full(3, 1.7)
    np.testing.assert_allclose(element_log_ratio(DISCRETE_LAPLACE, y, 0.0, 1.0, scale),
                               laplace_privacy_loss(y, 0.0, 1.0, 1.7))
    np.testing.assert_allclose(element_log_ratio(COLORED, y, 0.0, 1.0, scale),
                               gaussian_privacy_loss(y, 0.0, 1.0, 1.7))
    np.testing.assert_array_equal(element_log_ratio("gaussian", y, 0.0, 1.0, scale),
                                  element_log_ratio(GAUSSIAN, y, 0.0, 1.0, scale))
    assert not element_log_ratio(LAPLACE, y, 0.0, 1.0, np.zeros(3)).any()


# --- a toy mechanism, defined here: no library file knows it ---------------------------------
class ToyNoise(NoiseType):
    """Exact discrete Laplace noise at twice the scale epsilon needs (epsilon-DP, wastefully):
    a new mechanism that only subclasses :class:`NoiseType`."""

    family = "toy laplace"
    exact = True
    mechanism = "Toy Laplace (discrete, twice the noise)"
    norm = 1
    needs_delta = False

    def calibrate(self, sensitivity: float, epsilon: float, delta: float = 0.0, *,
                  coordinates: int = 1, integer_valued: bool = False) -> NoiseCalibration:
        half = DISCRETE_LAPLACE.calibrate(sensitivity, epsilon / 2.0, delta,
                                          coordinates=coordinates,
                                          integer_valued=integer_valued)
        return NoiseCalibration(self, half.sensitivity, float(epsilon), 0.0, half.scale,
                                half.grid, half.sensitivity_steps, half.noise_steps,
                                half.nominal_scale)

    def details(self, cal: NoiseCalibration) -> dict[str, Any]:
        return {"sampler": "toy", "noise steps": cal.noise_steps}

    def sample_steps(self, steps: np.ndarray,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return discrete_laplace(steps, rngs)

    def log_ratio(self, y, mu0, mu1, scale):
        return (np.abs(y - mu1) - np.abs(y - mu0)) / scale


def test_a_toy_mechanism_is_charged_and_drawn():
    toy = ToyNoise()
    cal = noise.calibrate(toy, 1.0, 0.5, coordinates=2)
    assert cal.noise is toy and cal.mechanism == ToyNoise.mechanism and cal.leak is None
    assert cal.scale == pytest.approx(4.0, rel=1e-8)
    ledger = PrivacyLedger(budget=0.5)
    out = mechanisms.release(ledger, cal, [[10.0, 20.0]], [np.random.default_rng(0)],
                             label="sums")
    assert out.shape == (1, 2) and np.all(np.isfinite(out))
    assert ledger.total().epsilon == pytest.approx(0.5) and ledger.is_private
    assert ledger.entries[0].mechanism == ToyNoise.mechanism
    assert dict(ledger.entries[0].details)["sampler"] == "toy"
    assert noise_type(toy) is toy and toy.sampler == "discrete"
    assert math.isclose(cal.loss().epsilon, 0.25, rel_tol=1e-8)


def test_a_toy_mechanism_runs_the_engine_end_to_end():
    """docs/design.md, "How to add a mechanism": a noise type defined here, and nothing else,
    runs the DP-Lloyd loop, is planned, charged and drawn, and its transcript is scored."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, size=(200, 2))
    config = DPLloydConfig(3, (np.zeros(2), np.ones(2)), [0.25, 0.25, 0.5], noise=ToyNoise())
    assert config.noise == ToyNoise() and config.sampler == "discrete"
    result = run(X, config, 0, record_history=True)
    assert result.ledger.total().epsilon == pytest.approx(config.epsilon)
    assert result.ledger.is_private and result.ledger.is_fully_spent()
    drawn = {e.mechanism for e in result.ledger.entries if e.mechanism != "post-processing"}
    assert drawn == {ToyNoise.mechanism}
    assert plan_ledger(config).total() == result.ledger.total()
    scores = transcript_log_ratios(result, X, X[1:])
    assert np.all(np.isfinite(scores))
    # the same data and seed, with the library's discrete Laplace: different noise scale
    plain = run(X, replace(config, noise="laplace"), 0)
    assert not np.array_equal(plain.centroids, result.centroids)
