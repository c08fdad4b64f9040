"""A differentially private record count: the number of records N, released with discrete
Laplace noise when the user does not state it as public (book chapter 5; Su et al. 2016 read N
in their rule for the number of iterations).
"""

from __future__ import annotations

import numpy as np

from dpkmeans.privacy.accounting import PrivacyLedger
from dpkmeans.privacy.mechanisms import laplace_mechanism
from dpkmeans.validation import check_positive_int

__all__ = ["noisy_record_count"]


def noisy_record_count(n: int, epsilon: float, rng: np.random.Generator, *,
                       ledger: PrivacyLedger | None) -> int:
    """A differentially private record count for Su's rule: N + discrete Laplace noise
    of sensitivity 1 (add/remove), rounded and clamped to >= 1 (post-processing).

    Spends ``epsilon`` (charged to ``ledger``); exact and floating-point safe
    (:mod:`dpkmeans.privacy.noise`). The book spends a declared share of the budget
    on it when the user does not state N (chapter 5).

    Parameters
    ----------
    n : int
        The exact number of records (private under add/remove adjacency).
    epsilon : float
        The budget the count spends.
    rng : numpy.random.Generator
        The noise stream.
    ledger : PrivacyLedger or None
        The ledger charged for the release (``None``: a demonstration, not accounted).

    Returns
    -------
    int
        The noisy count, at least 1.

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a positive integer.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.privacy.counting import noisy_record_count
    >>> count = noisy_record_count(1000, 1.0, np.random.default_rng(0), ledger=None)
    >>> abs(count - 1000) < 50
    True
    """
    count = check_positive_int(n, "n")
    noisy = laplace_mechanism(float(count), 1.0, epsilon, rng, ledger=ledger,
                              label="N (record count)", integer_valued=True)
    if ledger is not None:
        ledger.post_process("N' = max(round(noisy N), 1), used by Su's rule for T")
    return max(int(np.rint(noisy)), 1)
