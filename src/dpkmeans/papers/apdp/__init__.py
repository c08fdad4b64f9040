"""APDPk-means (known only through study notes in Chinese; the original paper could not be
found; book chapter 10)
and the budget schedules of every paper, compared on the same data.

- :mod:`.variants`: the note as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger and the schedules' ranking.
"""

from .variants import VARIANTS, as_published, corrected

__all__ = ["VARIANTS", "as_published", "corrected"]
