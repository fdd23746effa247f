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
from typing import Iterable, List, Optional

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M

POSIX = hasattr(os, "geteuid") and hasattr(os, "O_NOFOLLOW")


def euid() -> Optional[int]:
    return os.geteuid() if hasattr(os, "geteuid") else None


def user_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def group_name(gid: int) -> str:
    try:
        import grp

        return f"group {grp.getgrgid(gid).gr_name}"
    except (ImportError, KeyError):
        return f"group {gid}"


def stat_problem(st: os.stat_result, me: Optional[int] = None) -> Optional[str]:
    """Why a file with this stat could have been written by someone other than `me` or root, or None.
    Group-writable counts only when `me` is root: root is more privileged than every member of that group, an
    ordinary user in the group is not."""
    me = euid() if me is None else me
    if me is None:
        return None
    sticky = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX
    if st.st_uid not in (me, 0):
        return M("belongs to {user}", user=user_name(st.st_uid))
    if st.st_mode & stat.S_IWOTH and not sticky:
        return M("is writable by every user")
    if me == 0 and st.st_mode & stat.S_IWGRP and not sticky and st.st_gid != 0:
        return M("is writable by {group}", group=group_name(st.st_gid))
    return None


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


def refuse_if_foreign(paths: Iterable[Path], what: str, how: str, below: Optional[Path] = None) -> None:
    """CudaswitchError naming the first path another user could have written. `what`: the action refused;
    `how`: how to proceed (e.g. 'run it as that user: sudo -u alice cudaswitch ...')."""
    for p in paths:
        why = path_problem(p, below)
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
    the resolved file and every folder above it must belong to the invoking user or root and not be writable by
    others."""
    if not POSIX:
        return None
    try:
        real = Path(os.path.realpath(path))
    except OSError:
        return M("{path} cannot be resolved", path=path)
    return path_problem(real)


# ---- no-follow file operations inside a folder another user may control -------------------------------------------

def open_dir(base: Path, parts: Iterable[str], create: bool = False) -> int:
    """A descriptor of base/parts..., opened one component at a time without following a symlink below `base`
    (base itself was named by the user and may be a link). Missing folders are created with `create`. Raises
    CudaswitchError naming a component that is a symlink or not a folder."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
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
        from cudaswitch.core.fsutil import current_umask

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


# ---- starting a program ----------------------------------------------------------------------------------------

def run_program(argv, env, timeout: float, cwd: Optional[str] = None):
    """Start a program cudaswitch chose (a shell found on PATH, to run a hook it wrote) with exactly `env`, stdin
    closed, and return the CompletedProcess with stdout and stderr as bytes. The caller checks the program with
    `executable_problem` first; a timeout raises subprocess.TimeoutExpired after the process is killed."""
    import subprocess

    return subprocess.run(list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, check=False)
