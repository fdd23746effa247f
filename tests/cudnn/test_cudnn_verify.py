"""The real cuDNN after install (cudaswitch/cudnn/verify.py): the header read back and libcudnn.so.9 loaded."""

from __future__ import annotations

import json
import os

import pytest

import cudnn_archives as ca
from conftest import run_cli
from cudnn_checks import snap, ok



@pytest.mark.slow
def test_real_cudnn_installs_loads_and_uninstalls(real_tarball, linux_fs):
    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    proc = ok(run_cli(["install-cudnn", str(real_tarball), "--json"], env, timeout=900))
    res = json.loads(proc.stdout)
    assert res["installed"] and res["archive"]["version"] == "9.10.2" and res["archive"]["full_version"] == "9.10.2.21"
    assert res["target"]["root"] == "/usr/local/cuda-12.9"
    # the header says 9.10.2 and the real libcudnn.so.9, loaded from lib64 with ctypes, says 91002
    assert res["verify"] == {"header": "9.10.2", "expected": "9.10.2", "library": 91002, "library_error": None,
                             "checked": "header and library", "ok": True}
    lib64 = root / "lib64"
    assert os.readlink(lib64 / "libcudnn.so") == "libcudnn.so.9"
    assert os.readlink(lib64 / "libcudnn.so.9") == "libcudnn.so.9.10.2"
    import nvidia_wheels as nw

    wheel_lib = nw.extracted(nw.CUDNN_CU12) / "nvidia" / "cudnn" / "lib"
    for so in ("libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"):
        assert ca.snapshot(wheel_lib)[so][1].split()[0] == \
            ca.snapshot(lib64.resolve())[so.replace(".so.9", ".so.9.10.2")][1].split()[0]
    listed = json.loads(ok(run_cli(["list", "--json"], env)).stdout)
    assert next(t for t in listed["toolkits"] if t["version"] == "12.9.1")["cudnn"] == "9.10.2"
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before
