"""The grader's non-root path: the attack tests again, as an unprivileged user.

An instructor grades on a laptop, not as root: bubblewrap then runs each sandbox in a user
namespace of its own (``--unshare-user``) and nothing is run through ``setpriv``. When this
test suite runs as root, this test runs ``tests/classroom/test_grading_attacks.py`` once
more as the ``nobody`` account (``runuser -u nobody``) and expects every attack test to pass
at the ``bubblewrap`` level, none skipped.

``nobody`` must be able to run a Python with the project's packages: when it cannot run this
one (a virtual environment made from an interpreter under root's home), the test makes a
small virtual environment in a world-readable temporary folder from the system's interpreter
of the same version, whose ``site-packages`` is a link to this one's. When the checkout
itself is not readable by ``nobody``, the parts the attack tests read are copied there too.
"""

from __future__ import annotations

import os
import pwd
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import dpkmeans

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = "tests/classroom/test_grading_attacks.py"
USER = "nobody"


def _as_user(argv: list[str], **run) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", USER, "--", *argv], capture_output=True,
                          text=True, check=False, **run)


def _can(argv: list[str]) -> bool:
    return _as_user(argv, timeout=60).returncode == 0


def _python_for_user(folder: Path) -> str | None:
    """A Python ``nobody`` can run that imports this one's packages, or None."""
    if _can([sys.executable, "-c", "import numpy, nbclient"]):
        return sys.executable
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/usr/local/bin")
    packages = Path(site.getsitepackages()[0])
    if system is None or not _can(["test", "-r", str(packages)]):
        return None
    venv = folder / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    linked = venv / "lib" / version / "site-packages"
    shutil.rmtree(linked)
    linked.symlink_to(packages)  # the sandbox binds the resolved folder
    python = str(venv / "bin" / "python")
    return python if _can([python, "-c", "import numpy, nbclient"]) else None


def _checkout_for_user(folder: Path) -> Path:
    """The checkout if ``nobody`` can read it, else a copy of what the attack tests read."""
    if _can(["test", "-r", str(ROOT / ATTACKS)]) and _can(
            ["test", "-r", str(Path(dpkmeans.__file__))]):
        return ROOT
    copy = folder / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for part in ("src", "tests", "data"):
        shutil.copytree(ROOT / part, copy / part, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def test_the_attack_tests_pass_as_an_unprivileged_user(data_available, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("not run as root: the attack tests of this run already took the "
                    "non-root path")
    for tool in ("runuser", "bwrap"):
        if shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin") is None:
            pytest.skip(f"{tool} is not installed (make test installs bubblewrap; runuser is "
                        "util-linux's)")
    folder = Path(tempfile.mkdtemp(prefix="dpkmeans-unprivileged-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        python = _python_for_user(folder)
        if python is None:
            pytest.skip(f"no Python that {USER} can run imports this environment's packages")
        checkout = _checkout_for_user(folder)
        home = folder / "home"
        home.mkdir()
        user = pwd.getpwnam(USER)
        os.chown(home, user.pw_uid, user.pw_gid)
        env = {"PATH": f"{Path(python).parent}:/usr/bin:/bin", "HOME": str(home),
               "TMPDIR": str(home), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "DPKMEANS_DATA": os.environ.get("DPKMEANS_DATA", ""),
               "PYTHONPATH": str(checkout / "src") if checkout != ROOT else ""}
        done = _as_user(["env", "-i", *(f"{k}={v}" for k, v in env.items() if v), python,
                         "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", ATTACKS],
                        cwd=checkout, timeout=900)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    summary = done.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "skipped" not in summary, report
