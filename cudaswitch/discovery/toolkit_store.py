"""Where `cudaswitch install-toolkit` keeps its toolkits, kept apart from the installer so that discovery (every
`list`, `status`, `use`) reads the store without importing what only installing needs (zipfile, hashlib, tempfile,
subprocess)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

from cudaswitch.core.system import System


def store_dir(system: System) -> Path:
    explicit = system.environ.get("CUDASWITCH_TOOLKITS_DIR")
    if explicit:
        return Path(explicit)
    from cudaswitch.core.config import user_dir

    return Path(user_dir(system, "data")) / "toolkits"


def _registry(system: System) -> Path:
    # Toolkits installed with --into live elsewhere; this list lets discovery find them.
    return store_dir(system).parent / "installed-toolkits.txt"


def _registered(system: System) -> List[str]:
    try:
        lines = _registry(system).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip()]


def _write_registry(system: System, roots: List[str]) -> None:
    path = _registry(system)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text("".join(r + "\n" for r in roots), encoding="utf-8")
    os.replace(tmp, path)


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
