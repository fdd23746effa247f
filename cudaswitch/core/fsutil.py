"""Atomic writes into a user's environment or toolkit: temp file in the same folder, fsync, rename."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Optional, Union


def current_umask() -> int:
    """The process umask, read without a window in which another thread could create a file with umask 0."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Union[str, Path], data: Union[bytes, str], mode: Optional[int] = None,
                 follow_symlinks: bool = False) -> None:
    """Replace `path` with `data` so that readers see the old or the new content, never a mix.

    mkstemp creates owner-only (0600) files; in a shared environment other users must still read the hooks and the
    state file, so the result gets the mode a plain open() would give (0666 less the umask), or, when a file is
    replaced, that file's mode and (where allowed, i.e. as root) its owner and group. With `follow_symlinks`, a
    symlink at `path` (a dotfile manager's rc file) stays a symlink and its target is replaced."""
    path = Path(path)
    if follow_symlinks and path.is_symlink():
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if keep and hasattr(os, "chown") and (old.st_uid, old.st_gid) != _ids(tmp):
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
    fsync_dir(path.parent)


def _ids(path: str):
    st = os.stat(path)
    return st.st_uid, st.st_gid


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
    try:
        fd = os.open(str(folder), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_yaml(path: Union[str, Path]):
    """Parsed YAML, or None when the file does not exist. ruamel.yaml is imported only here."""
    from ruamel.yaml import YAML

    try:
        text = Path(path).read_text(encoding="utf-8")
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
