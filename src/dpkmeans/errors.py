"""The project's own exception and warning types, and where a warning points
(:func:`caller_stacklevel`)."""

import os
import sys


class DPKMeansError(Exception):
    """Base class of the errors raised by dpkmeans."""


class BudgetExceededError(DPKMeansError, ValueError):
    """A draw would spend more privacy budget than the ledger declares (book ch. 3)."""


class BudgetTooSmallError(DPKMeansError, ValueError):
    """A budget below the smallest the exact samplers support (``privacy.noise.min_epsilon``).

    ``minimum`` is the smallest total epsilon that would be supported with the same
    configuration (rounded up to three significant digits), so a caller that spends part of
    its budget elsewhere can restate it in its own parameters. When the error is about one
    release, ``requested`` is the epsilon that release was given (``minimum`` is then the
    release's), so a caller whose releases get fixed shares of its budget can scale it."""

    def __init__(self, message: str, minimum: float, requested: float | None = None) -> None:
        super().__init__(message)
        self.minimum = minimum
        self.requested = requested


class SeedReuseError(DPKMeansError, ValueError):
    """A fit charged to a shared accountant repeats the seed material of a fit the accountant
    already absorbed (book chapter 12, "One budget across fits").

    Two fits that share their seed share their noise: on neighbouring data their difference
    reveals a record exactly, whatever their epsilons add up to. Raised before the fit draws
    anything; ``PrivacyLedger(seed_reuse="record")`` lets such a fit run and records a leak
    instead."""


class InvalidParameterError(DPKMeansError, ValueError, TypeError):
    """A parameter of the wrong type (``n_clusters=2.5``, ``epsilon="1"``, ``bounds=("a", 1)``).

    One convention for every estimator and check: it is both a ``ValueError`` and a
    ``TypeError`` (as scikit-learn's own ``InvalidParameterError``), so either ``except`` clause
    catches the same mistake everywhere. A parameter of the right type but out of range is a
    plain ``ValueError``."""


class PrivacyLeakWarning(UserWarning):
    """Something data-dependent was used without paying privacy budget (``docs/design.md``,
    "Privacy rules")."""


class ClippingWarning(UserWarning):
    """Data outside the public bounds was clipped to them.

    The message says only that clipping happened: how many values were clipped, and in which
    columns, depends on the private records, and a warning is often copied where the data
    holder did not mean to publish it (a log, a notebook's output). A data holder who wants
    to know compares X with the bounds.
    """


class NumbaMissingNotice(UserWarning):
    """numba (the ``fast`` extra) is missing or does not import: the library runs its numpy
    path, with the same results, more slowly (:mod:`dpkmeans.compute.fastpath`). Shown once
    per process; ``pip install "dpkmeans[fast]"`` gives the compiled path."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _inside(filename: str) -> bool:
    """Whether a frame's file is part of the dpkmeans package."""
    return os.path.abspath(filename).startswith(_PACKAGE)


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes :func:`warnings.warn`, called by the function that calls
    this, point at the first frame outside the dpkmeans package: the user's line that called
    the library, however deep inside it the warning is raised (Python 3.12's
    ``skip_file_prefixes`` does the same; Python 3.11 lacks it).

    Returns
    -------
    int
        1 for the caller itself when it is not in the package, more for each frame of the
        package above it; the outermost frame's level when every frame is in the package.

    Examples
    --------
    >>> from dpkmeans.errors import caller_stacklevel
    >>> caller_stacklevel()  # a doctest's frame is outside the package
    1
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level
