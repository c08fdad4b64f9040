"""DP-KCCM (Ni et al. 2021): cluster merging and an adaptive budget (book chapter 7).

- :mod:`.variants`: the four configurations of the paper's section 4.1 (``allocation_nk`` is
  DP-KCCM);
- :mod:`.study`: the paper-scale runs (20 starts x 50 runs per point) behind figures 3-14;
- :mod:`.claims`: the computed claims ledger;
- :mod:`.flaws`: the published method's flaws as data (its data-derived scaling and its tuning
  on the evaluation data), carried by the as-published configuration;
- :mod:`.entries`: what :data:`RECORD` names (the catalogue's builder, the finisher).
"""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Ref, Sweep, lazy_exports

__all__ = ["RECORD", "VARIANTS", "allocation_k", "allocation_nk", "average_k", "average_nk",
           "dpkccm_config"]

#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="dpkccm", authors="Ni et al.", year="2021",
    title="Utility-efficient differentially private K-means clustering based on cluster merging",
    method="DP-KCCM", chapter="07_dpkccm", bibkey="ni_dpkccm",
    algorithms=(CatalogueEntry(
        "dp-kccm", Ref(f"{__name__}.entries:catalogue_config"),
        "DP-KCCM (Ni et al. 2021): n k clusters, a decreasing budget and a noisy-count merge "
        "down to k."),),
    sweeps=(Sweep("dpkccm", target_s=15 * 60, cell_keys=("dataset", "axis"),
                  cell_label="{axis}: {dataset}",
                  label_values={"axis": {"epsilon": "NICV vs epsilon (figs 3-8)",
                                         "k": "NICV vs k (figs 9-14)",
                                         "ablations": "ablations"}}),),
    finisher=Ref(f"{__name__}.entries:finish"),
    published=Ref(f"{__name__}.entries:as_published"),
    theorem="thm-dpkccm-private",
    former_keys=("dp-kccm",),
)

__getattr__ = lazy_exports(__name__, {name: "variants" for name in __all__[1:]})
