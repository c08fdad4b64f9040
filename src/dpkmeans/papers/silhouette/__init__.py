"""Silhouette-weighted budgets (Zhang, Liu and Wang, PLoS ONE 2018; book chapter 8).

- :mod:`.variants`: the paper as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger.
"""

from .variants import VARIANTS, as_published, corrected

__all__ = ["VARIANTS", "as_published", "corrected"]
