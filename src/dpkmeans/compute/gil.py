"""Which map functions run compiled code without the GIL (book chapter 8, "Speed").

A map step marked with :func:`releases_gil` runs its blocks in threads when the compiled path
is on (:func:`dpkmeans.compute.lloyd.local_map_reduce`). Kept apart from
:mod:`dpkmeans.compute.fastpath` (which imports the kernels when it decides) and from
:mod:`dpkmeans.compute.kernels` (which marks its own map step), so that the two import each
other in one direction only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["marked_gil_free", "releases_gil"]

F = TypeVar("F", bound=Callable)

#: The marked map functions.
_MARKED: set[Callable] = set()


def releases_gil(fn: F) -> F:
    """Mark a map function as compiled code that releases the GIL; returns it unchanged."""
    _MARKED.add(fn)
    return fn


def marked_gil_free(fn: Callable) -> bool:
    """Whether :func:`releases_gil` marked ``fn`` (a map function run in threads when the
    compiled path is on)."""
    return fn in _MARKED
