"""One cudaswitch at a time per target (docs/design/cudnn-install.md: cudnn-one-at-a-time)."""

from __future__ import annotations

import os
import time
from typing import Optional

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M
from cudaswitch.cudnn.target import Target


LOCK_WAIT = 10.0  # seconds: another cudaswitch finishing its commit takes well under that


class locked:
    """Exclusive lock on the target's root folder (flock on the folder itself, so no lock file is left behind) for
    the whole install / uninstall, recovery included: a second cudaswitch on the same toolkit is refused instead of
    taking the first one's transaction for an interrupted one. Any user who can open the folder can take that lock,
    so it is waited for `wait` seconds at most, and the refusal names the process holding it. A no-op where flock
    does not exist (Windows)."""

    def __init__(self, target: Target, wait: Optional[float] = None):
        self.target = target
        self.wait = LOCK_WAIT if wait is None else wait
        self.fd: Optional[int] = None

    def __enter__(self) -> "locked":
        try:
            import fcntl
        except ImportError:
            return self
        try:
            from cudaswitch.core.trust import open_dir

            self.fd = open_dir(self.target.local_root, [])
        except (OSError, CudaswitchError):
            return self  # a missing root is reported by what follows
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.2)
        holder = lock_holder(self.fd)
        os.close(self.fd)
        self.fd = None
        raise CudaswitchError(M("{target} is locked by {holder} (waited {wait:g} s); if that is another cudaswitch, "
                                "let it finish; if not, that process blocks installs: end it or ask its owner; "
                                "nothing was changed", target=self.target.label,
                                holder=holder or M("another process"), wait=self.wait)) from None

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None


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
