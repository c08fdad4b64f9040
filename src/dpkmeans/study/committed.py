"""The files the book commits beside the library, found wherever a chapter runs.

A chapter reads committed results (``data/results/*.csv``) and measurements
(``benchmarks/*.json``). :func:`committed_file` finds one of them, in this order:

1. ``$DPKMEANS_SOURCE``, if set: a folder holding the book's source (a clone, or the book's
   source archive unpacked), the archive itself (``.tar.gz``), or the archive's URL, which is
   downloaded once into a cache folder (``$DPKMEANS_CACHE``, else ``~/.cache/dpkmeans``);
2. the working directory and the folders above it: a notebook run from inside the book's
   source, as ``make book`` and ``jupyter lab notebooks/...`` run it;
3. the source tree the library is installed from (``make install`` installs it in place).

It says where it read a file from whenever that is not the notebook's own source tree (2), so
a reader always knows which copy a page was computed from.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import tarfile
from pathlib import Path, PurePosixPath

from dpkmeans.data.errors import DownloadError
from dpkmeans.data.fetch import OFFLINE_ENV, downloads_allowed, stream_url
from dpkmeans.data.registry import repo_root

__all__ = ["CACHE_ENV", "SOURCE_ENV", "CommittedFileError", "committed_file"]

SOURCE_ENV = "DPKMEANS_SOURCE"
CACHE_ENV = "DPKMEANS_CACHE"
_TIMEOUT = 60  # seconds for a download


class CommittedFileError(FileNotFoundError):
    """A committed file of the book could not be found or fetched."""


def _relative(name: str | os.PathLike[str]) -> PurePosixPath:
    path = PurePosixPath(Path(name).as_posix())
    if path.is_absolute() or not path.parts or ".." in path.parts:
        raise ValueError(f"a committed file is named by its path in the repository, such as "
                         f"data/results/apdp.csv, not {str(name)!r}")
    return path


def _cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "dpkmeans")


def _say(message: str) -> None:
    print(f"dpkmeans: {message}", file=sys.stderr)


def _from_archive(archive: Path, relative: PurePosixPath, origin: str) -> Path:
    """Extract ``relative`` from a source archive (its one top folder) into the cache."""
    digest = hashlib.sha256(str(archive.resolve()).encode()).hexdigest()[:16]
    target = _cache_dir() / "source" / digest / relative
    if target.is_file() and target.stat().st_mtime >= archive.stat().st_mtime:
        return target
    try:
        with tarfile.open(archive, "r:gz") as tar:
            member = next((m for m in tar.getmembers() if m.isfile()
                           and PurePosixPath(m.name).parts[1:] == relative.parts), None)
            if member is None:
                raise CommittedFileError(f"{origin} does not hold {relative}")
            data = tar.extractfile(member).read()
    except (tarfile.TarError, OSError, EOFError) as error:
        raise CommittedFileError(f"cannot read {origin} as the book's source archive "
                                 f"(a .tar.gz): {error}") from error
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def _download(url: str) -> Path:
    """The archive at ``url``, downloaded once into the cache."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    target = _cache_dir() / "downloads" / f"source-{digest}.tar.gz"
    if target.is_file():
        return target
    if not downloads_allowed(None):
        raise CommittedFileError(f"cannot download the book's source from {url}: downloads "
                                 f"are off (${OFFLINE_ENV})")
    _say(f"downloading the book's source from {url}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    try:
        with open(partial, "wb") as out:
            stream_url(url, out, timeout=_TIMEOUT, label="the book's source")
    except (OSError, ValueError, http.client.HTTPException, DownloadError) as error:
        partial.unlink(missing_ok=True)
        raise CommittedFileError(f"cannot download the book's source from {url}: "
                                 f"{error}") from error
    partial.replace(target)
    return target


def _from_source_setting(value: str, relative: PurePosixPath) -> Path:
    if value.startswith(("http://", "https://")):
        found = _from_archive(_download(value), relative, value)
    else:
        place = Path(value).expanduser()
        if place.is_dir():
            found = place / relative
            if not found.is_file():
                raise CommittedFileError(f"{SOURCE_ENV}={value} has no {relative}")
        elif place.is_file():
            found = _from_archive(place, relative, value)
        else:
            raise CommittedFileError(f"{SOURCE_ENV}={value} is neither a folder, nor a file, "
                                     "nor an http(s) URL")
    _say(f"read {relative} from {SOURCE_ENV}={value}")
    return found


def committed_file(name: str | os.PathLike[str]) -> Path:
    """The path of the committed file ``name`` (its path in the repository, for example
    ``data/results/apdp.csv``), found as the module docstring says.

    Raises :class:`CommittedFileError` (a ``FileNotFoundError``) naming every place it looked
    and how to get the file, and ``ValueError`` for a name that is not a repository path.
    """
    relative = _relative(name)
    setting = os.environ.get(SOURCE_ENV, "").strip()
    if setting:
        return _from_source_setting(setting, relative)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / relative).is_file():
            return folder / relative
    root = repo_root()
    if root is not None and (root / relative).is_file():
        _say(f"read {relative} from the library's source tree, {root}")
        return root / relative
    raise CommittedFileError(
        f"cannot find {relative}: it is not under the working directory ({here}) or a folder "
        "above it, nor in the source tree of the installed library. Download the book's source "
        "archive (the link under every chapter's title), then run the notebook from inside it, "
        f"or set {SOURCE_ENV} to the unpacked folder, the archive, or its URL.")
