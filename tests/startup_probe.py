"""What a Python of a switched environment sees, printed as one JSON line, and the environment of a process where
no conda environment is active: for the tests of the Python startup file (tests/switching/test_python_hook.py,
test_jupyter_kernel.py)."""

from __future__ import annotations

import os

SYSTEM_CUDA_BIN = "/usr/local/cuda-13.0/bin"  # the machine's own toolkit, first on PATH (missing: still a folder name)

SHOW = ("import json, os, shutil, subprocess, sys\n"
        "nvcc = shutil.which('nvcc')\n"
        "release = subprocess.run([nvcc, '--version'], capture_output=True, text=True).stdout if nvcc else ''\n"
        "print(json.dumps({'exe': sys.executable, 'CUDA_HOME': os.environ.get('CUDA_HOME'),\n"
        "  'CUDA_PATH': os.environ.get('CUDA_PATH'), 'PATH': os.environ.get('PATH'),\n"
        "  'LD_LIBRARY_PATH': os.environ.get('LD_LIBRARY_PATH'), 'nvcc': nvcc, 'ptxas': shutil.which('ptxas'),\n"
        "  'release': [l for l in release.splitlines() if 'release' in l],\n"
        "  'cudaswitch_imported': any(m.split('.')[0] == 'cudaswitch' for m in sys.modules)}))\n")


def outside(extra=None):
    """os.environ as a process outside any conda environment has it (a login PATH with the system toolkit first)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA", "CONDA", "_CONDA", "_CUDASWITCH", "_CE_", "LD_LIBRARY", "PYTHON", "JUPYTER"))}
    env["PATH"] = os.pathsep.join([SYSTEM_CUDA_BIN, "/usr/bin", "/bin"])
    env.update(extra or {})
    return env
