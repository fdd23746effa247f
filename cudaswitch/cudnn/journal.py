"""The transaction folder and its journal, `manifest.yaml`: one folder per install under the target
(`<toolkit>/.cudaswitch/cudnn/<id>/`, `<env>/etc/cudaswitch/cudnn/<id>/`) holding the manifest, `stage/` and
`backup/` (docs/design/cudnn-install.md: cudnn-journal). Writing, reading back (refusing anything cudaswitch did
not write), and what is at a destination now."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M

if TYPE_CHECKING:
    from cudaswitch.cudnn.target import Target

RECORD_TOOLKIT = (".cudaswitch", "cudnn")
RECORD_ENV = ("etc", "cudaswitch", "cudnn")
MANIFEST = "manifest.yaml"
SCHEMA = 1


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    from cudaswitch.core.trust import open_regular

    with open_regular(path) as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def _paths(data: dict, conv: Callable[[str], str]) -> dict:
    """The manifest with every path converted (stored relative to the target's root, used absolute)."""
    out = dict(data)
    for key in ("created", "record_created"):
        if isinstance(out.get(key), list):
            out[key] = [conv(p) for p in out[key]]
    if isinstance(out.get("ops"), list):
        out["ops"] = [dict(op, dest=conv(op["dest"])) if isinstance(op, dict) and "dest" in op else op
                      for op in out["ops"]]
    return out


def write_manifest(txdir: Path, data: dict, root: Path) -> None:
    """Paths are stored relative to the toolkit / environment root, so a moved folder keeps a valid manifest (and
    for a human to read: destinations are recomputed from role and name when it is read back)."""
    from cudaswitch.core.fsutil import dump_yaml

    dump_yaml(txdir / MANIFEST, _plain(_paths(data, lambda p: Path(os.path.relpath(p, root)).as_posix())))


def _plain(value):
    """Messages kept for translation (`i18n.M`, a str subclass) as the plain English text YAML can write."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, str) else value


ROLES = ("bin", "include", "lib")
KINDS = ("file", "symlink")
ACTIONS = ("new", "overwrite", "identical")


def _single_name(name) -> bool:
    return (isinstance(name, str) and name not in ("", ".", "..") and not any(c in name for c in "/\\\0")
            and not (len(name) > 1 and name[1] == ":"))


def read_manifest(txdir: Path, target: Target) -> Optional[dict]:
    """The manifest with every destination recomputed from the target's own folders and a one-component name; the
    paths stored in it are never used. Anything a cudaswitch did not write there (another role or kind, a path in
    a name, a folder outside the known ones) makes the whole record refused, never partly acted on."""
    from cudaswitch.core.fsutil import load_yaml

    shown = target.display(txdir / MANIFEST)
    try:
        data = load_yaml(txdir / MANIFEST)
    except Exception as exc:  # ruamel's errors
        why = " ".join(str(exc).split())
        raise CudaswitchError(M("{manifest}: unreadable cudaswitch manifest ({why}); move that folder away and check "
                                "the toolkit by hand", manifest=shown, why=why)) from None
    if not isinstance(data, dict):
        return None

    def bad(what: str) -> CudaswitchError:
        return CudaswitchError(M("{manifest}: not a manifest cudaswitch wrote ({what}); it is not acted on: move "
                                 "{folder} away and check {target} by hand", manifest=shown, what=what,
                                 folder=target.display(txdir), target=target.label))

    out = dict(data)
    ops = data.get("ops")
    if ops is not None:
        if not isinstance(ops, list):
            raise bad(M("ops is not a list"))
        checked = []
        for op in ops:
            if not isinstance(op, dict):
                raise bad(M("an operation is not a mapping"))
            role, kind, name, action = op.get("role"), op.get("kind"), op.get("name"), op.get("action")
            if role not in ROLES or kind not in KINDS or action not in ACTIONS or not _single_name(name):
                raise bad(M("operation role={role!r} kind={kind!r} action={action!r} name={name!r}", role=role,
                            kind=kind, action=action, name=name))
            for key in ("sha256", "old_sha256", "link", "old_link"):
                if op.get(key) is not None and not isinstance(op.get(key), str):
                    raise bad(M("{key} of {name} is not text", key=key, name=name))
            if kind == "file" and not isinstance(op.get("sha256"), str):
                raise bad(M("{name} has no sha256", name=name))
            if kind == "symlink" and not _single_name(op.get("link")):
                raise bad(M("symlink {name} -> {link!r}", name=name, link=op.get("link")))
            checked.append(dict(op, dest=str(target.local_dirs[role] / name)))
        out["ops"] = checked
    root = target.local_root
    may_create = {os.path.normpath(p) for d in target.local_dirs.values() for p in _chain(d, root)}
    may_record = {os.path.normpath(p) for p in _chain(target.record_base, root)}
    for key, allowed in (("created", may_create), ("record_created", may_record)):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise bad(M("{key} is not a list of folders", key=key))
        full = [os.path.normpath(str(root / p)) for p in value]
        for p in full:
            if p not in allowed:
                raise bad(M("{key} names {path}, not a folder cudaswitch creates", key=key, path=p))
        out[key] = full
    return out


def _chain(d: Path, root: Path) -> List[str]:
    """`d` and its parents below `root`: the only folders an install may create."""
    out, p = [], Path(d)
    while p != root and p != p.parent and root in p.parents:
        out.append(str(p))
        p = p.parent
    return out


def records(base: Path) -> List[Path]:
    try:
        return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def created_parents(base: Path, stop: Path) -> List[str]:
    """Folders between `stop` and `base` (inclusive) that do not exist yet, outermost first."""
    out: List[Path] = []
    p = base
    while p != stop and p != p.parent and not p.exists():
        out.append(p)
        p = p.parent
    return [str(x) for x in reversed(out)]


def remove_empty(dirs: List[str]) -> None:
    for d in reversed(dirs):
        try:
            trust.remove_dir(d)
        except OSError:
            pass


@dataclass
class Op:
    dest: str  # local path
    role: str
    name: str
    kind: str  # "file" or "symlink"
    action: str  # "new", "overwrite", "identical"
    sha256: Optional[str] = None
    link: Optional[str] = None
    old_sha256: Optional[str] = None
    old_link: Optional[str] = None
    size: int = 0

    def to_yaml(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v is not None}
        return d

    @classmethod
    def from_yaml(cls, d: dict) -> "Op":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})


def describe(path: Path) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(kind, sha256, link) of what is at `path` now, without following a final symlink."""
    if os.path.islink(path):
        return "symlink", None, os.readlink(path)
    if path.is_dir():
        return "dir", None, None
    if path.exists():
        return "file", _sha256(path), None
    return None, None, None


def matches(path: Path, op: Op) -> bool:
    kind, sha, link = describe(path)
    return kind == op.kind and (sha == op.sha256 if op.kind == "file" else link == op.link)


def stage_path(txdir: Path, op_or_entry) -> Path:
    return txdir / "stage" / op_or_entry.role / op_or_entry.name


def backup_path(txdir: Path, op: Op) -> Path:
    return txdir / "backup" / op.role / op.name
