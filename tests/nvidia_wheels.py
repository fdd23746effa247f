"""Real NVIDIA files for the tests: PyPI wheels fetched once with pip into a cache folder, or, where a wheel is
large and the tests need a few of its members, only those members (`members()`: HTTP range requests).

The cache lives in $CUDASWITCH_TEST_CACHE (default ~/.cache/cudaswitch-tests) so CI and developers download each
wheel once. A failed download is a test error, never a skip: CI must exercise the real files.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Iterable, Union
from urllib.parse import unquote, urlparse

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
# cuDNN 8 for Windows exists on PyPI only as these 711-719 MB wheels (7 DLLs, 9 headers, 14 real import
# libraries); the tests take only the members they need from them (see WIN_CUDNN_8_MEMBERS).
WIN_CUDNN_8_CU11 = "nvidia-cudnn-cu11==8.9.5.29"
WIN_CUDNN_8_CU12 = "nvidia-cudnn-cu12==8.9.7.29"
WIN_CUDNN_8_SUBLIBS = ["cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_adv_infer",
                       "cudnn_adv_train"]
WIN_CUDNN_8_HEADERS = ["cudnn.h", "cudnn_adv_infer.h", "cudnn_adv_train.h", "cudnn_backend.h", "cudnn_cnn_infer.h",
                       "cudnn_cnn_train.h", "cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_version.h"]
WIN = "win_amd64"

# Microsoft's VC++ runtime DLLs (msvcp140.dll, vcruntime140.dll, vcruntime140_1.dll, ...) as Microsoft built them
# (the 14.44.35112 wheel's DLLs carry FileVersion 14.44.35211.0),
# repackaged on PyPI as the msvc-runtime wheels (2 MB each): one older than the 14.40 torch 2.9 needs, one newer.
# data/ holds msvcp140.dll without vcruntime140.dll, data/Scripts/ the whole set.
MSVC_RUNTIME_OLD = "msvc-runtime==14.34.31931"
MSVC_RUNTIME_NEW = "msvc-runtime==14.44.35112"


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


def msvc_runtime(spec: str) -> Path:
    """The folder of the msvc-runtime wheel `spec` holding Microsoft's DLLs: msvcp140.dll and its siblings, with
    Scripts/ beside them holding the same plus vcruntime140.dll and vcruntime140_1.dll."""
    name, version = spec.split("==")
    return extracted(spec, WIN) / f"{name.replace('-', '_')}-{version}.data" / "data"


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


# ---- single members of a large wheel, with HTTP range requests ----------------------------------------------------

def wheel_location(spec: str, platform: str = "linux") -> Union[Path, str]:
    """Where the index keeps the wheel for `spec`: a local Path for a `file://` index, else its URL. pip reads the
    index's metadata only (no download)."""
    plat = "win_amd64" if platform == WIN else "manylinux_2_28_x86_64"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = dict(os.environ, PIP_CONSTRAINT="/dev/null")  # a site-wide constraint must not hide the pinned spec
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
                        "--no-deps", "--ignore-installed", "--only-binary=:all:", "--platform", plat,
                        "--python-version", "3.11", "--target", str(Path(tmp) / "t"), spec],
                       check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = json.loads(report.read_text())["install"][0]["download_info"]["url"]
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    return url


INDEX = "https://pypi.org/simple"


def index_url(spec: str, platform: str = "linux") -> str:
    """The wheel's URL from the package index's JSON listing (PEP 691, what pip reads), without downloading it.
    `wheel_location` cannot serve here: for a wheel the index publishes no separate metadata for (NVIDIA's cuDNN
    8.9 wheels), `pip install --dry-run` downloads the whole 700 MB wheel to read it."""
    name, version = spec.split("==")
    req = urllib.request.Request(f"{os.environ.get('CUDASWITCH_TEST_INDEX', INDEX)}/{name}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.load(r)["files"]
    stem = name.replace("-", "_") + "-" + version + "-"
    tag = "win_amd64" if platform == WIN else "manylinux"
    hits = [f["url"] for f in files if f["filename"].startswith(stem) and tag in f["filename"]
            and f["filename"].endswith(".whl")]
    assert hits, f"the index lists no {tag} wheel for {spec}"
    return hits[0]


class HttpRange(io.RawIOBase):
    """A remote file read with HTTP Range requests, so zipfile reads the central directory and the wanted members
    instead of downloading the whole wheel. `fetched` counts the bytes that came over the network."""

    def __init__(self, url: str):
        self.url, self.pos, self.fetched = url, 0, 0
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
        for attempt in range(3):  # a dropped connection on a CI machine is retried, not a failed test run
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    if r.status != 206:
                        raise OSError(f"{self.url}: the server ignored the byte range (HTTP {r.status})")
                    data = r.read()
                break
            except (OSError, http.client.HTTPException):
                if attempt == 2:
                    raise
                time.sleep(2 * (attempt + 1))
        b[:len(data)] = data
        self.pos += len(data)
        self.fetched += len(data)
        return len(data)


def open_wheel(location: Union[Path, str]) -> zipfile.ZipFile:
    if isinstance(location, Path):
        return zipfile.ZipFile(location)
    # small reads are buffered by 256 KB (the zip directory, small members); large ones pass straight through
    return zipfile.ZipFile(io.BufferedReader(HttpRange(location), buffer_size=1 << 18))


def members(spec: str, names: Iterable[str], platform: str = "linux") -> Path:
    """A folder in the cache holding only `names` (paths inside the wheel, real bytes), fetched once. A wheel
    already in the cache (nw.wheel) is read in place; otherwise only the index listing, the zip directory and those
    members travel."""
    names = sorted(set(names))
    name, version = spec.split("==")
    dest = cache_dir() / "members" / f"{name}-{version}-{platform}"
    missing = [n for n in names if not (dest / n).is_file()]
    if not missing:
        return dest
    stem = name.replace("-", "_") + "-" + version + "-"
    local = sorted((cache_dir() / "wheels").glob(stem + ("*win_amd64" if platform == WIN else "*manylinux") + "*.whl"))
    with open_wheel(local[0] if local else index_url(spec, platform)) as zf:
        for n in missing:
            target = dest / n
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".partial")
            with zf.open(n) as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out, 16 << 20)  # one range request per 16 MB: few round trips
            os.replace(tmp, target)
    return dest


def win_cudnn_8(spec: str, load: bool = False) -> Path:
    r"""The `nvidia/cudnn` folder of a cuDNN 8.9 win_amd64 wheel holding the real members the tests need: bin\cudnn64_8.dll
    (version resource; the load check), the 9 headers (cudnn_version.h), the 14 import libraries of lib\x64 (an
    archive's third folder) and the wheel's License.txt (the archive's LICENSE): about 1 MB over the network.

    load=True adds bin\cudnn_ops_infer64_8.dll, 61 MB compressed (90 MB), the one sub-library cudnn64_8.dll loads
    before cudnnGetVersion answers. Tried under wine with the mingw loader: with cudnn64_8.dll alone the call
    fails with "Could not locate cudnn_ops_infer64_8.dll"; with that one DLL next to it it returns 8907, and none
    of the five other sub-libraries (53-351 MB compressed each) is opened. Only the wine load check asks for it,
    for one version (8.9.7.29), so a fresh machine downloads about 63 MB for all the cuDNN 8 tests instead of
    1.4 GB for the two whole wheels."""
    name, version = spec.split("==")
    libs = ["cudnn", "cudnn64_8"] + [f"{s}{suffix}" for s in WIN_CUDNN_8_SUBLIBS for suffix in ("", "64_8")]
    want = ["nvidia/cudnn/bin/cudnn64_8.dll"] + [f"nvidia/cudnn/include/{h}" for h in WIN_CUDNN_8_HEADERS] + \
        [f"nvidia/cudnn/lib/x64/{lib}.lib" for lib in libs] + \
        [f"{name.replace('-', '_')}-{version}.dist-info/License.txt"]
    if load:
        want.append("nvidia/cudnn/bin/cudnn_ops_infer64_8.dll")
    return members(spec, want, WIN) / "nvidia" / "cudnn"
