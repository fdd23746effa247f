"""The trust rule checked at run time (PEP 578): a hook that sees every process start, library load and write of
cudaswitch while it runs as root (and in the test suite), and stops the command before one of them acts on a file
another user could have put there (docs/design/security.md, "The audit hook").

The doors of core/trust.py apply the rule where the code asks them to; tests/core/test_doors.py makes sure the code
asks. This hook is the net below both: a new call that walks around the doors (a library that writes a cache, a
helper that spawns a shell) meets the same rule. The rule: the file, a link at its path and every folder above each
(the link's own folders and its resolved target's) belong to root or the invoking user and are writable by nobody
else. A library loaded by bare name is refused outright: the loader would search LD_LIBRARY_PATH, whose folders
nobody checked.

Only while `active()` is entered: the CLI enters it around each command, so in the test suite (which writes its own
temporary files and runs its own shells as root) the hook judges only what cudaswitch's own code does.
"""

from __future__ import annotations

import os
import stat
import sys
# threading.local itself, without the threading module (4.5 million instructions of a TAB as root)
from _thread import _local

from cudaswitch.core.i18n import M, N_
from cudaswitch.core.rule import euid, folder_rule_problem, rule_walk, user_name

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional

_STARTS = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.system", "pty.spawn", "os.spawn"})
_CHANGES = frozenset({"os.rename", "os.remove", "os.rmdir", "shutil.rmtree", "os.symlink", "os.link", "os.chmod",
                      "os.chown", "os.mkdir", "os.truncate"})
# events after which a folder judged trusted may no longer be: only cudaswitch's own changes can make one so (a
# trusted folder is writable by nobody else), so the verdicts are kept until then
_RESETS = frozenset({"os.rename", "os.chmod", "os.chown", "os.symlink"})
_WATCHED = _STARTS | _CHANGES | {"open", "ctypes.dlopen"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_state = _local()
_depth = 0  # how many active() blocks are open (all threads: a command's worker threads are its own code)
_installed = False
_forced = False  # the test suite: on whoever runs it
_trusted_folders: Dict[str, bool] = {}
VIOLATIONS: List[str] = []  # every line said, for the test suite to fail a test on (a handler may swallow one)
ON_VIOLATION: Optional[Callable[[str], None]] = None
ON_READ: Optional[Callable[[str], None]] = None  # tests/hostile/: told every file opened for reading


class AuditViolation(BaseException):
    """Raised inside the call that broke the rule. A BaseException, so that no `except Exception` on the way (a
    reader that treats a failure as "not found") carries on as if nothing happened; the CLI turns it into one line."""

    def __init__(self, line: str):
        super().__init__(line)
        self.line = line


def wanted() -> bool:
    """Whether the hook belongs in this process: running as root, or the test suite asked for it."""
    return _forced or (hasattr(os, "geteuid") and os.geteuid() == 0)


def force() -> None:
    """The test suite's switch: the hook on for every command whoever runs the suite."""
    global _forced
    _forced = True
    install()


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


class active:
    """Judge every event while the block runs (when wanted(); otherwise a no-op)."""

    # a class, not contextlib.contextmanager: a TAB as root enters it, and importing contextlib was about 3 million
    # instructions of such a TAB (CONTRIBUTING, "`typing` only for a type checker")

    def __enter__(self):
        global _depth
        self.on = wanted()
        if self.on:
            install()
            _depth += 1

    def __exit__(self, *exc):
        global _depth
        if self.on:
            _depth -= 1
            if not _depth:
                _trusted_folders.clear()
        return False


def take_violations() -> List[str]:
    """The lines said since the last call (and forget them): the suite fails a test that leaves any."""
    out = list(VIOLATIONS)
    VIOLATIONS.clear()
    return out


def _inside_rmtree() -> bool:
    """Whether the remove being judged is shutil.rmtree's own, below a top it was given (judged at the rmtree event):
    that walk goes through folder descriptors and follows no link, so what it removes is where the top is."""
    import shutil

    walker = getattr(shutil, "_rmtree_safe_fd", None)
    return walker is not None and sys._getframe(2).f_code is walker.__code__


def _hook(event, args):
    if not _depth or event not in _WATCHED or getattr(_state, "busy", False):
        if ON_READ is not None and _depth and event in ("os.listdir", "os.scandir") and args:
            folder = _fspath(args[0])  # a listing reads the folder: the harness wants those too
            if folder:
                ON_READ(os.path.abspath(folder))
        return
    if event in ("os.remove", "os.rmdir") and isinstance(args[1], int) and args[1] >= 0 and _inside_rmtree():
        return
    _state.busy = True  # the checks below stat and readlink; they must not judge themselves
    try:
        line = _judge(event, args)
    except (OSError, ValueError, TypeError):
        line = None
    finally:
        _state.busy = False
    if line is None:
        return
    VIOLATIONS.append(line)
    if ON_VIOLATION is not None:
        ON_VIOLATION(line)
    raise AuditViolation(line)


def _me() -> Optional[int]:
    return os.geteuid() if hasattr(os, "geteuid") else None


# ---- the rule -------------------------------------------------------------------------------------------------------

def _folder_problem(folder: str, me: int) -> Optional[str]:
    return folder_rule_problem(folder, me, _trusted_folders if _depth else None)


def path_rule_problem(path: str, me: Optional[int] = None, file_mode: bool = True) -> Optional[str]:
    """The one rule (core/rule.py) for `path`, with this command's verdicts on folders kept."""
    return rule_walk(path, _me() if me is None else me, file_mode, _trusted_folders if _depth else None)[1]


def _fspath(p) -> Optional[str]:
    if isinstance(p, int) or p is None:
        return None
    p = os.fspath(p)
    return os.fsdecode(p)


def _at(p, dir_fd) -> Optional[str]:
    """An absolute path for `p`, relative to the folder descriptor `dir_fd` when one is given; None for a file
    descriptor (judged where it was opened)."""
    if isinstance(p, int):
        return _fd_path(p)
    p = _fspath(p)
    if p is None:
        return None
    if os.path.isabs(p):
        return p
    if isinstance(dir_fd, int) and dir_fd >= 0:
        base = _fd_path(dir_fd)
        return os.path.join(base, p) if base else None
    return os.path.abspath(p)


def _fd_path(fd: int) -> Optional[str]:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _program(name, env) -> Optional[str]:
    """The file a process start runs: `name` itself when it names a folder, else the first match on PATH (the
    child's environment's PATH, as subprocess and execvpe search it)."""
    name = _fspath(name)
    if not name:
        return None
    if os.sep in name:
        return os.path.abspath(name)
    import shutil

    path = None
    if isinstance(env, dict):
        path = env.get("PATH", env.get(b"PATH"))
        path = os.fsdecode(path) if path is not None else None
    found = shutil.which(name, path=path if path is not None else os.environ.get("PATH", os.defpath))
    return os.path.abspath(found) if found else None


def _judge(event: str, args) -> Optional[str]:
    me = _me()
    if me is None:
        return None
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (isinstance(mode, str) and
                                                                          any(c in mode for c in "wax+"))
        if isinstance(path, int):
            return None
        if not writing and ON_READ is None:
            return None
        name = _fspath(path)
        target = _at(name, None if os.path.isabs(name) else _caller_dir_fd())
        if not writing:
            if target:
                ON_READ(target)
            return None
        return _say("write", target, path_rule_problem(target, me, file_mode=False)) if target else None
    if event == "ctypes.dlopen":
        name = _fspath(args[0])
        if name is None:
            return None  # the program itself (CDLL(None))
        if os.sep not in name:
            return M("cudaswitch stopped before loading the library {name} by bare name: the loader would take it "
                     "from any folder on LD_LIBRARY_PATH, whose owners nobody checked; it loads libraries by a "
                     "checked full path", name=name)
        return _say("load", name, path_rule_problem(name, me))
    if event in _STARTS:
        if event == "subprocess.Popen":
            exe, argv, _cwd, env = args
            program = _program(exe if exe is not None else (argv[0] if argv else None), env)
        elif event in ("os.exec", "os.posix_spawn"):
            program = _program(args[0], args[2] if len(args) > 2 else None)
        elif event == "os.system":
            program = "/bin/sh"
        elif event == "pty.spawn":
            argv = args[0]
            program = _program(argv if isinstance(argv, (str, bytes)) else argv[0], None)
        else:  # os.spawn (mode, path, args, env)
            program = _program(args[1], args[3] if len(args) > 3 else None)
        if program is None or not os.path.lexists(program):
            return None  # nothing there to start: the call fails by itself
        return _say("start", program, path_rule_problem(program, me))
    if event in _RESETS:
        _trusted_folders.clear()
    if event == "os.rename" or event == "os.link":
        src, dst, src_fd, dst_fd = args
        for p in (_at(src, src_fd), _at(dst, dst_fd)):
            why = _change_problem(p, me)
            if why:
                return _say("rename", p, why)
        return None
    if event == "os.symlink":
        src, dst, dir_fd = args
        p = _at(dst, dir_fd)
        return _say("link", p, _change_problem(p, me))
    if event in ("os.remove", "os.rmdir", "shutil.rmtree"):
        path, dir_fd = args[0], args[1] if len(args) > 1 else None
        p = _at(path, dir_fd)
        return _say("remove", p, _change_problem(p, me))
    if event == "os.mkdir":
        p = _at(args[0], args[-1])
        return _say("change", p, _change_problem(p, me))
    if event in ("os.chmod", "os.chown", "os.truncate"):
        if isinstance(args[0], int):
            return None  # a descriptor: the file was judged when it was opened (or created), and is no name now
        p = _at(args[0], args[-1] if event != "os.truncate" else None)
        # these follow a link at the name: every hop and the file they end at count
        return _say("change" if event != "os.truncate" else "write", p,
                    path_rule_problem(p, me, file_mode=False) if p else None)
    return None


def _change_problem(p: Optional[str], me: int) -> Optional[str]:
    """A rename, remove, link or new folder acts on the name in its folder, never through a link there: whoever
    controls the folders above decides where it lands. (What the name held does not: replacing or removing another
    user's file in root's own folder, such as a hook file root handed to her, changes nothing she controls.)"""
    if p is None:
        return None
    folder = os.path.dirname(os.path.abspath(p))
    why = _folder_problem(folder, me)
    if not why:
        real = os.path.realpath(folder)
        why = _folder_problem(real, me) if real != folder else None
    return why


def _caller_dir_fd() -> Optional[int]:
    """The folder descriptor an os.open(name, dir_fd=...) was given: the `open` event does not carry it, the
    calling frame does (trust.py's no-follow writers name it dir_fd)."""
    frame = sys._getframe(3)  # _caller_dir_fd <- _judge <- _hook <- the Python code that called os.open
    value = frame.f_locals.get("dir_fd") if frame is not None else None
    return value if isinstance(value, int) else None


_ACTION = {
    "write": N_("cudaswitch stopped before writing {path}: {why}; run as {user}, it acts on no file another user could "
                "have put there"),
    "load": N_("cudaswitch stopped before loading {path}: {why}; run as {user}, it acts on no file another user could "
               "have put there"),
    "start": N_("cudaswitch stopped before starting {path}: {why}; run as {user}, it acts on no file another user "
                "could have put there"),
    "rename": N_("cudaswitch stopped before renaming {path}: {why}; run as {user}, it acts on no file another user "
                 "could have put there"),
    "link": N_("cudaswitch stopped before making the link {path}: {why}; run as {user}, it acts on no file another "
               "user could have put there"),
    "remove": N_("cudaswitch stopped before removing {path}: {why}; run as {user}, it acts on no file another user "
                 "could have put there"),
    "change": N_("cudaswitch stopped before changing {path}: {why}; run as {user}, it acts on no file another user "
                 "could have put there"),
}


def _say(action: str, path: Optional[str], why: Optional[str]) -> Optional[str]:
    if not why:
        return None

    return M(_ACTION[action], path=path, why=why, user=user_name(euid()))
