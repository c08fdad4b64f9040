"""Differential identifiability (Shang, Zhao, Ren and Liu 2021; book chapter 11):
DI k-means and DI k-prototypes on MapReduce (Dask), as published and corrected.

- :mod:`.variants`: the printed rho_i rule, and both algorithms as engine configurations;
- :mod:`.study`: the reproduction's grids and runs (MAGIC gamma, Statlog heart);
- :mod:`.claims`: the computed claims ledger.
"""

from .variants import (
    kmeans_as_published,
    kmeans_corrected,
    kprototypes_as_published,
    kprototypes_corrected,
    printed_rule,
)

__all__ = ["kmeans_as_published", "kmeans_corrected", "kprototypes_as_published",
           "kprototypes_corrected", "printed_rule"]
