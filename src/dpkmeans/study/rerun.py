"""``python -m dpkmeans notebook IN OUT -p NAME VALUE ...``: re-run a chapter (or an exercise)
with other parameters.

The first code cell of each chapter is tagged ``parameters``; this command runs the notebook
through papermill with new values for them, as ``papermill IN OUT -p NAME VALUE`` does, but
with the kernel the sweeps use (:data:`dpkmeans.study.cell_kernels.KERNEL_ARGUMENTS`), so that
ipykernel's warning about its local, unencrypted TCP sockets does not print at the start.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from dpkmeans.errors import DPKMeansError
from dpkmeans.study.cell_kernels import KERNEL_ARGUMENTS

__all__ = ["add_parser", "parameter_value", "run_notebook"]

_INT = re.compile(r"[+-]?\d+")
_WORDS: dict[str, Any] = {"True": True, "true": True, "False": False, "false": False,
                          "None": None, "none": None, "null": None}


def parameter_value(text: str) -> Any:
    """A ``-p`` value as papermill's command line reads it: an int, a float, True/False/None,
    else the string itself."""
    if text in _WORDS:
        return _WORDS[text]
    if _INT.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def run_notebook(notebook: str | Path, output: str | Path, parameters: dict[str, Any], *,
                 cwd: str | Path | None = None, progress: bool = True) -> None:
    """Execute ``notebook`` with ``parameters`` into ``output`` (papermill), in ``cwd`` (default:
    the notebook's folder), on a kernel started with :data:`KERNEL_ARGUMENTS`."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    source = Path(notebook)
    if not source.is_file():
        raise DPKMeansError(f"no notebook at {source}")
    folder = Path(cwd) if cwd is not None else source.resolve().parent
    if not folder.is_dir():
        raise DPKMeansError(f"--cwd {folder}: no such folder")
    try:
        pm.execute_notebook(str(source), str(output), parameters=parameters, cwd=str(folder),
                            progress_bar=progress, extra_arguments=list(KERNEL_ARGUMENTS))
    except PapermillExecutionError as exc:
        raise DPKMeansError(f"{source.name} failed at its cell {exc.exec_count}: {exc.ename}: "
                            f"{' '.join(str(exc.evalue).split())[:200]}; the executed copy, "
                            f"traceback included, is {output}") from None


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``notebook`` command on the top-level CLI."""
    parser = subparsers.add_parser(
        "notebook", help="re-run a chapter or an exercise with other parameters (papermill)",
        description="Run NOTEBOOK with new values for its `parameters` cell and save the "
        "executed copy as OUTPUT, as `papermill NOTEBOOK OUTPUT -p NAME VALUE` does, on a "
        "quiet kernel.")
    parser.add_argument("notebook", help="e.g. notebooks/01_dp_laplace.ipynb")
    parser.add_argument("output", help="the executed copy, e.g. /tmp/ch1.ipynb")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"), help="a parameter and its value (repeatable)")
    parser.add_argument("--cwd", help="working folder of the kernel (default: the notebook's)")
    parser.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    parameters = {name: parameter_value(value) for name, value in args.parameter}
    run_notebook(args.notebook, args.output, parameters, cwd=args.cwd)
    print(f"executed {args.notebook} with {parameters or 'its own parameters'} -> {args.output}")
    return 0
