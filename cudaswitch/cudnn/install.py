"""`install-cudnn` as one flow: `planned` resolves the target, takes its lock, finishes what a killed run left,
checks the archive's hash and stages it, and yields an `InstallPlan`; `InstallPlan.carry_out` decides whether to
replace another cuDNN (asking through the caller's confirm callback), commits, verifies and returns an
`InstallResult` that carries the undo command. The caller only prints (docs/design/cudnn-install.md)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Dict, Iterator, List, Optional

from cudaswitch.core.errors import CudaswitchError, FinishedInterrupted, UsageError
from cudaswitch.core.i18n import M, N_
from cudaswitch.core.trust import open_regular
from cudaswitch.core.system import System
from cudaswitch.cudnn.archive import Archive, verify_integrity
from cudaswitch.cudnn.lock import locked
from cudaswitch.cudnn.recovery import pending, recover_target
from cudaswitch.cudnn.target import Target, resolve_target
from cudaswitch.cudnn.transaction import Prepared, abort, commit, prepare, scan
from cudaswitch.cudnn.verify import verify

__all__ = ["InstallPlan", "InstallResult", "planned", "main_library", "shell_word", "undo_command"]

# A progress bar: given a label, a context that yields a callable taking the bytes just read, or None for no bar.
Progress = Callable[[str], ContextManager[Optional[Callable[[int], None]]]]
# What happens on the way, as it happens: ("note", line) for a journal finished or pending, ("verified", "") once
# the archive's hash matched.
Tell = Callable[[str, str], None]


def _no_progress(_label: str) -> ContextManager[None]:
    return contextlib.nullcontext(None)


def main_library(target: Target, cudnn_major: int) -> str:
    """The library the load check loads and the output names."""
    return f"cudnn64_{cudnn_major}.dll" if target.os == "windows" else f"libcudnn.so.{cudnn_major}"


def shell_word(value: str, windows: bool) -> str:
    """`value` as one word the user can paste into their shell (core/shellquote.py: one form cmd and PowerShell both
    read on Windows, the login shell's elsewhere)."""
    from cudaswitch.core import shellquote

    return shellquote.quote(value, shellquote.WINDOWS if windows else shellquote.user_shell(os.environ))


def undo_command(target: Target) -> str:
    """The command that undoes an install into `target`, as the user can paste it (cudnn-undo-restores)."""
    return "cudaswitch uninstall-cudnn " + ("-p " if target.kind == "env" else "--cuda ") + shell_word(
        str(target.root), target.os == "windows")


class _Staged:
    """The archive and target of a plan or a result, both read from the staged `prep`."""
    prep: Prepared

    @property
    def archive(self) -> Archive:
        return self.prep.archive

    @property
    def target(self) -> Target:
        return self.prep.target


@dataclass
class InstallResult(_Staged):
    """What an install did. `installed` is False only when every file was already there (`already_installed`)."""
    installed: bool
    prep: Prepared
    manifest: Optional[str] = None  # displayed
    check: Optional[dict] = None  # verify's record
    undo: Optional[str] = None
    check_warnings: List[str] = field(default_factory=list)  # the installed header or library disagrees

    @property
    def already_installed(self) -> bool:
        return not self.installed

    @property
    def main_library(self) -> str:
        return main_library(self.target, self.archive.cudnn_major)

    @property
    def incomplete(self) -> bool:
        """The installed library could not load because libraries it loads are missing: the install failed."""
        return bool(self.check and self.check.get("missing"))

    def files_per_role(self) -> Dict[str, int]:
        """role -> files installed there, in the order bin, include, lib, roles without files left out."""
        counts = {role: sum(1 for o in self.prep.ops if o.role == role) for role in ("bin", "include", "lib")}
        return {role: n for role, n in counts.items() if n}

    def to_json(self) -> dict:
        a, target, prep = self.archive, self.target, self.prep
        if not self.installed:
            return {"installed": False, "already_installed": True, "archive": a.to_json(), "target": target.to_json()}
        return {"installed": True, "archive": a.to_json(), "target": target.to_json(),
                "previous_cudnn": prep.existing, "forced": prep.problems, "counts": prep.counts,
                "manifest": self.manifest, "verify": self.check, "warnings": prep.warnings,
                "files": [{"dest": target.display(Path(o.dest)), "action": o.action, "sha256": o.sha256,
                           "link": o.link} for o in prep.ops], "undo": self.undo}


@dataclass
class InstallPlan(_Staged):
    """The staged archive (or, for --dry-run, the scanned one) and the decisions still to take."""
    prep: Prepared
    why: str  # why this target was chosen
    system: System = field(repr=False)
    settled: bool = False  # committed, or dropped: nothing left for `planned` to drop

    @property
    def already_installed(self) -> bool:
        return bool(self.prep.ops) and all(o.action == "identical" for o in self.prep.ops)

    def to_json(self) -> dict:
        """The --dry-run record."""
        prep, target = self.prep, self.target
        return {"dry_run": True, "archive": self.archive.to_json(), "target": target.to_json(),
                "previous_cudnn": prep.existing, "problems": prep.problems,
                "files": [{"dest": target.display(Path(o.dest)), "action": o.action} for o in prep.ops]}

    def carry_out(self, yes: bool, confirm: Optional[Callable[[str], bool]]) -> InstallResult:
        """Install. Replacing another cuDNN version needs `yes` or a "yes" from `confirm(question)`; `confirm` is
        None where nobody can be asked (no terminal, --json), and then the install is refused."""
        prep, a, target = self.prep, self.archive, self.target
        if prep.dry_run:
            raise ValueError("a dry run is never carried out")
        if self.already_installed:
            self._drop()
            return InstallResult(installed=False, prep=prep)
        if prep.replaces_other_version and not yes:  # cudnn-replace-asks
            if confirm is None:
                raise UsageError(M("{target} already has cuDNN {existing}; pass --yes to replace it with {version} "
                                   "(uninstall-cudnn undoes it); nothing was changed", target=target.label,
                                   existing=prep.existing, version=a.version))
            question = M("{target} has cuDNN {existing}; replace it with {version}? (undo: uninstall-cudnn)",
                         target=target.label, existing=prep.existing, version=a.version)
            if not confirm(question):
                raise CudaswitchError(N_("not replaced; nothing was changed"))
        self.settled = True  # from here commit rolls back or leaves a journal itself, never dropped from outside
        manifest, interrupted = commit(prep)
        if interrupted:  # Ctrl-C after the last file was in place: installed, and said so (not "interrupted")
            raise FinishedInterrupted(M("interrupted after every file was in place: cuDNN {version} is installed in "
                                        "{target}, its load check was skipped; undo: {undo}", version=a.version,
                                        target=target.label, undo=undo_command(target)))
        check = verify(prep, self.system)
        lib = main_library(target, a.cudnn_major)
        check_warnings = []
        if check["header"] != a.version:
            check_warnings.append(M("the installed header says cuDNN {header}, expected {version}",
                                    header=check["header"], version=a.version))
        if check["library_error"] and not check["library_error"].startswith("not loaded"):
            check_warnings.append(M("the installed {lib} did not load: {error}", lib=lib, error=check["library_error"]))
        return InstallResult(installed=True, prep=prep, manifest=target.display(manifest), check=check,
                             undo=undo_command(target), check_warnings=check_warnings)

    def _drop(self) -> None:
        if not self.settled:
            self.settled = True
            abort(self.prep)


@contextlib.contextmanager
def planned(system: System, archive: str, *, cuda: Optional[str] = None, into_env: bool = False,
            name: Optional[str] = None, prefix: Optional[str] = None, dry_run: bool = False, force: bool = False,
            sha256: Optional[str] = None, redistrib_json: Optional[str] = None, tell: Tell = lambda kind, text: None,
            progress: Progress = _no_progress) -> Iterator[InstallPlan]:
    """The plan of installing `archive` (as the user spelled it), with the target locked until the block ends; a
    plan not carried out is dropped then (cudnn-stage-first: the target was never touched)."""
    path = Path(archive)
    target, why = resolve_target(system, path, cuda, into_env, name, prefix)
    tell("target", M("into {target} ({why})", target=target.label, why=why))  # named before the long unpack
    try:
        fh = open_regular(path)  # hashed and unpacked from this one open file: a swapped file is never installed
    except OSError as exc:
        raise UsageError(M("cannot read {archive}: {why}", archive=archive, why=exc.strerror or exc)) from None
    with fh, locked(target):
        if dry_run:  # writes nothing, so it does not recover either; it says what the next command will do
            for line in pending(target):
                tell("note", line)
        else:
            for _what, line in recover_target(target):
                tell("note", line)
        if sha256 or redistrib_json:
            with progress(N_("Checking SHA-256")) as step:
                verify_integrity(path, sha256, Path(redistrib_json) if redistrib_json else None, step, fh=fh)
            tell("verified", "")
        with progress(N_("Reading") if dry_run else N_("Unpacking")) as step:
            prep = scan(path, target, force, step, fh=fh) if dry_run else prepare(path, target, force, step, fh=fh)
        plan = InstallPlan(prep, why, system)
        try:
            yield plan
        finally:
            plan._drop()
