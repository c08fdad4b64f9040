"""Where a reproduction's cells run: threads of this process, or the workers of a Dask
distributed cluster (``python -m dpkmeans reproduce --scheduler ADDRESS``).

Both pools take the same calls from :func:`dpkmeans.reproduce.run_reproduce`: ``submit`` a
cell (longest first), iterate ``as_completed``, ``settle`` after Ctrl-C or a failed cell (the
cells not started are not run, the finished ones are returned so that their rows are kept),
``close`` at the end. The client process does all the file writing either way (the partial
rows, ``state.json``, the results in the grid's order), so a distributed run resumes and ends
exactly like a local one.

:class:`LocalCells` is the thread pool of a local run: each thread runs its cells on its own
warm kernel (:mod:`dpkmeans.study.cell_kernels`), and a :class:`~dpkmeans.study.sweep.CellGate`
stops every thread from starting a cell once the run is stopping.

:class:`ClusterCells` sends the cells to the cluster's workers. Each worker thread runs them as a
local thread does, on its own warm kernel, with the pinned cell environment
(:func:`~dpkmeans.study.environment.pin_cell_environment`: one BLAS thread, the same OpenBLAS
kernels), so the rows are the same bits as a local run's. Every worker needs

* the repository at the same path as the client (a shared file system): the cells run the
  sweeps' notebooks from it;
* the same Python environment: ``dpkmeans`` and the packages that produce the numbers, at the
  versions recorded in the rows (the ``dask`` extra installs ``distributed``);
* the data files the sweeps read (``$DPKMEANS_DATA``, or the data folders the loader searches).

Before any cell is sent, each worker is asked to check these (a missing notebook, a missing data
file, other package versions or another cell environment stop the run with one line naming the
worker and the problem); a worker that joins later checks them before its first cell. A worker
keeps its own gate per run: a cell that fails closes it at once, and the client closes every
worker's gate when it stops (Ctrl-C also kills the workers' cell kernels, as a local run kills
its own). The cells are ordered by Dask priorities, longest first.
"""

from __future__ import annotations

import concurrent.futures
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dpkmeans.data.needs import missing_datasets, missing_message
from dpkmeans.errors import DPKMeansError
from dpkmeans.extras import require
from dpkmeans.study.cell_kernels import allow_cell_kernels, close_warm_kernels, stop_cell_kernels
from dpkmeans.study.environment import pin_cell_environment
from dpkmeans.study.sweep import (
    STOP_GRACE_S,
    CellGate,
    SweepSpec,
    settle_cells,
    sweep_datasets,
    versions_string,
)

__all__ = ["CONNECT_TIMEOUT_S", "ClusterCells", "ClusterError", "LocalCells", "cell_pool"]

#: Seconds to wait for the scheduler to answer, and then for a first worker to join it.
CONNECT_TIMEOUT_S = 10.0

#: Each run's gate on this worker process, by run token (:class:`ClusterCells`).
_GATES: dict[str, CellGate] = {}
_GATES_LOCK = threading.Lock()


class ClusterError(DPKMeansError):
    """The Dask cluster cannot run the reproduction: the scheduler cannot be reached, it has no
    worker, or a worker lacks the repository, the data or the client's package versions (the
    command line prints the message on one line)."""


class LocalCells:
    """The cells of a local run: ``jobs`` threads of this process, each with its own warm kernel.

    Parameters
    ----------
    jobs : int
        Cells run at once.
    """

    def __init__(self, jobs: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=jobs)
        self._gate = CellGate()  # no cell starts once the run is stopping

    def submit(self, fn: Callable[..., Any], /, *args: Any, priority: int = 0,
               **kwargs: Any) -> Future:
        """Run ``fn(*args, **kwargs)`` in a thread, unless the run is stopping by then.

        Parameters
        ----------
        fn : callable
            The cell (:func:`dpkmeans.study.sweep.run_cell`).
        *args, **kwargs
            Its arguments.
        priority : int
            Unused: the threads take the cells in the order they are submitted.

        Returns
        -------
        concurrent.futures.Future
            The cell's rows, once it has run.
        """
        return self._pool.submit(self._gate.guard(fn), *args, **kwargs)

    def as_completed(self, futures: Iterable[Future]) -> Iterator[Future]:
        """The futures as their cells finish (or fail).

        Parameters
        ----------
        futures : iterable of Future
            What :meth:`submit` returned.

        Returns
        -------
        iterator of Future
            Each future, once done.
        """
        return concurrent.futures.as_completed(futures)

    def settle(self, futures: Iterable[Future], *, interrupted: bool) -> list[Future]:
        """Stop the run (:func:`dpkmeans.study.sweep.settle_cells`).

        Parameters
        ----------
        futures : iterable of Future
            Every cell submitted.
        interrupted : bool
            Ctrl-C (kill the running cells) rather than a failed cell (let them finish).

        Returns
        -------
        list of Future
            The futures whose cells finished with rows.
        """
        return settle_cells(self._pool, futures, gate=self._gate, interrupted=interrupted)

    def close(self) -> None:
        """Let the threads go and shut down the idle warm kernels (a running cell keeps its
        kernel)."""
        self._pool.shutdown(wait=False)
        close_warm_kernels()


def _notebooks(specs: Sequence[SweepSpec]) -> list[str]:
    return list(dict.fromkeys(str(spec.notebook) for spec in specs))


def _datasets(specs: Sequence[SweepSpec]) -> list[str]:
    return list(dict.fromkeys(name for spec in specs for name in sweep_datasets(spec)))


def _worker_address() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:  # not in a worker's task (client.run runs on its event loop)
        return "this worker"


def _prepare(run: str, notebooks: Sequence[str], datasets: Sequence[str]) -> dict[str, Any]:
    """On a worker, before its first cell of ``run``: open the run's gate (letting cell kernels
    start again after an earlier stopped run), pin the cell environment, and report what the
    client checks: the notebooks it cannot see, the data files it lacks, its package versions
    and cell environment."""
    with _GATES_LOCK:
        if run not in _GATES:
            _GATES[run] = CellGate()
            allow_cell_kernels()
    environment = pin_cell_environment()
    missing = missing_datasets(datasets) if datasets else []
    return {"notebooks": [path for path in notebooks if not Path(path).is_file()],
            "data": missing_message("", missing) if missing else "",
            "versions": versions_string(), "environment": environment}


def _problems(worker: str, report: dict[str, Any], versions: str,
              environment: dict[str, str] | None) -> list[str]:
    """What stops ``worker`` from running the cells, from its :func:`_prepare` report."""
    out = []
    if report["notebooks"]:
        out.append(f"worker {worker} cannot see {', '.join(report['notebooks'])}: every worker "
                   "needs the repository at the same path as the client (a shared file system)")
    if report["data"]:
        out.append(f"worker {worker} lacks data files ({report['data']})")
    if report["versions"] != versions:
        out.append(f"worker {worker} has the packages {report['versions']}, the client "
                   f"{versions}: the cells must run with the versions the rows record")
    if environment is not None and report["environment"] != environment:
        out.append(f"worker {worker} runs its cells with {report['environment']}, another "
                   f"worker with {environment}: the numbers would depend on the worker")
    return out


def _close_gate(run: str) -> None:
    with _GATES_LOCK:
        gate = _GATES.get(run)
    if gate is not None:
        gate.close()


def _finish(run: str) -> None:
    """On a worker, at the end of ``run``: forget its gate, shut down the idle warm kernels."""
    with _GATES_LOCK:
        _GATES.pop(run, None)
    close_warm_kernels()


def _run_on_worker(run: str, check: dict[str, Any], fn: Callable[..., Any],
                   args: tuple, kwargs: dict[str, Any]) -> Any:
    """A cell on a worker: behind the run's gate, after the worker's own checks when this is
    its first cell of the run (it joined the cluster after the run began)."""
    with _GATES_LOCK:
        gate = _GATES.get(run)
    if gate is None:
        report = _prepare(run, check["notebooks"], check["datasets"])
        problems = _problems(_worker_address(), report, check["versions"],
                             check["environment"])
        if problems:
            _close_gate(run)
            raise ClusterError("; ".join(problems))
        with _GATES_LOCK:
            gate = _GATES[run]
    return gate.guard(fn)(*args, **kwargs)


class ClusterCells:
    """The cells of a run on a Dask distributed cluster (module docstring).

    Parameters
    ----------
    address : str
        The scheduler's address, e.g. ``tcp://10.0.0.5:8786``.
    specs : sequence of SweepSpec
        The sweeps whose cells will run: each worker must see their notebooks and data files.
    timeout : float
        Seconds to wait for the scheduler, then for a first worker.

    Raises
    ------
    dpkmeans.extras.MissingExtraError
        ``distributed`` is not installed (the ``dask`` extra).
    ClusterError
        The scheduler cannot be reached, no worker joins it, or a worker cannot run the cells.
    """

    def __init__(self, address: str, specs: Sequence[SweepSpec], *,
                 timeout: float = CONNECT_TIMEOUT_S) -> None:
        self._distributed = require("distributed", "reproduce --scheduler")
        self.address = address
        try:
            self.client = self._distributed.Client(address, timeout=timeout,
                                                   set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {address!r} within "
                               f"{timeout:g} s ({' '.join(str(exc).split())}); start one with "
                               "`dask scheduler` and give its address") from None
        self._run = uuid.uuid4().hex
        try:
            self._check(specs, timeout)
        except BaseException:
            self.client.close()
            raise

    def _check(self, specs: Sequence[SweepSpec], timeout: float) -> None:
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise ClusterError(f"the Dask scheduler at {self.address} has no worker (none "
                               f"joined within {timeout:g} s); start some with `dask worker "
                               f"{self.address}`") from None
        notebooks, datasets = _notebooks(specs), _datasets(specs)
        try:
            reports = self.client.run(_prepare, self._run, notebooks, datasets)
        except ImportError as exc:  # raised on a worker: it cannot import the library
            raise ClusterError(f"a worker of {self.address} cannot import what the cells need "
                               f"({exc}): every worker needs the client's Python environment "
                               "(dpkmeans with its book and dask extras)") from None
        versions = versions_string()
        environment = next(iter(reports.values()))["environment"]
        problems = [p for worker, report in sorted(reports.items())
                    for p in _problems(worker, report, versions, environment)]
        if problems:
            raise ClusterError("; ".join(problems))
        self._checks = {"notebooks": notebooks, "datasets": datasets, "versions": versions,
                        "environment": environment}

    def submit(self, fn: Callable[..., Any], /, *args: Any, priority: int = 0,
               **kwargs: Any) -> Any:
        """Send ``fn(*args, **kwargs)`` to the cluster, behind the run's gate on its worker.

        Parameters
        ----------
        fn : callable
            The cell (:func:`dpkmeans.study.sweep.run_cell`); it and its arguments are pickled
            (a function by its module and name: the workers import it).
        *args, **kwargs
            Its arguments.
        priority : int
            Dask's priority: a cell with a higher one starts first.

        Returns
        -------
        distributed.Future
            The cell's rows, once it has run.
        """
        return self.client.submit(_run_on_worker, self._run, self._checks, fn, args, kwargs,
                                  key=f"dpkmeans-cell-{uuid.uuid4().hex}", priority=priority,
                                  pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        """The futures as their cells finish (or fail).

        Parameters
        ----------
        futures : iterable of distributed.Future
            What :meth:`submit` returned.

        Returns
        -------
        iterator of distributed.Future
            Each future, once done.
        """
        return iter(self._distributed.as_completed(list(futures), loop=self.client.loop))

    def _everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn`` on every worker; one that has gone is skipped."""
        try:
            self.client.run(fn, *args, on_error="ignore")
        except (OSError, TimeoutError):  # the scheduler has gone
            pass

    def settle(self, futures: Iterable[Any], *, interrupted: bool,
               grace: float = STOP_GRACE_S) -> list[Any]:
        """Stop the run: close every worker's gate (a cell not started is not run); after
        Ctrl-C (``interrupted``) kill the workers' cell kernels and wait at most ``grace``
        seconds, after a failed cell wait for the running cells to finish; cancel the rest.

        Parameters
        ----------
        futures : iterable of distributed.Future
            Every cell submitted.
        interrupted : bool
            Ctrl-C rather than a failed cell.
        grace : float
            Seconds to wait for the killed cells after Ctrl-C.

        Returns
        -------
        list of distributed.Future
            The futures whose cells finished with rows.
        """
        futures = list(futures)
        self._everywhere(_close_gate, self._run)
        if interrupted:
            self._everywhere(stop_cell_kernels)
        try:
            with self.client.as_current():  # distributed.wait uses the current client
                self._distributed.wait(futures, timeout=grace if interrupted else None)
        except TimeoutError:
            pass
        self.client.cancel([f for f in futures if not f.done()])
        return [f for f in futures if f.status == "finished"]

    def close(self) -> None:
        """Forget the run on the workers (shutting down their idle warm kernels) and
        disconnect."""
        try:
            self._everywhere(_finish, self._run)
        finally:
            self.client.close()


def cell_pool(jobs: int, scheduler: str | None = None,
              specs: Sequence[SweepSpec] = ()) -> LocalCells | ClusterCells:
    """Where a run's cells go: ``jobs`` local threads, or the cluster at ``scheduler``.

    Parameters
    ----------
    jobs : int
        Cells run at once locally (unused with a ``scheduler``: each worker runs as many cells
        at once as it has threads).
    scheduler : str or None
        A Dask scheduler's address; None runs the cells here.
    specs : sequence of SweepSpec
        The sweeps whose cells will run (the workers check that they can run them).

    Returns
    -------
    LocalCells or ClusterCells
        The pool.

    Raises
    ------
    ClusterError
        With a ``scheduler``: see :class:`ClusterCells`.
    """
    if scheduler is None:
        return LocalCells(jobs)
    return ClusterCells(scheduler, specs)
