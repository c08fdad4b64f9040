"""Private k-means in high dimension by random projection, a private candidate set and private
local search (Balcan, Dick, Liang, Mou and Zhang 2017; book chapter 12, "Beyond the five
papers").

- :mod:`.algorithm`: the algorithm as a :class:`~dpkmeans.engine.standalone.StandaloneConfig`
  (projection, candidates by private recursive partitioning, local search with the exponential
  mechanism, recovery by noisy means, Lloyd refinement) and the catalogue's builder.
"""

from dpkmeans.papers.balcan.algorithm import catalogue_config
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord

__all__ = ["RECORD"]

#: The algorithm in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="balcan", authors="Balcan et al.", year="2017",
    title="Differentially private clustering in high-dimensional Euclidean spaces",
    method="private candidates and local search", chapter="12_synthesis",
    bibkey="balcan2017differentially",
    algorithms=(CatalogueEntry(
        "balcan", catalogue_config,
        "A random projection, candidate centres from private recursive partitions, private "
        "local search with the exponential mechanism, then noisy means in the original space "
        "(Balcan et al. 2017); pure epsilon.",
        needs_n_records=True, standalone=True),),
)
