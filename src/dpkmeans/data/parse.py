"""Read a registry file into a typed table, marking malformed rows instead of repairing them.

Numeric and date columns come back as float (NaN = missing); categorical, id and empty columns as
strings (NaN = missing). Nothing is dropped here: malformed rows are flagged, with a description,
and :mod:`dpkmeans.data.loader` decides (and reports) what happens to them.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from dpkmeans.data.errors import DataFormatError
from dpkmeans.data.registry import ColumnSpec, DatasetSpec, FileSpec, RowFilter

__all__ = [
    "RawTable",
    "category_codes",
    "decimal_year",
    "filter_mask",
    "read_raw",
]

_NUMERIC_KINDS = ("numeric",)


@dataclass(frozen=True)
class RawTable:
    """Every record of a file, typed per the registry, with malformed rows flagged."""

    frame: pd.DataFrame
    malformed: np.ndarray
    malformed_detail: tuple[str, ...]
    blank_lines: int


def _open(path: Path, file: FileSpec) -> IO[bytes]:
    return gzip.open(path, "rb") if file.compression == "gzip" else open(path, "rb")


def _count_blank_lines(path: Path, file: FileSpec) -> int:
    with _open(path, file) as fh:
        return sum(1 for line in fh if not line.strip())


def _read_csv(spec: DatasetSpec, path: Path, file: FileSpec, typed: bool) -> pd.DataFrame:
    header = spec.parse.header if file.header == "inherit" else file.header
    options: dict[str, object] = {
        "sep": spec.parse.sep,
        "header": header,
        "encoding": spec.parse.encoding,
        "skipinitialspace": spec.parse.skipinitialspace,
        "compression": file.compression,
        "keep_default_na": False,
        "na_values": [*spec.parse.na_values, ""],
        "dtype": {
            c.name: ("float64" if typed and c.kind in _NUMERIC_KINDS else "str")
            for c in spec.columns
        },
        "low_memory": False,
    }
    if header is None:
        options["names"] = list(spec.column_names)
    return pd.read_csv(path, **options)  # type: ignore[call-overload]


def _check_header(spec: DatasetSpec, frame: pd.DataFrame, path: Path) -> None:
    found = [str(c) for c in frame.columns]
    if found != list(spec.column_names):
        extra = [c for c in found if c not in spec.column_names]
        lost = [c for c in spec.column_names if c not in found]
        raise DataFormatError(
            f"{path.name}: its columns do not match the registry entry {spec.name!r} "
            f"(unexpected {extra[:5]}, absent {lost[:5]}). Is this the right file? Check its "
            "sha256 "
            "with `python -m dpkmeans datasets verify`."
        )


def decimal_year(values: pd.Series, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """Dates parsed with ``fmt`` as decimal years, and a mask of unparseable non-missing values."""
    text = values.astype("str").where(values.notna())
    parsed = pd.to_datetime(text, format=fmt, errors="coerce")
    bad = parsed.isna().to_numpy() & values.notna().to_numpy()
    year = parsed.dt.year.to_numpy(dtype=float, na_value=np.nan)
    days = np.where(parsed.dt.is_leap_year.to_numpy(dtype=bool, na_value=False), 366.0, 365.0)
    frac = (parsed.dt.day_of_year.to_numpy(dtype=float, na_value=np.nan) - 1.0) / days
    return year + frac, bad


def category_codes(values: pd.Series, col: ColumnSpec) -> np.ndarray:
    """Integer codes of ``values`` in ``col.levels`` (-1 = missing); unknown levels raise."""
    assert col.levels is not None
    present = values.notna().to_numpy()
    codes = np.full(len(values), -1, dtype=np.int64)
    if all(isinstance(v, int | float) for v in col.levels):
        nums = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        for code, level in enumerate(col.levels):
            codes[present & (nums == float(level))] = code
    else:
        text = values.astype("str").str.strip().to_numpy()
        for code, level in enumerate(col.levels):
            codes[present & (text == str(level))] = code
    unknown = present & (codes < 0)
    if unknown.any():
        seen = sorted({str(v) for v in values[unknown]})[:5]
        raise DataFormatError(
            f"column {col.name!r} holds values not listed as levels in data/datasets.toml: {seen} "
            f"({int(unknown.sum())} rows). Is this the registered file? If the level is genuine, "
            "add "
            "it to the column's levels."
        )
    return codes


def filter_mask(frame: pd.DataFrame, flt: RowFilter) -> np.ndarray:
    """Rows that a paper's row filter drops (missing values never match a comparison)."""
    col = frame[flt.column]
    if flt.op == "missing":
        return col.isna().to_numpy()
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ops = {
        "<": np.less,
        "<=": np.less_equal,
        ">": np.greater,
        ">=": np.greater_equal,
        "==": np.equal,
        "!=": np.not_equal,
    }
    with np.errstate(invalid="ignore"):
        return ops[flt.op](values, flt.value) & ~np.isnan(values)


def _row_label(spec: DatasetSpec, frame: pd.DataFrame, pos: int) -> str:
    ids = [c.name for c in spec.columns if c.kind == "id"]
    ident = f" ({frame[ids[0]].iloc[pos]})" if ids else ""
    return f"record {pos + 1}{ident}"


def read_raw(spec: DatasetSpec, path: str | Path, file: FileSpec | None = None) -> RawTable:
    """Read ``path`` (a file of ``spec``) as the registry describes; flag malformed rows.

    A fast typed read is tried first; if a numeric cell does not parse, the file is re-read as
    text so that every offending cell can be named.
    """
    path = Path(path)
    file = file or spec.file
    try:
        frame = _read_csv(spec, path, file, typed=True)
        typed = True
    except ValueError:
        frame = _read_csv(spec, path, file, typed=False)
        typed = False
    _check_header(spec, frame, path)
    malformed = np.zeros(len(frame), dtype=bool)
    detail: list[str] = []
    for col in spec.columns:
        series = frame[col.name]
        if col.kind == "numeric" and not typed:
            nums = pd.to_numeric(
                series.astype("str").str.strip().where(series.notna()), errors="coerce"
            )
            bad = (nums.isna() & series.notna()).to_numpy()
            for pos in np.flatnonzero(bad):
                detail.append(
                    f"{_row_label(spec, frame, pos)}: {col.name} = {series.iloc[pos]!r} "
                    "is not a number"
                )
            malformed |= bad
            frame[col.name] = nums.astype("float64")
        elif col.kind == "date":
            assert col.date_format is not None
            years, bad = decimal_year(series, col.date_format)
            for pos in np.flatnonzero(bad):
                detail.append(
                    f"{_row_label(spec, frame, pos)}: {col.name} = {series.iloc[pos]!r} "
                    "is not a date"
                )
            malformed |= bad
            frame[col.name] = years
        elif col.kind == "empty":
            bad = series.notna().to_numpy()
            for pos in np.flatnonzero(bad):
                detail.append(
                    f"{_row_label(spec, frame, pos)}: stray value {series.iloc[pos]!r} in the "
                    f"column that must be empty ({col.name})"
                )
            malformed |= bad
    return RawTable(
        frame=frame,
        malformed=malformed,
        malformed_detail=tuple(detail),
        blank_lines=_count_blank_lines(path, file),
    )
