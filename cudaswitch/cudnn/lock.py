"""One cudaswitch at a time per target (docs/design/cudnn-install.md: cudnn-one-at-a-time)."""

from __future__ import annotations

import os
from typing import Optional

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.locks import flock_within, lock_holder
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
        if not hasattr(os, "geteuid"):  # Windows: no flock
            return self
        try:
            from cudaswitch.core.trust import open_dir

            self.fd = open_dir(self.target.local_root, [])
        except (OSError, CudaswitchError):
            return self  # a missing root is reported by what follows
        if flock_within(self.fd, self.wait):
            return self
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
