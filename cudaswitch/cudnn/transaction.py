"""Installing all-or-nothing (docs/design/cudnn-install.md): `prepare` stages the archive inside the transaction
folder without touching the target (cudnn-stage-first); `commit` writes the journal with every operation, which
is the commit point (cudnn-commit-point), then renames; a failure in this process rolls the renames back. `scan`
is the plan of --dry-run, `abort` drops a staged transaction."""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from cudaswitch.core import interrupts, trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.fsutil import fsync_dir
from cudaswitch.core import faults
from cudaswitch.cudnn.archive import Archive, ArchiveError, Entry, read_archive
from cudaswitch.cudnn.compat import early_check, refuse_incompatible
from cudaswitch.cudnn.journal import (MANIFEST, SCHEMA, Op, backup_path, created_parents, describe, records,
                                      remove_empty, stage_path, write_manifest)
from cudaswitch.cudnn.preflight import check_space, check_trusted, check_writable
from cudaswitch.cudnn.target import Target
from cudaswitch.discovery.cudnn_windows import needs_zlibwapi


@dataclass
class Prepared:
    archive: Archive
    target: Target
    txdir: Path
    ops: List[Op]
    created: List[str]  # folders the commit creates (local), outermost first
    record_created: List[str]  # record folders this transaction created
    existing: Optional[str]
    problems: List[str]  # overridden with --force
    dry_run: bool = False
    warnings: List[str] = field(default_factory=list)

    @property
    def counts(self) -> Dict[str, int]:
        c = {"new": 0, "overwrite": 0, "identical": 0}
        for op in self.ops:
            c[op.action] += 1
        return c

    @property
    def replaces_other_version(self) -> bool:
        return bool(self.existing) and self.existing != self.archive.version


def _txid(base: Path) -> str:
    seq = 0
    for p in records(base):
        head = p.name.split("-")[0]
        if head.isdigit():
            seq = max(seq, int(head))
    return f"{seq + 1:04d}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"


def plan_ops(archive: Archive, target: Target) -> Tuple[List[Op], List[str]]:
    """One operation per file or link of the archive (new / overwrite / identical), and the destination folders
    that do not exist yet (only those the archive needs: a Linux tarball creates no bin folder)."""
    ops: List[Op] = []
    created: List[str] = []
    for role in sorted({e.role for e in archive.installable}):
        d = target.local_dirs[role]
        for parent in created_parents(d, target.local_root):
            if parent not in created:
                created.append(parent)
    # files before symlinks, so that a link never points at a file that is not there yet
    for e in sorted(archive.installable, key=lambda e: (e.kind == "symlink", e.role, e.name)):
        dest = target.local_dirs[e.role] / e.name
        kind, sha, link = describe(dest)
        if kind == "dir":
            raise CudaswitchError(M("{path} is a folder; the archive has a file of that name; nothing was changed",
                                    path=target.display(dest)))
        if kind is None:
            action = "new"
        elif kind == e.kind and ((e.kind == "file" and sha == e.sha256) or (e.kind == "symlink" and link == e.link)):
            action = "identical"
        else:
            action = "overwrite"
        ops.append(Op(dest=str(dest), role=e.role, name=e.name, kind=e.kind, action=action,
                      sha256=e.sha256 if e.kind == "file" else None, link=e.link, old_sha256=sha, old_link=link,
                      size=e.size))
    names = [op.dest for op in ops]
    if len(set(n.lower() for n in names)) != len(names) and target.os == "windows":
        raise ArchiveError(M("{name}: two files differ only in case; Windows cannot hold both",
                             name=Path(archive.path).name))
    return ops, created


def scan(archive_path: Path, target: Target, force: bool = False, progress=None, fh=None) -> Prepared:
    """The plan without writing anything: every member is read and hashed (for --dry-run). Refuses what an
    install would refuse."""
    early_check(archive_path, target, force)
    check_trusted(target)
    archive = read_archive(archive_path, progress=progress, fh=fh)
    problems = refuse_incompatible(archive, target, force)
    ops, created = plan_ops(archive, target)
    prep = Prepared(archive, target, Path(), ops, created, [], target.existing_cudnn(), problems, dry_run=True)
    prep.warnings = _leftover_warnings(prep)
    return prep


def prepare(archive_path: Path, target: Target, force: bool = False, progress=None, fh=None) -> Prepared:
    """Stage the archive inside the transaction folder; the toolkit is not touched. Raises (after removing the
    transaction folder) when the archive is refused."""
    early_check(archive_path, target, force)
    check_writable(target)
    record_created = created_parents(target.record_base, target.local_root)
    try:
        trust.make_dirs(target.record_base)
        txdir = target.record_base / _txid(target.record_base)
        trust.make_dir(txdir)
    except OSError as exc:
        remove_empty(record_created)
        raise explain(exc, target, "preparing to install into") from None
    try:
        write_manifest(txdir, {"schema": SCHEMA, "phase": "staging", "archive": str(archive_path),
                                "target": target.to_json(), "record_created": record_created,
                                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, target.local_root)
        fsync_dir(txdir.parent)
        count = [0]

        from cudaswitch.cudnn.archive import declared_size

        total = declared_size(archive_path, fh)
        if total is not None:
            check_space(txdir, total, target)

        def write(entry: Entry):
            count[0] += 1
            faults.reach("stage", count[0])
            p = stage_path(txdir, entry)
            trust.make_dirs(p.parent)
            check_space(p.parent, entry.size, target)
            return _SyncedFile(p, entry.mode)

        archive = read_archive(archive_path, write=write, progress=progress, fh=fh)
        problems = refuse_incompatible(archive, target, force)
        for e in archive.installable:
            if e.kind == "symlink":
                p = stage_path(txdir, e)
                trust.make_dirs(p.parent)
                trust.symlink(e.link, p)
        for sub in ("bin", "include", "lib"):
            if (txdir / "stage" / sub).is_dir():
                fsync_dir(txdir / "stage" / sub)
        ops, created = plan_ops(archive, target)
        faults.reach("staged", 1)
        prep = Prepared(archive, target, txdir, ops, created, record_created, target.existing_cudnn(), problems)
        prep.warnings = _leftover_warnings(prep)
        return prep
    except BaseException as exc:
        discard(txdir, record_created)
        raise explain(exc, target, "unpacking into") from None


def _leftover_warnings(prep: Prepared) -> List[str]:
    """Files of another cuDNN in the destination folders that this archive does not replace."""
    new_names = {op.name.lower() for op in prep.ops}
    left: List[str] = []
    for role in ("bin", "lib"):
        d = prep.target.local_dirs[role]
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            low = n.lower()
            if (low.startswith("cudnn") or low.startswith("libcudnn")) and low not in new_names:
                left.append(n)
    out: List[str] = []
    a = prep.archive
    if a.os == "windows" and needs_zlibwapi(a.version):
        bindir = prep.target.local_dirs["bin"]
        if not (bindir / "zlibwapi.dll").exists() and "zlibwapi.dll" not in new_names:
            out.append(M("cuDNN {version} on Windows needs zlibwapi.dll on the loader path (it is not in {folder}); "
                         "without it cudnn64_8.dll fails to load", version=a.version, folder=prep.target.dirs["bin"]))
    if left:
        shown = M("{names} and {more} more", names=Listed(left[:6]), more=len(left) - 6) if len(left) > 6 \
            else Listed(left)
        out.append(M("{count} file(s) of another cuDNN stay in place, not replaced by this archive: {names}",
                     count=len(left), names=shown))
    return out


class _SyncedFile:
    def __init__(self, path: Path, mode: int):
        self.path = path
        self.fh = trust.create_new(path)
        self.mode = mode

    def write(self, data: bytes) -> None:
        self.fh.write(data)

    def close(self) -> None:
        if self.fh.closed:
            return
        self.fh.flush()
        os.fsync(self.fh.fileno())
        if hasattr(os, "fchmod"):
            trust.set_mode(self.fh.fileno(), self.mode)  # the archive's mode, before the rename (cudnn-modes-owners)
        self.fh.close()


def discard(txdir: Path, record_created: List[str]) -> None:
    """Remove a transaction that never reached its commit point; the manifest goes last."""
    try:
        for sub in ("stage", "backup"):
            trust.remove_tree(txdir / sub, ignore_errors=True)
        try:
            trust.remove(txdir / MANIFEST)
        except FileNotFoundError:
            pass
        trust.remove_tree(txdir, ignore_errors=True)
        fsync_dir(txdir.parent)
    finally:
        remove_empty(record_created)


# what was being done, as `explain` names it: one message each, the target's label in it
_DOING = {"installing into": N_("installing into {target}"), "uninstalling from": N_("uninstalling from {target}"),
          "preparing to install into": N_("preparing to install into {target}"),
          "unpacking into": N_("unpacking into {target}")}


def explain(exc: BaseException, target: Target, doing: str) -> BaseException:
    if isinstance(exc, (CudaswitchError, KeyboardInterrupt, SystemExit)):
        return exc
    if isinstance(exc, OSError):
        where = f" ({target.display(Path(exc.filename))})" if exc.filename else ""
        action = M(_DOING.get(doing, doing + " {target}"), target=target.label)
        if exc.errno == errno.ENOSPC:
            return CudaswitchError(M("disk full while {action}{where}: free some space and run the command again; "
                                     "nothing was changed", action=action, where=where))
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            hint = M("; on Windows a running program that loaded cuDNN (Python, Jupyter, an IDE) keeps its DLLs "
                     "locked: close it and run the command again") if target.os == "windows" else ""
            return CudaswitchError(M("permission denied while {action}{where}{hint}; nothing was changed",
                                     action=action, where=where, hint=hint))
        return CudaswitchError(M("{why} while {action}{where}; nothing was changed", why=exc.strerror or str(exc),
                                 action=action, where=where))
    return exc


def abort(prep: Prepared) -> None:
    if not prep.dry_run:
        discard(prep.txdir, prep.record_created)


def commit(prep: Prepared) -> Tuple[Path, bool]:
    """Rename the staged files into place. Returns (the manifest path, whether Ctrl-C came after the last rename:
    cuDNN is installed all the same). Ctrl-C is held across each rename and the next check, so it stops the commit
    only between two files, where the rollback reads from the files themselves what was moved (a file whose staged
    copy is gone is in place), never from a count an interrupt could leave one step behind."""
    txdir = prep.txdir
    manifest = {"schema": SCHEMA, "phase": "committing", "archive": prep.archive.to_json(),
                "target": prep.target.to_json(), "previous_cudnn": prep.existing,
                "created": prep.created, "record_created": prep.record_created,
                "forced": prep.problems, "ops": [op.to_yaml() for op in prep.ops],
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with interrupts.held() as held:
        try:
            trust.make_dirs(txdir / "backup")
            for role in ("bin", "include", "lib"):
                trust.make_dirs(txdir / "backup" / role)
            held.check()
            write_manifest(txdir, manifest, prep.target.local_root)  # the commit point (cudnn-commit-point)
        except BaseException as exc:
            discard(txdir, prep.record_created)
            raise explain(exc, prep.target, "installing into") from None
        try:
            for d in prep.created:
                trust.make_dirs(d)
            k = 0
            for op in prep.ops:
                if op.action == "identical":
                    continue
                k += 1
                faults.reach("commit", k)
                held.check()
                dest = Path(op.dest)
                if op.action == "overwrite":
                    trust.move(dest, backup_path(txdir, op))
                    faults.reach("commit-mid", k)
                trust.move(stage_path(txdir, op), dest)
                faults.reach("commit-moved", k)
            for d in {str(Path(op.dest).parent) for op in prep.ops}:
                fsync_dir(d)
            faults.reach("committed", 1)
        except BaseException as exc:
            try:
                _rollback(prep)
            except BaseException:
                raise CudaswitchError(M("installing into {target} failed ({why}) and could not be rolled back; run "
                                        "the command again to complete it from the journal {manifest}",
                                        target=prep.target.label, why=exc_reason(exc),
                                        manifest=txdir / MANIFEST)) from None
            raise explain(exc, prep.target, "installing into") from None
        # every file is in place: from here an interrupt no longer undoes the install, it is only reported
        manifest["phase"] = "installed"
        try:
            write_manifest(txdir, manifest, prep.target.local_root)
        except OSError as exc:
            raise CudaswitchError(M("cuDNN is installed in {target} but its manifest could not be marked complete "
                                    "({why}); the next install-cudnn or uninstall-cudnn finishes that from the "
                                    "journal {manifest}", target=prep.target.label, why=exc_reason(exc),
                                    manifest=prep.target.display(txdir / MANIFEST))) from None
        faults.reach("marked", 1)
        trust.remove_tree(txdir / "stage", ignore_errors=True)
    return txdir / MANIFEST, held.pending


def exc_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _rollback(prep: Prepared) -> None:
    """Undo the renames of a commit that failed in this process; then drop the transaction. What was moved is read
    from the files: all were staged before the commit began, so a missing staged file is one in place."""
    txdir = prep.txdir
    for op in reversed(prep.ops):
        if op.action == "identical":
            continue
        dest, staged, backup = Path(op.dest), stage_path(txdir, op), backup_path(txdir, op)
        if not os.path.lexists(staged) and os.path.lexists(dest):
            trust.move(dest, staged)
        if op.action == "overwrite" and os.path.lexists(backup):
            trust.move(backup, dest)
    remove_empty(prep.created)
    discard(txdir, prep.record_created)
