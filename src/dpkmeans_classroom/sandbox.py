"""Run one student's notebook in a sandbox: a private directory, limits, no key in reach.

Two levels (book: How to use, "Grading you can trust"); the grades file records which one ran:

``bubblewrap``
    The kernel runs under Debian's ``bwrap`` (bubblewrap) in new mount, PID, network, IPC and
    UTS namespaces. It sees a read-only system (``/usr``, the Python installation and the
    library's source without the assignments' chapter modules), read-only copies of the
    assignment's data files, a small ``/tmp``, and its own working directory; nothing else of
    the host's files (no key, no submissions folder, no other student). There is no network
    (only its own loopback). When the grader runs as root, each sandbox runs as an
    unprivileged user id of its own (:data:`SANDBOX_UIDS`). Every process dies with the
    sandbox's PID namespace.
``limits``
    Where bubblewrap cannot run: the same private working directory, scrubbed environment,
    limits and kill-at-the-end, but the kernel runs as the grader's own user and sees the
    host's files and network. It stops runaway notebooks, not a student who goes looking for
    the key.

At both levels the kernel runs in its own session with a scrubbed environment and limits on
address space, CPU time, processes, open files and file size (``setrlimit``), under a
wall-clock limit for the whole notebook, and every process it started is killed at the end,
including ones that detached (the PID namespace; at the ``limits`` level, the process group
and every process carrying the run's token in its environment).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import site
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import dpkmeans
from dpkmeans.compute.kernel_cache import kernel_dir
from dpkmeans.data.registry import registry_path
from dpkmeans.errors import DPKMeansError

__all__ = ["LEVELS", "Limits", "Outcome", "Sandbox", "detect_level", "read_untrusted"]

LEVELS = ("bubblewrap", "limits")

#: A root grader runs each sandbox as its own unprivileged user id, drawn from this range
#: (no account has one): one sandbox's processes never count against another's limit, and
#: none can signal or write another's files.
SANDBOX_UIDS = (1_000_000_000, 2_000_000_000)

#: Where the student's directory and the data files appear inside the bubblewrap sandbox.
INSIDE_WORK = "/sandbox/work"
INSIDE_DATA = "/sandbox/data"
INSIDE_NUMBA = "/sandbox/numba"
INSIDE_KERNELS = "/sandbox/kernels"

#: The dataset registry's name beside the data files (it says how to read them).
REGISTRY_NAME = "datasets.toml"

#: The environment variable whose value marks every process of one run (``limits`` level).
TOKEN_ENV = "DPKMEANS_SANDBOX_RUN"


@dataclass(frozen=True)
class Limits:
    """What one notebook may use (each enforced by the kernel with ``setrlimit``, except
    ``wall_seconds``, which the grader enforces by killing the sandbox)."""

    wall_seconds: float = 300.0
    cell_seconds: float = 120.0
    memory_bytes: int = 4 * 2**30
    cpu_seconds: int = 300
    processes: int = 128
    open_files: int = 256
    file_bytes: int = 64 * 2**20

    def __post_init__(self) -> None:
        for name in ("wall_seconds", "cell_seconds", "memory_bytes", "cpu_seconds", "processes",
                     "open_files", "file_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"sandbox limit {name} must be a positive number, got {value!r}")

    def rlimits(self) -> list[tuple[int, int]]:
        """``(resource, value)`` pairs for ``setrlimit``."""
        import resource

        return [(resource.RLIMIT_AS, int(self.memory_bytes)),
                (resource.RLIMIT_CPU, int(self.cpu_seconds)),
                (resource.RLIMIT_NPROC, int(self.processes)),
                (resource.RLIMIT_NOFILE, int(self.open_files)),
                (resource.RLIMIT_FSIZE, int(self.file_bytes)),
                (resource.RLIMIT_CORE, 0)]


#: Sets the limits (a dict literal, argv[1]) on itself, then becomes argv[2:]. It runs inside
#: the sandbox, after bubblewrap and setpriv, so RLIMIT_NPROC binds the kernel's own user.
_LAUNCHER = (
    "import ast, os, resource, sys\n"
    "for which, value in ast.literal_eval(sys.argv[1]).items():\n"
    "    resource.setrlimit(which, (value, value))\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n")


@dataclass(frozen=True)
class Outcome:
    """How a sandboxed run ended: its exit code, whether the grader stopped it at the time
    limit (``timed_out``) or because grading was called off (``cancelled``, Ctrl-C)."""

    returncode: int | None
    timed_out: bool
    seconds: float
    stderr_tail: str = ""
    cancelled: bool = False


def _bwrap() -> str | None:
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def _setpriv() -> str | None:
    return shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")


def detect_level() -> str:
    """``bubblewrap`` when ``bwrap`` is installed and can create its namespaces here (and,
    for a root grader, ``setpriv`` can drop to an unprivileged user), else ``limits``."""
    bwrap = _bwrap()
    if bwrap is None or (os.geteuid() == 0 and _setpriv() is None):
        return "limits"
    probe = [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return "limits"
    return "bubblewrap" if done.returncode == 0 else "limits"


def _namespace_flags() -> list[str]:
    # A root grader stays in the host's user namespace, so that ``setpriv`` can become the
    # sandbox's own user and RLIMIT_NPROC counts (the kernel ignores it for root); anyone else
    # gets a user namespace of their own.
    common = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
              "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    return common if os.geteuid() == 0 else ["--unshare-user", *common]


def read_untrusted(directory_fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of ``name`` in the sandbox's directory, or None when it is missing, not a
    regular file (a symlink is never followed), or longer than ``limit`` bytes."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
        return data if len(data) <= limit else None
    finally:
        os.close(fd)


class Sandbox:
    """One student's private directory and the way to run a command in it.

    ``root`` is a fresh temporary directory of the grader (mode 0700) holding ``work/`` (the
    student's copy, the kernel's working directory), ``data/`` (read-only copies of the data
    files, at the ``limits`` level) and ``home/``. The grader reads results back through
    :func:`read_untrusted` on :attr:`work_fd`, opened before the student's code runs.
    """

    def __init__(self, level: str, limits: Limits, data_files: Mapping[str, Path]):
        if level not in LEVELS:
            raise DPKMeansError(f"unknown sandbox level {level!r}; choose one of {LEVELS}")
        import tempfile

        self.level, self.limits = level, limits
        self.root = Path(tempfile.mkdtemp(prefix="dpkmeans-grade-"))
        try:
            self._populate(data_files)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    def _populate(self, data_files: Mapping[str, Path]) -> None:
        """The sandbox's folders: work, home, data copies, numba caches; owners and handle."""
        level = self.level
        self.work = self.root / "work"
        self.work.mkdir()
        self.home = self.root / "home"
        self.home.mkdir()
        # "name/file.csv" -> host path; the registry describes how to read them
        self._data_files = {**dict(data_files), REGISTRY_NAME: registry_path()}
        if level == "limits":
            for relative, source in self._data_files.items():
                target = self.root / "data" / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                target.chmod(0o444)
        self.numba, self.kernels = self.root / "numba", self.root / "kernels"
        as_other_user = level == "bubblewrap" and os.geteuid() == 0
        _seed_numba_cache(self.numba, self.kernels, self._kernels_inside(), link=as_other_user)
        self.uid = SANDBOX_UIDS[0] + secrets.randbelow(SANDBOX_UIDS[1] - SANDBOX_UIDS[0])
        if as_other_user:  # the folders, not the (linked) files: it may add, not rewrite
            for folder in (self.work, self.numba, self.kernels,
                           *(f for f in self.numba.iterdir() if f.is_dir())):
                os.chown(folder, self.uid, self.uid)
        self.work_fd = os.open(self.work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        # the grader's PID first: a test can tell its own runs from other graders'
        self.token = f"{os.getpid()}-{secrets.token_hex(16)}"

    # ------------------------------------------------------------------------- paths
    @property
    def work_inside(self) -> str:
        """The working directory as the kernel sees it."""
        return INSIDE_WORK if self.level == "bubblewrap" else str(self.work)

    def _numba_inside(self) -> str:
        return INSIDE_NUMBA if self.level == "bubblewrap" else str(self.numba)

    def _kernels_inside(self) -> str:
        return INSIDE_KERNELS if self.level == "bubblewrap" else str(self.root / "kernels")

    def _data_inside(self) -> str:
        return INSIDE_DATA if self.level == "bubblewrap" else str(self.root / "data")

    def environment(self) -> dict[str, str]:
        """The kernel's whole environment: nothing of the grader's is passed on."""
        inside = self.work_inside
        scratch = "/tmp" if self.level == "bubblewrap" else str(self.home)
        home = f"{scratch}/home" if self.level == "bubblewrap" else str(self.home)
        bindir = str(Path(sys.executable).parent)
        return {
            "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": home, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
            "TMPDIR": scratch, "PWD": inside,
            "DPKMEANS_DATA": self._data_inside(), "DPKMEANS_OFFLINE": "1",
            "DPKMEANS_REGISTRY": f"{self._data_inside()}/{REGISTRY_NAME}",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{scratch}/matplotlib",
            "IPYTHONDIR": f"{scratch}/ipython", "JUPYTER_RUNTIME_DIR": f"{scratch}/jupyter",
            "JUPYTER_CONFIG_DIR": f"{scratch}/jupyter-config",
            "JUPYTER_PLATFORM_DIRS": "1", "NUMBA_CACHE_DIR": self._numba_inside(),
            "DPKMEANS_KERNEL_DIR": self._kernels_inside(),
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "NUMBA_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1", TOKEN_ENV: self.token,
        }

    # ------------------------------------------------------------------------- command
    def _limited(self, argv: Sequence[str]) -> list[str]:
        """``argv`` behind a small Python launcher that sets the limits, then execs it."""
        processes = self.limits.processes
        if self.level == "limits" and os.geteuid() != 0:
            # RLIMIT_NPROC counts all of the user's processes outside a user namespace.
            processes += _processes_of(os.getuid())
        values = {int(which): value for which, value in self.limits.rlimits()}
        import resource

        values[int(resource.RLIMIT_NPROC)] = processes
        return [sys.executable, "-I", "-S", "-c", _LAUNCHER, repr(values), *argv]

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` wrapped for this level: the limits, and bubblewrap's mounts."""
        argv = self._limited(argv)
        if self.level == "limits":
            return argv
        bwrap = [_bwrap() or "bwrap", *_namespace_flags()]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                bwrap += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                bwrap += ["--ro-bind", top, top]
        bwrap += ["--ro-bind", "/usr", "/usr"]
        for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "fonts",
                     "localtime", "mime.types", "nsswitch.conf", "hosts"):
            if os.path.exists(f"/etc/{name}"):
                bwrap += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        # The small /tmp first: the trees bound below are mounted over it, so a Python or a
        # checkout that lives under /tmp stays visible (a tmpfs mounted after them hid it).
        bwrap += ["--perms", "1777", "--size", str(256 * 2**20), "--tmpfs", "/tmp"]
        made: set[str] = set()
        for path in _python_paths():
            # bubblewrap would create the missing parents with mode 0700, closed to the kernel
            for parent in reversed(Path(path).parents[:-1]):
                if str(parent) not in made and not str(parent).startswith("/usr"):
                    made.add(str(parent))
                    bwrap += ["--perms", "0755", "--dir", str(parent)]
            bwrap += ["--ro-bind", path, path]
        for hidden in _hidden_paths():
            if hidden.is_dir():
                bwrap += ["--tmpfs", str(hidden)]
            else:
                bwrap += ["--ro-bind", "/dev/null", str(hidden)]
        bwrap += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm",
                  "--perms", "0755", "--dir", "/sandbox",
                  "--bind", str(self.work), INSIDE_WORK,
                  "--bind", str(self.numba), INSIDE_NUMBA,
                  "--bind", str(self.kernels), INSIDE_KERNELS,
                  "--perms", "0755", "--dir", INSIDE_DATA]
        for relative, source in sorted(self._data_files.items()):
            parent = Path(f"{INSIDE_DATA}/{relative}").parent.as_posix()
            bwrap += ["--perms", "0755", "--dir", parent,
                      "--ro-bind", str(source), f"{INSIDE_DATA}/{relative}"]
        # The sandbox's own root (a tmpfs holding /sandbox and the mount points) read-only:
        # without root, the kernel owns it inside its user namespace and could write there.
        bwrap += ["--remount-ro", "/", "--chdir", INSIDE_WORK, "--"]
        if os.geteuid() == 0:
            bwrap += [_setpriv() or "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                      "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                      "--no-new-privs"]
        return bwrap + list(argv)

    def run(self, argv: Sequence[str], stop: threading.Event | None = None) -> Outcome:
        """Run ``argv`` in the sandbox under the limits; kill everything it started, at the
        end, at the time limit, or as soon as ``stop`` is set (then ``cancelled``)."""
        started = time.monotonic()
        log = self.root / "stderr.log"  # outside the student's directory
        with open(log, "wb") as stderr:
            process = subprocess.Popen(  # noqa: S603 - argv is ours, the notebook is data
                self.command(argv), cwd=self.work if self.level == "limits" else "/",
                env=self.environment(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=stderr, start_new_session=True, close_fds=True)
            try:
                timed_out, cancelled = _wait(process, started + self.limits.wall_seconds, stop)
            finally:
                self._kill_everything(process)
        with open(log, "rb") as fh:
            fh.seek(max(0, log.stat().st_size - 2000))
            tail = fh.read().decode("utf-8", "replace")
        return Outcome(process.returncode, timed_out, time.monotonic() - started, tail,
                       cancelled)

    def _kill_everything(self, process: subprocess.Popen) -> None:  # type: ignore[type-arg]
        """The session's process group, then (``limits``) any process carrying the token."""
        for _ in range(50):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            stray = _processes_with(TOKEN_ENV, self.token)
            for pid in stray:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if process.poll() is not None and not stray:
                break
            time.sleep(0.05)
        process.wait()

    def close(self) -> None:
        """Delete the sandbox's directory."""
        try:
            os.close(self.work_fd)
        except OSError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _wait(process: subprocess.Popen, deadline: float,  # type: ignore[type-arg]
          stop: threading.Event | None) -> tuple[bool, bool]:
    """Wait for ``process`` until it ends, the ``deadline`` (``time.monotonic``) passes or
    ``stop`` is set: ``(timed_out, cancelled)``."""
    while True:
        if stop is not None and stop.is_set():
            return False, True
        left = deadline - time.monotonic()
        if left <= 0:
            return True, False
        try:
            process.wait(timeout=min(left, 0.1 if stop is not None else left))
            return False, False
        except subprocess.TimeoutExpired:
            continue


def _processes_with(variable: str, value: str) -> list[int]:
    """PIDs whose environment holds ``variable=value`` (read from /proc)."""
    needle = f"{variable}={value}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _seed_numba_cache(numba: Path, kernels: Path, kernels_inside: str, link: bool) -> None:
    """Give the sandbox the library's compiled numba kernels, so that it does not compile
    them again: the package's in-tree caches and the grader's generated (k, d) kernels
    (:func:`~dpkmeans.compute.kernel_cache.kernel_dir`, written when the references were
    computed), laid out as numba's ``NUMBA_CACHE_DIR`` locator expects. Files are hard-linked
    when the kernel runs as a user of its own (it cannot write them: it only adds files to its
    own folders), else copied; what the kernel writes stays in its sandbox."""

    def place(file: Path, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            if not link or not file.stat().st_mode & stat.S_IROTH:
                raise OSError  # a private file: the kernel could not read the link
            os.link(file, folder / file.name)
        except OSError:
            shutil.copyfile(file, folder / file.name)
            (folder / file.name).chmod(0o644)

    def cache_folder(source_dir: str) -> Path:
        name = Path(source_dir).name
        return numba / f"{name}_{hashlib.sha1(source_dir.encode()).hexdigest()}"

    numba.mkdir()
    kernels.mkdir()
    for cache in Path(dpkmeans.__file__).resolve().parent.rglob("__pycache__"):
        for file in cache.iterdir():
            if file.suffix in (".nbi", ".nbc") and file.is_file():
                place(file, cache_folder(str(cache.parent)))
    generated = kernel_dir()
    for module in generated.glob("dpkmeans_kernel_*.py"):
        place(module, kernels)
    if (generated / "__pycache__").is_dir():
        for file in (generated / "__pycache__").iterdir():
            if file.suffix in (".nbi", ".nbc") and file.name.startswith("dpkmeans_kernel_"):
                place(file, cache_folder(kernels_inside))




def _processes_of(uid: int) -> int:
    """How many processes ``uid`` runs now (from /proc)."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            count += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except OSError:
            continue
    return count


def _python_paths() -> list[str]:
    """The directories the kernel's Python needs, read-only: the installation, the virtual
    environment and the folders the library and this package (whose runner the sandbox runs)
    are imported from (an editable install's ``src``). Nothing else of the grader's
    ``sys.path``: a test runner's folders hold model solutions."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
             Path(dpkmeans.__file__).resolve().parent.parent, Path(__file__).resolve().parents[1]}
    roots |= {Path(p).resolve() for p in site.getsitepackages() if os.path.isdir(p)}
    # Keep the outermost of nested paths; never the whole file system or a home directory.
    kept: list[Path] = []
    for path in sorted(roots, key=lambda p: len(p.parts)):
        if len(path.parts) < 3 or path == Path.home():
            continue
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    # The interpreter of a virtual environment may be a symlink into the installation.
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(k) for k in kept):
        kept.append(executable.parent.parent)
    return [str(p) for p in kept]


def _hidden_paths() -> list[Path]:
    """What the kernel must not read although it lies in a mounted tree: the chapter modules
    that compute the references and hold the model solutions, and their bytecode."""
    package = Path(__file__).resolve().parent
    hidden = sorted(package.glob("chapter*.py"))
    cache = package / "__pycache__"
    return hidden + ([cache] if cache.is_dir() else [])
