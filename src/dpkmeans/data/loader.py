"""``load(name, paper=...)``: one way in to every dataset of the book.

The steps, each reported in the returned dataset's provenance: find and verify the file
(:mod:`~dpkmeans.data.fetch`, or derive it from its public original where the registry has a
rule, :mod:`~dpkmeans.data.derive`), parse it (:mod:`~dpkmeans.data.parse`), drop malformed
rows (only where the registry allows it), apply the paper's own row filters, handle missing
values, select the paper's columns, and optionally rescale by public (or, with a warning,
data) bounds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from dpkmeans.data.bundled import load_bundled
from dpkmeans.data.dataset import Dataset, DroppedRows, Provenance
from dpkmeans.data.derive import derivable, obtain_file
from dpkmeans.data.errors import DataFormatError, MissingValuesError, PaperColumnError
from dpkmeans.data.fetch import find_file
from dpkmeans.data.generated import load_generated
from dpkmeans.data.parse import RawTable, category_codes, filter_mask, read_raw
from dpkmeans.data.registry import (
    ColumnSpec,
    DatasetSpec,
    FileSpec,
    PaperUse,
    Registry,
    get_registry,
)

__all__ = ["load", "select_columns"]

#: The paper keys the book used before, each with the paper's key now (``load`` names it).
RENAMED_PAPERS = {"dp-kccm": "dpkccm", "colored-noise": "colored"}

OnMissing = Literal["drop", "raise", "keep"]
Variant = Literal["auto", "sample", "full"]


def select_columns(
    spec: DatasetSpec, use: PaperUse | None, columns: Sequence[str] | None
) -> tuple[tuple[str, ...], bool]:
    """The feature columns to return and whether the target is among them.

    Default: the paper's columns, or every feature column when no paper is given. With both a
    paper and ``columns``, the columns must be among the paper's (else ``PaperColumnError``).
    """
    if columns is None:
        if use is None:
            return spec.feature_names, False
        if use.include_target and spec.target and spec.target not in use.columns:
            return (*use.columns, spec.target), True
        return use.columns, spec.target in use.columns
    if isinstance(columns, str):
        raise TypeError("columns must be a sequence of column names, not a single string")
    chosen = tuple(columns)
    if not chosen:
        raise ValueError("columns must not be empty")
    for name in chosen:
        col = spec.column(name)
        if not col.is_feature:
            raise PaperColumnError(
                f"column {name!r} of {spec.name!r} is an {col.kind} column, not a feature"
            )
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"columns repeats a name: {list(chosen)}")
    if use is not None:
        allowed = set(use.columns) | ({spec.target} if use.include_target else set())
        extra = [c for c in chosen if c not in allowed]
        if extra:
            raise PaperColumnError(
                f"paper {use.paper!r} did not use the columns {extra} of {spec.name!r}; it used: "
                + ", ".join(use.columns)
            )
    return chosen, spec.target in chosen


def _choose_file(
    spec: DatasetSpec, variant: Variant, data_home: str | os.PathLike[str] | None
) -> tuple[FileSpec, bool]:
    """The file to read and whether it is a sample."""
    if variant not in ("auto", "sample", "full"):
        raise ValueError(f"variant must be 'auto', 'sample' or 'full', got {variant!r}")
    if spec.full_file is None:
        if variant == "full" and spec.sample:
            raise DataFormatError(f"{spec.name!r} records no full file")
        return spec.file, spec.sample
    if variant == "full":
        return spec.full_file, False
    if variant == "sample":
        return spec.file, spec.sample
    # auto: a full file on disk wins; else the sample on disk; else the sample derived from the
    # full file, where the registry has the rule (covtype); else download the full file.
    if find_file(spec.name, spec.full_file, data_home) is not None:
        return spec.full_file, False
    if find_file(spec.name, spec.file, data_home) is not None or derivable(spec):
        return spec.file, spec.sample
    return spec.full_file, False


def _drop(
    keep: np.ndarray, mask: np.ndarray, reason: str, detail: Sequence[str] = ()
) -> DroppedRows | None:
    """Remove ``mask`` rows from ``keep`` (in place); report those that were still kept."""
    newly = mask & keep
    if not newly.any():
        return None
    keep &= ~newly
    records = tuple(int(i) + 1 for i in np.flatnonzero(newly))
    return DroppedRows(reason=reason, count=len(records), records=records, detail=tuple(detail))


def _numeric_block(
    frame: pd.DataFrame, cols: Sequence[ColumnSpec]
) -> tuple[np.ndarray, list[str], list[tuple[float, float]], list[str]]:
    values, names, bounds, why = [], [], [], []
    for col in cols:
        if col.kind == "categorical":
            assert col.levels is not None
            codes = category_codes(frame[col.name], col).astype(float)
            codes[codes < 0] = np.nan
            values.append(codes)
            bounds.append((0.0, float(len(col.levels) - 1)))
            why.append(f"ordinal code of {len(col.levels)} public levels ({col.why})")
        else:
            assert col.bounds is not None
            values.append(frame[col.name].to_numpy(dtype=float, na_value=np.nan))
            bounds.append(col.bounds)
            why.append(col.why)
        names.append(col.name)
    X = np.column_stack(values) if values else np.zeros((len(frame), 0))
    return X, names, bounds, why


def load(
    name: str,
    paper: str | None = None,
    *,
    columns: Sequence[str] | None = None,
    scale: Sequence[float] | None = None,
    bounds: Literal["public", "paper"] = "public",
    on_missing: OnMissing = "drop",
    data_home: str | os.PathLike[str] | None = None,
    download: bool | None = None,
    variant: Variant = "auto",
    registry: Registry | None = None,
) -> Dataset:
    """Load dataset ``name`` as ``paper`` used it.

    Parameters
    ----------
    name : a registry name (``python -m dpkmeans datasets list``), a bundled one (iris, wine,
        breast_cancer) or a generated one (``g2_<d>_<sd>``: :mod:`dpkmeans.data.generated`).
    paper : a paper's key (dpkccm, silhouette, colored, di: :mod:`dpkmeans.papers.registry`);
        selects that paper's columns and row filters. ``None`` gives every feature column. A
        former key (:data:`RENAMED_PAPERS`: dp-kccm, colored-noise) raises a ``ValueError``
        naming the paper's key.
    columns : explicit feature columns (with ``paper``, a subset of the paper's).
    scale : e.g. ``(-1, 1)`` (DP-KCCM) or ``(0, 1)`` (the other papers): clip to the
        bounds, then rescale.
    bounds : ``"public"`` (registry) or ``"paper"`` (the data's min/max as the papers did; warns
        ``PrivacyLeakWarning``, recorded as ``metadata["bounds_mode"]``).
    on_missing : rows with a missing value in a selected column are dropped and reported
        (``"drop"``), raise ``MissingValuesError`` (``"raise"``), or stay as NaN / code -1
        (``"keep"``).
    data_home, download, variant : see :mod:`dpkmeans.data.fetch`; ``variant`` picks covtype's
        sample or full file (``"auto"``: the full file when it is on disk, else the sample,
        derived from the full file when it is missing; ``"full"`` downloads the full file).
    """
    if bounds not in ("public", "paper"):
        raise ValueError(f"bounds must be 'public' or 'paper', got {bounds!r}")
    if on_missing not in ("drop", "raise", "keep"):
        raise ValueError(f"on_missing must be 'drop', 'raise' or 'keep', got {on_missing!r}")
    reg = registry if registry is not None else get_registry()
    if isinstance(paper, str) and paper not in reg.papers and paper in RENAMED_PAPERS:
        raise ValueError(f"the paper key {paper!r} was renamed: use paper="
                         f"{RENAMED_PAPERS[paper]!r}")
    if isinstance(name, str) and name in reg.bundled:
        if paper is not None:
            raise PaperColumnError(f"{name!r} is a scikit-learn demo dataset; no paper used it")
        ds = load_bundled(reg.bundled[name], columns)
    elif isinstance(name, str) and name in reg.generated:
        if paper is not None:
            raise PaperColumnError(f"{name!r} is generated from a published definition; "
                                   "load it without paper=")
        ds = load_generated(reg.generated[name], columns)
    else:
        ds = _load_registered(reg, name, paper, columns, on_missing, data_home, download, variant)
    if bounds == "paper":
        ds = ds.with_paper_bounds(stacklevel=2)
    if scale is not None:
        ds = ds.scaled(scale)
    return ds


def _paper_use(reg: Registry, spec: DatasetSpec, paper: str | None) -> PaperUse | None:
    if paper is None:
        return None
    paper_spec = reg.paper(paper)
    if paper_spec.datasets_unknown:
        raise PaperColumnError(
            f"paper {paper!r} has no registered datasets: {paper_spec.dims_source}. "
            f"{paper_spec.note}"
        )
    return spec.paper_use(paper)


def _rows_to_keep(
    spec: DatasetSpec,
    raw: RawTable,
    use: PaperUse | None,
    needed: Sequence[str],
    on_missing: OnMissing,
) -> tuple[np.ndarray, list[DroppedRows], dict[str, int]]:
    """Rows kept after malformed rows, the paper's filters and missing values (in that order).

    Every removal is reported with its reason; nothing is dropped silently.
    """
    frame = raw.frame
    keep = np.ones(len(frame), dtype=bool)
    dropped: list[DroppedRows | None] = []
    if raw.malformed.any():
        if spec.on_malformed != "drop":
            raise DataFormatError(
                f"{spec.name!r} has {int(raw.malformed.sum())} malformed rows: "
                + "; ".join(raw.malformed_detail[:5])
            )
        reason = "malformed row in the source file"
        dropped.append(_drop(keep, raw.malformed, reason, raw.malformed_detail))
    if use is not None:
        for flt in use.row_filters:
            reason = f"paper {use.paper!r}: {flt.reason}"
            dropped.append(_drop(keep, filter_mask(frame, flt), reason))
    missing = frame[list(needed)].isna().to_numpy() & keep[:, None]
    counts = {c: int(n) for c, n in zip(needed, missing.sum(axis=0), strict=True) if n}
    if counts and on_missing == "raise":
        raise MissingValuesError(
            f"{spec.name!r} has missing values in {counts}; pass on_missing='drop' to drop "
            "those rows (they are reported) or on_missing='keep' to keep them as NaN / code -1"
        )
    if on_missing == "drop":
        reason = f"missing value in {', '.join(counts)}"
        dropped.append(_drop(keep, missing.any(axis=1), reason))
    return keep, [d for d in dropped if d is not None], counts


def _load_registered(
    reg: Registry,
    name: str,
    paper: str | None,
    columns: Sequence[str] | None,
    on_missing: OnMissing,
    data_home: str | os.PathLike[str] | None,
    download: bool | None,
    variant: Variant,
) -> Dataset:
    spec = reg.dataset(name)
    use = _paper_use(reg, spec, paper)
    chosen, target_in_x = select_columns(spec, use, columns)
    file, is_sample = _choose_file(spec, variant, data_home)
    location, path = obtain_file(spec, file, data_home=data_home, download=download)
    raw = read_raw(spec, path, file)
    expected_rows = file.rows if file.rows is not None else spec.rows
    if len(raw.frame) != expected_rows:
        raise DataFormatError(
            f"{file.name}: {len(raw.frame)} records, the registry says {expected_rows}. The file "
            "passed its checksum, so the registry entry is wrong: report it."
        )
    needed = list(chosen) + ([spec.target] if spec.target and spec.target not in chosen else [])
    keep, dropped, missing_counts = _rows_to_keep(spec, raw, use, needed, on_missing)
    frame = raw.frame.loc[keep].reset_index(drop=True)

    specs = [spec.column(c) for c in chosen]
    ordinal = use is not None and use.encode_categorical == "ordinal"
    in_x = [c for c in specs if c.kind != "categorical" or ordinal]
    in_cat = [c for c in specs if c.kind == "categorical" and not ordinal]
    X, names, box, why = _numeric_block(frame, in_x)
    cat_codes = (
        np.column_stack([category_codes(frame[c.name], c) for c in in_cat]) if in_cat else None
    )
    levels = tuple(tuple(str(v) for v in c.levels or ()) for c in in_cat)

    target = target_levels = None
    if spec.target:
        tcol = spec.column(spec.target)
        if tcol.kind == "categorical":
            target = category_codes(frame[tcol.name], tcol)
            target_levels = tuple(str(v) for v in tcol.levels or ())
        else:
            target = frame[tcol.name].to_numpy(dtype=float, na_value=np.nan)

    notes = list(spec.quirks)
    if raw.blank_lines:
        notes.append(f"{raw.blank_lines} blank line(s) in the file skipped (not records)")
    provenance = Provenance(
        source="file",
        file=file.name,
        location=location.label,
        sha256=file.sha256,
        verified=True,
        sample=is_sample,
        rows_in_file=len(raw.frame),
        dropped=tuple(dropped),
        notes=tuple(notes),
        path=path,
    )
    metadata: dict[str, Any] = {
        "bounds_mode": "public",
        "scaling": None,
        "variant": "sample" if is_sample else ("full" if file is spec.full_file else "file"),
        "target_in_X": target_in_x,
        "encoding": "ordinal" if ordinal and any(c.kind == "categorical" for c in in_x) else "none",
        "missing": missing_counts,
        "public_rows": use.rows if use is not None else spec.rows,
    }
    if use is not None:
        metadata["paper_use"] = {
            "rows": use.rows,
            "dims": use.dims,
            "stated_rows": use.stated_rows,
            "stated_dims": use.stated_dims,
            "match": use.match,
            "how": use.how,
        }
    return Dataset(
        name=spec.name,
        X=X,
        feature_names=tuple(names),
        bounds=np.asarray(box, dtype=float).reshape(len(names), 2),
        bounds_why=tuple(why),
        provenance=provenance,
        categorical=cat_codes if cat_codes is not None else np.zeros((len(frame), 0)),
        categorical_names=tuple(c.name for c in in_cat),
        levels=levels,
        target=target,
        target_name=spec.target,
        target_levels=target_levels,
        paper=paper,
        metadata=metadata,
    )
