"""Writing a file so that a crash never leaves half of it: the text goes to a temporary file
in the same folder, which is renamed over the target only once it is whole (``os.replace`` is
atomic on one file system). Every file the library writes for a reader (results, claims,
audits, the reproduce state, assignment keys and grades) goes through here.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_csv", "write_text"]


def write_text(path: str | os.PathLike[str], text: str, *, mode: int = 0o644,
               encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically, with permissions ``mode`` (set before the file
    appears); the folder is created if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_csv(frame: Any, path: str | os.PathLike[str], **to_csv: Any) -> None:
    """``frame.to_csv(**to_csv)`` written atomically to ``path`` (``index=False`` unless
    given)."""
    to_csv.setdefault("index", False)
    write_text(path, frame.to_csv(**to_csv))
