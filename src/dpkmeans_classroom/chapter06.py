"""Chapter 6's assignment: audit privacy claims from the outside, on your own budget and seed.

The student turns a threshold test on Laplace outputs into a lower bound on epsilon (exactly,
then from their own seeded trials with Clopper-Pearson bounds), audits a half-scale Laplace and
DPLloyd that skips empty clusters with :mod:`dpkmeans.study.audit`, bounds what one coordinate of
diffprivlib's swapped split can reveal, and measures the floating-point exposure of numpy's
Laplace sampler, all as chapter 6 (*Auditing a mechanism*) does. Each audit uses a few hundred
trials (``TRIALS``), so a notebook runs in seconds. The trials and the audited pair are drawn in
the setup cell from the student's ``SEED``; ``prepare`` runs that same cell
(:func:`~dpkmeans_classroom.spec.run_setup`), so the references see the student's very arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from dpkmeans.engine import schedules
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.papers.su.flaws import SKIP_EMPTY_CLUSTERS, SkipEmptyClusters
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.privacy.floating_point import laplace_output_possible
from dpkmeans.study import audit
from dpkmeans_classroom.spec import Assignment, Question, run_setup

__all__ = ["ASSIGNMENT"]

#: Confidence of every bound (the chapter's).
CONFIDENCE = 0.99

SETUP = """\
import numpy as np

from dpkmeans.study import audit
from dpkmeans.engine import schedules
from dpkmeans.privacy import mechanisms as mech
from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.papers.su.flaws import SKIP_EMPTY_CLUSTERS, SkipEmptyClusters
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.privacy.floating_point import laplace_output_possible

rng = np.random.default_rng(SEED)
# TRIALS releases of a count (sensitivity 1) by the Laplace mechanism at EPSILON, with the
# library's exact sampler: the count is 0 on D and 1 on its neighbour D'
y0 = mech.laplace_mechanism(0.0, 1.0, EPSILON, rng, ledger=None, repeats=TRIALS)
y1 = mech.laplace_mechanism(1.0, 1.0, EPSILON, rng, ledger=None, repeats=TRIALS)

# The chapter's pair for DPLloyd that skips empty clusters: 20 records near the first of two
# fixed initial centroids; D' adds one record near the second, which is empty on D.
INIT2 = np.array([[-0.5, -0.5], [0.5, 0.5]])
near = np.clip(rng.normal(-0.5, 0.05, (20, 2)), -1, 1)
EMPTY_D, EMPTY_D_PRIME = audit.empty_cluster_pair(near, [0.6, 0.6])


def fixed_two(bounds, k, rng):
    \"\"\"Public initial centroids: one near the data, one far from it.\"\"\"
    return INIT2.copy()


def second_centroid_moved(result):
    \"\"\"How far the second centroid moved from its initial position, per replica.\"\"\"
    moved = result.centroids[:, 1] - result.initial_centroids[:, 1]
    return np.linalg.norm(moved, axis=1)


print(f"{STUDENT}: EPSILON = {EPSILON}, TAU = {TAU}, TRIALS = {TRIALS}, "
      f"CONFIDENCE = {CONFIDENCE}, SWAP_D = {SWAP_D}")"""


def _prepare(p: Mapping[str, Any]) -> dict[str, Any]:
    """The setup cell's names (its trials ``y0`` and ``y1``, the pair ``EMPTY_D`` and
    ``EMPTY_D_PRIME``, ``fixed_two`` and ``second_centroid_moved``), the counts of the event
    {y <= TAU} in its trials, and the half-scale Laplace audit."""
    c = run_setup(SETUP, p)
    half = audit.laplace_count_release(p["EPSILON"], noise_factor=0.5)
    c["h0"], c["h1"] = int((c["y0"] <= p["TAU"]).sum()), int((c["y1"] <= p["TAU"]).sum())
    c["half_scale"] = audit.audit_mechanism("half scale", half, p["EPSILON"],
                                            trials=p["TRIALS"], confidence=p["CONFIDENCE"],
                                            seed=p["SEED"])
    return c


def _exact_log_ratio(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    scale = 1.0 / p["EPSILON"]
    b = stats.laplace.cdf(p["TAU"], loc=0.0, scale=scale)
    a = stats.laplace.cdf(p["TAU"], loc=1.0, scale=scale)
    return float(np.log(b / a))


def _point_estimate(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return float(np.log(c["h0"] / c["h1"]))


def _fixed_event_bound(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    n = p["TRIALS"]
    bound = audit.log_ratio_bound(c["h0"], n, c["h1"], n, 0.0, 1.0 - p["CONFIDENCE"])
    return max(float(bound), 0.0)


def _half_scale_bound(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    return c["half_scale"].lower_bound


def _half_scale_verdict(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # option 2 is never right: an audit can only bound epsilon from below (theorem "A sound
    # audit"); 1 or 3 is the verdict of this student's seeded audit
    return 1 if c["half_scale"].verdict == "violation detected" else 3


def _skip_empty_bound(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    config = DPLloydConfig(n_clusters=2, bounds=(-np.ones(2), np.ones(2)),
                           schedule=schedules.uniform(p["EPSILON"], 3),
                           start=PublicStart(c["fixed_two"]), step=SkipEmptyClusters(),
                           flaws=(SKIP_EMPTY_CLUSTERS,))
    report = audit.audit_configuration("skips empty clusters", config, c["EMPTY_D"],
                                       c["EMPTY_D_PRIME"], c["second_centroid_moved"],
                                       trials=p["TRIALS"], confidence=p["CONFIDENCE"],
                                       seed=p["SEED"])
    return report.lower_bound


def _one_coordinate(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    # swapped: a coordinate's sum gets the count's share, the count a dimension's share
    eps_count, eps_dimension = schedules.su_split(p["EPSILON"], p["SWAP_D"])
    return eps_count + eps_dimension


def _exposed_share(p: Mapping[str, Any], c: Mapping[str, Any]) -> float:
    rng = np.random.default_rng(p["SEED"] + 1)
    y = mech.laplace_mechanism(0.0, 1.0, p["EPSILON"], rng, ledger=None, repeats=p["TRIALS"],
                               sampler="continuous")
    return float(np.mean(~laplace_output_possible(y, 1.0, 1.0 / p["EPSILON"])))


SECTION_TEST = "Chapter 6, 'Privacy as a hypothesis test'"
SECTION_BROKEN = "Chapter 6, 'Four broken variants'"

ASSIGNMENT = Assignment(
    chapter=6,
    slug="auditing",
    title="Auditing privacy claims (chapter 6)",
    introduction=(
        "You test privacy claims from the outside, as chapter 6 of the book (*Auditing a "
        "mechanism*) does, with your own claimed budget `EPSILON`, threshold `TAU`, number of "
        "trials per dataset `TRIALS` and seed `SEED`. Seven answers are numbers that you "
        "compute in this notebook with `dpkmeans.study.audit` or by hand; one is a multiple "
        "choice.\n\n"
        "The setup cell draws `y0` and `y1`, `TRIALS` outputs of the Laplace mechanism "
        "(sensitivity 1, budget `EPSILON`) on a count that is $0$ on $D$ and $1$ on its "
        "neighbour $D'$, and builds the chapter's neighbouring pair for a DPLloyd that skips "
        "empty clusters. The audits keep to a few hundred trials so that the notebook runs "
        "in seconds; pass `seed=SEED` to every audit so that your numbers can be checked."),
    pools={"EPSILON": (0.5, 1.0, 2.0), "TAU": (0.25, 0.5, 0.75), "TRIALS": (400, 600, 800),
           "SWAP_D": (8, 16, 24)},
    fixed={"CONFIDENCE": CONFIDENCE},
    setup=SETUP,
    questions=(
        Question(
            "exact_log_ratio",
            "Consider the test that decides $D$ when the output lands in $E = \\{y \\le "
            "\\mathrm{TAU}\\}$. For the Laplace mechanism with scale $1/\\varepsilon$ "
            "($\\varepsilon$ = `EPSILON`), count $0$ on $D$ and $1$ on $D'$, what is the exact "
            "log ratio $\\ln(b / a)$ of its power $b = \\Pr[M(D) \\in E]$ to its "
            "false-positive rate $a = \\Pr[M(D') \\in E]$?",
            _exact_log_ratio,
            f"{SECTION_TEST}: b and a are values of the Laplace distribution function with "
            "centres 0 and 1 at TAU (scipy.stats.laplace.cdf, or the formula on each side of "
            "the centre).",
            solution=("b = 1 - 0.5 * np.exp(-TAU * EPSILON)  # TAU is right of 0, the centre on D\n"
                      "a = 0.5 * np.exp(-(1 - TAU) * EPSILON)  # and left of 1, the centre on D'\n"
                      "exact_log_ratio = np.log(b / a)")),
        Question(
            "point_estimate",
            "Count the outputs in $E = \\{y \\le \\mathrm{TAU}\\}$ among your trials: $h_0$ of "
            "the `TRIALS` in `y0` and $h_1$ of those in `y1`. What is the point estimate "
            "$\\ln\\big((h_0/n) / (h_1/n)\\big)$ of the log ratio?",
            _point_estimate,
            f"{SECTION_TEST}: count y0 <= TAU and y1 <= TAU, then take the log of the ratio "
            "of the two empirical frequencies.",
            solution=("h0, h1 = int((y0 <= TAU).sum()), int((y1 <= TAU).sum())\n"
                      "point_estimate = np.log(h0 / h1)")),
        Question(
            "fixed_event_bound",
            "The event $E$ was fixed before the trials were drawn, so all of them may be used "
            "for evaluation. What lower bound on $\\varepsilon$ does the theorem *A sound "
            "audit* give from $h_0$ and $h_1$ at confidence `CONFIDENCE` ($\\delta = 0$)? "
            "Report $0$ if the bound is negative.",
            _fixed_event_bound,
            f"{SECTION_TEST}, the theorem 'A sound audit' and the Clopper-Pearson bounds: "
            "check how the confidence is shared between the bound on b and the bound on a "
            "(audit.log_ratio_bound takes the total level).",
            points=2.0,
            solution=("bound = audit.log_ratio_bound(h0, TRIALS, h1, TRIALS, 0.0, "
                      "1 - CONFIDENCE)\n"
                      "fixed_event_bound = max(float(bound), 0.0)")),
        Question(
            "half_scale_bound",
            "Audit a Laplace mechanism with half the correct noise scale that claims "
            "`EPSILON`: `audit.audit_mechanism` with the release "
            "`audit.laplace_count_release(EPSILON, noise_factor=0.5)`, `TRIALS` trials per "
            "dataset, confidence `CONFIDENCE` and `seed=SEED`. What lower bound does it "
            "report?",
            _half_scale_bound,
            f"{SECTION_BROKEN}, the half-scale Laplace: call audit.audit_mechanism with "
            "exactly the arguments of the question and read the report's lower_bound.",
            solution=("half = audit.laplace_count_release(EPSILON, noise_factor=0.5)\n"
                      "report = audit.audit_mechanism(\"half scale\", half, EPSILON,\n"
                      "                               trials=TRIALS, confidence=CONFIDENCE,\n"
                      "                               seed=SEED)\n"
                      "half_scale_bound = report.lower_bound")),
        Question(
            "half_scale_verdict",
            "Which statement describes what your audit of the half-scale Laplace shows?",
            _half_scale_verdict,
            "Chapter 6, 'Privacy as a hypothesis test' and 'What an audit cannot show': "
            "compare your lower bound with the claim, and remember which side of epsilon an "
            "audit can bound.",
            choices=(("Violation detected: with confidence `CONFIDENCE`, the mechanism is "
                      "not `EPSILON`-DP."),
                     "Consistent: the audit proves that the mechanism is `EPSILON`-DP.",
                     ("Consistent: no violation was found with this pair, this event and "
                      "this number of trials, although the mechanism is not `EPSILON`-DP.")),
            solution=("verdict = report.verdict  # \"violation detected\" or \"consistent\"\n"
                      "half_scale_verdict = 1 if verdict == \"violation detected\" else 3")),
        Question(
            "skip_empty_bound",
            "Audit DPLloyd that skips the noise on empty clusters (diffprivlib 0.6.6): a "
            "`DPLloydConfig` with 2 clusters on the box $[-1, 1]^2$, the schedule "
            "`schedules.uniform(EPSILON, 3)`, the start `PublicStart(fixed_two)`, the release "
            "`step=SkipEmptyClusters()` and `flaws=(SKIP_EMPTY_CLUSTERS,)` (diffprivlib's "
            "flaw and the release that reproduces it, imported in the setup cell). "
            "Run `audit.audit_configuration` on "
            "`EMPTY_D` and `EMPTY_D_PRIME` with the statistic `second_centroid_moved`, "
            "`TRIALS` trials, confidence `CONFIDENCE` and `seed=SEED`. What lower bound does "
            "it report?",
            _skip_empty_bound,
            f"{SECTION_BROKEN}, the design 'Skipping empty clusters': build the configuration "
            "with exactly the fields of the question and read the report's lower_bound.",
            solution=("box = (-np.ones(2), np.ones(2))\n"
                      "skip = DPLloydConfig(n_clusters=2, bounds=box,\n"
                      "                     schedule=schedules.uniform(EPSILON, 3),\n"
                      "                     start=PublicStart(fixed_two),\n"
                      "                     step=SkipEmptyClusters(),\n"
                      "                     flaws=(SKIP_EMPTY_CLUSTERS,))\n"
                      "skip_report = audit.audit_configuration(\n"
                      "    \"skips empty clusters\", skip, EMPTY_D, EMPTY_D_PRIME,\n"
                      "    second_centroid_moved, trials=TRIALS, confidence=CONFIDENCE,\n"
                      "    seed=SEED)\n"
                      "skip_empty_bound = skip_report.lower_bound")),
        Question(
            "one_coordinate",
            "diffprivlib swaps Su et al.'s count and per-dimension budget shares. In one "
            "iteration with declared budget `EPSILON` in dimension $d$ = `SWAP_D`, what is "
            "the largest log ratio that an event on a single released centroid coordinate "
            "$c_i = S'_i / n'$ can have (the exercise on one coordinate)?",
            _one_coordinate,
            "Chapter 6, 'The swapped split: what a black-box audit cannot see' and its "
            "exercise on one coordinate: c_i is post-processing of S'_i and n'. Which "
            "budget does each get after the swap? (schedules.su_split gives Su's shares.)",
            solution=("eps_count, eps_dimension = schedules.su_split(EPSILON, SWAP_D)\n"
                      "one_coordinate = eps_count + eps_dimension  # S'_i and n', swapped")),
        Question(
            "exposed_share",
            "Draw `TRIALS` outputs of the Laplace mechanism on the count $0$ with numpy's "
            "floating-point sampler: `mech.laplace_mechanism(0.0, 1.0, EPSILON, "
            "np.random.default_rng(SEED + 1), ledger=None, repeats=TRIALS, "
            "sampler=\"continuous\")`. Which fraction of them could *not* have been produced "
            "on the count $1$ by any random bits?",
            _exposed_share,
            "Chapter 6, 'Floating-point attacks on Laplace sampling': "
            "floating_point.laplace_output_possible(y, value, scale) says, for each output, "
            "whether the sampler could return it from that value at that noise scale.",
            solution=("y = mech.laplace_mechanism(0.0, 1.0, EPSILON, "
                      "np.random.default_rng(SEED + 1),\n"
                      "                          ledger=None, repeats=TRIALS, "
                      "sampler=\"continuous\")\n"
                      "exposed_share = np.mean(~laplace_output_possible(y, 1.0, 1 / EPSILON))")),
    ),
    prepare=_prepare,
)
