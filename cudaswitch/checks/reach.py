"""`doctor`'s findings about how far an environment's switch reaches: the Python startup file
(switching/pythonhook.py), the Jupyter kernels that start the environment (discovery/kernelspecs.py) and conda-forge
CUDA packages living beside the switch (switching/condaforge.py). docs/guide/reach.md says which client gets the
switch through which mechanism."""

from __future__ import annotations

from typing import List

from cudaswitch.checks.diagnosis import INFO, WARNING, Finding
from cudaswitch.core.i18n import M


def python_hook_findings(env, state, windows: bool) -> List[Finding]:
    from cudaswitch.switching import pythonhook

    if state is None:
        return []
    st = pythonhook.status(env.prefix, windows)
    wanted = pythonhook.wanted(None, env.is_base, state)
    refresh = M("run `cudaswitch use --refresh -p {prefix}`", prefix=env.prefix)
    if st.in_place:
        root_moved = st.root is not None and st.root != state.root
        if root_moved:
            return [Finding("PYTHON_HOOK_STALE", WARNING,
                            M("the Python startup file in {live} sets CUDA {root}, but the environment is switched "
                              "to {chosen}", live=st.live, root=st.root, chosen=state.root), refresh, [st.live])]
        return [Finding("PYTHON_HOOK", INFO, M("a Python of this environment started without activation (Jupyter "
                                               "kernel, IDE runner, bare python) gets CUDA {root} from {path}",
                                               root=st.root or state.root, path=f"{st.live}/{pythonhook.PTH}"),
                        "-", [st.live])]
    if not wanted or st.live is None:
        return []
    if st.stale:
        cause = M("the Python startup file is in {stale}, which no Python of this environment reads any more (Python "
                  "was upgraded); {live} has none, so a Python started without activation does not get the switch",
                  stale=", ".join(st.stale), live=st.live)
    else:
        cause = M("the Python startup file is missing from {live}, so a Python of this environment started without "
                  "activation does not get the switch", live=st.live)
    return [Finding("PYTHON_HOOK_STALE", WARNING, cause, refresh, [st.live, *st.stale])]


def conda_forge_findings(env, state, system) -> List[Finding]:
    """CONDA_FORGE_CUDA_MIX: the environment is switched and has conda-forge's CUDA compiler packages: which toolkit
    each consumer takes. CONDA_FORGE_CUDA: such packages, without a mix (runtime libraries only, or no switch)."""
    from types import SimpleNamespace

    from cudaswitch.switching import condaforge

    cc = condaforge.read(env.prefix, system.windows)
    if not cc.packages:
        return []
    names = ", ".join(f"{p.name} {p.version}" for p in cc.packages)
    if state is None:
        return [Finding("CONDA_FORGE_CUDA", INFO, M("conda-forge CUDA packages in this environment: {names}",
                                                    names=names), "-", [p.name for p in cc.packages])]
    exe = "nvcc.exe" if system.windows else "nvcc"
    nvcc = system.join(state.root, "bin", exe)
    nvcc = nvcc if system.local(nvcc).is_file() else None
    why = condaforge.conflict(cc, SimpleNamespace(nvcc=nvcc, version=state.version))
    if why is None:
        return [Finding("CONDA_FORGE_CUDA", INFO, M("conda-forge CUDA packages beside the switch to CUDA {version}: "
                                                    "{names}", version=state.version, names=names), "-",
                        [p.name for p in cc.packages])]
    takes = [M("{who}: {takes} ({where})", who=M(c.who), takes=c.takes, where=c.where)
             for c in condaforge.consumers(cc, state.root, nvcc)]
    from cudaswitch.core.i18n import tr

    return [Finding("CONDA_FORGE_CUDA_MIX", WARNING,
                    M("{why}. In the activated environment: {takes}", why=why, takes="; ".join(tr(t) for t in takes)),
                    M("keep one: 'conda remove -p {prefix} {names}' (cudaswitch's CUDA {version}), or 'cudaswitch off "
                      "-p {prefix}' (conda-forge's)", prefix=env.prefix, version=state.version,
                      names=" ".join(p.name for p in cc.of(condaforge.COMPILER, condaforge.WRAPPER))),
                    [tr(t) for t in takes])]


def reach_findings(env, state, system) -> List[Finding]:
    """Everything above, for `doctor -n/-p`."""
    return python_hook_findings(env, state, system.windows) + conda_forge_findings(env, state, system)
