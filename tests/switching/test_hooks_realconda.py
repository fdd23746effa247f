"""The transition matrix through a real conda: `conda shell.<shell> hook` evaluated in a real shell, then real
`conda activate` / `conda deactivate`, from the three starting states (no CUDA, NVIDIA's installer, .bashrc).

A real conda command takes about a second, so each shell walks one tour that holds every kind of transition
(activate, reactivate, user PATH edit, switch A -> B, stack, deactivate into an env whose hooks re-run, switch to an
env without hooks and on, deactivate back to the start) instead of the separate scenarios of
test_hooks_transitions.py. First the tour runs with the cudaswitch hooks moved away: what conda alone does, held
against tests/conda_model.py (where they disagree, real conda wins and the model is wrong). Then with the hooks,
from each starting state: every state must be conda's own PATH plus exactly the active toolkit's entries, with the
user's own CUDA entries where they were. HOME and CONDARC point into the test's folder, so nothing is written to
the user's ~/.conda.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import conda_model
from conftest import require_tool
from cudaswitch.switching import hookfiles as hooks
from shell_driver import HERE, SHELLS as REAL_SHELLS, Toolkit, clean_environ, problems

# A tour through every kind of transition, back to where it started.
TOUR = [["activate", "A"], ["reactivate"], ["user-prepend", "/user bin"], ["activate", "B"],
        ["activate", "A", "--stack"], ["deactivate"], ["activate", "C"], ["activate", "A"], ["deactivate"],
        ["deactivate"], ["deactivate"], ["deactivate"], ["deactivate"]]

# shell -> (argv, conda's shell name, quoting, source command)
SHELLS = {s: (REAL_SHELLS[s][1], conda_name, REAL_SHELLS[s][2], src) for s, conda_name, src in (
    ("bash", "bash", "."), ("zsh", "zsh", "."), ("dash", "posix", "."), ("fish", "fish", "source"),
    ("tcsh", "csh", "source"))}


class World:
    def __init__(self, root: Path, conda):
        self.root, self.conda = root, conda
        self.home = root / "home"
        self.home.mkdir()
        (root / "condarc").write_text(f"envs_dirs: [{root / 'envs'}]\npkgs_dirs: [{root / 'pkgs'}]\n"
                                      "auto_activate_base: false\nchangeps1: false\nnotify_outdated_conda: false\n")
        self.toolkits = {k: Toolkit(str(root / "toolkits" / f"cuda-{v}"), ld=(k == "A"))
                         for k, v in (("A", "11.3"), ("B", "11.8"))}
        for tk in self.toolkits.values():
            for d in (tk.bin, tk.lib):
                os.makedirs(d)
        self.prefix = {}
        for short in ("base", "A", "B", "C"):
            self.prefix[short] = str(conda.create(root / "envs" / f"env-{short}", env=self.env()))
            tk = self.toolkits.get(short)
            if tk:
                hooks.write_hooks(self.prefix[short], tk.changes(), "11.x")

    def env(self, **extra):
        return clean_environ(HOME=str(self.home), CONDARC=str(self.root / "condarc"), CONDA_SOLVER="classic",
                             CONDA_NUMBER_CHANNEL_NOTICES="0", **extra)

    def toolkit(self, prefix):
        return {self.prefix[k]: tk for k, tk in self.toolkits.items()}.get(prefix)

    def all_entries(self):
        return {e for tk in self.toolkits.values() for e in (tk.bin, tk.lib)}

    def hooks_enabled(self, on: bool):
        for short in ("A", "B"):
            etc = Path(self.prefix[short], "etc")
            if on and Path(f"{etc}.off").exists():
                os.rename(f"{etc}.off", etc)
            elif not on and etc.exists():
                os.rename(etc, f"{etc}.off")


@pytest.fixture(scope="module")
def world(real_conda, tmp_path_factory):
    return World(tmp_path_factory.mktemp("realconda"), real_conda)


def _driver(world, shell, steps, hookfile: Path) -> str:
    argv, name, q, src = SHELLS[shell]
    dump = f"{q(sys.executable)} {q(str(HERE / 'conda_model.py'))} posix /dev/null dump"
    lines = [f"{src} {q(str(hookfile))}", f"conda activate {q(world.prefix['base'])}", dump]
    for step in steps:
        if step[0] == "activate":
            lines.append("conda activate " + " ".join(q(world.prefix.get(a, a)) for a in step[1:]))
        elif step[0] == "deactivate":
            lines.append("conda deactivate")
        elif step[0] == "reactivate":  # what `conda install` does through the shell function
            lines.append({"fish": 'conda activate "$CONDA_PREFIX"', "tcsh": 'conda activate "$CONDA_PREFIX"'}.get(
                shell, 'conda activate "$CONDA_PREFIX"'))
        elif step[0] == "user-prepend":
            lines.append({"fish": f"set -gx PATH {q(step[1])} $PATH",
                          "tcsh": f'setenv PATH {q(step[1])}":$PATH"'}.get(shell, f"export PATH={q(step[1])}:\"$PATH\""))
        lines.append(dump)
    return "\n".join(lines) + "\n"


def _run(world, shell, steps, initial, tmp_path, hooked: bool):
    import ast

    world.hooks_enabled(hooked)
    try:
        hookfile = tmp_path / f"conda-hook.{shell}"
        if not hookfile.exists():
            text = world.conda.run([f"shell.{SHELLS[shell][1]}", "hook"], env=world.env()).stdout
            if shell == "tcsh":
                text += _csh_alias_fix(text, world.conda.root)
            hookfile.write_text(text)
        script = tmp_path / f"driver-{'hooked' if hooked else 'plain'}.{shell}"
        script.write_text(_driver(world, shell, steps, hookfile), encoding="utf-8")
        env = world.env(**{k: v for k, v in initial.items() if v is not None})
        proc = subprocess.run(SHELLS[shell][0] + [str(script)], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    finally:
        world.hooks_enabled(True)
    text = proc.stdout + proc.stderr
    states = [ast.literal_eval(ln[len("__STATE__ "):]) for ln in proc.stdout.splitlines()
              if ln.startswith("__STATE__ ")]
    assert len(states) == len(steps) + 1, f"{shell} exited {proc.returncode}:\n{text}"
    return states, text


def _csh_alias_fix(hook: str, root: str) -> str:
    """conda.csh makes `conda` an alias that sources <root>/etc/profile.d/conda.csh; a conda installed with pip
    has that file only inside its package, which the hook text names: point the alias there."""
    import re

    if os.path.exists(os.path.join(root, "etc", "profile.d", "conda.csh")):
        return ""
    m = re.search(r'^source "([^"]+conda\.csh)"', hook, re.M)
    return f'\nalias conda source "{m.group(1)}"\n' if m else ""


def _initial(world, which):
    a, b = world.toolkits["A"], world.toolkits["B"]
    if which == "no-cuda":
        return dict(PATH="/usr/bin:/bin")
    if which == "nvidia-installer":
        return dict(PATH=f"/usr/bin:/bin:{a.bin}:{b.bin}", CUDA_PATH=b.root)
    return dict(PATH=f"{a.bin}:/usr/bin:/bin", CUDA_HOME=a.root, LD_LIBRARY_PATH=a.lib)  # .bashrc


def _expected(world, shell, first_state, steps):
    """(conda alone, from tests/conda_model.py) after each step, starting from a state the real shell printed."""
    env = {k: v for k, v in first_state.items() if v and not k.startswith("_CUDASWITCH")}
    out = [dict(env)]
    for step in steps:
        conda_model.apply_plain(env, [step[0]] + [world.prefix.get(a, a) for a in step[1:]], ":",
                                unset_empty=SHELLS[shell][1] in ("bash", "zsh", "posix"))
        out.append(dict(env))
    return out


def _leaks(world, expected):
    """States after a plain `conda activate` from an env with hooks to one without (conda#14762): without the
    prompt-time reconciler the left env's entry stays, with its record."""
    return {i for i, step in enumerate(TOUR, 1) if step[0] == "activate" and "--stack" not in step
            and world.toolkit(expected[i - 1].get("CONDA_PREFIX")) and not world.toolkit(expected[i].get("CONDA_PREFIX"))}


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_model_is_what_real_conda_does(world, shell, tmp_path):
    """tests/conda_model.py, which the other transition tests use as 'conda alone', against the real thing."""
    require_tool(SHELLS[shell][0][0])
    plain, text = _run(world, shell, TOUR, _initial(world, "nvidia-installer"), tmp_path, hooked=False)
    for i, want in enumerate(_expected(world, shell, plain[0], TOUR)):
        assert plain[i]["PATH"] == want["PATH"] and (plain[i]["CONDA_PREFIX"] or None) == (want.get("CONDA_PREFIX") or None), \
            f"{shell}: model and real conda differ after {TOUR[:i]}:\n{plain[i]}\n{want}\n{text}"


@pytest.mark.parametrize("start", ["no-cuda", "nvidia-installer", "bashrc"])
@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_real_conda_tour(world, shell, start, tmp_path):
    require_tool(SHELLS[shell][0][0])
    initial = _initial(world, start)
    got, text = _run(world, shell, TOUR, initial, tmp_path, hooked=True)
    expected = _expected(world, shell, got[0], TOUR)
    leaks = _leaks(world, expected)
    assert leaks, "the tour must contain a switch to an env without hooks"
    for i, (state, base) in enumerate(zip(got, expected)):
        base = dict(base, **{k: initial.get(k) for k in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH")})
        tk = world.toolkit(base.get("CONDA_PREFIX"))
        if i in leaks:
            left = world.toolkit(expected[i - 1].get("CONDA_PREFIX"))
            assert state["PATH"].split(":") == [left.bin] + base["PATH"].split(":"), text
            continue
        errs = problems(world, state, base, tk)
        assert not errs, f"{shell} from {start}, state {i} (after {TOUR[i - 1] if i else 'start'}):\n" \
            + "\n".join(errs) + "\n--- output:\n" + text
