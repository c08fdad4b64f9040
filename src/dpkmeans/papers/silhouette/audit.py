"""The audit of Zhang, Liu and Wang (2018) (book chapter 8): a dataset built to expose the shared noise draw.

As published, one Laplace draw eta is added to a cluster's sum *and* to its count (the
paper's Noise_k^t appears in both), so every released coordinate is c_i = (S_i + eta) / (n + eta) and

    (1 - c_1) / (1 - c_2) = (n - S_1) / (n - S_2),

a function of the data with no noise in it at all (whenever the centroid is not clipped to
the box). On D, two groups of G identical records at A = (0.2, 0.3) and B = (0.8, 0.7) in the
public box [0, 1]^2, file order A then B (so the paper's equal splits are the groups), the
cluster of A has the ratio (0.8 G) / (0.7 G) = 8/7 exactly. D' adds one record at the corner
(0, 0), which joins A's cluster: its ratio becomes (0.8 G + 1) / (0.7 G + 1). The statistic
``min_j |ratio_j - 8/7|`` is 0 (to rounding) on D and far from 0 on D', so the threshold event
``statistic <= 1e-9`` separates the two datasets and the audit's lower bound on epsilon grows
with the trials, however large the claimed epsilon. The corrected method draws the sum's and
the count's noise independently, and the same audit finds nothing.
"""

from __future__ import annotations

import numpy as np

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult
from dpkmeans.papers.silhouette.variants import as_published, corrected
from dpkmeans.study import audit
from dpkmeans.validation import check_positive_int

__all__ = ["GROUPS", "RATIO", "audit_pair", "ratio_statistic", "audit_configs", "run_audits"]

#: The two groups of the audit dataset, in the public box [0, 1]^2.
GROUPS = np.array([[0.2, 0.3], [0.8, 0.7]])
#: (1 - A_1) / (1 - A_2): the ratio the first group's cluster shows on D.
RATIO = (1.0 - GROUPS[0, 0]) / (1.0 - GROUPS[0, 1])
BOX = (np.zeros(2), np.ones(2))
#: Rounding tolerance of the event "the ratio is exactly D's".
TOLERANCE = 1e-9


def audit_pair(group_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(D, D'): two groups of ``group_size`` records in file order, and D plus the corner
    (0, 0) (add/remove neighbours, :func:`dpkmeans.study.audit.corner_pair`)."""
    G = check_positive_int(group_size, "group_size")
    return audit.corner_pair(np.repeat(GROUPS, G, axis=0), BOX, corner=np.zeros(2))


def ratio_statistic(result: DPLloydResult) -> np.ndarray:
    """min_j |(1 - c_j1) / (1 - c_j2) - 8/7| of every replica's released centroids (inf where
    a centroid touches the top of the box)."""
    C = result.centroids
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (1.0 - C[..., 0]) / (1.0 - C[..., 1])
    gap = np.abs(ratio - RATIO)
    return np.nanmin(np.where(np.isfinite(gap), gap, np.inf), axis=1)


def audit_configs(epsilon: float) -> dict[str, DPLloydConfig]:
    """The two versions on the public box (the paper's min-max scaling aside: the audit
    isolates the noise)."""
    return {"as published": as_published(2, epsilon, BOX, data_derived_bounds=False),
            "corrected": corrected(2, epsilon, BOX)}


def run_audits(epsilon: float, trials: int, *, group_size: int = 500, seed: int = 0,
               confidence: float = 0.99) -> list[audit.AuditReport]:
    """Audit both versions at the claimed ``epsilon`` with ``trials`` runs per dataset."""
    D, D_prime = audit_pair(group_size)

    def statistic(result: DPLloydResult) -> np.ndarray:
        return np.minimum(ratio_statistic(result), 1.0)[:, None]  # finite, for the events

    return [audit.audit_configuration(f"{name} (ε = {epsilon:g})", config, D, D_prime,
                                      statistic, trials=trials, confidence=confidence, seed=seed)
            for name, config in audit_configs(epsilon).items()]
