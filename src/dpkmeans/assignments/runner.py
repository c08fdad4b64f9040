"""Execute one prepared notebook inside the grading sandbox (run as a script, by path).

``python runner.py NOTEBOOK EXECUTED RESULT CELL_SECONDS`` runs every cell of ``NOTEBOOK``
with nbclient (on after an error, so later answers still count), writes the executed notebook
to ``EXECUTED`` and ``{"error": ...}`` (the first error, one line) to ``RESULT``. It imports
nothing of the library: the student's kernel cannot reach the assignments' chapter modules,
and everything it writes is read back by the grader as untrusted data
(:func:`dpkmeans.assignments.sandbox.read_untrusted`).
"""

from __future__ import annotations

import json
import sys

#: Extra arguments of the kernel (as :data:`dpkmeans.study.sweep.KERNEL_ARGUMENTS`, not imported).
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=ERROR",)


def first_error(nb) -> str | None:
    """``cell N: Name: value`` of the first cell whose outputs hold an error, or None."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                where = cell.get("execution_count") or "?"
                return f"cell {where}: {output.get('ename', '')}: {output.get('evalue', '')}"
    return None


def main(argv: list[str]) -> int:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    source, executed, result, cell_seconds = argv[1], argv[2], argv[3], float(argv[4])
    nb = nbformat.read(source, as_version=4)
    # ERROR: ipykernel's warning that its local TCP sockets are unencrypted is noise here
    client = NotebookClient(nb, timeout=cell_seconds, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, extra_arguments=list(KERNEL_ARGUMENTS),
                            record_timing=False, resources={"metadata": {"path": "."}})
    error = None
    try:
        client.execute()
    except CellTimeoutError:
        error = f"a cell ran longer than {cell_seconds:g} s and was stopped"
    except DeadKernelError:
        error = "the kernel died (a limit on memory, processes or CPU time, or a crash)"
    except Exception as exc:  # noqa: BLE001 - reported to the grader as one line
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    error = first_error(nb) or error
    nbformat.write(nb, executed)
    with open(result, "w", encoding="utf-8") as fh:
        json.dump({"error": error}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
