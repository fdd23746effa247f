"""The facts about an environment's own switch that every surface reports: `use` right after it switches, `smoke`,
`doctor`, `conda doctor` and the note after `conda install/update/remove`. They are found here once, from files
only (the state file, torch's version.py, the pip wheels' dist-info folders), so each command says the same thing
with the same severity (checks/severities.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from cudaswitch.checks.diagnosis import Finding
from cudaswitch.checks.severities import severity
from cudaswitch.core.i18n import Listed, M


def _f(code: str, cause, fix) -> Finding:
    return Finding(code, severity(code), cause, fix, [])


def switch_findings(prefix: str, version: str, root: str, ld_library_path: bool, system=None) -> List[Finding]:
    """The environment at `prefix` is switched to CUDA `version` at `root`, with (or without) its lib folder put
    on LD_LIBRARY_PATH: TOOLKIT_MISSING, TORCH_TOOLKIT_MAJOR_MISMATCH, LD_LIBRARY_PATH_OVER_WHEELS. `system` maps
    the toolkit's path onto a test's file-system root."""
    from cudaswitch.data import knowledge
    from cudaswitch.discovery.envs_report import _nvidia_wheels, torch_build

    from cudaswitch.core.shellquote import for_user

    # pasteable: quoted for the user's shell (a prefix such as "D:\实验 环境" stays one word)
    pasted = for_user([prefix], system.environ if system is not None else None,
                      system.windows if system is not None else None)
    out: List[Finding] = []
    if not (system.local(root) if system is not None else Path(root)).is_dir():
        out.append(_f("TOOLKIT_MISSING", M("the environment was switched to CUDA {version} at {root}, which is no "
                                           "longer there", version=version, root=root),
                      M("run `cudaswitch use X.Y -p {prefix}` with an installed toolkit ('cudaswitch list' shows "
                        "them)", prefix=pasted)))
    torch = torch_build(prefix)
    if torch and torch.get("cuda") and knowledge.same_major(torch["cuda"], version) is False:
        out.append(_f("TORCH_TOOLKIT_MAJOR_MISMATCH",
                      M("torch {torch} was built for CUDA {cuda} but the environment uses CUDA {version}: "
                        "torch.utils.cpp_extension refuses to build extensions with another CUDA major",
                        torch=torch['version'], cuda=torch['cuda'], version=version),
                      f"cudaswitch use {knowledge.vstr(knowledge.vtuple(torch['cuda'])[:2])} -p {pasted}"))
    if ld_library_path:
        wheels = _nvidia_wheels(prefix)
        if wheels:
            shown = Listed(wheels[:2] + (["..."] if len(wheels) > 2 else []))
            out.append(_f("LD_LIBRARY_PATH_OVER_WHEELS",
                          M("pip CUDA wheels are installed ({wheels}) and the hooks put CUDA {version}'s lib folder "
                            "first on LD_LIBRARY_PATH: torch then loads the toolkit's CUDA libraries instead of its "
                            "wheels', which breaks it when they are older ('undefined symbol __nvJitLink...')",
                            wheels=shown, version=version),
                          f"cudaswitch use --refresh --no-ld-library-path -p {pasted}"))
    return out


def state_findings(env, system=None) -> List[Finding]:
    """switch_findings for what the environment's state file records; none when it is not switched."""
    from cudaswitch.discovery.environment import read_state

    state = read_state(env)
    if state is None:
        return []
    return switch_findings(env.prefix, state.version, state.root, bool(state.ld_library_path), system)
