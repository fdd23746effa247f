"""The real files by which a CUDA build of torch identifies itself, cut from the real PyPI wheel.

A CUDA torch wheel is over 500 MB and needs a GPU to be useful, while `use auto` and doctor only read
`torch/version.py` and the dist-info folder. So the wheel is located with pip (the index's metadata, no download;
a `file://` index is opened in place), and only those members are extracted, once, into the test cache. Where
the index is remote only the zip directory and those members are fetched, with HTTP range requests.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import nvidia_wheels as nw

CUDA_TORCH = "torch==2.14.1"  # the PyPI default Linux wheel: '2.14.1+cu130' in torch/version.py


def _wheel_location(spec: str) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = dict(os.environ, PIP_CONSTRAINT="/dev/null")  # a site-wide constraint must not hide the pinned torch
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
                        "--no-deps", "--ignore-installed", "--only-binary=:all:", "--platform",
                        "manylinux_2_28_x86_64", "--python-version", "3.11", "--target", str(Path(tmp) / "t"), spec],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        url = json.loads(report.read_text())["install"][0]["download_info"]["url"]
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    return url


class _HttpRange(io.RawIOBase):
    """A remote file read with HTTP Range requests, so zipfile reads the central directory and two small members
    instead of downloading the whole wheel."""

    def __init__(self, url: str):
        self.url, self.pos = url, 0
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as r:
            self.size = int(r.headers["Content-Length"])

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=0):
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, b):
        if self.pos >= self.size or not len(b):
            return 0
        end = min(self.pos + len(b), self.size) - 1
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(req, timeout=120) as r:
            data = r.read()
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)


def torch_identity(spec: str = CUDA_TORCH) -> Path:
    """A site-packages-shaped folder with the wheel's torch/version.py and torch-*.dist-info (real bytes)."""
    dest = nw.cache_dir() / "unpacked" / ("identity-" + spec.replace("==", "-"))
    if (dest / ".complete").exists():
        return dest
    whl = _wheel_location(spec)
    shutil.rmtree(dest, ignore_errors=True)
    src = whl if isinstance(whl, Path) else io.BufferedReader(_HttpRange(whl), buffer_size=1 << 18)
    with zipfile.ZipFile(src) as zf:
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
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "history").write_text("")
    src = torch_identity(spec)
    for item in src.iterdir():
        if item.name != ".complete":
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, site / item.name)
    return prefix
