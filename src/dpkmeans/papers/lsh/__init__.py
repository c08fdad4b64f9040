"""Private k-means by a prefix tree over locality-sensitive hashes and a private coreset (Chang
and Kamath 2021, the algorithm of Google's differential-privacy library, ``learning/clustering``;
book chapter 12, "Beyond the five papers").

- :mod:`.algorithm`: the algorithm as a :class:`~dpkmeans.engine.standalone.StandaloneConfig`
  (the tree, the coreset, k-means++ on the coreset) and the catalogue's builders: its basic
  form (basic composition of the levels and the sums) and its tight form (both noises scaled
  together until the PLD composition of the releases is the budget, as Google's library
  accounts them).
"""

from dpkmeans.papers.lsh.algorithm import catalogue_config, catalogue_config_tight
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord

__all__ = ["RECORD"]

#: The algorithm in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="lsh", authors="Chang and Kamath", year="2021",
    title="Practical differentially private clustering",
    method="LSH tree and private coreset", chapter="12_synthesis", bibkey="chang2021practical",
    algorithms=(CatalogueEntry(
        "lsh", catalogue_config,
        "A prefix tree over random-hyperplane hashes, grown where a noisy count is large, a "
        "private coreset of its leaves (noisy sums and counts) and k-means++ on the coreset "
        "(Chang and Kamath 2021, Google's library); (epsilon, delta), by basic composition or, "
        "tight, by Google's PLD accounting of its levels and sums.",
        needs_delta=True, standalone=True, build_tight=catalogue_config_tight),),
)
