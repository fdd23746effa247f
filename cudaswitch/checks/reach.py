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


def reach_findings(env, state, system) -> List[Finding]:
    """Everything above, for `doctor -n/-p`."""
    return python_hook_findings(env, state, system.windows)
