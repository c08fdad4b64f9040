"""The dataset object every chapter receives: data, public bounds, provenance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from dpkmeans.data.scaling import (
    MINUS_ONE_ONE,
    check_bounds,
    check_interval,
    data_bounds,
    scale_to_interval,
    unscale_from_interval,
)

__all__ = ["Dataset", "DroppedRows", "Provenance"]


@dataclass(frozen=True)
class DroppedRows:
    """Rows removed for one reason; ``records`` are 1-based record numbers in the file."""

    reason: str
    count: int
    records: tuple[int, ...] = ()
    detail: tuple[str, ...] = ()


@dataclass(frozen=True)
class Provenance:
    """Where the data came from and what happened to it on the way in."""

    source: str
    file: str | None = None
    location: str | None = None
    sha256: str | None = None
    verified: bool = False
    sample: bool = False
    rows_in_file: int = 0
    dropped: tuple[DroppedRows, ...] = ()
    notes: tuple[str, ...] = ()
    path: Path | None = field(default=None, repr=False, compare=False)

    @property
    def n_dropped(self) -> int:
        """Rows dropped for any reason."""
        return sum(d.count for d in self.dropped)


def _frozen(values: Any, dtype: Any) -> np.ndarray:
    arr = np.array(values, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset ready for clustering.

    ``X`` holds the numeric features (``n x d``) with public ``bounds`` (``d x 2``, one
    ``bounds_why`` line each). Categorical features, for k-prototypes (chapter 11), are integer
    codes in ``categorical`` (``-1`` = missing) with their ``levels``. ``target`` holds the class
    or label, if any, as float values or as codes into ``target_levels``. Arrays are read-only.
    """

    name: str
    X: np.ndarray
    feature_names: tuple[str, ...]
    bounds: np.ndarray
    bounds_why: tuple[str, ...]
    provenance: Provenance
    categorical: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    categorical_names: tuple[str, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ()
    target: np.ndarray | None = None
    target_name: str | None = None
    target_levels: tuple[str, ...] | None = None
    paper: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        X = _frozen(self.X, float)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        n, d = X.shape
        if len(self.feature_names) != d or len(self.bounds_why) != d:
            raise ValueError(f"need one feature name and one bounds_why per column ({d})")
        bounds = _frozen(check_bounds(self.bounds, d, allow_degenerate=True), float)
        cat = _frozen(self.categorical, np.int64)
        if cat.size == 0:
            cat = _frozen(np.zeros((n, 0)), np.int64)
        if cat.ndim != 2 or cat.shape[0] != n or cat.shape[1] != len(self.categorical_names):
            raise ValueError(f"categorical must have shape ({n}, {len(self.categorical_names)})")
        if len(self.levels) != cat.shape[1]:
            raise ValueError("need one tuple of levels per categorical column")
        target = None
        if self.target is not None:
            target = _frozen(self.target, np.int64 if self.target_levels is not None else float)
            if target.shape != (n,):
                raise ValueError(f"target must have shape ({n},), got {target.shape}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "categorical", cat)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    # ----------------------------------------------------------------------------- shape

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_numeric(self) -> int:
        """Number of numeric features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def n_features(self) -> int:
        """Numeric plus categorical features: the paper's 'dimension'."""
        return self.n_numeric + int(self.categorical.shape[1])

    @property
    def public_n_records(self) -> int | None:
        """The number of records that the data's documentation states (the registry's row count
        for this paper's selection, a synthetic generator's ``n``), or None. Public, unlike
        ``n_samples`` under add/remove adjacency: Su's rule may read it (book chapter 5)."""
        value = self.metadata.get("public_rows")
        return None if value is None else int(value)

    @property
    def bounds_mode(self) -> str:
        """``"public"`` (registry bounds) or ``"paper"`` (the data's min/max; not private)."""
        return str(self.metadata.get("bounds_mode", "public"))

    def __repr__(self) -> str:
        extra = f", paper={self.paper!r}" if self.paper else ""
        cats = f" + {self.categorical.shape[1]} categorical" if self.categorical.shape[1] else ""
        return (
            f"Dataset({self.name!r}{extra}: {self.n_samples} rows x "
            f"{self.n_numeric} numeric{cats}, "
            f"bounds={self.bounds_mode}, dropped={self.provenance.n_dropped})"
        )

    # ---------------------------------------------------------------------------- bounds

    def with_paper_bounds(self, *, stacklevel: int = 1) -> Dataset:
        """The data's min/max instead of the public bounds (paper mode; ``PrivacyLeakWarning``).

        ``stacklevel`` counts frames above the caller, as in ``warnings.warn``.
        """
        bounds = data_bounds(self.X, stacklevel=stacklevel + 1)
        why = tuple("data min/max (paper mode, not private)" for _ in self.feature_names)
        meta = dict(self.metadata, bounds_mode="paper", public_bounds=self.bounds.tolist())
        return replace(self, bounds=bounds, bounds_why=why, metadata=meta)

    def scaled(self, interval: Sequence[float] = MINUS_ONE_ONE) -> Dataset:
        """``X`` clipped to ``bounds`` and mapped onto ``interval``; the clip count is recorded.

        The metadata key ``"scaling"`` records the mode, the interval, the source bounds and the
        number of clipped values (total and per column), so :meth:`unscale` can map centroids back.
        """
        if self.metadata.get("scaling") is not None:
            raise ValueError(f"{self.name!r} is already scaled; scale the unscaled dataset instead")
        a, b = check_interval(interval)
        Y, counts = scale_to_interval(self.X, self.bounds, (a, b))
        scaling = MappingProxyType(
            {
                "mode": self.bounds_mode,
                "interval": (a, b),
                "source_bounds": tuple(map(tuple, self.bounds.tolist())),
                "clipped_total": counts.total,
                "clipped_per_column": MappingProxyType(
                    {n: c for n, c in zip(self.feature_names, counts.per_column, strict=True) if c}
                ),
            }
        )
        new_bounds = np.tile([a, b], (self.n_numeric, 1))
        why = tuple(f"scaled to [{a:g}, {b:g}] from {w}" for w in self.bounds_why)
        return replace(
            self,
            X=Y,
            bounds=new_bounds,
            bounds_why=why,
            metadata=dict(self.metadata, scaling=scaling),
        )

    @property
    def n_clipped(self) -> int:
        """Values clipped by :meth:`scaled` (0 before scaling)."""
        scaling = self.metadata.get("scaling")
        return int(scaling["clipped_total"]) if scaling else 0

    def unscale(self, Y: object) -> np.ndarray:
        """Map points of the scaled space (e.g. centroids) back to the original units."""
        scaling = self.metadata.get("scaling")
        if scaling is None:
            raise ValueError(f"{self.name!r} is not scaled; there is nothing to undo")
        return unscale_from_interval(Y, scaling["source_bounds"], scaling["interval"])

    # ---------------------------------------------------------------------------- export

    def to_frame(self) -> pd.DataFrame:
        """``X``, the categorical columns (as labels) and the target in one DataFrame."""
        frame = pd.DataFrame(np.asarray(self.X), columns=list(self.feature_names))
        for j, (name, levels) in enumerate(zip(self.categorical_names, self.levels, strict=True)):
            codes = self.categorical[:, j]
            frame[name] = pd.Categorical.from_codes(codes, categories=list(levels))
        if self.target is not None and self.target_name is not None:
            if self.target_levels is not None:
                frame[self.target_name] = pd.Categorical.from_codes(
                    self.target, list(self.target_levels)
                )
            else:
                frame[self.target_name] = self.target
        return frame
