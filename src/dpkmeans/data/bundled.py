"""Small real datasets shipped inside scikit-learn (iris, wine, breast_cancer): no files needed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpkmeans.data.dataset import Dataset, Provenance
from dpkmeans.data.errors import PaperColumnError, RegistryError
from dpkmeans.data.registry import BundledSpec

__all__ = ["load_bundled"]


def load_bundled(spec: BundledSpec, columns: Sequence[str] | None = None) -> Dataset:
    """Load ``sklearn.datasets.<spec.loader>()`` with the registry's public bounds."""
    import sklearn  # here, not at import: every sweep cell imports the data layer (0.5 s)
    import sklearn.datasets

    loader = getattr(sklearn.datasets, spec.loader, None)
    if loader is None:
        raise RegistryError(
            f"scikit-learn has no sklearn.datasets.{spec.loader} (bundled.{spec.name})"
        )
    bunch = loader()
    names = [str(n) for n in bunch.feature_names]
    registered = [c.name for c in spec.columns]
    if names != registered:
        raise RegistryError(
            f"sklearn's {spec.name} columns {names} differ from the registry's {registered}; "
            "update data/datasets.toml"
        )
    if isinstance(columns, str):
        raise TypeError("columns must be a sequence of column names, not a single string")
    chosen = list(columns) if columns is not None else names
    unknown = [c for c in chosen if c not in names]
    if unknown or not chosen:
        raise PaperColumnError(f"{spec.name!r} has no columns {unknown}; its columns are: {names}")
    idx = [names.index(c) for c in chosen]
    cols = [spec.columns[i] for i in idx]
    return Dataset(
        name=spec.name,
        X=np.asarray(bunch.data, dtype=float)[:, idx],
        feature_names=tuple(chosen),
        bounds=np.array([c.bounds for c in cols], dtype=float),
        bounds_why=tuple(c.why for c in cols),
        provenance=Provenance(
            source=f"scikit-learn {sklearn.__version__} sklearn.datasets.{spec.loader}",
            rows_in_file=int(bunch.data.shape[0]),
            verified=False,
            notes=(spec.title, f"licence: {spec.licence}"),
        ),
        target=np.asarray(bunch.target, dtype=np.int64),
        target_name="target",
        target_levels=tuple(str(t) for t in bunch.target_names),
        metadata={"bounds_mode": "public", "scaling": None,
                  "public_rows": int(bunch.data.shape[0])},
    )
