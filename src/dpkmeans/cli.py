"""Command line of dpkmeans: ``python -m dpkmeans GROUP COMMAND ...`` (or the ``dpkmeans`` script).

Each command group lives with its subject (``dpkmeans.data.commands`` for ``datasets``) and
registers itself through an ``add_parser(subparsers)`` function listed in ``COMMAND_GROUPS``;
a later group is added by appending its function there.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from dpkmeans import __version__, reproduce
from dpkmeans.study import rerun, sweep
from dpkmeans.assignments import commands as assignment_commands
from dpkmeans.data import commands as data_commands
from dpkmeans.errors import DPKMeansError
from dpkmeans.extras import extra_of, install_hint

__all__ = ["COMMAND_GROUPS", "build_parser", "main"]

COMMAND_GROUPS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (  # type: ignore[type-arg]
    data_commands.add_parser,
    sweep.add_parser,
    assignment_commands.add_parser,
    reproduce.add_parser,
    rerun.add_parser,
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog="python -m dpkmeans",
        description="Companion library of the book 'Private k-Means, Reproduced'.",
    )
    parser.add_argument("--version", action="version", version=f"dpkmeans {__version__}")
    groups = parser.add_subparsers(dest="group", metavar="GROUP", required=True)
    for add in COMMAND_GROUPS:
        add(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status: 2 for a usage or data error (one line,
    ``error: ...``), 130 after Ctrl-C, 1 when the reader of the output went away (``| head``),
    silently."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except DPKMeansError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = extra_of(exc.name)
        if extra is None:
            raise
        print(f"error: this command needs {exc.name}, which the {extra!r} extra installs: "
              f"{install_hint(extra)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so that the flush at exit is silent too
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
