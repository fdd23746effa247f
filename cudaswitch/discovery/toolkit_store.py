"""Where `cudaswitch install-toolkit` keeps its toolkits, kept apart from the installer so that discovery (every
`list`, `status`, `use`) reads the store without importing what only installing needs (zipfile, hashlib, tempfile,
subprocess)."""

from __future__ import annotations

import os
from pathlib import Path

from cudaswitch.core.system import System

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import List, Optional

REGISTRY = "installed-toolkits.txt"
LOCK_WAIT = 10.0  # seconds: another install-toolkit only holds the lock while it rewrites a few lines


def store_dir(system: System) -> Path:
    explicit = system.environ.get("CUDASWITCH_TOOLKITS_DIR")
    if explicit:
        return Path(explicit)
    from cudaswitch.core.config import user_dir

    return Path(user_dir(system, "data")) / "toolkits"


def _registry(system: System) -> Path:
    # Toolkits installed with --into live elsewhere; this list lets discovery find them.
    return store_dir(system).parent / REGISTRY


def _registered(system: System) -> List[str]:
    from cudaswitch.core import trust

    folder = _registry(system).parent
    try:
        fd = trust.open_dir(folder, [])
    except (OSError, trust.CudaswitchError):
        return []
    try:
        # read_regular: a FIFO or a link planted at the registry's name neither hangs nor redirects the read
        data = trust.read_regular(fd, REGISTRY)
    finally:
        os.close(fd)
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and os.path.isabs(ln.strip())]


def _locked_registry(system: System) -> int:
    """The registry's folder, created if missing, open and exclusively locked (flock on the folder itself, no lock
    file left behind) for a read-modify-write: two installs with --into at once both stay registered. The folder's
    descriptor, for trust.read_regular / trust.write_at; closing it releases the lock. A folder another user could
    write is refused first: whoever can write it chooses what discovery lists."""
    # a descriptor and try/finally in register(), not a contextlib.contextmanager: discovery imports this module on
    # every TAB that computes, and importing contextlib was about 3 million instructions of such a TAB
    from cudaswitch.core import trust
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.locks import flock_within, lock_holder
    from cudaswitch.core.i18n import M

    folder = _registry(system).parent
    trust.make_dirs(folder)
    why = registry_problem(system)
    if why:
        raise CudaswitchError(M("refused to update the list of installed toolkits: {why}; set "
                                "CUDASWITCH_TOOLKITS_DIR to a folder of your own", why=why))
    fd = trust.open_dir(folder, [])
    try:
        if hasattr(os, "geteuid") and not flock_within(fd, LOCK_WAIT):  # Windows: no flock, and no other user
            raise CudaswitchError(M("{folder} is locked by {holder}; if that is another cudaswitch, let it finish, "
                                    "then run the command again", folder=folder,
                                    holder=lock_holder(fd) or M("another process")))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_locked(fd: int) -> List[str]:
    from cudaswitch.core import trust

    data = trust.read_regular(fd, REGISTRY) or b""
    return [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]


def register(system: System, root: str, add: bool = True) -> None:
    """Add (or remove) a toolkit installed with --into to the list discovery reads, under the registry's lock."""
    from cudaswitch.core import trust

    fd = _locked_registry(system)
    try:
        roots = [r for r in _read_locked(fd) if r != root] + ([root] if add else [])
        trust.write_at(fd, REGISTRY, "".join(r + "\n" for r in roots).encode("utf-8"))
    finally:
        os.close(fd)  # releases the lock


def registry_problem(system: System) -> Optional[str]:
    """Why the registry could have been written by another user (then it is not updated), or None."""
    from cudaswitch.core import trust

    return trust.path_problem(_registry(system))


def discovery_roots(system: System) -> List[str]:
    """For toolkits.discover: the store (a folder of toolkits) and every --into toolkit that still exists."""
    out = [str(p) for p in [store_dir(system)] if _is_dir(system.local(str(p)))]
    return out + [r for r in _registered(system) if _is_dir(system.local(r))]


def _is_dir(path: Path) -> bool:
    # a data folder the user cannot enter (a HOME that sudo kept, another user's) is no store, not an error
    try:
        return path.is_dir()
    except OSError:
        return False
