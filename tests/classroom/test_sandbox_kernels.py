"""The sandbox gets the grader's compiled kernels, so that a student's notebook does not
compile them again; the grader's command line finds them without loading numba."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from dpkmeans_classroom import Limits, sandbox


def test_the_kernel_folder_is_found_without_numba(tmp_path):
    """The grader finds the kernels' folder (``$DPKMEANS_KERNEL_DIR`` honoured) without
    importing the kernels, which load numba (the command line starts without it)."""
    code = ("import sys; from dpkmeans.compute.kernel_cache import kernel_dir; "
            "print(kernel_dir()); print('numba' in sys.modules)")
    env = {**os.environ, "DPKMEANS_KERNEL_DIR": str(tmp_path / "mine")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(tmp_path / "mine"), "False"]


def test_the_sandbox_is_seeded_with_the_generated_kernels(tmp_path, monkeypatch):
    """The generated modules are copied into the sandbox's kernel folder and their numba
    caches into the cache folder of the path the kernel sees; nothing else of the folder."""
    generated = tmp_path / "generated"
    (generated / "__pycache__").mkdir(parents=True)
    (generated / "dpkmeans_kernel_k2_d3_0123.py").write_text("# generated\n")
    (generated / "__pycache__" / "dpkmeans_kernel_k2_d3_0123.f-1.py311.nbi").write_bytes(b"i")
    (generated / "__pycache__" / "someone_else.f-1.py311.nbi").write_bytes(b"i")
    (generated / "notes.py").write_text("")
    monkeypatch.setenv("DPKMEANS_KERNEL_DIR", str(generated))
    with sandbox.Sandbox("limits", Limits(), {}) as box:
        assert [p.name for p in box.kernels.iterdir()] == ["dpkmeans_kernel_k2_d3_0123.py"]
        inside = box._kernels_inside()
        cache = box.numba / f"kernels_{hashlib.sha1(inside.encode()).hexdigest()}"
        assert [p.name for p in cache.iterdir()] == ["dpkmeans_kernel_k2_d3_0123.f-1.py311.nbi"]
