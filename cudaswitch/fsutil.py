"""Atomic writes into a user's environment or toolkit: temp file in the same folder, fsync, rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional, Union


def atomic_write(path: Union[str, Path], data: Union[bytes, str], mode: Optional[int] = None) -> None:
    """Replace `path` with `data` so that readers see the old or the new content, never a mix."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


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
