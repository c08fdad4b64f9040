"""Find a dataset's file on disk, verify its sha256, or download it atomically.

Search order for dataset ``name``, the same for the library, the CLI and every notebook,
whichever interpreter runs them (the first folder holding the file wins; a file found with a
wrong checksum is an error, never skipped):

1. ``data_home/<name>/`` when a ``data_home`` argument (``--data-home``) is given;
2. ``$DPKMEANS_DATA/<name>/`` (``make`` sets it to ``../shared/data`` when that folder exists);
3. the user's cache, ``$DPKMEANS_CACHE/<name>/``, else ``~/.cache/dpkmeans/<name>/``, shared by
   every clone and installed copy;
4. ``<repo>/data/raw/<name>/`` in a source checkout (ignored by git; files copied there by hand);
5. a download from the registry address into ``data_home``, else into the user's cache (3.),
   unless downloads are off (``download=False`` or ``DPKMEANS_OFFLINE=1``); a file hosted
   nowhere but made from a public original is derived from it instead
   (:mod:`~dpkmeans.data.derive`, which uses the machinery below).

A download goes to a temporary file in the destination folder and is renamed into place only
after its length and sha256 check out, so a good file is never replaced by a bad one; a failed
download also removes the folders it created, so it leaves nothing behind. A download is
capped: at the registered size of the file (``bytes``), else at :data:`MAX_DOWNLOAD_BYTES`; a
server that announces or sends more is refused as the bytes arrive.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path
from typing import BinaryIO, Literal

from dpkmeans.data.errors import ChecksumMismatchError, DataFileMissingError, DownloadError
from dpkmeans.data.registry import DatasetSpec, FileSpec, repo_root

__all__ = [
    "CACHE_ENV",
    "DATA_ENV",
    "MAX_DOWNLOAD_BYTES",
    "OFFLINE_ENV",
    "FileStatus",
    "Location",
    "check_file",
    "checkout_data_home",
    "data_env_problem",
    "dataset_files",
    "default_data_home",
    "download_errors",
    "download_file",
    "download_target",
    "download_verified",
    "downloads_allowed",
    "ensure_file",
    "env_note",
    "find_file",
    "landing",
    "not_found",
    "put_it_here",
    "search_locations",
    "sha256_file",
    "stream_url",
    "verified_copy",
]

DATA_ENV = "DPKMEANS_DATA"
CACHE_ENV = "DPKMEANS_CACHE"
OFFLINE_ENV = "DPKMEANS_OFFLINE"
#: The cap on a download whose size the registry does not record (a file with ``bytes`` may
#: not be longer than that): 256 MiB, over twenty times the largest file registered.
MAX_DOWNLOAD_BYTES = 1 << 28
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Location:
    """A folder searched for a dataset, with a printable label that holds no absolute path."""

    label: str
    directory: Path


@dataclass(frozen=True)
class FileStatus:
    """Result of looking for one file and hashing it."""

    dataset: str
    file: FileSpec
    status: Literal["ok", "missing", "mismatch"]
    location: str | None = None
    path: Path | None = None
    actual_sha256: str | None = None


def default_data_home() -> Location:
    """The user's cache, ``$DPKMEANS_CACHE`` else ``~/.cache/dpkmeans``: searched after
    ``$DPKMEANS_DATA``, and downloads go there unless a ``data_home`` is given."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Location(f"${CACHE_ENV}", Path(env).expanduser())
    return Location("~/.cache/dpkmeans", Path.home() / ".cache" / "dpkmeans")


def checkout_data_home() -> Location | None:
    """``<repo>/data/raw`` in a source checkout (searched last, never written), else ``None``."""
    root = repo_root()
    return Location("data/raw", root / "data" / "raw") if root is not None else None


def search_locations(name: str, data_home: str | os.PathLike[str] | None = None) -> list[Location]:
    """The folders searched for dataset ``name``, in order, without duplicates."""
    candidates: list[Location] = []
    if data_home is not None:
        candidates.append(Location("data_home", Path(data_home) / name))
    env = os.environ.get(DATA_ENV)
    if env:
        candidates.append(Location(f"${DATA_ENV}", Path(env) / name))
    for default in (default_data_home(), checkout_data_home()):
        if default is not None:
            candidates.append(Location(default.label, default.directory / name))
    seen: set[Path] = set()
    unique = []
    for loc in candidates:
        key = loc.directory.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(loc)
    return unique


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def find_file(
    name: str, file: FileSpec, data_home: str | os.PathLike[str] | None = None
) -> tuple[Location, Path] | None:
    """The first location holding ``file``, or ``None``."""
    for loc in search_locations(name, data_home):
        path = loc.directory / file.name
        if path.is_file():
            return loc, path
    return None


def check_file(
    name: str, file: FileSpec, data_home: str | os.PathLike[str] | None = None
) -> FileStatus:
    """Find ``file`` and re-hash it (used by ``datasets list`` and ``datasets verify``)."""
    found = find_file(name, file, data_home)
    if found is None:
        return FileStatus(name, file, "missing")
    loc, path = found
    actual = sha256_file(path)
    status: Literal["ok", "mismatch"] = "ok" if actual == file.sha256 else "mismatch"
    return FileStatus(name, file, status, loc.label, path, actual)


def dataset_files(spec: DatasetSpec) -> tuple[FileSpec, ...]:
    """The registry's file and, where recorded, the full file that can replace a sample."""
    return (spec.file,) if spec.full_file is None else (spec.file, spec.full_file)


def data_env_problem() -> str | None:
    """One sentence when ``$DPKMEANS_DATA`` is set to something that is not a folder (a typo, or
    a data folder that moved), else ``None``: nothing is found there, and the messages say so."""
    env = os.environ.get(DATA_ENV)
    if env and not Path(env).expanduser().is_dir():
        return (f"${DATA_ENV} is {env}, which is not a folder: point it at a folder holding "
                "<name>/<file> (e.g. ../shared/data) or unset it.")
    return None


def put_it_here(name: str, data_home: str | os.PathLike[str] | None = None) -> str:
    """Where to copy a file of dataset ``name`` by hand, as a label: ``data_home``, else
    ``$DPKMEANS_DATA`` when it is a folder, else the user's cache."""
    if data_home is not None:
        return f"{data_home}/{name}/"
    if os.environ.get(DATA_ENV) and data_env_problem() is None:
        return f"${DATA_ENV}/{name}/"
    return f"{default_data_home().label}/{name}/"


def downloads_allowed(download: bool | None) -> bool:
    """``download`` if given, else True unless ``$DPKMEANS_OFFLINE`` is set to a true value."""
    if download is not None:
        return bool(download)
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in ("1", "true", "yes", "on")


def _mismatch_message(spec_name: str, file: FileSpec, where: str, actual: str) -> str:
    return (
        f"checksum mismatch for {spec_name!r} file {where}: expected sha256 {file.sha256}, "
        f"got {actual}. The file is corrupt, truncated or a different version. Fix: delete it and "
        f"run `python -m dpkmeans datasets fetch {spec_name}`, or copy the verified file "
        f"(e.g. from ../shared/data/{spec_name}/). If you are sure the file is right, the registry "
        "data/datasets.toml is wrong: report it rather than editing the checksum."
    )


def verified_copy(
    name: str, file: FileSpec, data_home: str | os.PathLike[str] | None = None
) -> tuple[Location, Path] | None:
    """The first copy of ``file`` on disk, its sha256 checked, or ``None`` when there is none.

    Raises ``ChecksumMismatchError`` (saying what to do) for a copy with the wrong sha256: it is
    never skipped.
    """
    found = find_file(name, file, data_home)
    if found is None:
        return None
    loc, path = found
    actual = sha256_file(path)
    if actual != file.sha256:
        raise ChecksumMismatchError(_mismatch_message(name, file, str(path), actual))
    return loc, path


def not_found(name: str, file: FileSpec, data_home: str | os.PathLike[str] | None = None) -> str:
    """The start of a "not found" message: the file and every path searched for it."""
    searched = ", ".join(
        str(loc.directory / file.name) for loc in search_locations(name, data_home)
    )
    return f"dataset {name!r}: file {file.name!r} not found (searched {searched})"


def env_note() -> str:
    """``" " + data_env_problem()`` when ``$DPKMEANS_DATA`` is not a folder, else ``""``: the
    end of every "not found" message."""
    problem = data_env_problem()
    return f" {problem}" if problem else ""


def download_target(
    name: str, file: FileSpec, data_home: str | os.PathLike[str] | None = None
) -> tuple[Location, Path]:
    """Where a download (or a derivation) of ``file`` lands: ``data_home/<name>/``, else the
    user's cache (:func:`default_data_home`)."""
    root = Location("data_home", Path(data_home)) if data_home is not None else default_data_home()
    return Location(root.label, root.directory / name), root.directory / name / file.name


def ensure_file(
    spec: DatasetSpec,
    file: FileSpec,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool | None = None,
    timeout: float = 60.0,
) -> tuple[Location, Path]:
    """Return a verified local copy of ``file``, downloading it if allowed and needed.

    A file with no download address is an error that says where it comes from, where to put
    it and, where the registry says, what to use instead; :func:`dpkmeans.data.derive.obtain_file`
    also derives a file that the registry makes from a public original.
    """
    found = verified_copy(spec.name, file, data_home)
    if found is not None:
        return found
    missing = not_found(spec.name, file, data_home)
    if not file.url:
        instead = f" What to use instead: {spec.instead}" if spec.instead else ""
        raise DataFileMissingError(
            f"{missing} and it has no public download address. {file.no_url_reason} Put it in "
            f"{put_it_here(spec.name, data_home)} with sha256 {file.sha256}.{instead}{env_note()}"
        )
    if not downloads_allowed(download):
        raise DataFileMissingError(
            f"{missing} and downloads are off (download=False or ${OFFLINE_ENV}). Fix: set "
            f"${DATA_ENV} to a folder holding {spec.name}/{file.name} (e.g. ../shared/data), or "
            f"run `python -m dpkmeans datasets fetch {spec.name}` with network access.{env_note()}"
        )
    location, dest = download_target(spec.name, file, data_home)
    cap = file.bytes if file.bytes is not None else MAX_DOWNLOAD_BYTES
    download_file(file.url, dest, file.sha256, timeout=timeout, dataset=spec.name, max_bytes=cap)
    return location, dest


def stream_url(url: str, out: BinaryIO, *, timeout: float = 60.0, label: str = "",
               max_bytes: int | None = None) -> tuple[str, int]:
    """Write the body of ``url`` to ``out``; returns its sha256 and its size.

    A body shorter than its Content-Length, or longer than ``max_bytes`` (announced or
    received: reading stops at the cap), raises ``DownloadError``; HTTP and network errors
    propagate.
    """
    h = hashlib.sha256()
    received = 0
    request = urllib.request.Request(url, headers={"User-Agent": "dpkmeans-data"})
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        length = resp.headers.get("Content-Length")
        if max_bytes is not None and length is not None and length.isdigit() \
                and int(length) > max_bytes:
            raise _too_large(label or url, url, max_bytes, f"announces {length} bytes")
        while chunk := resp.read(_CHUNK):
            received += len(chunk)
            if max_bytes is not None and received > max_bytes:
                raise _too_large(label or url, url, max_bytes, f"sent more than {max_bytes}")
            h.update(chunk)
            out.write(chunk)
    if length is not None and received != int(length):
        raise DownloadError(
            f"download of {label or url!r} from {url} is truncated: received {received} of "
            f"{length} bytes (the connection closed early). Nothing was written; retry later."
        )
    return h.hexdigest(), received


def _too_large(label: str, url: str, max_bytes: int, what: str) -> DownloadError:
    return DownloadError(
        f"download of {label!r} from {url} refused: the server {what} bytes, over the cap of "
        f"{max_bytes} bytes for this file. Nothing was written. The address may serve "
        "something else now: check it in data/datasets.toml, or copy a verified file by hand."
    )


@contextlib.contextmanager
def download_errors(label: str, url: str) -> Iterator[None]:
    """Turn an HTTP or network error of a download of ``url`` into a one-line
    ``DownloadError`` that says what to do."""
    try:
        yield
    except urllib.error.HTTPError as exc:
        raise DownloadError(
            f"download of {label!r} failed: HTTP {exc.code} {exc.reason} for {url}. The address in "
            "data/datasets.toml may have moved; find the file on the dataset's page and copy it "
            "by hand."
        ) from exc
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as exc:
        raise DownloadError(
            f"download of {label!r} from {url} failed: {exc}. Check the network (or work "
            "offline by "
            f"setting ${DATA_ENV} to a folder with the verified files)."
        ) from exc


@contextlib.contextmanager
def landing(dest: str | os.PathLike[str], label: str) -> Iterator[Path]:
    """A temporary file beside ``dest``, renamed to ``dest`` when the block ends normally.

    The block writes the temporary file (and checks it). If the block raises, the temporary
    file and every folder created for it are removed, so a good ``dest`` is never replaced by
    a bad file and a failure leaves nothing behind. A folder that cannot be written is a
    ``DownloadError`` that says what to do.
    """
    dest = Path(dest)
    # The folders that do not exist yet, deepest first: removed again unless the file lands.
    created = list(takewhile(lambda p: not p.exists(), (dest.parent, *dest.parent.parents)))
    tmp: Path | None = None
    done = False
    try:
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(
                prefix=f".{dest.name}.", suffix=".part", dir=dest.parent
            )
        except OSError as exc:
            raise DownloadError(
                f"cannot write the download of {label!r} into {dest.parent}: {exc.strerror}. "
                f"Fix: pass a writable data_home (--data-home) or set ${CACHE_ENV}."
            ) from exc
        os.close(fd)
        tmp = Path(tmp_name)
        yield tmp
        os.replace(tmp, dest)
        done = True
    finally:
        if not done:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            for folder in created:
                with contextlib.suppress(OSError):  # not empty (another download) or gone
                    folder.rmdir()


def download_verified(url: str, out: BinaryIO, sha256: str, *, timeout: float = 60.0,
                      label: str = "", max_bytes: int | None = None) -> int:
    """Write the body of ``url`` to ``out`` and check its sha256; returns its size.

    Raises ``DownloadError`` (HTTP or network error, a truncated body, a body over
    ``max_bytes``) or ``ChecksumMismatchError`` (a body that is not the registered file).
    """
    with download_errors(label or url, url):
        actual, received = stream_url(url, out, timeout=timeout, label=label,
                                      max_bytes=max_bytes)
    if actual != sha256:
        raise ChecksumMismatchError(
            f"the file downloaded for {label or url!r} from {url} is not the registered one: "
            f"expected sha256 {sha256}, got {actual} ({received} bytes). Nothing was written. "
            "The server "
            "may serve a changed or corrupt file: check the address in data/datasets.toml, or "
            "copy a verified file by hand."
        )
    return received


def download_file(
    url: str,
    dest: str | os.PathLike[str],
    sha256: str,
    *,
    timeout: float = 60.0,
    dataset: str = "",
    max_bytes: int | None = None,
) -> Path:
    """Download ``url`` to ``dest`` atomically; check the length and the sha256 before renaming.
    On any failure the partial file and every folder this call created are removed. A body
    over ``max_bytes`` is refused as it arrives."""
    dest = Path(dest)
    label = dataset or dest.name
    with landing(dest, label) as tmp, open(tmp, "wb") as out:
        download_verified(url, out, sha256, timeout=timeout, label=label, max_bytes=max_bytes)
    return dest
