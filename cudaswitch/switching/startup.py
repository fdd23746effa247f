"""`cudaswitch init SHELL`: the shell function from the top-level `hooks/` folder, printed, or installed as conda
and direnv do: the integration goes into a file cudaswitch keeps current (rewritten by `init` and `use` whenever
this build would write something else), and the startup file gets one guarded line that sources it (nothing
happens, and nothing prints, once that file is gone). --install again replaces that line, and an older build's
whole block between the marker lines, in place."""

from __future__ import annotations

import codecs
import os
import shutil
import sys
from pathlib import Path, PureWindowsPath
from typing import Callable, List, Mapping, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M, tr
from cudaswitch.core.fsutil import atomic_write
from cudaswitch.core.shells import INIT_SHELLS, Startup, init_shell, windows_shells
from cudaswitch.discovery.envfiles import HOOK_NAME

# the whole integration block earlier builds pasted into the startup file; --install replaces it by the one line
BEGIN = "# >>> cudaswitch init >>>"
END = "# <<< cudaswitch init <<<"
# the end of the one line --install writes: how a later --install finds it
MARK = "# added by 'cudaswitch init --install'"


def hooks_dir() -> Path:
    from cudaswitch.core.resources import resource_dir

    return resource_dir("hooks")


def snippet(filename: str) -> str:
    from cudaswitch.core.trust import package_text

    return package_text(hooks_dir() / filename)


def init_text(shell: str, one_line: bool = False) -> str:
    """What `cudaswitch init SHELL` prints or installs: the shell function, then the prompt-time reconciler
    (docs/design/activation.md). `one_line`: as printed for `eval`, which a shell that joins the lines needs."""
    sh, _ = INIT_SHELLS[shell]
    text = snippet(sh.snippet)
    if sh.reconciler and not sh.reconciler_from_precmd:
        text = text.rstrip("\n") + "\n" + snippet(sh.reconciler)
    elif sh.reconciler:
        # csh has no functions: precmd sources the reconciler file, only while a record is set (one test per
        # prompt); an existing precmd alias is kept and runs first.
        where = str(hooks_dir() / sh.reconciler).replace("'", "'\\''")
        # the file lies in cudaswitch's installation: once that is deleted or rebuilt on another Python, sourcing it
        # would print "No such file or directory" at every prompt. Without it, the record is cleared once (the
        # reconciler cannot run, so the record is useless here) and one line says what is left and what to do; only
        # where the reconciler would have acted (the active environment has no cudaswitch hook), so an
        # environment's own deactivate hook still finds its record. One-line `if`s only: an alias holds one line.
        gone = tr(M("cudaswitch: its prompt-time reconciler {file} is gone (cudaswitch was removed or reinstalled); "
                    "the CUDA entries it added stay in this shell: open a new one, and run 'cudaswitch init {shell}' "
                    "again", file=where, shell=shell)).replace('"', "").replace("'", "'\"'\"'").replace("!", "\\!")
        # csh expands a one-line `if`'s command before testing it: "$CONDA_PREFIX/..." goes through eval, as in
        # hooks/tcsh.csh, and the alias text is single-quoted, so inner single quotes are written '"'"'
        hook = f"$CONDA_PREFIX/etc/conda/activate.d/{HOOK_NAME}.{sh.ext}"
        inner = f"'\"'\"'if ( -f \"{hook}\" ) set _cs_gone = 0'\"'\"'"
        run = (f'set _cs_gone = 0 ; if ( $?_CUDASWITCH_ADDED_PATH && ! -e "{where}" ) set _cs_gone = 1 ; '
               f'if ( $_cs_gone == 1 && $?CONDA_PREFIX ) eval {inner} ; '
               f'if ( $_cs_gone == 1 ) echo "{gone}" ; '
               f'if ( $_cs_gone == 1 ) unsetenv _CUDASWITCH_ADDED_PATH ; unset _cs_gone ; '
               f'if ( $?_CUDASWITCH_ADDED_PATH && -e "{where}" ) source "{where}"')
        text = text.rstrip("\n") + "\n" + "\n".join([
            "# cudaswitch prompt-time reconciler: takes a cudaswitch PATH entry back off after a switch to an",
            "# environment without cudaswitch hooks (conda#14762); see hooks/reconcile.csh.",
            "setenv CUDASWITCH_RECONCILER 1",
            "set _cs_pre = \"`alias precmd`\"",
            f"if ( \"$_cs_pre\" == \"\" ) alias precmd '{run}'",
            f"if ( \"$_cs_pre\" != \"\" && \"$_cs_pre\" !~ *{sh.reconciler}* ) alias precmd \"$_cs_pre\"'; {run}'",
            "unset _cs_pre", ""])
    start = INIT_SHELLS[shell][1]
    if start.completion_script:
        from cudaswitch.switching.completion import script

        text = text.rstrip("\n") + "\n# tab completion (click's protocol, answered by cudaswitch itself)\n" + script(start)
    if one_line and sh.eval_one_line:
        # eval "`cudaswitch init tcsh`" joins the lines: one line of commands separated by ';' reads the same
        # whether it is eval'ed or sourced from a file, and a comment would swallow everything after it
        text = " ; ".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")) + "\n"
    return text


def reconciler_missing(shell_name: Optional[str], environ: Mapping[str, str]) -> Optional[str]:
    """The `cudaswitch init` name of the user's shell when it has a prompt-time reconciler that is not installed
    (`use` then says how to install it), else None."""
    if environ.get("CUDASWITCH_RECONCILER") == "1":
        return None
    found = init_shell(Path(shell_name or "").name.lower().removesuffix(".exe"))
    if found is None or not found[0].reconciler:
        return None
    return found[1].name


def user_reconciler_missing(system) -> Optional[str]:
    """reconciler_missing() for the user's shell: the one `$SHELL` names; on Windows, which has no `$SHELL`, the
    Windows shell whose record has a reconciler (PowerShell's: cmd.exe has no prompt hook)."""
    if system.windows:
        name = next((st.name for sh in windows_shells() if sh.reconciler for st in sh.init), None)
    else:
        name = system.environ.get("SHELL")
    return reconciler_missing(name, system.environ)


def shell_from_environ(environ: Mapping[str, str]) -> str:
    """The `cudaswitch init` name of the shell `$SHELL` names; a UsageError listing the names otherwise."""
    value = environ.get("SHELL")
    found = init_shell(Path(value or "").name.lower().removesuffix(".exe")) if value else None
    if found is None:
        names = Listed(sorted(INIT_SHELLS))
        raise UsageError(M("$SHELL is {value}, not a shell cudaswitch init knows: give one of {names}",
                           value=repr(value), names=names) if value else
                         M("$SHELL is not set: give the shell, one of {names}", names=names))
    return found[1].name


def _no_startup_file(shell: str) -> UsageError:
    return UsageError(M(INIT_SHELLS[shell][1].no_file, shell=shell))


def rc_files(shell: str, environ: Mapping[str, str]) -> List[Path]:
    """The startup files --install writes: one per shell, every edition's for a shell that names its own."""
    start = INIT_SHELLS[shell][1]
    if start.profile:
        return named_profiles(start, environ=environ)
    if start.under is None:
        raise _no_startup_file(shell)
    home = Path(os.path.expanduser("~"))
    base = environ.get(start.base_var) if start.base_var else None
    return [Path(base or home / start.base_default) / start.under]


def named_profiles(start: Startup, which=shutil.which, run=None, environ=None, windows=None) -> List[Path]:
    """Every file a shell that names its own startup file (`start.profile`: PowerShell's) reads for this user, one
    per edition, found as `conda init powershell` finds them: each edition on PATH is asked (`start.ask`), which also
    follows a Documents folder redirected to OneDrive. The editions read different folders, so on Windows each is
    written whose edition ships with Windows or whose folder exists. Documents is a OneDrive Documents folder that
    holds an edition's folder, else the home's."""
    import subprocess

    from cudaswitch.core.trust import run_program

    run = run or run_program
    environ = os.environ if environ is None else environ
    windows = sys.platform == "win32" if windows is None else windows
    found: List[Path] = []
    for edition in start.editions:
        where = which(edition.program)
        if not where:
            continue
        try:
            out = run([where, *start.ask], timeout=60)
        except (OSError, subprocess.SubprocessError, CudaswitchError):
            continue
        lines = out.stdout.strip().splitlines() if out.returncode == 0 else []
        if lines and lines[-1].strip() and Path(lines[-1].strip()) not in found:
            found.append(Path(lines[-1].strip()))
    home = Path(environ.get("USERPROFILE") or os.path.expanduser("~")) if windows else Path(os.path.expanduser("~"))
    if not windows:
        base = environ.get(start.base_var) if start.base_var else None
        return found or [Path(base or home / start.base_default) / start.profile_dir / start.profile]
    answered = [PureWindowsPath(str(p)) for p in found]
    if answered:  # the Documents folder the shell itself uses
        base = Path(str(answered[0].parent.parent))
    else:
        docs = [Path(environ[k]) / "Documents" for k in ("OneDrive", "OneDriveConsumer", "OneDriveCommercial")
                if environ.get(k)] + [home / "Documents"]
        base = next((d for d in docs if any((d / e.folder).is_dir() for e in start.editions)), docs[-1])
    for edition in start.editions:
        if any(a.parent.name.lower() == edition.folder.lower() for a in answered):
            continue  # that edition named its own file
        if edition.ships or (base / edition.folder).is_dir():
            found.append(base / edition.folder / start.profile)
    return found


def integration_file(shell: str, environ: Mapping[str, str]) -> Path:
    """Where --install keeps SHELL's integration: cudaswitch's data folder, not its installation (which a
    reinstall on another Python moves)."""
    from cudaswitch.core.config import user_dir
    from cudaswitch.core.system import System

    return Path(user_dir(System(environ=environ), "data")) / "shell" / f"init.{INIT_SHELLS[shell][1].ext}"


def integration_bytes(shell: str) -> bytes:
    sh, _ = INIT_SHELLS[shell]
    return init_text(shell).replace("\n", sh.newline).encode(sh.encoding)


def keep_current(environ: Mapping[str, str], only: Optional[str] = None) -> List[Path]:
    """Rewrite every integration file --install made whose text this build would write differently (after an
    upgrade, or a move to another Python); the ones rewritten. A missing one stays missing: removing it is how a
    user turns the integration off. One that another user could have written (root run with that user's HOME, as
    `sudo -E` keeps it) is theirs to refresh: neither read nor written."""
    from cudaswitch.core.trust import path_problem, read_bytes

    done = []
    for shell, (_sh, start) in sorted(INIT_SHELLS.items()):
        if not start.loads or (only and shell != only):
            continue
        path = integration_file(shell, environ)
        if path_problem(path) is not None:
            continue
        try:
            old = read_bytes(path)
        except FileNotFoundError:
            continue
        new = integration_bytes(shell)
        if old != new:
            atomic_write(path, new)
            done.append(path)
    return done


def _read_startup_file(target: Path) -> Tuple[str, str]:
    """(text, encoding) of a startup file. Windows PowerShell 5.1's `>` writes UTF-16 with a BOM; keep whatever
    encoding the file has so that the user's own lines come back byte for byte."""
    try:
        from cudaswitch.core.trust import read_bytes

        data = read_bytes(target)
    except FileNotFoundError:
        return "", "utf-8"
    except OSError as e:
        raise CudaswitchError(M("cannot read {path}: {why}", path=target, why=e.strerror or e))
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
                     (codecs.BOM_UTF8, "utf-8-sig")):
        if data.startswith(bom):
            return data.decode(enc), enc
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        raise CudaswitchError(M("{path} is neither UTF-8 nor UTF-16 text; add the lines of 'cudaswitch init' to it "
                                "yourself, or give another file with --rc-file", path=target)) from None


def load_line(shell: str, environ: Mapping[str, str]) -> str:
    """The one line --install puts in SHELL's startup file."""
    sh, start = INIT_SHELLS[shell]
    return start.loads.format(file=sh.quote(str(integration_file(shell, environ)))) + "  " + MARK


def with_load_line(old: str, line: str) -> Tuple[str, bool]:
    """`old` with `line` where an earlier --install put its line or its whole block (the first of them; any other
    is removed), else at the end; and whether an old block was replaced. Line endings are the file's own."""
    nl = "\r\n" if "\r\n" in old else "\n"
    out: List[str] = []
    placed = migrated = inside = False
    for ln in old.splitlines(keepends=True):
        body = ln.rstrip("\r\n")
        if inside:
            inside = body.strip() != END
            continue
        if body.strip() == BEGIN or body.rstrip().endswith(MARK):
            inside = body.strip() == BEGIN and END in old
            migrated = migrated or inside
            if not placed:
                out.append(line + nl)
                placed = True
            continue
        out.append(ln)
    if not placed:
        if out and not out[-1].endswith("\n"):
            out[-1] += nl
        out.append(line + nl)
    return "".join(out), migrated


def install(shell: str, path: Optional[str], environ: Mapping[str, str],
            before_writing: Optional[Callable[[], None]] = None) -> List[Tuple[Path, str]]:
    """Write SHELL's integration file and the line that loads it into its startup file(s): per file, what
    happened ("added", "replaced": an older build's block became the line, "kept": it was there). before_writing()
    runs once every check has passed, before the first write."""
    if INIT_SHELLS[shell][1].loads is None:
        raise _no_startup_file(shell)
    from cudaswitch.core.fsutil import check_writable
    from cudaswitch.core.trust import read_bytes

    targets = [Path(path)] if path else rc_files(shell, environ)
    integration = integration_file(shell, environ)
    from cudaswitch.core import trust

    # root run with another user's HOME (su without '-', sudo -E): her rc files, and the links she may have made of
    # them, are hers to change; nothing is read before this
    trust.refuse_if_foreign([*targets, integration], M("install the shell integration"),
                            M("run it as that user: {hint} cudaswitch init {shell} --install",
                              hint=trust.owner_hint(next(p for p in (targets[0], *targets[0].parents)
                                                         if os.path.lexists(p))),
                              shell=shell), writing=True)
    plans = []
    for target in targets:  # every file is read, and found writable, before any is written
        old, encoding = _read_startup_file(target)
        new, migrated = with_load_line(old, load_line(shell, environ))
        if new != old:
            # a dotfile manager's symlinked rc file stays a link: its target gets the line, with its mode kept
            check_writable(target.resolve() if target.is_symlink() else target,
                           M("add the line '{line}' to it yourself", line=load_line(shell, environ)))
        plans.append((target, old, new, encoding, migrated))
    data = integration_bytes(shell)
    try:
        current = read_bytes(integration)
    except OSError:
        current = None
    if current != data:
        check_writable(integration, M("give cudaswitch a data folder it can write (XDG_DATA_HOME)"))
    if before_writing is not None:
        before_writing()
    if current != data:
        atomic_write(integration, data)  # first: a startup file never names a file that is not there yet
    done = []
    for target, old, new, encoding, migrated in plans:
        if new != old:
            atomic_write(target, new.encode(encoding), follow_symlinks=True)
        done.append((target, "kept" if new == old else "replaced" if migrated else "added"))
    return done
