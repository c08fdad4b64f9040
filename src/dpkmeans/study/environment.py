"""The environment a sweep's cells run with (docs/design.md, "A pinned environment for the
sweeps"): one BLAS thread a cell and, on x86-64 with AVX2, OpenBLAS's AVX2 kernels. Kept free of
numpy so that it can be pinned before numpy loads OpenBLAS (the test suite's conftest does)."""

from __future__ import annotations

import os
import platform

__all__ = ["cpu_info", "cell_environment", "pin_cell_environment"]


def cpu_info() -> dict:
    """This machine's CPU from ``/proc/cpuinfo`` (its first processor): ``model`` (the model
    name), ``family`` and ``model_number``, and ``flags`` (a set); empty values off Linux."""
    info: dict = {"model": None, "family": None, "model_number": None, "flags": set()}
    keys = {"model name": "model", "cpu family": "family", "model": "model_number",
            "flags": "flags"}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor only
                key, _, value = line.partition(":")
                name = keys.get(key.strip())
                if name == "flags":
                    info["flags"] = set(value.split())
                elif name == "model":
                    info["model"] = value.strip()
                elif name:
                    info[name] = int(value)
    except OSError:  # pragma: no cover - not Linux
        pass
    return info


def cell_environment() -> dict[str, str]:
    """The environment the cells run with (their papermill kernels inherit it): one BLAS and
    OpenMP thread a cell (two cells share the two cores), and, on an x86-64 CPU with AVX2 and
    FMA, OpenBLAS's AVX2 ("Haswell") kernels whatever the CPU. OpenBLAS otherwise picks its
    kernels by the CPU it finds, and their rounding differs: on an AVX-512 machine the
    colored-noise chapter's CEDS covariance of Marketing (as published: the inverse of a nearly
    singular matrix) came out with a trace 1.83 times the one the AVX2 kernels give, and every
    CEDS number of that dataset with it. Pinned, the committed results reproduce on either."""
    env = {var: "1" for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    if (platform.machine().lower() in ("x86_64", "amd64")
            and {"avx2", "fma"} <= cpu_info()["flags"]):
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def pin_cell_environment(*, override: bool = False) -> dict[str, str]:
    """Put :func:`cell_environment` into ``os.environ`` before any cell starts (a variable the
    user set is kept unless ``override``); returns what the cells will see. The sweep and
    reproduce commands call it; the library functions leave the environment alone."""
    wanted = cell_environment()
    for var, value in wanted.items():
        if override:
            os.environ[var] = value
        else:
            os.environ.setdefault(var, value)
    return {var: os.environ[var] for var in wanted}
