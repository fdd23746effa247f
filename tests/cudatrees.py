"""Toolkit trees for the tests, laid out as NVIDIA installs them (sources.csv S1-S9),
built from the real files of NVIDIA's PyPI wheels wherever a wheel carries them.

Linux trees follow the runfile/deb layout: `<root>/targets/x86_64-linux/{include,lib}` with `include` and
`lib64` symlinks, `bin/`, and a `version.json` in NVIDIA's format (sources.csv S22).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional

import nvidia_wheels as nw

# version.json as CUDA 11.8 GA writes it: the third field of cuda.version is a build date (see
# cudaswitch/core/versions.py, BUILD_DATE_MIN).
VERSION_JSON_11_8 = {
    "cuda": {"name": "CUDA SDK", "version": "11.8.20220929"},
    "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "11.8.89"},
    "cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"},
}
# CUDA 12.9 Update 1 writes an update number in the third field.
VERSION_JSON_12_9 = {
    "cuda": {"name": "CUDA SDK", "version": "12.9.1"},
    "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.9.79"},
    "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.9.86"},
}


def _link_or_copy(src, dst, **_):
    """Hard-link the cached wheel files (fast, same bytes); copy across file systems."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _copytree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True, copy_function=_link_or_copy)


def _linux_skeleton(root: Path) -> Path:
    target = root / "targets" / "x86_64-linux"
    (target / "include").mkdir(parents=True, exist_ok=True)
    (target / "lib").mkdir(parents=True, exist_ok=True)
    (root / "bin").mkdir(parents=True, exist_ok=True)
    if not (root / "include").exists():
        os.symlink("targets/x86_64-linux/include", root / "include")
    if not (root / "lib64").exists():
        os.symlink("targets/x86_64-linux/lib", root / "lib64")
    return target


def cuda_11_8(root: Path, version_json: Optional[dict] = VERSION_JSON_11_8) -> Path:
    """CUDA 11.8 runtime from nvidia-cuda-runtime-cu11 (real cuda.h, real libcudart.so.11.0); no nvcc."""
    runtime = nw.extracted(nw.CUDA_RUNTIME_CU11) / "nvidia" / "cuda_runtime"
    target = _linux_skeleton(root)
    _copytree(runtime / "include", target / "include")
    _link_or_copy(runtime / "lib" / "libcudart.so.11.0", target / "lib" / "libcudart.so.11.0")
    os.symlink("libcudart.so.11.0", target / "lib" / "libcudart.so")
    if version_json is not None:
        (root / "version.json").write_text(json.dumps(version_json, indent=3))
    return root


def cuda_12_9(root: Path, version_json: Optional[dict] = VERSION_JSON_12_9) -> Path:
    """CUDA 12.9 from nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12: real headers, libcudart.so.12, ptxas,
    libnvvm. The nvcc wheel ships no nvcc binary, so `bin/nvcc` links to the real ptxas, whose `--version` prints
    the same 'release 12.9, V12.9.86' line nvcc does."""
    runtime = nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia" / "cuda_runtime"
    nvcc = nw.extracted(nw.CUDA_NVCC_CU12) / "nvidia" / "cuda_nvcc"
    target = _linux_skeleton(root)
    _copytree(runtime / "include", target / "include")
    _link_or_copy(runtime / "lib" / "libcudart.so.12", target / "lib" / "libcudart.so.12")
    os.symlink("libcudart.so.12", target / "lib" / "libcudart.so")
    _link_or_copy(nvcc / "bin" / "ptxas", root / "bin" / "ptxas")
    os.symlink("ptxas", root / "bin" / "nvcc")
    _copytree(nvcc / "nvvm", root / "nvvm")
    if version_json is not None:
        (root / "version.json").write_text(json.dumps(version_json, indent=3))
    return root


def cuda_10_2(root: Path) -> Path:
    """CUDA 10.2: version.txt, the format before 11.1 (sources.csv S20). Synthetic: no wheel carries 10.2."""
    target = _linux_skeleton(root)
    (root / "version.txt").write_text("CUDA Version 10.2.89\n")
    (target / "include" / "cuda.h").write_text("#define CUDA_VERSION 10020\n")
    (target / "lib" / "libcudart.so.10.2.89").write_bytes(b"\x7fELF")
    return root


def windows_toolkit(drive_root: Path, version: str, cuda13: bool = False, folder: Optional[str] = None) -> Path:
    """A `C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\vX.Y` tree under `drive_root/C` (synthetic:
    nothing Windows runs here). File names follow sources.csv S1, S3, S32: cudart64_110.dll for 11.x, DLLs in
    bin\\x64 for 13.x, import libs in lib\\x64."""
    major, minor = (int(p) for p in version.split(".")[:2])
    root = drive_root / "C" / "Program Files" / "NVIDIA GPU Computing Toolkit" / "CUDA" / (folder or f"v{major}.{minor}")
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "lib" / "x64").mkdir(parents=True)
    (root / "bin" / "nvcc.exe").write_bytes(b"MZ")
    dll = {11: "cudart64_110.dll", 12: "cudart64_12.dll", 13: "cudart64_13.dll"}.get(major, f"cudart64_{major}{minor}.dll")
    if cuda13:
        (root / "bin" / "x64").mkdir()
        (root / "bin" / "x64" / dll).write_bytes(b"MZ")
    else:
        (root / "bin" / dll).write_bytes(b"MZ")
        (root / "libnvvp").mkdir()
    (root / "lib" / "x64" / "cudart.lib").write_bytes(b"!<arch>\n")
    (root / "include" / "cuda.h").write_text(f"#define CUDA_VERSION {major * 1000 + minor * 10}\n")
    full = version if version.count(".") == 2 else version + ".0"
    (root / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": full}}))
    return root


# ---- Windows trees from NVIDIA's real win_amd64 wheels ----------------------------------------------------------

WIN_TOOLKIT = ("Program Files", "NVIDIA GPU Computing Toolkit", "CUDA")


def _win_runtime(spec: str) -> Path:
    return nw.extracted(spec, nw.WIN) / "nvidia" / "cuda_runtime"


def windows_real_toolkit(drive_root: Path, version: str, folder: Optional[str] = None,
                         version_json: Optional[dict] = None) -> Path:
    """`C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\vX.Y` under `drive_root/C`, in the installer's layout,
    filled with NVIDIA's real Windows files. No version.json unless given, so the version must come from the
    binaries:
      11.8  bin\\cudart64_110.dll and include\\ from nvidia-cuda-runtime-cu11 11.8.89 (no .lib in that wheel)
      12.9  bin\\cudart64_12.dll, include\\, lib\\x64\\*.lib from nvidia-cuda-runtime-cu12 12.9.79 (no nvcc.exe: the
            cu12 nvcc wheels carry none)
      13.0  bin\\nvcc.exe, ptxas.exe, ... and include\\ from nvidia-cuda-nvcc 13.0.88, the only real nvcc.exe on
            PyPI; its only version source is nvcc.exe."""
    root = drive_root.joinpath("C", *WIN_TOOLKIT, folder or f"v{version}")
    (root / "bin").mkdir(parents=True)
    if version == "13.0":
        nvcc = nw.extracted(nw.WIN_CUDA_NVCC_13, nw.WIN) / "nvidia" / "cu13"
        _copytree(nvcc / "bin", root / "bin")
        _copytree(nvcc / "include", root / "include")
    else:
        runtime = _win_runtime(nw.WIN_CUDA_RUNTIME_CU11 if version == "11.8" else nw.WIN_CUDA_RUNTIME_CU12)
        dll = "cudart64_110.dll" if version == "11.8" else "cudart64_12.dll"
        _link_or_copy(runtime / "bin" / dll, root / "bin" / dll)
        _copytree(runtime / "include", root / "include")
        (root / "libnvvp").mkdir()
        (root / "lib" / "x64").mkdir(parents=True)
        if (runtime / "lib" / "x64").is_dir():
            _copytree(runtime / "lib" / "x64", root / "lib" / "x64")
    if version_json is not None:
        (root / "version.json").write_text(json.dumps(version_json, indent=3))
    return root


def win_cudnn_bin() -> Path:
    """The real cuDNN 9.10.2.21 Windows DLLs (nvidia-cudnn-cu11 win_amd64 wheel): cudnn64_9.dll and 7 sub-libraries."""
    return nw.extracted(nw.WIN_CUDNN_9, nw.WIN) / "nvidia" / "cudnn" / "bin"


def windows_cudnn_installer(drive_root: Path, cuda: str = "12.9", folder: str = "v9.10", x64: bool = False,
                            with_dlls: bool = True) -> Path:
    """What NVIDIA's cuDNN 9 exe installer leaves (docs/design/windows-cudnn.md):
    `C:\\Program Files\\NVIDIA\\CUDNN\\v9.10\\{bin,include,lib}\\<cuda>\\` (x64=True: the later `bin\\<cuda>\\x64`
    level). DLLs and headers are the real cuDNN 9.10.2.21 Windows files; the .lib import libraries are synthetic
    (no wheel carries cuDNN 9's)."""
    root = drive_root / "C" / "Program Files" / "NVIDIA" / "CUDNN" / folder
    wheel = win_cudnn_bin().parent
    bindir = root / "bin" / cuda / ("x64" if x64 else "")
    libdir = root / "lib" / cuda / "x64"
    bindir.mkdir(parents=True)
    libdir.mkdir(parents=True)
    if with_dlls:
        _copytree(wheel / "bin", bindir)
    _copytree(wheel / "include", root / "include" / cuda)
    for name in ("cudnn", "cudnn_graph", "cudnn_ops", "cudnn_cnn", "cudnn_adv"):
        (libdir / f"{name}.lib").write_bytes(b"!<arch>\n(synthetic import library)\n")
    return root
