"""APDPk-means (known only through study notes in Chinese; the original paper could not be
found; book chapter 10)
and the budget schedules of every paper, compared on the same data.

- :mod:`.variants`: the note as published and corrected, as engine configurations;
- :mod:`.study`: the reproduction's grid and runs;
- :mod:`.claims`: the computed claims ledger and the schedules' ranking;
- :mod:`.entries`: what :data:`RECORD` names (the catalogue's builder, the finisher).
"""

from dpkmeans.papers.registry import CatalogueEntry, PaperRecord, Ref, Sweep, lazy_exports

__all__ = ["RECORD", "VARIANTS", "as_published", "corrected"]

#: The paper in the registry (:mod:`dpkmeans.papers.registry`).
RECORD = PaperRecord(
    key="apdp", authors="", year="",
    title="APDPk-means: a new differential privacy clustering algorithm based on arithmetic "
          "progression privacy budget allocation",
    method="APDPk-means", chapter="10_schedules", bibkey="apdpkmeans",
    algorithms=(CatalogueEntry(
        "apdp", Ref(f"{__name__}.entries:catalogue_config"),
        "APDPk-means, corrected: budgets in a decreasing arithmetic progression floored at "
        "Su's minimum.", needs_n_records=True),),
    sweeps=(Sweep("apdp", target_s=10 * 60, cell_keys=("case",),
                  cell_label="all algorithms x epsilons: {case}",
                  data_aliases={"blood_k2": ("blood",)}),),
    finisher=Ref(f"{__name__}.entries:finish"),
    published=Ref(f"{__name__}.entries:as_published"),
    theorem="thm-ap-schedule",
)

__getattr__ = lazy_exports(__name__, {name: "variants" for name in __all__[1:]})
