"""dpkmeans: differentially private k-means, derived, reproduced and audited.

The companion library of the book *Private k-Means, Reproduced*. Every noise draw goes
through :mod:`dpkmeans.mechanisms` and is recorded in a :class:`dpkmeans.accounting.PrivacyLedger`.
"""

__version__ = "0.1.0"

__all__ = ["DPKPrototypes"]


def __getattr__(name: str):
    """``dpkmeans.DPKPrototypes``, imported on first use (``import dpkmeans`` stays light)."""
    if name == "DPKPrototypes":
        from .mixed_estimator import DPKPrototypes

        return DPKPrototypes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
