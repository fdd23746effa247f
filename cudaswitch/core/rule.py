"""The one trust rule, in the lowest place, so that both core/trust.py's doors (asked before acting) and the audit
hook of core/audit.py (which sees every start, load and write as root) apply the same code: with more privilege
than a file's owner, cudaswitch reads no decision from it, follows no link there and runs nothing there
(docs/design/security.md). No import of cudaswitch but i18n: the audit hook runs this while modules are still being
imported.
"""

from __future__ import annotations

import os
import stat

from cudaswitch.core.i18n import M

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Optional


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


def _owner_problem(st: os.stat_result, me: int) -> Optional[str]:
    if st.st_uid not in (me, 0):
        return M("belongs to {user}", user=user_name(st.st_uid))
    return None


def folder_rule_problem(folder: str, me: int, cache: Optional[dict] = None) -> Optional[str]:
    """Why another user could change what lies in `folder` or above it (each component: its owner and, unless it is
    a link, its mode; a link's target is judged with the resolved path). `cache`: verdicts already reached (the
    audit hook keeps them while a command runs; only that command's own changes can undo one)."""
    if cache is not None and cache.get(folder):
        return None
    parent = os.path.dirname(folder)
    if parent != folder:
        why = folder_rule_problem(parent, me, cache)
        if why:
            return why
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None  # nothing below a missing folder exists either; creating it is judged at its own parent
    why = _owner_problem(st, me) if stat.S_ISLNK(st.st_mode) else stat_problem(st, me)
    if why:
        return M("{path} {why}", path=folder, why=why)
    if cache is not None:
        cache[folder] = True
    return None


def rule_walk(path: str, me: Optional[int] = None, file_mode: bool = True, cache: Optional[dict] = None):
    """(the file `path` leads to, why the rule refuses it). The rule for `path` (absolute): its folders, the file or
    link itself, and for a link every hop on the way to what it names (each link's owner and folders: a link in a
    trusted folder to her link to /bin/true is hers to flip), then the resolved file. `file_mode`: a world- or
    group-writable file counts (a program, a library); for a write only its owner does (what is written there
    replaces its content anyway, and /dev/null is writable by all). When nothing is refused, every link on the way
    sits in folders nobody else can write, so the file returned is what the path names until root or the user
    change it: the one to start or load (a second resolution after the check could meet a link flipped in
    between). The file is None when the walk did not reach one (a missing file, a loop of links)."""
    me = euid() if me is None else me
    path = os.path.abspath(path)
    if me is None:
        return path, None
    for _hop in range(40):  # the kernel's own limit on links followed (ELOOP after that)
        folder = os.path.dirname(path)
        why = folder_rule_problem(folder, me, cache)
        real_folder = os.path.realpath(folder)
        if not why and real_folder != folder:
            why = folder_rule_problem(real_folder, me, cache)
        if why:
            return None, why
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None, None
        if not stat.S_ISLNK(st.st_mode):
            break
        why = _owner_problem(st, me)
        if why:
            return None, M("{path} {why}", path=path, why=why)
        path = os.path.normpath(os.path.join(real_folder, os.readlink(path)))
    else:
        return None, None  # a loop of links: the call itself fails
    final = os.path.join(real_folder, os.path.basename(path))
    if stat.S_ISCHR(st.st_mode):
        return final, None  # /dev/null, a terminal: nothing anyone plants
    why = stat_problem(st, me) if file_mode else _owner_problem(st, me)
    return (None, M("{path} {why}", path=path, why=why)) if why else (final, None)
