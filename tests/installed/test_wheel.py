"""The library as a practitioner installs it: the wheel, in a fresh environment, no extras.

``make test-wheel`` (part of ``make test``) runs this file. It builds the wheel from the
working tree (or takes the one ``$DPKMEANS_WHEEL`` names: the release workflow tests the very
file it publishes), creates a virtual environment, installs the wheel with the versions of
``requirements/lock.txt`` (the dependencies come from the package registry) and checks there:

* only numpy, scipy, scikit-learn, pandas and their own dependencies were installed (no numba,
  Dask, plotting, book or test package);
* ``import dpkmeans`` takes at most a second, and so does importing the estimators beyond the
  scikit-learn, pandas and scipy they load;
* the wheel holds the library alone: not the classroom package (``dpkmeans_classroom``, the
  book's assignments and their grader, installed with the book), nor its old place
  ``dpkmeans/assignments``; the old command ``dpkmeans assignments`` names the new one;
* the command line's dataset commands work, with the registry the wheel carries;
* the README's two examples ("Using the library": ``DPKMeans`` and ``DPKPrototypes``) run, on
  the numpy path, with one notice saying how to get the compiled path, and give the bits the
  book's environment gives (numba path);
* then, with the ``dask`` extra added, a fit on a ``LocalCluster`` gives the in-memory bits.

The tests run in the file's order and share one environment (the last adds the extra).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "lock.txt"
README = ROOT / "README.md"

#: What the wheel may bring with it: the four dependencies and what they depend on.
ALLOWED = {"dpkmeans", "numpy", "scipy", "scikit-learn", "pandas", "joblib", "threadpoolctl",
           "narwhals", "cloudpickle", "python-dateutil", "six", "tzdata", "pip", "setuptools"}
#: Packages of the extras, the book and the tests: none may come with the bare wheel.
FORBIDDEN = {"numba", "llvmlite", "dask", "distributed", "pyarrow", "cvxpy", "clarabel",
             "matplotlib", "seaborn", "kmodes", "diffprivlib", "jupyter-book", "sphinx",
             "papermill", "nbconvert", "ipykernel", "jupytext", "pytest", "hypothesis",
             "nbval", "selenium", "linkchecker", "pyyaml", "tqdm", "build", "xlrd", "xlwt"}
IMPORT_LIMIT_S = 1.0
#: A wheel built beforehand, tested instead of a fresh build (the release workflow sets it).
WHEEL_ENV = "DPKMEANS_WHEEL"

pytestmark = pytest.mark.slow


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel ``$DPKMEANS_WHEEL`` names, or else the one built from the working tree as
    ``make dist`` builds it (``python -m build``, isolated): from the sdist, so that a
    ``build/`` folder left in the checkout by an earlier build (which would still hold, say,
    the old ``dpkmeans/assignments``) adds nothing."""
    given = os.environ.get(WHEEL_ENV)
    if given:
        path = Path(given)
        if not (path.is_file() and re.fullmatch(r"dpkmeans-[^-]+-py3-none-any\.whl", path.name)):
            pytest.fail(f"{WHEEL_ENV}={given} is not a dpkmeans wheel file")
        return path.resolve()
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)])
    wheels = list(out.glob("dpkmeans-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def env(tmp_path_factory, wheel) -> Path:
    """A fresh virtual environment with the wheel alone installed; its Python."""
    root = tmp_path_factory.mktemp("installed") / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    python = root / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--quiet", "-c", str(LOCK), str(wheel)])
    return python


def _clean_env() -> dict[str, str]:
    """The environment of a user's shell: none of this checkout's paths or settings."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    out = {k: os.environ[k] for k in keep if k in os.environ}
    out["PATH"] = os.pathsep.join(p for p in out.get("PATH", "").split(os.pathsep)
                                  if ".venv" not in p)
    return out


def _python(python: Path, code: str, tmp: Path) -> subprocess.CompletedProcess:
    return _run([str(python), "-c", code], cwd=tmp, env=_clean_env())


def _installed(python: Path) -> set[str]:
    listing = _run([str(python), "-m", "pip", "list", "--format=json"], env=_clean_env())
    return {p["name"].lower().replace("_", "-") for p in json.loads(listing.stdout)}


def readme_examples() -> list[str]:
    """The Python blocks of the README's section "Using the library"."""
    text = README.read_text()
    section = text.split("\n## Using the library\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_wheel_holds_the_package_and_its_metadata(wheel):
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith("METADATA"))).decode()
        scripts = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "dpkmeans/py.typed" in names
    assert "dpkmeans/api/estimators.py" in names
    assert not [n for n in names if n.startswith(("tests/", "notebooks/", "book/", "data/"))]
    assert not [n for n in names if n.startswith(("dpkmeans_classroom", "dpkmeans/assignments",
                                                  "classroom/"))]
    assert {n.split("/", 1)[0] for n in names if not n.startswith("dpkmeans-")} == {"dpkmeans"}
    assert "classroom" not in scripts and "dpkmeans = dpkmeans.cli:main" in scripts
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")
                and "extra ==" not in line]
    assert sorted(re.split(r"[<>=!~ ;]", r.split(": ", 1)[1])[0] for r in requires) == [
        "numpy", "pandas", "scikit-learn", "scipy"]
    assert "License-Expression: MIT" in meta
    assert any(n.endswith("licenses/LICENSE") for n in names)


def test_nothing_but_the_four_dependencies_is_installed(env):
    installed = _installed(env)
    assert "dpkmeans" in installed
    assert not installed & FORBIDDEN, installed & FORBIDDEN
    assert installed <= ALLOWED, installed - ALLOWED


def test_import_takes_at_most_a_second(env, tmp_path):
    code = ("import time; t = time.perf_counter(); import dpkmeans; "
            "print(time.perf_counter() - t)")
    _python(env, "import dpkmeans", tmp_path)  # the first run writes the bytecode
    seconds = min(float(_python(env, code, tmp_path).stdout) for _ in range(3))
    assert seconds <= IMPORT_LIMIT_S, f"import dpkmeans took {seconds:.2f} s"
    # The estimators load scikit-learn (whose sklearn.base imports scipy.stats and pandas:
    # seconds on a busy machine); what dpkmeans adds on top of those is held to the limit too.
    code = ("import time; t = time.perf_counter(); import sklearn.base, pandas, scipy.stats; "
            "a = time.perf_counter(); from dpkmeans import DPKMeans, DPKPrototypes; "
            "print(time.perf_counter() - a)")
    seconds = min(float(_python(env, code, tmp_path).stdout) for _ in range(3))
    assert seconds <= IMPORT_LIMIT_S, f"the estimators' own import took {seconds:.2f} s"


def test_the_readme_examples_run_on_the_numpy_path(env, tmp_path):
    examples = readme_examples()
    assert len(examples) == 2 and "DPKPrototypes" in examples[1]
    for code in examples:
        done = _python(env, code, tmp_path)
        assert done.stdout.strip(), "the example printed nothing"
        notices = done.stderr.count("NumbaMissingNotice")
        assert notices == 1, f"expected one notice about numba, got:\n{done.stderr}"
        assert 'pip install "dpkmeans[fast]"' in done.stderr


def test_the_dataset_commands_use_the_registry_the_wheel_carries(env, tmp_path):
    dpkmeans = env.parent / "dpkmeans"
    listing = _run([str(dpkmeans), "datasets", "list", "--data-home", str(tmp_path)],
                   cwd=tmp_path, env=_clean_env()).stdout
    assert "blood" in listing and "transfusion.data" in listing
    # a command that needs the book's tools says which extra installs them
    bad = subprocess.run([str(dpkmeans), "sweep", "no-such.yaml"], capture_output=True,
                         text=True, cwd=tmp_path, env=_clean_env())
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    assert 'pip install "dpkmeans[book]"' in bad.stderr


def test_the_classroom_is_not_installed_and_its_old_command_names_the_new_one(env, tmp_path):
    assert "dpkmeans-classroom" not in _installed(env)
    absent = subprocess.run([str(env), "-c", "import dpkmeans_classroom"], capture_output=True,
                            text=True, cwd=tmp_path, env=_clean_env())
    assert absent.returncode == 1 and "ModuleNotFoundError" in absent.stderr
    assert not (env.parent / "dpkmeans-classroom").exists()
    moved = subprocess.run([str(env.parent / "dpkmeans"), "assignments", "make", "--chapter", "5"],
                           capture_output=True, text=True, cwd=tmp_path, env=_clean_env())
    assert moved.returncode == 2 and "Traceback" not in moved.stderr, moved.stderr
    assert len(moved.stderr.strip().splitlines()) == 1, moved.stderr
    assert "`python -m dpkmeans_classroom make --chapter 5`" in moved.stderr


#: The README's fits again, their results as JSON: compared with the book's environment.
_RESULTS = """
import json, warnings
import numpy as np, pandas as pd
from dpkmeans import DPKMeans, DPKPrototypes
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = np.clip(rng.normal(0.0, 0.3, size=(5000, 2)) + rng.choice([-0.5, 0.5], size=(5000, 2)), -1, 1)
out = {}
for algorithm in ("dplloyd-impr", "apdp", "silhouette"):
    public_n = {"n_records": 5000} if algorithm != "silhouette" else {}
    m = DPKMeans(n_clusters=4, epsilon=1.0, bounds=(-1, 1), algorithm=algorithm,
                 random_state=0, **public_n).fit(X)
    out[algorithm] = [m.cluster_centers_.tobytes().hex(), m.labels_.tolist(),
                      m.privacy_spent_.epsilon]
M = pd.DataFrame({"x": X[:, 0], "c": np.where(X[:, 1] > 0, "a", "b")})
p = DPKPrototypes(n_clusters=2, epsilon=2.0, bounds=(-1, 1), categories={"c": ["a", "b"]},
                  random_state=0).fit(M)
out["prototypes"] = [p.cluster_centers_.tobytes().hex(), p.labels_.tolist(),
                     [str(v) for v in p.cluster_modes_.ravel()]]
print(json.dumps(out))
"""


def test_the_numpy_path_gives_the_compiled_paths_bits(env, tmp_path):
    installed = json.loads(_python(env, _RESULTS, tmp_path).stdout)
    here = json.loads(_run([sys.executable, "-c", _RESULTS], cwd=tmp_path).stdout)
    assert installed == here


_DASK = """
import warnings
import numpy as np
from dask.distributed import Client, LocalCluster
from dpkmeans import DPKMeans
warnings.simplefilter("ignore")
rng = np.random.default_rng(1)
X = rng.uniform(-1, 1, size=(20000, 3))
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                  dashboard_address=None) as cluster, Client(cluster) as client:
    on_dask = DPKMeans(n_clusters=3, epsilon=1.0, bounds=(-1, 1), backend="dask",
                       client=client, random_state=5).fit(X)
in_memory = DPKMeans(n_clusters=3, epsilon=1.0, bounds=(-1, 1), random_state=5).fit(X)
assert on_dask.cluster_centers_.tobytes() == in_memory.cluster_centers_.tobytes()
print("same bits", on_dask.privacy_spent_.epsilon)
"""


def test_with_the_dask_extra_a_local_cluster_fit_gives_the_same_bits(env, wheel, tmp_path):
    _run([str(env), "-m", "pip", "install", "--quiet", "-c", str(LOCK), f"{wheel}[dask]"],
         env=_clean_env())
    installed = _installed(env)
    assert {"dask", "distributed", "pyarrow"} <= installed
    # pyyaml comes with dask (a dependency of its own)
    assert not installed & (FORBIDDEN - {"dask", "distributed", "pyarrow", "pyyaml"})
    done = _python(env, _DASK, tmp_path)
    assert done.stdout.startswith("same bits")
