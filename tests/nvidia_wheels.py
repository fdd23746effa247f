"""Real NVIDIA files for the tests: PyPI wheels fetched once with pip into a cache folder.

The cache lives in $CUDASWITCH_TEST_CACHE (default ~/.cache/cudaswitch-tests) so CI and developers download each
wheel once. A failed download is a test error, never a skip: CI must exercise the real files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

# Pinned so that the versions the tests assert are stable.
CUDA_RUNTIME_CU11 = "nvidia-cuda-runtime-cu11==11.8.89"
CUDA_RUNTIME_CU12 = "nvidia-cuda-runtime-cu12==12.9.79"
CUDA_NVCC_CU12 = "nvidia-cuda-nvcc-cu12==12.9.86"
CUDNN_CU12 = "nvidia-cudnn-cu12==9.10.2.21"


def cache_dir() -> Path:
    d = Path(os.environ.get("CUDASWITCH_TEST_CACHE") or Path.home() / ".cache" / "cudaswitch-tests")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _linux(paths):
    return sorted(p for p in paths if "manylinux" in p.name)


def wheel(spec: str) -> Path:
    """Path of the cached wheel for `name==version`, downloading it on first use."""
    name, version = spec.split("==")
    stem = name.replace("-", "_") + "-" + version + "-"
    wheels = cache_dir() / "wheels"
    wheels.mkdir(exist_ok=True)
    hits = _linux(wheels.glob(stem + "*.whl"))  # the shared cache may also hold win_amd64 wheels
    if not hits:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform",
             "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_27_x86_64",
             "--python-version", "3.11", "-d", str(wheels), spec],
            check=True, stdout=subprocess.DEVNULL,
        )
        hits = _linux(wheels.glob(stem + "*.whl"))
    assert hits, f"pip did not produce a wheel for {spec}"
    return hits[0]


def extracted(spec: str) -> Path:
    """The wheel unpacked once into the cache (executable bits kept)."""
    whl = wheel(spec)
    dest = cache_dir() / "unpacked" / whl.stem
    done = dest / ".complete"
    if not done.exists():
        dest.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(whl) as zf:
            for info in zf.infolist():
                target = dest / info.filename
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        out.write(chunk)
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    os.chmod(target, mode)
        done.write_text("ok")
    return dest


# The CUDA 13.0 wheels `cudaswitch install-toolkit 13.0` assembles (tests/test_toolkit_install.py).
TOOLKIT_13_0 = ["nvidia-cuda-nvcc==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-nvvm==13.0.88",
                "nvidia-cuda-runtime==13.0.96", "nvidia-cuda-cccl==13.0.85", "nvidia-cuda-nvrtc==13.0.88"]
