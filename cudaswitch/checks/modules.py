"""doctor's and status's view of a CUDA module loaded in this shell beside an environment's cudaswitch switch.

Both edit PATH, LD_LIBRARY_PATH and CUDA_HOME; whichever ran last is first on PATH, and a `module unload` after
`conda activate` can take away what the hook put there (docs/guide/clusters.md). Which one each consumer ends up
with is read from the shell as it is now, not guessed from the order of commands.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional

from cudaswitch.checks.diagnosis import WARNING, Finding
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.system import System


class LoadedCuda(NamedTuple):
    name: str  # cuda/11.8
    path: Optional[str]  # its modulefile
    root: Optional[str]  # the toolkit it sets up, read from the modulefile; None when it cannot be read
    version: Optional[str]  # that toolkit's version, when cudaswitch knows the toolkit


def loaded_cuda(system: System, toolkits) -> List[LoadedCuda]:
    from cudaswitch.discovery.modules import loaded_cuda_modules, read_modulefile

    from cudaswitch.discovery.toolkits import owner_of

    out: List[LoadedCuda] = []
    for mod in loaded_cuda_modules(system.environ):
        # _LMFILES_ names the very file that was loaded: a name can mean another folder's module once MODULEPATH
        # has changed (a hierarchy level loaded or unloaded since)
        mf = read_modulefile(system, mod.name, mod.path) if mod.path else None
        root = mf.root if mf else None
        tk = owner_of(toolkits, root, system) if root else None
        if root is None:
            tk = next((t for t in toolkits if mod.name in t.modules), None)
        out.append(LoadedCuda(mod.name, mod.path, tk.root if tk else root, tk.version if tk else None))
    return out


def _owner(toolkits, path: Optional[str], system: System) -> str:
    from cudaswitch.discovery.toolkits import owner_of

    if not path:
        return "nothing"
    tk = owner_of(toolkits, path, system)
    return f"CUDA {tk.version} ({tk.root})" if tk else path


def winners(system: System, toolkits) -> dict:
    """What nvcc on PATH, CUDA_HOME and LD_LIBRARY_PATH name now: the toolkit each consumer gets."""
    from cudaswitch.discovery.toolkits import owner_of

    libs = [e for e in system.split_list(system.environ.get("LD_LIBRARY_PATH")) if e]
    first_lib = next((e for e in libs if owner_of(toolkits, e, system)), None)
    return {"nvcc": _owner(toolkits, system.which("nvcc"), system),
            "CUDA_HOME": _owner(toolkits, system.environ.get("CUDA_HOME"), system),
            "LD_LIBRARY_PATH": _owner(toolkits, first_lib, system)}


def module_findings(system: System, toolkits, selected) -> List[Finding]:
    """CUDA_MODULE_LOADED: a CUDA module other than the environment's toolkit is loaded in this shell."""
    if selected is None or system.windows:
        return []
    loaded = [m for m in loaded_cuda(system, toolkits) if m.root != selected.root]
    if not loaded:
        return []
    names = Listed(m.name + (f" (CUDA {m.version})" if m.version else "") for m in loaded)
    won = winners(system, toolkits)
    return [Finding("CUDA_MODULE_LOADED", WARNING,
                    M("module {names} is loaded in this shell beside the environment's switch to CUDA {version} "
                      "({root}); now nvcc on PATH is {nvcc}, CUDA_HOME is {home}, LD_LIBRARY_PATH's first toolkit "
                      "is {lib}", names=names, version=selected.version, root=selected.root, nvcc=won["nvcc"],
                      home=won["CUDA_HOME"], lib=won["LD_LIBRARY_PATH"]),
                    M("run 'module unload {first}' before 'conda activate' (the module and the hooks edit the same "
                      "variables, and the later one wins), or switch the environment to the module's toolkit: "
                      "cudaswitch use {first}", first=loaded[0].name),
                    [m.path for m in loaded if m.path])]
