"""The optional dependencies (the package's extras) and the error that names the one to install.

``pip install dpkmeans`` brings numpy, scipy, scikit-learn and pandas; the rest of what some
uses need is an extra (``pyproject.toml``; README, "Installing the library alone"). Code that
needs an extra imports it with :func:`require`, so a user without it is told which extra
to install rather than shown a traceback; the command line turns the error into one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpkmeans.errors import DPKMeansError

__all__ = ["EXTRA_OF_MODULE", "MissingExtraError", "extra_of", "install_hint", "require"]

#: The extra that installs each optional top-level module.
EXTRA_OF_MODULE: dict[str, str] = {
    "numba": "fast", "llvmlite": "fast",
    "dask": "dask", "distributed": "dask", "pyarrow": "dask",
    "cvxpy": "sdp", "clarabel": "sdp",
    "matplotlib": "plot", "seaborn": "plot",
    "kmodes": "kmodes",
    "diffprivlib": "compare",
    "xlrd": "xls",
    "yaml": "book", "papermill": "book", "nbformat": "book", "nbconvert": "book",
    "nbclient": "book", "jupytext": "book", "jupyter_client": "book", "ipykernel": "book",
    "tqdm": "book",
}


class MissingExtraError(DPKMeansError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """The command that installs an extra."""
    return f'pip install "dpkmeans[{extra}]"'


def extra_of(module_name: str | None) -> str | None:
    """The extra that installs ``module_name`` (its top-level package), or None."""
    if not module_name:
        return None
    return EXTRA_OF_MODULE.get(module_name.split(".")[0])


def require(module_name: str, needed_for: str) -> ModuleType:
    """Import an optional module, or raise :class:`MissingExtraError` naming its extra.

    Parameters
    ----------
    module_name : str
        The module to import, e.g. ``"cvxpy"``.
    needed_for : str
        What needs it, for the message, e.g. ``"the colored mechanism's covariance"``.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        extra = extra_of(err.name) or extra_of(module_name)
        if extra is None:
            raise
        raise MissingExtraError(f"{needed_for} needs {err.name}, which the {extra!r} extra "
                                f"installs: {install_hint(extra)}") from err
