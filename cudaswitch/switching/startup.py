"""`cudaswitch init SHELL`: the shell function from the top-level `hooks/` folder, printed or added to the
shell's startup file between marker lines (idempotent: a second --install replaces the block)."""

from __future__ import annotations

import codecs
import os
import shutil
import sys
from pathlib import Path
from typing import Mapping, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import M, tr
from cudaswitch.core.fsutil import atomic_write
from cudaswitch.switching.shells import INIT_SHELLS, init_shell

BEGIN = "# >>> cudaswitch init >>>"
END = "# <<< cudaswitch init <<<"


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
                    "the CUDA entries it added stay in this shell: open a new one, and run 'cudaswitch init tcsh' "
                    "again", file=where)).replace('"', "").replace("'", "'\"'\"'").replace("!", "\\!")
        # csh expands a one-line `if`'s command before testing it: "$CONDA_PREFIX/..." goes through eval, as in
        # hooks/tcsh.csh, and the alias text is single-quoted, so inner single quotes are written '"'"'
        inner = ("'\"'\"'if ( -f \"$CONDA_PREFIX/etc/conda/activate.d/cudaswitch.csh\" ) set _cs_gone = 0'\"'\"'")
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


def shell_from_environ(environ: Mapping[str, str]) -> str:
    """The `cudaswitch init` name of the shell `$SHELL` names; a UsageError listing the names otherwise."""
    value = environ.get("SHELL")
    found = init_shell(Path(value or "").name.lower().removesuffix(".exe")) if value else None
    if found is None:
        names = ", ".join(sorted(INIT_SHELLS))
        raise UsageError(M("$SHELL is {value}, not a shell cudaswitch init knows: give one of {names}",
                           value=repr(value), names=names) if value else
                         M("$SHELL is not set: give the shell, one of {names}", names=names))
    return found[1].name


def rc_file(shell: str, environ: Mapping[str, str]) -> Path:
    start = INIT_SHELLS[shell][1]
    if start.profile:
        return powershell_profile(environ=environ)
    if start.under is None:
        raise UsageError(M("cmd.exe has no startup file: save the output of 'cudaswitch init {shell}' as cs.bat in a "
                           "folder on PATH instead", shell=shell))
    home = Path(os.path.expanduser("~"))
    base = environ.get(start.base_var) if start.base_var else None
    return Path(base or home / start.base_default) / start.under


def powershell_profile(which=shutil.which, run=None, environ=None, windows=None) -> Path:
    """The profile every PowerShell host of this user reads ($PROFILE.CurrentUserAllHosts), found as `conda init
    powershell` finds it: ask PowerShell itself (pwsh 7 first, then Windows PowerShell 5.1) when one is on PATH,
    which also follows a Documents folder redirected to OneDrive. Without one: a OneDrive Documents folder that
    holds a PowerShell folder, else Documents; pwsh 7 reads Documents\\PowerShell, 5.1 WindowsPowerShell."""
    import subprocess

    from cudaswitch.core.trust import run_program

    run = run or run_program
    environ = os.environ if environ is None else environ
    windows = sys.platform == "win32" if windows is None else windows
    for exe in ("pwsh", "powershell"):
        found = which(exe)
        if not found:
            continue
        try:
            out = run([found, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command",
                       "$PROFILE.CurrentUserAllHosts"], timeout=60)
        except (OSError, subprocess.SubprocessError, CudaswitchError):
            continue
        lines = out.stdout.strip().splitlines() if out.returncode == 0 else []
        if lines and lines[-1].strip():
            return Path(lines[-1].strip())
    home = Path(environ.get("USERPROFILE") or os.path.expanduser("~")) if windows else Path(os.path.expanduser("~"))
    if not windows:
        return Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "powershell" / "profile.ps1"
    docs = [Path(environ[k]) / "Documents" for k in ("OneDrive", "OneDriveConsumer", "OneDriveCommercial")
            if environ.get(k)] + [home / "Documents"]
    for d in docs:
        for sub in ("PowerShell", "WindowsPowerShell"):
            if (d / sub).is_dir():
                return d / sub / "profile.ps1"
    return docs[-1] / "WindowsPowerShell" / "profile.ps1"


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


def install(shell: str, text: str, path: Optional[str], environ: Mapping[str, str]) -> Tuple[Path, bool]:
    """Put `text` between the marker lines in the startup file; (file, whether it changed)."""
    target = Path(path) if path else rc_file(shell, environ)
    old, encoding = _read_startup_file(target)
    block = f"{BEGIN}\n{text.rstrip()}\n{END}\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + block + tail
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + block
    if new == old:
        return target, False
    from cudaswitch.core.fsutil import check_writable

    # a dotfile manager's symlinked rc file stays a link: its target gets the block, with its mode kept
    check_writable(target.resolve() if target.is_symlink() else target,
                   M("add the lines 'cudaswitch init {shell}' prints to it yourself", shell=shell))
    atomic_write(target, new.encode(encoding), follow_symlinks=True)
    return target, True
