"""TOOLKIT_MISSING (the toolkit `use` chose for the environment is gone, so its hooks set no CUDA) and the
CUDA_PATH_MISSING / CUDA_HOME it leaves naming that folder: switch to the nearest installed toolkit the
environment's torch accepts (its CUDA major, as torch.utils.cpp_extension demands), as `cudaswitch use ROOT` does.
A variable set outside cudaswitch (a startup file, setx) is the user's: it stays advice, but with the exact command
that points it at the same toolkit the switch would pick (`setx` for each Windows shell, cmd.exe's and PowerShell's,
the line for the startup file of the user's shell elsewhere); cudaswitch edits neither the registry nor rc files
here."""

from __future__ import annotations

from typing import List, Optional

from cudaswitch.core.i18n import M
from cudaswitch.fix.plan import Change, Step

CODES = ("TOOLKIT_MISSING", "CUDA_PATH_MISSING")


def nearest(toolkits: List, old_version: str, torch_cuda: Optional[str]):
    """The toolkit to switch to: of those with a bin folder (and of torch's CUDA major when torch has one), the
    one of the old toolkit's major first, then the closest version, the newer of two as close."""
    from cudaswitch.data import knowledge

    old = knowledge.vtuple(old_version)[:2] or (0, 0)
    fits = [t for t in toolkits if t.bin_dirs and knowledge.vtuple(t.version)
            and (not torch_cuda or knowledge.same_major(t.version, torch_cuda))]

    def rank(t):
        v = knowledge.vtuple(t.version)[:2] + (0,)
        return (v[0] != old[0], abs((v[0] * 100 + v[1]) - (old[0] * 100 + old[1])), [-n for n in v])

    return min(fits, key=rank, default=None)


def user_variable_lines(var: str, value: str, environ, windows: bool) -> List[str]:
    """The pasteable way to set the user's own `var` to `value` for good: on Windows `setx` for each Windows shell
    whose record shows it (`setx`; one construct, each shell's quoting), else the line for the user's shell's startup
    file, as its record writes it (core/shells.py: `export`, `rc_file`; sh's where it has none)."""
    import re

    from cudaswitch.core import shellquote as sq
    from cudaswitch.core.shells import POSIX_DEFAULT, SHELLS, named, windows_shells

    if windows:
        return [M(sh.setx, command=sq.command(["setx", var, value], sh.key)) for sh in windows_shells() if sh.setx]
    name = next((v for v in (environ.get("CUDASWITCH_SHELL"), environ.get("SHELL")) if named(v)), POSIX_DEFAULT)
    base = re.split(r"[\\/]", name.strip())[-1].lower()
    record = named(name)
    if record is None or record.export is None:
        record = SHELLS[POSIX_DEFAULT]
    return [M("in {file}: {line}", file=record.rc_file(base) or "~/.profile", line=record.export(record, var, value))]


def advise(mine: List, env, system, findings) -> dict:
    """For a CUDA_PATH / CUDA_HOME the user set that names a folder that is gone: id(finding) -> (fix, lines), the
    toolkit the switch would choose (nearest(), one place) and the command for the user's own variable."""
    import re

    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.discovery.torchenv import torch_installs

    out = {}
    mine = [f for f in mine if f.code == "CUDA_PATH_MISSING" and len(f.details or []) == 2]
    if not mine:
        return out
    toolkits = discover(system).toolkits
    cuda = torch_installs(env.prefix).get("cuda") if env is not None else None
    for f in mine:
        var, value = f.details
        m = re.search(r"(\d+)\.(\d+)", value.replace("\\", "/").rsplit("/", 1)[-1])
        tk = nearest(toolkits, m.group(0) if m else "0.0", cuda)
        if tk is None:
            continue
        fix = M("{var} is your own setting, not cudaswitch's: point it at CUDA {version} ({root}), the nearest "
                "installed toolkit this environment's torch accepts; cudaswitch does not edit your startup files or "
                "the registry", var=var, version=tk.version, root=tk.root)
        out[id(f)] = (fix, user_variable_lines(var, tk.root, system.environ, system.windows))
    return out


def plan(mine: List, env, system, findings) -> Optional[Step]:
    import os

    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.discovery.environment import read_state
    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.fix.refresh import paths

    state = read_state(env)
    if state is None or not any(f.code == "TOOLKIT_MISSING" for f in mine):
        return None  # nothing cudaswitch switched: CUDA_PATH / CUDA_HOME are the user's own
    # only a variable that names the vanished toolkit is the switch's; another one was set outside cudaswitch
    ours = [f for f in mine if f.code == "TOOLKIT_MISSING" or state.root in str(f.cause)]
    tk = nearest(discover(system).toolkits, state.version, torch_installs(env.prefix).get("cuda"))
    if tk is None:
        return None
    changes = [Change("variable", var, state.root, tk.root) for var in ("CUDA_HOME", "CUDA_PATH")]
    changes.append(Change("file", os.path.join(env.prefix, "etc", "conda", "{activate,deactivate}.d",
                                               "cudaswitch.*"),
                          after=M("written for CUDA {version} ({root})", version=tk.version, root=tk.root)))
    words = ["cudaswitch", "use", tk.root, "-p", env.prefix]
    return Step("toolkit", [f.code for f in ours], [f.cause for f in ours], changes,
                for_user(words, system.environ, system.windows),
                {"root": tk.root, "ld": bool(state.ld_library_path)}, paths(env.prefix))


def apply(step: Step, env, system) -> None:
    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.switching import switch

    choice = switch.choose(env, step.data["root"], False, step.data["ld"] or None)
    tk = switch.resolve_toolkit(discover(system), choice, env, system)
    switch.check_switchable(tk)
    switch.use(env, tk, choice, system)
