"""The environment's own Python knows its CUDA: a startup file in its site-packages, written at `use` time.

A Python of the environment started without `conda activate` (a Jupyter kernel launched by a Jupyter elsewhere, an
IDE's test runner, a scheduler's job, `envs/x/bin/python script.py`) runs no activation hook. `site` processes every
`*.pth` file in site-packages at interpreter start and executes its `import` lines, so `_cudaswitch_cuda.pth`
imports `_cudaswitch_cuda.py`, a module of constants written here, which sets CUDA_HOME/CUDA_PATH and prepends the
toolkit's folders to PATH (and LD_LIBRARY_PATH) in `os.environ`, for the programs that process starts (nvcc, ptxas,
build tools) and for what reads `os.environ` later (torch's cpp_extension, CMake run from Python). The rules, and
what this can and cannot do, are in docs/design/activation.md ("The environment's own Python").

The files live in the folder of one Python version (lib/python3.X/site-packages): the live folder is the one whose
interpreter is still in the environment (bin/python3.X), found from the environment's files without running it.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from cudaswitch import __version__
from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.discovery.envfiles import MARKER  # the same first-line mark as the hooks
from cudaswitch.discovery.envfiles import STARTUP_MODULE as MODULE, STARTUP_NAMES as NAMES, STARTUP_PTH as PTH
from cudaswitch.discovery.envfiles import STARTUP_SOURCE as SOURCE
# the environment variable the module sets, so a child Python of the same process tree leaves everything alone
RECORD = "_CUDASWITCH_PYTHON_HOOK"
_PYDIR = re.compile(r"python(\d+)\.(\d+)(t?)$")


@dataclass
class Place:
    """Where the startup file of an environment goes: the site-packages folder of its Python, relative to the prefix."""

    parts: List[str]  # e.g. ["lib", "python3.11", "site-packages"] or ["Lib", "site-packages"]
    python: str  # "3.11" (Windows: "" -- Lib\site-packages has no version in its name)

    @property
    def rel(self) -> str:
        return "/".join(self.parts)


@dataclass
class HookStatus:
    """What `status` and `doctor` say about the startup file."""

    live: Optional[str]  # the site-packages folder the environment's Python reads (relative), None: no Python
    in_place: bool  # both files of ours are in the live folder
    stale: List[str] = field(default_factory=list)  # folders of another Python version still holding our files
    root: Optional[str] = None  # the toolkit the module in the live folder sets

    def to_json(self) -> dict:
        return {"site_packages": self.live, "in_place": self.in_place, "stale": self.stale, "root": self.root}


def candidate_places(prefix: str) -> List[Place]:
    """Every site-packages folder of the environment, live or not."""
    out = []
    lib = Path(prefix, "lib")
    try:
        names = sorted(os.listdir(lib))
    except OSError:
        names = []
    for name in names:
        m = _PYDIR.match(name)
        if m and os.path.isdir(lib / name / "site-packages"):
            out.append(Place(["lib", name, "site-packages"], f"{m.group(1)}.{m.group(2)}{m.group(3)}"))
    if os.path.isdir(os.path.join(prefix, "Lib", "site-packages")):
        out.append(Place(["Lib", "site-packages"], ""))
    return out


def live_place(prefix: str, windows: bool) -> Optional[Place]:
    """The site-packages folder the environment's Python reads, from its files: on Windows Lib\\site-packages when
    python.exe is in the prefix; elsewhere lib/pythonX.Y/site-packages whose bin/pythonX.Y exists (after an upgrade
    the old folder keeps what conda did not install, but its interpreter is gone). Where two interpreters remain,
    the one bin/python names. None: the environment has no Python."""
    places = candidate_places(prefix)
    if windows:
        return next((p for p in places if p.parts[0] == "Lib"), None) \
            if os.path.isfile(os.path.join(prefix, "python.exe")) else None
    alive = [p for p in places if p.parts[0] == "lib" and os.path.exists(os.path.join(prefix, "bin", p.parts[1]))]
    if len(alive) > 1:
        try:
            target = os.path.basename(os.path.realpath(os.path.join(prefix, "bin", "python")))
        except OSError:
            target = ""
        named = [p for p in alive if p.parts[1] == target]
        if named:
            return named[0]

        def key(p):
            m = _PYDIR.match(p.parts[1])
            return int(m.group(1)), int(m.group(2))

        return max(alive, key=key)
    return alive[0] if alive else None


# ---- the generated module ---------------------------------------------------------------------------------------

# Kept as small as the job: `os` is imported by site before any .pth, nothing else is imported, nothing is read.
_BODY = '''
def _installer_default(environ):
    # NVIDIA's Windows installer sets CUDA_PATH machine-wide to the last version installed, next to its
    # CUDA_PATH_V<X>_<Y>: that is a default to switch away from, as the activation hooks do, not a choice
    value = environ.get("CUDA_PATH")
    return any(k.startswith("CUDA_PATH_V") and v == value for k, v in environ.items())


def _same(a, b):
    return _os.path.normcase(a).rstrip("\\\\/") == _os.path.normcase(b).rstrip("\\\\/")


def _records_of(environ):
    """Whose cudaswitch records this process inherited: "own", "other" (another environment's hook or startup file:
    a Jupyter server started in a shell with that environment active), or None (no records)."""
    if RECORD in environ:
        return "own" if _same(environ[RECORD], PREFIX) else "other"
    if any(k.startswith(("_CUDASWITCH_ADDED_", "_CUDASWITCH_SAVED_")) for k in environ):
        # a shell hook ran: conda activated the environment named by CONDA_PREFIX, whose hook it was (without
        # one, nothing says it was another's, and the records are left alone)
        active = environ.get("CONDA_PREFIX")
        return "other" if active and not _same(active, PREFIX) else "own"
    return None


def _strip_recorded(environ):
    """Take the other environment's one recorded copy of each entry out of PATH / LD_LIBRARY_PATH, as its
    deactivate hook would."""
    for var in ("PATH", "LD_LIBRARY_PATH"):
        rec = environ.get("_CUDASWITCH_ADDED_" + var)
        if not rec or not environ.get(var):
            continue
        have = environ[var].split(SEP)
        for entry in rec.split(SEP):
            if entry in have:
                have.remove(entry)
        environ[var] = SEP.join(have)


def _apply(environ):
    whose = _records_of(environ)
    if whose == "own":
        return False  # activated, or done by a parent process of this environment
    if whose is None:
        if "CUDA_HOME" in environ:
            return False  # set by the user (a kernel.json env entry, a module)
        if "CUDA_PATH" in environ and not (WINDOWS and _installer_default(environ)):
            return False
    if not _os.path.isdir(ROOT):  # as the hooks do: say so, and leave the CUDA settings this process has
        _os.write(2, ("cudaswitch: warning: CUDA " + VERSION + " is gone from " + ROOT + "; this environment keeps "
                      "the CUDA settings it had (run 'cudaswitch use' again)\\n").encode("utf-8", "replace"))
        return False
    if whose == "other":
        _strip_recorded(environ)
    environ["CUDA_HOME"] = ROOT
    environ["CUDA_PATH"] = ROOT
    for var, add in (("PATH", PATH_ADD), ("LD_LIBRARY_PATH", LD_ADD)):
        if add:
            old = environ.get(var)
            have = old.split(SEP) if old else []
            if have[:len(add)] != list(add):
                environ[var] = SEP.join(list(add) + have)
    environ[RECORD] = PREFIX
    if WINDOWS:
        for folder in PATH_ADD:
            try:
                DLL_HANDLES.append(_os.add_dll_directory(folder))
            except (AttributeError, OSError):
                pass
    return True


try:
    APPLIED = _apply(_os.environ)
except Exception:  # a startup file must never stop the interpreter
    APPLIED = False
'''


def render_module(prefix: str, root: str, version: str, path_add: List[str], ld_add: List[str],
                  windows: bool) -> bytes:
    head = (f"# {MARKER} {__version__} at 'cudaswitch use': CUDA {version} for every Python of this environment,\n"
            f"# however it is started (docs/design/activation.md). Do not edit: 'cudaswitch use --refresh' rewrites\n"
            f"# it, 'cudaswitch off' removes it.\n"
            "import os as _os\n\n"
            f"PREFIX = {prefix!r}\nROOT = {root!r}\nVERSION = {version!r}\n"
            f"PATH_ADD = {tuple(path_add)!r}\nLD_ADD = {tuple(ld_add)!r}\n"
            f"SEP = {';' if windows else ':'!r}\nWINDOWS = {bool(windows)!r}\nRECORD = {RECORD!r}\n"
            "DLL_HANDLES = []  # os.add_dll_directory's handles, kept for the life of the process\n")
    return (head + _BODY).encode("utf-8")


def render_pth() -> bytes:
    # ASCII only: site reads a .pth in the locale's encoding on some versions
    return (f"# {MARKER} {__version__}: sets this environment's CUDA for its Python ({SOURCE})\n"
            f"import {MODULE}\n").encode("ascii")


# ---- files -----------------------------------------------------------------------------------------------------
# On POSIX every operation goes through a descriptor of the site-packages folder opened without following a link
# below the prefix (core/trust.py); on Windows, which has neither, through paths, as hookfiles.py does.

def _ours(prefix: str, place: Place, name: str) -> Optional[bool]:
    """True: our file is there; False: a file of that name that is not ours (or not a regular file); None: none."""
    from cudaswitch.core import readin

    path = Path(prefix, *place.parts, name)
    if not os.path.lexists(path):
        return None
    head = readin.read(Path(prefix), place.parts, name, 300)
    return head is not None and MARKER.encode() in head


def check_place(prefix: str, place: Place) -> None:
    """Raise now what write() would raise later: a link on the way, a folder the user cannot write, or a file of
    our name that is not ours."""
    from cudaswitch.core.fsutil import check_writable

    where = Path(prefix, *place.parts)
    if trust.POSIX:
        try:
            os.close(trust.open_dir(Path(prefix), place.parts))
        except FileNotFoundError:
            return
        except CudaswitchError as exc:
            raise CudaswitchError(M("{why} (the Python startup file goes into {where}; --no-python-hook leaves it "
                                    "out)", why=exc.args[0] if exc.args else exc, where=where)) from None
    check_writable(where, M("switch an environment you own (-n/-p), or leave the Python startup file out with "
                            "--no-python-hook"))
    for name in NAMES:
        if _ours(prefix, place, name) is False:
            raise CudaswitchError(M("{path} exists and was not written by cudaswitch; move it away and run this "
                                    "again, or leave the Python startup file out with --no-python-hook",
                                    path=where / name))


def write(prefix: str, place: Place, module: bytes) -> List[Path]:
    """Both files, each atomically, a replaced file keeping its mode and owner; the module first."""
    check_place(prefix, place)
    where = Path(prefix, *place.parts)
    if not trust.POSIX:
        from cudaswitch.core.fsutil import atomic_write

        atomic_write(where / SOURCE, module)
        _drop_bytecode(where)
        pyc = bytecode(module, os.stat(where / SOURCE), place, prefix)
        if pyc is not None:
            atomic_write(where / "__pycache__" / pyc[0], pyc[1])
        atomic_write(where / PTH, render_pth())
        return [where / n for n in NAMES]
    try:
        fd = trust.open_dir(Path(prefix), place.parts)
    except FileNotFoundError:
        raise CudaswitchError(M("{where} is gone; nothing was written there", where=where)) from None
    try:
        trust.write_at(fd, SOURCE, module)
        _drop_bytecode(where, fd)  # a .pyc of an earlier choice is checked by mtime, but a same-second rewrite is not
        pyc = bytecode(module, os.stat(SOURCE, dir_fd=fd, follow_symlinks=False), place, prefix)
        if pyc is not None:  # through the folder already open: a link swapped in at its path leads nowhere
            cache = trust.open_dir(fd, ["__pycache__"], create=True, shown=where)
            try:
                trust.write_at(cache, pyc[0], pyc[1])
            finally:
                os.close(cache)
        trust.write_at(fd, PTH, render_pth())
    finally:
        os.close(fd)
    return [where / n for n in NAMES]


def bytecode(module: bytes, st: os.stat_result, place: Place, prefix: str):
    """(file name, bytes) of the module's bytecode cache, when this interpreter is the environment's Python version:
    an environment its users cannot write would otherwise compile the module at every start (about 1.8 ms against
    0.3 ms, benchmarks/bench_pythonhook.py). A timestamp-checked .pyc, as Python writes it: stale or from another build
    of that version, Python ignores it and compiles the source. None for another version."""
    import importlib.util
    import marshal
    import sys

    folder = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if place.python and place.parts[1] != folder or sys.implementation.cache_tag is None \
            or sys.implementation.name != "cpython":
        return None
    dll = f"python{sys.version_info[0]}{sys.version_info[1]}.dll"
    if not place.python and not os.path.exists(os.path.join(prefix, dll)):
        return None  # Lib\site-packages names no version; a Windows prefix holds its python3XY.dll
    code = compile(module, SOURCE, "exec", dont_inherit=True)
    head = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + \
        (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return f"{MODULE}.{sys.implementation.cache_tag}.pyc", head + marshal.dumps(code)


def _drop_bytecode(where: Path, fd: Optional[int] = None) -> List[str]:
    """Our module's .pyc files in __pycache__ (removed with the module, so `off` leaves nothing)."""
    from cudaswitch.core import readin

    removed = []
    if fd is None or not trust.POSIX:
        stale = [n for n in readin.names(where, ["__pycache__"]) if n.startswith(MODULE + ".") and n.endswith(".pyc")]
        for n in stale:
            try:
                trust.remove(Path(where, "__pycache__", n))
                removed.append(n)
            except OSError:
                pass
        return removed
    try:
        cache = trust.open_dir(fd, ["__pycache__"], shown=where)
    except (FileNotFoundError, CudaswitchError):
        return removed  # none, or a link: nothing of ours is behind it
    try:
        stale = [n for n in os.listdir(cache) if n.startswith(MODULE + ".") and n.endswith(".pyc")]
        for n in stale:
            st = trust.regular_stat(cache, n)
            if st is not None and stat.S_ISREG(st.st_mode) and trust.unlink_at(cache, n):
                removed.append(n)
    finally:
        os.close(cache)
    return removed


def _remove_here(prefix: str, place: Place) -> List[Path]:
    where = Path(prefix, *place.parts)
    removed = []
    if not trust.POSIX:
        for name in reversed(NAMES):  # the .pth first
            if _ours(prefix, place, name):
                try:
                    trust.remove(where / name)
                    removed.append(where / name)
                except OSError:
                    pass
        if _drop_bytecode(where):
            try:
                trust.remove_dir(where / "__pycache__")
            except OSError:
                pass
        return removed
    try:
        fd = trust.open_dir(Path(prefix), place.parts)
    except (OSError, CudaswitchError):
        return []  # missing, or a link on the way: nothing cudaswitch wrote is behind it
    try:
        for name in reversed(NAMES):
            if _ours(prefix, place, name) and trust.unlink_at(fd, name):
                removed.append(where / name)
        if _drop_bytecode(where, fd):
            try:
                trust.remove_dir("__pycache__", dir_fd=fd)  # Python made it for our module; only when nothing else is in it
            except OSError:
                pass
    finally:
        os.close(fd)
    return removed


def remove(prefix: str, keep: Optional[Place] = None) -> List[Path]:
    """Our files (found by name and mark) in every site-packages folder but `keep`, with their bytecode."""
    removed = []
    for place in candidate_places(prefix):
        if keep is None or place.parts != keep.parts:
            removed += _remove_here(prefix, place)
    return removed


_ROOT_LINE = re.compile(rb"^ROOT = (.+)$", re.M)


def status(prefix: str, windows: bool) -> HookStatus:
    import ast

    from cudaswitch.core import readin

    live = live_place(prefix, windows)
    stale, in_place, root = [], False, None
    for place in candidate_places(prefix):
        present = [n for n in NAMES if _ours(prefix, place, n)]
        if live is not None and place.parts == live.parts:
            in_place = len(present) == len(NAMES)
            m = _ROOT_LINE.search(readin.read(Path(prefix), place.parts, SOURCE, 4096) or b"") if in_place else None
            if m:
                try:
                    root = ast.literal_eval(m.group(1).decode("utf-8"))
                except (ValueError, SyntaxError, UnicodeDecodeError):
                    root = None
        elif present:
            stale.append(place.rel)
    return HookStatus(live.rel if live else None, in_place, stale, root)


def wanted(flag: Optional[bool], is_base: bool, old=None) -> bool:
    """On unless asked otherwise, except in base, whose Python is conda's own (every `conda` command runs it): there
    only with --python-hook. A recorded choice (a flag given to an earlier `use`) is kept until a flag
    changes it."""
    if flag is not None:
        return flag
    recorded = getattr(old, "python_hook", None) if old is not None else None
    if recorded is not None:
        return recorded
    return not is_base


def status_line(hook: Optional[dict], wanted_flag: Optional[bool]):
    """The line `status` prints about the startup file of the active environment (hook: HookStatus.to_json())."""
    from cudaswitch.core.i18n import N_

    if not hook:
        return N_("Python startup file: none")
    if hook["in_place"]:
        return M("Python startup file: in place ({path}), CUDA_HOME={root}", path=hook["site_packages"] + "/" + PTH,
                 root=hook["root"] or "?")
    if wanted_flag is False:
        return N_("Python startup file: not written (--no-python-hook): a Python of this environment started without "
                  "activation does not get the switch")
    if hook["site_packages"] is None:
        return N_("Python startup file: none (this environment has no Python)")
    if hook["stale"]:
        return M("Python startup file: missing from {live}, left in {stale} by an earlier Python; run 'cudaswitch use "
                 "--refresh'", live=hook["site_packages"], stale=Listed(hook["stale"]))
    return M("Python startup file: missing from {live}; run 'cudaswitch use --refresh'", live=hook["site_packages"])
