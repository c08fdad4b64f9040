"""Differential identifiability (Shang, Zhao, Ren and Liu 2021; book chapter 11):
DI k-means and DI k-prototypes on MapReduce (Dask), as published and corrected.

- :mod:`.variants`: the printed rho_i rule, and both algorithms as engine configurations;
- :mod:`.iterations`: how many iterations ``DPKPrototypes`` runs, and its numeric/categorical
  split, from public inputs;
- :mod:`.study`: the reproduction's grids and runs (MAGIC gamma, Statlog heart);
- :mod:`.claims`: the computed claims ledger;
- :data:`RECORD`: the paper in the registry; the catalogue's builder and the as-published
  example it names are in :mod:`.variants`, its finisher is :func:`finish`.
"""

from pathlib import Path

from dpkmeans.papers.di.audit import write_audit
from dpkmeans.papers.di.claims import write_claims
from dpkmeans.papers.di.variants import (
    catalogue_config,
    kmeans_as_published,
    kmeans_corrected,
    kprototypes_as_published,
    kprototypes_corrected,
    printed_rule,
    published_example,
)
from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Sweep

__all__ = ["RECORD", "kmeans_as_published", "kmeans_corrected", "kprototypes_as_published",
           "kprototypes_corrected", "printed_rule"]


def finish(root: str | Path) -> None:
    """The audit ``di_audit.csv``, then the claims ledger ``di_claims.csv`` from ``di.csv``
    (``root/data/results``)."""
    results = Path(root) / "data" / "results"
    write_audit(results / "di_audit.csv")
    write_claims(results / "di.csv", results / "di_claims.csv")


#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="di", authors="Shang et al.", year="2021",
    title="Differential identifiability clustering algorithms for big data analysis",
    method="differential identifiability", chapter="11_identifiability", bibkey="shang2021di",
    algorithms=(CatalogueEntry(
        "di", catalogue_config,
        "DI k-means (Shang et al. 2021), corrected: one epsilon (or rho over m worlds), the "
        "normalised halving schedule, under replace adjacency.", neighbour="replace"),),
    sweeps=(Sweep("di", target_s=10 * 60, cell_keys=("case",), cell_label="case {case}",
                  data_aliases={"iterations": ("magic", "heart"), "gamma": ("heart",)}),),
    finisher=finish,
    published=published_example,
    theorem="thm-di-dp",
)
