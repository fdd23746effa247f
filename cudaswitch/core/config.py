"""The user config file (`config.yaml`) and the `CUDASWITCH_SEARCH_PATH` variable: extra places to look."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.system import System

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple


def config_path(system: System) -> Path:
    explicit = system.environ.get("CUDASWITCH_CONFIG")
    if explicit:
        return Path(explicit)
    return Path(user_dir(system, "config")) / "config.yaml"


# platformdirs' rule on Linux for the folders cudaswitch uses: $XDG_*_HOME when it is an absolute path, else
# ~/.local/share, ~/.config or ~/.cache. Every command needs one of them, platformdirs costs more to import than most
# commands take, so the common case is computed here; anything else (another OS, an odd value) is left to platformdirs.
_XDG = {"data": ("XDG_DATA_HOME", "~/.local/share"), "config": ("XDG_CONFIG_HOME", "~/.config"),
        "cache": ("XDG_CACHE_HOME", "~/.cache")}


def user_dir(system: System, kind: str) -> str:
    """platformdirs.user_{kind}_dir("cudaswitch") of this run, kind "data", "config" or "cache"."""
    var, default = _XDG[kind]
    env = system.environ
    xdg, home = env.get(var, ""), env.get("HOME", "")
    if (sys.platform.startswith("linux") and not hasattr(sys, "getandroidapilevel")
            and "ANDROID_DATA" not in env and (xdg == "" or (xdg.startswith("/") and xdg == xdg.strip()))
            and home.startswith("/")):
        return os.path.join(xdg or home.rstrip("/") + default[1:], "cudaswitch")
    import platformdirs

    return getattr(platformdirs, f"user_{kind}_dir")("cudaswitch")


def load_config(path: Path) -> Tuple[dict, List[str]]:
    """(settings, problems). A missing file is an empty config; a broken one is reported, never fatal."""
    try:
        from cudaswitch.core.trust import read_text

        text = read_text(path)
    except FileNotFoundError:
        return {}, []
    except UnicodeDecodeError as exc:
        return {}, [f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8, or fix or delete it"]
    except OSError as exc:
        return {}, [f"{path}: unreadable ({exc.strerror or exc}); fix its permissions or remove it"]
    if not text.strip():
        return {}, []
    from ruamel.yaml import YAML  # lazy: only when a YAML file is really read
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        why = " ".join(str(getattr(exc, "problem", None) or exc).split())  # ruamel's spans lines; errors are one
        return {}, [f"{path}:{where} is not valid YAML ({why}); fix or delete it"]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [f"{path}: expected a mapping such as 'search_paths: [/opt/cuda-12.1]'; fix or delete it"]
    return data, []


KNOWN_KEYS = ("search_paths",)


def unknown_keys(path: Path, data: dict) -> List[str]:
    """A warning per key cudaswitch does not read (`search_path:` for `search_paths:` would be silently ignored)."""
    out = []
    for key in data:
        if key not in KNOWN_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), KNOWN_KEYS, n=1)
            hint = M("did you mean {key!r}? ", key=close[0]) if close else ""
            out.append(M("{path}: unknown key {key!r} is ignored; {hint}known keys: {known}", path=path, key=str(key),
                         hint=hint, known=Listed(KNOWN_KEYS)))
    return out


def search_roots(system: System, warnings: Optional[List[str]] = None) -> Tuple[List[str], List[str]]:
    """Extra toolkit roots (or folders of toolkits): CUDASWITCH_SEARCH_PATH first, then config.yaml. Unknown keys
    are added to `warnings` when given."""
    roots = [p for p in system.environ.get("CUDASWITCH_SEARCH_PATH", "").split(os.pathsep) if p]
    path = config_path(system)
    data, problems = load_config(path)
    if warnings is not None:
        warnings.extend(unknown_keys(path, data))
    extra = data.get("search_paths", [])
    if isinstance(extra, str):
        extra = [extra]
    if not isinstance(extra, list) or not all(isinstance(p, str) for p in extra):
        problems.append(M("{path}: search_paths must be a list of folders; fix or delete it", path=path))
        extra = []
    roots.extend(os.path.expanduser(p) for p in extra)
    return roots, problems
