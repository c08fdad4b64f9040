"""Command line of dpkmeans: ``python -m dpkmeans GROUP COMMAND ...`` (or the ``dpkmeans`` script).

Each command group lives with its subject (``dpkmeans.data.commands`` for ``datasets``) and
registers itself through an ``add_parser(subparsers)`` function listed in ``COMMAND_GROUPS``;
a later group is added by appending its function there. The classroom's commands (making and
grading per-student assignments) are a package of their own, ``python -m dpkmeans_classroom``,
which imports the library and :func:`run`; ``python -m dpkmeans assignments`` says so.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence

from dpkmeans import __version__, reproduce
from dpkmeans.data import commands as data_commands
from dpkmeans.errors import DPKMeansError
from dpkmeans.extras import extra_of, install_hint
from dpkmeans.study import rerun, sweep
from dpkmeans.synthesis import plan_command

__all__ = ["COMMAND_GROUPS", "MOVED_GROUPS", "build_parser", "main", "run"]

COMMAND_GROUPS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (  # type: ignore[type-arg]
    data_commands.add_parser,
    sweep.add_parser,
    reproduce.add_parser,
    rerun.add_parser,
    plan_command.add_parser,
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


#: Command groups that left the library: each one's name and the command that runs it now.
MOVED_GROUPS: dict[str, str] = {"assignments": "python -m dpkmeans_classroom"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see :func:`run`). A command group that
    moved out of the library (:data:`MOVED_GROUPS`) gets one line naming its new command, and
    status 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in MOVED_GROUPS:
        rest = shlex.join(args[1:]) or "make|grade ..."
        print(f"error: the `{args[0]}` commands moved out of dpkmeans into the book's "
              f"classroom package: run `{MOVED_GROUPS[args[0]]} {rest}` (make install in the "
              "book's repository installs it)", file=sys.stderr)
        return 2
    return run(build_parser(), args)


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` with ``parser`` and run the command it selects (its ``func`` default).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A parser whose every command sets ``func``: a function of the parsed arguments that
        returns the exit status.
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The command's status; 2 for a usage or data error (one line, ``error: ...``), 130
        after Ctrl-C, 1 when the reader of the output went away (``| head``), silently.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="hello")
    >>> parser.set_defaults(func=lambda args: print("hello") or 0)
    >>> run(parser, [])
    hello
    0
    """
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
