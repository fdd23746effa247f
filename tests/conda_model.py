"""A small model of the script conda emits for activate / deactivate / reactivate, in conda's order.

What it models (docs/design/activation.md, "What conda does around a hook"; observed with real conda 26.x and
checked against it by tests/switching/test_hooks_realconda.py::test_model_is_what_real_conda_does):
- one emission order for every shell: export PATH (deactivate only), deactivate scripts, unset vars,
  export vars (PATH for activate/switch/reactivate, CONDA_*), activate scripts;
- PATH is computed *before* any hook runs (so a deactivate.d PATH edit is overwritten on a switch or reactivate,
  conda-path-first), deactivate.d runs descending, the env below re-runs its activate.d after a deactivate,
  `--stack` never runs the lower env's deactivate.d;
- posix conda >= 25.7 "unsets" with `export X=''`.

Used two ways: in-process on a dict (the baseline "what conda alone would do"), and as a program the shell drivers
run before each step (`python conda_model.py SHELL OUT STEP...`): like `conda shell.X activate`, it reads the
environment, prints the state the previous step left (one `__STATE__` line for the test), and writes the script
to source. cmd.exe cannot start this program under wine, so for cmd the PATH operations are rendered symbolically
(`%PATH:old=new%`) and conda's own variables are tracked here.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Dict, List, Mapping, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cudaswitch.core.shells import quote_csh, quote_fish, quote_sh  # noqa: E402  (the generator's own quoting)

WATCH = ("PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CONDA_PREFIX", "CONDA_SHLVL")
EXT = {"posix": "sh", "fish": "fish", "csh": "csh", "cmd": "bat"}


def env_dirs(prefix: str, windows: bool) -> List[str]:
    """The folders conda puts on PATH for an environment (conda/activate.py `_get_path_dirs`)."""
    if windows:
        return [prefix] + [prefix + "\\" + d for d in ("Library\\mingw-w64\\bin", "Library\\usr\\bin",
                                                       "Library\\bin", "Scripts", "bin")]
    return [prefix + "/bin"]


# PATH operations, evaluated on the PATH conda sees when the command starts (before any hook runs).
PathOp = Tuple[str, List[str], List[str]]  # (kind, old dirs, new dirs): kind in prepend, replace, remove


def eval_path_op(path: List[str], op: PathOp) -> List[str]:
    kind, old, new = op
    if kind == "prepend":
        return new + path
    idx = [i for i, p in enumerate(path) if p in old]
    kept = [p for p in path if p not in old]
    if kind == "remove":
        return kept
    at = idx[0] if idx else 0  # conda `_replace_prefix_in_path`: the new dirs go where the first old one was
    return kept[:at] + new + kept[at:]


def hook_scripts(prefix: str, kind: str, ext: str, local=None) -> List[str]:
    """conda's hook list: sorted by full path, deactivate.d reversed. `local` maps a Windows spelling (wine's
    Z:\\...) to the folder on this machine; the result keeps the prefix's own spelling."""
    where = local(prefix) if local else prefix
    found = sorted(glob.glob(os.path.join(glob.escape(where), "etc", "conda", f"{kind}.d", f"*.{ext}")))
    if local:
        found = [f"{prefix}\\etc\\conda\\{kind}.d\\{os.path.basename(f)}" for f in found]
    return list(reversed(found)) if kind == "deactivate" else found


def plan(env: Mapping[str, str], step: List[str], ext: str, windows: bool = False, local=None) -> list:
    """Ops in conda's emission order: ("path", PathOp) | ("set", k, v) | ("unset", k) | ("source", file)."""
    def scripts(prefix, kind, ext):
        return hook_scripts(prefix, kind, ext, local)

    shlvl = int(env.get("CONDA_SHLVL") or 0)
    cur = env.get("CONDA_PREFIX") or ""
    verb = step[0]
    if verb == "user-prepend":  # the user's own `export PATH=/x:$PATH`, not conda
        return [("path", ("prepend", [], [step[1]]))]
    if verb == "activate":
        prefix, stack = step[1], "--stack" in step
        if prefix == cur and shlvl > 0:
            verb = "reactivate"
        else:
            ops: list = []
            if shlvl == 0 or stack:
                pathop: PathOp = ("prepend", [], env_dirs(prefix, windows))
            else:
                pathop = ("replace", env_dirs(cur, windows), env_dirs(prefix, windows))
                ops += [("source", s) for s in scripts(cur, "deactivate", ext)]
            ops.append(("path", pathop))
            if shlvl > 0:
                ops.append(("set", f"CONDA_PREFIX_{shlvl}", cur))
            if stack:
                ops.append(("set", f"CONDA_STACKED_{shlvl + 1}", "true"))
            ops += [("set", "CONDA_PREFIX", prefix), ("set", "CONDA_SHLVL", str(shlvl + 1))]
            return ops + [("source", s) for s in scripts(prefix, "activate", ext)]
    if verb == "reactivate":  # `conda activate A` while A, or `conda install` through the shell wrapper
        return ([("source", s) for s in scripts(cur, "deactivate", ext)]
                + [("path", ("replace", env_dirs(cur, windows), env_dirs(cur, windows)))]
                + [("source", s) for s in scripts(cur, "activate", ext)])
    if verb == "deactivate":
        below = (env.get(f"CONDA_PREFIX_{shlvl - 1}") or None) if shlvl > 1 else None
        # membership, not truthiness, as conda does (docs/design/activation.md, conda-stacked-membership)
        stacked = f"CONDA_STACKED_{shlvl}" in env
        if below is None or stacked:
            pathop = ("remove", env_dirs(cur, windows), [])
        else:
            pathop = ("replace", env_dirs(cur, windows), env_dirs(below, windows))
        ops = [("path", pathop)] + [("source", s) for s in scripts(cur, "deactivate", ext)]
        if below is None:
            ops += [("unset", "CONDA_PREFIX"), ("set", "CONDA_SHLVL", "0")]
            return ops
        ops += [("unset", f"CONDA_PREFIX_{shlvl - 1}")]
        if stacked:
            ops.append(("unset", f"CONDA_STACKED_{shlvl}"))
        ops += [("set", "CONDA_PREFIX", below), ("set", "CONDA_SHLVL", str(shlvl - 1))]
        return ops + [("source", s) for s in scripts(below, "activate", ext)]
    raise SystemExit(f"unknown step {step}")


def apply_plain(env: Dict[str, Optional[str]], step: List[str], sep: str, windows: bool = False,
                unset_empty: bool = False) -> None:
    """Apply a step to a dict as conda alone would (hooks ignored): the baseline. Unset = removed, or with
    `unset_empty` set to '' as posix conda does (`export X=''`). That difference shows in PATH: a
    `CONDA_STACKED_<n>=''` left over from an earlier stack still counts as stacked (conda tests membership), so a
    later `conda deactivate` from level n removes the env's folder without putting the lower env's back; measured
    with real conda in bash, zsh and dash, not in fish or tcsh (tests/switching/test_hooks_realconda.py)."""
    start = env["PATH"].split(sep) if env.get("PATH") is not None else []
    for op in plan({k: v for k, v in env.items() if v is not None}, step, "none", windows):
        if op[0] == "path":
            env["PATH"] = sep.join(eval_path_op(start, op[1]))
        elif op[0] == "set":
            env[op[1]] = op[2]
        elif op[0] == "unset":
            if unset_empty:
                env[op[1]] = ""
            else:
                env.pop(op[1], None)


# ---- rendering for a running shell ------------------------------------------------------------------------------

def render_ops(shell: str, ops: list, path_now: List[str]) -> str:
    out = []
    for op in ops:
        if op[0] == "path":
            value = eval_path_op(path_now, op[1])
            if shell == "fish":  # conda: set -gx PATH "a" "b" ... (a list)
                out.append("set -gx PATH " + " ".join(quote_fish(p) for p in value))
            elif shell == "csh":
                out.append(f"setenv PATH {quote_csh(':'.join(value))}")
            else:
                out.append(f"export PATH={quote_sh(':'.join(value))}")
        elif op[0] == "set":
            q = {"fish": quote_fish, "csh": quote_csh}.get(shell, quote_sh)
            out.append({"fish": f"set -gx {op[1]} {q(op[2])}", "csh": f"setenv {op[1]} {q(op[2])}"}.get(
                shell, f"export {op[1]}={q(op[2])}"))
        elif op[0] == "unset":
            out.append({"fish": f"set -e {op[1]}", "csh": f"unsetenv {op[1]}"}.get(shell, f"export {op[1]}=''"))
        else:
            q = {"fish": quote_fish, "csh": quote_csh}.get(shell, quote_sh)
            out.append(f"{'.' if shell == 'posix' else 'source'} {q(op[1])}")
    return "\n".join(out) + "\n"


def state_line(env: Mapping[str, str]) -> str:
    state = {k: env.get(k) for k in WATCH}
    state.update({k: v for k, v in env.items() if k.startswith("_CUDASWITCH_")})
    return "__STATE__ " + repr(state)


def main(argv: List[str]) -> None:
    shell, out, step = argv[0], argv[1], argv[2:]
    print(state_line(os.environ), flush=True)
    if step == ["dump"]:
        return
    path_now = os.environ.get("PATH", "").split(":")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(render_ops(shell, plan(os.environ, step, EXT[shell]), path_now))


if __name__ == "__main__":
    main(sys.argv[1:])
