"""Tables about the registry, shared by the CLI (plain text) and the Datasets page (Markdown)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import pandas as pd

from dpkmeans.data.derive import rule_text
from dpkmeans.data.fetch import FileStatus, check_file, dataset_files
from dpkmeans.data.registry import ColumnSpec, DatasetSpec, Registry, get_registry

__all__ = [
    "availability_frame",
    "bounds_frame",
    "datasets_frame",
    "file_statuses",
    "format_markdown",
    "format_number",
    "format_text",
    "obtain_frame",
    "papers_frame",
    "status_label",
]


def format_number(value: float) -> str:
    """``12500`` rather than ``12500.0`` or ``1.25e+04``."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def file_statuses(
    registry: Registry | None = None, data_home: str | os.PathLike[str] | None = None
) -> list[tuple[DatasetSpec, list[FileStatus]]]:
    """For each dataset, the status of its file (and of the full file, where one is recorded)."""
    reg = registry if registry is not None else get_registry()
    return [
        (spec, [check_file(spec.name, f, data_home) for f in dataset_files(spec)])
        for spec in reg.datasets.values()
    ]


def status_label(spec: DatasetSpec, status: FileStatus) -> str:
    """``verified``, ``sample, verified``, ``missing`` or ``CHECKSUM MISMATCH``."""
    if status.status == "missing":
        return "missing"
    if status.status == "mismatch":
        return "CHECKSUM MISMATCH"
    return "sample, verified" if spec.sample and status.file is spec.file else "verified"


def availability_frame(
    registry: Registry | None = None, data_home: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """One row per dataset: the file used, its status and where it was found (no absolute paths)."""
    rows = []
    for spec, statuses in file_statuses(registry, data_home):
        present = [s for s in statuses if s.status != "missing"]
        st = next(
            (s for s in present if s.file is spec.full_file), present[0] if present else statuses[0]
        )
        rows.append(
            {
                "dataset": spec.name,
                "file": st.file.name,
                "rows x cols": f"{st.file.rows or spec.rows} x {spec.cols}",
                "status": status_label(spec, st),
                "found in": st.location or "-",
            }
        )
    return pd.DataFrame(rows)


def obtain_frame(registry: Registry | None = None) -> pd.DataFrame:
    """One row per dataset: how a reader obtains its file. ``how`` is ``downloaded`` (from the
    address ``from``), ``derived`` (from the public original at ``from``, by the rule in
    ``detail``) or ``no public address`` (``from``: where it comes from; ``detail``: what to use
    instead). Every file's sha256 is checked whichever way it comes."""
    reg = registry if registry is not None else get_registry()
    rows = []
    for spec in reg.datasets.values():
        if spec.derive is not None:
            how, source = "derived", spec.derive.source.url
            detail = rule_text(spec)
        elif spec.file.url:
            how, source, detail = "downloaded", spec.file.url, "as published"
        else:
            how, source, detail = "no public address", spec.page, spec.instead or "-"
        if spec.full_file is not None and spec.full_file.url:
            detail += (f"; the full file ({spec.full_file.name}) is downloaded with "
                       "variant='full' or `datasets fetch --full`")
        rows.append({"dataset": spec.name, "file": spec.file.name, "how": how,
                     "from": source, "detail": detail})
    return pd.DataFrame(rows)


def datasets_frame(registry: Registry | None = None) -> pd.DataFrame:
    """One row per dataset: title, size of the registered file, fidelity, source, licence."""
    reg = registry if registry is not None else get_registry()
    return pd.DataFrame(
        [
            {
                "dataset": s.name,
                "title": s.title,
                "rows x cols": f"{s.rows} x {s.cols}",
                "fidelity": s.fidelity,
                "source": s.page,
                "licence": s.licence,
            }
            for s in reg.datasets.values()
        ]
    )


def papers_frame(registry: Registry | None = None) -> pd.DataFrame:
    """One row per (dataset, paper): rows and dims as the paper states them and as loaded."""
    reg = registry if registry is not None else get_registry()
    rows = []
    for spec in reg.datasets.values():
        for key, use in spec.papers.items():
            paper = reg.papers[key]
            rows.append(
                {
                    "dataset": spec.name,
                    "paper": key,
                    "rows (paper)": "?" if use.stated_rows is None else str(use.stated_rows),
                    "rows (ours)": str(use.rows),
                    "dims (paper)": "?" if use.stated_dims is None else str(use.stated_dims),
                    "dims (ours)": str(use.dims),
                    "match": use.match,
                    "chapter": paper.chapter,
                }
            )
    for key, paper in reg.papers.items():
        if paper.datasets_unknown:
            rows.append(
                {
                    "dataset": "unknown",
                    "paper": key,
                    "rows (paper)": "?",
                    "rows (ours)": "-",
                    "dims (paper)": "?",
                    "dims (ours)": "-",
                    "match": "unknown",
                    "chapter": paper.chapter,
                }
            )
    return pd.DataFrame(rows)


def _describe(col: ColumnSpec) -> str:
    if col.bounds is not None:
        lo, hi = (format_number(v) for v in col.bounds)
        return f"[{lo}, {hi}]"
    if col.levels is not None:
        shown = ", ".join(str(v) for v in col.levels[:8])
        more = f", ... ({len(col.levels)} levels)" if len(col.levels) > 8 else ""
        return "{" + shown + more + "}"
    return "-"


def _stem(name: str) -> str:
    return re.sub(r"\d+$", "", name)


def _group(columns: Iterable[ColumnSpec]) -> list[tuple[list[str], ColumnSpec]]:
    """Runs of consecutive columns differing only in a trailing number (and nothing else)."""
    groups: list[tuple[list[str], ColumnSpec]] = []
    for col in columns:
        if groups:
            names, first = groups[-1]
            same = (first.kind, first.bounds, first.levels, first.why) == (
                col.kind,
                col.bounds,
                col.levels,
                col.why,
            )
            if same and _stem(first.name) == _stem(col.name):
                names.append(col.name)
                continue
        groups.append(([col.name], col))
    return groups


def bounds_frame(spec: DatasetSpec) -> pd.DataFrame:
    """Public bounds (or levels) of every column, with the one-line rationale; runs of identical
    columns (e.g. covtype's 40 soil indicators) are folded into one row."""
    rows = []
    for names, col in _group(spec.columns):
        if col.kind in ("id", "empty"):
            continue
        label = names[0] if len(names) == 1 else f"{names[0]} ... {names[-1]} ({len(names)})"
        role = "target" if col.name == spec.target else col.kind
        rows.append(
            {"column": label, "kind": role, "bounds or levels": _describe(col), "why": col.why}
        )
    return pd.DataFrame(rows)


def format_text(frame: pd.DataFrame) -> str:
    """A left-aligned plain-text table."""
    cols = [str(c) for c in frame.columns]
    cells = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


_MD_SPECIAL = "\\`*_{}[]<>|$#"


def _md_escape(text: str) -> str:
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def format_markdown(frame: pd.DataFrame) -> str:
    """A Markdown (MyST) table; characters with a Markdown meaning are escaped."""
    head = "| " + " | ".join(_md_escape(str(c)) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(_md_escape(str(v)) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])
