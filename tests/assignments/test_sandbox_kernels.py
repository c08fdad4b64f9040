"""The sandbox gets the grader's compiled kernels, so that a student's notebook does not
compile them again; the grader's command line finds them without loading numba."""

from __future__ import annotations

import hashlib

from dpkmeans.assignments import Limits, sandbox
from dpkmeans.compute.kernel_cache import kernel_dir


def test_the_grader_kernel_folder_is_the_library_one(tmp_path, monkeypatch):
    monkeypatch.setenv("DPKMEANS_KERNEL_DIR", str(tmp_path / "mine"))
    assert sandbox._grader_kernel_dir() == kernel_dir() == tmp_path / "mine"
    monkeypatch.delenv("DPKMEANS_KERNEL_DIR")
    assert sandbox._grader_kernel_dir() == kernel_dir()


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
