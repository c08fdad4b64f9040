"""The numpy path (dpkmeans.compute.fastpath): without numba, or with DPKMEANS_NO_NUMBA set, the
estimators give the same labels, centroids, ledgers and metrics as the compiled path, bit for
bit; one NumbaMissingNotice per process names the ``fast`` extra; nothing loads numba.

Each numpy-path run is a fresh subprocess (the path is decided once per process); the compiled
path's results are computed here, in the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The fits compared: (name, estimator, keyword arguments). Enough rows for two blocks of the
#: plan (2^16 rows each), so that the compiled path runs its blocks in threads.
FITS_SOURCE = textwrap.dedent('''
    import numpy as np
    import pandas as pd

    from dpkmeans import DPKMeans, DPKPrototypes
    from dpkmeans.compute import metrics

    def data():
        gen = np.random.default_rng(11)
        centres = np.array([[-0.5, -0.5, 0.1], [0.5, 0.5, -0.2], [0.5, -0.5, 0.4]])
        n = 70_000
        return np.clip(centres[gen.integers(3, size=n)] + gen.normal(0, 0.15, (n, 3)), -1, 1)

    FITS = [("dplloyd-impr", {"algorithm": "dplloyd-impr"}),
            ("dplloyd", {"algorithm": "dplloyd", "max_iter": 4}),
            ("apdp", {"algorithm": "apdp"}),
            ("silhouette", {"algorithm": "silhouette"}),
            ("dp-kccm", {"algorithm": "dp-kccm"}),
            ("di", {"algorithm": "di"})]

    def results():
        X = data()
        out = {}
        for name, kw in FITS:
            model = DPKMeans(3, epsilon=1.0, bounds=(-1, 1), random_state=5, **kw).fit(X)
            C = model.cluster_centers_
            out[name] = {"labels": model.labels_.tobytes().hex(), "centres": C.tobytes().hex(),
                         "ledger": repr(model.ledger_.entries),
                         "nicv": np.float64(metrics.nicv(X, C)).tobytes().hex(),
                         "sse": np.float64(metrics.sse(X, C)).tobytes().hex()}
        gen = np.random.default_rng(2)
        frame = pd.DataFrame({"x": gen.uniform(0, 1, 3000), "y": gen.uniform(0, 1, 3000),
                              "colour": gen.choice(["red", "blue", "green"], 3000)})
        model = DPKPrototypes(3, epsilon=2.0, bounds=(0.0, 1.0), max_iter=4, random_state=3,
                              categories={"colour": ["blue", "green", "red"]}).fit(frame)
        out["prototypes"] = {"labels": model.labels_.tobytes().hex(),
                             "centres": model.cluster_centers_.tobytes().hex(),
                             "modes": repr(model.cluster_modes_.tolist()),
                             "ledger": repr(model.ledger_.entries)}
        return out
''')

#: How the child hides numba: "env" sets DPKMEANS_NO_NUMBA (numba installed), "missing" makes
#: ``import numba`` fail as if it were not installed, "broken" lets numba be found but its
#: import raise an ImportError.
HIDE = {
    "env": "",
    "missing": 'sys.modules["numba"] = None\nsys.modules["llvmlite"] = None\n',
    "broken": textwrap.dedent('''
        import importlib.abc, importlib.machinery

        class Broken(importlib.abc.MetaPathFinder, importlib.abc.Loader):
            def find_spec(self, name, path=None, target=None):
                if name == "numba" or name.startswith("numba."):
                    return importlib.machinery.ModuleSpec(name, self)
                return None
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                raise ImportError("numba needs a newer numpy (simulated)")

        sys.meta_path.insert(0, Broken())
    '''),
}

CHILD = '''
import json, sys, warnings
{hide}
warnings.simplefilter("always")  # the notice is once per process by the library's own flag
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import dpkmeans
    from dpkmeans.errors import NumbaMissingNotice
{fits}
    out = results()
    out_again = results()  # a second round: no second notice
notices = [str(w.message) for w in caught if issubclass(w.category, NumbaMissingNotice)]
from dpkmeans.compute import fastpath
print(json.dumps({{"results": out, "same_again": out == out_again, "notices": notices,
                   "numba_loaded": sorted(m for m in sys.modules
                                          if m.split(".")[0] in ("numba", "llvmlite")
                                          and sys.modules[m] is not None),
                   "kernels_loaded": "dpkmeans.compute.kernels" in sys.modules,
                   "compiled": fastpath.compiled()}}))
'''


def run_child(hide: str, *, force: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DPKMEANS_NO_NUMBA"}
    if force:
        env["DPKMEANS_NO_NUMBA"] = "1"
    source = CHILD.format(hide=HIDE[hide], fits=textwrap.indent(FITS_SOURCE, "    "))
    done = subprocess.run([sys.executable, "-c", source], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def compiled_results() -> dict:
    """The compiled path's results, in this process."""
    pytest.importorskip("numba")
    from dpkmeans.compute import fastpath

    if not fastpath.compiled():
        pytest.skip("the compiled path is off in this process")
    namespace: dict = {}
    exec(FITS_SOURCE, namespace)  # noqa: S102 - the fits' source, shared with the children
    return namespace["results"]()


@pytest.mark.parametrize("hide", ["missing", "broken"])
def test_without_numba_the_results_are_the_same_bits_and_one_notice_names_the_extra(
        hide, compiled_results):
    got = run_child(hide, force=False)
    assert not got["compiled"]
    assert got["numba_loaded"] == [] and not got["kernels_loaded"]
    assert got["same_again"]
    for name, expected in compiled_results.items():
        for key, value in expected.items():
            assert got["results"][name][key] == value, f"{name}: {key} differs"
    assert len(got["notices"]) == 1, got["notices"]
    assert 'pip install "dpkmeans[fast]"' in got["notices"][0]
    if hide == "broken":
        assert "simulated" in got["notices"][0]


def test_the_environment_variable_forces_the_numpy_path_without_a_notice(compiled_results):
    got = run_child("env", force=True)
    assert not got["compiled"] and not got["kernels_loaded"] and got["numba_loaded"] == []
    assert got["results"] == compiled_results
    assert got["notices"] == []


def test_importing_dpkmeans_loads_no_numba():
    """numba is loaded on the first fit, not by ``import dpkmeans`` (the compiled path's
    import time is paid when it is used)."""
    code = ("import sys, dpkmeans, dpkmeans.api, dpkmeans.compute.lloyd, dpkmeans.compute.metrics\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]"


def test_the_notice_is_a_user_warning_that_the_test_filters_do_not_turn_into_errors():
    from dpkmeans.errors import NumbaMissingNotice, PrivacyLeakWarning

    assert issubclass(NumbaMissingNotice, UserWarning)
    assert not issubclass(NumbaMissingNotice, PrivacyLeakWarning)
