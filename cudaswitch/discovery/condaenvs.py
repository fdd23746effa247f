"""Where conda keeps environments, worked out exactly as conda does (docs/design/conda-envs.md).

conda (26.7.1, the version the tests check) reads `envs_dirs` from every `.condarc` on its search path
(conda/base/constants.py SEARCH_PATH), merges the lists with later files first (conda/common/configuration.py
SequenceParameter.merge, `#!final`, `#!top`, `#!bottom`), puts CONDA_ENVS_DIRS / CONDA_ENVS_PATH in front of them,
and appends `<root>/envs` and `~/.conda/envs` (root first when the root prefix is writable: conda/base/context.py
mockable_context_envs_dirs). `-n NAME` is the first of those folders holding a folder NAME
(context.locate_prefix_by_name); the environments conda lists are the ones recorded in `~/.conda/environments.txt`
(every user's when run as root), plus every environment inside an envs dir, plus the root
(conda/core/envs_manager.py list_all_known_prefixes).

Inside conda's own Python, conda itself is asked (`conda.base.context`), so a future conda that changes the rules
is still followed there.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
import sys
from pathlib import Path

from cudaswitch.core.i18n import M
from cudaswitch.core.record import Record
from cudaswitch.core.system import System
from cudaswitch.core.trust import read_text

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Tuple

_POSIX_SYSTEM = ("/etc/conda/.condarc", "/etc/conda/condarc", "/etc/conda/condarc.d/",
                 "/var/lib/conda/.condarc", "/var/lib/conda/condarc", "/var/lib/conda/condarc.d/")
_WINDOWS_SYSTEM = ("C:/ProgramData/conda/.condarc", "C:/ProgramData/conda/condarc", "C:/ProgramData/conda/condarc.d")
_USER = ("$CONDA_ROOT/.condarc", "$CONDA_ROOT/condarc", "$CONDA_ROOT/condarc.d/",
         "$XDG_CONFIG_HOME/conda/.condarc", "$XDG_CONFIG_HOME/conda/condarc", "$XDG_CONFIG_HOME/conda/condarc.d/",
         "~/.config/conda/.condarc", "~/.config/conda/condarc", "~/.config/conda/condarc.d/",
         "~/.conda/.condarc", "~/.conda/condarc", "~/.conda/condarc.d/",
         "~/.condarc",
         "$CONDA_PREFIX/.condarc", "$CONDA_PREFIX/condarc", "$CONDA_PREFIX/condarc.d/",
         "$CONDARC")
_RX_VAR = re.compile(r"\$(?P<named>[_a-z][_a-z0-9]*)|\$\{(?P<braced>[_a-z][_a-z0-9]*)\}|%(?P<padded>[_a-z][_a-z0-9]*)%",
                     re.I)


class CondaLayout(Record):
    """What conda would answer: `conda info --json`'s root_prefix, envs_dirs, config_files."""

    _fields = ("root_prefix", "envs_dirs", "config_files", "problems", "source")

    def __init__(self, root_prefix: Optional[str], envs_dirs: List[str], config_files: Optional[List[str]] = None,
                 problems: Optional[List[str]] = None, source: str = "files") -> None:
        self.root_prefix = root_prefix
        self.envs_dirs = envs_dirs
        self.config_files = [] if config_files is None else config_files
        self.problems = [] if problems is None else problems  # condarc files conda would ignore too, one line each
        self.source = source  # "files": read as conda reads them; "conda": asked conda.base.context

    def to_json(self) -> dict:
        return {"root_prefix": self.root_prefix, "envs_dirs": self.envs_dirs, "config_files": self.config_files,
                "problems": self.problems, "source": self.source}


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


class BaseVerdict(Record):
    """Whether a prefix is a base (root) environment, from its own files: True, False, or None when they do not
    tell; `seen` names what was found, for the question `use` asks."""

    _fields = ("is_base", "seen")

    def __init__(self, is_base: Optional[bool], seen: List[str]) -> None:
        self.is_base = is_base
        self.seen = seen


def base_by_files(prefix: str) -> BaseVerdict:
    """A base environment is one conda is installed in: `conda-meta/history` (every environment has it) plus conda
    itself (its package record `conda-meta/conda-<version>-<build>.json`, the `conda` package in site-packages, or
    the `conda` program in bin/, condabin/ or Scripts/). `condabin/` and `envs/` are only found in a base, but not in
    every one (a pip-installed conda has neither), so either of them without conda itself leaves it open, as does a
    folder that cannot be listed. Reads folder listings only, no file's contents."""
    j = os.path.join
    try:
        meta = os.listdir(j(prefix, "conda-meta"))
    except OSError:
        return BaseVerdict(None, [])
    seen: List[str] = []
    for rel in ("condabin", "envs"):
        if os.path.isdir(j(prefix, rel)):
            seen.append(rel + "/")
    record = next((n for n in sorted(meta) if re.match(r"conda-\d[^-]*-[^-]+\.json$", n)), None)
    conda = [f"conda-meta/{record}"] if record else []
    for rel in ("bin/conda", "condabin/conda", "Scripts/conda.exe", "condabin/conda.bat"):
        if os.path.isfile(j(prefix, *rel.split("/"))):
            conda.append(rel)
    for sp in [*Path(prefix).glob("lib/python3*/site-packages"), Path(prefix, "Lib", "site-packages")]:
        if os.path.isfile(sp / "conda" / "__init__.py"):
            conda.append(str((sp / "conda").relative_to(prefix)).replace(os.sep, "/") + "/")
    if "history" not in meta:
        return BaseVerdict(None if seen or conda else False, seen + conda)
    if conda:
        return BaseVerdict(True, ["conda-meta/history"] + seen + conda)
    return BaseVerdict(None if seen else False, ["conda-meta/history"] + seen)


def search_path(system: System) -> Tuple[str, ...]:
    return (_WINDOWS_SYSTEM if system.windows else _POSIX_SYSTEM) + _USER


def _expandvars(text: str, env: Mapping[str, str]) -> str:
    """conda's custom_expandvars: $X, ${X} and %X% from the environment; unknown names stay as written."""
    if "$" not in text and "%" not in text:
        return text
    return _RX_VAR.sub(lambda m: env.get(m.group("named") or m.group("braced") or m.group("padded"), m.group()),
                       text)


def _home(system: System) -> str:
    env = system.environ
    if system.windows:
        return env.get("USERPROFILE") or env.get("HOME") or os.path.expanduser("~")
    return env.get("HOME") or os.path.expanduser("~")


def _pm(system: System):
    """The path rules of the OS cudaswitch looks at (a Windows layout can be examined on Linux)."""
    return ntpath if system.windows else posixpath


def _expand(path: str, system: System) -> str:
    """conda.common.path.expand: variables, `~`, absolute."""
    path = _expandvars(path, system.environ)
    if path == "~" or path.startswith(("~/", "~\\")):
        path = _home(system) + path[1:]
    pm = _pm(system)
    return pm.normpath(path) if pm.isabs(path) else os.path.abspath(path)


def _condarc_env(system: System, root: Optional[str]) -> dict:
    env = dict(system.environ)
    if not env.get("CONDA_ROOT") and root:
        env["CONDA_ROOT"] = root  # conda/__init__.py sets it to its own prefix when unset
    if not env.get("CONDA_PREFIX") and root:
        env["CONDA_PREFIX"] = root  # conda templates it with its default prefix: the active env, else the root
    return env


def condarc_files(system: System, root: Optional[str] = None) -> List[str]:
    """Every .condarc conda reads, in its order: a file named .condarc/condarc or *.yml/*.yaml, or the *.yml and
    *.yaml files of a condarc.d folder (sorted by name); each file once."""
    env = _condarc_env(system, root)
    out: List[str] = []
    for entry in search_path(system):
        text = _expandvars(entry, env)
        if text.startswith("~"):
            text = _home(system) + text[1:]
        if "$" in text or "%" in text or not text:
            continue  # an unset variable: conda's stat() of the literal path fails the same way
        text = str(system.pure(text))  # as conda's Path() spells it: C:\ProgramData\conda\.condarc on Windows
        local = system.local(text)
        if os.path.isfile(local):  # os.path's: pathlib's raise where a folder on the way is closed to this user
            if local.name in (".condarc", "condarc") or local.suffix in (".yml", ".yaml"):
                out.append(text)
        elif os.path.isdir(local):
            try:
                names = sorted(e.name for e in os.scandir(local) if e.is_file())
            except OSError:
                continue
            out.extend(system.join(text, n) for n in names if os.path.splitext(n)[1] in (".yml", ".yaml"))
    seen, unique = set(), []
    for f in out:
        key = _pm(system).normcase(_pm(system).normpath(f))
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def _flag(comment) -> Optional[str]:
    if comment is None:
        return None
    text = getattr(comment, "value", comment)
    text = str(text).strip().strip("!#").strip() if text else ""
    return text if text in ("final", "top", "bottom") else None


def _read_condarc(path: str, system: System):
    """(key -> (values, key flag, value flags)) for the envs_dirs keys of one file, or a problem line."""
    from ruamel.yaml import YAML  # conda's own YAML library; round-trip mode keeps the #!final comments
    from ruamel.yaml.error import YAMLError

    try:
        text = read_text(system.local(path))
    except (OSError, UnicodeDecodeError) as exc:
        return None, M("{path}: unreadable ({why}); conda ignores it too", path=path,
                       why=getattr(exc, "strerror", None) or exc)
    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        why = " ".join(str(getattr(exc, "problem", None) or exc).split())
        return None, M("{path}: not valid YAML ({why}); conda ignores this file too", path=path, why=why)
    if not isinstance(data, dict):
        return {}, None
    out = {}
    for key in ("envs_dirs", "envs_path"):
        if key not in data:
            continue
        value = data[key]
        try:
            key_flag = _flag(data.ca.items[key][2])
        except (AttributeError, KeyError, IndexError, TypeError):
            key_flag = None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return None, M("{path}: {key} must be a list of folders; conda refuses this file", path=path, key=key)
        flags = []
        for i in range(len(value)):
            try:
                item = value.ca.items[i]
                c = item[0] if item[0] else item[1][0]
                flags.append(_flag(c))
            except (AttributeError, IndexError, KeyError, TypeError):
                flags.append(None)
        out[key] = ([str(v) for v in value if v is not None], key_flag, flags)
    return out, None


def _merge(matches: List[Tuple[List[str], Optional[str], List[Optional[str]]]]) -> List[str]:
    """conda's SequenceParameter.merge: sources in search order, later sources first, `#!final` stops the search,
    `#!top`/`#!bottom` lines move to the ends."""
    relevant = []
    for m in matches:
        relevant.append(m)
        if m[1] == "final":
            break

    def marked(m, flag):
        return [v for v, f in zip(m[0], m[2]) if f == flag]

    def unique(items):
        return list(dict.fromkeys(items))

    top = [v for m in relevant for v in marked(m, "top")]
    bottom = [v for m in reversed(relevant) for v in marked(m, "bottom")]
    all_lines = [v for m in reversed(relevant) for v in m[0]]
    top_deduped = unique(top + all_lines)
    bottom_deduped = unique(list(reversed(bottom)) + list(reversed(top_deduped)))
    return list(reversed(bottom_deduped))


def _root_writable(root: str, system: System) -> bool:
    magic = system.local(system.join(root, "conda-meta", "history"))
    if not os.path.isfile(magic):
        return False
    return os.access(magic, os.W_OK)


def conda_api_available(system: System) -> bool:
    """True when this interpreter is conda's own (conda importable, its prefix a conda environment) and the
    System is the real one: then conda itself answers."""
    if system.root is not None or system.environ.get("CUDASWITCH_CONDA_API", "1") == "0":
        return False
    if "conda.base.context" in sys.modules:
        return True
    if not os.path.isfile(os.path.join(sys.prefix, "conda-meta", "history")):
        return False
    import importlib.util

    try:
        return importlib.util.find_spec("conda") is not None
    except (ImportError, ValueError):
        return False


def _conda_context():
    from conda.base import context as mod

    # Imported as a library, conda's context has read no condarc yet (it starts with an empty search path);
    # conda's own CLI, and so the plugin, has already loaded it.
    if not getattr(mod.context, "_search_path", ()):
        mod.reset_context()
    return mod.context


def _from_conda() -> CondaLayout:
    context = _conda_context()

    return CondaLayout(root_prefix=context.root_prefix, envs_dirs=[str(d) for d in context.envs_dirs],
                       config_files=[str(p) for p in getattr(context, "config_files", ())], source="conda")


def layout(system: System, use_conda: Optional[bool] = None) -> CondaLayout:
    """conda's root prefix and envs_dirs for this user, shell and machine."""
    if use_conda is None:
        use_conda = conda_api_available(system)
    if use_conda:
        try:
            return _from_conda()
        except Exception:  # a broken conda install: fall back to reading its files, as conda would
            pass
    guessed = conda_root(system)
    files = condarc_files(system, guessed)
    matches, problems, root_over = [], [], None
    for path in files:
        data, problem = _read_condarc(path, system)
        if problem:
            problems.append(problem)
            continue
        if not data:
            continue
        key = "envs_dirs" if "envs_dirs" in data else "envs_path"  # conda prefers the canonical name
        matches.append(data[key])
    for path in files:  # root_prefix / root_dir in a condarc moves the root (rare; conda's PrimitiveParameter)
        root_over = _root_setting(path, system) or root_over
    env = system.environ
    env_root = env.get("CONDA_ROOT_PREFIX") or env.get("CONDA_ROOT_DIR")
    root = _expand(env_root or root_over, system) if (env_root or root_over) else guessed
    env_value = env.get("CONDA_ENVS_DIRS") if "CONDA_ENVS_DIRS" in env else env.get("CONDA_ENVS_PATH")
    if env_value:
        parts = [p.strip() for p in env_value.split(system.pathsep) if p.strip()]
        matches.append((parts, None, [None] * len(parts)))
    configured = [_expandvars(v, system.environ) for v in _merge(matches)]
    fixed = []
    home_envs = _pm(system).join("~", ".conda", "envs")
    if root:
        root_envs = system.join(root, "envs")
        fixed = [root_envs, home_envs] if _root_writable(root, system) else [home_envs, root_envs]
    else:
        fixed = [home_envs]
    if system.windows:  # conda adds platformdirs' user_data_dir("conda", "conda")\envs on Windows
        local = system.environ.get("LOCALAPPDATA") or system.join(_home(system), "AppData", "Local")
        fixed.append(system.join(local, "conda", "conda", "envs"))
    dirs = list(dict.fromkeys(_expand(p, system) for p in configured + fixed))
    return CondaLayout(root_prefix=root, envs_dirs=dirs, config_files=files, problems=problems)


def _root_setting(path: str, system: System) -> Optional[str]:
    from cudaswitch.core.fsutil import load_yaml

    try:
        data = load_yaml(system.local(path))
    except Exception:
        return None
    if isinstance(data, dict):
        value = data.get("root_prefix") or data.get("root_dir")
        return str(value) if value else None
    return None


def is_environment(prefix: str, system: System) -> bool:
    """conda's PrefixData.is_environment: conda-meta/history exists, asked as conda asks (os.path.isfile): an
    environment in a folder this user may not search is none of hers (pathlib's is_file raises on 3.9-3.13)."""
    return os.path.isfile(system.local(system.join(prefix, "conda-meta", "history")))


def locate(name: str, system: System, lay: Optional[CondaLayout] = None) -> Optional[str]:
    """The prefix `conda activate NAME` activates, or None (context.locate_prefix_by_name)."""
    lay = lay or layout(system)
    if name in ("base", "root"):
        return lay.root_prefix
    for d in lay.envs_dirs:
        cand = system.join(d, name)
        if os.path.isdir(system.local(cand)):
            return cand
    return None


def _is_admin(system: System) -> bool:
    if system.root is not None or system.windows or not hasattr(os, "geteuid"):
        return False
    return os.geteuid() == 0


def _homes(system: System) -> List[str]:
    if _is_admin(system):
        try:
            import pwd

            homes = [p.pw_dir for p in pwd.getpwall()]
            if homes:
                return homes
        except (ImportError, KeyError):
            pass
    return [_home(system)]


def environments_txt(system: System) -> List[str]:
    """The environments conda recorded (every user's file when run as root, as conda does), still existing."""
    out: List[str] = []
    for home in dict.fromkeys(filter(None, _homes(system))):
        f = system.local(system.join(home, ".conda", "environments.txt"))
        try:
            lines = read_text(f, errors="replace").splitlines()
        except OSError:
            continue
        out.extend(line.strip() for line in lines if line.strip() and is_environment(line.strip(), system))
    return out


def known_prefixes(system: System, lay: Optional[CondaLayout] = None) -> List[str]:
    """Every environment conda lists (`conda info --json` "envs"), sorted as conda sorts them; reads, writes
    nothing (conda also prunes environments.txt, which is not cudaswitch's file to edit)."""
    if lay is None and conda_api_available(system):
        try:
            from conda.core.envs_manager import list_all_known_prefixes

            _conda_context()
            return [str(p) for p in list_all_known_prefixes()]
        except Exception:
            pass
    lay = lay or layout(system, use_conda=False)
    found = set(environments_txt(system))
    for d in lay.envs_dirs:
        try:
            entries = list(os.scandir(system.local(d)))
        except OSError:
            continue
        for e in entries:
            p = system.join(d, e.name)
            if p not in found and is_environment(p, system):
                found.add(p)
    if lay.root_prefix:
        found.add(lay.root_prefix)
    return sorted(found)


def env_names(system: System, incomplete: str = "") -> List[str]:
    """The names conda shows for its environments (`conda env list`) that start with `incomplete`, read from its
    files without starting it: what a TAB on `-n` offers."""
    lay = layout(system, use_conda=False)
    names = {env_name(p, lay, system) for p in known_prefixes(system, lay)}
    return sorted(n for n in names if n and n.startswith(incomplete))


def env_name(prefix: str, lay: CondaLayout, system: Optional[System] = None) -> Optional[str]:
    """The name conda shows for a prefix: 'base' for the root, the folder name inside an envs dir, else None."""
    pm = _pm(system) if system is not None else os.path

    def norm(p: str) -> str:
        return pm.normcase(pm.normpath(p))

    if lay.root_prefix and norm(prefix) == norm(lay.root_prefix):
        return "base"
    parent = pm.dirname(norm(prefix))
    if any(parent == norm(d) for d in lay.envs_dirs):
        return pm.basename(pm.normpath(prefix))
    return None

