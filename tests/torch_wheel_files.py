"""The real files by which a CUDA build of torch identifies itself, cut from the real PyPI wheel.

A CUDA torch wheel is over 500 MB and needs a GPU to be useful, while `use auto` and doctor only read
`torch/version.py` and the dist-info folder. So the wheel is located with pip (the index's metadata, no download;
a `file://` index is opened in place), and only those members are extracted, once, into the test cache. Where
the index is remote only the zip directory and those members are fetched, with HTTP range requests
(nvidia_wheels.open_wheel).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nvidia_wheels as nw
from conftest import make_env

CUDA_TORCH = "torch==2.14.1"  # the PyPI default Linux wheel: '2.14.1+cu130' in torch/version.py


def torch_identity(spec: str = CUDA_TORCH) -> Path:
    """A site-packages-shaped folder with the wheel's torch/version.py and torch-*.dist-info (real bytes)."""
    dest = nw.cache_dir() / "unpacked" / ("identity-" + spec.replace("==", "-"))
    if (dest / ".complete").exists():
        return dest
    whl = nw.wheel_location(spec)
    shutil.rmtree(dest, ignore_errors=True)
    with nw.open_wheel(whl) as zf:
        for name in zf.namelist():
            top = name.split("/")[0]
            if name == "torch/version.py" or (top.endswith(".dist-info") and name.count("/") == 1
                                              and not name.endswith("/")):
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
    (dest / ".complete").write_text(str(whl))
    return dest


def cuda_torch_env(prefix: Path, spec: str = CUDA_TORCH) -> Path:
    """A conda-shaped environment whose site-packages holds the real identity files of a CUDA torch build."""
    site = prefix / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    make_env(prefix)
    src = torch_identity(spec)
    for item in src.iterdir():
        if item.name != ".complete":
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, site / item.name)
    return prefix
