"""What a fit checks, and says, about the data before it draws any noise: no more clusters
than records, and that values outside the public box were clipped.

The DP-Lloyd loop (:func:`dpkmeans.engine.loop.run`) and the algorithms that run themselves
(:func:`dpkmeans.engine.standalone.run_standalone`) warn about clipping; the estimators call
:func:`check_clusters` before any noise of a fit, on the records given and on a public
``n_records``. The engine's ``run`` does not refuse k > N itself: the audits run it on
neighbouring datasets of a few records, with more (internal) clusters than records on purpose
(DP-KCCM's n k, empty clusters' noise). Neither message quotes a private count: the number of
records and the number of clipped values are the data holder's (``docs/design.md``, "Privacy
rules").
"""

from __future__ import annotations

import warnings

from dpkmeans.errors import ClippingWarning, caller_stacklevel

__all__ = ["check_clusters", "warn_clipped", "CLIPPED"]

#: The :class:`~dpkmeans.errors.ClippingWarning`'s message: that clipping happened, not how
#: many values or in which columns (both depend on the private records).
CLIPPED = ("values of X outside the public bounds were clipped to them (how many, and where, "
           "is private and not shown: compare X with the bounds to find them)")


def check_clusters(n_clusters: int, n_records: int, *, public: bool = False) -> None:
    """Refuse more clusters than records: at most one cluster per record can be non-empty, so
    the others would be noise alone, and the run's time grows with k for nothing.

    Parameters
    ----------
    n_clusters : int
        k.
    n_records : int
        The number of records: the public ``n_records`` a rule reads (``public=True``, quoted
        in the message), or the records given to the run (the data holder's, never quoted).
    public : bool, default False
        Whether ``n_records`` is a public input.

    Raises
    ------
    ValueError
        If ``n_clusters > n_records``; the message says the limit and what to change.

    Examples
    --------
    >>> from dpkmeans.engine.checks import check_clusters
    >>> check_clusters(3, 237)
    >>> check_clusters(1000, 237, public=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: n_clusters = 1000 exceeds n_records = 237: at most one cluster per record; ...
    """
    if n_clusters <= n_records:
        return
    if public:
        raise ValueError(f"n_clusters = {n_clusters} exceeds n_records = {n_records}: at most "
                         "one cluster per record; lower n_clusters")
    raise ValueError(f"n_clusters = {n_clusters} exceeds the number of records in X: at most "
                     "one cluster per record; lower n_clusters")


def warn_clipped(n_clipped: int) -> None:
    """Warn :class:`~dpkmeans.errors.ClippingWarning` (:data:`CLIPPED`) if any value was
    clipped, pointing at the user's line that called the library.

    Parameters
    ----------
    n_clipped : int
        The number of clipped values (private: it decides whether to warn, never shown).

    Examples
    --------
    >>> import warnings
    >>> from dpkmeans.engine.checks import warn_clipped
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_clipped(0)
    ...     warn_clipped(3)
    >>> [type(w.message).__name__ for w in caught]
    ['ClippingWarning']
    """
    if n_clipped:
        warnings.warn(CLIPPED, ClippingWarning, stacklevel=caller_stacklevel())
