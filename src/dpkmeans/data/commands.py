"""``python -m dpkmeans datasets list|info NAME|verify|fetch NAME...|check`` (the data command
group)."""

from __future__ import annotations

import argparse
import math
import textwrap

from dpkmeans.data.derive import derivable, derivation_text, fetch_target, obtain_file
from dpkmeans.data.errors import DataError
from dpkmeans.data.fetch import (
    DATA_ENV,
    OFFLINE_ENV,
    check_file,
    data_env_problem,
    dataset_files,
    default_data_home,
    downloads_allowed,
    put_it_here,
)
from dpkmeans.data.needs import book_datasets, missing_datasets, missing_message, require_datasets
from dpkmeans.data.registry import DatasetSpec, get_registry
from dpkmeans.data.report import (
    availability_frame,
    bounds_frame,
    file_statuses,
    format_text,
    papers_frame,
    status_label,
)

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``datasets`` command group on the top-level CLI."""
    parser = subparsers.add_parser(
        "datasets",
        help="the papers' datasets: list, info, verify, fetch",
        description=f"The dataset registry data/datasets.toml. Files are looked up in "
        f"--data-home, ${DATA_ENV}, then {default_data_home().label}.",
    )
    sub = parser.add_subparsers(dest="datasets_command", metavar="COMMAND", required=True)

    home = "extra folder searched first (holds <name>/<file>)"
    p = sub.add_parser("list", help="table of datasets with availability and checksum status")
    p.add_argument("--data-home", help=home)
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("info", help="everything the registry records about one dataset")
    p.add_argument("name", help="a dataset of `datasets list`")
    p.add_argument("--data-home", help=home)
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("verify", help="re-hash every dataset file found")
    p.add_argument("--data-home", help=home)
    p.add_argument(
        "--strict", action="store_true", help="also fail (exit 1) when a file is missing"
    )
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser(
        "fetch", help="download datasets (or derive them from their public originals)",
        description="Download each dataset's file into --data-home or the default folder, "
        "checking its sha256; a file the registry makes from a public original (credit_card, "
        "covtype's sample) is derived from it, both sha256 checked. A dataset with no public "
        "address (marketing_campaign) is an error that says where it comes from and what to "
        "use instead.")
    p.add_argument("names", nargs="+", metavar="NAME")
    p.add_argument("--data-home", help="download here instead of the default folder")
    p.add_argument("--full", action="store_true",
                   help="the full file where one is recorded (covtype: covtype.data.gz, "
                   "581012 records) instead of the file the book reads")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds, > 0 (default 60)")
    p.set_defaults(func=_cmd_fetch)

    p = sub.add_parser(
        "check",
        help="make sure datasets are on disk before a long run (fetching what may be fetched)",
        description="Check that the named datasets (or, with --for-book, those the book's "
        "chapters read as they execute) have a verified file; the missing ones that have a "
        "download address are fetched, and those made from a public original derived, unless "
        f"${OFFLINE_ENV} is set. Anything still missing: "
        "one line saying how to get it, exit 2 (make book runs this first).",
    )
    p.add_argument("names", nargs="*", metavar="NAME")
    p.add_argument("--for-book", action="store_true", help="the datasets the book's chapters read")
    p.add_argument("--data-home", help=home)
    p.set_defaults(func=_cmd_check)


def _cmd_list(args: argparse.Namespace) -> int:
    frame = availability_frame(data_home=args.data_home)
    reg = get_registry()
    frame.insert(3, "papers", [", ".join(reg.datasets[n].papers) or "-" for n in frame["dataset"]])
    print(format_text(frame))
    print(f"bundled with scikit-learn (no files needed): {', '.join(reg.bundled)}")
    missing = missing_datasets(reg.names, data_home=args.data_home, registry=reg)
    if missing:
        print(missing_message("", missing, data_home=args.data_home, registry=reg))
    elif data_env_problem():
        print(data_env_problem())
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    if not args.names and not args.for_book:
        raise DataError("datasets check needs dataset names or --for-book")
    reg = get_registry()
    chapters = book_datasets() if args.for_book else {}
    names = [*args.names, *(n for needed in chapters.values() for n in needed)]
    bundled = [n for n in names if n in reg.bundled]
    names = [n for n in names if n not in reg.bundled]
    purpose = ("the book (chapters " + ", ".join(c.split("_")[0] for c in chapters) + ")"
               if args.for_book else "`datasets check`")
    require_datasets(names, purpose, data_home=args.data_home, registry=reg)
    extra = f"; bundled, no file needed: {', '.join(bundled)}" if bundled else ""
    print(f"{len(dict.fromkeys(names))} datasets present and verified{extra}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    counts = {"verified": 0, "sample": 0, "missing": 0, "mismatch": 0}
    lines = []
    for spec, statuses in file_statuses(data_home=args.data_home):
        main = statuses[0]
        label = status_label(spec, main)
        where = f" in {main.location}" if main.location else ""
        line = f"{spec.name:<20} {label.upper():<18} {main.file.name}{where}"
        if main.status == "mismatch":
            line += (
                f"\n{'':<20} expected {main.file.sha256}\n{'':<20} actual   {main.actual_sha256}"
            )
            counts["mismatch"] += 1
        elif main.status == "missing":
            counts["missing"] += 1
        elif spec.sample:
            counts["sample"] += 1
            full = statuses[1] if len(statuses) > 1 else None
            rows = f"{spec.rows} of {full.file.rows}" if full and full.file.rows else str(spec.rows)
            line += f"\n{'':<20} sample of {rows} rows; the sha256 is the sample's"
        else:
            counts["verified"] += 1
        for extra in statuses[1:]:
            extra_label = status_label(spec, extra)
            line += f"\n{'':<20} full file {extra.file.name}: {extra_label}"
            if extra.status == "mismatch":
                counts["mismatch"] += 1
        lines.append(line)
    print("\n".join(lines))
    total = len(lines)
    print(
        f"{total} entries: {counts['verified']} verified, {counts['sample']} sample (verified), "
        f"{counts['missing']} missing, {counts['mismatch']} checksum mismatch"
    )
    if counts["mismatch"] or (args.strict and counts["missing"]):
        return 1
    return 0


def _info_text(spec: DatasetSpec, data_home: str | None) -> str:
    reg = get_registry()
    out = [f"{spec.name}: {spec.title}", f"  page      {spec.page}"]
    if spec.doi:
        out.append(f"  doi       {spec.doi}")
    out.append(
        f"  licence   {spec.licence}" + (f" ({spec.licence_note})" if spec.licence_note else "")
    )
    out.append(f"  fidelity  {spec.fidelity}; {spec.checksum_evidence}")
    out.append(f"  target    {spec.target or '-'}")
    for f in dataset_files(spec):
        st = check_file(spec.name, f, data_home)
        out.append(
            f"  file      {f.name} ({status_label(spec, st)}"
            + (f", in {st.location})" if st.location else ")")
        )
        out.append(f"            sha256 {f.sha256}")
        out.append(f"            url    {f.url or '(none) ' + f.no_url_reason}")
    for label, text in (("origin", derivation_text(spec) if spec.derive else ""),
                        ("instead", spec.instead)):
        if text:  # an address is never broken
            out.append(textwrap.fill(text, 96, initial_indent=f"  {label:<10}",
                                     subsequent_indent=" " * 12, break_on_hyphens=False,
                                     break_long_words=False))
    parse = spec.parse
    header = "none" if parse.header is None else f"row {parse.header}"
    out.append(
        f"  parse     sep={parse.sep!r} header={header} encoding={parse.encoding} "
        f"missing markers={list(parse.na_values) or 'none'}"
    )
    out.append("  quirks")
    out += [
        textwrap.fill(q, 96, initial_indent="    - ", subsequent_indent="      ")
        for q in spec.quirks
    ]
    out.append("  papers")
    papers = papers_frame(reg)
    for _, row in papers[papers["dataset"] == spec.name].iterrows():
        use = spec.papers[row["paper"].split(" ")[0]]
        out.append(
            f"    - {row['paper']}: rows {use.rows} (paper {row['rows (paper)']}), dims {use.dims} "
            f"(paper {row['dims (paper)']}), {use.match}"
        )
        out.append(textwrap.fill(use.how, 96, initial_indent="      ", subsequent_indent="      "))
    out.append("  columns (public bounds are never computed from the data)")
    out += ["    " + line for line in format_text(bounds_frame(spec)).splitlines()]
    return "\n".join(out)


def _cmd_info(args: argparse.Namespace) -> int:
    print(_info_text(get_registry().dataset(args.name), args.data_home))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise DataError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    reg = get_registry()
    for name in [n for n in args.names if n in reg.bundled]:
        print(f"{name}: bundled with scikit-learn, nothing to fetch (load({name!r}) works as is)")
    specs = [reg.dataset(n) for n in args.names if n not in reg.bundled]
    offline = not downloads_allowed(None)
    for spec in specs:
        f = (spec.full_file if args.full and spec.full_file is not None
             else fetch_target(spec) or spec.file)
        before = check_file(spec.name, f, args.data_home)
        if offline and before.status != "ok" and f.url:
            raise DataError(
                f"{spec.name}: {f.name} is not here and downloads are off (${OFFLINE_ENV} is "
                f"set): unset ${OFFLINE_ENV} to download it, or copy it (sha256 {f.sha256}) "
                f"into {put_it_here(spec.name, args.data_home)} by hand"
            )
        loc, _ = obtain_file(spec, f, data_home=args.data_home, timeout=args.timeout)
        if before.status == "ok":
            verb = "already present"
        elif spec.derive is not None and derivable(spec, f):
            verb = f"derived from {spec.derive.source.name}"
        else:
            verb = "downloaded"
        print(f"{spec.name}: {f.name} {verb} and verified (sha256 {f.sha256[:12]}...) in "
              f"{loc.label}")
    return 0
