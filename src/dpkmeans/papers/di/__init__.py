"""Differential identifiability (Shang, Zhao, Ren and Liu 2021; book chapter 11):
DI k-means and DI k-prototypes on MapReduce (Dask), as published and corrected.

- :mod:`.variants`: the printed rho_i rule, and both algorithms as engine configurations;
- :mod:`.iterations`: how many iterations ``DPKPrototypes`` runs, and its numeric/categorical
  split, from public inputs;
- :mod:`.study`: the reproduction's grids and runs (MAGIC gamma, Statlog heart);
- :mod:`.claims`: the computed claims ledger;
- :mod:`.entries`: what :data:`RECORD` names (the catalogue's builder, the finisher).
"""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Ref, Sweep, lazy_exports

__all__ = ["RECORD", "kmeans_as_published", "kmeans_corrected", "kprototypes_as_published",
           "kprototypes_corrected", "printed_rule"]

#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="di", authors="Shang et al.", year="2021",
    title="Differential identifiability clustering algorithms for big data analysis",
    method="differential identifiability", chapter="11_identifiability", bibkey="shang2021di",
    algorithms=(CatalogueEntry(
        "di", Ref(f"{__name__}.entries:catalogue_config"),
        "DI k-means (Shang et al. 2021), corrected: one epsilon (or rho over m worlds), the "
        "normalised halving schedule, under replace adjacency.", neighbour="replace"),),
    sweeps=(Sweep("di", target_s=10 * 60, cell_keys=("case",), cell_label="case {case}",
                  data_aliases={"iterations": ("magic", "heart"), "gamma": ("heart",)}),),
    finisher=Ref(f"{__name__}.entries:finish"),
    published=Ref(f"{__name__}.entries:as_published"),
    theorem="thm-di-dp",
)

__getattr__ = lazy_exports(__name__, {name: "variants" for name in __all__[1:]})
