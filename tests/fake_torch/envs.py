"""Environments for the smoke tests, laid out as conda environments (a `conda-meta/` folder) so `-p PREFIX` works.

* `torch_venv()`: a real virtual environment with the real CPU torch wheel (`pip install torch==2.13.0`), created
  once per machine under ~/.cache/cudaswitch-tests and reused (a lock file guards concurrent creation).
* `make_env()`: a small venv (no pip) for one test; `link_real_torch()` makes the cached real torch importable from
  it through a `.pth` file (`real_torch_env()` does both); `fake_import_failure()` puts a `torch` package there
  that fails at import with a real error text; `fake_cuda()` patches the real torch after import (version.cuda,
  is_available, device queries, kernel launches) for GPU situations this machine cannot produce.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import texts  # noqa: E402
from conftest import make_env as conda_prefix  # noqa: E402  (make_env here is the venv)

TORCH_VERSION = os.environ.get("CUDASWITCH_TEST_TORCH", "2.13.0")
CACHE = Path(os.environ.get("CUDASWITCH_TEST_CACHE", Path.home() / ".cache" / "cudaswitch-tests"))


class EnvUnavailable(Exception):
    pass


def _site(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    if not found:
        raise EnvUnavailable(f"{prefix}: no site-packages")
    return found[0]


def site_packages(prefix: Path) -> Path:
    return _site(Path(prefix))


def torch_venv() -> Path:
    """The cached real torch environment (path can be forced with CUDASWITCH_TORCH_VENV)."""
    forced = os.environ.get("CUDASWITCH_TORCH_VENV")
    if forced:
        return Path(forced)
    tag = f"torch-{TORCH_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}"
    prefix = CACHE / tag
    done = prefix / ".cudaswitch-complete"
    if done.exists():
        return prefix
    CACHE.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(CACHE / (tag + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return prefix
        if prefix.exists():
            shutil.rmtree(prefix)
        made = subprocess.run([sys.executable, "-m", "venv", str(prefix)], capture_output=True)
        if made.returncode == 0:
            py = prefix / "bin" / "python"
            cmd = [str(py), "-m", "pip", "install", "-q", f"torch=={TORCH_VERSION}"]
        else:  # no ensurepip (Debian without python3-venv): a bare venv, filled by this interpreter's pip
            if prefix.exists():
                shutil.rmtree(prefix)
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True,
                           capture_output=True)
            cmd = [sys.executable, "-m", "pip", "install", "-q", "--target", str(_site(prefix)),
                   f"torch=={TORCH_VERSION}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise EnvUnavailable(f"pip install torch=={TORCH_VERSION} failed: {r.stderr.strip()[-500:]}")
        conda_prefix(prefix)
        done.write_text(TORCH_VERSION)
    return prefix


def make_env(base: Path, name: str = "env") -> Path:
    """A fresh venv without pip (fast), made to look like a conda env."""
    prefix = Path(base) / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, capture_output=True)
    return conda_prefix(prefix)


def python_prefix(base: Path, name: str = "env") -> Path:
    """A conda-style prefix holding this interpreter as conda's python package lays it out (no pyvenv.cfg): the
    executable copied into bin/pythonX.Y (it finds its prefix from where it lies), the standard library linked into
    lib/pythonX.Y, an empty lib/pythonX.Y/site-packages, and the shared libpython linked into lib. A venv made from
    its Python with --system-site-packages reads that site-packages, as one made from a conda environment's does."""
    import sysconfig

    prefix = Path(base) / name
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    real = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib" / ver / "site-packages").mkdir(parents=True)
    shutil.copy2(real, prefix / "bin" / ver)
    os.symlink(ver, prefix / "bin" / "python")
    os.symlink(ver, prefix / "bin" / "python3")
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            os.symlink(entry, prefix / "lib" / ver / entry.name)
    for lib in Path(sys.base_prefix, "lib").glob("libpython*"):
        os.symlink(lib, prefix / "lib" / lib.name)
    site = prefix / "lib" / ver / "site-packages"
    probe = subprocess.run([str(prefix / "bin" / "python"), "-c", "import sys; print(sys.prefix); print(sys.path)"],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    lines = probe.stdout.splitlines()
    if lines[:1] != [str(prefix)] or str(site) not in "".join(lines[1:]):
        # a distribution's patched site.py (Debian: dist-packages) lays out a prefix otherwise than conda's python
        raise EnvUnavailable(f"{real} copied into {prefix}/bin does not read {site} as conda's python does: "
                             f"{probe.stdout.strip() or probe.stderr.strip()}")
    return conda_prefix(prefix)


def link_real_torch(prefix: Path) -> None:
    """Make the cached real torch importable in `prefix` (appended to sys.path by a .pth file)."""
    (_site(prefix) / "zz_real_torch.pth").write_text(str(_site(torch_venv())) + "\n")


def real_torch_env(base: Path, name: str = "env") -> Path:
    """A fresh env (make_env) whose Python imports the cached real torch: for tests that write into the env (`use`
    adds hooks), which the shared cache must not get."""
    prefix = make_env(base, name)
    link_real_torch(prefix)
    return prefix


# ---- failures at import --------------------------------------------------------------------------------------

_IMPORT_FAILURES = {
    # kind: the body of torch/__init__.py
    "win1114": "raise OSError({t.WINERROR_1114!r})\n",
    "win126": "raise OSError({t.WINERROR_126!r})\n",
    "numpy_abi": "import sys\nsys.stderr.write({t.NUMPY_ABI_STDERR!r})\nraise ImportError({t.NUMPY_ABI_ERROR!r})\n",
    # the OpenMP runtime prints the message and aborts the process (no Python exception)
    "omp15": "import os, sys\nsys.stderr.write({t.OMP_15!r})\nsys.stderr.flush()\nos.abort()\n",
    "undefined_symbol": "import os\nraise ImportError({t.UNDEFINED_SYMBOL!r}.format(site=os.path.dirname("
                        "os.path.dirname(os.path.abspath(__file__)))))\n",
    # a CPU without AVX2 running an AVX2 build: the kernel kills the process with SIGILL ("Illegal instruction")
    "sigill": "import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n",
    "hang": "import time\ntime.sleep(600)\n",
}


def fake_import_failure(prefix: Path, kind: str) -> Path:
    pkg = _site(prefix) / "torch"
    pkg.mkdir()
    body = _IMPORT_FAILURES[kind].format(t=texts)
    (pkg / "__init__.py").write_text(f"# fake torch for cudaswitch tests: {kind} (texts: tests/fake_torch/texts.py)\n"
                                     + body, encoding="utf-8")
    return pkg


# ---- GPU situations patched onto the real torch -------------------------------------------------------------

_PATCH = r'''
"""Patches the real (CPU) torch right after `import torch` for one GPU situation; see tests/fake_torch/envs.py."""
import sys
import warnings

MODE = {mode!r}
TEXTS = {texts!r}


def _patch(torch):
    torch.__version__ = "2.5.1+cu124"
    torch.version.cuda = "12.4"
    torch.backends.cudnn.version = lambda: 90100
    cuda = torch.cuda
    if MODE in ("driver_old", "no_device"):
        def is_available():
            if MODE == "driver_old":
                warnings.warn(TEXTS["DRIVER_TOO_OLD"])
            return False
        cuda.is_available = is_available
        cuda.device_count = lambda: 0
        return
    # sm120: an RTX 5090 under a build for sm_50..sm_90
    class Props(object):
        total_memory = 34190917632
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    def get_device_name(index=0):
        warnings.warn(TEXTS["SM_NOT_COMPATIBLE"])
        return "NVIDIA GeForce RTX 5090"
    cuda.get_device_name = get_device_name
    cuda.get_device_capability = lambda index=0: (12, 0)
    cuda.get_device_properties = lambda index=0: Props()
    cuda.get_arch_list = lambda: ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    cuda.synchronize = lambda *a, **k: None

    def wants_cuda(args, kwargs):
        vals = list(args) + [kwargs.get("device")]
        return any("cuda" in str(v) for v in vals if v is not None)

    def guard(fn):
        def wrapper(*args, **kwargs):
            if wants_cuda(args[1:], kwargs):  # args[0] is the tensor / module
                raise RuntimeError(TEXTS["NO_KERNEL_IMAGE"])
            return fn(*args, **kwargs)
        return wrapper
    torch.Tensor.to = guard(torch.Tensor.to)
    torch.nn.Module.to = guard(torch.nn.Module.to)
    orig_randn = torch.randn
    def randn(*args, **kwargs):
        if "cuda" in str(kwargs.get("device", "")):
            raise RuntimeError(TEXTS["NO_KERNEL_IMAGE"])
        return orig_randn(*args, **kwargs)
    torch.randn = randn


class _Finder(object):
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec("torch")
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            _patch(module)
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())
'''


def fake_cuda(prefix: Path, mode: str) -> None:
    """Real torch, with the CUDA facts of `mode` ('driver_old', 'no_device', 'sm120') patched in after import."""
    link_real_torch(prefix)
    site = _site(prefix)
    names = ("DRIVER_TOO_OLD", "SM_NOT_COMPATIBLE", "NO_KERNEL_IMAGE")
    (site / "_cudaswitch_fake_cuda.py").write_text(
        _PATCH.format(mode=mode, texts={n: getattr(texts, n) for n in names}), encoding="utf-8")
    (site / "_cudaswitch_fake_cuda.pth").write_text("import _cudaswitch_fake_cuda\n")


# ---- conda + pip ------------------------------------------------------------------------------------------------

def conda_record(prefix: Path, name: str = "pytorch", version: str = "2.13.0",
                 build: str = "cpu_py311_h1234567_0") -> Path:
    """A conda-meta record in conda's format (name, version, build, files...)."""
    path = Path(prefix) / "conda-meta" / f"{name}-{version}-{build}.json"
    site = _site(prefix).relative_to(prefix)
    path.write_text(json.dumps({
        "name": name, "version": version, "build": build, "build_number": 0, "channel":
        "https://conda.anaconda.org/conda-forge/linux-64", "subdir": "linux-64", "fn": f"{name}-{version}-{build}.conda",
        "files": [f"{site}/torch/__init__.py", f"{site}/torch-{version}.dist-info/INSTALLER"],
        "requested_spec": name}, indent=2))
    return path


def copy_dist_info(prefix: Path) -> Path:
    """The real torch wheel's dist-info (INSTALLER says pip) copied into `prefix`'s site-packages."""
    src = next(_site(torch_venv()).glob("torch-*.dist-info"))
    dst = _site(prefix) / src.name
    shutil.copytree(src, dst)
    return dst


def openmp_files(prefix: Path) -> list:
    """Two OpenMP runtimes the way a conda MKL and a pip torch bring them (Windows names, as in the OMP text)."""
    a = Path(prefix) / "Library" / "bin" / "libiomp5md.dll"
    b = _site(prefix) / "torch" / "lib" / "libiomp5md.dll"
    for p in (a, b):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"MZ")
    return [a, b]
