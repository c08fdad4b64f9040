"""dpkmeans: differentially private k-means, derived, reproduced and audited.

The companion library of the book *Private k-Means, Reproduced*. Every noise draw goes
through :mod:`dpkmeans.privacy.mechanisms` and is recorded in a :class:`dpkmeans.privacy.accounting.PrivacyLedger`.

The estimators, the ledger and :func:`~dpkmeans.synthesis.planner.plan` (a fit's noise and
guarantee previewed from public inputs, before any budget is spent) are exported here
(``from dpkmeans import DPKMeans``) but imported on first use, so ``import dpkmeans`` loads
neither numpy nor scikit-learn.

``dpkmeans.__version__`` is the installed package's version, read from its metadata on first
use: ``pyproject.toml`` is the one place the version is written (``docs/release.md``).
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it)

#: The version of a source tree imported without being installed (PEP 440's local label).
UNINSTALLED_VERSION = "0+unknown"

#: Each exported name and the module that defines it (imported on first use).
_LAZY = {
    "DPKMeans": "dpkmeans.api.estimators",
    "DPKPrototypes": "dpkmeans.api.mixed_estimator",
    "PrivacyLedger": "dpkmeans.privacy.accounting",
    "plan": "dpkmeans.synthesis.planner",
}

__all__ = ["DPKMeans", "DPKPrototypes", "PrivacyLedger", "plan"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names are lazy
    from dpkmeans.api.estimators import DPKMeans
    from dpkmeans.api.mixed_estimator import DPKPrototypes
    from dpkmeans.privacy.accounting import PrivacyLedger
    from dpkmeans.synthesis.planner import plan

    __version__: str


def _installed_version() -> str:
    """The version in the installed package's metadata (pyproject.toml's when it was
    installed), or :data:`UNINSTALLED_VERSION` for a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpkmeans")
    except PackageNotFoundError:
        return UNINSTALLED_VERSION


def __getattr__(name: str):
    """``dpkmeans.DPKMeans`` and the other exports, imported on first use, and
    ``dpkmeans.__version__``, read on first use (PEP 562)."""
    if name == "__version__":
        globals()[name] = value = _installed_version()
        return value
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
