"""Errors of the data layer. Every message says what to do next."""

from __future__ import annotations

from dpkmeans.errors import DPKMeansError

__all__ = [
    "ChecksumMismatchError",
    "DataError",
    "DataFileMissingError",
    "DataFormatError",
    "DerivationError",
    "DownloadError",
    "MissingValuesError",
    "PaperColumnError",
    "RegistryError",
    "UnknownDatasetError",
]


class DataError(DPKMeansError, ValueError):
    """Base class of every data-layer error (a ``ValueError``)."""


class RegistryError(DataError):
    """``data/datasets.toml`` is missing or malformed."""


class UnknownDatasetError(DataError):
    """A dataset name that the registry does not list."""


class PaperColumnError(DataError):
    """A paper key, or a paper/column combination, that does not exist."""


class DataFileMissingError(DataError):
    """The dataset's file is not on disk and cannot (or may not) be downloaded."""


class ChecksumMismatchError(DataError):
    """A file's sha256 differs from the registry's."""


class DownloadError(DataError):
    """A download failed: HTTP error, network error, or a truncated body."""


class DerivationError(DataError):
    """A file could not be derived from its public original: the original is corrupt,
    truncated, or not what the registry's rule expects (``dpkmeans.data.derive``)."""


class DataFormatError(DataError):
    """A file parses, but not into what the registry describes."""


class MissingValuesError(DataError):
    """Missing values met with ``on_missing="raise"``."""
