"""dpkmeans: differentially private k-means, derived, reproduced and audited.

The companion library of the book *Private k-Means, Reproduced*. Every noise draw goes
through :mod:`dpkmeans.mechanisms` and is recorded in a :class:`dpkmeans.accounting.PrivacyLedger`.
"""

__version__ = "0.1.0"
