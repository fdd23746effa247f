"""Stale, modified or missing hooks and startup file, or a lib folder in front of torch's own CUDA wheels:
re-render everything from the recorded choice, as `cudaswitch use --refresh` does (with --no-ld-library-path
for the latter)."""

from __future__ import annotations

from typing import List, Optional

from cudaswitch.core.i18n import M
from cudaswitch.fix.plan import Change, Step

REFRESH = ("HOOKS_STALE", "PYTHON_HOOK_STALE", "SWITCH_NOT_IN_EFFECT")
NO_LD = ("LD_LIBRARY_PATH_OVER_WHEELS", "LIB_SHADOWED")
CODES = REFRESH + NO_LD


def paths(prefix: str) -> List[str]:
    """Every file `use --refresh` may write or remove: the hooks, the startup file in any site-packages, the state."""
    import os

    from cudaswitch.switching import hookfiles, pythonhook

    out = [str(p) for p in hookfiles.all_hook_paths(prefix)]
    for place in pythonhook.candidate_places(prefix):
        out += [os.path.join(prefix, *place.parts, n) for n in pythonhook.NAMES]
    return out + [os.path.join(prefix, "etc", "cudaswitch", "state.yaml")]


def plan(mine: List, env, system, findings) -> Optional[Step]:
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.discovery.environment import read_state

    if any(f.code == "TOOLKIT_MISSING" for f in findings):
        return None  # nothing to re-render from: the recorded toolkit is gone (advice names `use X.Y`)
    state = read_state(env)
    if state is None:
        return None
    no_ld = any(f.code in NO_LD for f in mine) and state.ld_library_path
    codes = [f.code for f in mine if f.code in REFRESH or no_ld]
    if not codes:
        return None
    import os

    changes = [Change("file", os.path.join(env.prefix, "etc", "conda", "{activate,deactivate}.d", "cudaswitch.*"),
                      after=M("rewritten from the recorded choice (CUDA {version}, {root})", version=state.version,
                              root=state.root)),
               Change("file", str(env.state_path), after=M("rewritten"))]
    if no_ld:
        libs = [e for e in _lib_entries(state.root, system)]
        changes.append(Change("variable", "LD_LIBRARY_PATH", M("{entries} first", entries=":".join(libs)),
                              M("left as the shell has it")))
    words = ["cudaswitch", "use", "--refresh"] + (["--no-ld-library-path"] if no_ld else []) + ["-p", env.prefix]
    return Step("refresh", codes, [f.cause for f in mine if f.code in codes], changes,
                for_user(words, system.environ, system.windows), {"no_ld": bool(no_ld)}, paths(env.prefix))


def _lib_entries(root: str, system) -> List[str]:
    from cudaswitch.discovery.toolkits import discover

    tk = next((t for t in discover(system).toolkits if t.root == root), None)
    if tk is None:
        return [root]
    from cudaswitch.switching.activation import changes_for

    return changes_for(tk, system, ld_library_path=True).prepend.get("LD_LIBRARY_PATH", []) or [root]


def apply(step: Step, env, system) -> None:
    from cudaswitch.discovery.toolkits import discover
    from cudaswitch.switching import switch

    choice = switch.choose(env, None, True, False if step.data.get("no_ld") else None)
    tk = switch.resolve_toolkit(discover(system), choice, env, system)
    switch.check_switchable(tk)
    switch.use(env, tk, choice, system)
