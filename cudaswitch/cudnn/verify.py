"""After the commit: the installed header read back and the installed main library loaded in a child process."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from cudaswitch.core import trust
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.system import System
from cudaswitch.cudnn.transaction import Prepared


_LOAD = ("import ctypes, sys\n"
         "lib = ctypes.CDLL(sys.argv[1])\n"
         "lib.cudnnGetVersion.restype = ctypes.c_size_t\n"
         "print(lib.cudnnGetVersion())\n")


def expected_number(version: str) -> int:
    """CUDNN_VERSION as cudnnGetVersion() returns it (*10000 from 9.0, *1000 before: sources.csv S75, S77)."""
    major, minor, patch = (int(x) for x in (version.split(".") + ["0", "0"])[:3])
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


_LOAD_WINDOWS = ("import ctypes, os, sys\n"
                 "os.add_dll_directory(sys.argv[2])\n"
                 "lib = ctypes.CDLL(sys.argv[1])\n"
                 "lib.cudnnGetVersion.restype = ctypes.c_size_t\n"
                 "print(lib.cudnnGetVersion())\n")


def host_os() -> str:
    return "windows" if sys.platform == "win32" else ("linux" if sys.platform.startswith("linux") else sys.platform)


def windows_load_check(dll: Path, bindir: Path, environ: Dict[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """Command and environment of the Windows load check. cudnn64_9.dll (and cudnn64_8.dll) import only KERNEL32
    and load their sub-libraries (cudnn_graph64_9.dll, cudnn_ops_infer64_8.dll) later with a bare-name
    LoadLibrary, which searches PATH but not the folders os.add_dll_directory adds; so the child gets the DLL folder
    first on PATH, as the user's activated environment has it. os.add_dll_directory still covers the main DLL's
    own imports (docs/design/windows-cudnn.md)."""
    env = dict(environ)
    key = next((k for k in env if k.upper() == "PATH"), "PATH")
    env[key] = str(bindir) + (";" + env[key] if env.get(key) else "")
    return [sys.executable, "-I", "-c", _LOAD_WINDOWS, str(dll), str(bindir)], env


def verify(prep: Prepared, system: System) -> dict:
    """Read the installed header back, then load the installed main library in a subprocess (it can abort the
    process when a sub-library is missing) and call cudnnGetVersion(): on Linux with the library folder on
    LD_LIBRARY_PATH (libcudnn.so.9 loads libcudnn_graph.so.9 by name), on Windows with the DLL folder first on PATH
    (see windows_load_check). Where the target's OS is not the host's, only the header is checked: `checked` says
    "header only" and `ok` stays false, since nothing proved the library loads. The check runs isolated (-I):
    nothing from the caller's working folder, PYTHONPATH or user site is imported (as root, a ctypes.py in the
    folder sudo was run from would run as root)."""
    target = prep.target
    major = prep.archive.cudnn_major
    result: dict = {"header": target.existing_cudnn(), "expected": prep.archive.version, "library": None,
                    "library_error": None, "checked": "header only", "ok": False}
    header_ok = result["header"] == prep.archive.version
    host = host_os()
    if target.os != host:
        result["library_error"] = M("not loaded (a {os} library cannot be loaded on {host})",
                                    os=target.os.capitalize(), host=host)
        return result
    result["checked"] = "header and library"
    env = dict(system.environ)
    if target.os == "windows":
        bindir = target.local_dirs["bin"]
        args, env = windows_load_check(bindir / f"cudnn64_{major}.dll", bindir, env)
    else:
        # as root, libcudnn's own dependencies and the Python child's are searched only where nobody else wrote
        env, _dropped = trust.trusted_search_folders(env)
        libdir = target.local_dirs["lib"]
        env["LD_LIBRARY_PATH"] = str(libdir) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        args = [sys.executable, "-I", "-c", _LOAD, str(libdir / f"libcudnn.so.{major}")]
    try:
        # -I and the root folder: nothing of the working folder sudo ran in is imported or even listed
        proc = system.run(args, timeout=120, env=env, cwd=os.path.abspath(os.sep))
    except Exception as exc:  # timeouts, OSError
        result["library_error"] = M("could not run the load check ({error}: {why})", error=type(exc).__name__,
                                    why=str(exc))
        return result
    out = (proc.stdout or "").strip().splitlines()
    if proc.returncode == 0 and out and out[-1].isdigit():
        result["library"] = int(out[-1])
        result["ok"] = header_ok and result["library"] == expected_number(prep.archive.version)
    else:
        lines = [x.strip() for x in ((proc.stderr or "") + "\n" + (proc.stdout or "")).splitlines() if x.strip()]
        # cuDNN names the sub-library it could not find before the generic last line ("Invalid handle...")
        why = next((x for x in lines if "could not locate" in x.lower()), lines[-1] if lines else None)
        result["library_error"] = M("load failed: {why}", why=why[-300:]) if why else \
            M("exit status {code}", code=proc.returncode)
        if target.os != "windows":  # cuDNN's Windows loader names the DLL it missed itself
            missing = missing_sublibraries(target.local_dirs["lib"], major)
            if missing:
                result["missing"] = missing
                result["library_error"] = M("{error}; {names} missing from {folder} (not in the archive)",
                                            error=result["library_error"], names=Listed(missing),
                                            folder=target.dirs["lib"])
    return result


# The libraries libcudnn.so.<major> loads by name when called (NVIDIA's cuDNN 8 and 9 Linux archives ship them all):
# cudnnGetVersion itself comes from libcudnn_graph.so.9 in cuDNN 9.
_SUBLIBRARIES = {9: ("graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"),
                 8: ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train")}


def missing_sublibraries(libdir: Path, major: int) -> List[str]:
    """The sub-libraries of cuDNN `major` absent from `libdir`, by their load names (libcudnn_graph.so.9)."""
    return [name for name in (f"libcudnn_{s}.so.{major}" for s in _SUBLIBRARIES.get(major, ()))
            if not os.path.lexists(libdir / name)]
