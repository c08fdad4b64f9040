"""The book's own source, packed at every build: the code that made the pages a reader sees.

The archive holds every file of the repository that git would track (tracked files and new
files that ``.gitignore`` does not exclude), read from the working tree, so a build from
uncommitted changes packs those changes; outside a git checkout (a build from an unpacked
archive) it holds the tree minus the build's and the environment's folders. A file
``SOURCE_COMMIT`` at its top says which commit it is, and whether the tree had changes.

The tar is reproducible: members sorted, owner root, times set to the commit's time.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

#: What a reader downloads, under the HTML output.
ARCHIVE = "_downloads/private-kmeans-reproduced-source.tar.gz"
#: The folder the archive unpacks into.
TOP = "private-kmeans-reproduced"
#: The file at the archive's top that names the commit.
COMMIT_FILE = "SOURCE_COMMIT"

#: Never packed when the tree is not a git checkout: builds, environments, caches, raw data.
_SKIP_DIRS = {".git", ".venv", ".venv-compare", "_build", "build", "dist", "__pycache__",
              ".pytest_cache", ".hypothesis",
              ".ipynb_checkpoints", ".jupyter_cache", ".mypy_cache", ".ruff_cache"}
_SKIP_PATHS = {"data/raw"}


@dataclass(frozen=True)
class Commit:
    """Which source a build packs: a commit id (or "unknown"), its time, and whether the
    working tree differed from it."""

    id: str
    timestamp: int
    modified: bool

    @property
    def label(self) -> str:
        short = self.id[:12]
        return f"{short} with uncommitted changes" if self.modified else short


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def _in_git(root: Path) -> bool:
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == root.resolve()


def source_commit(root: Path) -> Commit:
    """The commit the tree at ``root`` comes from: git's HEAD, else the ``SOURCE_COMMIT`` file
    an unpacked archive carries, else "unknown"."""
    if _in_git(root):
        head = (_git(root, "rev-parse", "HEAD") or "unknown").strip()
        when = int((_git(root, "log", "-1", "--format=%ct") or "0").strip() or 0)
        status = _git(root, "status", "--porcelain", "--untracked-files=normal") or ""
        return Commit(head, when, bool(status.strip()))
    recorded = root / COMMIT_FILE
    if recorded.is_file():
        fields = dict(line.split(": ", 1) for line in recorded.read_text().splitlines()
                      if ": " in line)
        return Commit(fields.get("commit", "unknown"), int(fields.get("timestamp", "0")),
                      fields.get("modified", "no") == "yes")
    return Commit("unknown", 0, True)


def source_files(root: Path) -> list[str]:
    """The repository's files under ``root`` (POSIX paths relative to it), sorted."""
    if _in_git(root):
        listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        names = {n for n in (listed or "").split("\0") if n}
        return sorted(n for n in names if (root / n).is_file() and n != COMMIT_FILE)
    found = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")
                         and (rel / d).as_posix() not in _SKIP_PATHS)
        found += [(rel / f).as_posix() for f in files if f != COMMIT_FILE]
    return sorted(found)


def write_archive(root: Path, target: Path) -> Commit:
    """Pack the source under ``root`` into the gzipped tar ``target``; returns its commit."""
    commit = source_commit(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")

    def member(name: str, size: int, mode: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(f"{TOP}/{name}")
        info.size, info.mode, info.mtime = size, mode, commit.timestamp
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    # no file name in the gzip header, and the commit's time: the same tree, the same bytes
    with open(partial, "wb") as raw, \
            gzip.GzipFile(filename="", fileobj=raw, mode="wb",
                          mtime=commit.timestamp) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
        note = (f"commit: {commit.id}\ntimestamp: {commit.timestamp}\n"
                f"modified: {'yes' if commit.modified else 'no'}\n").encode()
        tar.addfile(member(COMMIT_FILE, len(note), 0o644), io.BytesIO(note))
        for name in source_files(root):
            path = root / name
            data = path.read_bytes()
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            tar.addfile(member(name, len(data), mode), io.BytesIO(data))
    partial.replace(target)
    return commit
