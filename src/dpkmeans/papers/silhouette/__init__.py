"""Silhouette-weighted budgets (Zhang, Liu and Wang, PLoS ONE 2018; book chapter 8).

- :mod:`.variants`: the paper as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger;
- :mod:`.entries`: what :data:`RECORD` names (the catalogue's builder, the finisher).
"""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Ref, Sweep, lazy_exports

__all__ = ["RECORD", "VARIANTS", "as_published", "corrected"]

#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="silhouette", authors="Zhang, Liu and Wang", year="2018",
    title="A differential privacy protecting K-means clustering algorithm based on contour "
          "coefficients",
    method="silhouette-weighted budgets", chapter="08_silhouette", bibkey="zhang2018contour",
    algorithms=(CatalogueEntry(
        "silhouette", Ref(f"{__name__}.entries:catalogue_config"),
        "Silhouette-weighted budgets (Zhang, Liu and Wang 2018), corrected: the cluster weights "
        "come from noisy silhouettes, public bounds, a normalised schedule."),),
    sweeps=(Sweep("silhouette", target_s=10 * 60, cell_keys=("dataset",),
                  cell_label="all algorithms x epsilons: {dataset}"),),
    finisher=Ref(f"{__name__}.entries:finish"),
    published=Ref(f"{__name__}.entries:as_published"),
    theorem="thm-silhouette-corrected",
)

__getattr__ = lazy_exports(__name__, {name: "variants" for name in __all__[1:]})
