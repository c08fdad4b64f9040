"""One part of a sweep cell: the block of its points a part computes.

A long sweep cell may run as several parts (the ``parts`` key of its sweep file,
:mod:`dpkmeans.study.sweep`): part ``k`` of ``n`` computes the ``k``-th of ``n`` consecutive
blocks of the cell's points, so the parts' rows, joined in part order, are the cell's rows.
Every point derives its seed from the study's base seed and the point itself, never from its
place in the cell, so which part computes a point never changes its numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from dpkmeans.errors import DPKMeansError

__all__ = ["PartError", "check_part", "part_block", "is_last_part"]

T = TypeVar("T")


class PartError(DPKMeansError, ValueError):
    """A part that does not exist (``part`` outside ``0 .. parts - 1``, or more parts than
    points)."""


def check_part(part: int, parts: int) -> None:
    """Refuse a part number outside ``0 .. parts - 1`` or a number of parts below 1.

    Parameters
    ----------
    part : int
        The part (from 0).
    parts : int
        How many parts the cell runs in.
    """
    for name, value in (("part", part), ("parts", parts)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise PartError(f"{name} must be a whole number, got {value!r}")
    if parts < 1:
        raise PartError(f"parts must be at least 1, got {parts}")
    if not 0 <= part < parts:
        raise PartError(f"part must be from 0 to {parts - 1} (parts={parts}), got {part}")


def part_block(items: Sequence[T], part: int = 0, parts: int = 1) -> list[T]:
    """The ``part``-th of ``parts`` consecutive blocks of ``items`` (their sizes differ by at
    most one, the larger first), so that the blocks in part order are ``items``.

    Parameters
    ----------
    items : sequence
        A cell's points, in the cell's order.
    part : int
        The block wanted (from 0).
    parts : int
        How many blocks; at most ``len(items)``, so that no part is empty.

    Returns
    -------
    list
        The block.

    Examples
    --------
    >>> from dpkmeans.study.parts import part_block
    >>> [part_block(range(7), k, 3) for k in range(3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    """
    check_part(part, parts)
    items = list(items)
    if parts > len(items):
        raise PartError(f"{parts} parts for {len(items)} points: a part would be empty; "
                        f"split the cell into at most {len(items)} parts")
    size, extra = divmod(len(items), parts)
    start = part * size + min(part, extra)
    return items[start:start + size + (part < extra)]


def is_last_part(part: int = 0, parts: int = 1) -> bool:
    """Whether ``part`` is the last of ``parts`` (the part that adds a cell's closing rows,
    such as a non-private reference that follows its points).

    Parameters
    ----------
    part : int
        The part (from 0).
    parts : int
        How many parts the cell runs in.

    Returns
    -------
    bool
        ``part == parts - 1``.
    """
    check_part(part, parts)
    return part == parts - 1
