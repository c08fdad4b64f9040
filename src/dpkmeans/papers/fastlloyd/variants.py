"""FastLloyd as published (Diaa, Humphries and Kerschbaum 2025): the corrected algorithm is
:mod:`dpkmeans.papers.fastlloyd.algorithm` (the paper's algorithm, which has no flaw); "as in
the authors' code" is the same configuration with the count and sum noise of an iteration
drawn from one seed (:data:`~dpkmeans.papers.fastlloyd.flaws.SHARED_SEED`), whose ledger
records the leak, so that "not private" is computed (book chapter 12, "FastLloyd").
"""

from __future__ import annotations

from dataclasses import replace

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.papers.fastlloyd.algorithm import catalogue_config
from dpkmeans.papers.fastlloyd.flaws import SHARED_SEED, SharedSeedRelease
from dpkmeans.papers.registry import FitInputs

__all__ = ["as_published"]


def as_published(inputs: FitInputs) -> DPLloydConfig:
    """FastLloyd "as in the authors' code": the Gaussian form of ``inputs`` with the count
    noise and the sum noise of every iteration from one seed (flaw ``shared-seed-noise``).

    Parameters
    ----------
    inputs : FitInputs
        The public inputs (``delta`` and ``n_records`` given).

    Returns
    -------
    DPLloydConfig
        Not private: its ledger records the leak.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.engine.loop import run
    >>> from dpkmeans.papers.fastlloyd.variants import as_published
    >>> from dpkmeans.papers.registry import FitInputs
    >>> config = as_published(FitInputs(2, 1.0, ([-1.0] * 2, [1.0] * 2), max_iter=5,
    ...                                 n_records=100, delta=1e-4))
    >>> result = run(np.zeros((100, 2)), config, seed=0)
    >>> result.ledger.is_private
    False
    """
    config = catalogue_config(inputs)
    return replace(config, step=SharedSeedRelease(), flaws=(SHARED_SEED,), target=None,
                   budget=None)
