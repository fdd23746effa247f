"""`doctor`'s findings about how far an environment's switch reaches: the Python startup file
(switching/pythonhook.py), the Jupyter kernels that start the environment (discovery/kernelspecs.py) and conda-forge
CUDA packages living beside the switch (switching/condaforge.py). docs/guide/reach.md says which client gets the
switch through which mechanism."""

from __future__ import annotations

import os
from typing import List

from cudaswitch.checks.diagnosis import INFO, WARNING, Finding
from cudaswitch.core.i18n import Listed, M


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
                                               root=st.root or state.root, path=st.live + "/" + pythonhook.PTH),
                        "-", [st.live])]
    if not wanted or st.live is None:
        return []
    if st.stale:
        cause = M("the Python startup file is in {stale}, which no Python of this environment reads any more (Python "
                  "was upgraded); {live} has none, so a Python started without activation does not get the switch",
                  stale=Listed(st.stale), live=st.live)
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
    names = Listed(f"{p.name} {p.version}" for p in cc.packages)
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


def kernel_findings(env, state, system, dirs=None) -> List[Finding]:
    """The Jupyter kernelspecs (user and system data folders: `dirs`, default kernelspecs.data_dirs) that start
    this environment, whether they get the switch, and kernel.json `env` entries that set CUDA."""
    from cudaswitch.discovery import kernelspecs
    from cudaswitch.discovery.condaenvs import conda_root
    from cudaswitch.switching import pythonhook

    if dirs is None:
        dirs = kernelspecs.data_dirs(system.environ, system.windows, [conda_root(system), env.prefix])
    specs = kernelspecs.for_env(dirs, env.prefix, env.name)
    if not specs:
        return []
    listed = Listed(f"{s.name} ({s.path})" for s in specs)
    out: List[Finding] = []
    hooked = pythonhook.status(env.prefix, system.windows).in_place
    if state is not None and not hooked:
        out.append(Finding("KERNEL_WITHOUT_SWITCH", WARNING,
                           M("Jupyter kernels start this environment's Python without activation, and it has no "
                             "Python startup file, so they do not get CUDA {version}: {kernels}",
                             version=state.version, kernels=listed),
                           M("run `cudaswitch use --refresh --python-hook -p {prefix}`", prefix=env.prefix),
                           [s.path for s in specs]))
    elif not hooked:
        out.append(Finding("JUPYTER_KERNELS", INFO, M("Jupyter kernels that start this environment: {kernels}",
                                                      kernels=listed), "-", [s.path for s in specs]))
    else:
        # a kernel whose kernel.json sets CUDA does not get the switch (the startup file leaves it alone): it is
        # named by its own warning below, never under "they get the switch"
        getting = [s for s in specs if not s.cuda_env()]
        if getting:
            out.append(Finding("JUPYTER_KERNELS", INFO,
                               M("Jupyter kernels that start this environment (they get the switch through the "
                                 "Python startup file): {kernels}",
                                 kernels=Listed(f"{s.name} ({s.path})" for s in getting)),
                               "-", [s.path for s in getting]))
    for s in specs:
        cuda = s.cuda_env()
        if not cuda:
            continue
        values = Listed(f"{k}={v}" for k, v in cuda.items())
        literal = [k for k, v in cuda.items() if "${" in v or "$" in v]
        cause = M("kernel {name} ({path}) sets {values} in its env: that wins over the environment's switch (the "
                  "startup file leaves a CUDA_HOME it finds alone) and goes stale after the next 'cudaswitch use'",
                  name=s.name, path=s.path, values=values)
        if literal:
            cause = M("{cause}; jupyter_client leaves ${{VAR}} literally in place when the Jupyter server was started "
                      "without VAR, so {names} can be the text itself", cause=cause,
                      names=Listed(literal))
        out.append(Finding("KERNELSPEC_SETS_CUDA", WARNING, cause,
                           M("remove {names} from the env entry of {path}; the Python startup file gives the kernel "
                             "the environment's CUDA", names=Listed(cuda), path=s.path), [s.path]))
    return out


def later_script_findings(env, state, system) -> List[Finding]:
    """CUDA_SET_AFTER_SWITCH: a script of the user's that runs after cudaswitch's hook sets CUDA_HOME/CUDA_PATH, so
    the activated shell keeps its value rather than the switch's."""
    from cudaswitch.checks.activation_order import later_setters
    from cudaswitch.core.shells import POSIX_DEFAULT, SHELLS, windows_shells
    from cudaswitch.switching import condaforge

    if state is None:
        return []
    skip = condaforge.read(env.prefix, system.windows).flag_scripts
    out = []
    # on Windows the scripts of every shell that runs there (cmd.exe's and PowerShell's), elsewhere sh's
    kinds = windows_shells() if system.windows else [SHELLS[POSIX_DEFAULT]]
    for ext in (sh.ext for sh in kinds):
        for s in later_setters(env.prefix, ext, skip):
            out.append(Finding("CUDA_SET_AFTER_SWITCH", WARNING,
                               M("{script} runs after cudaswitch's hook (conda runs activate.d in code-point order) "
                                 "and sets {names}: the activated environment gets its value, not CUDA {version}",
                                 script=s.script, names=Listed(s.variables), version=state.version),
                               M("remove {names} from {script}, or rename it to sort before cudaswitch.{ext} (such "
                                 "as 00-{name})", names=Listed(s.variables), script=s.script, ext=ext,
                                 name=os.path.basename(s.script)), [s.script]))
    return out


def reach_findings(env, state, system) -> List[Finding]:
    """Everything above, for `doctor -n/-p`."""
    return (python_hook_findings(env, state, system.windows) + conda_forge_findings(env, state, system)
            + kernel_findings(env, state, system) + later_script_findings(env, state, system))
