"""The Python model of a switch (`activation.apply`, used by `cudaswitch run` and the smoke test) gives exactly the
environment the real `.sh` activate hook gives in bash: one pipeline, two renderings."""

import ast
import subprocess
import sys

import pytest

from cudaswitch.activation import Changes, apply
from cudaswitch.hooks import render
from cudaswitch.system import System

KEYS = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")
LINUX = System(os="linux", environ={}, python_paths=[])


def changes_for_root(root):
    return Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                   prepend={"PATH": [root + "/bin"], "LD_LIBRARY_PATH": [root + "/lib64"]})


def hook_result(tmp_path, start, changes):
    hook = tmp_path / "activate.sh"
    hook.write_bytes(render("sh", "activate", changes, "12.9.1"))
    printer = tmp_path / "printer.py"
    printer.write_text(f"import os\nprint(repr({{k: os.environ.get(k) for k in {KEYS!r}}}))\n")
    env = {k: v for k, v in start.items() if v is not None}
    script = f'. "{hook}"\n"{sys.executable}" "{printer}"\n'
    out = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], env=env, capture_output=True, text=True,
                         check=True)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("ld", [None, "", "/usr/lib/x:ROOT/lib64"])
@pytest.mark.parametrize("home", [None, "", "/usr/local/cuda-11.8"])
def test_model_equals_the_real_hook(tmp_path, ld, home):
    root = tmp_path / "cuda 12.9 (x86)" / "it's"  # the hook changes nothing when the toolkit is gone
    (root / "bin").mkdir(parents=True)
    root = str(root)
    changes = changes_for_root(root)
    ld = ld and ld.replace("ROOT", root)
    start = {"PATH": f"/usr/bin:{root}/bin:/bin", "LD_LIBRARY_PATH": ld, "CUDA_HOME": home, "CUDA_PATH": None}
    modelled = apply({k: v for k, v in start.items() if v is not None}, changes, LINUX)
    real = hook_result(tmp_path, start, changes)
    assert real["CUDA_HOME"] == root and real["PATH"].startswith(root + "/bin:")
    assert {k: modelled.get(k) for k in KEYS} == real
