"""The data layer: registry, files, loading, public-bounds scaling, synthetic data.

>>> from dpkmeans.data import load
>>> ds = load("blood", paper="dpkccm", scale=(-1, 1))     # doctest: +SKIP
>>> ds.X.shape, ds.n_clipped                                 # doctest: +SKIP

Modules, one job each: :mod:`~dpkmeans.data.registry` (data/datasets.toml),
:mod:`~dpkmeans.data.fetch` (find, verify, download), :mod:`~dpkmeans.data.derive` (make a file
from its public original), :mod:`~dpkmeans.data.parse` (read a file),
:mod:`~dpkmeans.data.loader` (``load``), :mod:`~dpkmeans.data.dataset` (the dataset object),
:mod:`~dpkmeans.data.scaling` (bounds and clipping), :mod:`~dpkmeans.data.synthetic` (Gaussian
mixtures), :mod:`~dpkmeans.data.bundled` (scikit-learn's iris, wine and breast cancer),
:mod:`~dpkmeans.data.report` (tables), :mod:`~dpkmeans.data.needs` (the files a command needs,
checked before it starts) and :mod:`~dpkmeans.data.commands` (the CLI group).
"""

from dpkmeans.data.dataset import Dataset, DroppedRows, Provenance
from dpkmeans.data.errors import (
    ChecksumMismatchError,
    DataError,
    DataFileMissingError,
    DataFormatError,
    DerivationError,
    DownloadError,
    MissingValuesError,
    PaperColumnError,
    RegistryError,
    UnknownDatasetError,
)
from dpkmeans.data.fetch import (
    check_file,
    download_file,
    ensure_file,
    search_locations,
    sha256_file,
)
from dpkmeans.data.loader import load
from dpkmeans.data.registry import Registry, get_registry, registry_path
from dpkmeans.data.scaling import (
    MINUS_ONE_ONE,
    ZERO_ONE,
    ClipCounts,
    clip_columns,
    data_bounds,
    scale_to_interval,
    unscale_from_interval,
)
from dpkmeans.data.synthetic import GaussianMixture, gaussian_mixture_dataset, make_mixture

__all__ = [
    "MINUS_ONE_ONE",
    "ZERO_ONE",
    "ChecksumMismatchError",
    "ClipCounts",
    "DataError",
    "DataFileMissingError",
    "DataFormatError",
    "Dataset",
    "DerivationError",
    "DownloadError",
    "DroppedRows",
    "GaussianMixture",
    "MissingValuesError",
    "PaperColumnError",
    "Provenance",
    "Registry",
    "RegistryError",
    "UnknownDatasetError",
    "check_file",
    "clip_columns",
    "data_bounds",
    "download_file",
    "ensure_file",
    "gaussian_mixture_dataset",
    "get_registry",
    "load",
    "make_mixture",
    "names",
    "registry_path",
    "scale_to_interval",
    "search_locations",
    "sha256_file",
    "unscale_from_interval",
]


def names() -> tuple[str, ...]:
    """Names accepted by :func:`load`: the registry's datasets, then the bundled ones."""
    reg = get_registry()
    return (*reg.datasets, *reg.bundled)
