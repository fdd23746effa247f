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
        kept = remove_first(system.split_list(out.get(var)), remove.get(var, []))
        if not new and not kept and var in environ and environ.get(f"_CUDASWITCH_UNSET_{var}"):
            out.pop(var)  # only our entries were there, and cudaswitch had found the list unset
            continue
        out[var] = system.pathsep.join(new + kept)
    return out


def remove_first(entries: List[str], drop: List[str]) -> List[str]:
    """`entries` without one copy of each entry of `drop`: the first, the one a cudaswitch hook put in front."""
    out = list(entries)
    for d in drop:
        if d in out:
            out.remove(d)  # list.remove takes the first occurrence
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
