"""What switching to a toolkit changes in an environment, as data: the one pipeline every shell's hook renders,
and the pure-Python model `cudaswitch run` and the smoke test apply directly.

Rules (docs/design/activation.md): take out our one copy of each recorded entry (the first: ours is in front),
then prepend the new entries once; copies the user had (.bashrc, NVIDIA's installer) are never touched. Scalars
CUDA_PATH and CUDA_HOME get the same value; `CUDA_PATH_V<X>_<Y>` are never changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import Toolkit

SCALARS = ("CUDA_PATH", "CUDA_HOME")


@dataclass
class Changes:
    scalars: Dict[str, str] = field(default_factory=dict)
    prepend: Dict[str, List[str]] = field(default_factory=dict)  # list variable -> entries, first wins


def changes_for(toolkit: Toolkit, system: System, ld_library_path: bool = False) -> Changes:
    ch = Changes(scalars={name: toolkit.root for name in SCALARS})
    ch.prepend["PATH"] = list(toolkit.bin_dirs)
    if ld_library_path and not system.windows and toolkit.lib_dirs:
        ch.prepend["LD_LIBRARY_PATH"] = list(toolkit.lib_dirs)
    return ch


def apply(environ: Mapping[str, str], changes: Changes, system: System,
          remove: Optional[Mapping[str, List[str]]] = None) -> Dict[str, str]:
    """`environ` after the change: one copy (the first) of each entry in `remove` (what an earlier switch
    recorded) is taken out of each list, then the new entries are prepended once. Other copies stay."""
    out = dict(environ)
    out.update(changes.scalars)
    remove = remove or {}
    for var in set(changes.prepend) | set(remove):
        new = changes.prepend.get(var, [])
        if var not in out and not new:
            continue  # an unset list stays unset
        kept = _rest(remove_first(system.split_list(out.get(var)), remove.get(var, []), system.windows))
        if not new and not kept and var in environ and remove.get(var) and environ.get(f"_CUDASWITCH_UNSET_{var}"):
            out.pop(var)  # only our recorded entries were there, and cudaswitch had found the list unset
            continue
        out[var] = system.pathsep.join(new + kept)
    return out


def remove_first(entries: List[str], drop: List[str], fold: bool = False) -> List[str]:
    """`entries` without one copy of each entry of `drop`: the first, the one a cudaswitch hook put in front.
    `fold`: compared without case, as Windows names folders (and as cmd's substitution and PowerShell's -eq do)."""
    out = list(entries)
    key = str.casefold if fold else (lambda e: e)
    for d in drop:
        for i, e in enumerate(out):
            if key(e) == key(d):
                del out[i]
                break
    return out


def recorded_entries(environ: Mapping[str, str], system: System) -> Dict[str, List[str]]:
    """What an active cudaswitch environment's hook added to each list (its `_CUDASWITCH_ADDED_<VAR>` records),
    for `apply(..., remove=...)`: taken out first, exactly as a hook would (HL2 in docs/design/activation.md)."""
    return {var: system.split_list(environ.get(f"_CUDASWITCH_ADDED_{var}")) for var in ("PATH", "LD_LIBRARY_PATH")}


def conda_activated(environ: Mapping[str, str], prefix: str, system: System) -> Dict[str, str]:
    """`environ` after `conda activate PREFIX` from a shell with no env active (PATH dirs as conda adds them)."""
    out = dict(environ)
    if system.windows:
        dirs = [prefix] + [system.join(prefix, *p) for p in (("Library", "mingw-w64", "bin"), ("Library", "usr", "bin"),
                                                              ("Library", "bin"), ("Scripts",), ("bin",))]
    else:
        dirs = [system.join(prefix, "bin")]
    old = system.split_list(out.get("PATH"))
    out["PATH"] = system.pathsep.join(dirs + [p for p in old if p not in dirs])
    out["CONDA_PREFIX"] = prefix
    out["CONDA_SHLVL"] = str(int(out.get("CONDA_SHLVL") or 0) + 1)
    return out


LISTS = ("PATH", "LD_LIBRARY_PATH")  # every list a hook edits; the records below are per list and per scalar
RECORD = "_CUDASWITCH_"


def activated(environ: Mapping[str, str], changes: Changes, sep: str, empty_is_unset: bool = False,
              spelled=None) -> Dict[str, str]:
    """What a shell holds after an activate hook ran in `environ`, records included: the plan `use` checks every
    real shell against (switching/verify.py). The rules of docs/design/activation.md (HL1-HL5, HS1-HS2), as the
    hooks spell them; `spelled(entries)` is how the shell's hook writes its entries (cmd: a trailing backslash);
    `empty_is_unset`: a shell that cannot hold an empty variable (cmd, Windows PowerShell 5.1)."""
    out = dict(environ)
    spelled = spelled or (lambda entries: list(entries))
    for var in LISTS:
        new = spelled(changes.prepend.get(var, []))
        rec = _split(environ.get(f"{RECORD}ADDED_{var}"), sep)
        value = environ.get(var)
        kept = _rest(remove_first(_split(value, sep), rec, sep == ";"))
        is_set = value is not None and not (empty_is_unset and value == "")
        if rec and not kept and environ.get(f"{RECORD}UNSET_{var}"):
            is_set = False  # only our entries were left, and cudaswitch had found the list unset (HL4)
        if new:
            if is_set:
                out.pop(f"{RECORD}UNSET_{var}", None)
            else:
                out[f"{RECORD}UNSET_{var}"] = "1"
            out[var] = sep.join(new + kept)
            out[f"{RECORD}ADDED_{var}"] = sep.join(new)
            continue
        if rec:
            if is_set:
                out[var] = sep.join(kept)
            else:
                out.pop(var, None)
        out.pop(f"{RECORD}ADDED_{var}", None)
        out.pop(f"{RECORD}UNSET_{var}", None)
    for var, value in changes.scalars.items():
        if not environ.get(f"{RECORD}SAVED_{var}"):  # first writer wins (HS2)
            old = environ.get(var)
            if old is None or (empty_is_unset and old == ""):
                out.pop(f"{RECORD}OLD_{var}", None)
            else:
                out[f"{RECORD}OLD_{var}"] = old
            out[f"{RECORD}SAVED_{var}"] = "1"
        out[var] = value
    return _drop_empty(out) if empty_is_unset else out


def deactivated(environ: Mapping[str, str], sep: str, env_folder: Optional[str],
                empty_is_unset: bool = False) -> Dict[str, str]:
    """What a shell holds after a deactivate hook ran in `environ`: our one copy of each recorded entry out, a
    list cudaswitch found unset unset again, the scalars as the first activate hook found them. The PATH record
    stays while `env_folder` (the env's own bin folder) is still on PATH: conda will bring our entry back (HL3)."""
    out = dict(environ)
    for var in LISTS:
        rec = _split(environ.get(f"{RECORD}ADDED_{var}"), sep)
        if rec:
            kept = _rest(remove_first(_split(environ.get(var), sep), rec, sep == ";"))
            if not kept and environ.get(f"{RECORD}UNSET_{var}"):
                out.pop(var, None)
            else:
                out[var] = sep.join(kept)
        out.pop(f"{RECORD}UNSET_{var}", None)
    if not env_folder or env_folder not in _split(out.get("PATH"), sep):
        out.pop(f"{RECORD}ADDED_PATH", None)
    out.pop(f"{RECORD}ADDED_LD_LIBRARY_PATH", None)
    for var in SCALARS:
        if environ.get(f"{RECORD}SAVED_{var}"):
            old = environ.get(f"{RECORD}OLD_{var}")
            if old is None:
                out.pop(var, None)
            else:
                out[var] = old
        out.pop(f"{RECORD}OLD_{var}", None)
        out.pop(f"{RECORD}SAVED_{var}", None)
    return _drop_empty(out) if empty_is_unset else out


def _rest(kept: List[str]) -> List[str]:
    """What is left of a list once our entries are out: one empty element alone is the empty text, so nothing
    (the hooks work on the text: ':x' without 'x' is '', and 'new' + '' is 'new', not 'new:')."""
    return [] if kept == [""] else kept


def _split(value: Optional[str], sep: str) -> List[str]:
    return [] if not value else value.split(sep)


def _drop_empty(environ: Mapping[str, str]) -> Dict[str, str]:
    return {k: v for k, v in environ.items() if v != ""}
