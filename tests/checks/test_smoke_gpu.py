"""`cudaswitch smoke` on a real GPU: is_available, the device name, and matmul + conv2d on the GPU.

Run: `python -m pytest -m gpu tests/checks/test_smoke_gpu.py`. The interpreter whose torch is tested is
$CUDASWITCH_GPU_PYTHON if set, else this one; a CUDA torch is installed into a test environment with pip when that
interpreter has none (pip's own configuration decides where from, e.g. a wheel the lead provides with
PIP_FIND_LINKS). Skipped where no NVIDIA driver is present (no nvidia-smi and no loadable libcuda).
"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_env, run_cli

pytestmark = pytest.mark.gpu


def _has_gpu() -> bool:
    if shutil.which("nvidia-smi"):
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    for name in ("libcuda.so.1", "nvcuda.dll"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def _python_site(python: str):
    code = "import json, site, sys; print(json.dumps([sys.prefix, site.getsitepackages()]))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def _has_cuda_torch(python: str) -> bool:
    r = subprocess.run([python, "-c", "import torch, sys; sys.exit(0 if torch.version.cuda else 3)"],
                       capture_output=True)
    return r.returncode == 0


@pytest.fixture(scope="module")
def gpu_env(tmp_path_factory):
    if not _has_gpu():
        pytest.skip("no NVIDIA GPU/driver on this machine")
    python = os.environ.get("CUDASWITCH_GPU_PYTHON") or sys.executable
    prefix, sites = _python_site(python)
    if (Path(prefix) / "conda-meta").is_dir() and _has_cuda_torch(python):
        return Path(prefix)
    env = tmp_path_factory.mktemp("gpu") / "env"
    subprocess.run([python, "-m", "venv", "--without-pip", str(env)], check=True)
    make_env(env)
    site = next(env.glob("lib/python3*/site-packages"), None) or env / "Lib" / "site-packages"
    if _has_cuda_torch(python):
        (site / "zz_gpu_python.pth").write_text("\n".join(sites) + "\n")  # that interpreter's torch
    else:
        r = subprocess.run([python, "-m", "pip", "install", "--target", str(site), "torch"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            pytest.fail(f"no CUDA torch for the GPU test and pip could not install one: {r.stderr[-400:]}")
    return env


def test_smoke_on_a_real_gpu(gpu_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "_CONDA"))}
    r = run_cli(["smoke", "-p", str(gpu_env), "--json"], env=env, timeout=600)
    rec = json.loads(r.stdout)
    print(json.dumps({k: rec[k] for k in ("status", "code", "cause", "torch", "driver", "steps", "chain")}, indent=1))
    t = rec["torch"]
    assert t["is_available"] is True, rec["cause"]
    assert t["device_count"] >= 1 and t["device_name"]
    assert rec["device"] == "cuda"
    for step in ("matmul", "conv2d"):
        assert rec["steps"][step]["ok"], rec["steps"][step]
        assert rec["steps"][step]["detail"]["device"].startswith("cuda")
    assert rec["steps"]["conv2d"]["detail"]["cudnn"] is True
    assert rec["driver"]["cuda_max"]
    assert rec["result"] == "gpu"
    assert r.returncode == 0 and rec["status"] == "pass", rec["findings"]
