"""Who sets a variable when conda activates an environment: read as conda runs it, without running anything.

conda 26.7.1 (conda/activate.py `_build_activate_stack`) first exports the environment's variables
(`_get_environment_env_vars`: the JSON files of `etc/conda/env_vars.d/` sorted by path, then `conda-meta/state`'s
`env_vars`, which `conda env config vars set` writes and which wins over the packages'), then runs the
`etc/conda/activate.d` scripts of the shell's extension in `sorted()` order of their paths, i.e. by code point:
`cudaswitch.sh` runs before `env_vars.sh` and before conda-forge's `~cuda-nvcc_activate.sh`. So the last setter in
that order is the one whose value the shell ends with.

Scripts are read as text (the first 256 KiB, no link followed inside the environment) and matched with the
assignments each shell writes; a script that sets the variable only through code this cannot follow (a `source` of
another file, an `eval`) is not seen. `setters(prefix, names, ext)` is the reusable reader.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional

# one assignment per shell syntax: export X=..., X=..., set -gx X ..., setenv X ..., $env:X = ..., set "X=..."
_VALUE = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s;&|]+)"""
_ASSIGN = (r"(?:^|[;&|]\s*|\bthen\s+|\bdo\s+|\belse\s+)\s*(?:export\s+|declare\s+-x\s+)?(?P<sh>{name})=(?P<shv>"
           + _VALUE + "?)",
           r"\bset\s+(?:-[a-zA-Z]*x[a-zA-Z]*\s+)(?P<fish>{name})\s+(?P<fishv>" + _VALUE + ")",
           r"\bsetenv\s+(?P<csh>{name})\s+(?P<cshv>" + _VALUE + ")",
           r"\$env:(?P<ps>{name})\s*=\s*(?P<psv>" + _VALUE + ")",
           r"""\bset\s+"?(?P<bat>{name})=(?P<batv>[^"\r\n]*)""")

SCRIPT_LIMIT = 256 << 10


@dataclass
class Setter:
    """One place that sets a variable on activation, in conda's order."""

    variable: str
    value: str  # as written there (a script's text may hold "$VAR" or quotes)
    source: str  # the script's path, or the JSON file conda reads the variable from
    kind: str  # "env_vars" (conda-meta/state, env_vars.d) or "script" (activate.d)


def _read_text(folder: Path, name: str) -> Optional[str]:
    from cudaswitch.core import trust
    from cudaswitch.core.errors import CudaswitchError

    if not trust.POSIX:
        try:
            return trust.read_text(folder / name, errors="replace", limit=SCRIPT_LIMIT, truncate=True)
        except OSError:
            return None
    try:
        fd = trust.open_dir(folder, [])
    except (OSError, CudaswitchError):
        return None
    try:
        raw = trust.read_regular(fd, name, SCRIPT_LIMIT)
    finally:
        os.close(fd)
    return None if raw is None else raw.decode("utf-8", "replace")


def _json_vars(folder: Path, name: str, key: Optional[str]) -> dict:
    text = _read_text(folder, name)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    if key is not None:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _env_var_setters(prefix: str, names: Iterable[str]) -> List[Setter]:
    out: List[Setter] = []
    wanted = set(names)
    pkg = Path(prefix, "etc", "conda", "env_vars.d")
    try:
        files = sorted(os.listdir(pkg))
    except OSError:
        files = []
    found = {}
    for name in files:
        for var, value in _json_vars(pkg, name, None).items():
            if var in wanted:
                found[var] = Setter(var, str(value), str(pkg / name), "env_vars")
    meta = Path(prefix, "conda-meta")
    for var, value in _json_vars(meta, "state", "env_vars").items():
        if var in wanted:
            found[var] = Setter(var, str(value), str(meta / "state"), "env_vars")
    for var in names:  # conda exports them as one block; the order among them does not matter
        if var in found:
            out.append(found[var])
    return out


def script_names(prefix: str, ext: str) -> List[str]:
    """activate.d's scripts for a shell's extension (".sh", ".fish", ".csh", ".bat", ".ps1") in conda's order."""
    folder = os.path.join(prefix, "etc", "conda", "activate.d")
    try:
        paths = [os.path.join(folder, n) for n in os.listdir(folder)]
    except OSError:
        return []
    return [os.path.basename(p) for p in sorted(p for p in paths if p.endswith(ext))]


def setters(prefix: str, names: Iterable[str], ext: str = ".sh") -> List[Setter]:
    """Everything that sets one of `names` when conda activates `prefix` in a shell whose scripts end in `ext`, in
    the order conda applies them: the last one for a variable is the value the shell ends with."""
    names = list(names)
    out = _env_var_setters(prefix, names)
    folder = Path(prefix, "etc", "conda", "activate.d")
    rx = [re.compile(p.format(name="|".join(re.escape(n) for n in names)), re.M) for p in _ASSIGN]
    for name in script_names(prefix, ext):
        text = _read_text(folder, name)
        if not text:
            continue
        hits = []
        for r in rx:
            for m in r.finditer(text):
                var = next(v for k, v in m.groupdict().items() if v is not None and not k.endswith("v"))
                value = next(v for k, v in m.groupdict().items() if v is not None and k.endswith("v"))
                hits.append((m.start(), var, value.strip("'\"")))
        for _, var, value in sorted(hits):
            out.append(Setter(var, value, str(folder / name), "script"))
    return out


def last_setter(prefix: str, name: str, ext: str = ".sh") -> Optional[Setter]:
    found = [s for s in setters(prefix, [name], ext) if s.variable == name]
    return found[-1] if found else None


def shell_extension(environ, windows: bool) -> str:
    """The activate.d extension conda runs for the user's shell."""
    if windows:
        return ".ps1" if environ.get("PSExecutionPolicyPreference") or environ.get("POWERSHELL_DISTRIBUTION_CHANNEL") \
            else ".bat"
    shell = os.path.basename(environ.get("SHELL") or "")
    return {"fish": ".fish", "tcsh": ".csh", "csh": ".csh"}.get(shell, ".sh")
