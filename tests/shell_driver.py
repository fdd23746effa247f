"""Drive real shells through conda transitions (virtualenv's ActivationTester pattern, docs/design/activation.md).

For each scenario one fresh shell process runs a generated driver script. Before each step the driver runs
`conda_model.py`, which prints the state the previous step left (`__STATE__ {...}`, from a child process, so only
exported variables count and `None` means unset) and writes the script conda would emit; the driver sources it
inside a function, as conda's shell function does. The test then compares every state with what conda alone
would have done (`conda_model.apply_plain`) plus exactly the active toolkit's entries.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import conda_model  # noqa: E402
from conftest import make_env  # noqa: E402
from cudaswitch.switching import hookfiles as hooks  # noqa: E402
from cudaswitch.switching.activation import Changes  # noqa: E402
from cudaswitch.core.shells import REAL_SHELLS, SHELLS as HOOK_SHELLS  # noqa: E402


def real_argv(name: str) -> List[str]:
    """The argv of a real shell (by its name: bash, tcsh, ...) without the user's startup files, from its record in
    cudaswitch/core/shells.py, as `use` starts it to check its hooks; the script's path (or -c CODE) follows."""
    real = next(r for r in REAL_SHELLS if r.name == name and not r.windows)
    return [real.program, *real.args]


# The real shells the tests start, those of the records whose flavour conda_model models: shell -> (argv, its
# record's key in cudaswitch/core/shells.py); flavour, quoting and hook extension come from the record.
_REAL = {r.name: (real_argv(r.name), r.hook) for r in REAL_SHELLS
         if not r.windows and HOOK_SHELLS[r.hook].name in conda_model.EXT}
# shell -> (model flavour, argv, quoting function)
SHELLS = {s: (HOOK_SHELLS[key].name, argv, HOOK_SHELLS[key].quote) for s, (argv, key) in _REAL.items()}


def hook_ext(shell: str) -> str:
    """The extension of the hook file this shell runs."""
    return HOOK_SHELLS[_REAL[shell][1]].ext


def source_cmd(shell: str) -> str:
    return "." if SHELLS[shell][0] == "posix" else "source"


@dataclass
class Toolkit:
    root: str
    ld: bool = True
    windows: bool = False  # Windows layout: bin and libnvvp on PATH, no LD_LIBRARY_PATH

    @property
    def bin(self) -> str:
        return self.root + ("\\bin" if self.windows else "/bin")

    @property
    def bins(self) -> List[str]:
        return [self.bin, self.root + "\\libnvvp"] if self.windows else [self.bin]

    @property
    def lib(self) -> str:
        return self.root + "/lib64"

    def changes(self) -> Changes:
        ch = Changes(scalars={"CUDA_PATH": self.root, "CUDA_HOME": self.root}, prepend={"PATH": self.bins})
        if self.ld and not self.windows:
            ch.prepend["LD_LIBRARY_PATH"] = [self.lib]
        return ch


@dataclass
class World:
    """Environments (prefix -> toolkit or None for an env without cudaswitch hooks) under one folder."""

    root: Path
    envs: Dict[str, Optional[Toolkit]] = field(default_factory=dict)
    names: Dict[str, str] = field(default_factory=dict)  # short name (A, B, C, base) -> prefix
    local: Dict[str, str] = field(default_factory=dict)  # prefix as the shell spells it -> folder here

    def add_env(self, short: str, folder: str, toolkit: Optional[Toolkit], spelled=None) -> str:
        """Create the env; `spelled(local path) -> str` gives the name the shell sees (wine: Z:\\...)."""
        local = str(self.root / "envs" / folder)
        make_env(local, history=None)
        os.makedirs(os.path.join(local, "bin"), exist_ok=True)
        if toolkit:
            for d in (*toolkit.bins, toolkit.lib) if not toolkit.windows else ():
                os.makedirs(d, exist_ok=True)
            hooks.write_hooks(local, toolkit.changes(), "11.x", windows=toolkit.windows)
        prefix = spelled(local) if spelled else local
        self.envs[prefix] = toolkit
        self.names[short] = prefix
        self.local[prefix] = local
        return prefix

    def toolkit(self, prefix: Optional[str]) -> Optional[Toolkit]:
        return self.envs.get(prefix) if prefix else None

    def all_entries(self) -> set:
        return {e for tk in self.envs.values() if tk for e in (*tk.bins, tk.lib)}


def driver_script(shell: str, steps: List[List[str]], out: str, strict: bool = False) -> str:
    flavour, _, q = SHELLS[shell]
    model = f"{q(sys.executable)} {q(str(HERE / 'conda_model.py'))} {flavour} {q(out)}"
    if flavour == "posix":
        lines = (["set -eu"] if strict else []) + [f'__conda_sim() {{ {model} "$@" && . {q(out)}; }}']
        call = "__conda_sim"
    elif flavour == "fish":
        lines = ["function __conda_sim", f"    {model} $argv; and source {q(out)}", "end"]
        call = "__conda_sim"
    else:  # csh has no functions: the hook is sourced at top level
        lines, call = [], None
    for step in steps:
        args = " ".join(q(a) for a in step)
        if call:
            lines.append(f"{call} {args}")
        else:
            lines += [f"{model} {args}", f"source {q(out)}"]
    lines.append(f"{model} dump")
    return "\n".join(lines) + "\n"


def run_driver(shell: str, steps: List[List[str]], env: Dict[str, str], tmp: Path, strict: bool = False):
    """States before the first step, after each step; and the whole output (for failure messages)."""
    script = tmp / f"driver.{shell}"
    script.write_text(driver_script(shell, steps, str(tmp / f"conda-out.{shell}"), strict), encoding="utf-8")
    argv = SHELLS[shell][1] + [str(script)]
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60, cwd=tmp)
    text = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, f"{shell} exited {proc.returncode}:\n{text}"
    states = [ast.literal_eval(line[len("__STATE__ "):]) for line in text.splitlines()
              if line.startswith("__STATE__ ")]
    assert len(states) == len(steps) + 1, text
    return states, text


def clean_environ(**initial: Optional[str]) -> Dict[str, str]:
    """os.environ without conda/CUDA/cudaswitch settings (docs/design/activation.md, "How the hook tests drive
    shells"), plus `initial`."""
    drop = ("CONDA", "_CONDA", "_CE_", "__CONDA", "_CUDASWITCH", "CUDA", "MAMBA", "PIXI", "COVERAGE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k != "LD_LIBRARY_PATH"}
    env["PYTHONIOENCODING"] = "utf-8"
    env.update({k: v for k, v in initial.items() if v is not None})
    return env


def expected_states(world: World, initial: Dict[str, Optional[str]], steps: List[List[str]]):
    """(baseline env, active toolkit) after each step: conda alone, and whose toolkit should be in effect."""
    env = dict(initial)
    out = [(dict(env), world.toolkit(env.get("CONDA_PREFIX")))]
    for step in steps:
        conda_model.apply_plain(env, step, ":")
        out.append((dict(env), world.toolkit(env.get("CONDA_PREFIX"))))
    return out


def problems(world: World, got: dict, base: dict, tk: Optional[Toolkit], sep: str = ":",
             spelled=None) -> List[str]:
    """What differs from 'conda alone, plus exactly the active toolkit's entries': PATH must be conda's own PATH
    with our one copy of each toolkit entry added, and nothing else taken away, so a copy the user had (.bashrc,
    the NVIDIA installer) is still there, in its place. `spelled` gives the hook's own spelling of the entries
    (cmd writes them with a trailing backslash)."""
    from cudaswitch.switching.activation import remove_first

    errs = []
    path = got["PATH"].split(sep)
    want = (spelled or (lambda b: b))(tk.bins) if tk else []
    missing = [b for b in want if b not in path]
    if missing:
        errs.append(f"toolkit entries {missing} not on PATH {path}")
    if remove_first(path, want) != base["PATH"].split(sep):
        errs.append(f"PATH without our one copy of {want}: {remove_first(path, want)} != {base['PATH'].split(sep)}")
    for var in ("CUDA_HOME", "CUDA_PATH"):
        exp = tk.root if tk else base.get(var)
        if got[var] != exp:
            errs.append(f"{var}={got[var]!r}, expected {exp!r}")
    ld0 = base.get("LD_LIBRARY_PATH")
    exp_ld = (tk.lib + (":" + ld0 if ld0 else "")) if tk and tk.ld and not tk.windows else ld0
    if got["LD_LIBRARY_PATH"] != exp_ld:
        errs.append(f"LD_LIBRARY_PATH={got['LD_LIBRARY_PATH']!r}, expected {exp_ld!r}")
    if not tk:
        left = sorted(k for k in got if k.startswith("_CUDASWITCH_"))
        if left:
            errs.append(f"helper variables left behind: {left}")
    return errs
