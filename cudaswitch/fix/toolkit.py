"""TOOLKIT_MISSING (the toolkit `use` chose for the environment is gone, so its hooks set no CUDA) and the
CUDA_PATH_MISSING / CUDA_HOME it leaves naming that folder: switch to the nearest installed toolkit the
environment's torch accepts (its CUDA major, as torch.utils.cpp_extension demands), as `cudaswitch use ROOT` does.
A variable set outside cudaswitch (a startup file, setx) is the user's: it stays advice, with doctor's fix."""

from __future__ import annotations

from typing import List, Optional

from cudaswitch.core.i18n import M
from cudaswitch.fix.plan import Change, Step

CODES = ("TOOLKIT_MISSING", "CUDA_PATH_MISSING")


def nearest(toolkits: List, old_version: str, torch_cuda: Optional[str]):
    """The toolkit to switch to: of those with a bin folder (and of torch's CUDA major when torch has one), the
    one of the old toolkit's major first, then the closest version, the newer of two as close."""
    from cudaswitch.data import knowledge

    old = knowledge.vtuple(old_version)[:2] or (0, 0)
    fits = [t for t in toolkits if t.bin_dirs and knowledge.vtuple(t.version)
            and (not torch_cuda or knowledge.same_major(t.version, torch_cuda))]

    def rank(t):
        v = knowledge.vtuple(t.version)[:2] + (0,)
        return (v[0] != old[0], abs((v[0] * 100 + v[1]) - (old[0] * 100 + old[1])), [-n for n in v])

    return min(fits, key=rank, default=None)


def plan(mine: List, env, system, findings) -> Optional[Step]:
    import os

    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.discovery.environment import read_state
    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.fix.refresh import paths

    state = read_state(env)
    if state is None or not any(f.code == "TOOLKIT_MISSING" for f in mine):
        return None  # nothing cudaswitch switched: CUDA_PATH / CUDA_HOME are the user's own
    # only a variable that names the vanished toolkit is the switch's; another one was set outside cudaswitch
    ours = [f for f in mine if f.code == "TOOLKIT_MISSING" or state.root in str(f.cause)]
    tk = nearest(discover(system).toolkits, state.version, torch_installs(env.prefix).get("cuda"))
    if tk is None:
        return None
    changes = [Change("variable", var, state.root, tk.root) for var in ("CUDA_HOME", "CUDA_PATH")]
    changes.append(Change("file", os.path.join(env.prefix, "etc", "conda", "{activate,deactivate}.d",
                                               "cudaswitch.*"),
                          after=M("written for CUDA {version} ({root})", version=tk.version, root=tk.root)))
    words = ["cudaswitch", "use", tk.root, "-p", env.prefix]
    return Step("toolkit", [f.code for f in ours], [f.cause for f in ours], changes,
                for_user(words, system.environ, system.windows),
                {"root": tk.root, "ld": bool(state.ld_library_path)}, paths(env.prefix))


def apply(step: Step, env, system) -> None:
    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.switching import switch

    choice = switch.choose(env, step.data["root"], False, step.data["ld"] or None)
    tk = switch.resolve_toolkit(discover(system), choice, env, system)
    switch.check_switchable(tk)
    switch.use(env, tk, choice, system)
