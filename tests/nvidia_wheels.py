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

# Windows (win_amd64) wheels: NVIDIA's real DLLs and the only real nvcc.exe on PyPI. Chosen small: the cuDNN 9
# wheel for CUDA 11 is 390 MB, against 700+ MB for the -cu12 one and for every cuDNN 8.9 wheel; its 8 DLLs and
# 7 headers are the same cuDNN 9.10.2.21 as the Linux wheel above.
WIN_CUDA_RUNTIME_CU11 = "nvidia-cuda-runtime-cu11==11.8.89"  # 1 MB: bin/cudart64_110.dll
WIN_CUDA_RUNTIME_CU12 = "nvidia-cuda-runtime-cu12==12.9.79"  # 3.6 MB: bin/cudart64_12.dll, lib/x64/*.lib
WIN_CUDA_NVCC_13 = "nvidia-cuda-nvcc==13.0.88"  # 30 MB: cu13/bin/nvcc.exe
WIN_CUDNN_9 = "nvidia-cudnn-cu11==9.10.2.21"  # 390 MB: cudnn/bin/cudnn*64_9.dll
WIN = "win_amd64"


def cache_dir() -> Path:
    d = Path(os.environ.get("CUDASWITCH_TEST_CACHE") or Path.home() / ".cache" / "cudaswitch-tests")
    d.mkdir(parents=True, exist_ok=True)
    return d


def wheel(spec: str, platform: str = "linux") -> Path:
    """Path of the cached wheel for `name==version`, downloading it on first use. platform: "linux" or WIN."""
    name, version = spec.split("==")
    stem = name.replace("-", "_") + "-" + version + "-"
    wheels = cache_dir() / "wheels"
    wheels.mkdir(exist_ok=True)
    tag = "*win_amd64" if platform == WIN else "*manylinux"

    def cached():
        return sorted(wheels.glob(stem + tag + "*.whl"))

    hits = cached()
    if not hits:
        platforms = ["win_amd64"] if platform == WIN else \
            ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_27_x86_64"]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             *[a for p in platforms for a in ("--platform", p)],
             "--python-version", "3.11", "-d", str(wheels), spec],
            check=True, stdout=subprocess.DEVNULL,
        )
        hits = cached()
    assert hits, f"pip did not produce a wheel for {spec}"
    return hits[0]


def extracted(spec: str, platform: str = "linux") -> Path:
    """The wheel unpacked once into the cache (executable bits kept)."""
    whl = wheel(spec, platform)
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


# The CUDA 13.0 wheels `cudaswitch install-toolkit 13.0` assembles (tests/discovery/test_toolkit_install.py).
TOOLKIT_13_0 = ["nvidia-cuda-nvcc==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-nvvm==13.0.88",
                "nvidia-cuda-runtime==13.0.96", "nvidia-cuda-cccl==13.0.85", "nvidia-cuda-nvrtc==13.0.88"]
