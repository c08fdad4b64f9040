"""dpkmeans: differentially private k-means, derived, reproduced and audited.

The companion library of the book *Private k-Means, Reproduced*. Every noise draw goes
through :mod:`dpkmeans.privacy.mechanisms` and is recorded in a :class:`dpkmeans.privacy.accounting.PrivacyLedger`.

The estimators and the ledger are exported here (``from dpkmeans import DPKMeans``) but
imported on first use, so ``import dpkmeans`` loads neither numpy nor scikit-learn.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it)

__version__ = "0.1.0"

#: Each exported name and the module that defines it (imported on first use).
_LAZY = {
    "DPKMeans": "dpkmeans.api.estimators",
    "DPKPrototypes": "dpkmeans.api.mixed_estimator",
    "PrivacyLedger": "dpkmeans.privacy.accounting",
}

__all__ = ["DPKMeans", "DPKPrototypes", "PrivacyLedger"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names are lazy
    from dpkmeans.api.estimators import DPKMeans
    from dpkmeans.api.mixed_estimator import DPKPrototypes
    from dpkmeans.privacy.accounting import PrivacyLedger


def __getattr__(name: str):
    """``dpkmeans.DPKMeans`` and the other exports, imported on first use (PEP 562)."""
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
