"""DP-KCCM (Ni et al. 2021): cluster merging and an adaptive budget (book chapter 7).

- :mod:`.variants`: the four configurations of the paper's section 4.1 (``allocation_nk`` is DP-KCCM);
- :mod:`.study`: the paper-scale runs (20 starts x 50 runs per point) behind figures 3-14;
- :mod:`.claims`: the computed claims ledger.
"""

from .variants import VARIANTS, allocation_k, allocation_nk, average_k, average_nk, dpkccm_config

__all__ = ["VARIANTS", "allocation_k", "allocation_nk", "average_k", "average_nk", "dpkccm_config"]
