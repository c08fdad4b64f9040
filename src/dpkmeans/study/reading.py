"""What a reader sees: numbers written for people, and tables that fit the book's column.

Prose and tables quote numbers as people write them: ``10⁻⁶`` rather than ``1e-06``,
``12,000`` rather than ``12000.0``, "yes" rather than ``True``, "100%" rather than ``100.0%``.
A table a reader is meant to read is an HTML table with no index column whose text wraps to
the column: :func:`table` (a pandas ``Styler``, shown by a code cell) or
:func:`markdown_table` (MyST markdown, shown with myst-nb's ``glue:md``, so that it may hold
cross-references such as ``{prf:ref}`` and math).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["count_of", "join_names", "machine", "markdown_table", "number", "percent",
           "share", "table", "yes_no"]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def number(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits as a person writes it.

    Whole numbers are exact, with thousands separators (``48,842``); other numbers from 0.001
    to a million are rounded and written out (``0.0123``, ``3.14``); smaller and larger ones as a power of ten
    (``2.5 × 10⁻⁵``, ``10⁻⁶``). NaN is a dash. Booleans are refused: write them with
    :func:`yes_no`.

    >>> number(1e-06), number(12000.0), number(0.012345), number(2.5e-05), number(float("nan"))
    ('10⁻⁶', '12,000', '0.0123', '2.5 × 10⁻⁵', '–')
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"number() takes a real number, not the bool {x!r}: write it with "
                        "yes_no()")
    if not _is_number(x):
        raise TypeError(f"number() takes a real number, not {type(x).__name__} {x!r}")
    x = float(x)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:  # counts are exact
        return f"{int(x):,}".replace("-", "−")
    rounded = float(f"{x:.{digits}g}")
    if 1e-3 <= abs(rounded) < 1e6:
        if rounded.is_integer():
            return f"{int(rounded):,}".replace("-", "−")
        text = np.format_float_positional(rounded, precision=digits, unique=False,
                                          fractional=False, trim="-")
        return text.replace("-", "−")
    mantissa, exponent = f"{rounded:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    power = "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    sign = "−" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    return f"{sign}{power}" if mantissa == "1" else f"{sign}{mantissa} × {power}"


def percent(fraction: float, digits: int = 0) -> str:
    """A fraction as a percentage with ``digits`` decimals: ``percent(1.0) == '100%'``,
    ``percent(0.1234, 1) == '12.3%'``."""
    if not _is_number(fraction):
        raise TypeError(f"percent() takes a real number, not {type(fraction).__name__}")
    return f"{100 * float(fraction):.{digits}f}%"


def share(fraction: float) -> str:
    """A fraction as a percentage with the decimals it needs, none or one: ``'100%'``,
    ``'82%'``, ``'97.5%'``, ``'12.3%'``; a fraction just short of 1 (or just above 0) is
    ``'> 99.9%'`` (``'< 0.1%'``), never a rounded ``'100.0%'``."""
    if not _is_number(fraction):
        raise TypeError(f"share() takes a real number, not {type(fraction).__name__}")
    value = 100 * float(fraction)
    if round(value, 9).is_integer():
        return f"{round(value):.0f}%"
    if 99.95 <= value < 100:
        return "> 99.9%"
    if 0 < value < 0.05:
        return "< 0.1%"
    return percent(fraction, 1)


def machine(record: Mapping[str, Any]) -> str:
    """The machine a benchmark or a sweep ran on, from its recorded ``machine`` entry:
    ``'AMD EPYC, x86-64, 2 cores, 25 GB of memory'`` (whatever of these it recorded)."""
    if not isinstance(record, Mapping):
        raise TypeError(f"machine() takes a benchmark's machine record, not "
                        f"{type(record).__name__}")
    recorded_cpu = str(record.get("cpu") or "")
    is_arch = recorded_cpu in ("x86_64", "aarch64", "arm64")  # some records name only that
    arch = str(record.get("machine") or (recorded_cpu if is_arch else ""))
    cpu = str(record.get("cpu_model") or ("" if is_arch else recorded_cpu))
    parts = [p.replace("_", "-") for p in (cpu, arch) if p]
    cores = record.get("cores", record.get("cpu_count"))
    if cores:
        parts.append(f"{int(cores)} cores")
    if record.get("ram_GB"):
        parts.append(f"{float(record['ram_GB']):.0f} GB of memory")
    return ", ".join(parts) or "an unrecorded machine"


def yes_no(flag: bool) -> str:
    """``'yes'`` or ``'no'``."""
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"yes_no() takes a bool, not {type(flag).__name__} {flag!r}")
    return "yes" if flag else "no"


def count_of(part: int, whole: int) -> str:
    """``'4 of 5'``: a count out of a total, both in digits."""
    return f"{int(part):,} of {int(whole):,}"


def join_names(names: Sequence[Any]) -> str:
    """Items as prose lists them, each as ``str`` gives it: ``"A"``, ``"A and B"``, ``"A, B and
    C"`` (``""`` for none)."""
    names = [str(n) for n in names]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return yes_no(bool(value))
    if _is_number(value):
        return number(value, digits)
    if value is None:
        return "–"
    return str(value)


Formats = Mapping[str, Callable[[Any], str]]


def _formatted(frame: pd.DataFrame, formats: Formats | None, digits: int) -> pd.DataFrame:
    formats = dict(formats or {})
    unknown = set(formats) - set(frame.columns)
    if unknown:
        raise ValueError(f"formats name columns the table does not have: {sorted(unknown)}")
    out = pd.DataFrame(index=range(len(frame)))
    for column in frame.columns:
        format_one = formats.get(column, lambda v: _cell(v, digits))
        out[str(column)] = [format_one(v) for v in frame[column]]
    return out


def table(frame: pd.DataFrame, *, formats: Formats | None = None, digits: int = 3,
          name: str = "table", wide: bool = False):
    """``frame`` as an HTML table for reading: no index column, numbers written by
    :func:`number` (or by the callable ``formats`` gives for a column), text that wraps.

    ``name`` makes the table's HTML the same on every run (its element ids). ``wide=True``
    marks a table that is genuinely wider than the column (many numeric columns): it then
    scrolls sideways inside its own box. Display the returned ``Styler`` as a cell's value.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"table() takes a pandas DataFrame, not {type(frame).__name__}")
    if not re.fullmatch(r"[A-Za-z][\w-]*", name):
        raise ValueError(f"a table's name is letters, digits, '_' and '-': {name!r}")
    shown = _formatted(frame, formats, digits)
    classes = "reading-table wide-table" if wide else "reading-table"
    return (shown.style.hide(axis="index").set_uuid(name)
            .set_table_attributes(f'class="{classes}"'))


def _escape_markdown(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, *, formats: Formats | None = None,
                   digits: int = 3, align: Mapping[str, str] | None = None) -> str:
    """``frame`` as a MyST (pipe) table, no index column, numbers written by :func:`number`.

    Cells may hold MyST markup (``{prf:ref}`thm-...```, ``{doc}``, ``$math$``); glue the
    result as ``Markdown`` and show it with ``glue:md`` and ``:format: myst``. ``align`` maps
    a column to ``"left"``, ``"right"`` or ``"center"`` (numbers default to right).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"markdown_table() takes a pandas DataFrame, not {type(frame).__name__}")
    align = dict(align or {})
    shown = _formatted(frame, formats, digits)
    rules = {"left": ":---", "right": "---:", "center": ":---:"}
    header, rule = [], []
    for column in frame.columns:
        side = align.get(column) or ("right" if pd.api.types.is_numeric_dtype(frame[column])
                                     and not pd.api.types.is_bool_dtype(frame[column])
                                     else "left")
        if side not in rules:
            raise ValueError(f"align takes left, right or center, not {side!r}")
        header.append(_escape_markdown(str(column)))
        rule.append(rules[side])
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    for row in shown.itertuples(index=False):
        lines.append("| " + " | ".join(_escape_markdown(v) for v in row) + " |")
    return "\n".join(lines)
