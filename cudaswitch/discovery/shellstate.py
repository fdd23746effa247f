"""What the current shell has: CUDA_PATH, CUDA_HOME, nvcc on PATH and the CUDA entries of PATH/LD_LIBRARY_PATH,
each mapped to a discovered toolkit, with one warning per disagreement."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional

from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import Toolkit, nvcc_owner, owner_of


@dataclass
class Entry:
    variable: str  # CUDA_PATH, CUDA_HOME, nvcc, PATH, LD_LIBRARY_PATH
    value: Optional[str]
    toolkit: Optional[str] = None  # version of the toolkit it belongs to
    toolkit_root: Optional[str] = None
    position: Optional[int] = None  # index in the list variable


@dataclass
class ShellState:
    entries: List[Entry]
    active: Optional[str]  # root of the toolkit this shell uses, by the precedence torch/CMake follow
    warnings: List[str] = field(default_factory=list)
    unsearchable: List[str] = field(default_factory=list)  # PATH/LD_LIBRARY_PATH folders this user cannot search
    unsearchable_in: List[str] = field(default_factory=list)  # which of the two variables held them

    @property
    def unsearchable_note(self) -> Optional[str]:
        """The one line every surface prints for the folders it skipped, or None."""
        if not self.unsearchable:
            return None
        return M("skipped {count} folder(s) on {variables} that this user cannot search: {folders}",
                 count=len(self.unsearchable), variables=Listed(self.unsearchable_in),
                 folders=Listed(self.unsearchable))

    def to_json(self) -> dict:
        return asdict(self)


def _entry(variable: str, value: Optional[str], toolkits: List[Toolkit], system: System, pos=None) -> Entry:
    tk = owner_of(toolkits, value, system) if value else None
    return Entry(variable, value, tk.version if tk else None, tk.root if tk else None, pos)


def _cannot_search(system: System, folder: str) -> Optional[str]:
    """Why a PATH folder cannot be looked into by this user (its own or a parent's permissions), or None."""
    import errno
    import os

    try:
        os.stat(system.local(folder))
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return exc.strerror or str(exc)
    return None


def folder_missing(system: System, folder: str) -> bool:
    """No folder there (CUDA_HOME's or CUDA_PATH's, for status and doctor). One this user cannot reach
    (_cannot_search) is not called missing: it is a toolkit she cannot see (pathlib's is_dir raises there on
    3.9-3.13)."""
    return not _cannot_search(system, folder) and not os.path.isdir(system.local(folder))


def shell_state(toolkits: List[Toolkit], system: System) -> ShellState:
    env = system.environ
    entries = [_entry(v, env.get(v), toolkits, system) for v in ("CUDA_PATH", "CUDA_HOME")]
    nvcc = system.which("nvcc")
    tk = nvcc_owner(toolkits, nvcc, system) if nvcc else None
    entries.append(Entry("nvcc", nvcc, tk.version if tk else None, tk.root if tk else None))
    lists = ["PATH"] + ([] if system.windows else ["LD_LIBRARY_PATH"])
    unsearchable: List[str] = []
    unsearchable_in: List[str] = []
    for var in lists:
        for i, item in enumerate(system.split_list(env.get(var))):
            if not item:
                continue
            why = _cannot_search(system, item)
            if why:
                if item not in unsearchable:
                    unsearchable.append(item)
                if var not in unsearchable_in:
                    unsearchable_in.append(var)
                continue
            e = _entry(var, item, toolkits, system, i)
            if e.toolkit:
                entries.append(e)
    warnings = _disagreements(entries, system)
    # CUDA_HOME first: torch's cpp_extension and most build tools read it before CUDA_PATH (README, list)
    first = {e.variable: e for e in entries[:3]}
    active = next((first[v].toolkit_root for v in ("CUDA_HOME", "CUDA_PATH", "nvcc") if first[v].toolkit_root), None)
    state = ShellState(entries, active, warnings, unsearchable, unsearchable_in)
    if state.unsearchable_note:  # one line for all: a `su` without `-` keeps root's folders, each refusing alike
        state.warnings.append(state.unsearchable_note)
    return state


def _disagreements(entries: List[Entry], system: System) -> List[str]:
    out: List[str] = []
    by_var = {e.variable: e for e in entries[:3]}
    for var in ("CUDA_PATH", "CUDA_HOME"):
        e = by_var[var]
        if e.value and folder_missing(system, e.value):
            out.append(M("{var} points at a missing folder: {value}", var=var, value=e.value))
        elif e.value and not e.toolkit:
            out.append(M("{var}={value} is not a CUDA toolkit cudaswitch can see", var=var, value=e.value))
    named = [(v, by_var[v]) for v in ("CUDA_HOME", "CUDA_PATH", "nvcc") if by_var[v].toolkit_root]
    for vb, b in named[1:]:
        va, a = named[0]
        if a.toolkit_root != b.toolkit_root:
            values = dict(va=va, a=a.toolkit, a_root=a.toolkit_root, vb=vb, b=b.toolkit, b_root=b.toolkit_root)
            out.append(M("{va} points at {a} ({a_root}) while nvcc on PATH is {b} ({b_root})", **values)
                       if vb == "nvcc" else M("{va} points at {a} ({a_root}) while {vb} is {b} ({b_root})", **values))
    for var in ("PATH", "LD_LIBRARY_PATH"):
        roots = []
        for e in entries:
            if e.variable == var and e.toolkit_root not in [r for r, _ in roots]:
                roots.append((e.toolkit_root, e.toolkit))
        if len(roots) > 1:
            names = Listed(f"{v} ({r})" for r, v in roots)
            out.append(M("{var} holds folders of {count} CUDA toolkits: {names}; the first one wins", var=var,
                         count=len(roots), names=names))
    return out
