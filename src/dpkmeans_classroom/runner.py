"""Execute one prepared notebook inside the grading sandbox (run as a script, by path).

``python runner.py NOTEBOOK EXECUTED RESULT CELL_SECONDS PROGRESS ANSWERS SO_FAR`` runs every
cell of ``NOTEBOOK`` with nbclient (on after an error, so later answers still count), writes
the executed notebook to ``EXECUTED`` and ``{"error": ...}`` (the first error, one line) to
``RESULT``. While it runs it appends one JSON line per event to ``PROGRESS``: the kernel
started, a cell (numbered as the executed notebook numbers it, ``In [N]``) started, a cell
finished (and whether it ran past ``CELL_SECONDS`` and was stopped). After each cell that
finished, the notebook's last cell (the grader's collector, which writes ``ANSWERS``) runs
silently writing ``SO_FAR`` instead, so that the grader still has what the notebook had
computed if it has to stop the notebook later.

It imports nothing of the library: the student's kernel cannot reach the assignments' chapter
modules, and everything it writes is read back by the grader as untrusted data
(:func:`dpkmeans_classroom.sandbox.read_untrusted`).
"""

from __future__ import annotations

import json
import sys
import time

#: Extra arguments of the kernel (as :data:`dpkmeans.study.sweep.KERNEL_ARGUMENTS`, not imported).
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=ERROR",)


def first_error(nb, stopped: frozenset[int] = frozenset(), cell_seconds: float = 0.0) -> str | None:
    """``cell N: Name: value`` of the first cell whose outputs hold an error, or None; a cell
    in ``stopped`` (numbered by its execution count) is said to have run past its time."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                where = cell.get("execution_count") or "?"
                if where in stopped:
                    return (f"cell {where} ran longer than {cell_seconds:g} s, the time a cell "
                            "may run (--timeout), and was stopped")
                return f"cell {where}: {output.get('ename', '')}: {output.get('evalue', '')}"
    return None


class Progress:
    """The ``PROGRESS`` file: one JSON object a line, flushed as it happens."""

    def __init__(self, path: str, cell_seconds: float):
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole run
        self.cell_seconds = cell_seconds
        self.stopped: set[int] = set()
        self._started: dict[int, float] = {}

    def event(self, **fields: object) -> None:
        self._file.write(json.dumps(fields) + "\n")
        self._file.flush()

    def cell_started(self, number: int) -> None:
        self._started[number] = time.monotonic()
        self.event(cell=number, event="start")

    def cell_finished(self, number: int) -> bool:
        """Record that cell ``number`` returned; True when it ran its whole time and was
        stopped (nbclient interrupts a cell when its time is up)."""
        stopped = time.monotonic() - self._started[number] >= self.cell_seconds
        if stopped:
            self.stopped.add(number)
        self.event(cell=number, event="done", stopped=stopped)
        return stopped


async def _run_silently(client, code: str, seconds: float) -> None:
    """Run ``code`` in the kernel without output or history; wait for it at most ``seconds``."""
    from queue import Empty

    from jupyter_core.utils import ensure_async

    msg_id = await ensure_async(client.kc.execute(code, silent=True, store_history=False))
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            reply = await ensure_async(client.kc.shell_channel.get_msg(timeout=left))
        except Empty:
            return
        if reply["parent_header"].get("msg_id") == msg_id:
            return


def main(argv: list[str]) -> int:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    source, executed, result, cell_seconds = argv[1], argv[2], argv[3], float(argv[4])
    progress = Progress(argv[5], cell_seconds)
    nb = nbformat.read(source, as_version=4)
    collector = nb.cells[-1]  # the grader's last cell
    so_far = collector.source.replace(repr(argv[6]), repr(argv[7]))
    client: NotebookClient

    def number() -> int:  # the execution count the cell being run gets
        return client.code_cells_executed + 1

    async def executed_hook(cell, cell_index, execute_reply) -> None:
        count = client.code_cells_executed
        if not progress.cell_finished(count) and cell is not collector:
            await _run_silently(client, so_far, cell_seconds)

    # ERROR: ipykernel's warning that its local TCP sockets are unencrypted is noise here
    client = NotebookClient(
        nb, timeout=cell_seconds, kernel_name="python3", allow_errors=True,
        interrupt_on_timeout=True, extra_arguments=list(KERNEL_ARGUMENTS), record_timing=False,
        resources={"metadata": {"path": "."}},
        on_notebook_start=lambda notebook: progress.event(event="kernel"),
        on_cell_execute=lambda cell, cell_index: progress.cell_started(number()),
        on_cell_executed=executed_hook)
    error = None
    try:
        client.execute()
    except CellTimeoutError:
        error = f"a cell ran longer than {cell_seconds:g} s and was stopped"
    except DeadKernelError:
        error = "the kernel died (a limit on memory, processes or CPU time, or a crash)"
    except Exception as exc:  # noqa: BLE001 - reported to the grader as one line
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    error = first_error(nb, frozenset(progress.stopped), cell_seconds) or error
    nbformat.write(nb, executed)
    with open(result, "w", encoding="utf-8") as fh:
        json.dump({"error": error}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
