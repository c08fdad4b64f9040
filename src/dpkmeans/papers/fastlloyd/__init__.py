"""FastLloyd (Diaa, Humphries and Kerschbaum 2025; book chapter 12, "FastLloyd"): the central
differentially private algorithm of a federated k-means protocol, a DP-Lloyd loop with a
radius-constrained assignment and relative updates.

- :mod:`.algorithm`: its Gaussian form (calibrated by exact Gaussian composition, the paper's
  analysis) and its pure Laplace form, the catalogue's builders;
- :mod:`.flaws`: the published code's flaw (count and sum noise from one seed);
- :mod:`.variants`: the configuration "as in the authors' code".

Its studies (its own protocol, its home ground, its audit) compare it with the catalogue's other
algorithms, so they live beside the leaderboard: :mod:`dpkmeans.synthesis.fastlloyd_protocol`,
:mod:`dpkmeans.synthesis.fastlloyd_home`, :mod:`dpkmeans.synthesis.fastlloyd_audit`.
"""

from dpkmeans.data import get_registry
from dpkmeans.papers.fastlloyd.algorithm import catalogue_config, catalogue_config_laplace
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep

__all__ = ["RECORD"]


def fastlloyd_data_aliases() -> dict[str, tuple[str, ...]]:
    """The protocol's datasets that read no data file: scikit-learn's and the generated sets."""
    registry = get_registry()
    return {name: () for name in (*registry.bundled, *registry.generated)}


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="fastlloyd", authors="Diaa, Humphries and Kerschbaum", year="2025",
    title=("FastLloyd: Federated, accurate, secure, and tunable k-means clustering with "
           "differential privacy"),
    method="FastLloyd", chapter="12_synthesis", bibkey="diaa2025fastlloyd",
    algorithms=(
        CatalogueEntry(
            "fastlloyd-laplace", catalogue_config_laplace,
            "FastLloyd's pure form: records within a public radius of their centre, released "
            "as offsets with Laplace noise, Su et al.'s count/sum split and T.",
            needs_n_records=True),
        CatalogueEntry(
            "fastlloyd", catalogue_config,
            "FastLloyd (Diaa, Humphries and Kerschbaum 2025): records within a public radius "
            "of their centre, released as offsets with Gaussian noise; (epsilon, delta) by "
            "exact Gaussian composition.",
            needs_n_records=True, needs_delta=True, tight_native=True),
    ),
    # no ``target_s``: the reproduction benchmark times one sweep a paper, the five papers'
    sweeps=(
        Sweep("fastlloyd_protocol", needs_data=False, cell_keys=("dataset",),
              cell_label="{dataset}", data_aliases=fastlloyd_data_aliases()),
        Sweep("fastlloyd_home", needs_data=False, cell_keys=("k", "d"),
              cell_label="k = {k}, d = {d}"),
        Sweep("fastlloyd_audit", needs_data=False, cell_keys=("variant",),
              cell_label="{variant}"),
    ),
    # no ``published``: the paper's algorithm has no flaw, so it is not in the book-wide ledger
    # of the five papers; its code's flaw is audited in its own section
    theorem="thm-fastlloyd",
)
