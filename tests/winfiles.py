"""Shared pieces of the Windows tests on NVIDIA's real files (tests/core/test_pe_real.py,
tests/discovery/test_windows_discovery_real.py, tests/cudnn/test_windows_cudnn_real.py,
tests/cudnn/test_windows_load_check.py, tests/switching/test_windows_switching_real.py): C: drives built from the
real win_amd64 wheels, a System that refuses to start a process, the CLI on such a drive, and the mingw-built
loader that does the Windows cuDNN load check under wine.

Real and synthetic: every exe, header and cuDNN 8 import library, and every DLL a test loads or reads, is NVIDIA's
own file (tests/nvidia_wheels.py, tests/cudatrees.py say from which wheel). Synthetic: cuDNN 9's .lib import
libraries (installer layout, 9.10 zip; no wheel carries them), and the five cuDNN 8 sub-library DLLs cudnnGetVersion
never opens (the wheels have them, at 53-351 MB compressed each; the 8.9 zips hold small stand-ins with the real
names).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

import cudatrees
import nvidia_wheels as nw
from conftest import make_env, require_tool, run_cli
from cudaswitch.core.system import System

HERE = Path(__file__).parent
INSTALLER = r"C:\Program Files\NVIDIA\CUDNN\v9.10"


def no_process(*args, **kw):
    raise AssertionError(f"discovery spawned a process: {args}")


def win_system(root, path="", run=no_process, python_paths=(), **environ):
    env = {"PATH": path, "CUDASWITCH_CONFIG": str(root / "none.yaml"), **environ}
    return System(os="windows", environ=env, root=root, run=run, python_paths=list(python_paths))


def real_drive(root: Path) -> Path:
    """A C: drive with CUDA 11.8, 12.9 and 13.0 from the real wheels, and cuDNN 9.10 from NVIDIA's exe installer."""
    for v in ("11.8", "12.9", "13.0"):
        cudatrees.windows_real_toolkit(root, v)
    cudatrees.windows_cudnn_installer(root, cuda="12.9", x64=True)
    return root


def cudnn_8_into_toolkit(root: Path, spec: str, load: bool = False, parts=("bin", "include", "lib/x64")) -> Path:
    """The real cuDNN 8.9 members copied into a toolkit's bin, include and lib\\x64 (nvidia_wheels.win_cudnn_8), as
    NVIDIA's 8.x guide told users to do."""
    files = nw.win_cudnn_8(spec, load=load)
    for part in parts:
        cudatrees._copytree(files / part, root / part)
    return root


def real_drive_cudnn_8(root: Path) -> Path:
    """C: with CUDA 11.8 + cuDNN 8.9.5 and CUDA 12.9 + cuDNN 8.9.7 (real files, copied into the toolkits), CUDA 13.0,
    and cuDNN 9.10 from NVIDIA's exe installer."""
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(root, "11.8"), nw.WIN_CUDNN_8_CU11)
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(root, "12.9"), nw.WIN_CUDNN_8_CU12)
    cudatrees.windows_real_toolkit(root, "13.0")
    cudatrees.windows_cudnn_installer(root, cuda="12.9", x64=True)
    return root


def win_cli(args, drive, path, clean_env):
    """The CLI on `drive` as a Windows host with `path` as PATH; never a traceback."""
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows", CONDA_OVERRIDE_CUDA="12.9")
    env["PATH"] = path
    r = run_cli(args, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def doctor_codes(drive, path, clean_env):
    r = win_cli(["doctor", "--json"], drive, path, clean_env)
    return {f["code"]: f for f in json.loads(r.stdout)["findings"]}


def windows_env(drive: Path, clean_env) -> dict:
    """The real CUDA 12.9 files and an empty conda env C:\\envs\\torch on `drive`, switched to 12.9 with `use`, -p
    given as the Windows path; returns the CLI environment."""
    cudatrees.windows_real_toolkit(drive, "12.9")
    make_env(drive / "C" / "envs" / "torch", history=None)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")
    r = run_cli(["use", "12.9", "-p", r"C:\envs\torch"], env=env)
    assert r.returncode == 0, r.stderr
    return env


def drive_snapshot(drive: Path) -> dict:
    return {str(p.relative_to(drive)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(drive.rglob("*"))}


# ---- wine and the mingw-built loader ----------------------------------------------------------------------------

def z(local) -> str:
    return "Z:" + str(local).replace("/", "\\")


def wine_loader():
    """The mingw-built loader (cached by source hash) and a wine environment with the tests' cached prefix."""
    cc = require_tool("x86_64-w64-mingw32-gcc")
    wine = require_tool("wine")
    src = HERE / "winloader" / "cudnn_loader.c"
    exe = nw.cache_dir() / f"cudnn_loader-{hashlib.sha256(src.read_bytes()).hexdigest()[:12]}.exe"
    if not exe.exists():
        subprocess.run([cc, "-municode", "-O2", "-o", str(exe), str(src)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WINE")}
    env.update(WINEDEBUG="-all", WINEPREFIX=str(nw.cache_dir() / "wineprefix"), WINEDLLOVERRIDES="mscoree,mshtml=")
    return wine, exe, env


# wine's launcher falls back to start.exe when it cannot create the process it was asked to run; start.exe then
# prints this and exits 1 without anything of the test having run. CI saw it once under load ("ShellExecuteEx
# failed: Internal error", cmd never started). It says nothing about the files under test, so such a start -- and
# only such a start -- is tried again, at most twice.
LAUNCH_FAILED = "Application could not be started, or no application associated with the specified file."


def run_wine(argv, env, *, timeout=300, tries=3, merged=True) -> subprocess.CompletedProcess:
    """`wine argv...` with stdin on /dev/null, decoded as latin-1. merged: stdout and stderr together in .stdout,
    through a file (with a pipe wine's console takes seconds to close: measured 2.6 s against 0.2 s per run).
    Otherwise both are piped, as a Python child's would be."""
    with tempfile.TemporaryDirectory(prefix="wine-out-") as tmp:
        out = Path(tmp) / "out"
        for _ in range(tries):
            if merged:
                with open(out, "wb") as fh:
                    rc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                        timeout=timeout, check=False).returncode
                r = subprocess.CompletedProcess(argv, rc, out.read_bytes().decode("latin-1"), "")
            else:
                r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                                   check=False, encoding="latin-1")
            if r.returncode == 0 or LAUNCH_FAILED not in r.stdout + r.stderr:
                break
        return r


def run_loader(loader, dll, bindir, winepath=None, timeout=300):
    wine, exe, env = loader
    env = dict(env)
    if winepath is not None:
        env["WINEPATH"] = winepath
    return run_wine([wine, str(exe), z(dll), z(bindir)], env, timeout=timeout, merged=False)
