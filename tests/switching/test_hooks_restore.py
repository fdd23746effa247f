"""Save/restore completeness, per shell, derived from what the activate hook itself records: every variable it
saves (`_CUDASWITCH_SAVED_<X>`) comes back as it was, and every list it edits (`_CUDASWITCH_ADDED_<X>`) is written
back without our entries, both by the deactivate hook and by the prompt-time reconciler, with no record left.
Real shells for sh (bash, zsh), fish and csh (tcsh); cmd.exe has no reconciler (its deactivate hook is run by cmd
under wine in test_verify.py); PowerShell through tests/pwsh_subset.py (test_hooks_ps1.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import make_env, require_tool
from cudaswitch.switching import hookfiles
from cudaswitch.switching.activation import Changes
from cudaswitch.core.shells import SHELLS
from cudaswitch.switching.startup import hooks_dir
from shell_driver import clean_environ, real_argv

DUMP = "import os,json;print();print('__S__'+json.dumps(dict(os.environ)))"
# shell -> (argv, hook key, quoting, how a file is sourced inside a function, how the reconciler runs)
SHELL = {
    "bash": (real_argv("bash"), "sh", SHELLS["sh"].quote, "__f() {{ . {0}; }}; __f", ". {0}; __cudaswitch_reconcile"),
    "zsh": (real_argv("zsh"), "sh", SHELLS["sh"].quote, "__f() {{ . {0}; }}; __f", ". {0}; __cudaswitch_reconcile"),
    "fish": (real_argv("fish"), "fish", SHELLS["fish"].quote, "function __f; source {0}; end; __f",
             "source {0}; __cudaswitch_reconcile"),
    "tcsh": (real_argv("tcsh"), "csh", SHELLS["csh"].quote, "source {0}", "source {0}"),
}
UNSET = ("unset {0}", "set -e {0}", "unsetenv {0}")


def _run(shell, lines, env, tmp_path):
    script = tmp_path / f"d.{shell}"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run(SHELL[shell][0] + [str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(c.splitlines()[0]) for c in proc.stdout.split("__S__")[1:]]


@pytest.mark.parametrize("how", ["deactivate", "reconciler"])
@pytest.mark.parametrize("shell", sorted(SHELL))
def test_everything_the_activate_hook_saves_comes_back(shell, how, tmp_path):
    argv, key, q, source, reconcile = SHELL[shell]
    require_tool(argv[0])
    root = str(tmp_path / "cuda 12.9")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env A"))
    plain = str(make_env(tmp_path / "env C"))
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                 prepend={"PATH": [root + "/bin"], "LD_LIBRARY_PATH": [root + "/lib64"]})
    hookfiles.write_hooks(prefix, ch, "12.9")
    start = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix, CUDA_HOME="",
                          CUDA_PATH="/opt/old cuda", LD_LIBRARY_PATH="/usr/lib/x")
    act = str(hookfiles.hook_path(prefix, "activate", SHELLS[key]))
    deact = str(hookfiles.hook_path(prefix, "deactivate", SHELLS[key]))
    dump = f"{q(sys.executable)} -c {q(DUMP)}"
    lines = [source.format(q(act)), dump]
    if how == "deactivate":  # conda deactivate: the env's folder off PATH first, then the hook
        setpath = {"sh": "PATH={0}; export PATH", "fish": "set -gx PATH {0}", "csh": "setenv PATH {0}"}[key]
        lines += [setpath.format("/usr/bin:/bin" if key != "fish" else "/usr/bin /bin"),
                  {"sh": UNSET[0], "fish": UNSET[1], "csh": UNSET[2]}[key].format("CONDA_PREFIX"),
                  source.format(q(deact)), dump]
    else:  # conda#14762: conda switched to env C (no hooks) without taking our entry off; the next prompt
        setprefix = {"sh": "CONDA_PREFIX={0}; export CONDA_PREFIX", "fish": "set -gx CONDA_PREFIX {0}",
                     "csh": "setenv CONDA_PREFIX {0}"}[key]
        rec = str(hooks_dir() / SHELLS[key].reconciler)
        lines += [setprefix.format(q(plain)), reconcile.format(q(rec)), dump]
    active, back = _run(shell, lines, start, tmp_path)
    saved = sorted(k[len("_CUDASWITCH_SAVED_"):] for k in active if k.startswith("_CUDASWITCH_SAVED_"))
    edited = sorted(k[len("_CUDASWITCH_ADDED_"):] for k in active if k.startswith("_CUDASWITCH_ADDED_"))
    assert saved == ["CUDA_HOME", "CUDA_PATH"] and edited == ["LD_LIBRARY_PATH", "PATH"], active
    for var in saved:
        assert back.get(var) == start.get(var), (how, var, back.get(var))
    for var in edited:
        want = start[var] if how == "reconciler" or var != "PATH" else "/usr/bin:/bin"
        assert back.get(var) == want, (how, var, back.get(var))
    assert not [k for k in back if k.startswith("_CUDASWITCH_")], back
