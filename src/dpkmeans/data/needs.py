"""Check, before anything starts, that the data files a command needs are on disk.

A sweep, ``reproduce`` or the book's build reads its datasets cell by cell, minutes after it
starts; a missing file then ended the run with a traceback from inside a notebook. The
commands call :func:`require_datasets` first: the files that are missing and can be downloaded,
or derived from a public original (:mod:`~dpkmeans.data.derive`), are fetched now (unless
downloads are off, ``$DPKMEANS_OFFLINE``), and anything still missing stops the command with
one line that names each file and how to get it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from dpkmeans.data.derive import fetch_target, missing_requirement, obtain_file
from dpkmeans.data.errors import DataFileMissingError
from dpkmeans.data.fetch import (
    OFFLINE_ENV,
    FileStatus,
    check_file,
    data_env_problem,
    dataset_files,
    downloads_allowed,
    put_it_here,
)
from dpkmeans.data.registry import DatasetSpec, Registry, get_registry

__all__ = ["book_datasets", "missing_datasets", "missing_message", "require_datasets"]

#: The chapters whose code reads data files as they execute, and the datasets each reads (the
#: others plot the committed results or synthetic data; the Datasets page skips what is absent).
#: Chapter 10 loads every case of the APDPk-means study (``dpkmeans.papers.apdp.study.CASES``),
#: chapter 11 the DI study's two datasets and adult (``tests/data/test_data_needs.py`` checks).
_BOOK_CHAPTERS: dict[str, tuple[str, ...]] = {
    "10_schedules": ("blood", "tripadvisor", "review_ratings", "adult", "electrical",
                     "credit_card", "abalone", "magic", "covtype"),
    "11_identifiability": ("heart", "magic", "adult"),
}


def book_datasets() -> dict[str, tuple[str, ...]]:
    """Each chapter that reads data files as it executes, and the registry datasets it reads."""
    return dict(_BOOK_CHAPTERS)


def _usable(statuses: Sequence[FileStatus]) -> bool:
    return any(s.status == "ok" for s in statuses)


def missing_datasets(
    names: Iterable[str],
    *,
    data_home: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
) -> list[FileStatus]:
    """The status of the file of each dataset of ``names`` that has no verified file on disk
    (neither its file nor, where recorded, its full file), in the order of ``names``."""
    reg = registry if registry is not None else get_registry()
    out = []
    for name in dict.fromkeys(names):
        spec = reg.dataset(name)
        statuses = [check_file(spec.name, f, data_home) for f in dataset_files(spec)]
        if not _usable(statuses):
            bad = [s for s in statuses if s.status == "mismatch"]
            fetched = fetch_target(spec) or spec.file  # covtype: the sample, derived
            out.append(bad[0] if bad else next(s for s in statuses if s.file == fetched))
    return out


def _fetchable(spec: DatasetSpec) -> bool:
    """Whether ``datasets fetch`` can get the dataset: a download, or a derivation."""
    return fetch_target(spec) is not None


def missing_message(purpose: str, statuses: Sequence[FileStatus], *,
                    data_home: str | os.PathLike[str] | None = None,
                    registry: Registry | None = None) -> str:
    """One line: what ``purpose`` lacks (``""``: "missing: ..."), and how to get each file."""
    reg = registry if registry is not None else get_registry()
    specs = {s.dataset: reg.dataset(s.dataset) for s in statuses}
    corrupt = [s for s in statuses if s.status == "mismatch"]
    absent = [s for s in statuses if s.status == "missing"]
    fetch = [s.dataset for s in absent if _fetchable(specs[s.dataset])]
    by_hand = [s for s in absent if not _fetchable(specs[s.dataset])]
    listed = ", ".join(f"{s.dataset} ({s.file.name})" for s in statuses)
    parts = [f"{purpose} needs data files that are not here: {listed}." if purpose
             else f"missing: {listed}."]
    if fetch:
        off = (f" (downloads are off: unset ${OFFLINE_ENV} first)"
               if not downloads_allowed(None) else "")
        parts.append(f"Get them with `python -m dpkmeans datasets fetch {' '.join(fetch)}`{off}.")
        parts += [need for need in (missing_requirement(specs[n]) for n in fetch) if need]
    for s in by_hand:
        spec = specs[s.dataset]
        parts.append(f"{s.dataset} has no public download address (it comes from {spec.page}): "
                     f"put {s.file.name!r} (sha256 {s.file.sha256}) in "
                     f"{put_it_here(s.dataset, data_home)}; `python -m dpkmeans datasets info "
                     f"{s.dataset}` says how to get it.")
        if spec.instead:
            parts.append(f"Instead: {spec.instead}")
    for s in corrupt:
        parts.append(f"{s.dataset}'s {s.file.name} in {s.location} has the wrong sha256 "
                     f"(expected {s.file.sha256}): replace it (`python -m dpkmeans datasets "
                     "verify` lists every file).")
    parts.append("Or set $DPKMEANS_DATA to a folder holding <name>/<file> (e.g. ../shared/data).")
    if data_env_problem():
        parts.append(str(data_env_problem()))
    return " ".join(parts)


def require_datasets(
    names: Iterable[str],
    purpose: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool | None = None,
    registry: Registry | None = None,
) -> None:
    """Make sure every dataset of ``names`` has a verified file on disk, before anything starts.

    Parameters
    ----------
    names : registry dataset names (repeats are ignored).
    purpose : what needs them, for the message ("`reproduce --only silhouette`").
    data_home : an extra folder searched first, as :func:`dpkmeans.data.load`'s.
    download : fetch the missing files that have a download address, or derive those made from
        a public original, now (default: unless ``$DPKMEANS_OFFLINE`` is set).
    registry : the registry (default :func:`dpkmeans.data.get_registry`).

    Raises
    ------
    DataFileMissingError
        One line naming every file still missing (or with a wrong sha256) and how to get it.
    DownloadError
        A download failed (one line).
    DerivationError, ChecksumMismatchError, MissingExtraError
        A derivation failed, or needs an extra that is not installed (one line).
    """
    reg = registry if registry is not None else get_registry()
    names = list(dict.fromkeys(names))
    problems = missing_datasets(names, data_home=data_home, registry=reg)
    if downloads_allowed(download):
        for status in [p for p in problems if p.status == "missing"]:
            spec = reg.dataset(status.dataset)
            target = fetch_target(spec)
            if target is not None:
                obtain_file(spec, target, data_home=data_home, download=True)
        problems = missing_datasets(names, data_home=data_home, registry=reg)
    if problems:
        raise DataFileMissingError(
            missing_message(purpose, problems, data_home=data_home, registry=reg))
