"""The kernels that run a sweep's cell notebooks (``docs/design.md``, "Notebooks and chapters").

A fresh kernel per cell spends one to three seconds starting Python and importing the library
before the cell does any work: most of a small cell's time (a blood or Heart cell takes 3 to
5 seconds in all). So each worker thread of a sweep keeps its kernel *warm* for the next cell:

* before each cell the kernel's variables are deleted (IPython's ``%reset -f``), so a cell sees
  only its own parameters and what it computes; the imported modules stay loaded, which is the
  time saved. Every random draw of a cell comes from the seed the sweep gives it, so a cell's
  rows do not depend on the cells its kernel ran before (``tests/study/test_cell_kernels.py``
  checks it against fresh kernels);
* a kernel is replaced by a fresh one after :data:`CELLS_PER_KERNEL` cells, after a cell that
  failed, and when the next cell's notebook lives in another folder (the kernel's working
  directory);
* the sweep closes its kernels when it ends (:func:`close_warm_kernels`); any left open are
  closed when the process exits.

The notebooks still run through papermill, which writes the parameters into them; its nbclient
engine is used as is, on the warm kernel (:func:`_warm_engine`).

Ctrl-C: :func:`stop_cell_kernels` kills every cell kernel of this process, warm or busy, and
any kernel that starts until the next sweep begins (:func:`allow_cell_kernels`).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import signal
import threading
import weakref
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_ARGUMENTS", "CELLS_PER_KERNEL", "WARM_ENGINE", "execute_cell_notebook",
           "close_warm_kernels", "stop_cell_kernels", "allow_cell_kernels", "kernels_stopped"]

#: Extra arguments of every cell kernel: ipykernel's warning that its local TCP sockets are not
#: encrypted would otherwise print into the progress bar at each kernel start.
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=ERROR",)

#: Cells one kernel runs before a fresh one replaces it (its memory stays bounded).
CELLS_PER_KERNEL = 40

#: The name of the papermill engine that runs a notebook on a warm kernel.
WARM_ENGINE = "dpkmeans-warm-kernel"

#: Seconds to wait for a kernel to start.
_START_TIMEOUT_S = 60

_KERNELS: weakref.WeakSet = weakref.WeakSet()  # every cell kernel manager started here
_KERNELS_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by stop_cell_kernels: a kernel starting now is killed
_WARM: dict[int, _WarmKernel] = {}  # the warm kernel of each thread, by thread id
_WARM_LOCK = threading.Lock()
_log = logging.getLogger("papermill")
# After Ctrl-C the killed kernels' clients log "Kernel died while waiting for execute reply."
# (nbclient), once per running cell: the stop is meant, the command says it stopped.
_log.addFilter(lambda record: not _STOPPING.is_set())


def _kill_kernel(km: Any) -> None:
    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is None or process.poll() is not None:
        return
    try:  # the kernel leads its own process group (jupyter_client starts a new session)
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (OSError, AttributeError):  # gone meanwhile, or no process groups (Windows)
        process.kill()


@functools.cache
def _cell_kernel_manager() -> type:
    """jupyter_client's kernel manager, remembering each kernel it starts so that
    :func:`stop_cell_kernels` can kill it."""
    from jupyter_client.manager import AsyncKernelManager

    class CellKernelManager(AsyncKernelManager):
        async def start_kernel(self, **kwargs: Any) -> None:  # type: ignore[override]
            await super().start_kernel(**kwargs)
            with _KERNELS_LOCK:
                _KERNELS.add(self)
            if _STOPPING.is_set():
                _kill_kernel(self)

    return CellKernelManager


def stop_cell_kernels() -> None:
    """Kill the kernel of every cell of this process, running or warm (and of any cell
    starting until :func:`allow_cell_kernels`): their notebooks then fail within a second."""
    _STOPPING.set()
    with _KERNELS_LOCK:
        kernels = list(_KERNELS)
    for km in kernels:
        _kill_kernel(km)


def allow_cell_kernels() -> None:
    """Let kernels start again (a new sweep begins after a stopped one)."""
    _STOPPING.clear()


def kernels_stopped() -> bool:
    """Whether :func:`stop_cell_kernels` has killed the cell kernels (a cell failing now was
    stopped, it did not fail)."""
    return _STOPPING.is_set()


class _WarmKernel:
    """One kernel kept between the cells of one thread, started in ``cwd``."""

    def __init__(self, cwd: Path) -> None:
        from jupyter_core.utils import run_sync

        self.cwd, self.cells = cwd, 0
        self.km = _cell_kernel_manager()(kernel_name="python3")
        run_sync(self.km.start_kernel)(cwd=str(cwd), extra_arguments=list(KERNEL_ARGUMENTS))

    def close(self) -> None:
        from jupyter_core.utils import run_sync

        try:
            if run_sync(self.km.is_alive)():
                run_sync(self.km.shutdown_kernel)(now=True)
        except RuntimeError:  # already gone
            pass
        finally:
            run_sync(self.km.cleanup_resources)()


@functools.cache
def _warm_engine() -> str:
    """Register, once, the papermill engine that runs a notebook on a :class:`_WarmKernel`
    (passed as ``warm_kernel=``): papermill's nbclient client on that kernel, which first
    deletes the kernel's variables and at the end closes its own connection to it (the kernel
    stays up)."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines

    class WarmClient(PapermillNotebookClient):
        def papermill_execute_cells(self) -> None:
            reply = self.wait_for_reply(self.kc.execute("%reset -f", silent=True,
                                                        store_history=False))
            if reply is None or reply["content"].get("status") != "ok":
                raise RuntimeError("the cell kernel could not delete its variables")
            super().papermill_execute_cells()

        def execute(self, **kwargs: Any) -> Any:
            try:
                return super().execute(**kwargs)
            finally:
                if self.kc is not None:
                    self.kc.stop_channels()
                    self.kc = None

    class WarmKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, log_output: bool = False,
                                     stdout_file: Any = None, stderr_file: Any = None,
                                     start_timeout: int = _START_TIMEOUT_S,
                                     execution_timeout: float | None = None,
                                     warm_kernel: _WarmKernel | None = None,
                                     **kwargs: Any) -> Any:
            if warm_kernel is None:
                raise ValueError("the warm-kernel engine needs warm_kernel=")
            client = WarmClient(nb_man, km=warm_kernel.km, timeout=execution_timeout,
                                startup_timeout=start_timeout, kernel_name=kernel_name,
                                log=_log, log_output=log_output, stdout_file=stdout_file,
                                stderr_file=stderr_file)
            return client.execute()

    papermill_engines.register(WARM_ENGINE, WarmKernelEngine)
    return WARM_ENGINE


def _take_warm_kernel(cwd: Path) -> _WarmKernel:
    """This thread's warm kernel for a notebook in ``cwd``: kept, or started now."""
    me = threading.get_ident()
    with _WARM_LOCK:
        warm = _WARM.pop(me, None)
    if warm is not None and (warm.cwd != cwd or warm.cells >= CELLS_PER_KERNEL):
        warm.close()
        warm = None
    return warm if warm is not None else _WarmKernel(cwd)


def execute_cell_notebook(notebook: Path, output: Path, parameters: dict[str, Any]) -> None:
    """Run ``notebook`` with papermill's ``parameters`` on this thread's warm kernel (started in
    the notebook's folder), writing the executed notebook to ``output``. A kernel whose cell
    failed is closed, never reused."""
    import papermill as pm

    cwd = notebook.parent.resolve()
    warm = _take_warm_kernel(cwd)
    try:
        pm.execute_notebook(str(notebook), str(output), parameters=parameters,
                            kernel_name="python3", cwd=str(cwd), progress_bar=False,
                            engine_name=_warm_engine(), warm_kernel=warm)
    except BaseException:
        warm.close()
        raise
    warm.cells += 1
    with _WARM_LOCK:
        _WARM[threading.get_ident()] = warm


def close_warm_kernels() -> None:
    """Shut down every warm kernel (the end of a sweep, or of the process)."""
    with _WARM_LOCK:
        kernels = list(_WARM.values())
        _WARM.clear()
    for warm in kernels:
        warm.close()


atexit.register(close_warm_kernels)
