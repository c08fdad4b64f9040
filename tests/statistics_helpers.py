"""Statistical checks shared by the Monte-Carlo tests (fixed seeds, so never flaky).

Each check is paired, in the tests, with a deliberately mis-scaled sampler that the same
check must reject: a statistical test that cannot fail is not a test.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: Reject at this p-value. With fixed seeds the outcome is deterministic; the threshold only
#: says how surprising a sample must be before we call the scale wrong.
ALPHA = 1e-3


def ks_pvalue(samples: np.ndarray, dist: stats.rv_continuous) -> float:
    """Kolmogorov-Smirnov p-value of ``samples`` against a frozen scipy distribution."""
    return float(stats.kstest(np.ravel(samples), dist.cdf).pvalue)


def chi2_pvalue(picks: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square goodness-of-fit p-value of categorical ``picks`` against ``probs``."""
    observed = np.bincount(picks, minlength=probs.size)
    expected = probs * picks.size
    return float(stats.chisquare(observed, expected).pvalue)
