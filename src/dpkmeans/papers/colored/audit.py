"""The audit of the colored-noise paper (Ravi, Scaglione and Peisert 2021; book chapter 9):
a neighbour pair built to expose local sensitivity.

The published release adds N(0, Sigma(X)) to the converged centroids, with Sigma(X) from the
leave-one-out Delta's of X itself: a local sensitivity. On D, two tight groups of G records,
rings of radius ``JITTER`` around A = (0.2, 0.3) and B = (0.8, 0.7) (so their means are
exactly A and B), in the public box [0, 1]^2: every Delta has norm JITTER / (G - 1), so the
noise is of that order. (Rings, not repeated points: with all of a cluster's Delta's zero the
closed form's M is singular and CEDS's code fails.) D' adds one record at the corner (0, 0),
which joins A's cluster:
A's centroid moves by |A| / (G + 1), about 7e-4 for G = 500, hundreds of times the noise the
mechanism used on D. The statistic ``min_j |c_j - A|`` is then about 1e-6 on D and about 1e-3
on D', so a threshold event separates the two datasets, and the audit's lower bound on epsilon
grows with the trials, far past the claimed epsilon (and past the eps K d CEDS charges). The
corrected mechanism's noise depends on the public box only, and the same audit finds nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult
from dpkmeans.files import write_csv
from dpkmeans.papers.colored.variants import as_published, corrected
from dpkmeans.study import audit
from dpkmeans.validation import check_positive_int

__all__ = ["A", "B", "JITTER", "BOX", "SETTINGS", "audit_pair", "distance_to_a",
           "audit_configs", "run_audits", "write_audit"]

A = np.array([0.2, 0.3])
B = np.array([0.8, 0.7])
#: The radius of A's ring: A's cluster is not a single point, so its Delta's are not all zero.
JITTER = 1e-3
BOX = (np.zeros(2), np.ones(2))
#: The audited (epsilon, delta): the book's default and CEDS's class defaults.
SETTINGS = ((1.0, 1e-5), (0.1, 0.1))


def _ring(centre: np.ndarray, size: int) -> np.ndarray:
    angles = 2.0 * np.pi * np.arange(size) / size
    ring = centre + JITTER * np.column_stack([np.cos(angles), np.sin(angles)])
    return ring - (ring.mean(axis=0) - centre)  # the mean is the centre (up to rounding)


def audit_pair(group_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(D, D'): rings of ``group_size`` records around A and B, and D plus the corner (0, 0)
    (add/remove neighbours, :func:`dpkmeans.study.audit.corner_pair`)."""
    G = check_positive_int(group_size, "group_size")
    if G < 3:
        raise ValueError(f"group_size must be at least 3 (a ring around each centre), got {G}")
    return audit.corner_pair(np.vstack([_ring(A, G), _ring(B, G)]), BOX, corner=np.zeros(2))


def distance_to_a(result: DPLloydResult) -> np.ndarray:
    """Per replica, the distance from A to the nearest released centroid, shape (replicas, 1)."""
    C = np.asarray(result.centroids)
    return np.linalg.norm(C - A, axis=2).min(axis=1)[:, None]


def audit_configs(epsilon: float, delta: float) -> dict[str, DPLloydConfig]:
    """The published release (CEDSKMeans) and the corrected colored DP-Lloyd on the box."""
    return {"as published": as_published(2, epsilon, delta, BOX),
            "corrected": corrected(2, epsilon, delta, BOX)}


def run_audits(epsilon: float, delta: float, trials: int, *, group_size: int = 500,
               seed: int = 0, confidence: float = 0.99) -> list[audit.AuditReport]:
    """Audit both versions at the claimed (epsilon, delta) with ``trials`` runs per dataset."""
    D, D_prime = audit_pair(group_size)
    return [audit.audit_configuration(f"{name} (eps = {epsilon:g}, delta = {delta:g})", config,
                                      D, D_prime, distance_to_a, trials=trials,
                                      confidence=confidence, seed=seed,
                                      claimed_epsilon=epsilon, delta=delta)
            for name, config in audit_configs(epsilon, delta).items()]


def write_audit(out_path, *, trials: int = 1000, seed: int = 20261123) -> pd.DataFrame:
    """Every audit of ``SETTINGS`` as one CSV (``data/results/colored_audit.csv``, read by
    the claims ledger); ``seconds`` is dropped so that a re-run writes the same file."""
    rows = [r.as_row() for eps, delta in SETTINGS
            for r in run_audits(eps, delta, trials, seed=seed)]
    frame = pd.DataFrame(rows).drop(columns="seconds")
    write_csv(frame, out_path)
    return frame


if __name__ == "__main__":  # python -m dpkmeans.papers.colored.audit [out] [trials]
    import sys
    import warnings
    from pathlib import Path

    from dpkmeans.errors import PrivacyLeakWarning

    root = Path(__file__).resolve().parents[4]
    out = sys.argv[1] if len(sys.argv) > 1 else root / "data/results/colored_audit.csv"
    with warnings.catch_warnings():  # deliberate: the published release's leaks are audited
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        print(write_audit(out, trials=int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
              .to_string())
