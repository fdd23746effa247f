"""Locks any user who can open a folder can also take: waited for a bounded time, and the refusal names the holder."""

from __future__ import annotations

import os
from typing import Optional

from cudaswitch.core.i18n import M


def flock_within(fd: int, wait: float) -> bool:
    """An exclusive flock on `fd`, retried for `wait` seconds (any user who can open a folder can flock it, so
    nobody waits forever); False when it is still held by then."""
    import fcntl
    import time

    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)


def lock_holder(fd: int) -> Optional[str]:
    """'process 1234 (flock, user alice (uid 1000))' holding a flock on the file `fd` is open on, from /proc/locks
    (Linux); None where that cannot be told."""
    from cudaswitch.core import trust

    st = os.fstat(fd)
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    try:
        lines = trust.read_text("/proc/locks", encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) < 6 or f[1] != "FLOCK" or "->" in f:
            continue
        try:
            maj, mnr, ino = f[5].split(":")
            if (int(maj, 16), int(mnr, 16), int(ino)) != want:
                continue
            pid = int(f[4])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            comm = trust.read_text(f"/proc/{pid}/comm", errors="replace").strip()
            return M("process {pid} ({comm}, user {user})", pid=pid, comm=comm,
                     user=trust.user_name(os.stat(f"/proc/{pid}").st_uid))
        except OSError:
            return M("process {pid}", pid=pid)
    return None
