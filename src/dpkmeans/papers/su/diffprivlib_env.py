"""diffprivlib's ``KMeans``, run where it can be imported (chapter 5's comparison).

diffprivlib 0.6.6 cannot be imported with scikit-learn 1.9 or later (it imports
``sklearn.tree._tree.DOUBLE``, which 1.9 removed), while the library runs on the newest
scikit-learn. The comparison therefore runs diffprivlib in an environment of its own, with the
scikit-learn it needs: ``make compare-env`` creates ``.venv-compare`` from
``requirements/compare-lock.txt``. :func:`diffprivlib_centroids` calls diffprivlib directly
when it can be imported here, and otherwise runs this module in that environment's Python (or
the one ``$DPKMEANS_COMPARE_PYTHON`` names) as a script that needs numpy and diffprivlib
only, passing the data and the seeds through a temporary ``.npz`` file. Either way the centroids are the same: the data and seeds are the
same, and diffprivlib's KMeans draws its noise with numpy alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

__all__ = ["COMPARE_PYTHON_ENV", "compare_python", "diffprivlib_available",
           "diffprivlib_centroids"]

#: Names the Python of an environment with diffprivlib (overrides ``.venv-compare``).
COMPARE_PYTHON_ENV = "DPKMEANS_COMPARE_PYTHON"
#: The environment ``make compare-env`` creates, at the top of a checkout of the book.
_COMPARE_VENV = ".venv-compare"


def diffprivlib_available() -> bool:
    """Whether diffprivlib can be imported in this process."""
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return False
    return True


def compare_python() -> Path:
    """The Python of the comparison environment: ``$DPKMEANS_COMPARE_PYTHON``, else
    ``.venv-compare/bin/python`` at the top of the checkout this library runs from.

    Raises
    ------
    RuntimeError
        When neither exists, saying how to make one.
    """
    named = os.environ.get(COMPARE_PYTHON_ENV, "").strip()
    if named:
        path = Path(named)
        if not path.is_file():
            raise RuntimeError(f"${COMPARE_PYTHON_ENV} is {named!r}, which is not a file")
        return path
    for parent in Path(__file__).resolve().parents:
        candidate = parent / _COMPARE_VENV / "bin" / "python"
        if (parent / "pyproject.toml").is_file() and candidate.is_file():
            return candidate
    raise RuntimeError(
        "diffprivlib cannot be imported here (diffprivlib 0.6.6 needs scikit-learn < 1.9) and "
        f"no comparison environment was found: run `make compare-env` in the book's checkout, "
        f"or set ${COMPARE_PYTHON_ENV} to a Python with diffprivlib and dpkmeans installed")


def _fit_here(X: np.ndarray, k: int, epsilon: float, seeds: list[int],
              bounds: tuple[float, float]) -> np.ndarray:
    from diffprivlib.models import KMeans as DiffprivlibKMeans

    out = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = DiffprivlibKMeans(n_clusters=k, epsilon=epsilon, bounds=bounds,
                                      random_state=seed).fit(X)
        out.append(model.cluster_centers_)
    return np.stack(out)


def diffprivlib_centroids(X: np.ndarray, k: int, epsilon: float, seeds: list[int],
                          bounds: tuple[float, float]) -> np.ndarray:
    """diffprivlib KMeans' centroids, one (k, d) array per seed: shape (len(seeds), k, d).

    In this process when diffprivlib imports, otherwise in the comparison environment
    (:func:`compare_python`).
    """
    if diffprivlib_available():
        return _fit_here(X, k, epsilon, seeds, bounds)
    python = compare_python()
    with tempfile.TemporaryDirectory(prefix="dpkmeans-diffprivlib-") as tmp:
        given, back = Path(tmp) / "input.npz", Path(tmp) / "centroids.npz"
        np.savez(given, X=np.asarray(X, dtype=np.float64), k=k, epsilon=epsilon,
                 seeds=np.asarray(seeds, dtype=np.uint64), bounds=np.asarray(bounds, float))
        # this file as a script (-P: not its folder on sys.path): it needs numpy and
        # diffprivlib only, not this library
        done = subprocess.run([str(python), "-P", __file__, str(given), str(back)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"diffprivlib in {python} failed:\n{done.stderr.strip()}")
        with np.load(back) as result:
            return result["centroids"]


def _main(argv: list[str]) -> int:
    """``python -P diffprivlib_env.py INPUT.npz OUTPUT.npz`` (run by
    :func:`diffprivlib_centroids`)."""
    given, back = argv
    with np.load(given) as data:
        centroids = _fit_here(data["X"], int(data["k"]), float(data["epsilon"]),
                              [int(s) for s in data["seeds"]],
                              tuple(float(b) for b in data["bounds"]))
    np.savez(back, centroids=centroids)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
