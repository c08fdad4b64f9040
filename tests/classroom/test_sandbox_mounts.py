"""The grader's bubblewrap mounts: a Python or a checkout under /tmp stays visible.

Regression test: the sandbox mounted its small tmpfs on /tmp after the read-only trees of the
kernel's Python, so a virtual environment or an editable checkout under /tmp (a clean clone
in /tmp/ci, say) vanished inside the sandbox and every kernel failed to start (exit 127).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from dpkmeans_classroom import Limits, detect_level, sandbox


def _tmp_tree() -> Path:
    """A folder under /tmp itself (not under $TMPDIR), as a clone there would be."""
    return Path(tempfile.mkdtemp(prefix="dpkmeans-mounts-", dir="/tmp"))


def test_the_small_tmp_is_mounted_before_the_trees(monkeypatch):
    tree = _tmp_tree()
    try:
        monkeypatch.setattr(sandbox, "_python_paths", lambda: [str(tree)])
        with sandbox.Sandbox("bubblewrap", Limits(), {}) as box:
            argv = box.command(["true"])
        pairs = list(zip(argv, argv[1:]))
        tmpfs = pairs.index(("--tmpfs", "/tmp"))
        bound = pairs.index(("--ro-bind", str(tree)))
        assert tmpfs < bound, "a tmpfs mounted on /tmp after the trees hides those under /tmp"
    finally:
        tree.rmdir()


@pytest.mark.skipif(detect_level() != "bubblewrap", reason="needs bubblewrap")
def test_a_tree_under_tmp_is_readable_inside(monkeypatch):
    tree = _tmp_tree()
    marker = tree / "marker.txt"
    try:
        marker.write_text("seen")
        tree.chmod(0o755)
        marker.chmod(0o644)
        paths = sandbox._python_paths()
        monkeypatch.setattr(sandbox, "_python_paths", lambda: [*paths, str(tree)])
        with sandbox.Sandbox("bubblewrap", Limits(), {}) as box:
            outcome = box.run([sys.executable, "-c",
                               f"assert open({str(marker)!r}).read() == 'seen'"])
        assert outcome.returncode == 0, outcome.stderr_tail
    finally:
        marker.unlink(missing_ok=True)
        tree.rmdir()
