"""Finishing what a killed run left (docs/design/cudnn-install.md: cudnn-recover-by-phase): by the journal's phase, a
transaction is rolled back (`staging`: nothing had been changed) or completed (`committing`, `uninstalling`), by
the next install-cudnn or uninstall-cudnn on that target, before it does anything else."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Tuple

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M
from cudaswitch.core.fsutil import fsync_dir
from cudaswitch.core import faults
from cudaswitch.cudnn.journal import (MANIFEST, Op, backup_path, matches, read_manifest, records, remove_empty,
                                      stage_path, write_manifest)
from cudaswitch.cudnn.preflight import check_trusted
from cudaswitch.cudnn.target import Target
from cudaswitch.cudnn.transaction import discard


def recover(target: Target) -> List[Tuple[str, str]]:
    """Finish or undo whatever a killed run left in the target's records. Returns (what, one line) for each:
    what is "rolled-back", "installed" or "uninstalled"."""
    done: List[Tuple[str, str]] = []
    root, display = target.local_root, target.display
    for txdir in records(target.record_base):
        data = read_manifest(txdir, target)
        phase = (data or {}).get("phase")
        if phase in (None, "staging"):
            discard(txdir, (data or {}).get("record_created") or [])
            done.append(("rolled-back", M("rolled back an interrupted cuDNN install ({folder}); nothing had been "
                                          "changed", folder=display(txdir))))
        elif phase == "committing":
            roll_forward_install(txdir, data, root)
            done.append(("installed", M("completed an interrupted cuDNN install from its journal ({manifest})",
                                        manifest=display(txdir / MANIFEST))))
        elif phase == "uninstalling":
            roll_forward_uninstall(txdir, data, root)
            done.append(("uninstalled", M("completed an interrupted cuDNN uninstall from its journal ({folder})",
                                          folder=display(txdir))))
    return done


def roll_forward_install(txdir: Path, data: dict, root: Path) -> None:
    for d in data.get("created") or []:
        trust.make_dirs(d)
    for raw in data.get("ops") or []:
        op = Op.from_yaml(raw)
        if op.action == "identical":
            continue
        dest, staged, backup = Path(op.dest), stage_path(txdir, op), backup_path(txdir, op)
        if not os.path.lexists(staged):
            continue  # already in place
        if op.action == "overwrite" and not os.path.lexists(backup) and os.path.lexists(dest):
            trust.move(dest, backup)
        trust.move(staged, dest)
    for d in {str(Path(Op.from_yaml(r).dest).parent) for r in data.get("ops") or []}:
        fsync_dir(d)
    data["phase"] = "installed"
    write_manifest(txdir, data, root)
    trust.remove_tree(txdir / "stage", ignore_errors=True)


def roll_forward_uninstall(txdir: Path, data: dict, root: Path, checked: bool = False) -> None:
    """Put backups back and remove the installed files. `checked`: the caller has just verified that every
    installed file is unchanged (or moved the changed ones aside), so they are not hashed a second time."""
    ops = [Op.from_yaml(r) for r in data.get("ops") or []]
    k = 0
    for op in reversed(ops):
        if op.action == "identical":
            continue
        k += 1
        faults.reach("uninstall", k)
        dest, backup = Path(op.dest), backup_path(txdir, op)
        if op.action == "overwrite":
            if os.path.lexists(backup):
                trust.move(backup, dest)
        elif os.path.lexists(dest) and (checked or matches(dest, op)):
            trust.remove(dest)
    for d in {str(Path(op.dest).parent) for op in ops}:
        fsync_dir(d)
    remove_empty(data.get("created") or [])
    try:
        trust.remove(txdir / MANIFEST)
    except FileNotFoundError:
        pass
    trust.remove_tree(txdir, ignore_errors=True)
    remove_empty(data.get("record_created") or [])


def pending(target: Target) -> List[str]:
    """Interrupted transactions the next install/uninstall will finish, without touching them."""
    out = []
    for txdir in records(target.record_base):
        data = read_manifest(txdir, target)
        phase = (data or {}).get("phase")
        if phase != "installed":
            folder = target.display(txdir)
            if phase in (None, "staging"):
                out.append(M("an interrupted cuDNN install is pending in {folder}; the next install-cudnn or "
                             "uninstall-cudnn will roll back it", folder=folder))
            elif phase == "uninstalling":
                out.append(M("an interrupted cuDNN uninstall is pending in {folder}; the next install-cudnn or "
                             "uninstall-cudnn will complete it", folder=folder))
            else:
                out.append(M("an interrupted cuDNN install is pending in {folder}; the next install-cudnn or "
                             "uninstall-cudnn will complete it", folder=folder))
    return out


def recover_target(target: Target) -> List[Tuple[str, str]]:
    check_trusted(target)
    if not target.record_base.is_dir():
        return []
    try:
        return recover(target)
    except OSError as exc:
        raise CudaswitchError(M("{target} has an interrupted cuDNN install that cannot be finished now ({why}); run "
                                "the command with the rights to write there", target=target.label,
                                why=exc.strerror or str(exc))) from None
