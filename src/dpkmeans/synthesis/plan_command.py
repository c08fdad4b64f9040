"""``python -m dpkmeans plan``: the plan of a fit (:func:`dpkmeans.synthesis.planner.plan`)
as a short table, from public quantities only.

The command's module imports nothing heavy: the planner (scikit-learn, the estimators) is
imported when the command runs, so the rest of the command line starts as fast as before.
Bad input is one line, ``error: ...``, and exit status 2 (:func:`dpkmeans.cli.run`), a
usage error (an option missing or unknown) too.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib import import_module
from typing import NoReturn

from dpkmeans.errors import DPKMeansError

__all__ = ["PlanInputError", "add_parser"]


class PlanInputError(DPKMeansError, ValueError):
    """An input of ``python -m dpkmeans plan`` that the plan refuses (one line on stderr)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``plan`` command on the top-level CLI."""
    parser = subparsers.add_parser(
        "plan", help="preview a fit's noise and guarantee, and the recommended algorithm",
        description="Plan a fit before spending: from public quantities only (no data is "
        "read, nothing is drawn or charged), the iterations, every release's budget and "
        "noise scale, the noise on a released centre of a cluster of N/k records, the "
        "guarantee the ledger will report, warnings, and the algorithm the book's results "
        "recommend.")
    parser.add_argument("--records", required=True, metavar="N",
                        help="the number of records (public)")
    parser.add_argument("--features", required=True, metavar="D", help="the number of features")
    parser.add_argument("--clusters", required=True, metavar="K", help="the number of clusters")
    parser.add_argument("--epsilon", required=True, metavar="EPS", help="the whole budget")
    parser.add_argument("--delta", default="0", metavar="DELTA",
                        help="the delta of an (epsilon, delta) guarantee (default 0: pure)")
    parser.add_argument("--algorithm", default="dplloyd", metavar="NAME",
                        help="an algorithm of the catalogue (default dplloyd)")
    parser.add_argument("--bounds", nargs=2, metavar=("LO", "HI"),
                        help="the public box [LO, HI] of every feature (default: [-1, 1], "
                        "assumed and said)")
    parser.add_argument("--max-iter", metavar="T",
                        help="the iterations of the algorithms that take them as given")
    parser.set_defaults(func=_cmd)
    parser.error = _usage_error  # type: ignore[method-assign]


def _usage_error(message: str) -> NoReturn:
    """argparse's error for the command's arguments, as one line (not the usage first)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _integer(text: str, option: str) -> int:
    """A positive integer, or a one-line error naming the option."""
    try:
        value = int(text)
    except ValueError:
        raise PlanInputError(f"{option} must be a positive integer, got {text!r}") from None
    if value < 1:
        raise PlanInputError(f"{option} must be a positive integer, got {text!r}")
    return value


def _real(text: str, option: str) -> float:
    """A finite number, or a one-line error naming the option."""
    try:
        value = float(text)
    except ValueError:
        raise PlanInputError(f"{option} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise PlanInputError(f"{option} must be a finite number, got {text!r}")
    return value


def _cmd(args: argparse.Namespace) -> int:
    inputs = dict(n_records=_integer(args.records, "--records"),
                  n_features=_integer(args.features, "--features"),
                  n_clusters=_integer(args.clusters, "--clusters"),
                  epsilon=_real(args.epsilon, "--epsilon"), delta=_real(args.delta, "--delta"),
                  algorithm=args.algorithm)
    if args.bounds is not None:
        inputs["bounds"] = tuple(_real(v, "--bounds") for v in args.bounds)
    if args.max_iter is not None:
        inputs["max_iter"] = _integer(args.max_iter, "--max-iter")
    planner = import_module("dpkmeans.synthesis.planner")
    try:
        previewed = planner.plan(**inputs)
    except DPKMeansError:
        raise
    except (ValueError, TypeError) as err:  # the library's checks: one line, not a traceback
        raise PlanInputError(" ".join(str(err).split())) from None
    print(planner.describe(previewed))
    return 0
