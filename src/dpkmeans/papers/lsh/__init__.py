"""Private k-means by a prefix tree over locality-sensitive hashes and a private coreset (Chang
and Kamath 2021, the algorithm of Google's differential-privacy library, ``learning/clustering``;
book chapter 12, "Beyond the five papers").

- :mod:`.algorithm`: the algorithm as a :class:`~dpkmeans.engine.standalone.StandaloneConfig`
  (the tree, the coreset, k-means++ on the coreset) and the catalogue's builder.
"""

from dpkmeans.papers.lsh.algorithm import catalogue_config
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
        "(Chang and Kamath 2021, Google's library); (epsilon, delta).",
        needs_delta=True, standalone=True),),
)
