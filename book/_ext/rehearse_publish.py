"""A rehearsal of the book's publishing build: the build job of the Pages workflow
(``.github/workflows/book.yml``), step by step, here, as GitHub would run it, with no data
folder, an empty download cache and the network off.

``make test`` runs it (``make rehearse-publish``), so a change that would break publishing fails
here first::

    python book/_ext/rehearse_publish.py .github/workflows/book.yml

Each ``run`` step of the job runs with ``bash -e``, the job's environment (its
``${{ github.* }}`` expressions given rehearsal values) and the step's own, in this checkout:

* The steps up to and including the one that installs the Python environment set the machine
  up, from the package registries: they run with the network (the Debian packages only when
  one of them is missing, as they need root).
* Every later step runs with the network off: in a network namespace of its own with only the
  loopback interface (``unshare --net``, as root), or, where that is not possible, with a
  guard loaded into every Python process that refuses any connection outside 127.0.0.1 (it
  says which).
* ``$DPKMEANS_DATA`` is empty (no data folder: the Makefile then does not look beside the
  repository either), ``$DPKMEANS_CACHE`` an empty folder that must still be empty at the end,
  and git's global configuration a scratch file.

The ``uses`` steps (GitHub's own actions) are not run; the artifact upload's ``path`` is checked
to hold the built site, with its PDF.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The job of the workflow that builds the site.
JOB = "build"

#: Values for the workflow's ``${{ ... }}`` expressions (what GitHub would put there).
CONTEXT = {
    "github.server_url": "https://github.com",
    "github.repository": "rehearsal/private-kmeans-reproduced",
    "github.workspace": str(ROOT),
    "github.ref_name": "main",
}

#: What the site must hold, under the upload's ``path``.
SITE_FILES = ("index.html", "_downloads/private-kmeans-reproduced.pdf")

#: Run in every Python process when the network cannot be cut: refuse connections outside the
#: loopback interface, and name resolution of anything but localhost.
GUARD = r'''
import ipaddress, socket

def _local(address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return isinstance(address, (str, bytes))  # a Unix socket's path

def _refuse(what):
    raise OSError(101, "network is off in the publishing rehearsal: " + str(what))

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo

def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address):
        _refuse(address)
    return _connect(self, address)

def connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address):
        _refuse(address)
    return _connect_ex(self, address)

def getaddrinfo(host, *args, **kwargs):
    if not _local((host.decode() if isinstance(host, bytes) else host,)):
        _refuse(host)
    return _getaddrinfo(host, *args, **kwargs)

socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
socket.getaddrinfo = getaddrinfo
'''


class RehearsalError(RuntimeError):
    """A step of the publishing build failed, or the build needed what it must not."""


def load_job(workflow: Path, job: str = JOB) -> dict[str, Any]:
    """The workflow's ``job`` as YAML gives it (``env``, ``steps``, ...)."""
    import yaml

    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    try:
        return document["jobs"][job]
    except (KeyError, TypeError):
        raise RehearsalError(f"{workflow} has no job {job!r}") from None


def expand(text: str, context: dict[str, str] = CONTEXT) -> str:
    """``text`` with each ``${{ name }}`` replaced by its rehearsal value; an expression the
    rehearsal does not know is an error, not an empty string."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in context:
            raise RehearsalError(f"the rehearsal has no value for the expression {name!r}")
        return context[name]

    return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))


def setup_steps(steps: list[dict[str, Any]]) -> int:
    """How many of ``steps`` set the machine up: those up to and including the step that runs
    ``make install``. Raises when no step does."""
    for i, step in enumerate(steps):
        if re.search(r"^\s*make install\s*$", str(step.get("run", "")), re.M):
            return i + 1
    raise RehearsalError("no step of the job runs `make install`")


def debian_packages(command: str) -> list[str]:
    """The packages an ``apt-get install`` command names (its arguments after the options)."""
    words = " ".join(line.rstrip("\\") for line in command.splitlines()).split()
    if "install" not in words:
        return []
    return [w for w in words[words.index("install") + 1:] if not w.startswith("-")]


def _missing_packages(packages: list[str]) -> list[str]:
    return [p for p in packages
            if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]


def network_off_prefix() -> list[str] | None:
    """The command prefix that runs a command in a network namespace with only the loopback
    interface up, or None where this machine cannot make one (not root, no ``unshare``)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not (unshare and ip):
        return None
    probe = subprocess.run([unshare, "--net", "--", ip, "link", "set", "lo", "up"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return [unshare, "--net", "--", "bash", "-c", f'{ip} link set lo up && exec "$@"', "--"]


def rehearsal_env(job: dict[str, Any], scratch: Path) -> dict[str, str]:
    """The environment every step starts from: this process's, the job's ``env``, no data
    folder, an empty download cache, a scratch git configuration."""
    env = dict(os.environ)
    for name, value in (job.get("env") or {}).items():
        env[name] = expand(value)
    cache = scratch / "cache"
    cache.mkdir()
    env.update({"DPKMEANS_DATA": "", "DPKMEANS_CACHE": str(cache),
                "GIT_CONFIG_GLOBAL": str(scratch / "gitconfig"),
                "GITHUB_WORKSPACE": str(ROOT), "CI": "true"})
    for name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):  # each step's make starts afresh
        env.pop(name, None)
    return env


def _guarded(env: dict[str, str], scratch: Path) -> dict[str, str]:
    guard = scratch / "guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(guard),
                                                               env.get("PYTHONPATH")]))}


def run_step(step: dict[str, Any], env: dict[str, str], prefix: list[str]) -> float:
    """Run one ``run`` step with ``bash -e`` in the checkout; returns its seconds."""
    start = time.monotonic()
    step_env = {**env, **{k: expand(v) for k, v in (step.get("env") or {}).items()}}
    command = expand(step["run"])
    done = subprocess.run([*prefix, "bash", "-e", "-c", command], cwd=ROOT, env=step_env)
    if done.returncode != 0:
        raise RehearsalError(f"step {step.get('name', command)!r} failed "
                             f"(exit {done.returncode})")
    return time.monotonic() - start


def check_site(steps: list[dict[str, Any]]) -> Path:
    """The folder the job uploads as the site, checked to hold :data:`SITE_FILES`."""
    uploads = [s for s in steps if "upload-pages-artifact" in str(s.get("uses", ""))]
    if len(uploads) != 1:
        raise RehearsalError(f"the job uploads {len(uploads)} Pages artifacts, not one")
    site = ROOT / expand((uploads[0].get("with") or {}).get("path", ""))
    absent = [name for name in SITE_FILES if not (site / name).is_file()]
    if absent:
        raise RehearsalError(f"the uploaded site {site} lacks {absent}")
    return site


def rehearse(workflow: Path, job_name: str = JOB) -> dict[str, Any]:
    """Run the workflow job's steps as the module's docstring says; returns what ran, how
    (``network``: ``"namespace"`` or ``"guard"``) and the seconds of each step."""
    job = load_job(workflow, job_name)
    steps = job.get("steps") or []
    first_offline = setup_steps(steps)
    prefix = network_off_prefix()
    with tempfile.TemporaryDirectory(prefix="rehearse-publish.") as tmp:
        scratch = Path(tmp)
        env = rehearsal_env(job, scratch)
        offline_env = env if prefix is not None else _guarded(env, scratch)
        how = "a network namespace" if prefix is not None else "a guard in every Python process"
        print(f"rehearsal of {workflow.name}, job {job_name}: no data folder, an empty cache "
              f"({env['DPKMEANS_CACHE']}), the network off ({how})", flush=True)
        timings: list[tuple[str, float | str]] = []
        for i, step in enumerate(steps):
            name = step.get("name") or step.get("uses") or step.get("run", "")[:40]
            if "run" not in step:
                timings.append((name, "action, not run here"))
                continue
            packages = debian_packages(step["run"]) if "apt-get" in step["run"] else []
            if packages and not _missing_packages(packages):
                timings.append((name, "every package already installed"))
                continue
            offline = i >= first_offline
            print(f"--- {name} ({'network off' if offline else 'set-up, with the registries'})",
                  flush=True)
            seconds = run_step(step, offline_env if offline else env,
                               (prefix or []) if offline else [])
            timings.append((name, round(seconds, 1)))
        site = check_site(steps)
        downloaded = sorted(str(p.relative_to(scratch)) for p in (scratch / "cache").rglob("*"))
        if downloaded:
            raise RehearsalError(f"the build wrote to the download cache: {downloaded}")
    return {"network": "namespace" if prefix is not None else "guard", "steps": timings,
            "site": str(site)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workflow", type=Path, nargs="?",
                        default=ROOT / ".github" / "workflows" / "book.yml")
    parser.add_argument("--job", default=JOB)
    args = parser.parse_args(argv)
    try:
        done = rehearse(args.workflow, args.job)
    except RehearsalError as error:
        print(f"publishing rehearsal failed: {error}", file=sys.stderr)
        return 1
    for name, what in done["steps"]:
        print(f"  {name}: {what if isinstance(what, str) else f'{what} s'}")
    print(f"publishing rehearsal passed: the site is in {done['site']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
