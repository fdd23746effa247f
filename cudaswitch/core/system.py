"""The outside world as one injectable record: OS flavour, file-system root, environment, registry, subprocess.

Core functions take a `System` instead of reading `os.environ` or `/usr/local` directly, so the Windows logic and
every failure case can be exercised on Linux against a temporary folder that stands in for `/` or `C:\\`.
"""

from __future__ import annotations

import os
import os as _os  # the parameter `os` (the OS flavour) shadows the module in __init__
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

from cudaswitch.core.host import os_flavour

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    import subprocess
    from typing import Callable, List, Mapping, Optional, Sequence, Tuple

    # (key name such as "v11.3", InstallDir) pairs from HKLM\SOFTWARE\NVIDIA Corporation\GPU Computing Toolkit\CUDA
    RegistryReader = Callable[[], List[Tuple[str, str]]]
    Runner = Callable[..., "subprocess.CompletedProcess[str]"]

# tests/seams.py sets this: the suite relocates nearly every run, and its assertions count stderr lines
QUIET_RELOCATION = False
# tests/seams.py sets this: the folder that stands for "/" when discovery looks in the machine's own places
# (/usr/local, /opt, /etc/ld.so.conf.d), so that a test not about the machine finds nothing its developer installed there (nor pip
# wheels beside the test runner); None (always, outside the suite): the real places
MACHINE_ROOT: Optional[Callable[[], str]] = None


def run_subprocess(args: Sequence[str], timeout: float = 20.0, env: Optional[Mapping[str, str]] = None,
                   cwd: Optional[str] = None):
    """The real runner: the start door (trust.run_program), which as root refuses a program another user could
    have put there."""
    from cudaswitch.core.trust import run_program

    return run_program(args, timeout, env=env, cwd=cwd)


def read_windows_registry() -> List[Tuple[str, str]]:
    """Real registry reader (Windows only); every failure means 'nothing there'."""
    try:
        import winreg  # type: ignore
    except ImportError:
        return []
    found: List[Tuple[str, str]] = []
    base = r"SOFTWARE\NVIDIA Corporation\GPU Computing Toolkit\CUDA"
    for view in (0, getattr(winreg, "KEY_WOW64_32KEY", 0)):
        try:
            key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, base, 0, winreg.KEY_READ | view)
        except OSError:
            continue
        with key:
            i = 0
            while True:
                try:
                    name = winreg.EnumKey(key, i)
                except OSError:
                    break
                i += 1
                try:
                    with winreg.OpenKey(key, name) as sub:
                        found.append((name, str(winreg.QueryValueEx(sub, "InstallDir")[0])))
                except OSError:
                    continue
    return found


def _windows_ui_language() -> Optional[str]:
    from cudaswitch.core.i18n import windows_ui_language

    return windows_ui_language()


def _default_ui_language() -> Optional[str]:
    return _windows_ui_language()  # looked up when asked, so that a replaced reader is the one used


_UNSET = object()
_FIELDS = ("os", "environ", "root", "registry", "run", "python_paths", "ui_language")


class System:
    """What cudaswitch may look at. `root` stands for `/` (Linux) or for the folder holding drive letters
    (Windows: `C:\\x` is looked up as `<root>/C/x`); None means the real file system.

    A plain class with the constructor, equality and repr a dataclass would give: every command builds one before it
    knows what it will do, and generating a dataclass at import cost more than the rest of this module."""

    def __init__(self, os: str = _UNSET, environ: Mapping[str, str] = _UNSET, root: Optional[Path] = None,
                 registry: RegistryReader = read_windows_registry, run: Runner = run_subprocess,
                 python_paths: Optional[Sequence[str]] = None,
                 ui_language: Callable[[], Optional[str]] = _UNSET) -> None:
        self.os = os_flavour({}) if os is _UNSET else os
        self.environ = dict(_os.environ) if environ is _UNSET else environ
        self.root = root
        self.registry = registry
        self.run = run
        self.python_paths = python_paths  # sys.path of the interpreter whose pip wheels to scan
        # the Windows display language ("zh_CN"), read only when no locale variable is set (cudaswitch/core/i18n.py)
        self.ui_language = _default_ui_language if ui_language is _UNSET else ui_language

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    __hash__ = None  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"System({', '.join(f'{f}={getattr(self, f)!r}' for f in _FIELDS)})"

    @classmethod
    def current(cls) -> "System":
        env = dict(os.environ)
        root = env.get("CUDASWITCH_FS_ROOT") or None
        if root:
            _check_relocation(root)
        return cls(os=os_flavour(env), environ=env, root=Path(root) if root else None)

    def relocation_note(self) -> Optional[str]:
        """One line saying that "/" is not the real root, for every command's output; None when it is."""
        if self.root is None:
            return None
        from cudaswitch.core.i18n import M

        return M("CUDASWITCH_FS_ROOT is set: every path shown as /... (or C:\\...) lies under {root}, not on this "
                 "machine's own file system", root=self.root)

    def machine_place(self, folder: str) -> str:
        """`folder`, one of the machine's standard places (/usr/local), as discovery reads it."""
        if self.root is not None or MACHINE_ROOT is None:
            return folder
        where = MACHINE_ROOT()
        return folder if where == "/" else where.rstrip("/") + folder

    def pip_sites(self) -> List[str]:
        """The site-packages folders whose NVIDIA wheels discovery reads: python_paths', else this interpreter's."""
        paths = self.python_paths
        if paths is None:
            paths = sys.path if self.machine_place("/") == "/" else []
        return [site for site in paths if site and site.endswith(("site-packages", "dist-packages"))]

    @property
    def windows(self) -> bool:
        return self.os == "windows"

    @property
    def pathsep(self) -> str:
        return ";" if self.windows else ":"

    @property
    def pure(self):
        return PureWindowsPath if self.windows else PurePosixPath

    def local(self, path: str) -> Path:
        """Where the displayed path `path` lives on this host (local_text: the same as text)."""
        if self.root is None:
            return Path(path)
        p = self.pure(path)
        if self.windows:
            drive = p.drive.rstrip(":")
            return self.root.joinpath(drive, *p.parts[1:]) if drive else self.root.joinpath(*p.parts)
        return self.root.joinpath(*p.parts[1:]) if p.is_absolute() else self.root.joinpath(*p.parts)

    def local_text(self, path: str) -> str:
        """`str(self.local(path))`, without building a Path where the text already is that Path's: discovery asks
        thousands of times a pass, and pathlib's parsing was its largest cost."""
        if self.root is None:
            if _os.name != "nt" and _posix_normal(path):  # Path is PosixPath: str(Path(path)) is path itself
                return path
        elif not self.windows and isinstance(self.root, PurePosixPath) and _posix_normal(path):
            top = str(self.root)
            if not top.endswith("/"):  # the root "/" or "//" joins differently: pathlib says how
                return top + path if path[0] == "/" else top + "/" + path
        return str(self.local(path))

    def display(self, local: Path) -> str:
        """The inverse of `local`: the path as the user's OS spells it."""
        if self.root is None:
            return str(local)
        try:
            rel = Path(os.path.abspath(local)).relative_to(os.path.abspath(self.root))
        except ValueError:
            return str(local)
        parts = rel.parts
        if self.windows:
            if not parts:
                return "C:\\"
            return str(PureWindowsPath(parts[0] + ":\\", *parts[1:]))
        return str(PurePosixPath("/", *parts))

    def join(self, base: str, *parts: str) -> str:
        if self.os != "windows":
            joined = _joined_as_text(base, parts)
            if joined is not None:
                return joined
        return str(self.pure(base).joinpath(*parts))

    def split_list(self, value: Optional[str]) -> List[str]:
        return [] if not value else value.split(self.pathsep)

    def realpath(self, path: str) -> str:
        """Resolve symlinks of a displayed path; stays displayed."""
        return self.display(Path(os.path.realpath(self.local(path))))

    def which(self, name: str, path: Optional[str] = None) -> Optional[str]:
        """Find an executable on PATH (displayed path), the way the user's shell would."""
        search = self.environ.get("PATH", "") if path is None else path
        names = [name]
        if self.windows:
            names = [name + ext for ext in (".exe", ".bat", ".cmd")] + [name]
        for entry in self.split_list(search):
            if not entry:
                continue
            for n in names:
                cand = self.join(entry, n)
                loc = self.local(cand)
                try:  # a folder this user may not read (root's, left on PATH by `su`) holds nothing for them
                    found = loc.is_file() and (self.windows or os.access(loc, os.X_OK))
                except OSError:
                    continue
                if found:
                    return cand
        return None


def _posix_normal(path) -> bool:
    """Whether `str(PurePosixPath(path)) == path`: no empty or "." part, no trailing "/" (a lone "/" and a leading
    "//" are left to pathlib)."""
    return type(path) is str and path not in ("", ".") and "//" not in path and "/./" not in path and \
        not path.endswith(("/", "/.")) and not path.startswith("./")


def _posix_name(part) -> bool:
    """Whether PurePosixPath(base).joinpath(part) is `base/part` for a _posix_normal base: one whole name."""
    return type(part) is str and part not in ("", ".") and "/" not in part


def _joined_as_text(base: str, names) -> Optional[str]:
    """`str(PurePosixPath(base).joinpath(*names))` where joining the text is provably that (a _posix_normal base,
    whole names), without parsing them again; None where pathlib must say."""
    if not _posix_normal(base):
        return None
    for name in names:  # a loop, not all(...): the generator was a third of a join's cost
        if not _posix_name(name):
            return None
    return "/".join((base, *names))


def under(local: str, *names: str) -> str:
    """`str(Path(local).joinpath(*names))` for a path on this host, without parsing `local` again where the text
    is already what pathlib would print."""
    joined = _joined_as_text(local, names) if _os.name != "nt" else None
    return joined if joined is not None else str(Path(local).joinpath(*names))


def _check_relocation(root: str) -> None:
    """CUDASWITCH_FS_ROOT makes a folder stand for "/": every toolkit, journal and hook found there is acted on as
    if it were the system's. A folder another user could have written must not stand for root's "/" (sudo -E keeps
    the variable): the same rule as for every other file cudaswitch acts on (docs/design/security.md)."""
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.i18n import M
    from cudaswitch.core.trust import path_problem

    real = Path(os.path.realpath(root))
    why = path_problem(real)
    if why:
        raise CudaswitchError(M("CUDASWITCH_FS_ROOT={root} refused: {why}, so another user could decide what "
                                "cudaswitch sees as /; unset CUDASWITCH_FS_ROOT (sudo keeps it only with -E), or point "
                                "it at a folder only you can write; nothing was changed", root=root, why=why))
