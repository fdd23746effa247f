"""Who could have written a file: the checks behind docs/design/security.md.

When cudaswitch runs with more privilege than the owner of what it touches (root on another user's environment, or
on a toolkit folder a group can write), every file there is treated as hostile. This module answers "could
someone other than me (or root) have written this?" and does the few file operations that must not follow a link
planted by that someone: walking folders component by component with O_NOFOLLOW, writing and removing through a
folder descriptor, reading only regular files.

On Windows (no geteuid, no O_NOFOLLOW) the checks answer "trusted" and the operations fall back to plain paths: the
threat model there (administrator prompt on a per-user install) is not the shared-server one.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.rule import euid, group_name, rule_walk, stat_problem, user_name  # noqa: F401 (the doors' names)

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Iterable, List, Optional

POSIX = hasattr(os, "geteuid") and hasattr(os, "O_NOFOLLOW")


def path_problem(path: Path, below: Optional[Path] = None, me: Optional[int] = None) -> Optional[str]:
    """The first reason another user could have put something at `path`: the file itself, or any folder from
    `below` (inclusive; default: the root of the file system) down to it. A missing path is checked up to its
    nearest existing folder. Returns e.g. '/srv/env/etc belongs to alice (uid 1000)'."""
    if not POSIX:
        return None
    path = Path(os.path.abspath(path))
    chain: List[Path] = [path, *path.parents]
    if below is not None:
        below = Path(os.path.abspath(below))
        chain = [p for p in chain if p == below or below in p.parents]
    for p in reversed(chain):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return None
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(p)
            except OSError:
                return M("{path} is a broken symlink", path=p)
        why = stat_problem(st, me)
        if why:
            return M("{path} {why}", path=p, why=why)
    return None


def write_problem(path) -> Optional[str]:
    """Why cudaswitch must not write `path`: the audit hook's rule for a write (every folder, every link on the way
    and their folders, the file's owner), checked before anything is read or written, so that the command ends in
    one line instead of being stopped halfway."""
    if not POSIX:
        return None
    try:
        return rule_walk(str(path), file_mode=False)[1]
    except OSError as exc:
        return M("{path} cannot be checked: {why}", path=path, why=exc.strerror or exc)


def refuse_if_foreign(paths: Iterable[Path], what: str, how: str, below: Optional[Path] = None,
                      writing: bool = False) -> None:
    """CudaswitchError naming the first path another user could have written. `what`: the action refused;
    `how`: how to proceed (e.g. 'run it as that user: sudo -u alice cudaswitch ...'). `writing`: judge each path as
    a write target (write_problem), links on the way included."""
    for p in paths:
        why = write_problem(p) if writing else path_problem(p, below)
        if why:
            raise CudaswitchError(M("refused to {what}: {why}, and cudaswitch runs as {user}: it does not act on "
                                    "files another user could have written; {how}; nothing was changed",
                                    what=what, why=why, user=user_name(euid()), how=how))


def owner_hint(path: Path) -> str:
    """'sudo -u alice' for the owner of `path`, to suggest running as that user."""
    try:
        import pwd

        return f"sudo -u {pwd.getpwuid(os.stat(path).st_uid).pw_name}"
    except (ImportError, KeyError, OSError):
        return "as the owner of those files"


def executable_problem(path: Path) -> Optional[str]:
    """Why cudaswitch must not execute `path` (discovery runs nvcc only when nobody else could have put it there):
    the one rule (rule_walk), which the audit hook applies to every start: every folder above the path, every
    link on the way to the file with its own folders, and the file itself belong to the invoking user or root and
    are writable by nobody else. A program is then started as trusted_program gives it."""
    return trusted_program(path)[1]


def trusted_program(path) -> "tuple[str, Optional[str]]":
    """(what to start, why not): the file the checked walk through `path` ended at, which is what is started (a
    second resolution could meet a link flipped after the check; and the program sees its own name, not the
    link's: a Python reached through a link reads the pyvenv.cfg beside the link, and with it the link owner's
    site-packages). Off POSIX, `path` itself and no objection."""
    if not POSIX:
        return str(path), None
    try:
        final, why = rule_walk(str(path))
    except OSError as exc:
        return str(path), M("{path} cannot be checked: {why}", path=path, why=exc.strerror or exc)
    return (final or os.path.abspath(path)), why


def current_umask() -> int:
    """The process umask, read without a window in which another thread could create a file with umask 0."""
    try:
        for line in read_text("/proc/self/status", encoding="ascii", errors="replace").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---- no-follow file operations inside a folder another user may control -------------------------------------------

def open_dir(base, parts: Iterable[str], create: bool = False, shown: Optional[Path] = None) -> int:
    """A descriptor of base/parts..., opened one component at a time without following a symlink below `base`
    (base itself was named by the user and may be a link; or a folder descriptor, `shown` as that path in
    messages, so that a folder already opened is never looked up by its path again). Missing folders are created
    with `create`. Raises CudaswitchError naming a component that is a symlink or not a folder."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    if isinstance(base, int):
        fd = os.dup(base)
        where = Path(shown or ".")
    else:
        fd = os.open(str(base), flags)
        where = Path(base)
    try:
        for name in parts:
            where = where / name
            try:
                new = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                new = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if os.path.islink(where):
                    raise CudaswitchError(M("{where} is a symlink; cudaswitch does not write through links inside an "
                                            "environment (it could point anywhere, such as /etc/profile.d); remove it "
                                            "and run the command again; nothing was changed", where=where)) from None
                if exc.errno == errno.ENOTDIR:
                    raise CudaswitchError(M("{where} is not a folder; move it away and run the command again; "
                                            "nothing was changed", where=where)) from None
                raise
            os.close(fd)
            fd = new
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_named_dir(folder, parts: Iterable[str], what: str, how: str, create: bool = False) -> int:
    """open_dir for a folder the user named (`modulefile SEL DIR`). As root, DIR is not taken on trust either: a link
    on the way to it that another user made (in a sticky /tmp a link can be anyone's) or whose target they could
    change, or a folder of the resolved path another user could write, is refused (`what`/`how` as for
    refuse_if_foreign); the resolved path is then opened from / one component at a time, so a link swapped in
    after the check is not followed either."""
    if not POSIX or euid() != 0:
        return open_dir(folder, parts, create)
    absolute = Path(os.path.abspath(folder))
    for p in reversed([absolute, *absolute.parents]):
        refuse_foreign_link(p, how)
    real = Path(os.path.realpath(absolute))
    refuse_if_foreign([real], what, how)
    return open_dir(Path(real.anchor), [*real.parts[1:], *parts], create)


def regular_stat(dir_fd: int, name: str) -> Optional[os.stat_result]:
    """lstat of name in the folder; None when missing."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_regular(dir_fd: int, name: str, limit: int = 1 << 20) -> Optional[bytes]:
    """The first `limit` bytes of a regular file, or None when it is missing or not a regular file (a FIFO, a
    symlink, a device): opened with O_NONBLOCK and O_NOFOLLOW, so nothing can make this hang or read elsewhere."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, n = [], 0
        while n < limit:
            data = os.read(fd, min(1 << 16, limit - n))
            if not data:
                break
            chunks.append(data)
            n += len(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_at(dir_fd: int, name: str, data: bytes) -> None:
    """Replace `name` in the folder atomically: a new file created with O_EXCL|O_NOFOLLOW, fsynced, renamed over
    the old name (a symlink or FIFO there is replaced, never followed or opened). A replaced regular file keeps its
    mode; a new one gets 0666 less the umask."""
    import secrets

    old = regular_stat(dir_fd, name)
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise CudaswitchError(M("{name} is a folder where cudaswitch writes a file; move it away; nothing was "
                                "changed", name=name))
    keep = old is not None and stat.S_ISREG(old.st_mode)
    if keep:
        mode = stat.S_IMODE(old.st_mode)
    else:
        mode = 0o666 & ~current_umask()
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if keep and hasattr(os, "fchown"):
                # a replaced file keeps its owner where the writer may give it (root), as fsutil.atomic_write does:
                # whoever owned it could already change it, so nothing is handed over that they did not have
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except OSError:
                    pass
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def unlink_at(dir_fd: int, name: str) -> bool:
    try:
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False


# ---- the doors ------------------------------------------------------------------------------------------------------
# Every read of a file cudaswitch does not own, every program it starts and every write into a target goes through
# one of the functions below (docs/design/security.md, "The doors"). tests/core/test_doors.py walks the package's
# syntax tree and fails on a raw open / read_text / subprocess / os.replace / shutil.rmtree anywhere else, so a new
# feature cannot skip these checks by accident.

READ_LIMIT = 64 << 20  # larger than any record, header or script cudaswitch reads; a sparse 1 TB file is not read


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file was expected: reading it could block forever or never
    end (/dev/zero), so it is never read."""

    def __init__(self, path):
        super().__init__(errno.EINVAL, M("not a regular file"), str(path))


class TooLarge(OSError):
    def __init__(self, path, limit: int):
        super().__init__(errno.EFBIG, M("larger than {limit} bytes", limit=limit), str(path))


class FileShapeError(ValueError):
    """A JSON file that parses but does not have the shape cudaswitch reads from it; str() is one line naming the
    file and the part that is wrong."""


def open_regular(path, nofollow: bool = False):
    """Door: a binary file object for `path`, only when it is a regular file. Opened with O_NONBLOCK, so a FIFO does
    not block the open, and refused after `fstat` unless it is a regular file, so a link to /dev/zero, a FIFO or a
    socket is never read. `nofollow`: a symlink at `path` itself is refused too (ELOOP). Raises OSError like open()
    (FileNotFoundError when missing, NotRegularFile otherwise)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(str(path), flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(path)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)  # clears O_NONBLOCK (fcntl F_SETFL) without loading the fcntl extension
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, limit: int = READ_LIMIT, truncate: bool = False, nofollow: bool = False) -> bytes:
    """Door: the content of a regular file (see open_regular). More than `limit` bytes: the first `limit` with
    `truncate` (a header), else TooLarge: nothing cudaswitch parses whole is that large, and a file rewritten from
    what was read must never be cut."""
    with open_regular(path, nofollow=nofollow) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        if not truncate:
            raise TooLarge(path, limit)
        data = data[:limit]
    return data


def read_text(path, encoding: str = "utf-8", errors: str = "strict", limit: int = READ_LIMIT,
              truncate: bool = False, nofollow: bool = False) -> str:
    """Door: read_bytes decoded (UnicodeDecodeError, a ValueError, as Path.read_text raises it)."""
    return read_bytes(path, limit, truncate, nofollow).decode(encoding, errors)


def read_json(path, shape=None, limit: int = READ_LIMIT, encoding: str = "utf-8"):
    """Door: parsed JSON of a regular file whose value has `shape`, else FileShapeError (a ValueError, as a JSON
    syntax error is) naming the file and the wrong part. Shapes: a type (dict, list, str, int, bool), a tuple of
    shapes (any of them; type(None) allows null), {"key": shape} (a mapping whose listed keys, where present, have
    their shapes; other keys are not looked at), {str: shape} (a mapping of text to shape), [shape] (a list of)."""
    data = parse_json(read_text(path, encoding=encoding, limit=limit), path)
    if shape is not None:
        wrong = _shape_problem(data, shape, "")
        if wrong:
            raise FileShapeError(M("{path}: {wrong}", path=path, wrong=wrong))
    return data


def parse_json(text, where):
    """Door: the value of JSON text (str or bytes, already read through a door), else FileShapeError naming `where`.
    Linear: the parser recurses once per level of nesting and stops at the interpreter's recursion limit, which
    ends here as one line (a file nested 100,000 deep is refused, not a crash), as any syntax error does."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise FileShapeError(M("{path}: nested too deeply to be a file cudaswitch reads", path=where)) from None
    except ValueError as exc:  # a syntax error, or bytes that are not UTF-8
        raise FileShapeError(M("{path}: not valid JSON ({why})", path=where, why=exc)) from None


KEPT_HEADER = b"cudaswitch kept 1\n"  # then the CRC-32 of the rest, then marshal's bytes


def kept_bytes(value) -> bytes:
    """The bytes parse_kept reads back as `value` (plain values: dicts, lists, text, numbers, True/False, None);
    ValueError for a value marshal cannot write."""
    import marshal
    import zlib

    body = marshal.dumps(value, 4)  # version 4: what every Python from 3.4 on reads
    return KEPT_HEADER + zlib.crc32(body).to_bytes(4, "big") + body


def parse_kept(data: bytes):
    """Door: the value kept_bytes wrote into a cache file of cudaswitch's own (the completion cache), or None where
    the bytes are not one. Only for a file read through open_regular, at most a known size, that the effective user
    owns and nobody else may write, in a folder likewise: marshal is the format of Python's own bytecode cache,
    which Python reads from such a folder on every import, and like it no format for bytes another user could have
    shaped (docs/design/security.md, "The completion cache"). The CRC turns away damaged or foreign bytes (a disk's
    damage, an editor's save, JSON text) before marshal reads any: marshal takes the length a list or tuple claims
    at its word, so a damaged length could have cost gigabytes. Past the CRC, linear in the bytes: marshal stops
    at its own nesting limit and at their end, and no code it may build is run."""
    import marshal
    import zlib

    head = len(KEPT_HEADER)
    body = data[head + 4:]
    if data[:head] != KEPT_HEADER or data[head:head + 4] != zlib.crc32(body).to_bytes(4, "big"):
        return None
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError, MemoryError):
        return None


def _kind_name(t) -> str:
    names = {dict: M("a mapping"), list: M("a list"), str: M("text"), int: M("a number"), float: M("a number"),
             bool: M("true or false"), type(None): M("null")}
    return names.get(t, t.__name__)


def _kind(value) -> str:
    for t in (bool, dict, list, str, int, float, type(None)):
        if isinstance(value, t):
            return _kind_name(t)
    return type(value).__name__


def _shape_problem(value, shape, where: str) -> Optional[str]:
    here = where or M("the file")
    if isinstance(shape, tuple):
        for s in shape:
            if _shape_problem(value, s, where) is None:
                return None
        return M("{where} is {got}, not {want}", where=here, got=_kind(value), want=_want(shape))
    if isinstance(shape, type):
        ok = isinstance(value, shape) and not (shape is int and isinstance(value, bool))
        return None if ok else M("{where} is {got}, not {want}", where=here, got=_kind(value), want=_want(shape))
    if isinstance(shape, list):
        if not isinstance(value, list):
            return M("{where} is {got}, not {want}", where=here, got=_kind(value), want=_want(shape))
        for i, item in enumerate(value):
            wrong = _shape_problem(item, shape[0], f"{where}[{i}]")
            if wrong:
                return wrong
        return None
    if not isinstance(value, dict):
        return M("{where} is {got}, not {want}", where=here, got=_kind(value), want=_want(dict))
    for key, sub in shape.items():
        if isinstance(key, type):
            for k, v in value.items():
                wrong = _shape_problem(v, sub, f"{where}.{k}" if where else str(k))
                if wrong:
                    return wrong
        elif key in value:
            wrong = _shape_problem(value[key], sub, f"{where}.{key}" if where else key)
            if wrong:
                return wrong
    return None


def _want(shape) -> str:
    if isinstance(shape, tuple):  # null is allowed where the tuple says so, but is not what a reader should write
        shape = next((s for s in shape if s is not type(None)), type(None))
    if isinstance(shape, type):
        return _kind_name(shape)
    return _kind_name(list if isinstance(shape, list) else dict)


def package_text(path: Path) -> str:
    """Door: a file shipped inside cudaswitch itself (templates, hook snippets, data tables, probe.py). Refuses a
    path outside the package's own folders, so this door cannot become a way around read_text."""
    from cudaswitch.core.resources import package_roots

    real = Path(os.path.realpath(path))
    if not any(real == r or r in real.parents for r in package_roots()):
        raise ValueError(f"{path} is not one of cudaswitch's own files")
    return read_text(real)


# ---- starting a program --------------------------------------------------------------------------------------------

class UntrustedProgram(CudaswitchError):
    """cudaswitch runs as root and the program (or a folder above it) could have been put there by another user."""

    def __init__(self, program, why: str):
        super().__init__(not_run(program, why))
        self.program, self.why = str(program), why


def trusted_search_folders(environ, names=("PATH", "LD_LIBRARY_PATH")) -> "tuple[dict, List[str]]":
    """(a copy of `environ`, the folders left out): run as root, the search lists a child uses by name (PATH for
    the programs it starts, LD_LIBRARY_PATH for every library the loader resolves, its own and its dependencies')
    keep only the folders nobody else could have written. A child such as pip runs `uname` and loads libz by name;
    whoever writes the first folder that answers would run as root. An ordinary user's lists are theirs."""
    env = dict(environ)
    if not POSIX or euid() != 0:
        return env, []
    dropped: List[str] = []
    for name in names:
        if name not in env:
            continue
        folders = env[name].split(os.pathsep)
        kept = [d for d in folders if d and os.path.isabs(d) and not path_problem(Path(d))]
        dropped += [d for d in folders if d and d not in kept]
        if kept:
            env[name] = os.pathsep.join(kept)
        else:
            env.pop(name)
    return env, dropped


def pip_environ(environ) -> "tuple[dict, Optional[str]]":
    """(the environment pip runs in, a note): run as root, pip reads none of its settings files that another user
    could have written (PIP_CONFIG_FILE, the user's pip.conf under HOME or XDG_CONFIG_HOME, a pip.conf in a
    folder of XDG_CONFIG_DIRS). Such a file decides the index, and `log = FILE` makes pip write where she points
    it, as root. pip then reads /dev/null instead of the environment's and the user's files (pip skips the user's
    when PIP_CONFIG_FILE names an existing file) and only the trusted XDG_CONFIG_DIRS. The note names the first
    file left out. An ordinary user's settings are theirs: unchanged."""
    env, dropped = trusted_search_folders(environ)
    if euid() != 0:
        return env, None
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    note = None
    for path in (environ.get("PIP_CONFIG_FILE"), os.path.join(xdg, "pip", "pip.conf"),
                 os.path.join(home, ".pip", "pip.conf")):
        if path and path != os.devnull and os.path.isabs(path):
            why = path_problem(Path(path))
            if why:
                note = note or M("pip's settings {path} are not read: {why}", path=path, why=why)
                env["PIP_CONFIG_FILE"] = os.devnull
    dirs = [d for d in environ.get("XDG_CONFIG_DIRS", "").split(os.pathsep) if d]
    kept = [d for d in dirs if os.path.isabs(d) and not path_problem(Path(d) / "pip" / "pip.conf")]
    if kept != dirs:
        bad = next(d for d in dirs if d not in kept)
        note = note or M("pip's settings {path} are not read: {why}", path=os.path.join(bad, "pip", "pip.conf"),
                         why=path_problem(Path(bad) / "pip" / "pip.conf") or M("not an absolute folder"))
        env["XDG_CONFIG_DIRS"] = os.pathsep.join(kept) or "/etc/xdg"
    if dropped and not note:
        note = M("pip runs without {folders} on its search paths: another user could have written there",
                 folders=Listed(dropped))
    return env, note


def not_run(program, why: str) -> str:
    """The one line saying that `program` was not started, and why."""
    return M("{program} not run: {why}; cudaswitch run as {user} runs no program another user could have put there",
             program=program, why=why, user=user_name(euid()))


def program_problem(program) -> Optional[str]:
    """Why cudaswitch, running as root, must not start `program` (an absolute path): its resolved file or a folder
    above it could have been written by another user. None for an ordinary user, who runs what their own shell
    would run and gains nothing (docs/design/security.md)."""
    if euid() != 0:
        return None
    return executable_problem(Path(program))


def find_program(system, name: str):
    """(displayed path, note) of `name` on the system's PATH as the shell would find it, skipping, when root, every
    candidate another user could have put there (the note says which and why); (None, note) when none is left."""
    note = None
    for entry in system.split_list(system.environ.get("PATH", "")):
        found = system.which(name, entry) if entry else None
        if not found:
            continue
        why = program_problem(system.local(found))
        if not why:
            return found, note
        note = note or not_run(found, why)
    return None, note


def run_program(args, timeout: Optional[float], env=None, cwd=None, input: Optional[str] = None,
                capture: bool = True, text: bool = True, checked: bool = True, by_link: bool = False):
    """Door: run `args` and wait at most `timeout` seconds (None: no limit); a CompletedProcess. As root, an
    executable another user could have written raises UntrustedProgram before anything starts (`checked=False`
    only for cudaswitch's own interpreter, see run_python). On timeout the process is killed and
    subprocess.TimeoutExpired carries everything it printed until then. stdin is /dev/null unless `input` is given:
    a program waiting for a password must not wait forever for a user who cannot see its prompt. As root a checked
    program is started by its resolved file; `by_link` keeps the path it was found at, for an environment's Python
    whose link and pyvenv.cfg make it that environment (the smoke test, which has checked the folders that
    Python reads): the link's folders are checked too, so it cannot change between the check and the start."""
    import shutil
    import subprocess

    args = [str(a) for a in args]
    if checked:
        exe = args[0] if os.path.dirname(args[0]) else (shutil.which(args[0], path=(env or os.environ).get("PATH"))
                                                        or args[0])
        if os.path.isabs(exe) and euid() == 0:
            final, why = trusted_program(exe)
            if why:
                raise UntrustedProgram(exe, why)
            if not by_link:
                args[0] = final  # the file checked is the file started (no window through a link)
    pipe = subprocess.PIPE if capture else None
    proc = subprocess.Popen(args, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, stdout=pipe,
                            stderr=pipe, env=dict(env) if env is not None else None, cwd=cwd, text=text)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        exc = subprocess.TimeoutExpired(args, timeout, output=out, stderr=err)
        exc.returncode = proc.returncode
        raise exc from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def run_python(args, timeout: Optional[float], env=None, text: bool = True):
    """Door: cudaswitch's own Python with `-I` (no PYTHONPATH, no user site-packages, no working folder or script
    folder on sys.path) from the root folder (a module in the caller's working folder is not even listed), so
    nothing the caller's folder or environment holds is imported."""
    import sys

    return run_program([sys.executable, "-I", *args], timeout, env=env, cwd=os.path.abspath(os.sep), text=text,
                       checked=False)


def exec_program(argv, env) -> None:
    """Door: become the command the user typed (`cudaswitch run X -- CMD`), found on the given PATH as `env` and
    `sudo` find it. No ownership check: the user named it and runs it with their own rights either way."""
    os.execvpe(argv[0], list(argv), env)


def call_program(argv, env) -> int:
    """Door: run the command the user typed and return its exit status (Windows, where a process cannot become
    another); no ownership check, as exec_program."""
    import subprocess

    return subprocess.call(list(argv), env=env)


# ---- writing into a target ------------------------------------------------------------------------------------------

def foreign_link(path) -> Optional[str]:
    """Why a symlink at `path` must not be followed: running as root, the link (or the file it leads to, or a
    folder on the way) could have been made by another user, who would choose what root reads or replaces (a
    root-only 0600 file). None when `path` is no link, or when not root."""
    if not POSIX or euid() != 0:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISLNK(st.st_mode):
        return None
    if st.st_uid != 0:
        return M("{path} is a symlink that belongs to {user}", path=path, user=user_name(st.st_uid))
    return path_problem(Path(os.path.realpath(path)))


def refuse_foreign_link(path, how: str) -> None:
    why = foreign_link(path)
    if why:
        raise CudaswitchError(M("refused to follow {path}: {why}, and cudaswitch runs as {user}; {how}; nothing was "
                                "changed", path=path, why=why, user=user_name(euid()), how=how))


def write_file(path, data, mode: Optional[int] = None, follow_symlinks: bool = False, durable: bool = True) -> None:
    """Door: replace `path` with `data` so that readers see the old or the new content, never a mix (a temporary
    file in the same folder, fsync, rename). A cache that is only a shortcut (not `durable`) skips the two fsyncs:
    after a crash it may be empty, which its reader takes as no cache.

    The temporary file is owner-only (0600); in a shared environment other users must still read the hooks and the
    state file, so the result gets the mode a plain open() would give (0666 less the umask), or, when a file is
    replaced, that file's mode and (where allowed, i.e. as root) its owner and group. With `follow_symlinks`, a
    symlink at `path` (a dotfile manager's rc file) stays a symlink and its target is replaced, unless, as root,
    the link is another user's (foreign_link): that user would choose which file root rewrites."""
    path = Path(path)
    if follow_symlinks and path.is_symlink():
        refuse_foreign_link(path, M("write the file it points to yourself, or replace the link by a file"))
        path = Path(os.path.realpath(path))
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = os.stat(path, follow_symlinks=False)
    except OSError:
        old = None
    keep = old is not None and stat.S_ISREG(old.st_mode)
    if mode is None:
        mode = stat.S_IMODE(old.st_mode) if keep else 0o666 & ~current_umask()
    fh, tmp = _temp_beside(path)
    try:
        with fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if keep and hasattr(os, "chown"):
            st = os.stat(tmp)
            if (old.st_uid, old.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.chown(tmp, old.st_uid, old.st_gid)
                except OSError:
                    pass  # only root may give a file away; the user's own new file is the best there is
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def _temp_beside(path: Path):
    """(binary file, name) of a new owner-only file `.NAME.<random>.tmp` in path's folder, made as tempfile.mkstemp
    makes one (create_new: O_EXCL, never through a link; another name where one exists), without importing
    tempfile: with random and shutil that import was 7% of what the first TAB after a change adds to starting Python
    (selector_cache keeps its record through here)."""
    for _attempt in range(100):
        tmp = os.path.join(str(path.parent), f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return create_new(tmp, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path.parent))


def create_new(path, mode: int = 0o600):
    """Door: a binary file object for a file that must not exist yet (O_EXCL), never through a symlink."""
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_BINARY", 0), mode)
    return os.fdopen(fd, "wb")


def move(src, dst) -> None:
    """Door: rename `src` over `dst` atomically. A symlink at `dst` is replaced, never followed; both lie in folders
    the caller has checked (refuse_if_foreign) or created itself."""
    os.replace(src, dst)


def remove_tree(path, ignore_errors: bool = False) -> None:
    """Door: delete a folder cudaswitch created (a staging or transaction folder). shutil.rmtree works through
    folder descriptors on Linux and refuses a symlink at `path`, so a link swapped in does not lead it elsewhere."""
    import shutil

    shutil.rmtree(path, ignore_errors=ignore_errors)


def fsync_dir(folder) -> None:
    """Make a rename durable (POSIX); a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(str(folder), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- changing names in a folder the caller checked or created -----------------------------------------------------
# Thin on purpose: each is one system call the caller has already placed (refuse_if_foreign, open_dir, its own staging
# folder). Being doors, they are what tests/core/test_doors.py lets through, and what core/audit.py sees as root.

def make_dirs(path, mode: int = 0o777, exist_ok: bool = True) -> None:
    """Door: create `path` and any missing folders above it (os.makedirs)."""
    os.makedirs(path, mode, exist_ok=exist_ok)


def make_dir(path, mode: int = 0o777, dir_fd: Optional[int] = None) -> None:
    """Door: create one folder (os.mkdir); FileExistsError when there is one."""
    os.mkdir(path, mode, dir_fd=dir_fd)


def remove(path, missing_ok: bool = False) -> None:
    """Door: remove one file or link (never what a link points to)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        if not missing_ok:
            raise


def remove_dir(path, dir_fd: Optional[int] = None) -> None:
    """Door: remove one empty folder (OSError when it is not empty)."""
    os.rmdir(path, dir_fd=dir_fd)


def symlink(target, link) -> None:
    """Door: make `link` point to `target`."""
    os.symlink(target, link)


def chown(path, uid: int, gid: int) -> None:
    """Door: give a file cudaswitch wrote to its owner (root only)."""
    os.chown(path, uid, gid)


def set_mode(fd: int, mode: int) -> None:
    """Door: the mode of a file cudaswitch holds open (a descriptor, so no link on the way can redirect it)."""
    os.fchmod(fd, mode)


def private_dir(prefix: str, dir=None) -> str:
    """Door: a new 0700 folder of cudaswitch's own (tempfile.mkdtemp), in `dir` or the system's temporary folder."""
    import tempfile

    return tempfile.mkdtemp(prefix=prefix, dir=dir)


def private_temp_dir(prefix: str):
    """Door: as private_dir, as a context manager that removes it afterwards (tempfile.TemporaryDirectory)."""
    import tempfile

    return tempfile.TemporaryDirectory(prefix=prefix)


# ---- the registry of input sources ----------------------------------------------------------------------------------
# Every place cudaswitch takes a file, a program, a library or a setting from that someone else may own. A new input
# source is added here as well as routed through the doors above: tests/hostile/ plants a canary into every source
# listed (its planters must name exactly these) and fails when one runs as root, or when root reads a file of the
# hostile account outside them. What a shell that runs the hooks reads at start is its record's (core/shells.py,
# RealShell.reads), added in __getattr__ below.
_INPUT_SOURCES = {
    "path": "the folders on PATH (nvcc, nvidia-smi, the shells, conda, pip, ldconfig)",
    "ld_library_path": "the folders on LD_LIBRARY_PATH (libcuda, libcudnn)",
    "pyvenv": "a link to a real interpreter with a pyvenv.cfg beside it (Python then reads that folder's "
              "site-packages)",
    "env_prefix": "a conda environment's prefix: bin/python and the other programs in it",
    "site_packages": "an environment's site-packages: .pth files, torch's version.py, the startup file's folder",
    "activate_d": "an environment's etc/conda/activate.d, deactivate.d and env_vars.d",
    "kernelspecs": "Jupyter's kernels/*/kernel.json in every data folder",
    "conda_meta": "an environment's conda-meta: history, package records, state",
    "version_files": "a toolkit's version.json, version.txt, cuda.h, cudnn_version.h and bin/nvcc",
    "condarc": "conda's settings: CONDARC, ~/.condarc, the environments list",
    "pip_config": "pip's settings: PIP_CONFIG_FILE, pip.conf",
    "modulepath": "the folders on MODULEPATH and their modulefiles",
    "spider_cache": "Lmod's spider caches",
}


def __getattr__(name: str):
    """INPUT_SOURCES: the table above and the startup files and variables of the shells that run the hooks, from
    their records (RealShell.reads), read when asked: tab completion imports this module, not the records."""
    if name == "INPUT_SOURCES":
        from cudaswitch.core.shells import REAL_SHELLS

        return {**_INPUT_SOURCES, **{key: what for real in REAL_SHELLS for key, what in real.reads}}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
