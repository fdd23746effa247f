"""Who sets a variable when conda activates an environment: read as conda runs it, without running anything.

conda 26.7.1 (conda/activate.py `_build_activate_stack`) first exports the environment's variables
(`_get_environment_env_vars`: the JSON files of `etc/conda/env_vars.d/` sorted by path, then `conda-meta/state`'s
`env_vars`, which `conda env config vars set` writes and which wins over the packages'), then runs the
`etc/conda/activate.d` scripts of the shell's extension in `sorted()` order of their paths, i.e. by code point:
`cudaswitch.sh` runs before `env_vars.sh` and before conda-forge's `~cuda-nvcc_activate.sh`. So the last setter in
that order is the one whose value the shell ends with.

Scripts are read as text (the first 256 KiB, no link followed inside the environment) and matched with the
assignments each shell writes (its record's `assigns` in core/shells.py; every shell's, in every script); a script
that sets the variable only through code this cannot follow (a `source` of another file, an `eval`) is not seen.
`setters(prefix, names, ext)` is the reusable reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

SCRIPT_LIMIT = 256 << 10
ACTIVATE_D = ("etc", "conda", "activate.d")


@dataclass
class Setter:
    """One place that sets a variable on activation, in conda's order."""

    variable: str
    value: str  # as written there (a script's text may hold "$VAR" or quotes)
    source: str  # the script's path, or the JSON file conda reads the variable from
    kind: str  # "env_vars" (conda-meta/state, env_vars.d) or "script" (activate.d)


@dataclass
class Script:
    name: str  # the file's name in activate.d
    path: str
    text: str  # its first SCRIPT_LIMIT bytes, decoded leniently


def scripts(prefix: str, ext: Optional[str] = None) -> List[Script]:
    """The one reader of an environment's activate.d (status, doctor's CUDA_SET_AFTER_SWITCH and
    FOREIGN_CUDA_HOOKS read it through this): each regular file whose name ends in `ext` (every file when None), in
    the order conda runs them (code point), its first SCRIPT_LIMIT bytes, no link followed inside the environment."""
    from cudaswitch.core import readin

    out = []
    for name in readin.names(Path(prefix), ACTIVATE_D):  # sorted by code point, as conda sorts one folder's paths
        if ext is not None and not name.endswith(ext):
            continue
        raw = readin.read(Path(prefix), ACTIVATE_D, name, SCRIPT_LIMIT)
        if raw is not None:
            out.append(Script(name, str(Path(prefix, *ACTIVATE_D, name)), raw.decode("utf-8", "replace")))
    return out


def _json_vars(folder: Path, name: str, key: Optional[str]) -> dict:
    from cudaswitch.core import readin, trust

    raw = readin.read(folder, [], name, SCRIPT_LIMIT)
    try:
        data = trust.parse_json(raw, folder / name) if raw else {}
    except ValueError:
        return {}
    if key is not None:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def environment_vars(prefix: str) -> Dict[str, "Setter"]:
    """Every variable conda exports when it activates `prefix` (env_vars.d, then conda-meta/state, which wins)."""
    from cudaswitch.core import readin

    pkg = Path(prefix, "etc", "conda", "env_vars.d")
    found: Dict[str, Setter] = {}
    for name in readin.names(pkg, []):
        for var, value in _json_vars(pkg, name, None).items():
            found[var] = Setter(var, str(value), str(pkg / name), "env_vars")
    meta = Path(prefix, "conda-meta")
    for var, value in _json_vars(meta, "state", "env_vars").items():
        found[var] = Setter(var, str(value), str(meta / "state"), "env_vars")
    return found


def _env_var_setters(prefix: str, names: Iterable[str]) -> List[Setter]:
    found = environment_vars(prefix)
    # conda exports them as one block; the order among them does not matter
    return [found[var] for var in names if var in found]


def setters(prefix: str, names: Iterable[str], ext: str = ".sh") -> List[Setter]:
    """Everything that sets one of `names` when conda activates `prefix` in a shell whose scripts end in `ext`, in
    the order conda applies them: the last one for a variable is the value the shell ends with."""
    names = list(names)
    out = _env_var_setters(prefix, names)
    for script in scripts(prefix, ext):
        for _, var, value in assignments(script.text, names):
            out.append(Setter(var, value, script.path, "script"))
    return out


def assignments(text: str, names: Iterable[str]) -> List[Tuple[int, str, str]]:
    """Every assignment to one of `names` in a script's text, in any shell's syntax, in the order of the text:
    (offset, the name as given, the value as written without its quotes)."""
    from cudaswitch.core.shells import assignment_patterns

    names = list(names)
    given = {n.lower(): n for n in names}  # cmd.exe and PowerShell read `Cuda_Path` as CUDA_PATH
    hits = [(m.start(), given.get(m.group("var").lower(), m.group("var")), m.group("value").strip("'\""))
            for rx in assignment_patterns(names) for m in rx.finditer(text)]
    return sorted(hits)


def last_setter(prefix: str, name: str, ext: str = ".sh") -> Optional[Setter]:
    found = [s for s in setters(prefix, [name], ext) if s.variable == name]
    return found[-1] if found else None


def shell_extension(environ, windows: bool) -> str:
    """The activate.d extension conda runs for the user's shell: its record's (core/shells.py, session_shell), found
    by `$SHELL`'s name, sh's when unknown; on Windows PowerShell's when its variables are set, else cmd.exe's."""
    from cudaswitch.core.shells import session_shell

    return "." + session_shell(environ, windows).ext
