"""Reading inside a folder cudaswitch does not own (an environment's conda-meta, site-packages, activate.d; a Jupyter
data folder): on POSIX through core/trust.py's no-follow readers, on Windows (no O_NOFOLLOW, folders cannot be opened
as descriptors) through plain paths, as trust's own Windows fallbacks do."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable, List, Optional

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError


def names(base: Path, parts: Iterable[str]) -> List[str]:
    """The entries of base/parts, [] when it is missing, a link below `base`, or not a folder."""
    parts = list(parts)
    if not trust.POSIX:
        try:
            return sorted(os.listdir(Path(base, *parts)))
        except OSError:
            return []
    try:
        fd = trust.open_dir(Path(base), parts)
    except (OSError, CudaswitchError):
        return []
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


def read(base: Path, parts: Iterable[str], name: str, limit: int = 1 << 20) -> Optional[bytes]:
    """The first `limit` bytes of the regular file base/parts/name; None when it is missing, not a regular file, or
    behind a link below `base`."""
    parts = list(parts)
    if not trust.POSIX:
        path = Path(base, *parts, name)
        try:
            if not stat.S_ISREG(os.stat(path, follow_symlinks=False).st_mode):
                return None
            return trust.read_bytes(path, limit, truncate=True)
        except OSError:
            return None
    try:
        fd = trust.open_dir(Path(base), parts)
    except (OSError, CudaswitchError):
        return None
    try:
        return trust.read_regular(fd, name, limit)
    finally:
        os.close(fd)
