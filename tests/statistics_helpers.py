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


def max_log_ratio_lower_bound(
    samples0: np.ndarray, samples1: np.ndarray, edges: np.ndarray, confidence: float = 1 - 1e-4
) -> float:
    """A high-confidence lower bound on max over bins of |ln P0(bin) / P1(bin)|.

    Uses Clopper-Pearson intervals per bin (Bonferroni over bins), so a value above epsilon
    is evidence of a privacy violation, not sampling noise.
    """
    c0, _ = np.histogram(samples0, bins=edges)
    c1, _ = np.histogram(samples1, bins=edges)
    n0, n1 = samples0.size, samples1.size
    alpha = (1 - confidence) / (2 * c0.size)
    lo0 = stats.beta.ppf(alpha, c0, n0 - c0 + 1)
    hi0 = stats.beta.ppf(1 - alpha, c0 + 1, n0 - c0)
    lo1 = stats.beta.ppf(alpha, c1, n1 - c1 + 1)
    hi1 = stats.beta.ppf(1 - alpha, c1 + 1, n1 - c1)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.log(lo0 / hi1)
        down = np.log(lo1 / hi0)
    bound = np.nanmax(np.where(np.isfinite(up), up, np.nan).tolist()
                      + np.where(np.isfinite(down), down, np.nan).tolist())
    return float(max(bound, 0.0))
