"""conda environments: finding a prefix from -n/-p or the active shell, and cudaswitch's state file inside it."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List, Optional

from cudaswitch.errors import CudaswitchError, UsageError
from cudaswitch.system import System

STATE_FILE = ("etc", "cudaswitch", "state.yaml")


@dataclass
class CondaEnv:
    prefix: str
    name: str
    is_base: bool
    windows: bool = False

    @property
    def python(self) -> str:
        return os.path.join(self.prefix, "python.exe") if self.windows else os.path.join(self.prefix, "bin", "python")

    @property
    def state_path(self) -> Path:
        return Path(self.prefix).joinpath(*STATE_FILE)

    def to_json(self) -> dict:
        return {**asdict(self), "python": self.python}


def conda_root(system: System) -> Optional[str]:
    """The base environment: from CONDA_EXE/_CONDA_ROOT (set by conda's shell hook), else CONDA_PREFIX_1 or MAMBA_ROOT_PREFIX."""
    env = system.environ
    if env.get("_CONDA_ROOT"):
        return env["_CONDA_ROOT"]
    exe = env.get("CONDA_EXE")
    if exe:
        p = Path(exe).parent
        return str(p.parent if p.name.lower() in ("bin", "scripts", "condabin") else p)
    for var in ("MAMBA_ROOT_PREFIX", "CONDA_PREFIX_1"):
        if env.get(var):
            return env[var]
    return None


def envs_dirs(system: System) -> List[str]:
    """conda's envs_dirs, in conda's order (cudaswitch/condaenvs.py)."""
    from cudaswitch.condaenvs import layout

    return layout(system).envs_dirs


def site_packages(prefix: str) -> List[str]:
    """The site-packages folders of an environment: lib/python3.X/site-packages (POSIX), Lib\\site-packages (Windows)."""
    out = [str(p) for p in sorted(Path(prefix).glob("lib/python3*/site-packages"))]
    win = os.path.join(prefix, "Lib", "site-packages")
    if os.path.isdir(win):
        out.append(win)
    return out


def _is_env(prefix: str) -> bool:
    return os.path.isdir(os.path.join(prefix, "conda-meta"))


def _make(prefix: str, system: System) -> CondaEnv:
    prefix = os.path.abspath(prefix)
    root = conda_root(system)
    is_base = bool(root) and os.path.normcase(os.path.abspath(root)) == os.path.normcase(prefix)
    name = "base" if is_base else os.path.basename(prefix.rstrip("\\/"))
    return CondaEnv(prefix=prefix, name=name, is_base=is_base, windows=system.windows)


def resolve_env(system: System, name: Optional[str] = None, prefix: Optional[str] = None,
                command: str = "use 11.8") -> CondaEnv:
    """The environment -n/-p names, else the active one (CONDA_PREFIX). Errors say the exact command to run."""
    if name and prefix:
        raise UsageError("give either -n NAME or -p PREFIX, not both")
    if prefix:
        prefix = os.path.abspath(os.path.expanduser(prefix))
        if not os.path.isdir(prefix):
            raise UsageError(f"no such environment folder: {prefix}")
        if not _is_env(prefix):
            raise UsageError(f"{prefix} is not a conda environment (it has no conda-meta folder)")
        return _make(prefix, system)
    if name:
        if name == "base":
            root = conda_root(system)
            if root and _is_env(root):
                return _make(root, system)
            raise UsageError("cannot find the base environment: run this from a shell where 'conda activate' works")
        from cudaswitch.condaenvs import layout, locate

        lay = layout(system)
        found = locate(name, system, lay)
        if found:
            return _make(found, system)
        tried = [os.path.join(d, name) for d in lay.envs_dirs]
        broken = "".join(f"; {p}" for p in lay.problems)  # e.g. a .condarc conda cannot parse either
        raise UsageError(f"no conda environment named {name!r} (looked in {', '.join(tried)}); "
                         f"'conda env list' shows the names, or use -p PREFIX{broken}")
    current = system.environ.get("CONDA_PREFIX")
    if current and _is_env(current):
        return _make(current, system)
    raise UsageError(f"no conda environment is active: run 'conda activate NAME' first, "
                     f"or 'cudaswitch {command} -n NAME' (or -p PREFIX)")


# ---- state file ------------------------------------------------------------------------------------------------

@dataclass
class SwitchState:
    """What `cudaswitch use` chose for an environment."""

    selector: str
    version: str
    root: str
    time: str
    cudaswitch_version: str
    ld_library_path: bool = False
    files: List[str] = field(default_factory=list)  # what `use` wrote (relative to the prefix): `off` removes these
    created_dirs: List[str] = field(default_factory=list)  # hook folders `use` created: `off` removes them if empty
    smoke_status: Optional[str] = None  # the last smoke test with this choice (`cudaswitch envs` shows it)
    smoke_code: Optional[str] = None
    smoke_time: Optional[str] = None

    def to_json(self) -> dict:
        return asdict(self)


def read_state(env: CondaEnv) -> Optional[SwitchState]:
    from cudaswitch.fsutil import load_yaml

    try:
        data = load_yaml(env.state_path)
    except Exception as exc:  # ruamel's errors, OSError
        why = " ".join(str(exc).split())  # ruamel's messages span lines; the CLI prints one
        raise CudaswitchError(f"{env.state_path}: unreadable state file ({why}); 'cudaswitch off' removes it, "
                              f"'cudaswitch use SELECTOR' rewrites it") from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise CudaswitchError(f"{env.state_path}: not a cudaswitch state file; run 'cudaswitch off' to reset it")
    fields = SwitchState.__dataclass_fields__
    try:
        return SwitchState(**{k: data[k] for k in fields if k in data})
    except TypeError:
        raise CudaswitchError(f"{env.state_path}: incomplete state file; run 'cudaswitch use SELECTOR' again") from None


def write_state(env: CondaEnv, state: SwitchState) -> None:
    from cudaswitch.fsutil import dump_yaml

    dump_yaml(env.state_path, state.to_json())


def record_smoke(env: CondaEnv, status: str, code: Optional[str]) -> bool:
    """Keep the last smoke result in the state file of a switched environment (an unswitched one has none to
    keep it in: writing one would make it look switched)."""
    import datetime

    try:
        state = read_state(env)
    except CudaswitchError:
        return False
    if state is None:
        return False
    state.smoke_status, state.smoke_code = status, code
    state.smoke_time = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    write_state(env, state)
    return True


def clear_state(env: CondaEnv) -> bool:
    try:
        env.state_path.unlink()
    except FileNotFoundError:
        return False
    try:
        env.state_path.parent.rmdir()
    except OSError:
        pass
    return True
