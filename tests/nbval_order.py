"""The order of the notebook test (``make test-notebooks`` loads this plugin:
``-p tests.nbval_order``): the notebooks whose cells took longest when their outputs were
stored come first, each one's cells in their order.

pytest-xdist's ``--dist loadfile`` gives each worker a whole notebook at a time, in the order of
the collection (``--no-loadscope-reorder``; by default it would take the notebooks with the
most cells first). Started last, a long notebook would run alone on one worker while the
other waits; started first, it runs while the other worker takes the short ones.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path

import pytest


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@cache
def stored_seconds(path: Path) -> float:
    """The seconds the notebook's cells took when its outputs were stored: the sum over its
    cells of the time from the execution's start to the kernel's reply, as Jupyter records
    them in each cell's metadata (``execution``); 0 for a file that is not such a notebook
    or has no timings."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return 0.0
    total = 0.0
    for cell in cells:
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            try:
                total += max(0.0, (_instant(end) - _instant(start)).total_seconds())
            except ValueError:
                continue
    return total


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The notebooks longest first; the sort is stable, so each notebook's cells keep their
    order and stay together."""
    items.sort(key=lambda item: -stored_seconds(Path(item.path)))
