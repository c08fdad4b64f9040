"""Which path computes the statistics: the compiled numba kernels or numpy, decided once per
process, on first use.

numba (and its compiler llvmlite) is an optional dependency, the ``fast`` extra
(``pip install "dpkmeans[fast]"``). With it, the map steps of :mod:`dpkmeans.compute.lloyd`
(``block_stats``, ``block_silhouette``, ``nearest_distance_sums``) run the compiled passes of
:mod:`dpkmeans.compute.kernels`, on every usable core. Without it they run their numpy
references, :mod:`dpkmeans.compute.panels` (the exact labels of
:func:`dpkmeans.compute.lloyd.assign`, then the sums in the same "panels" order), one block at a
time: the same labels, counts, sums, silhouettes and distances, bit for bit, so the same
centroids and the same releases for the same seed; only slower: one Lloyd iteration at
N = 10^6, d = 10, k = 8 takes about 32 times as long on two cores (0.82 s against 25 ms;
``python -m benchmarks.numpy_path``, ``benchmarks/numpy_path.json``).

The decision (:func:`kernels`), the first time a map step runs, not at import: importing
dpkmeans does not load numba (about half a second).

* The environment variable :data:`NO_NUMBA` (``DPKMEANS_NO_NUMBA``) set to anything but ``""``
  or ``"0"`` forces the numpy path with numba installed (the tests and the benchmark of the
  numpy path use it). No notice then: it was asked for.
* numba not installed (``importlib.util.find_spec``), or the import of the kernels raising an
  ImportError (a numba that does not support this numpy, say): the numpy path, and one
  :class:`dpkmeans.errors.NumbaMissingNotice` (a UserWarning) the first time it runs in the
  process, naming the extra and pointing at the user's line that called the library
  (:func:`dpkmeans.errors.caller_stacklevel`). Filter it like any warning::

      warnings.filterwarnings("ignore", category=dpkmeans.errors.NumbaMissingNotice)

Any other error of the import (a bug) propagates.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
import warnings
from types import ModuleType

from dpkmeans.errors import NumbaMissingNotice, caller_stacklevel

__all__ = ["NO_NUMBA", "FAST_EXTRA", "kernels", "compiled"]

#: The environment variable that forces the numpy path (any value but "" and "0").
NO_NUMBA = "DPKMEANS_NO_NUMBA"
#: How to install the compiled path (the extra holds numba and llvmlite).
FAST_EXTRA = 'pip install "dpkmeans[fast]"'

_LOCK = threading.Lock()
_DECIDED = False
_KERNELS: ModuleType | None = None
_WHY = ""  # why the numpy path runs ("" if it was forced)
_NOTICE_SHOWN = False


def _forced() -> bool:
    return os.environ.get(NO_NUMBA, "") not in ("", "0")


def _decide() -> None:
    global _DECIDED, _KERNELS, _WHY
    with _LOCK:
        if _DECIDED:
            return
        if _forced():
            _KERNELS, _WHY = None, ""
        elif importlib.util.find_spec("numba") is None:
            _KERNELS, _WHY = None, "numba is not installed"
        else:
            try:
                _KERNELS = importlib.import_module("dpkmeans.compute.kernels")
            except ImportError as err:
                _KERNELS, _WHY = None, f"numba could not be imported ({err})"
        _DECIDED = True


def kernels() -> ModuleType | None:
    """The compiled kernels' module (:mod:`dpkmeans.compute.kernels`), or None on the numpy
    path (module docstring); the first call on the numpy path shows the notice."""
    global _NOTICE_SHOWN
    if not _DECIDED:
        _decide()
    if _KERNELS is None and _WHY and not _NOTICE_SHOWN:
        with _LOCK:
            show, _NOTICE_SHOWN = not _NOTICE_SHOWN, True
        if show:
            warnings.warn(
                f"dpkmeans runs its numpy path: {_WHY}. The results are the same, bit for "
                f"bit, but a Lloyd iteration takes about 30 times as long; for the compiled "
                f"path: {FAST_EXTRA}", NumbaMissingNotice, stacklevel=caller_stacklevel())
    return _KERNELS


def compiled() -> bool:
    """Whether the compiled (numba) path runs in this process (:func:`kernels`)."""
    return kernels() is not None
