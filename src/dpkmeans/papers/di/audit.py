"""Auditing the exact-counts reducer of Shang et al. (2021) (book chapter 11).

The pair, under replace adjacency on [0, 1]: D holds ``group_size`` records at 0 and one at 1;
D' replaces the record at 1 by one at 0. The runs start from the public centroids 0 and 0.5
(the audit fixes them; the published canopy would pick them from the data). In D the record at
1 forms cluster 2; in D' cluster 2 is empty. As published the reducer divides by the exact
count, so an empty cluster keeps its centroid (0.5) exactly, while a cluster of one record moves
with the noise: the event "cluster 2 stayed at 0.5" has probability 1 on D' and almost 0 on D.
Its likelihood ratio is unbounded: the audit's lower bound on epsilon grows with the number of
trials (about ln(trials)), so no epsilon describes the release. The corrected reducer noises the
counts; the same audit is consistent with its epsilon.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.loop import DPLloydResult
from dpkmeans.engine.strategies import PublicStart
from dpkmeans.files import write_csv
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.flaws import CANOPY_INITIALISATION
from dpkmeans.study import audit

__all__ = ["BOX", "START", "audit_pair", "cluster_two_moved", "audit_configs", "run_audits",
           "write_audit", "SETTINGS"]

BOX = (np.zeros(1), np.ones(1))
START = np.array([[0.0], [0.5]])
#: (rho, trials) of the committed audit: the bound on the published reducer grows with trials.
SETTINGS = ((0.001, 2000), (0.001, 20000))


def audit_pair(group_size: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """D (``group_size`` records at 0 and one at 1) and D' (the one at 1 replaced by 0)."""
    zeros = np.zeros((group_size, 1))
    return np.vstack([zeros, [[1.0]]]), np.vstack([zeros, [[0.0]]])


def cluster_two_moved(result: DPLloydResult) -> np.ndarray:
    """|c_2 - 0.5|: how far cluster 2's released centroid moved from its start."""
    return np.abs(result.centroids[:, 1, 0] - START[1, 0])


def _fixed_start(bounds: tuple[np.ndarray, np.ndarray], k: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The audit's public start (0 and 0.5)."""
    return START.copy()


def audit_configs(rho: float) -> dict[str, DPLloydConfig]:
    """The published reducer (printed rule: one iteration at eps(rho), exact counts) and the
    corrected one, at rho with m = 10001, both from the audit's fixed public start."""
    published = variants.kmeans_as_published(BOX, rho=rho, reading="printed",
                                             data_derived_bounds=False)
    published = replace(published, start=PublicStart(_fixed_start),
                        flaws=tuple(f for f in published.flaws if f is not CANOPY_INITIALISATION))
    corrected = replace(variants.kmeans_corrected(BOX, rho=rho, iterations=1),
                        start=PublicStart(_fixed_start))
    return {"as published (exact counts)": published, "corrected (noisy counts)": corrected}


def run_audits(rho: float, trials: int, *, seed: int = 0,
               confidence: float = 0.99) -> list[audit.AuditReport]:
    """Audit both reducers against the epsilon the paper states for rho, eps(rho, m)."""
    D, D_prime = audit_pair()
    out = []
    for name, config in audit_configs(rho).items():
        out.append(audit.audit_configuration(
            f"{name} (rho = {rho:g}, {trials} trials)", config, D, D_prime, cluster_two_moved,
            trials=trials, confidence=confidence, seed=seed,
            claimed_epsilon=variants.epsilon_from_rho(rho, variants.M_NUMERIC)))
    return out


def write_audit(out_path, *, seed: int = 20261125) -> pd.DataFrame:
    """Every audit of ``SETTINGS`` as one CSV (``data/results/di_audit.csv``); ``seconds`` is
    dropped so that a re-run writes the same file."""
    rows = [r.as_row() for rho, trials in SETTINGS for r in run_audits(rho, trials, seed=seed)]
    frame = pd.DataFrame(rows).drop(columns="seconds")
    write_csv(frame, out_path)
    return frame


if __name__ == "__main__":  # python -m dpkmeans.papers.di.audit [out]
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    out = sys.argv[1] if len(sys.argv) > 1 else root / "data/results/di_audit.csv"
    print(write_audit(out).to_string())
