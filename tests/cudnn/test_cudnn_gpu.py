"""On a machine with an NVIDIA GPU: the real cuDNN that `install-cudnn` put into a toolkit creates a cuDNN handle on
the GPU (cudnnCreate), loading its sub-libraries from the toolkit. Skipped where no NVIDIA driver is present.

The cuDNN comes from, in order: $CUDASWITCH_TEST_CUDNN_DIR (an `nvidia/cudnn` folder), an installed
nvidia-cudnn-cu12 / -cu13 package, the pinned nvidia-cudnn-cu12 wheel (downloaded and cached).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cudatrees
import cudnn_archives as ca
from conftest import run_cli


def _driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _driver(), reason="no NVIDIA driver (libcuda.so.1)")]


def _installed_cudnn():
    """(nvidia/cudnn folder, full version, CUDA major, site-packages) of an installed nvidia-cudnn-cuNN, or None."""
    import importlib.metadata as md

    for major in ("12", "13"):
        try:
            dist = md.distribution(f"nvidia-cudnn-cu{major}")
        except md.PackageNotFoundError:
            continue
        folder = Path(str(dist.locate_file("nvidia/cudnn")))
        if (folder / "lib").is_dir():
            return folder, dist.version, major, folder.parent.parent
    return None


def _source():
    env = os.environ.get("CUDASWITCH_TEST_CUDNN_DIR")
    if env:
        folder = Path(env)
        text = (folder / "include" / "cudnn_version.h").read_text()
        v = ".".join(re.findall(r"#define CUDNN_(?:MAJOR|MINOR|PATCHLEVEL)\s+(\d+)", text)[:3])
        return folder, v, os.environ.get("CUDASWITCH_TEST_CUDNN_CUDA", "12"), folder.parent.parent
    found = _installed_cudnn()
    if found:
        return found
    import nvidia_wheels as nw

    return None, ca.REAL_VERSION, "12", nw.extracted(nw.CUDNN_CU12)


_CREATE = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cudnnGetErrorString.restype = ctypes.c_char_p
lib.cudnnGetVersion.restype = ctypes.c_size_t
h = ctypes.c_void_p()
st = lib.cudnnCreate(ctypes.byref(h))
print("version", lib.cudnnGetVersion())
print("create", st, lib.cudnnGetErrorString(st).decode())
if st == 0:
    print("destroy", lib.cudnnDestroy(h))
for line in open("/proc/self/maps"):
    if "libcudnn" in line:
        print("mapped", line.split()[-1])
"""


def test_installed_real_cudnn_creates_a_handle_on_the_gpu(tmp_path, clean_env):
    folder, version, major, site = _source()
    tarball = ca.real_linux_tarball(source=folder, version=version, cuda=major, fmt="tar.gz",
                                    out_dir=tmp_path / "archives")
    fs = tmp_path / "fs"
    root = fs / "usr" / "local" / f"cuda-{major}.8"
    cudatrees.cuda_10_2(root)  # a toolkit tree; only its version matters here
    (root / "version.txt").write_text(f"CUDA Version {major}.8.0\n")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before = ca.snapshot(fs)

    proc = run_cli(["install-cudnn", str(tarball), "--cuda", f"{major}.8", "--json"], env, timeout=900)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    short = ".".join(version.split(".")[:3])
    assert res["verify"]["header"] == short and res["verify"]["ok"], res["verify"]

    lib64 = (root / "lib64").resolve()
    # other NVIDIA libraries cuDNN uses at run time (cuBLASLt, NVRTC) from the same site-packages, never its cudnn
    extra = [str(p) for p in sorted((Path(site) / "nvidia").glob("*/lib")) if p.parent.name != "cudnn"]
    run_env = dict(os.environ, LD_LIBRARY_PATH=":".join([str(lib64)] + extra))
    out = subprocess.run([sys.executable, "-c", _CREATE, str(lib64 / f"libcudnn.so.{short.split('.')[0]}")],
                         env=run_env, capture_output=True, text=True, timeout=300)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.stderr
    assert "create 0 CUDNN_STATUS_SUCCESS" in out.stdout
    mapped = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("mapped")]
    assert mapped and all(m.startswith(str(lib64)) for m in mapped), mapped  # every cuDNN library from the toolkit

    assert run_cli(["uninstall-cudnn", "--cuda", f"{major}.8"], env).returncode == 0
    assert ca.snapshot(fs) == before
