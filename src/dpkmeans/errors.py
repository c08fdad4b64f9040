"""The project's own exception and warning types."""


class DPKMeansError(Exception):
    """Base class of the errors raised by dpkmeans."""


class BudgetExceededError(DPKMeansError, ValueError):
    """A draw would spend more privacy budget than the ledger declares (book ch. 3)."""


class PrivacyLeakWarning(UserWarning):
    """Something data-dependent was used without paying privacy budget (``docs/design.md``,
    "Privacy rules")."""


class ClippingWarning(UserWarning):
    """Data outside the public bounds was clipped to them (the count is in the message).

    The count is shown to the data holder only; it is not part of any release.
    """


class NumbaMissingNotice(UserWarning):
    """numba (the ``fast`` extra) is missing or does not import: the library runs its numpy
    path, with the same results, more slowly (:mod:`dpkmeans.compute.fastpath`). Shown once
    per process; ``pip install "dpkmeans[fast]"`` gives the compiled path."""
