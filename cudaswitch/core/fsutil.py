"""Atomic writes into a user's environment or toolkit: temp file in the same folder, fsync, rename."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from cudaswitch.core.trust import current_umask  # noqa: F401  (here since before the doors; callers import it)


def atomic_write(path: Union[str, Path], data: Union[bytes, str], mode: Optional[int] = None,
                 follow_symlinks: bool = False) -> None:
    """Replace `path` with `data` atomically, keeping mode and owner: the write door, trust.write_file."""
    from cudaswitch.core.trust import write_file

    write_file(path, data, mode=mode, follow_symlinks=follow_symlinks)


def nearest_existing(path: Path) -> Path:
    p = Path(os.path.abspath(path))
    while not p.exists() and p.parent != p:
        p = p.parent
    return p


def read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 1))
    except (OSError, AttributeError):
        return False


def check_writable(path: Union[str, Path], advice: str) -> None:
    """Refuse up front, as one line, to write `path` (a file, or a folder to create) where that cannot work: a
    read-only file system, or a folder or file owned by someone else. Nothing has been changed when it refuses."""
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.i18n import M

    path = Path(path)
    existing = nearest_existing(path)
    # replacing a file needs its folder writable (the new file is renamed over it), not the file itself
    folder = existing if existing.is_dir() else existing.parent
    if read_only_fs(folder):
        raise CudaswitchError(M("cannot write to {folder}: it is on a read-only file system; {advice}; "
                                "nothing was changed", folder=folder, advice=advice))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CudaswitchError(M("cannot write to {folder} (permission denied): {advice}; nothing was changed",
                                folder=folder, advice=advice))


def fsync_dir(folder: Union[str, Path]) -> None:
    """Make a rename durable (POSIX); a no-op where folders cannot be opened (Windows)."""
    from cudaswitch.core.trust import fsync_dir as sync

    sync(folder)


def load_yaml(path: Union[str, Path]):
    """Parsed YAML, or None when the file does not exist. ruamel.yaml is imported only here."""
    from ruamel.yaml import YAML

    from cudaswitch.core.trust import read_text

    try:
        text = read_text(path)
    except FileNotFoundError:
        return None
    return YAML(typ="safe").load(text)


def dump_yaml(path: Union[str, Path], data) -> None:
    import io

    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    buf = io.StringIO()
    yaml.dump(data, buf)
    atomic_write(path, buf.getvalue())
