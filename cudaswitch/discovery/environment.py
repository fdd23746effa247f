"""conda environments: finding a prefix from -n/-p or the active shell, and cudaswitch's state file inside it."""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List, Optional

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.system import System
from cudaswitch.discovery.condaenvs import base_by_files, conda_root

STATE_FILE = ("etc", "cudaswitch", "state.yaml")


@dataclass
class CondaEnv:
    prefix: str
    name: str
    is_base: bool
    windows: bool = False
    base_unknown: bool = False  # its files neither show nor rule out a base environment (condaenvs.base_by_files)
    base_seen: List[str] = field(default_factory=list)  # the files that made it a base, or left it open

    @property
    def python(self) -> str:
        return os.path.join(self.prefix, "python.exe") if self.windows else os.path.join(self.prefix, "bin", "python")

    @property
    def state_path(self) -> Path:
        return Path(self.prefix).joinpath(*STATE_FILE)

    def to_json(self) -> dict:
        rec = {k: v for k, v in asdict(self).items() if k not in ("base_unknown", "base_seen")}
        return {**rec, "python": self.python}


def envs_dirs(system: System) -> List[str]:
    """conda's envs_dirs, in conda's order (cudaswitch/discovery/condaenvs.py)."""
    from cudaswitch.discovery.condaenvs import layout

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
    # the shell's variables are only a hint (CONDA_EXE is unset in a shell conda's hook never ran in): the prefix's
    # own files decide too
    by_files = base_by_files(prefix)
    is_base = (bool(root) and os.path.normcase(os.path.abspath(root)) == os.path.normcase(prefix)) or \
        by_files.is_base is True
    name = "base" if is_base else os.path.basename(prefix.rstrip("\\/"))
    return CondaEnv(prefix=prefix, name=name, is_base=is_base, windows=system.windows,
                    base_unknown=not is_base and by_files.is_base is None, base_seen=by_files.seen)


def resolve_env(system: System, name: Optional[str] = None, prefix: Optional[str] = None,
                command: str = "use 11.8") -> CondaEnv:
    """The environment -n/-p names, else the active one (CONDA_PREFIX). Errors say the exact command to run."""
    if name and prefix:
        raise UsageError(N_("give either -n NAME or -p PREFIX, not both"))
    if prefix:
        if system.root is not None and system.windows and re.match(r"^[A-Za-z]:[\\/]", prefix):
            # CUDASWITCH_FS_ROOT stands for the drives: C:\envs\torch is <root>/C/envs/torch, not a host path
            prefix = str(system.local(prefix))
        prefix = os.path.abspath(os.path.expanduser(prefix))
        if not os.path.isdir(prefix):
            raise UsageError(M("no such environment folder: {prefix}", prefix=prefix))
        if not _is_env(prefix):
            raise UsageError(M("{prefix} is not a conda environment (it has no conda-meta folder)", prefix=prefix))
        return _make(prefix, system)
    if name:
        if name == "base":
            root = conda_root(system)
            if root and _is_env(root):
                return _make(root, system)
            raise UsageError(N_("cannot find the base environment: run this from a shell where 'conda activate' works"))
        from cudaswitch.discovery.condaenvs import layout, locate

        lay = layout(system)
        found = locate(name, system, lay)
        if found:
            return _make(found, system)
        tried = [os.path.join(d, name) for d in lay.envs_dirs]
        broken = "".join(f"; {p}" for p in lay.problems)  # e.g. a .condarc conda cannot parse either
        raise UsageError(M("no conda environment named {name!r} (looked in {tried}); "
                           "'conda env list' shows the names, or use -p PREFIX{broken}",
                           name=name, tried=Listed(tried), broken=broken))
    current = system.environ.get("CONDA_PREFIX")
    if current and _is_env(current):
        return _make(current, system)
    raise UsageError(M("no conda environment is active: run 'conda activate NAME' first, "
                       "or 'cudaswitch {command} -n NAME' (or -p PREFIX)", command=command))


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
    python_hook: Optional[bool] = None  # the Python startup file (switching/pythonhook.py) was asked for; None: not recorded

    def to_json(self) -> dict:
        return asdict(self)


def _state_dir(env: CondaEnv, create: bool = False) -> Optional[int]:
    """etc/cudaswitch of the environment, opened without following a link below the prefix; None if missing."""
    from cudaswitch.core import trust

    try:
        return trust.open_dir(Path(env.prefix), list(STATE_FILE[:-1]), create=create)
    except FileNotFoundError:
        return None


def check_state_place(env: CondaEnv) -> None:
    """Raise now what write_state would raise later (a link or a file in place of etc/cudaswitch)."""
    from cudaswitch.core import trust

    if trust.POSIX:
        fd = _state_dir(env)
        if fd is not None:
            os.close(fd)


def read_state(env: CondaEnv) -> Optional[SwitchState]:
    from ruamel.yaml import YAML

    from cudaswitch.core import trust

    if not trust.POSIX:
        from cudaswitch.core.fsutil import load_yaml

        loader = lambda: load_yaml(env.state_path)  # noqa: E731
    else:
        def loader():
            fd = _state_dir(env)
            if fd is None:
                return None
            try:
                if trust.regular_stat(fd, STATE_FILE[-1]) is None:
                    return None
                raw = trust.read_regular(fd, STATE_FILE[-1])
            finally:
                os.close(fd)
            if raw is None:
                raise OSError("not a regular file (a link, FIFO or device)")
            return YAML(typ="safe").load(raw.decode("utf-8"))
    try:
        data = loader()
    except CudaswitchError:
        raise
    except Exception as exc:  # ruamel's errors, OSError, UnicodeDecodeError
        why = " ".join(str(exc).split())  # ruamel's messages span lines; the CLI prints one
        raise CudaswitchError(M("{path}: unreadable state file ({why}); 'cudaswitch off' removes it, "
                                "'cudaswitch use SELECTOR' rewrites it", path=env.state_path, why=why)) from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise CudaswitchError(M("{path}: not a cudaswitch state file; run 'cudaswitch off' to reset it",
                                path=env.state_path))
    fields = SwitchState.__dataclass_fields__
    try:
        state = SwitchState(**{k: data[k] for k in fields if k in data})
    except TypeError:
        raise CudaswitchError(M("{path}: incomplete state file; run 'cudaswitch use SELECTOR' again",
                                path=env.state_path)) from None
    _check_state(env, state)
    return state


def _check_state(env: CondaEnv, state: SwitchState) -> None:
    """Every value is of the type cudaswitch writes, and the lists name only the files and folders `use` writes:
    the state file lies in the environment, where its owner (or anyone, in a shared one) can edit it."""
    from cudaswitch.discovery.envfiles import HOOK_DIRS, is_written_file

    texts = (state.selector, state.version, state.root, state.time, state.cudaswitch_version)
    ok = (all(isinstance(t, str) for t in texts) and isinstance(state.ld_library_path, bool)
          and state.python_hook in (None, True, False)
          and isinstance(state.files, list)
          and all(isinstance(f, str) and is_written_file(f) for f in state.files)
          and isinstance(state.created_dirs, list)
          and all(isinstance(d, str) and d in HOOK_DIRS for d in state.created_dirs))
    if not ok:
        raise CudaswitchError(M("{path}: not a state file cudaswitch wrote (it names other files or folders, "
                                "or values of the wrong type); 'cudaswitch off' removes it, 'cudaswitch use SELECTOR' "
                                "rewrites it", path=env.state_path))


def write_state(env: CondaEnv, state: SwitchState) -> None:
    import io

    from ruamel.yaml import YAML

    from cudaswitch.core import trust
    from cudaswitch.core.fsutil import dump_yaml

    if not trust.POSIX:
        dump_yaml(env.state_path, state.to_json())
        return
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    buf = io.StringIO()
    yaml.dump(state.to_json(), buf)
    fd = _state_dir(env, create=True)
    try:
        trust.write_at(fd, STATE_FILE[-1], buf.getvalue().encode("utf-8"))
    finally:
        os.close(fd)


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
    from cudaswitch.core import trust

    if not trust.POSIX:
        try:
            trust.remove(env.state_path)
        except FileNotFoundError:
            return False
        try:
            trust.remove_dir(env.state_path.parent)
        except OSError:
            pass
        return True
    try:
        fd = _state_dir(env)
    except CudaswitchError:
        return False  # a link in place of etc/cudaswitch: not ours, not followed
    if fd is None:
        return False
    try:
        removed = trust.unlink_at(fd, STATE_FILE[-1])
    finally:
        os.close(fd)
    try:
        parent = trust.open_dir(Path(env.prefix), list(STATE_FILE[:-2]))
    except (OSError, CudaswitchError):
        return removed
    try:
        trust.remove_dir(STATE_FILE[-2], dir_fd=parent)
    except OSError:
        pass
    finally:
        os.close(parent)
    return removed
