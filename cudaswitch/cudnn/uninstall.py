"""Undoing the latest install into a target (docs/design/cudnn-install.md: cudnn-undo-restores): backups back, new
files removed, created folders removed; refused while installed files changed since, unless --force keeps them
aside."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from cudaswitch.core import interrupts, trust
from cudaswitch.core.errors import CudaswitchError, FinishedInterrupted
from cudaswitch.core.i18n import Listed, M
from cudaswitch.cudnn.journal import MANIFEST, Op, matches, read_manifest, records, write_manifest
from cudaswitch.cudnn.preflight import check_trusted, check_writable
from cudaswitch.cudnn.lock import locked
from cudaswitch.cudnn.recovery import recover_target, roll_forward_uninstall
from cudaswitch.cudnn.target import Target, resolve_target
from cudaswitch.cudnn.transaction import exc_reason, explain


@dataclass
class Uninstalled:
    version: Optional[str]
    restored: int
    removed: int
    previous: Optional[str]
    kept: List[str]
    manifest: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


def installed_records(target: Target) -> List[Tuple[Path, dict]]:
    out = []
    for txdir in records(target.record_base):
        data = read_manifest(txdir, target)
        if data and data.get("phase") == "installed":
            out.append((txdir, data))
    return out


def uninstall(target: Target, force: bool = False) -> Uninstalled:
    """Undo the latest install into `target`: backups back, new files removed, created folders removed."""
    recs = installed_records(target)
    if not recs:
        raise CudaswitchError(M("no cuDNN installed by cudaswitch in {target} (no manifest under {folder}); nothing "
                                "to undo", target=target.label, folder=target.display(target.record_base)))
    txdir, data = recs[-1]
    check_trusted(target)
    check_writable(target)
    ops = [Op.from_yaml(r) for r in data.get("ops") or []]
    changed = []
    for op in ops:
        if op.action == "identical":
            continue
        if not matches(Path(op.dest), op):
            changed.append(op)
    if changed and not force:
        names = Listed(target.display(Path(op.dest)) for op in changed[:5])
        raise CudaswitchError(M("{count} installed file(s) changed since the install ({names}); --force undoes "
                                "it anyway and keeps each changed file as <name>.cudaswitch-changed; nothing was "
                                "changed", count=len(changed), names=names))
    kept: List[str] = []
    # Ctrl-C held from the first change to the last: the toolkit is left as it was or as it was before the install
    with interrupts.held() as held:
        for op in changed:
            dest = Path(op.dest)
            if os.path.lexists(dest):
                keep = dest.with_name(dest.name + ".cudaswitch-changed")
                trust.move(dest, keep)
                kept.append(target.display(keep))
        data["phase"] = "uninstalling"
        try:
            write_manifest(txdir, data, target.local_root)
        except OSError as exc:
            raise explain(exc, target, "uninstalling from") from None
        try:
            roll_forward_uninstall(txdir, data, target.local_root, checked=True)
        except OSError as exc:
            raise CudaswitchError(M("uninstalling from {target} stopped half-way ({why}); fix that and run "
                                    "uninstall-cudnn again: it finishes from the journal {manifest}",
                                    target=target.label, why=exc_reason(exc),
                                    manifest=target.display(txdir / MANIFEST))) from None
    arch = data.get("archive") or {}
    version = arch.get("full_version") or arch.get("version")
    if held.pending:
        raise FinishedInterrupted(M("interrupted after the uninstall was complete: cuDNN {version} is removed from "
                                    "{target}", version=version, target=target.label))
    return Uninstalled(version=version, restored=sum(1 for op in ops if op.action == "overwrite"),
                       removed=sum(1 for op in ops if op.action == "new"), previous=data.get("previous_cudnn"),
                       kept=kept, manifest=target.display(txdir / MANIFEST))


@dataclass
class UndoResult:
    """What `uninstall-cudnn` did: `removed` is None when finishing an interrupted journal was all there was to do."""
    target: Target
    recovered: List[str]  # one line per journal finished first
    removed: Optional[Uninstalled] = None

    def to_json(self) -> dict:
        if self.removed is None:
            return {"uninstalled": False, "recovered": self.recovered, "target": self.target.to_json()}
        return {"uninstalled": True, "recovered": self.recovered, "target": self.target.to_json(),
                **self.removed.to_json()}


def undo_latest(system, *, cuda: Optional[str] = None, into_env: bool = False, name: Optional[str] = None,
                prefix: Optional[str] = None, force: bool = False) -> UndoResult:
    """`uninstall-cudnn`: finish any interrupted journal of the target, then undo its latest install, unless what
    was finished already is what the user asked for (an interrupted uninstall completed, or an install rolled
    back)."""
    target, _why = resolve_target(system, None, cuda, into_env, name, prefix, uninstalling=True)
    with locked(target):
        recovered = recover_target(target)
        notes = [line for _what, line in recovered]
        if any(what != "installed" for what, _line in recovered) or (notes and not installed_records(target)):
            return UndoResult(target, notes)
        return UndoResult(target, notes, uninstall(target, force))
