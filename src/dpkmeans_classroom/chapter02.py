"""Chapter 2's assignment: the Gaussian mechanism, its exact privacy profile, the classic and
the analytic calibrations, and probabilistic DP, for your own epsilon, delta, d and r.

Every reference is computed with the library:
:func:`dpkmeans.privacy.mechanisms.gaussian_delta`,
:func:`dpkmeans.privacy.mechanisms.gaussian_sigma_analytic`,
:func:`dpkmeans.privacy.mechanisms.laplace_scale`,
:func:`dpkmeans.privacy.loss.gaussian_pdp_delta` and, for the simulation,
:func:`dpkmeans.privacy.mechanisms.gaussian_mechanism` with the student's ``SEED``. The classic
formula is evaluated by hand past epsilon = 1, where the library (rightly) refuses it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkmeans.privacy.loss import gaussian_pdp_delta, gaussian_privacy_loss
from dpkmeans.privacy.mechanisms import (
    gaussian_delta,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    laplace_scale,
)
from dpkmeans.privacy.sensitivity import coordinate_bounds, lloyd_query_sensitivity
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["ASSIGNMENT"]

#: The simulation's delta and number of draws: a large delta, so that the tail is frequent
#: enough to count (as in the chapter's simulation).
SIM_DELTA = 0.01
SIM_DRAWS = 100_000

SETUP = """\
import numpy as np

from dpkmeans.privacy.mechanisms import (gaussian_delta, gaussian_mechanism,
                                 gaussian_sigma_analytic, laplace_scale)
from dpkmeans.privacy.loss import gaussian_pdp_delta, gaussian_privacy_loss

print(f"{STUDENT}: epsilon = {EPSILON}, delta = {DELTA}, d = {DIM}, r = {RADIUS}")"""


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The L2 and L1 sensitivities of the DP-Lloyd query on [-r, r]^d, the analytic sigma and
    the classic sigma (extrapolated past epsilon = 1), computed once."""
    box = (np.full(p["DIM"], -float(p["RADIUS"])), np.full(p["DIM"], float(p["RADIUS"])))
    # Delta_2: a record's largest L2 norm (sqrt(d r^2)) and the count's 1, in quadrature.
    l2 = math.sqrt(float(np.sum(coordinate_bounds(box) ** 2)) + 1.0)
    return {"l2": l2, "l1": lloyd_query_sensitivity(box).joint,
            "sigma": gaussian_sigma_analytic(l2, p["EPSILON"], p["DELTA"]),
            "classic": l2 * math.sqrt(2.0 * math.log(1.25 / p["DELTA"])) / p["EPSILON"]}


def _l2_sensitivity(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["l2"]


def _sigma_analytic(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["sigma"]


def _loss_mean(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return (c["l2"] / c["sigma"]) ** 2 / 2.0


def _classic_delta_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return gaussian_delta(p["EPSILON"], c["classic"], c["l2"]) / p["DELTA"]


def _classic_verdict(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    if _classic_delta_ratio(p, c) > 1.0:
        return 3
    return 1 if p["EPSILON"] < 1.0 else 2


def _pdp_tail_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return gaussian_pdp_delta(p["EPSILON"], c["sigma"], c["l2"]) / p["DELTA"]


def _less_noise(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    laplace_std = math.sqrt(2.0) * laplace_scale(c["l1"], p["EPSILON"])
    return 2 if c["sigma"] < laplace_std else 1


def _simulated_tail(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    rng = np.random.default_rng(p["SEED"])
    y = gaussian_mechanism(np.zeros(SIM_DRAWS), 1.0, p["EPSILON"], SIM_DELTA, rng, ledger=None,
                           sampler="continuous")
    sigma = gaussian_sigma_analytic(1.0, p["EPSILON"], SIM_DELTA)
    return float(np.mean(np.abs(gaussian_privacy_loss(y, 0.0, 1.0, sigma)) > p["EPSILON"]))


ASSIGNMENT = Assignment(
    chapter=2,
    slug="gaussian-pdp",
    title="The Gaussian mechanism, (ε, δ)-DP and probabilistic DP (chapter 2)",
    introduction=(
        "You calibrate the Gaussian mechanism for your own privacy parameters `EPSILON` and "
        "`DELTA`, for the DP-Lloyd query on the public box $[-r, r]^d$ (`RADIUS`, `DIM`) "
        "under add/remove adjacency, compare it with the classic formula and with the "
        "Laplace mechanism, and check probabilistic DP. You answer eight questions: six "
        "numbers that you compute in this notebook, with the library or by hand, and two "
        "multiple choices. Chapter 2 of the book (*The Gaussian mechanism, "
        "(ε, δ)-DP and probabilistic DP*) has everything you need."),
    pools={"EPSILON": (0.5, 0.9, 2.0, 5.0, 12.0), "DELTA": (1e-4, 1e-5, 1e-6),
           "DIM": (2, 4, 8, 16, 24), "RADIUS": (0.5, 1.0, 2.0)},
    setup=SETUP,
    questions=(
        Question(
            "l2_sensitivity",
            "What is the $L_2$ sensitivity $\\Delta_2$ of the DP-Lloyd query "
            "$(S_1, n_1, \\dots, S_k, n_k)$ on $[-r, r]^d$ under add/remove adjacency, for your "
            "`RADIUS` and `DIM`?",
            _l2_sensitivity,
            "Chapter 2, 'Approximate differential privacy', the definition of L2 "
            "sensitivity: one record changes one cluster's sum by a vector in the box and its "
            "count by 1; take the Euclidean length of that change.",
            solution="l2_sensitivity = np.sqrt(DIM * RADIUS**2 + 1)"),
        Question(
            "sigma_analytic",
            "What is the smallest noise standard deviation $\\sigma$ that makes the Gaussian "
            "mechanism on this query $(\\varepsilon, \\delta)$-DP for your `EPSILON` and "
            "`DELTA` (the analytic calibration of Balle and Wang (2018))?",
            _sigma_analytic,
            "Chapter 2, 'Classic versus analytic calibration': gaussian_sigma_analytic takes "
            "the L2 sensitivity, epsilon and delta.",
            solution="sigma_analytic = gaussian_sigma_analytic(l2_sensitivity, EPSILON, DELTA)"),
        Question(
            "loss_mean",
            "With that $\\sigma$, the privacy loss $\\mathcal L$ of an output of $M(D)$ on "
            "worst-case neighbours is a normal random variable. What is its mean?",
            _loss_mean,
            "Chapter 2, 'The privacy-loss random variable': the lemma gives its distribution "
            "in terms of the noise multiplier s = Delta_2 / sigma.",
            solution=("s = l2_sensitivity / sigma_analytic\n"
                      "loss_mean = s**2 / 2")),
        Question(
            "classic_delta_ratio",
            "The classic formula of Dwork and Roth gives "
            "$\\sigma = \\Delta_2 \\sqrt{2 \\ln(1.25/\\delta)} / \\varepsilon$ (evaluate it at "
            "your `EPSILON` even if $\\varepsilon \\ge 1$). What is the true $\\delta$ of the "
            "Gaussian mechanism with that $\\sigma$ at your `EPSILON`, divided by your "
            "`DELTA`?",
            _classic_delta_ratio,
            "Chapter 2, the exact privacy profile theorem and the calibration table: "
            "gaussian_delta(epsilon, sigma, sensitivity) is the smallest delta for that sigma.",
            # The true delta may be computed by hand with scipy's normal CDF, a difference of
            # two terms that loses a few digits to cancellation when it is tiny.
            rtol=1e-4,
            solution=("root = np.sqrt(2 * np.log(1.25 / DELTA))\n"
                      "sigma_classic = l2_sensitivity * root / EPSILON\n"
                      "classic_delta_ratio = gaussian_delta(EPSILON, sigma_classic,\n"
                      "                                     l2_sensitivity) / DELTA")),
        Question(
            "classic_verdict",
            "So, at your `EPSILON` and `DELTA`, what is the Gaussian mechanism with the "
            "classic $\\sigma$?",
            _classic_verdict,
            "Chapter 2, 'Classic versus analytic calibration': the theorem's condition on "
            "epsilon, and your previous answer (is the true delta above the target?).",
            choices=(("$(\\varepsilon, \\delta)$-DP, and the theorem of Dwork and Roth covers "
                      "it, since $\\varepsilon < 1$."),
                     ("$(\\varepsilon, \\delta)$-DP (its true $\\delta$ is at most the target), "
                      "although the theorem does not cover $\\varepsilon \\ge 1$."),
                     "Not $(\\varepsilon, \\delta)$-DP: its true $\\delta$ exceeds the target."),
            solution=("if classic_delta_ratio > 1:\n"
                      "    classic_verdict = 3\n"
                      "else:\n"
                      "    classic_verdict = 1 if EPSILON < 1 else 2")),
        Question(
            "pdp_tail_ratio",
            "Probabilistic DP asks for $\\Pr[|\\mathcal L| > \\varepsilon] \\le \\delta$. For "
            "the Gaussian mechanism with your analytic $\\sigma$, what is "
            "$\\Pr[|\\mathcal L| > \\varepsilon]$ at your `EPSILON`, divided by your `DELTA`?",
            _pdp_tail_ratio,
            "Chapter 2, 'Probabilistic differential privacy': gaussian_pdp_delta(epsilon, "
            "sigma, sensitivity) is the PDP tail; the converse of 'PDP implies DP' fails.",
            solution=("pdp_tail_ratio = gaussian_pdp_delta(EPSILON, sigma_analytic,\n"
                      "                                    l2_sensitivity) / DELTA")),
        Question(
            "less_noise",
            "Release the same query once with the Laplace mechanism at `EPSILON` (scale "
            "$\\Delta_1 / \\varepsilon$, $\\Delta_1 = dr + 1$) and once with your analytic "
            "Gaussian mechanism at (`EPSILON`, `DELTA`). Which adds noise of the smaller "
            "standard deviation to each coordinate, for your `DIM` and `RADIUS`?",
            _less_noise,
            "Chapter 2, the exercise comparing the two mechanisms on the DP-Lloyd query: a "
            "Laplace variable of scale b has standard deviation sqrt(2) b.",
            choices=("The Laplace mechanism.", "The Gaussian mechanism."),
            solution=("laplace_std = np.sqrt(2) * laplace_scale(DIM * RADIUS + 1, EPSILON)\n"
                      "less_noise = 2 if sigma_analytic < laplace_std else 1")),
        Question(
            "simulated_tail",
            "Simulate, as the chapter does: with `rng = np.random.default_rng(SEED)`, draw "
            f"`y = gaussian_mechanism(np.zeros({SIM_DRAWS:_}), 1.0, EPSILON, {SIM_DELTA}, rng, "
            "ledger=None, sampler=\"continuous\")`, the outputs of $M(D)$ for a count with "
            "$f(D) = 0$, $\\Delta_2 = 1$ and $\\delta = "
            f"{SIM_DELTA}$. Compute each output's privacy loss against $f(D') = 1$, with the "
            "$\\sigma$ that mechanism used, and report the fraction of draws with "
            "$|\\mathcal L| > \\varepsilon$.",
            _simulated_tail,
            "Chapter 2, 'Checking the lemma and the theorem by simulation': the mechanism's "
            "sigma is gaussian_sigma_analytic(1.0, EPSILON, delta), and gaussian_privacy_loss "
            "takes the outputs, f(D), f(D') and sigma. Create the generator in the same cell.",
            solution=("rng = np.random.default_rng(SEED)\n"
                      f"y = gaussian_mechanism(np.zeros({SIM_DRAWS:_}), 1.0, EPSILON, "
                      f"{SIM_DELTA}, rng, ledger=None,\n"
                      "                       sampler=\"continuous\")\n"
                      f"sigma = gaussian_sigma_analytic(1.0, EPSILON, {SIM_DELTA})\n"
                      "loss = gaussian_privacy_loss(y, 0.0, 1.0, sigma)\n"
                      "simulated_tail = np.mean(np.abs(loss) > EPSILON)")),
    ),
    prepare=_prepare,
)
