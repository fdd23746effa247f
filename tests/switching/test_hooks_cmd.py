"""cmd.exe hooks run by a real cmd (wine's `cmd /d /c`), through the same transitions as the other shells.

wine cannot start the Linux conda model between steps, so the model's steps are rendered into the batch driver
ahead of time: conda's own variables are tracked here (they do not depend on hooks), and the PATH conda
computes before the hooks run is rendered as a snapshot plus `%_SIM_P:;OLD;=;NEW;%` at the point conda would
export it (docs/design/activation.md, conda-path-first). States are read back with cmd's `set` (every cmd
variable is in the environment; empty and unset are the same thing in cmd, HC10).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import conda_model
import nvidia_wheels
import winfiles
from cudaswitch.switching import hookfiles as hooks
from cudaswitch.core import shells
from conftest import make_env, require_tool
from shell_driver import Toolkit, World, clean_environ, problems
from test_hooks_transitions import SCENARIOS

SYSTEM_PATH = r"C:\windows\system32;C:\windows"


def z(local) -> str:
    """wine's Z: drive is the Linux root."""
    return "Z:" + str(local).replace("/", "\\")


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    exe = require_tool("wine")
    prefix = nvidia_wheels.cache_dir() / "wineprefix"  # cached: the first wine start builds it (slow)
    # mscoree/mshtml disabled: a fresh prefix would otherwise offer to install Mono and Gecko (CI has no display)
    env = clean_environ(WINEDEBUG="-all", WINEPREFIX=str(prefix), WINEDLLOVERRIDES="mscoree,mshtml=")
    # Keep this prefix's wineserver up between the tests' cmd runs (each run would otherwise start it again);
    # it exits by itself 30 s after the last one.
    server = shutil.which("wineserver")
    if server:
        subprocess.run([server, "-p30"], env=env, check=False)
    return exe, env


@pytest.fixture(scope="module")
def winworld(tmp_path_factory):
    w = World(tmp_path_factory.mktemp("winworld"))
    tk = w.root / "Program Files (x86)" / "NV & Co" / "CUDA"
    for v in ("v11.3", "v11.8"):
        for sub in ("bin", "libnvvp"):
            (tk / v / sub).mkdir(parents=True)
    w.add_env("base", "base", None, spelled=z)
    # conda cannot activate a prefix with ^ % = ! for cmd (docs/design/activation.md, HC9); spaces, (x86), & it can.
    w.add_env("A", "env A (x86) & co", Toolkit(z(tk / "v11.3"), windows=True), spelled=z)
    w.add_env("B", "env B (x86) & co", Toolkit(z(tk / "v11.8"), windows=True), spelled=z)
    w.add_env("C", "env C plain (x86)", None, spelled=z)
    return w


def wine_cmd(wine, script: Path, *flags: str):
    """(exit code, output) of `wine cmd /d /c script`."""
    exe, env = wine
    r = winfiles.run_wine([exe, "cmd", "/d", *flags, "/c", z(script)], env, timeout=120)
    return r.returncode, r.stdout


def _bat_ops(ops) -> list:
    lines = ['@set "_SIM_P=;%PATH%;"']  # conda computes PATH before any hook of this step runs
    for op in ops:
        if op[0] == "source":
            lines.append(f'@call "{op[1]}"')
        elif op[0] == "set":
            lines.append(f'@set "{op[1]}={op[2]}"')
        elif op[0] == "unset":
            lines.append(f'@set "{op[1]}="')
        else:
            kind, old, new = op[1]
            if kind == "prepend":
                lines.append(f'@set "PATH={";".join(new)};%_SIM_P:~1,-1%"')
            else:
                repl = ";" + ";".join(new) + ";" if new else ";"
                lines.append(f'@set "_SIM_P=%_SIM_P:;{";".join(old)};={repl}%"')
                lines.append('@set "PATH=%_SIM_P:~1,-1%"')
    return lines + ['@set "_SIM_P="']


def run_cmd(wine, world, steps, initial, tmp_path):
    exe, wenv = wine
    env = {k: v for k, v in initial.items() if v is not None}
    lines = [f'@set "{k}={v}"' for k, v in env.items()] + ["@echo __STATE__", "@set"]
    for step in steps:
        ops = conda_model.plan(env, step, "bat", windows=True, local=world.local.get)
        lines += _bat_ops(ops) + ["@echo __STATE__", "@set"]
        conda_model.apply_plain(env, step, ";", windows=True)
    lines.append("@echo")  # echo state after all hooks: must still be on (HC7)
    script = tmp_path / "driver.bat"
    script.write_bytes(("\r\n".join(lines) + "\r\n").encode("ascii"))
    rc, text = wine_cmd(wine, script)
    assert rc == 0, text
    states = []
    for chunk in text.split("__STATE__")[1:]:
        allvars = dict(ln.split("=", 1) for ln in chunk.replace("\r", "").splitlines() if "=" in ln)
        upper = {k.upper(): v for k, v in allvars.items()}
        state = {k: upper.get(k) for k in ("PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CONDA_PREFIX")}
        state.update({k: v for k, v in upper.items() if k.startswith("_CUDASWITCH_")})
        states.append(state)
    return states, text


def _initial(world, cuda):
    base = world.names["base"]
    dirs = conda_model.env_dirs(base, True)
    init = dict(PATH=";".join(dirs) + ";" + SYSTEM_PATH, CONDA_PREFIX=base, CONDA_SHLVL="1",
                CUDA_HOME=cuda, CUDA_PATH=cuda)
    if cuda == "nvidia-installer":
        # what NVIDIA's installer leaves: every version's bin and libnvvp appended to the system PATH, CUDA_PATH the
        # last one installed (the newest here), CUDA_HOME unset
        tks = [world.envs[world.names[k]] for k in ("A", "B")]
        init.update(PATH=init["PATH"] + "".join(";" + e for tk in tks for e in tk.bins), CUDA_PATH=tks[-1].root,
                    CUDA_HOME=None)
    return init


@pytest.mark.parametrize("cuda", [None, r"C:\old cuda (x86) & co", "nvidia-installer"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_cmd_transition(wine, winworld, scenario, cuda, tmp_path):
    steps, leaks = SCENARIOS[scenario]
    steps = [[winworld.names.get(a, a) if i == 1 and s[0] == "activate" else a for i, a in enumerate(s)]
             for s in steps]
    steps = [[a if a != "/user bin" else r"C:\user bin (x86)" for a in s] for s in steps]
    initial = _initial(winworld, cuda)
    states, text = run_cmd(wine, winworld, steps, initial, tmp_path)
    assert len(states) == len(steps) + 1, text
    assert "ECHO is on" in text or "Echo is ON" in text  # HC7: the caller's echo state is untouched
    env = dict(initial)
    expected = [(dict(env), winworld.toolkit(env.get("CONDA_PREFIX")))]
    for step in steps:
        conda_model.apply_plain(env, step, ";", windows=True)
        expected.append((dict(env), winworld.toolkit(env.get("CONDA_PREFIX"))))
    for i, (got, (base, tk)) in enumerate(zip(states, expected)):
        if i in leaks:  # conda#14762, as in the POSIX shells: A's entries stay, with their record
            left = expected[i - 1][1]
            ours = shells.bat_spelling(left.bins)
            assert got["PATH"].split(";") == ours + base["PATH"].split(";")
            assert got["CUDA_HOME"] == base.get("CUDA_HOME") and got["_CUDASWITCH_ADDED_PATH"] == ";".join(ours)
            continue
        errs = problems(winworld, got, base, tk, sep=";", spelled=shells.bat_spelling)
        assert not errs, f"cmd {scenario} state {i}:\n" + "\n".join(errs) + "\n" + text[-3000:]


def test_cmd_unsupported_path_only_warns(wine, tmp_path):
    """A toolkit path cmd cannot hold (non-ASCII) gets a hook that warns and changes nothing (HC2)."""
    from cudaswitch.switching import hookfiles as hooks

    root = z(tmp_path / "CUDA 环境")
    make_env(tmp_path / "env")
    hooks.write_hooks(str(tmp_path / "env"), Toolkit(root, windows=True).changes(), "12.1", windows=True)
    hook = z(tmp_path / "env" / "etc" / "conda" / "activate.d" / "cudaswitch.bat")
    script = tmp_path / "d.bat"
    script.write_bytes(f'@set "PATH={SYSTEM_PATH}"\r\n@call "{hook}"\r\n@echo rc=%ERRORLEVEL%\r\n@set CUDA\r\n'
                       .encode("ascii"))
    _, out = wine_cmd(wine, script)
    assert "rc=0" in out and "CUDA_PATH=" not in out and "CUDA_HOME=" not in out
    assert "is not switched in cmd.exe" in out


# ---- hardening: what the user's PATH or cmd settings may hold -------------------------------------------------

def _hook_env(tmp_path, name, root):
    prefix = make_env(tmp_path / name)
    tk = Toolkit(root, windows=True)
    hooks.write_hooks(str(prefix), tk.changes(), "11.8", windows=True)
    d = z(prefix / "etc" / "conda")
    return z(prefix), d + r"\activate.d\cudaswitch.bat", d + r"\deactivate.d\cudaswitch.bat", tk


def _run_lines(wine, tmp_path, lines, *flags):
    script = tmp_path / "h.bat"
    script.write_bytes(("\r\n".join(lines) + "\r\n").encode("ascii"))
    rc, out = wine_cmd(wine, script, *flags)
    states = []
    for chunk in out.split("__STATE__")[1:]:
        allvars = dict(ln.split("=", 1) for ln in chunk.replace("\r", "").splitlines() if "=" in ln)
        states.append({k.upper(): v for k, v in allvars.items()})
    return rc, out, states


@pytest.fixture
def cuda_tree(tmp_path):
    tk = tmp_path / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v11.8"
    for sub in ("bin", "libnvvp"):
        (tk / sub).mkdir(parents=True)
    return z(tk)


def test_cmd_quoted_path_entry_survives_a_switch(wine, tmp_path, cuda_tree):
    """Installers write quoted PATH entries; the deactivate hook's comparison must not become a syntax error
    (which on cmd.exe ends every batch level, conda's own included): PATH comes back exactly, the caller goes on."""
    prefix, act, deact, tk = _hook_env(tmp_path, "env", cuda_tree)
    path = rf'{prefix}\Library\bin;"C:\Program Files\Foo Tool";{SYSTEM_PATH}'
    rc, out, states = _run_lines(wine, tmp_path, [
        f'@set "PATH={path}"', f'@set "CONDA_PREFIX={prefix}"', f'@call "{act}"', "@echo __STATE__", "@set",
        f'@call "{deact}"', "@echo after the hook", "@echo __STATE__", "@set"])
    assert rc == 0 and "after the hook" in out, out
    active, after = states
    assert active["PATH"] == ";".join(shells.bat_spelling(tk.bins)) + ";" + path
    assert after["PATH"] == path and after["_CUDASWITCH_ADDED_PATH"]  # a switch: the record is kept for conda
    assert "CUDA_PATH" not in after


@pytest.mark.parametrize("case", ["quoted-ampersand", "delayed-expansion", "too-long"])
def test_cmd_leaves_path_alone_where_editing_it_could_lose_entries(wine, tmp_path, cuda_tree, case):
    """A quoted entry with &, delayed expansion on (drops every ! from %PATH%), a PATH near cmd's 8191-character
    line limit: the hook says why in one warning, PATH stays exactly as it was, and the caller goes on."""
    prefix, act, deact, tk = _hook_env(tmp_path, "env", cuda_tree)
    path, flags = SYSTEM_PATH + r";C:\it!s", []
    if case == "quoted-ampersand":
        path = rf'"C:\Tools & Co";{SYSTEM_PATH}'
    elif case == "delayed-expansion":  # as cmd /V:ON, switched on after the driver put a ! on PATH
        flags = ("@setlocal EnableDelayedExpansion",)
    else:
        path = ";".join(rf"C:\some rather long tool folder\number {i:04d}" for i in range(180)) + ";" + SYSTEM_PATH
        assert 7900 < len(path) < 8191
    # set without outer quotes keeps the value's own quotes (the & is inside them)
    set_path = f"@set PATH={path}" if case == "quoted-ampersand" else f'@set "PATH={path}"'
    rc, out, states = _run_lines(wine, tmp_path, [
        set_path, *flags, f'@call "{act}"', "@echo after the hook", "@echo __STATE__", "@set"])
    assert rc == 0 and "after the hook" in out, out
    warnings = [ln for ln in out.splitlines() if "cudaswitch: warning: PATH left as it is" in ln]
    assert len(warnings) == 1, out
    state = states[0]
    assert state["PATH"] == path
    assert "_CUDASWITCH_ADDED_PATH" not in state and "CUDA_PATH" not in state


def test_cmd_unsupported_hook_still_cleans_up_a_switch(wine, tmp_path, cuda_tree):
    """A -> X where X's toolkit path cmd cannot hold: X's hook warns, and still takes out A's entries, which conda
    re-exported after A's deactivate hook had removed them (the record says which)."""
    prefix_a, act_a, deact_a, tk = _hook_env(tmp_path, "envA", cuda_tree)
    prefix_x, act_x, _, _ = _hook_env(tmp_path, "envX", z(tmp_path / "CUDA 环境"))
    before = rf"{prefix_a}\Library\bin;{SYSTEM_PATH}"
    conda_export = rf"{prefix_x}\Library\bin;{SYSTEM_PATH}"
    rc, out, states = _run_lines(wine, tmp_path, [
        f'@set "PATH={before}"', f'@set "CONDA_PREFIX={prefix_a}"', f'@call "{act_a}"',
        '@set "_SIM_P=%PATH%"', f'@call "{deact_a}"',
        # conda exports the PATH it computed before the hooks ran: A's entries are back
        f'@set "PATH=%_SIM_P:{prefix_a}\\Library\\bin={prefix_x}\\Library\\bin%"', '@set "_SIM_P="',
        f'@set "CONDA_PREFIX={prefix_x}"', f'@call "{act_x}"', "@echo __STATE__", "@set"])
    assert rc == 0, out
    state = states[0]
    assert state["PATH"] == conda_export and "_CUDASWITCH_ADDED_PATH" not in state, out
    assert "is not switched in cmd.exe" in out


@pytest.mark.parametrize("how", ["cmd /V:ON", "setlocal"])
def test_cmd_switches_with_delayed_expansion_on_when_no_value_has_an_exclamation_mark(wine, tmp_path, cuda_tree, how):
    """Delayed expansion is decided per value: on (cmd /V:ON, or EnableDelayedExpansion as the registry value
    gives it), a PATH and CUDA_PATH without `!` are read unchanged, so the hook switches, and deactivating gives
    back the start exactly."""
    prefix, act, deact, tk = _hook_env(tmp_path, "env", cuda_tree)
    path = rf"{prefix}\Library\bin;{SYSTEM_PATH};C:\Tools (x86)\bin"
    flags = ("/V:ON",) if how == "cmd /V:ON" else ()
    lines = ["@setlocal EnableDelayedExpansion"] if how == "setlocal" else []
    rc, out, states = _run_lines(wine, tmp_path, lines + [
        f'@set "PATH={path}"', f'@set "CONDA_PREFIX={prefix}"', r'@set "CUDA_PATH=C:\old cuda (x86)"',
        f'@call "{act}"', "@echo __STATE__", "@set", f'@set "PATH={SYSTEM_PATH};C:\\Tools (x86)\\bin"',
        '@set "CONDA_PREFIX="', f'@call "{deact}"', "@echo __STATE__", "@set"], *flags)
    assert rc == 0 and "warning" not in out, out
    active, after = states
    assert active["PATH"] == ";".join(shells.bat_spelling(tk.bins)) + ";" + path, out
    assert active["CUDA_PATH"] == active["CUDA_HOME"] == tk.root
    assert after["PATH"] == rf"{SYSTEM_PATH};C:\Tools (x86)\bin" and after["CUDA_PATH"] == r"C:\old cuda (x86)"
    assert not [k for k in after if k.startswith("_CUDASWITCH_")] and "CUDA_HOME" not in after


@pytest.mark.parametrize("var", ["PATH", "CUDA_PATH"])
def test_cmd_with_delayed_expansion_leaves_alone_only_a_value_with_an_exclamation_mark(wine, tmp_path, cuda_tree, var):
    """The one value with a `!` is named; PATH and CUDA_PATH stay exactly as they were."""
    prefix, act, deact, tk = _hook_env(tmp_path, "env", cuda_tree)
    path = SYSTEM_PATH + (r";C:\it!s" if var == "PATH" else "")
    cuda = r"C:\cuda!old" if var == "CUDA_PATH" else r"C:\cuda old"
    rc, out, states = _run_lines(wine, tmp_path, [
        f'@set "PATH={path}"', f'@set "CUDA_PATH={cuda}"', f'@call "{act}"', "@echo __STATE__", "@set"], "/V:OFF")
    assert rc == 0 and "warning" not in out  # delayed expansion off: the `!` is harmless, the hook switches
    assert states[0]["CUDA_PATH"] == tk.root
    # as cmd /V:ON, switched on after the driver set the values (a `!` in a set line would be dropped there)
    rc, out, states = _run_lines(wine, tmp_path, [
        f'@set "PATH={path}"', f'@set "CUDA_PATH={cuda}"', "@setlocal EnableDelayedExpansion", f'@call "{act}"',
        "@echo __STATE__", "@set"])
    warnings = [ln for ln in out.splitlines() if "cudaswitch: warning: PATH left as it is" in ln]
    assert rc == 0 and len(warnings) == 1 and f"and {var} has an exclamation mark" in warnings[0], out
    assert states[0]["PATH"] == path and states[0]["CUDA_PATH"] == cuda
