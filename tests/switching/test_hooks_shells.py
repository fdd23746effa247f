"""The .sh hook under a process tracer, under py-rattler's activator, and with property-based toolkit paths;
the missing-toolkit warning in every shell."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import make_env, require_tool
from cudaswitch.switching import hookfiles as hooks
from cudaswitch.core.shells import quote_sh
from shell_driver import SHELLS as REAL_SHELLS, Toolkit, clean_environ, hook_ext, source_cmd

DUMP = ("import os;print('__STATE__', repr({k: os.environ.get(k) for k in "
        "('PATH','CUDA_HOME','CUDA_PATH','LD_LIBRARY_PATH')}), repr(sorted(k for k in os.environ "
        "if k.startswith('_CUDASWITCH_'))))")


def _env_with_hooks(tmp_path, root, ld=True, name="env"):
    tk = Toolkit(str(root), ld=ld)
    os.makedirs(tk.bin, exist_ok=True)
    prefix = make_env(tmp_path / name)
    hooks.write_hooks(str(prefix), tk.changes(), "11.8")
    return prefix, tk


def _states(text):
    return [(ast.literal_eval(a), ast.literal_eval(b)) for a, b in
            re.findall(r"^__STATE__ (\{.*\}) (\[.*\])$", text, re.M)]


@pytest.mark.parametrize("shell", ["bash", "dash", "zsh"])
def test_sh_hook_spawns_no_process(shell, tmp_path):
    """Sourcing activate + deactivate starts no process: one execve (the shell itself), no fork/clone."""
    strace = require_tool("strace")
    exe = require_tool(shell)
    prefix, _ = _env_with_hooks(tmp_path, tmp_path / "cuda 11.8 (x86) $x")
    d = prefix / "etc" / "conda"
    script = tmp_path / "s.sh"
    script.write_text(f". {quote_sh(str(d / 'activate.d' / 'cudaswitch.sh'))}\n"
                      f". {quote_sh(str(d / 'activate.d' / 'cudaswitch.sh'))}\n"
                      f". {quote_sh(str(d / 'deactivate.d' / 'cudaswitch.sh'))}\n")
    log = tmp_path / "trace"
    proc = subprocess.run([strace, "-f", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log), exe,
                           str(script)], env=clean_environ(PATH="/usr/bin:/bin"), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    calls = [ln for ln in log.read_text().splitlines() if re.search(r"\b(execve|clone3?|v?fork)\(", ln)]
    assert len(calls) == 1 and "execve(" in calls[0], calls


RATTLER_SHELLS = ("bash", "zsh", "fish")


@pytest.mark.parametrize("preset", [False, True], ids=["no-cuda", "nvidia-installer"])
@pytest.mark.parametrize("shell", sorted(RATTLER_SHELLS))
def test_activation_by_rattler(shell, preset, tmp_path):
    """An independent activator (py-rattler) sources our activate.d; it has no deactivation, so the test sources
    deactivate.d itself, as rattler would (ascending, CONDA_PREFIX already restored). `preset`: the toolkit's bin
    was already at the end of PATH (NVIDIA's installer), and stays there."""
    rattler = pytest.importorskip("rattler.shell")
    exe = require_tool(shell)
    q = REAL_SHELLS[shell][2]
    prefix, tk = _env_with_hooks(tmp_path, tmp_path / "CUDA v11.8 (x86) & 'q' 环境")
    (prefix / "bin").mkdir()
    base_path = ["/usr/bin", "/bin"] + ([tk.bin] if preset else [])
    av = rattler.ActivationVariables(current_path=base_path,
                                     path_modification_behavior=rattler.PathModificationBehavior.Replace)
    result = rattler.activate(prefix, av, getattr(rattler.Shell, shell))
    script = tmp_path / f"rattler.{shell}"
    dump = f"{q(sys.executable)} -c {q(DUMP)}"
    deact = prefix / "etc" / "conda" / "deactivate.d" / f"cudaswitch.{hook_ext(shell)}"
    # rattler's deactivation (conda/rattler PR #1278) restores CONDA_PREFIX *before* deactivate.d, PATH untouched
    unset = "set -e CONDA_PREFIX" if shell == "fish" else "unset CONDA_PREFIX"
    script.write_text(f"{dump}\n{result.script}\n{dump}\n{unset}\n{source_cmd(shell)} "
                      f"{q(str(deact))}\n{dump}\n", encoding="utf-8")
    argv = [exe] + REAL_SHELLS[shell][1][1:]
    env = clean_environ(PATH=":".join(base_path), CUDA_HOME="/old")
    proc = subprocess.run(argv + [str(script)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (before, _), (active, recs), (after, left) = _states(proc.stdout)
    assert active["CUDA_HOME"] == active["CUDA_PATH"] == tk.root
    assert active["PATH"].split(":")[:2] == [tk.bin, str(prefix / "bin")]
    assert active["PATH"].split(":").count(tk.bin) == 1 + preset
    assert active["LD_LIBRARY_PATH"] == tk.lib
    assert "_CUDASWITCH_ADDED_PATH" in recs
    assert after["CUDA_HOME"] == "/old" and after["CUDA_PATH"] is None and after["LD_LIBRARY_PATH"] is None
    assert after["PATH"].split(":") == [str(prefix / "bin")] + base_path and left == []


# Any file name a POSIX file system takes, except '/', NUL, and ':' (the PATH separator, refused by `use`).
NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00:\n\r"), min_size=1,
                max_size=10).filter(lambda s: s not in (".", ".."))


@pytest.mark.parametrize("shell", ["bash", "dash", "zsh"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, old=st.one_of(st.none(), st.just(""), NAMES))
def test_any_toolkit_path(shell, tmp_path_factory, name, old):
    """Property: whatever the toolkit folder is called, activate gives exactly that value, twice is the same as
    once, and deactivate restores CUDA_HOME (unset, empty or a value) and PATH exactly; nothing is executed."""
    exe = require_tool(shell)
    tmp = tmp_path_factory.mktemp("prop")
    prefix, tk = _env_with_hooks(tmp, tmp / name)
    d = prefix / "etc" / "conda"
    dump = f"{quote_sh(sys.executable)} -c {quote_sh(DUMP)}"
    act, deact = quote_sh(str(d / "activate.d" / "cudaswitch.sh")), quote_sh(str(d / "deactivate.d" / "cudaswitch.sh"))
    script = tmp / "p.sh"
    script.write_text(f"{dump}\n. {act}\n{dump}\n. {act}\n{dump}\n. {deact}\n{dump}\n", encoding="utf-8")
    env = clean_environ(PATH="/usr/bin:/bin", CUDA_HOME=old)
    proc = subprocess.run([exe, str(script)], env=env, capture_output=True, cwd=tmp)
    out = proc.stdout.decode("utf-8", "surrogateescape")
    assert proc.returncode == 0, out + proc.stderr.decode("utf-8", "replace")
    (s0, _), (s1, _), (s2, _), (s3, left) = _states(out)
    assert s1["CUDA_HOME"] == tk.root and s1["PATH"] == f"{tk.bin}:/usr/bin:/bin" and s1["LD_LIBRARY_PATH"] == tk.lib
    assert s2 == s1
    assert s3 == s0 and left == []


@pytest.mark.parametrize("shell", sorted(REAL_SHELLS))
def test_missing_toolkit_warns_and_changes_nothing(shell, tmp_path):
    exe = require_tool(shell)
    prefix, tk = _env_with_hooks(tmp_path, tmp_path / "gone cuda")
    os.rmdir(tk.bin)
    os.rmdir(tk.root)
    ext, q, src = hook_ext(shell), REAL_SHELLS[shell][2], source_cmd(shell)
    dump = f"{q(sys.executable)} -c {q(DUMP)}"
    hook = prefix / "etc" / "conda" / "activate.d" / f"cudaswitch.{ext}"
    script = tmp_path / f"m.{ext}"
    script.write_text(f"{dump}\n{src} {q(str(hook))}\n{dump}\necho after\n", encoding="utf-8")
    argv = [exe] + REAL_SHELLS[shell][1][1:]
    proc = subprocess.run(argv + [str(script)], env=clean_environ(PATH="/usr/bin:/bin"), capture_output=True, text=True)
    assert proc.returncode == 0 and "after" in proc.stdout, proc.stdout + proc.stderr
    (s0, _), (s1, left) = _states(proc.stdout)
    assert s1 == s0 and left == []
    warn = [ln for ln in proc.stderr.splitlines() if "cudaswitch: warning" in ln]
    assert len(warn) == 1 and "gone from" in warn[0] and tk.root in warn[0]
