"""What is checked before a byte is staged: the target's folders are writable, on one file system, owned by the
invoking user or root, and have room for the archive (docs/design/cudnn-install.md: cudnn-preflight,
cudnn-modes-owners)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.fsutil import nearest_existing, read_only_fs
from cudaswitch.core.i18n import M
from cudaswitch.cudnn.target import Target


def check_writable(target: Target, access: Callable[[str, int], bool] = os.access) -> None:
    """Every folder the install writes to must be writable, and all on one file system (the commit is renames),
    before anything is staged (cudnn-preflight)."""
    places = [("", target.record_base)] + [(role, d) for role, d in target.local_dirs.items()]
    for role, d in places:
        where = nearest_existing(d)
        if not access(str(where), os.W_OK | os.X_OK):
            shown = target.display(where)
            if read_only_fs(where):
                raise CudaswitchError(M("cannot write to {folder}: it is on a read-only file system; {advice}; "
                                        "nothing was changed", folder=shown,
                                        advice=M("remount it read-write, or install into a conda environment with "
                                                 "--into-env")))
            if target.kind == "env":
                advice = M("fix the environment folder's permissions, or use an environment you own (-n/-p)")
            elif target.os == "windows":
                advice = M("run the command from an administrator prompt (right-click the terminal, 'Run as "
                           "administrator'), or install into a conda environment with --into-env")
            else:
                advice = M("run it with sudo (sudo cudaswitch install-cudnn ...), or install into a conda environment "
                           "with --into-env")
            raise CudaswitchError(M("cannot write to {folder} (permission denied): {advice}; nothing was changed",
                                    folder=shown, advice=advice))
    devs = set()
    base = nearest_existing(target.record_base)
    for d in [base] + [nearest_existing(x) for x in target.local_dirs.values()]:
        devs.add(os.stat(d).st_dev)
    if len(devs) > 1:
        raise CudaswitchError(M("the folders of {target} are on different file systems; cudaswitch needs them on one "
                                "file system to install atomically; nothing was changed", target=target.label))


def check_trusted(target: Target) -> None:
    """cudnn-modes-owners, the rule of docs/design/security.md: the toolkit or environment, every destination folder
    and every cudaswitch record in it must belong to the invoking user or root and be writable by nobody else;
    otherwise another user could have planted a journal, a link or a library that cudaswitch would act on."""
    from cudaswitch.core import trust

    if not trust.POSIX:
        return
    root = Path(os.path.realpath(target.local_root))
    places = [root] + [Path(os.path.realpath(d)) for d in target.local_dirs.values()]
    how = M("run it as that user ({hint} cudaswitch ...) or fix the permissions (chown/chmod go-w)",
            hint=trust.owner_hint(root))
    trust.refuse_if_foreign(places, M("work on {target}", target=target.label), how)
    base = Path(os.path.realpath(target.record_base)) if os.path.lexists(target.record_base) else None
    if base is not None:
        trust.refuse_if_foreign([base], M("use the cudaswitch records of {target}", target=target.label), how,
                                below=root)
        for dirpath, dirnames, filenames in os.walk(base):
            for n in dirnames + filenames:
                p = Path(dirpath, n)
                st = os.lstat(p)
                why = trust.stat_problem(st) if not os.path.islink(p) else (
                    None if st.st_uid in (0, trust.euid()) else M("belongs to {user}", user=trust.user_name(st.st_uid)))
                if why:
                    raise CudaswitchError(M("refused to use the cudaswitch records of {target}: {path} {why}, and "
                                            "cudaswitch runs as {user}: a journal another user could have written is "
                                            "never acted on; {how}; nothing was changed", target=target.label, path=p,
                                            why=why, user=trust.user_name(trust.euid()), how=how))


SPACE_MARGIN = 1 << 20  # what the manifest, folders and backups' metadata take besides the files themselves


def check_space(folder: Path, size: int, target: Target) -> None:
    """Refuse before writing `size` more bytes where they would not fit in the space ordinary users may use: as root,
    writes would otherwise go on into the blocks the file system reserves for root, until / itself is full."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return  # Windows: ENOSPC from the write is reported instead
    free = st.f_bavail * st.f_frsize
    if size + SPACE_MARGIN > free:
        raise CudaswitchError(M("not enough free space for {target} on {folder}: {size} more would be needed and "
                                "{free} are free (the blocks reserved for root are not used); installing would leave "
                                "the disk full: free some space and run the command again; nothing was changed",
                                target=target.label, folder=target.display(folder), size=_mib(size), free=_mib(free)))


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"
