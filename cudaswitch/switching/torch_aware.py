"""`cudaswitch use auto`: the toolkit the environment's torch builds extensions with.

torch.utils.cpp_extension refuses a toolkit whose CUDA major differs from torch.version.cuda and only warns when the
minor differs (docs/design/torch-aware.md). So: the same major.minor if installed, else the newest toolkit of the same
major (with a note about that warning), never another major. torch is read from its files (torch/version.py and
dist-info folders, through `torchenv.torch_installs`), never imported: a broken torch must not stop the choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudaswitch.data import knowledge
from cudaswitch.core.i18n import Listed, M


@dataclass
class AutoPick:
    ok: bool
    reason: str  # one line: why this toolkit, or why none
    fix: Optional[str] = None  # what to do when ok is False (or to get an exact match)
    toolkit: Optional[dict] = None  # Toolkit.to_json() of the pick
    torch: Optional[str] = None
    torch_cuda: Optional[str] = None
    cudnn: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    considered: List[str] = field(default_factory=list)  # every toolkit looked at and its verdict

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def _label(tk) -> str:
    return f"{tk.version} ({tk.root})"


def install_command(cuda: str) -> str:
    return f"cudaswitch install-toolkit {cuda}"


def pick(installs: Dict, toolkits: List, env_label: str, current_root: Optional[str] = None) -> AutoPick:
    """`installs`: torchenv.torch_installs(prefix); `toolkits`: discover().toolkits; `current_root`: the toolkit
    the environment is switched to now, which wins a tie."""
    version = installs.get("build_version") or installs.get("version")
    cuda = installs.get("cuda")
    base = dict(torch=version, torch_cuda=cuda, cudnn=installs.get("cudnn"))
    if not version:
        return AutoPick(False, M("no torch in {env}: nothing to match a toolkit to", env=env_label),
                        M("install torch first (`cudaswitch recommend` prints the pip line), or choose a toolkit "
                          "yourself: cudaswitch use X.Y"), **base)
    if not cuda:
        return AutoPick(False, M("torch {version} in {env} is a CPU build (torch.version.cuda is None): it builds no "
                                 "CUDA extensions", version=version, env=env_label),
                        M("install a CUDA build of torch (`cudaswitch recommend`), or choose a toolkit yourself: "
                          "cudaswitch use X.Y"), **base)
    want = knowledge.vtuple(cuda)
    considered: List[str] = []
    usable = []
    for tk in toolkits:
        if not tk.nvcc:
            considered.append(M("{toolkit}: no nvcc, cannot build extensions", toolkit=_label(tk)))
        elif tk.cuda.major != want[0]:
            considered.append(M("{toolkit}: CUDA major {major} != torch's {want} (cpp_extension refuses it)",
                                toolkit=_label(tk), major=tk.cuda.major, want=want[0]))
        else:
            usable.append(tk)
    exact = [t for t in usable if (t.cuda.major, t.cuda.minor) == want[:2]]
    short = knowledge.vstr(want[:2])
    if not usable:
        have = Listed(t.version for t in toolkits) or M("none")
        return AutoPick(False, M("torch {version} was built with CUDA {short} and no installed toolkit with nvcc "
                                 "has CUDA {major}.x (installed: {have})", version=version, short=short,
                                 major=want[0], have=have), install_command(short), considered=considered, **base)
    tk, tie = _best(exact or usable, current_root)
    for t in usable:
        if t is tk:
            considered.append(M("{toolkit}: chosen", toolkit=_label(t)))
        elif t in exact or not exact:
            considered.append(M("{toolkit}: same version, not chosen: {rule}", toolkit=_label(t), rule=tie)
                              if key(t) == key(tk) else
                              M("{toolkit}: older than {pick}", toolkit=_label(t), pick=tk.version))
        else:
            considered.append(M("{toolkit}: CUDA {minor}, not torch's {short}; an exact match is installed",
                                toolkit=_label(t), minor=knowledge.vstr((t.cuda.major, t.cuda.minor)), short=short))
    notes = [M("tie: {count} toolkits are CUDA {version}; {rule}", count=sum(key(t) == key(tk) for t in usable),
               version=tk.version, rule=tie)] if tie else []
    if exact:
        return AutoPick(True, M("torch {version} was built with CUDA {short}; CUDA {toolkit} matches it",
                                version=version, short=short, toolkit=tk.version),
                        toolkit=tk.to_json(), notes=notes, considered=considered, **base)
    notes.append(M("torch was built with CUDA {short}, this toolkit is {toolkit}: torch.utils.cpp_extension warns "
                   "about the minor version difference; builds normally work", short=short,
                   toolkit=str(tk.cuda.major) + "." + str(tk.cuda.minor)))
    return AutoPick(True, M("torch {version} was built with CUDA {short}; no {short} toolkit is installed, CUDA "
                            "{toolkit} is the newest of the same major", version=version, short=short,
                            toolkit=tk.version), install_command(short),
                    tk.to_json(), notes=notes, considered=considered, **base)


def key(tk):
    """The rank inside one CUDA major: the newest minor, then the newest patch."""
    return tk.cuda.minor, tk.cuda.patch or 0


def _best(candidates: List, current_root: Optional[str]):
    """(the pick, the rule that broke a tie or None). Equal versions: the one the environment already uses, else
    the first in discovery's order (by folder, as `cudaswitch list` shows them)."""
    top = max(key(t) for t in candidates)
    tied = [t for t in candidates if key(t) == top]
    if len(tied) == 1:
        return tied[0], None
    mine = next((t for t in tied if current_root and current_root in (t.root, *t.aliases)), None)
    if mine is not None:
        return mine, M("{root} is chosen because the environment already uses it", root=mine.root)
    return tied[0], M("{root} is chosen because its folder comes first in the order 'cudaswitch list' shows",
                      root=tied[0].root)


def pick_for_env(prefix: str, env_label: str, toolkits: List, current_root: Optional[str] = None) -> AutoPick:
    from cudaswitch.discovery.torchenv import torch_installs

    return pick(torch_installs(prefix), toolkits, env_label, current_root)
