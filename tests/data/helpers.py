"""What the data tests share: the bodies the local HTTP server serves (``conftest.py``)."""

from __future__ import annotations

GOOD = b"x,y\n0.25,a\n0.75,b\n"
BAD = b"x,y\n0.25,a\n0.99,b\n"
