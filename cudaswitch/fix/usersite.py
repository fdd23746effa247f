"""TORCH_MIXED_INSTALL where the second torch is in the user site-packages (`pip install --user`), imported before
the environment's own. The user chooses which goes:

* `nousersite` (the default, and what `--yes` takes): the environment stops reading the user site, through
  conda's own variables for it (`PYTHONNOUSERSITE=1` in conda-meta/state, what `conda env config vars set`
  writes); nothing is removed, and other environments that use the user-site copy keep it;
* `remove`: the user-site torch, torchvision and torchaudio are uninstalled by pip, the tool that put them there
  (the environment's pip with the user site on, which removes the copy found first on sys.path: the user site's).

Either way the journal keeps what changes (the state file, or every file pip removes) so that undo puts it back.
A conda torch mixed with a pip torch in the environment itself is fix/condamixed.py's."""

from __future__ import annotations

import os
from typing import List, Optional

from cudaswitch.core.i18n import M, N_
from cudaswitch.fix.plan import Change, Step

CODES = ("TORCH_MIXED_INSTALL",)
VARIABLE = "PYTHONNOUSERSITE"
CHOICES = (("nousersite", N_("keep both; this environment stops reading the user site (PYTHONNOUSERSITE=1)")),
           ("remove", N_("remove the user-site copy with pip")))
DEFAULT = "nousersite"
NAMES = ("torch", "torchvision", "torchaudio")


def state_file(prefix: str) -> str:
    return os.path.join(prefix, "conda-meta", "state")


def _user_site(finding, prefix: str) -> Optional[str]:
    """The user site-packages the finding's first torch lies in, when the second is the environment's."""
    folders = finding.details or []
    top = os.path.realpath(prefix) + os.sep
    if len(folders) < 2 or os.path.realpath(folders[0]).startswith(top):
        return None
    if not os.path.realpath(folders[1]).startswith(top) or os.path.basename(folders[0]) != "torch":
        return None
    return os.path.dirname(folders[0])


def plan(mine: List, env, system, findings, choice: str = DEFAULT) -> Optional[Step]:
    from cudaswitch.core.shellquote import for_user

    found = next(((f, site) for f in mine for site in [_user_site(f, env.prefix)] if site), None)
    if found is None:
        return None
    f, site = found
    choices = [(key, label) for key, label in CHOICES]
    if choice == "nousersite":
        before = _current(env.prefix)
        changes = [Change("variable", VARIABLE, before, "1"),
                   Change("file", state_file(env.prefix), after=M("conda's variables for this environment"))]
        words = ["conda", "env", "config", "vars", "set", f"{VARIABLE}=1", "-p", env.prefix]
        return Step("usersite", ["TORCH_MIXED_INSTALL"], [f.cause], changes,
                    for_user(words, system.environ, system.windows),
                    {"choice": choice, "choices": choices, "site": site}, [state_file(env.prefix)])
    from cudaswitch.fix import pip

    dists = [dict(d, name=name) for name in NAMES for d in pip.installed(env.prefix, name, sites=[site])]
    paths = [p for d in dists for p in pip.record_files(site, d["folder"])]
    changes = [Change("package", f"{d['name']} ({site})", d["version"], M("removed")) for d in dists]
    names = [d["name"] for d in dists]
    words = [env.python, "-m", "pip", "uninstall", "--yes", *names]
    return Step("usersite", ["TORCH_MIXED_INSTALL"], [f.cause], changes,
                for_user(words, system.environ, system.windows),
                {"choice": choice, "choices": choices, "site": site, "names": names,
                 "packages": [{"site": site, "names": names, "kept": [d["folder"] for d in dists]}]}, paths)


def _current(prefix: str) -> Optional[str]:
    from cudaswitch.discovery.activation_scripts import environment_vars

    s = environment_vars(prefix).get(VARIABLE)
    return s.value if s is not None else None


def apply(step: Step, env, system) -> None:
    if step.data["choice"] == "nousersite":
        _set_variable(env.prefix)
        return
    from cudaswitch.fix import pip

    # -E rather than -I: the user site on (pip removes the copy found first, the user site's), PYTHON* variables
    # still ignored; from `/`, so no current-folder code
    pip.run(env, ["uninstall", "--yes", *step.data["names"]], system, user_site=True)


def _set_variable(prefix: str) -> None:
    """conda-meta/state with env_vars.PYTHONNOUSERSITE = "1", every other key as it was (conda's format)."""
    import json

    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.trust import read_json, write_file

    path = state_file(prefix)
    data = {}
    if os.path.exists(path):
        try:
            data = read_json(path, {"env_vars": ({str: (str, int, float, bool, type(None))}, type(None))})
        except (OSError, ValueError) as exc:
            raise CudaswitchError(M("{path} is not conda's state file ({why}); nothing was changed", path=path,
                                    why=str(exc))) from None
        if not isinstance(data, dict):
            raise CudaswitchError(M("{path} is not conda's state file ({why}); nothing was changed", path=path,
                                    why=type(data).__name__))
    data["env_vars"] = dict(data.get("env_vars") or {}, **{VARIABLE: "1"})
    write_file(path, json.dumps(data, indent=2) + "\n")
