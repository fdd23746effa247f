"""Jupyter kernelspecs that start an environment's Python, read from the Jupyter data folders (passed in).

A Jupyter server started anywhere (JupyterLab in base, a system Jupyter, VS Code) starts a kernel by running the
`argv` of its `kernels/<name>/kernel.json` with the server's own environment plus the spec's `env` entries, which
jupyter_client expands with `string.Template.safe_substitute` (a `${VAR}` the server lacks stays literal). No
activation runs, so the kernel gets the switch only through the environment's Python startup file
(switching/pythonhook.py), and an `env` entry that sets CUDA_HOME overrides it (the startup file leaves a CUDA_HOME
it finds alone) and goes stale after the next `cudaswitch use`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

CUDA_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")
LIST_VARS = ("PATH", "LD_LIBRARY_PATH")


@dataclass
class Kernelspec:
    name: str
    path: str  # the kernel.json
    argv: List[str]
    env: Dict[str, str] = field(default_factory=dict)

    def cuda_env(self) -> Dict[str, str]:
        """The `env` entries that decide which CUDA the kernel sees: CUDA_* always, PATH/LD_LIBRARY_PATH when they
        name a CUDA folder."""
        return {k: v for k, v in self.env.items()
                if k.upper() in CUDA_VARS or (k.upper() in LIST_VARS and "cuda" in v.lower())}

    def to_json(self) -> dict:
        return {"name": self.name, "path": self.path, "argv": self.argv, "env": self.env}


def data_dirs(environ, windows: bool, conda_roots: List[str] = ()) -> List[str]:
    """Jupyter's data folders in its order (jupyter_core.paths.jupyter_path): JUPYTER_PATH, the user's
    (JUPYTER_DATA_DIR, else %APPDATA%\\jupyter / $XDG_DATA_HOME/jupyter or ~/.local/share/jupyter), the share/jupyter
    of the Pythons a Jupyter may run from (conda's base and the environment, given), then the system's
    (%PROGRAMDATA%\\jupyter; /usr/local/share/jupyter, /usr/share/jupyter)."""
    sep = ";" if windows else ":"
    out = [p for p in (environ.get("JUPYTER_PATH") or "").split(sep) if p]
    if environ.get("JUPYTER_DATA_DIR"):
        out.append(environ["JUPYTER_DATA_DIR"])
    elif windows:
        if environ.get("APPDATA"):
            out.append(os.path.join(environ["APPDATA"], "jupyter"))
    else:
        home = environ.get("HOME")
        xdg = environ.get("XDG_DATA_HOME") or (os.path.join(home, ".local", "share") if home else None)
        if xdg:
            out.append(os.path.join(xdg, "jupyter"))
    out += [os.path.join(r, "share", "jupyter") for r in conda_roots if r]
    if windows:
        if environ.get("PROGRAMDATA"):
            out.append(os.path.join(environ["PROGRAMDATA"], "jupyter"))
    else:
        out += ["/usr/local/share/jupyter", "/usr/share/jupyter"]
    seen, unique = set(), []
    for d in out:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def read_all(dirs: List[str]) -> List[Kernelspec]:
    """Every readable kernelspec under <dir>/kernels; the first folder with a name wins, as in jupyter_client."""
    from cudaswitch.core import readin, trust

    found: Dict[str, Kernelspec] = {}
    for d in dirs:
        kernels = Path(d, "kernels")
        for name in readin.names(kernels, []):
            if name.lower() in found:
                continue
            raw = readin.read(kernels, [name], "kernel.json")
            try:
                spec = trust.parse_json(raw, kernels / name / "kernel.json") if raw else None
            except (UnicodeDecodeError, ValueError):
                continue
            if not isinstance(spec, dict) or not isinstance(spec.get("argv"), list):
                continue
            env = spec.get("env") if isinstance(spec.get("env"), dict) else {}
            found[name.lower()] = Kernelspec(name, str(kernels / name / "kernel.json"),
                                             [str(a) for a in spec["argv"]],
                                             {str(k): str(v) for k, v in env.items()})
    return list(found.values())


def _norm(p: str) -> str:
    return os.path.normcase(os.path.normpath(p))


def starts(spec: Kernelspec, prefix: str, name: Optional[str] = None) -> bool:
    """Whether the kernel runs a Python of the environment: argv[0] in its bin/Scripts/root (the interpreter or a
    link to it), or a launcher given the prefix (`conda run -p PREFIX`, nb_conda_kernels' runner) or its name
    (`conda run -n NAME`)."""
    if not spec.argv:
        return False
    root = _norm(prefix)
    first = spec.argv[0]
    if os.path.isabs(first):
        folder = os.path.dirname(_norm(first))
        if folder in (root, _norm(os.path.join(prefix, "bin")), _norm(os.path.join(prefix, "Scripts"))):
            return True
        try:
            real = _norm(os.path.realpath(first))
            if real.startswith(_norm(os.path.realpath(prefix)) + os.sep) and \
                    os.path.basename(real).lower().startswith("python"):
                return True
        except OSError:
            pass
    args = spec.argv[1:]
    if any(_norm(a) == root for a in args if os.path.isabs(a)):
        return True
    for flag, value in zip(args, args[1:]):
        if name and flag in ("-n", "--name") and value == name:
            return True
    return False


def for_env(dirs: List[str], prefix: str, name: Optional[str] = None) -> List[Kernelspec]:
    return [s for s in read_all(dirs) if starts(s, prefix, name)]
