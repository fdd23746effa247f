"""Whether an archive fits a target (cudaswitch/cudnn/compat.py): a CUDA-major mismatch is refused, --force
overrides it and says so. (Another OS or CPU architecture: tests/cudnn/test_cudnn_archive.py, wrong-os, wrong-arch.)"""

from __future__ import annotations

from conftest import run_cli
from cudnn_checks import snap, ok, refused



def test_wrong_major_force_overrides_and_says_so(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "11.8"], env),
            "built for CUDA 12", "--force")
    assert snap(fs) == before
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "11.8", "--force"], env)).stdout
    assert "warning: --force: this cuDNN is built for CUDA 12" in out
    ok(run_cli(["uninstall-cudnn", "--cuda", "11.8"], env))
    assert snap(fs) == before
